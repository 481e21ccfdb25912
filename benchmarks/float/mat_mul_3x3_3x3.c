/* Matrix multiply: (3x3) times (3x3) (Diospyros' mat-mul). */
#define M 3
#define K 3
#define N 3

void mat_mul_3x3_3x3(const float a[M][K], const float b[K][N], float c[M][N]) {
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
