/* Matrix multiply: (2x2) times (2x2) (Diospyros' mat-mul). */
#define M 2
#define K 2
#define N 2

void mat_mul_2x2_2x2(const float a[M][K], const float b[K][N], float c[M][N]) {
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
