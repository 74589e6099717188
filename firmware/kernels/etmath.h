/* Portable float32 math for kernels: no libm, no double arithmetic, the same results on every
 * target (Cortex-M, Xtensa lx106 soft-float, AArch64, host). Accuracy: about 1-2 ulp unless noted.
 * Special values follow C99 Annex F (NaN in -> NaN out, +-inf, signed zeros). */
#ifndef ETMATH_H
#define ETMATH_H
#include <stdint.h>
#include <stdbool.h>

#include "et_numfmt.h"   /* bit access, half/bfloat16, float -> int64: shared with the runtime */

static inline bool et_isnanf(float x) { return (et_f32_bits(x) & 0x7fffffffu) > 0x7f800000u; }
static inline bool et_isinff(float x) { return (et_f32_bits(x) & 0x7fffffffu) == 0x7f800000u; }
static inline bool et_isfinitef(float x) { return (et_f32_bits(x) & 0x7f800000u) != 0x7f800000u; }
static inline bool et_signbitf(float x) { return (et_f32_bits(x) >> 31) != 0; }
static inline float et_fabsf(float x) { return et_bits_f32(et_f32_bits(x) & 0x7fffffffu); }
static inline float et_copysignf(float x, float s) {
  return et_bits_f32((et_f32_bits(x) & 0x7fffffffu) | (et_f32_bits(s) & 0x80000000u));
}
#define ET_INFINITY (et_bits_f32(0x7f800000u))
#define ET_NAN (et_bits_f32(0x7fc00000u))

/* NaN-propagating min/max (PyTorch's minimum/maximum/clamp semantics). */
static inline float et_fmaxf_nan(float a, float b) { return (a != a) ? a : (b != b) ? b : (a > b ? a : b); }
static inline float et_fminf_nan(float a, float b) { return (a != a) ? a : (b != b) ? b : (a < b ? a : b); }

/* ---- rounding (exact) ---- */
float et_floorf(float x);
float et_ceilf(float x);
float et_truncf(float x);
float et_roundf(float x);        /* round half to even (torch.round) */
float et_round_away_f(float x);  /* round half away from zero (C roundf) */
float et_fmodf(float x, float y);/* exact, sign of x (C fmodf, torch.fmod) */

/* ---- transcendental ---- */
float et_sqrtf(float x);         /* correctly rounded */
float et_rsqrtf(float x);        /* 1 / sqrt(x) */
float et_expf(float x);
float et_expm1f(float x);
float et_logf(float x);
float et_log1pf(float x);
float et_log2f(float x);
float et_tanhf(float x);
float et_sigmoidf(float x);      /* 1 / (1 + exp(-x)), no overflow */
float et_erff(float x);          /* absolute error < 2e-7 */
float et_powf(float x, float y); /* a few ulp; integer y exact-ish by repeated squaring */

#endif
