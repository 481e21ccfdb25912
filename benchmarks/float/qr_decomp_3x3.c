/* QR decomposition of a 3x3 matrix by modified Gram-Schmidt: a = q r, q orthonormal,
 * r upper triangular. Straight-line code: no pivoting, so no branch depends on data. */
#include <math.h>

#define N 3

void qr_decomp_3x3(const float a[N][N], float q[N][N], float r[N][N]) {
    float v[N][N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            v[i][j] = a[i][j];
            r[i][j] = 0.0f;
        }
    for (int j = 0; j < N; j++) {
        float norm2 = 0.0f;
        for (int i = 0; i < N; i++)
            norm2 += v[i][j] * v[i][j];
        float norm = sqrtf(norm2);
        r[j][j] = norm;
        for (int i = 0; i < N; i++)
            q[i][j] = v[i][j] / norm;
        for (int k = j + 1; k < N; k++) {
            float dot = 0.0f;
            for (int i = 0; i < N; i++)
                dot += q[i][j] * v[i][k];
            r[j][k] = dot;
            for (int i = 0; i < N; i++)
                v[i][k] = v[i][k] - dot * q[i][j];
        }
    }
}
