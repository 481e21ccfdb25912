/* Matrix multiply: (10x10) times (10x10) (Diospyros' mat-mul). */
#define M 10
#define K 10
#define N 10

void mat_mul_10x10_10x10(const float a[M][K], const float b[K][N], float c[M][N]) {
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
