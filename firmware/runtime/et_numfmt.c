/* Number formats shared by the runtime and kernels (see et_numfmt.h). */
#include "et_numfmt.h"

/* ---------------- half / bfloat16 ---------------- */
float et_half_to_float(uint16_t h) {
  uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return et_bits_f32(s | 0x7f800000u | (m << 13));
  if (e == 0) {
    if (!m) return et_bits_f32(s);
    e = 113;  /* normalise the denormal: value = m * 2^-24 */
    while (!(m & 0x400u)) { m <<= 1; e--; }
    return et_bits_f32(s | (e << 23) | ((m & 0x3ffu) << 13));
  }
  return et_bits_f32(s | ((e + 112) << 23) | (m << 13));
}

uint16_t et_float_to_half(float f) {
  uint32_t u = et_f32_bits(f);
  uint16_t s = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u)
    return (uint16_t)(s | 0x7c00u | (a > 0x7f800000u ? (0x200u | ((a >> 13) & 0x3ffu)) : 0u));
  if (a >= 0x477ff000u) return (uint16_t)(s | 0x7c00u);   /* >= 65520 rounds to inf */
  int e = (int)(a >> 23) - 127;
  uint32_t h, rem, half;
  if (e >= -14) {
    h = ((uint32_t)(e + 15) << 10) | ((a >> 13) & 0x3ffu);
    rem = a & 0x1fffu; half = 0x1000u;
  } else {
    if (e < -25) return s;
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    int sh = -(e + 1);
    h = m >> sh; rem = m & ((1u << sh) - 1); half = 1u << (sh - 1);
  }
  if (rem > half || (rem == half && (h & 1u))) h++;
  return (uint16_t)(s | h);
}

uint16_t et_float_to_bf16(float f) {
  uint32_t u = et_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

int64_t et_f32_to_i64(float f) {
  if (f != f) return 0;
  if (f >= 9.22337203685477581e18f) return INT64_MAX;
  if (f < -9.22337203685477581e18f) return INT64_MIN;
  return (int64_t)f;
}
