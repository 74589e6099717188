/* Single-precision soft-float helpers the lx106 libgcc lacks (it has __divsf3, the compares and
 * __fixsfsi, but not add/sub/mul or int->float): IEEE 754 binary32, round to nearest even,
 * denormals, infinities and NaNs. Doubles are not supported on purpose (kernels use float).
 * SF() renames them for the host test (tests/test_build.py compiles this file natively). */
#include <stdint.h>

#ifndef SF
#define SF(name) name
#endif

typedef union { float f; uint32_t u; } sf_bits;
static inline uint32_t bits_of(float f) { sf_bits x; x.f = f; return x.u; }
static inline float float_of(uint32_t u) { sf_bits x; x.u = u; return x.f; }

#define QNAN 0x7FC00000u
#define INF 0x7F800000u

/* m: significand with its leading 1 at bit 26 (3 guard/round/sticky bits below bit 3), or less
 * when e == 1 (a denormal). e: biased exponent >= 1. */
static float round_pack(uint32_t s, int32_t e, uint32_t m) {
  if (e >= 0xFF) return float_of((s << 31) | INF);
  uint32_t grs = m & 7u;
  m >>= 3;
  if (grs > 4u || (grs == 4u && (m & 1u))) {
    m++;
    if (m & (1u << 24)) {
      m >>= 1;
      e++;
      if (e >= 0xFF) return float_of((s << 31) | INF);
    }
  }
  uint32_t ef = (m & 0x800000u) ? (uint32_t)e : 0u;
  return float_of((s << 31) | (ef << 23) | (m & 0x7FFFFFu));
}

static uint32_t shift_right_sticky(uint32_t m, uint32_t d) {
  if (d == 0) return m;
  if (d > 31) return m != 0;
  return (m >> d) | ((m & ((1u << d) - 1u)) != 0);
}

float SF(__addsf3)(float a, float b) {
  uint32_t ua = bits_of(a), ub = bits_of(b);
  uint32_t aa = ua & 0x7FFFFFFFu, ab = ub & 0x7FFFFFFFu;
  if (aa > INF) return float_of(ua | 0x400000u);
  if (ab > INF) return float_of(ub | 0x400000u);
  if (aa == INF) return (ab == INF && ((ua ^ ub) >> 31)) ? float_of(QNAN) : a;
  if (ab == INF) return b;
  if (aa == 0 && ab == 0) return float_of(ua & ub);       /* -0 + -0 = -0, otherwise +0 */
  if (aa < ab) {
    uint32_t t = ua; ua = ub; ub = t;
  }
  uint32_t sa = ua >> 31, sb = ub >> 31;
  int32_t ea = (int32_t)((ua >> 23) & 0xFFu), eb = (int32_t)((ub >> 23) & 0xFFu);
  uint32_t ma = ua & 0x7FFFFFu, mb = ub & 0x7FFFFFu;
  if (ea) ma |= 0x800000u; else ea = 1;
  if (eb) mb |= 0x800000u; else eb = 1;
  ma <<= 3;
  mb = shift_right_sticky(mb << 3, (uint32_t)(ea - eb));
  uint32_t m;
  if (sa == sb) {
    m = ma + mb;
    if (m & (1u << 27)) {
      m = (m >> 1) | (m & 1u);
      ea++;
    }
  } else {
    m = ma - mb;
    if (m == 0) return float_of(0);
    while (!(m & (1u << 26)) && ea > 1) {
      m <<= 1;
      ea--;
    }
  }
  return round_pack(sa, ea, m);
}

float SF(__subsf3)(float a, float b) {
  return SF(__addsf3)(a, float_of(bits_of(b) ^ 0x80000000u));
}

float SF(__mulsf3)(float a, float b) {
  uint32_t ua = bits_of(a), ub = bits_of(b);
  uint32_t aa = ua & 0x7FFFFFFFu, ab = ub & 0x7FFFFFFFu, s = (ua ^ ub) >> 31;
  if (aa > INF) return float_of(ua | 0x400000u);
  if (ab > INF) return float_of(ub | 0x400000u);
  if (aa == INF || ab == INF) {
    if (aa == 0 || ab == 0) return float_of(QNAN);
    return float_of((s << 31) | INF);
  }
  if (aa == 0 || ab == 0) return float_of(s << 31);
  int32_t ea = (int32_t)(aa >> 23), eb = (int32_t)(ab >> 23);
  uint32_t ma = aa & 0x7FFFFFu, mb = ab & 0x7FFFFFu;
  if (ea) ma |= 0x800000u;
  else for (ea = 1; !(ma & 0x800000u); ea--) ma <<= 1;
  if (eb) mb |= 0x800000u;
  else for (eb = 1; !(mb & 0x800000u); eb--) mb <<= 1;
  uint64_t p = (uint64_t)ma * mb;                         /* in [2^46, 2^48) */
  int32_t e = ea + eb - 127;
  if (p & ((uint64_t)1 << 47)) e++;
  else p <<= 1;
  uint32_t m = (uint32_t)(p >> 21) | ((uint32_t)p & 0x1FFFFFu ? 1u : 0u);
  if (e <= 0) {
    m = shift_right_sticky(m, (uint32_t)(1 - e));
    e = 1;
  }
  return round_pack(s, e, m);
}

static float from_u32(uint32_t s, uint32_t u) {
  if (u == 0) return float_of(s << 31);
  int32_t k = 31;
  while (!(u & (1u << k))) k--;
  uint32_t m = k > 26 ? shift_right_sticky(u, (uint32_t)(k - 26)) : u << (26 - k);
  return round_pack(s, 127 + k, m);
}

float SF(__floatsisf)(int32_t i) {
  return i < 0 ? from_u32(1, 0u - (uint32_t)i) : from_u32(0, (uint32_t)i);
}

float SF(__floatunsisf)(uint32_t u) { return from_u32(0, u); }

uint32_t SF(__fixunssfsi)(float f) {
  uint32_t u = bits_of(f);
  if (u >> 31) return 0;
  int32_t e = (int32_t)(u >> 23) - 127;
  if (e < 0) return 0;
  if (e >= 32) return 0xFFFFFFFFu;
  uint32_t m = (u & 0x7FFFFFu) | 0x800000u;
  return e >= 23 ? m << (e - 23) : m >> (23 - e);
}
