/* The harness of `harrow run` and `harrow bench` (a template: harrow puts the kernel's
   functions and the HV_* definitions below before it, and the target's Halide glue at the
   marker after the Halide includes).

   It reads cases from stdin: per case the parameters, the output extents, and each
   input's footprint and bytes. `prog` writes harrow's output then the baseline's;
   `prog check` compares them once (and Halide's); `prog bench` fills the inputs with
   random bytes and times the implementations, interleaved; `prog count K` runs
   implementation K once (0 none, 1 harrow, 2 scalar, 3 Halide) so that an instruction
   trace can be taken.

   Defined before this text, per kernel:
     HV_PAGE_SIZE          the target's page size (the unit of the guard pages)
     HV_HALIDE_SLACK       bytes left readable past a buffer when Halide's code is linked
     HV_HALIDE             1 when Halide's pipeline is linked in
     HV_NPARAMS, HV_NDIMS  scalar parameters and output dimensions
     HV_INPUTS(X)          X(index, C type, dimensions, Halide type code, bits) per input
     HV_OUT_T, HV_OUT_CODE, HV_OUT_BITS   the output's C type and Halide type
     HV_OUT_COUNT          the number of output elements, from ext[]
     HV_CALL(f, o)         a call of harrow's or the baseline's function writing to o
     HV_HALIDE_CALL        the call of Halide's pipeline */

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

/* Bytes left readable between a buffer's end and its guard page: none, unless Halide's
   pipeline is in the program (its loads may read a little past the data). */
static size_t hv_slack;

/* Memory whose last byte is followed by an unreadable page. With `front`, the unreadable
   page is just before the first byte instead, so that reads before the footprint fault
   too (inputs alternate between the two by case). */
static void *hv_guarded(size_t bytes, int front) {
  size_t pg = HV_PAGE_SIZE, len = (bytes + hv_slack + pg - 1) / pg * pg;
  if (len == 0) len = pg;
  unsigned char *p = mmap(0, len + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) { perror("mmap"); exit(2); }
  if (front) {
    if (mprotect(p, pg, PROT_NONE)) { perror("mprotect"); exit(2); }
    return p + pg;
  }
  if (mprotect(p + len, pg, PROT_NONE)) { perror("mprotect"); exit(2); }
  return p + len - hv_slack - bytes;
}

static int64_t hv_rd(void) { int64_t v; if (fread(&v, 8, 1, stdin) != 1) exit(3); return v; }

static double hv_now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }

/* Random bytes for a benchmark's inputs (xorshift, seeded per case and input). */
static void hv_fill_random(void *buf, size_t bytes, uint64_t seed) {
  uint64_t st = 0x9e3779b97f4a7c15ULL * seed;
  for (size_t j = 0; j < bytes; j++) {
    st ^= st << 13; st ^= st >> 7; st ^= st << 17;
    ((unsigned char *)buf)[j] = (unsigned char)st;
  }
}

/* The offset of element (0, 0, ...) from the first element of a footprint starting at
   lo[] with extents n[] (the footprint may start at negative indices). */
static int64_t hv_origin(const int64_t *lo, const int64_t *n, int dims) {
  int64_t off = 0, stride = 1;
  for (int d = 0; d < dims; d++) { off += lo[d] * stride; stride *= n[d]; }
  return off;
}

#if HV_HALIDE
#include "HalideRuntime.h"
#include "halide_kernel.h"
/* A Halide buffer over `host` with the given footprint, dense, innermost first. */
static void hv_halide_buffer(halide_buffer_t *b, halide_dimension_t *dim, void *host, const int64_t *lo, const int64_t *n, int dims, int code, int bits) {
  int64_t st = 1;
  for (int d = 0; d < dims; d++) { dim[d].min = (int32_t)lo[d]; dim[d].extent = (int32_t)n[d]; dim[d].stride = (int32_t)st; dim[d].flags = 0; st *= n[d]; }
  memset(b, 0, sizeof *b); b->host = (uint8_t *)host; b->type.code = code; b->type.bits = bits; b->type.lanes = 1; b->dimensions = dims; b->dim = dim;
}
#define HV_HALIDE_INPUT(i, D, CODE, BITS) \
  halide_dimension_t hd##i[D]; halide_buffer_t hb##i; hv_halide_buffer(&hb##i, hd##i, buf##i, lo##i, n##i, D, CODE, BITS);
#else
#define HV_HALIDE_INPUT(i, D, CODE, BITS)
#endif

@HALIDE_GLUE@

