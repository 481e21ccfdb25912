/* Matrix multiply: (8x8) times (8x8) (Diospyros' mat-mul). */
#define M 8
#define K 8
#define N 8

void mat_mul_8x8_8x8(const float a[M][K], const float b[K][N], float c[M][N]) {
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
