// Eigen 3.4 baseline of mat_mul_2x2_2x2 (harrow bench --float): the same computation with Eigen's
// fixed-size types. Built with clang++-19 -O3 and checked against the C before it is timed.
#include <Eigen/Dense>

using namespace Eigen;

extern "C" void eigen_kernel(const float *a, const float *b, float *c) {
    Map<const Matrix<float, 2, 2, RowMajor>> A(a);
    Map<const Matrix<float, 2, 2, RowMajor>> B(b);
    Map<Matrix<float, 2, 2, RowMajor>> C(c);
    C.noalias() = A * B;
}
