/* Number formats the runtime itself needs (tensor loads/stores of half and bfloat16, float ->
 * int64 conversion) and that kernels share through etmath.h: bit access, conversions with round to
 * nearest even, no libm, no doubles. Kept in the runtime so it never includes kernel headers. */
#ifndef ET_NUMFMT_H
#define ET_NUMFMT_H
#include <stdint.h>

/* ---- bit access ---- */
static inline uint32_t et_f32_bits(float f) { union { float f; uint32_t u; } c; c.f = f; return c.u; }
static inline float et_bits_f32(uint32_t u) { union { float f; uint32_t u; } c; c.u = u; return c.f; }

/* ---- half / bfloat16 (round to nearest even, denormals, inf, NaN) ---- */
float et_half_to_float(uint16_t h);
uint16_t et_float_to_half(float f);
static inline float et_bf16_to_float(uint16_t b) { return et_bits_f32((uint32_t)b << 16); }
uint16_t et_float_to_bf16(float f);

/* float -> int64 with C truncation, saturating, NaN -> 0 (no UB). */
int64_t et_f32_to_i64(float f);

#endif
