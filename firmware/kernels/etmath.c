/* Portable float32 math (see etmath.h). Written for etdeploy: range reduction + short
 * polynomials (Taylor, or least-squares fits made for this file), exact bit-level rounding.
 * Only float and integer arithmetic: builds identically on soft-float targets without double
 * helpers. */
#include "etmath.h"

#if defined(__SSE__) && !defined(ETMATH_NO_HW)
#include <xmmintrin.h>
#endif

#define LN2_HI 0.693145751953125f        /* 0x3f317200: k * LN2_HI exact for |k| < 512 */
#define LN2_LO 1.42860682030941723e-06f  /* ln2 - LN2_HI */
#define LOG2E 1.44269504088896341f

/* 2^k as a float for -126 <= k <= 127 */
static inline float pow2i(int k) { return et_bits_f32((uint32_t)(k + 127) << 23); }

/* x * 2^k for any k, one rounding at the end (for results that may be denormal). */
static float scale2(float x, int k) {
  if (k > 127) { x *= pow2i(127); k -= 127; if (k > 127) { x *= pow2i(127); k -= 127; if (k > 127) k = 127; } }
  else if (k < -126) { x *= pow2i(-126 + 24 + 1); k += 126 - 24 - 1;  /* keep x normal, exact */
    if (k < -126) { x *= pow2i(-126); k += 126; if (k < -126) k = -126; } }
  return x * pow2i(k);
}

/* nearest integer of a float of magnitude < 2^22, as int */
static inline int nearest_int(float v) { return (int)(v + (v < 0.0f ? -0.5f : 0.5f)); }

/* ---------------- rounding ---------------- */
float et_truncf(float x) {
  uint32_t u = et_f32_bits(x);
  int e = (int)((u >> 23) & 0xff) - 127;
  if (e >= 23) return x;
  if (e < 0) return et_bits_f32(u & 0x80000000u);
  return et_bits_f32(u & ~(0x007fffffu >> e));
}

float et_floorf(float x) {
  uint32_t u = et_f32_bits(x);
  int e = (int)((u >> 23) & 0xff) - 127;
  if (e >= 23) return x;
  if (e < 0) {
    if ((u >> 31) && (u & 0x7fffffffu)) return -1.0f;
    return et_bits_f32(u & 0x80000000u);
  }
  uint32_t m = 0x007fffffu >> e;
  if (!(u & m)) return x;
  if (u >> 31) u += m + 1;
  return et_bits_f32(u & ~m);
}

float et_ceilf(float x) {
  uint32_t u = et_f32_bits(x);
  int e = (int)((u >> 23) & 0xff) - 127;
  if (e >= 23) return x;
  if (e < 0) {
    if (!(u >> 31) && u) return 1.0f;
    return et_bits_f32(u & 0x80000000u);
  }
  uint32_t m = 0x007fffffu >> e;
  if (!(u & m)) return x;
  if (!(u >> 31)) u += m + 1;
  return et_bits_f32(u & ~m);
}

static float round_impl(float x, int even) {
  uint32_t u = et_f32_bits(x);
  uint32_t s = u & 0x80000000u;
  int e = (int)((u >> 23) & 0xff) - 127;
  if (e >= 23) return x;
  if (e < -1) return et_bits_f32(s);
  if (e == -1) {  /* 0.5 <= |x| < 1 */
    if (even && (u & 0x7fffffffu) == 0x3f000000u) return et_bits_f32(s);
    return et_bits_f32(s | 0x3f800000u);
  }
  uint32_t m = 0x007fffffu >> e, half = (m + 1) >> 1, frac = u & m;
  int odd = (e == 0) ? 1 : ((u & (m + 1)) != 0);
  u &= ~m;
  if (frac > half || (frac == half && (!even || odd))) u += m + 1;
  return et_bits_f32(u);
}
float et_roundf(float x) { return round_impl(x, 1); }
float et_round_away_f(float x) { return round_impl(x, 0); }

float et_fmodf(float x, float y) {
  uint32_t ux = et_f32_bits(x), uy = et_f32_bits(y);
  uint32_t sx = ux & 0x80000000u;
  ux &= 0x7fffffffu; uy &= 0x7fffffffu;
  if (uy == 0 || ux >= 0x7f800000u || uy > 0x7f800000u) return ET_NAN;
  if (ux < uy) return x;
  int ex = (int)(ux >> 23), ey = (int)(uy >> 23);
  uint32_t mx, my;
  if (ex == 0) { mx = ux; ex = 1; while (!(mx & 0x800000u)) { mx <<= 1; ex--; } }
  else mx = (ux & 0x7fffffu) | 0x800000u;
  if (ey == 0) { my = uy; ey = 1; while (!(my & 0x800000u)) { my <<= 1; ey--; } }
  else my = (uy & 0x7fffffu) | 0x800000u;
  uint32_t r = mx;
  if (r >= my) r -= my;
  for (int i = ex - ey; i > 0; i--) { r <<= 1; if (r >= my) r -= my; }
  if (r == 0) return et_bits_f32(sx);
  while (r < 0x800000u) { r <<= 1; ey--; }
  if (ey > 0) return et_bits_f32(sx | ((uint32_t)ey << 23) | (r & 0x7fffffu));
  return et_bits_f32(sx | (r >> (1 - ey)));
}

