/* harrow generic helpers: exact lane arithmetic on canonical bits (the value's bit pattern
   zero-extended to 128 bits), as in harrow's reference interpreter. Generated code uses
   them only where no described instruction applies. */
#ifndef HV_PRELUDE
#define HV_PRELUDE
#include <stddef.h>
#include <stdint.h>
#include <string.h>
/* Keeps a pointer in a register of its own, out of reach of clang's loop strength
   reduction (Target::pinned_row_pointers). */
#define HV_PIN(p) __asm__("" : "+r"(p))
#ifdef __SIZEOF_INT128__
typedef unsigned __int128 hv_u128;
typedef __int128 hv_i128;
#define HV_HELPER static inline
#else
/* 32-bit targets (Hexagon) have no __int128; _BitInt(128) is the same arithmetic. Its
   operations expand to long sequences there, so helpers stay calls: inlined into fully
   unrolled lane loops (a division by a constant especially) they take clang minutes. They
   are also left unoptimised: clang-19 -O1 computes wrong results from them on Hexagon. */
typedef unsigned _BitInt(128) hv_u128;
typedef signed _BitInt(128) hv_i128;
#define HV_HELPER static __attribute__((noinline, optnone, unused))
#endif
HV_HELPER hv_u128 hv_mask(int bits) {
  return bits >= 128 ? ~(hv_u128)0 : (((hv_u128)1 << bits) - 1);
}
HV_HELPER hv_u128 hv_wrap(hv_u128 v, int bits) { return v & hv_mask(bits); }
HV_HELPER hv_i128 hv_sx(hv_u128 v, int bits, int sgn) {
  if (!sgn || bits >= 128) return (hv_i128)v;
  int s = 128 - bits;
  return ((hv_i128)(v << s)) >> s;
}
HV_HELPER hv_u128 hv_from(hv_i128 v, int bits) { return hv_wrap((hv_u128)v, bits); }
HV_HELPER int hv_lt(hv_u128 a, hv_u128 b, int bits, int sgn) {
  return sgn ? hv_sx(a, bits, 1) < hv_sx(b, bits, 1) : a < b;
}
HV_HELPER hv_u128 hv_min(hv_u128 a, hv_u128 b, int bits, int sgn) {
  return hv_lt(b, a, bits, sgn) ? b : a;
}
HV_HELPER hv_u128 hv_max(hv_u128 a, hv_u128 b, int bits, int sgn) {
  return hv_lt(a, b, bits, sgn) ? b : a;
}
/* Quotient and remainder of canonical bits. Without __int128 the division is written out:
   clang's 128-bit division library calls disagree with its _BitInt(128) argument passing on
   32-bit targets. */
