/* The float kernel harness (harrow's template; the marked parts are filled per kernel).
 *
 * Four implementations of one kernel are linked in from their own units, so none is
 * inlined into the loops here: the C as written (`scalar_kernel`, clang -O3, no
 * contraction), the same C under -ffast-math (`fast_kernel`), harrow's vector code
 * (`harrow_kernel`) and the Eigen baseline (`eigen_kernel`, when the kernel has one;
 * otherwise an empty function that leaves its copy as it was).
 *
 *   prog check N   reads N cases (every parameter's elements, as float bits) from stdin and
 *                  writes, per case, the parameters after each implementation ran on its
 *                  own copy: scalar, fast, harrow, eigen.
 *   prog time R    reads one case and prints the median nanoseconds per call of each
 *                  implementation over 9 trials of R calls, interleaved.
 *   prog count K   runs implementation K once (0: none, 1: harrow, 2: scalar, 3: fast,
 *                  4: eigen)
 *                  on one case read from stdin, for instruction traces.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NPARAMS @NPARAMS@
#define TOTAL @TOTAL@
static const int offsets[NPARAMS + 1] = {@OFFSETS@};

void scalar_kernel(@PROTO@);
void fast_kernel(@PROTO@);
void harrow_kernel(@PROTO@);
#if @HAVE_EIGEN@
void eigen_kernel(@PROTO@);
#else
void eigen_kernel(@PROTO@) {}
#endif

typedef void (*kernel_fn)(@PROTO@);

static void call(kernel_fn f, float *b) { f(@ARGS@); }

static int read_case(float *b) {
    return fread(b, sizeof(float), TOTAL, stdin) == TOTAL;
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    static float in[TOTAL], work[TOTAL];
    if (argc < 3) {
        fprintf(stderr, "usage: %s check N | time R | count K\n", argv[0]);
        return 2;
    }
    long n = atol(argv[2]);
    kernel_fn impls[4] = {scalar_kernel, fast_kernel, harrow_kernel, eigen_kernel};
    if (!strcmp(argv[1], "check")) {
        for (long c = 0; c < n; c++) {
            if (!read_case(in)) return 3;
            for (int k = 0; k < 4; k++) {
                memcpy(work, in, sizeof in);
                call(impls[k], work);
                fwrite(work, sizeof(float), TOTAL, stdout);
            }
        }
        return 0;
    }
    if (!read_case(in)) return 3;
    if (!strcmp(argv[1], "count")) {
        memcpy(work, in, sizeof in);
        kernel_fn by_mode[5] = {0, harrow_kernel, scalar_kernel, fast_kernel, eigen_kernel};
        if (n > 0 && n < 5) call(by_mode[n], work);
        /* Printed so the call cannot be dropped. */
        uint32_t h = 0;
        for (int i = 0; i < TOTAL; i++) {
            uint32_t u;
            memcpy(&u, &work[i], 4);
            h = h * 31 + u;
        }
        printf("%u\n", h);
        return 0;
    }
    if (!strcmp(argv[1], "time")) {
        enum { TRIALS = 9 };
        double t[4][TRIALS];
        for (int trial = 0; trial < TRIALS; trial++) {
            for (int k = 0; k < 4; k++) {
                /* Each run starts from the same inputs: in-out arrays change per call. */
                memcpy(work, in, sizeof in);
                double t0 = now_ns();
                for (long r = 0; r < n; r++) {
                    call(impls[k], work);
                    __asm__ volatile("" ::: "memory");
                }
                t[k][trial] = (now_ns() - t0) / n;
            }
        }
        for (int k = 0; k < 4; k++) {
            qsort(t[k], TRIALS, sizeof(double), cmp_double);
            printf("%.4f%s", t[k][TRIALS / 2], k < 3 ? " " : "\n");
        }
        (void)offsets;
        return 0;
    }
    fprintf(stderr, "unknown mode %s\n", argv[1]);
    return 2;
}