/* Reads input i's footprint and bytes (or fills it with random bytes when benchmarking). */
#define HV_READ_INPUT(i, T, D, CODE, BITS) \
  int64_t lo##i[D], n##i[D]; size_t cnt##i = 1; \
  for (int d = 0; d < D; d++) { lo##i[d] = hv_rd(); n##i[d] = hv_rd(); cnt##i *= n##i[d]; } \
  T *buf##i = hv_guarded(cnt##i * sizeof(T), (int)(c & 1)); \
  if (bench) hv_fill_random(buf##i, cnt##i * sizeof(T), (uint64_t)(c + i + 1)); \
  else if (fread(buf##i, sizeof(T), cnt##i, stdin) != cnt##i) exit(3); \
  const T *base##i = buf##i - hv_origin(lo##i, n##i, D); \
  HV_HALIDE_INPUT(i, D, CODE, BITS)

int main(int argc, char **argv) {
#if HV_HALIDE
  hv_slack = HV_HALIDE_SLACK;
#endif
  int bench = argc > 1;
  int count = argc > 2 && !strcmp(argv[1], "count") ? atoi(argv[2]) : -1;
  int check = argc > 1 && !strcmp(argv[1], "check");
  int64_t cases = hv_rd();
  for (int64_t c = 0; c < cases; c++) {
    int64_t prm[HV_NPARAMS > 0 ? HV_NPARAMS : 1], ext[HV_NDIMS];
    for (int i = 0; i < HV_NPARAMS; i++) prm[i] = hv_rd();
    for (int i = 0; i < HV_NDIMS; i++) ext[i] = hv_rd();
    HV_INPUTS(HV_READ_INPUT)
    size_t on = HV_OUT_COUNT;
    HV_OUT_T *o1 = hv_guarded(on * sizeof(HV_OUT_T), 0), *o2 = hv_guarded(on * sizeof(HV_OUT_T), 0);
#if HV_HALIDE
    HV_OUT_T *o3 = hv_guarded(on * sizeof(HV_OUT_T), 0);
    int64_t out_lo[HV_NDIMS] = {0};
    halide_dimension_t hdo[HV_NDIMS]; halide_buffer_t hbo;
    hv_halide_buffer(&hbo, hdo, o3, out_lo, ext, HV_NDIMS, HV_OUT_CODE, HV_OUT_BITS);
#endif
    if (!bench) {
      HV_CALL(hv_kernel, o1); HV_CALL(hv_scalar, o2);
      fwrite(o1, sizeof(HV_OUT_T), on, stdout); fwrite(o2, sizeof(HV_OUT_T), on, stdout);
    } else if (count >= 0) {
      /* Both functions are called through the same volatile pointer, so the dispatch
         costs the same instructions in either count and the kernels' counts compare. */
      __typeof__(hv_kernel) *volatile hv_fn = count == 1 ? hv_kernel : count == 2 ? hv_scalar : 0;
      HV_OUT_T *volatile hv_o = count == 1 ? o1 : o2;
      if (count == 1 || count == 2) HV_CALL(hv_fn, hv_o);
#if HV_HALIDE
      else if (count == 3) { HV_HALIDE_CALL; }
#endif
    } else if (check) {
      HV_CALL(hv_kernel, o1); HV_CALL(hv_scalar, o2);
      if (memcmp(o1, o2, on * sizeof(HV_OUT_T))) { printf("mismatch\n"); return 1; }
      /* Halide's verdict, its return code and the first element where it differs. */
#if HV_HALIDE
      int hrc = HV_HALIDE_CALL;
      long long hdiff = -1;
      for (size_t i = 0; i < on && hdiff < 0; i++)
        if (memcmp(&o1[i], &o3[i], sizeof(HV_OUT_T))) hdiff = (long long)i;
      int hok = hrc == 0 && hdiff < 0;
#else
      int hok = 0, hrc = 0; long long hdiff = -1;
#endif
      printf("ok %d %d %lld\n", hok, hrc, hdiff);
    } else {
      HV_CALL(hv_kernel, o1); HV_CALL(hv_scalar, o2);
      if (memcmp(o1, o2, on * sizeof(HV_OUT_T))) { printf("mismatch\n"); return 1; }
#if HV_HALIDE
      int hok = HV_HALIDE_CALL == 0 && !memcmp(o1, o3, on * sizeof(HV_OUT_T));
#endif
      double best1 = 1e30, best2 = 1e30, best3 = 1e30, spent = 0; int reps = 0;
      while ((reps < 5 || spent < 4e8) && reps < 1000) {
        double t0 = hv_now(); HV_CALL(hv_kernel, o1); double t1 = hv_now(); HV_CALL(hv_scalar, o2); double t2 = hv_now();
        if (t1 - t0 < best1) best1 = t1 - t0; if (t2 - t1 < best2) best2 = t2 - t1; spent += t2 - t0; reps++;
#if HV_HALIDE
        double t3 = hv_now(); if (hok) HV_HALIDE_CALL; double t4 = hv_now(); if (t4 - t3 < best3) best3 = t4 - t3;
#endif
      }
#if HV_HALIDE
      printf("%.6f %.6f %d %.6f %lld\n", best1, best2, reps, hok ? best3 : -1.0, (long long)on);
#else
      printf("%.6f %.6f %d %.6f %lld\n", best1, best2, reps, -1.0, (long long)on);
#endif
    }
  }
  return 0;
}