/* ---------------- sqrt ---------------- */
float et_sqrtf(float x) {
#if defined(__aarch64__) && !defined(ETMATH_NO_HW)
  float r; __asm__("fsqrt %s0, %s1" : "=w"(r) : "w"(x)); return r;
#elif defined(__arm__) && defined(__ARM_FP) && (__ARM_FP & 4) && !defined(ETMATH_NO_HW)
  float r; __asm__("vsqrt.f32 %0, %1" : "=t"(r) : "t"(x)); return r;
#elif defined(__SSE__) && !defined(ETMATH_NO_HW)
  return _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(x)));
#else
  uint32_t u = et_f32_bits(x);
  if ((u & 0x7fffffffu) == 0) return x;               /* +-0 */
  if ((u & 0x7fffffffu) > 0x7f800000u) return et_bits_f32(u | 0x00400000u);  /* NaN */
  if (u >> 31) return ET_NAN;                                              /* negative */
  if (u == 0x7f800000u) return x;
  int e = (int)(u >> 23);
  uint32_t m = u & 0x7fffffu;
  if (e == 0) { e = 1; while (!(m & 0x800000u)) { m <<= 1; e--; } }
  else m |= 0x800000u;
  int E = e - 150;                                     /* x = m * 2^E */
  if (E & 1) { m <<= 1; E--; }
  uint64_t op = (uint64_t)m << 26, res = 0, one = 1ull << 50;
  E -= 26;
  while (one > op) one >>= 2;
  while (one) {
    if (op >= res + one) { op -= res + one; res = (res >> 1) + one; }
    else res >>= 1;
    one >>= 2;
  }
  /* sqrt(x) = (res + frac) * 2^(E/2), frac > 0 iff op != 0; res has 25 or 26 bits */
  int extra = (res >> 25) ? 2 : 1;
  uint32_t mant = (uint32_t)(res >> extra), g = (uint32_t)res & ((1u << extra) - 1), half = 1u << (extra - 1);
  int biased = 23 + extra + E / 2 + 127;
  uint32_t out = ((uint32_t)(biased - 1) << 23) + mant;
  if (g > half || (g == half && (op != 0 || (mant & 1)))) out++;
  return et_bits_f32(out);
#endif
}

float et_rsqrtf(float x) { return 1.0f / et_sqrtf(x); }

/* ---------------- exp family ---------------- */
/* e^r - 1 for |r| <= ln2/2 (Taylor to r^8: truncation < 2^-27) */
static inline float expm1_poly(float r) {
  float p = 1.0f / 40320.0f;
  p = p * r + 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  return r + (r * r) * p;
}

float et_expf(float x) {
  if (x != x) return x;
  if (x >= 88.72283935546875f) return ET_INFINITY;
  if (x < -103.97208404541015625f) return 0.0f;
  int k = nearest_int(x * LOG2E);
  float kf = (float)k;
  float r = (x - kf * LN2_HI) - kf * LN2_LO;
  float y = 1.0f + expm1_poly(r);
  if (k > 127 || k < -126) return scale2(y, k);
  return y * pow2i(k);
}

float et_expm1f(float x) {
  if (x != x) return x;
  if (x >= 88.72283935546875f) return ET_INFINITY;
  if (x < -17.4f) return -1.0f;
  float ax = et_fabsf(x);
  if (ax < 2.98023224e-08f) return x;                  /* 2^-25 */
  int k = nearest_int(x * LOG2E);
  if (k == 0) return expm1_poly(x);
  float kf = (float)k;
  float r = (x - kf * LN2_HI) - kf * LN2_LO;
  float em = expm1_poly(r);
  if (k > 24) return scale2(1.0f + em, k) - 1.0f;
  float two = pow2i(k);
  return two * em + (two - 1.0f);
}

/* ---------------- log family ---------------- */
/* log(1+f) for f in [sqrt(2)/2 - 1, sqrt(2) - 1] */
static inline float log1p_core(float f) {
  float s = f / (2.0f + f), z = s * s;
  float R = 2.0f / 11.0f;
  R = R * z + 2.0f / 9.0f;
  R = R * z + 2.0f / 7.0f;
  R = R * z + 2.0f / 5.0f;
  R = R * z + 2.0f / 3.0f;
  R *= z;
  float hfsq = 0.5f * f * f;
  return f - (hfsq - s * (hfsq + R));
}

