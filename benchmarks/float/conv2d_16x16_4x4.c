/* Full 2-D convolution of a 16x16 input with a 4x4 filter (Diospyros' 2d-conv). */
#define IR 16
#define IC 16
#define FR 4
#define FC 4
#define OR (IR + FR - 1)
#define OC (IC + FC - 1)

void conv2d_16x16_4x4(const float in[IR][IC], const float f[FR][FC], float out[OR][OC]) {
    for (int r = 0; r < OR; r++) {
        for (int c = 0; c < OC; c++) {
            float v = 0.0f;
            for (int i = 0; i < FR; i++) {
                for (int j = 0; j < FC; j++) {
                    int x = r - i, y = c - j;
                    if (x >= 0 && x < IR && y >= 0 && y < IC) {
                        v += in[x][y] * f[i][j];
                    }
                }
            }
            out[r][c] = v;
        }
    }
}
