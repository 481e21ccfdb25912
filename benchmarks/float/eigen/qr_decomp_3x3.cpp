// Eigen 3.4 baseline of qr_decomp_3x3 (harrow bench --float): the same computation with Eigen's
// fixed-size types. Built with clang++-19 -O3 and checked against the C before it is timed.
#include <Eigen/Dense>

using namespace Eigen;

extern "C" void eigen_kernel(const float *a, float *q, float *r) {
    Map<const Matrix<float, 3, 3, RowMajor>> A(a);
    Map<Matrix<float, 3, 3, RowMajor>> Q(q), R(r);
    // Modified Gram-Schmidt, as the C: Eigen's Householder QR gives other signs.
    Matrix<float, 3, 3> V = A;
    R.setZero();
    for (int j = 0; j < 3; j++) {
        float norm = V.col(j).norm();
        R(j, j) = norm;
        Q.col(j) = V.col(j) / norm;
        for (int k = j + 1; k < 3; k++) {
            float dot = Q.col(j).dot(V.col(k));
            R(j, k) = dot;
            V.col(k) -= dot * Q.col(j);
        }
    }
}
