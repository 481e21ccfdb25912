/* harrow's freestanding runtime for Hexagon programs run under qemu-hexagon (Linux user mode).
 *
 * The Hexagon toolchain here has no C library, so the few libc pieces that harrow's test and
 * benchmark programs use are defined in this one header: process entry, the read/write/exit/
 * mmap/mprotect/clock_gettime system calls (Linux generic numbers, through trap0), memory and
 * string helpers, malloc on mmap, and a printf that knows the conversions harrow emits.
 * A program's main translation unit defines them; another unit of the same program (the
 * scalar baseline at its own optimisation level) defines HV_RT_DECLARE_ONLY first. */
#ifndef HV_RT_H
#define HV_RT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef HV_RT_DECLARE_ONLY
/* A second translation unit of a program (the scalar baseline, built at its own
 * optimisation level): the definitions live in the main unit. */
void *memcpy(void *restrict d, const void *restrict s, size_t n);
void *memmove(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *x, const void *y, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
#else

static long hv_syscall(long n, long a, long b, long c, long d, long e, long f) {
  register long r0 __asm__("r0") = a;
  register long r1 __asm__("r1") = b;
  register long r2 __asm__("r2") = c;
  register long r3 __asm__("r3") = d;
  register long r4 __asm__("r4") = e;
  register long r5 __asm__("r5") = f;
  register long r6 __asm__("r6") = n;
  __asm__ volatile("trap0(#1)"
                   : "+r"(r0)
                   : "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r5), "r"(r6)
                   : "memory");
  return r0;
}

/* Integer division helpers the compiler calls (Hexagon has no divide instruction):
 * shift-and-subtract, standard calling convention. */
unsigned long long __hexagon_udivmoddi4(unsigned long long n, unsigned long long d, unsigned long long *rem) {
  unsigned long long q = 0, r = 0;
  for (int i = 63; i >= 0; i--) {
    r = (r << 1) | ((n >> i) & 1);
    if (r >= d) { r -= d; q |= 1ULL << i; }
  }
  if (rem) *rem = r;
  return q;
}
unsigned long long __hexagon_udivdi3(unsigned long long n, unsigned long long d) { return __hexagon_udivmoddi4(n, d, 0); }
unsigned long long __hexagon_umoddi3(unsigned long long n, unsigned long long d) { unsigned long long r; __hexagon_udivmoddi4(n, d, &r); return r; }
long long __hexagon_divdi3(long long n, long long d) {
  unsigned long long q = __hexagon_udivdi3(n < 0 ? -(unsigned long long)n : n, d < 0 ? -(unsigned long long)d : d);
  return (n < 0) != (d < 0) ? -(long long)q : (long long)q;
}
long long __hexagon_moddi3(long long n, long long d) {
  unsigned long long r = __hexagon_umoddi3(n < 0 ? -(unsigned long long)n : n, d < 0 ? -(unsigned long long)d : d);
  return n < 0 ? -(long long)r : (long long)r;
}
unsigned __hexagon_udivsi3(unsigned n, unsigned d) { return (unsigned)__hexagon_udivdi3(n, d); }
unsigned __hexagon_umodsi3(unsigned n, unsigned d) { return (unsigned)__hexagon_umoddi3(n, d); }
int __hexagon_divsi3(int n, int d) { return (int)__hexagon_divdi3(n, d); }
int __hexagon_modsi3(int n, int d) { return (int)__hexagon_moddi3(n, d); }

__attribute__((noreturn)) void exit(int code) {
  hv_syscall(94, code, 0, 0, 0, 0, 0);
  for (;;) {}
}
__attribute__((noreturn)) void abort(void) { exit(134); }

void *memcpy(void *restrict d, const void *restrict s, size_t n) {
  unsigned char *a = d; const unsigned char *b = s;
  while (n--) *a++ = *b++;
  return d;
}
/* The copy clang calls for large aligned aggregates on Hexagon. */
void *__hexagon_memcpy_likely_aligned_min32bytes_mult8bytes(void *restrict d, const void *restrict s, size_t n) {
  return memcpy(d, s, n);
}
void *memmove(void *d, const void *s, size_t n) {
  unsigned char *a = d; const unsigned char *b = s;
  if (a < b) { while (n--) *a++ = *b++; } else { while (n--) a[n] = b[n]; }
  return d;
}
void *memset(void *d, int c, size_t n) {
  unsigned char *a = d;
  while (n--) *a++ = (unsigned char)c;
  return d;
}
int memcmp(const void *x, const void *y, size_t n) {
  const unsigned char *a = x, *b = y;
  for (; n; n--, a++, b++) if (*a != *b) return *a - *b;
  return 0;
}
size_t strlen(const char *s) { size_t n = 0; while (s[n]) n++; return n; }
int strcmp(const char *a, const char *b) {
  while (*a && *a == *b) { a++; b++; }
  return (unsigned char)*a - (unsigned char)*b;
}
int atoi(const char *s) {
  int neg = 0, v = 0;
  if (*s == '-') { neg = 1; s++; }
  while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
  return neg ? -v : v;
}

/* Memory: mmap2 (offsets in 4 KiB units); qemu-hexagon maps and protects 64 KiB pages
 * (the target's page size, which harness programs are given). malloc maps each block. */
#define PROT_NONE 0
#define PROT_READ 1
#define PROT_WRITE 2
#define MAP_PRIVATE 2
#define MAP_ANONYMOUS 0x20
#define MAP_FAILED ((void *)-1)
void *mmap(void *addr, size_t len, int prot, int flags, int fd, long off) {
  long r = hv_syscall(222, (long)addr, (long)len, prot, flags, fd, off / 4096);
  return (r < 0 && r > -4096) ? MAP_FAILED : (void *)r;
}
int mprotect(void *addr, size_t len, int prot) {
  return (int)hv_syscall(226, (long)addr, (long)len, prot, 0, 0, 0);
}
int munmap(void *addr, size_t len) { return (int)hv_syscall(215, (long)addr, (long)len, 0, 0, 0, 0); }
void *malloc(size_t n) {
  /* The size sits in front of the block (for realloc); blocks are 128-byte aligned. */
  size_t total = (n + 128 + 4095) & ~(size_t)4095;
  unsigned char *p = mmap(0, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 0;
  *(size_t *)p = n;
  return p + 128;
}
void free(void *p) {
  if (!p) return;
  unsigned char *b = (unsigned char *)p - 128;
  munmap(b, (*(size_t *)b + 128 + 4095) & ~(size_t)4095);
}
void *calloc(size_t n, size_t m) { return malloc(n * m); /* mmap memory is zeroed */ }
void *realloc(void *p, size_t n) {
  void *q = malloc(n);
  if (p && q) {
    size_t old = *(size_t *)((unsigned char *)p - 128);
    memcpy(q, p, old < n ? old : n);
    free(p);
  }
  return q;
}

/* Clocks: 32-bit clock_gettime. */
#define CLOCK_MONOTONIC 1
struct timespec { long tv_sec; long tv_nsec; };
int clock_gettime(int clk, struct timespec *t) { return (int)hv_syscall(113, clk, (long)t, 0, 0, 0, 0); }

/* Files: descriptors only. */
typedef struct { int fd; } FILE;
static FILE hv_files[3] = {{0}, {1}, {2}};
#define stdin (&hv_files[0])
#define stdout (&hv_files[1])
#define stderr (&hv_files[2])
static long hv_write_all(int fd, const void *p, size_t n) {
  const char *c = p; size_t done = 0;
  while (done < n) {
    long r = hv_syscall(64, fd, (long)(c + done), (long)(n - done), 0, 0, 0);
    if (r <= 0) return -1;
    done += (size_t)r;
  }
  return (long)done;
}
size_t fread(void *p, size_t size, size_t n, FILE *f) {
  size_t want = size * n, got = 0;
  while (got < want) {
    long r = hv_syscall(63, f->fd, (long)((char *)p + got), (long)(want - got), 0, 0, 0);
    if (r <= 0) break;
    got += (size_t)r;
  }
  return size ? got / size : 0;
}
size_t fwrite(const void *p, size_t size, size_t n, FILE *f) {
  return hv_write_all(f->fd, p, size * n) < 0 ? 0 : n;
}
int fflush(FILE *f) { (void)f; return 0; }

/* Formatting: %d %i %u %x %X %c %s %p %f with l/ll/z, width, zero padding, precision. */
typedef struct { char *buf; size_t cap, len; } hv_out;
static void hv_put(hv_out *o, char c) { if (o->len + 1 < o->cap) o->buf[o->len] = c; o->len++; }
static void hv_num(hv_out *o, unsigned long long v, int base, int neg, int width, char pad, int upper) {
  char tmp[24]; int n = 0;
  const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  do { tmp[n++] = digits[v % base]; v /= base; } while (v);
  if (neg) tmp[n++] = '-';
  for (int i = n; i < width; i++) hv_put(o, pad);
  while (n) hv_put(o, tmp[--n]);
}
int vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap) {
  hv_out o = {buf, cap, 0};
  for (; *fmt; fmt++) {
    if (*fmt != '%') { hv_put(&o, *fmt); continue; }
    fmt++;
    char pad = ' '; int width = 0, prec = -1, lng = 0;
    if (*fmt == '0') { pad = '0'; fmt++; }
    while (*fmt >= '0' && *fmt <= '9') width = width * 10 + (*fmt++ - '0');
    if (*fmt == '.') { fmt++; prec = 0; while (*fmt >= '0' && *fmt <= '9') prec = prec * 10 + (*fmt++ - '0'); }
    while (*fmt == 'l' || *fmt == 'z') { lng += *fmt == 'l' ? 1 : 2; fmt++; }
    switch (*fmt) {
    case 'd': case 'i': {
      long long v = lng >= 2 ? va_arg(ap, long long) : lng == 1 ? va_arg(ap, long) : va_arg(ap, int);
      hv_num(&o, v < 0 ? -(unsigned long long)v : (unsigned long long)v, 10, v < 0, width, pad, 0);
      break;
    }
    case 'u': case 'x': case 'X': {
      unsigned long long v = lng >= 2 ? va_arg(ap, unsigned long long) : lng == 1 ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
      hv_num(&o, v, *fmt == 'u' ? 10 : 16, 0, width, pad, *fmt == 'X');
      break;
    }
    case 'p': hv_num(&o, (unsigned long)va_arg(ap, void *), 16, 0, width, pad, 0); break;
    case 'c': hv_put(&o, (char)va_arg(ap, int)); break;
    case 's': { const char *s = va_arg(ap, const char *); while (*s) hv_put(&o, *s++); break; }
    case 'f': {
      double v = va_arg(ap, double);
      if (prec < 0) prec = 6;
      if (v < 0) { hv_put(&o, '-'); v = -v; }
      double scale = 1; for (int i = 0; i < prec; i++) scale *= 10;
      unsigned long long whole = (unsigned long long)v;
      unsigned long long frac = (unsigned long long)((v - (double)whole) * scale + 0.5);
      if (frac >= (unsigned long long)scale) { whole++; frac -= (unsigned long long)scale; }
      hv_num(&o, whole, 10, 0, 0, ' ', 0);
      if (prec) { hv_put(&o, '.'); hv_num(&o, frac, 10, 0, prec, '0', 0); }
      break;
    }
    case '%': hv_put(&o, '%'); break;
    default: hv_put(&o, '?'); break;
    }
  }
  if (cap) buf[o.len < cap ? o.len : cap - 1] = 0;
  return (int)o.len;
}
int snprintf(char *buf, size_t cap, const char *fmt, ...) {
  va_list ap; va_start(ap, fmt); int n = vsnprintf(buf, cap, fmt, ap); va_end(ap); return n;
}
int vfprintf(FILE *f, const char *fmt, va_list ap) {
  char buf[512];
  va_list ap2; va_copy(ap2, ap);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  if ((size_t)n < sizeof buf) { hv_write_all(f->fd, buf, (size_t)n); }
  else { char *big = malloc((size_t)n + 1); vsnprintf(big, (size_t)n + 1, fmt, ap2); hv_write_all(f->fd, big, (size_t)n); free(big); }
  va_end(ap2);
  return n;
}
int fprintf(FILE *f, const char *fmt, ...) {
  va_list ap; va_start(ap, fmt); int n = vfprintf(f, fmt, ap); va_end(ap); return n;
}
int printf(const char *fmt, ...) {
  va_list ap; va_start(ap, fmt); int n = vfprintf(stdout, fmt, ap); va_end(ap); return n;
}
int puts(const char *s) { hv_write_all(1, s, strlen(s)); hv_write_all(1, "\n", 1); return 0; }
void perror(const char *s) { fprintf(stderr, "%s: error\n", s); }

/* Process entry: the kernel leaves argc at the stack pointer and argv after it. */
/* Unprototyped, so that both `int main(void)` and `int main(int, char **)` agree with it. */
int main();
__attribute__((noreturn, used)) void hv_rt_start(int argc, char **argv) { exit(main(argc, argv)); }
__asm__(".text\n.globl _start\n.type _start,@function\n_start:\n"
        "  { r0 = memw(r29+#0); r1 = add(r29, #4) }\n"
        "  { r29 = and(r29, #-128) }\n"
        "  call hv_rt_start\n");

#endif /* HV_RT_DECLARE_ONLY */
#endif
