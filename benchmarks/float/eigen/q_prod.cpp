// Eigen 3.4 baseline of q_prod (harrow bench --float): the same computation with Eigen's
// fixed-size types. Built with clang++-19 -O3 and checked against the C before it is timed.
#include <Eigen/Geometry>

using namespace Eigen;

extern "C" void eigen_kernel(const float *a_q, const float *a_t, const float *b_q, const float *b_t, float *r_q, float *r_t) {
    Map<const Quaternionf> A(a_q), B(b_q);
    Map<const Vector3f> AT(a_t), BT(b_t);
    Map<Quaternionf> RQ(r_q);
    Map<Vector3f> RT(r_t);
    RQ = A * B;
    RT = AT + A._transformVector(BT);
}