#ifdef __SIZEOF_INT128__
HV_HELPER hv_u128 hv_udiv(hv_u128 a, hv_u128 b) { return a / b; }
HV_HELPER hv_u128 hv_umod(hv_u128 a, hv_u128 b) { return a % b; }
#else
HV_HELPER hv_u128 hv_udivmod(hv_u128 n, hv_u128 d, hv_u128 *rem) {
  hv_u128 q = 0, r = 0;
  for (int i = 127; i >= 0; i--) {
    r = (r << 1) | ((n >> i) & 1);
    if (r >= d) { r -= d; q |= (hv_u128)1 << i; }
  }
  *rem = r;
  return q;
}
HV_HELPER hv_u128 hv_udiv(hv_u128 a, hv_u128 b) { hv_u128 r; return hv_udivmod(a, b, &r); }
HV_HELPER hv_u128 hv_umod(hv_u128 a, hv_u128 b) { hv_u128 r; hv_udivmod(a, b, &r); return r; }
#endif
HV_HELPER hv_i128 hv_sdiv(hv_i128 x, hv_i128 y) {
  hv_u128 q = hv_udiv(x < 0 ? -(hv_u128)x : (hv_u128)x, y < 0 ? -(hv_u128)y : (hv_u128)y);
  return (x < 0) != (y < 0) ? -(hv_i128)q : (hv_i128)q;
}
HV_HELPER hv_i128 hv_smod(hv_i128 x, hv_i128 y) {
  hv_u128 r = hv_umod(x < 0 ? -(hv_u128)x : (hv_u128)x, y < 0 ? -(hv_u128)y : (hv_u128)y);
  return x < 0 ? -(hv_i128)r : (hv_i128)r;
}
HV_HELPER hv_u128 hv_div(hv_u128 a, hv_u128 b, int bits, int sgn) {
  if (b == 0) return 0;
  if (!sgn) return hv_udiv(a, b);
  hv_i128 x = hv_sx(a, bits, 1), y = hv_sx(b, bits, 1);
  if (bits >= 128 && y == -1) return hv_from(-x, bits);
  hv_i128 q = hv_sdiv(x, y), r = hv_smod(x, y);
  if (r < 0) q = y > 0 ? q - 1 : q + 1;
  return hv_from(q, bits);
}
HV_HELPER hv_u128 hv_mod(hv_u128 a, hv_u128 b, int bits, int sgn) {
  if (b == 0) return 0;
  if (!sgn) return hv_umod(a, b);
  hv_i128 x = hv_sx(a, bits, 1), y = hv_sx(b, bits, 1);
  if (bits >= 128 && y == -1) return 0;
  hv_i128 r = hv_smod(x, y);
  if (r < 0) r += y < 0 ? -y : y;
  return hv_from(r, bits);
}
/* The shift amount as an exact value, clamped (every amount that large behaves alike). */
HV_HELPER hv_i128 hv_amount(hv_u128 n, int bits, int sgn) {
  const hv_i128 cap = (hv_i128)1 << 100;
  if (sgn) {
    hv_i128 v = hv_sx(n, bits, 1);
    return v < -cap ? -cap : v > cap ? cap : v;
  }
  return n > (hv_u128)cap ? cap : (hv_i128)n;
}
HV_HELPER hv_u128 hv_shl_by(hv_u128 a, hv_i128 n, int bits) {
  return n >= bits ? 0 : hv_wrap(a << (int)n, bits);
}
HV_HELPER hv_u128 hv_shr_by(hv_u128 a, hv_i128 n, int bits, int sgn) {
  if (sgn) {
    hv_i128 v = hv_sx(a, bits, 1);
    return hv_from(v >> (int)(n > 127 ? 127 : n), bits);
  }
  return n >= bits ? 0 : a >> (int)n;
}
HV_HELPER hv_u128 hv_shl(hv_u128 a, hv_u128 b, int bits, int sgn, int bbits, int bsgn) {
  hv_i128 n = hv_amount(b, bbits, bsgn);
  return n >= 0 ? hv_shl_by(a, n, bits) : hv_shr_by(a, -n, bits, sgn);
}
HV_HELPER hv_u128 hv_shr(hv_u128 a, hv_u128 b, int bits, int sgn, int bbits, int bsgn) {
  hv_i128 n = hv_amount(b, bbits, bsgn);
  return n >= 0 ? hv_shr_by(a, n, bits, sgn) : hv_shl_by(a, -n, bits);
}
HV_HELPER hv_u128 hv_cast(hv_u128 a, int from_bits, int from_sgn, int to_bits) {
  return hv_wrap((hv_u128)hv_sx(a, from_bits, from_sgn), to_bits);
}
HV_HELPER hv_u128 hv_popcount(hv_u128 a) {
  return (hv_u128)(__builtin_popcountll((uint64_t)a) + __builtin_popcountll((uint64_t)(a >> 64)));
}
HV_HELPER hv_u128 hv_clz(hv_u128 a, int bits) {
  int n = 0;
  for (int i = bits - 1; i >= 0 && !((a >> i) & 1); i--) n++;
  return n;
}
HV_HELPER hv_u128 hv_ctz(hv_u128 a, int bits) {
  int n = 0;
  while (n < bits && !((a >> n) & 1)) n++;
  return n;
}
#endif
