/* Matrix multiply: (16x16) times (16x16) (Diospyros' mat-mul). */
#define M 16
#define K 16
#define N 16

void mat_mul_16x16_16x16(const float a[M][K], const float b[K][N], float c[M][N]) {
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