float et_logf(float x) {
  uint32_t u = et_f32_bits(x);
  if (x != x) return x;
  if ((u & 0x7fffffffu) == 0) return -ET_INFINITY;
  if (u >> 31) return ET_NAN;
  if (u == 0x7f800000u) return x;
  int k = 0;
  if (u < 0x00800000u) { x *= 33554432.0f; k = -25; u = et_f32_bits(x); }  /* 2^25 */
  k += (int)(u >> 23) - 127;
  float m = et_bits_f32((u & 0x7fffffu) | 0x3f800000u);
  if (m > 1.41421356f) { m *= 0.5f; k++; }
  float f = m - 1.0f;
  float kf = (float)k;
  if (k == 0) return log1p_core(f);
  return kf * LN2_HI + (log1p_core(f) + kf * LN2_LO);
}

float et_log1pf(float x) {
  if (x != x) return x;
  if (x > -0.2928932f && x < 0.41421356f) {
    if (et_fabsf(x) < 5.96046448e-08f) return x;        /* 2^-24 */
    return log1p_core(x);
  }
  if (x == -1.0f) return -ET_INFINITY;
  if (x < -1.0f) return ET_NAN;
  if (x == ET_INFINITY) return x;
  float v = 1.0f + x;
  /* correction for the rounding of 1 + x: log(1+x) ~ log(v) + (x - (v - 1)) / v */
  float c = (v < 2.0f) ? (x - (v - 1.0f)) : (1.0f - (v - x));
  return et_logf(v) + c / v;
}

float et_log2f(float x) { return et_logf(x) * LOG2E; }

/* ---------------- tanh / sigmoid ---------------- */
float et_tanhf(float x) {
  if (x != x) return x;
  float ax = et_fabsf(x);
  if (ax > 9.02f) return et_copysignf(1.0f, x);
  if (ax < 2.44140625e-04f) return x;                  /* 2^-12 */
  float t = et_expm1f(2.0f * ax);
  return et_copysignf(t / (t + 2.0f), x);
}

float et_sigmoidf(float x) {
  if (x != x) return x;
  if (x >= 0.0f) return 1.0f / (1.0f + et_expf(-x));
  float e = et_expf(x);
  return e / (1.0f + e);
}

/* ---------------- erf ---------------- */
/* erf(x)/x = P(x^2) on [0, 1]; erfc(x) * exp(x^2) = Q(1/x - 0.625) on [1, 4].
 * Least-squares fits on Chebyshev nodes made for etdeploy (|err| < 1.5e-7 in float32). */
static const float ERF_P[8] = {
  1.128379225730896f, -0.37612637877464294f, 0.11283784359693527f, -0.0268655177205801f,
  0.005221261642873287f, -0.000848726776894182f, 0.00011288175301160663f, -9.728410077514127e-06f};
static const float ERFC_Q[11] = {
  0.3059529960155487f, 0.3822837769985199f, -0.17239484190940857f, 0.043766919523477554f,
  0.023334424942731857f, -0.0469425730407238f, 0.04314364865422249f, -0.026924626901745796f,
  0.005257042590528727f, 0.026025233790278435f, -0.03516774997115135f};

static float erfc_tail(float ax) {  /* ax in [1, 4] */
  float w = 1.0f / ax - 0.625f;
  float q = ERFC_Q[10];
  for (int i = 9; i >= 0; i--) q = q * w + ERFC_Q[i];
  return et_expf(-ax * ax) * q;
}

float et_erff(float x) {
  if (x != x) return x;
  float ax = et_fabsf(x);
  if (ax < 1.0f) {
    float z = x * x, p = ERF_P[7];
    for (int i = 6; i >= 0; i--) p = p * z + ERF_P[i];
    return x * p;
  }
  if (ax >= 4.0f) return et_copysignf(1.0f, x);
  return et_copysignf(1.0f - erfc_tail(ax), x);
}

/* ---------------- pow ---------------- */
float et_powf(float x, float y) {
  if (y == 0.0f || x == 1.0f) return 1.0f;
  if (x != x || y != y) return ET_NAN;
  float yi = et_truncf(y);
  int y_int = (yi == y);
  int y_odd = y_int && et_fabsf(y) < 16777216.0f && ((et_f32_to_i64(y) & 1) != 0);
  if (y_int && et_fabsf(y) <= 64.0f) {  /* repeated squaring: a few ulp */
    int n = (int)et_fabsf(y);
    float b = x, r = 1.0f;
    while (n) { if (n & 1) r *= b; b *= b; n >>= 1; }
    return (y < 0.0f) ? 1.0f / r : r;
  }
  float ax = et_fabsf(x);
  if (x < 0.0f && !y_int) return ET_NAN;
  float r;
  if (ax == 0.0f) r = (y < 0.0f) ? ET_INFINITY : 0.0f;
  else if (et_isinff(ax)) r = (y < 0.0f) ? 0.0f : ET_INFINITY;
  else r = et_expf(y * et_logf(ax));
  return (x < 0.0f || (x == 0.0f && et_signbitf(x))) && y_odd ? -r : r;
}
