// Eigen 3.4 baseline of conv2d_3x3_3x3 (harrow bench --float): the same computation with Eigen's
// fixed-size types. Built with clang++-19 -O3 and checked against the C before it is timed.
#include <Eigen/Dense>

using namespace Eigen;

extern "C" void eigen_kernel(const float *in, const float *f, float *out) {
    Map<const Matrix<float, 3, 3, RowMajor>> I(in);
    Map<const Matrix<float, 3, 3, RowMajor>> F(f);
    Map<Matrix<float, 5, 5, RowMajor>> O(out);
    // Each filter tap scales the whole input into its place: every output receives its
    // terms in the C's order (taps in row-major order, from zero).
    O.setZero();
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            O.template block<3, 3>(i, j) += F(i, j) * I;
}
