/* Matrix multiply: (4x4) times (4x4) (Diospyros' mat-mul). */
#define M 4
#define K 4
#define N 4

void mat_mul_4x4_4x4(const float a[M][K], const float b[K][N], float c[M][N]) {
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            float sum = 0.0f;
            for (int k = 0; k < K; k++) {
                sum += a[i][k] * b[k][j];
            }
            c[i][j] = sum;
        }
    }
}
