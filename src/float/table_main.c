/* The hardware check of a float instruction table (harrow's template; the marked parts are
 * filled per target). Reads operand sets from stdin, each three registers of floats and one
 * scalar (as bits), and writes, per set, one register of results per table row in the
 * order of @ROWS@, each stored through the table's own store. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
@HEADER@
#define W @LANES@

int main(void) {
    static float a[W], b[W], c[W], out[W];
    float x;
    while (fread(a, sizeof(float), W, stdin) == W && fread(b, sizeof(float), W, stdin) == W &&
           fread(c, sizeof(float), W, stdin) == W && fread(&x, sizeof(float), 1, stdin) == 1) {
        @VTYPE@ va = @LOAD_A@, vb = @LOAD_B@, vc = @LOAD_C@;
        (void)vb;
        (void)vc;
@ROW_CODE@
    }
    return 0;
}
