/* Full 2-D convolution of a 3x3 input with a 2x2 filter (Diospyros' 2d-conv). */
#define IR 3
#define IC 3
#define FR 2
#define FC 2
#define OR (IR + FR - 1)
#define OC (IC + FC - 1)

void conv2d_3x3_2x2(const float in[IR][IC], const float f[FR][FC], float out[OR][OC]) {
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
