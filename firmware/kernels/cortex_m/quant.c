/* cortex_m:: quantize / dequantize per tensor (int8 <-> float32). */
#include "cm_util.h"

/* float32 nearest to 1 / d for the IEEE double d given by its bits (integer long division) */
static float recip_double_bits(uint64_t bits) {
  uint32_t sign = (uint32_t)(bits >> 63);
  int32_t e = (int32_t)((bits >> 52) & 0x7ff);
  uint64_t m = bits & (((uint64_t)1 << 52) - 1);
  float sgn = sign ? -1.0f : 1.0f;
  if (e == 0x7ff) return m ? ET_NAN : sgn * 0.0f;
  if (e == 0) {
    if (m == 0) return sgn * ET_INFINITY;
    while (!(m & ((uint64_t)1 << 52))) { m <<= 1; e--; }
    e++;
  } else {
    m |= (uint64_t)1 << 52;
  }
  /* d = m * 2^(e - 1075); q = floor(2^78 / m) in (2^25, 2^26] */
  uint64_t r = (uint64_t)1 << 52, q = 0;
  for (int i = 0; i < 27; i++) {
    q <<= 1;
    if (r >= m) { r -= m; q |= 1; }
    r <<= 1;
  }
  bool sticky = r != 0;
  int32_t shift = q >= ((uint64_t)1 << 26) ? 3 : 2;
  uint64_t keep = q >> shift, rem = q & ((1u << shift) - 1), half = (uint64_t)1 << (shift - 1);
  if (rem > half || (rem == half && (sticky || (keep & 1)))) keep++;
  /* 1/d = keep * 2^(shift + 997 - e) */
  return sgn * ldexp_f((float)(uint32_t)keep, shift + 997 - e);
}

#ifdef CM_MVE
/* n16 groups of 16 floats to int8 at zero point zp in [-1024, 1024], range [-128, 127]: vld4 deals the
 * floats out so that the saturating narrows (32 -> 16 bits, + zp, 16 -> 8) put them back in order, each
 * saturation keeping a value's side of [-128, 127] as the clamp does; vcvtn rounds half to even like
 * et_roundf (0 for NaN, like et_f32_to_i64); the bottom narrows go first, in place. 22 instructions
 * per 16. */
__attribute__((noinline)) static void quantize16_asm(const float *x, int8_t *y, uint32_t n16, float inv, int32_t zp) {
  register const float *rx __asm__("r0") = x;
  register int8_t *ry __asm__("r1") = y;
  register uint32_t rn __asm__("r2") = n16;
  register int32_t rz __asm__("r3") = zp;
  register float rinv __asm__("r12") = inv;
  __asm__ volatile(
      "dls lr, r2\n"
      "1:\n\t"
      "vld40.32 {q0, q1, q2, q3}, [r0]\n\t"
      "vld41.32 {q0, q1, q2, q3}, [r0]\n\t"
      "vld42.32 {q0, q1, q2, q3}, [r0]\n\t"
      "vld43.32 {q0, q1, q2, q3}, [r0]!\n\t"
      "vmul.f32 q0, q0, r12\n\t"
      "vmul.f32 q1, q1, r12\n\t"
      "vmul.f32 q2, q2, r12\n\t"
      "vmul.f32 q3, q3, r12\n\t"
      "vcvtn.s32.f32 q0, q0\n\t"
      "vcvtn.s32.f32 q1, q1\n\t"
      "vcvtn.s32.f32 q2, q2\n\t"
      "vcvtn.s32.f32 q3, q3\n\t"
      "vqmovnb.s32 q0, q0\n\t"
      "vqmovnb.s32 q1, q1\n\t"
      "vqmovnt.s32 q0, q2\n\t"
      "vqmovnt.s32 q1, q3\n\t"
      "vqadd.s16 q0, q0, r3\n\t"
      "vqadd.s16 q1, q1, r3\n\t"
      "vqmovnb.s16 q0, q0\n\t"
      "vqmovnt.s16 q0, q1\n\t"
      "vstrb.8 q0, [r1], #16\n\t"
      "le lr, 1b"
      : "+r"(rx), "+r"(ry), "+r"(rn)
      : "r"(rz), "r"(rinv)
      : "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "memory");
}
#endif

static inline int8_t cm_quantize_one(float x, float inv, int32_t zp, int32_t qmin, int32_t qmax) {
  float r = et_roundf(x * inv);
  int64_t q = et_f32_to_i64(r < -1e12f ? -1e12f : r > 1e12f ? 1e12f : r) + zp;  /* no int64 overflow */
  if (q < qmin) q = qmin;
  if (q > qmax) q = qmax;
  return (int8_t)q;
}
#ifdef CM_VCVTR
/* Cortex-M4F/M33/M7 (single-precision FPU, no MVE): VCVTR converts with the FPSCR rounding mode, which is
 * round to nearest even unless someone changed it (checked per call: then the scalar form runs). NaN
 * gives 0 and values beyond int32 saturate, which the clamp turns into what the 64-bit scalar form
 * gives while zp and the range stay far from int32's limits (checked by the caller). */
#define CM_QUANT_VCVTR 1
__attribute__((noinline)) static void cm_quantize_vcvtr(const float *x, int8_t *y, uint32_t n, float inv, int32_t zp,
                                                        int32_t qmin, int32_t qmax) {
  if (qmin == -128 && qmax == 127) {   /* the int8 range: one SSAT */
    uint32_t n4 = n >> 2;
    if (n4) {   /* 4 a step: one VLDM, two 2-register VMOVs (s8-s11 are caller-saved scratch) */
      int32_t a, b, c, d;
      __asm__ volatile("1:\n\t"
                       "vldmia %[x]!, {s8-s11}\n\t"
                       "vmul.f32 s8, s8, %[inv]\n\t" "vmul.f32 s9, s9, %[inv]\n\t"
                       "vmul.f32 s10, s10, %[inv]\n\t" "vmul.f32 s11, s11, %[inv]\n\t"
                       "vcvtr.s32.f32 s8, s8\n\t" "vcvtr.s32.f32 s9, s9\n\t"
                       "vcvtr.s32.f32 s10, s10\n\t" "vcvtr.s32.f32 s11, s11\n\t"
                       "vmov %[a], %[b], s8, s9\n\t" "vmov %[c], %[d], s10, s11\n\t"
                       "qadd %[a], %[a], %[zp]\n\t" "qadd %[b], %[b], %[zp]\n\t"
                       "qadd %[c], %[c], %[zp]\n\t" "qadd %[d], %[d], %[zp]\n\t"
                       "ssat %[a], #8, %[a]\n\t" "ssat %[b], #8, %[b]\n\t"
                       "ssat %[c], #8, %[c]\n\t" "ssat %[d], #8, %[d]\n\t"
                       "strb %[a], [%[y]], #1\n\t" "strb %[b], [%[y]], #1\n\t"
                       "strb %[c], [%[y]], #1\n\t" "strb %[d], [%[y]], #1\n\t"
                       "subs %[n], %[n], #1\n\t"
                       "bne 1b\n\t"
                       : [x] "+r"(x), [y] "+r"(y), [n] "+r"(n4), [a] "=&r"(a), [b] "=&r"(b), [c] "=&r"(c),
                         [d] "=&r"(d)
                       : [inv] "t"(inv), [zp] "r"(zp)
                       : "s8", "s9", "s10", "s11", "cc", "memory");
    }
    for (uint32_t i = 0; i < (n & 3); i++) y[i] = (int8_t)__ssat(__qadd(cm_rint_s32(x[i] * inv), zp), 8);
    return;
  }
  for (uint32_t i = 0; i < n; i++) {
    int32_t q = __qadd(cm_rint_s32(x[i] * inv), zp);
    q = q < qmin ? qmin : q;   /* in the scalar form's order (qmin > qmax gives qmax) */
    y[i] = (int8_t)(q > qmax ? qmax : q);
  }
}
#endif

/* ---------------------------------------------------------------- quantize / dequantize */

/* quantize_per_tensor.out(Tensor input, float scale, int zero_point, int quant_min, int quant_max,
 *   ScalarType dtype, *, Tensor(a!) out) */
ET_OP("cortex_m::quantize_per_tensor.out", k_cm_quantize_per_tensor_out) {
  ET_CHECK_ARGS(7);
  et_tensor *in, *out;
  ARG_TENSOR(0, in);
  ARG_TENSOR(6, out);
  int32_t zp, qmin, qmax;
  ARG_INT(2, zp); ARG_INT(3, qmin); ARG_INT(4, qmax);
  if (in->dtype != ET_FLOAT || out->dtype != ET_CHAR) BAD(0);
  float inv;
  if (args[1]->tag == ET_TAG_DOUBLE) inv = recip_double_bits(args[1]->u.dbits);
  else inv = 1.0f / et_value_as_float(args[1]);
  et_status st = et_resize_like(out, in);
  if (st) { ctx->err_detail = 6; return st; }
  if (!et_same_layout(in, out)) { ctx->err_detail = 6; return ET_ERR_UNSUPPORTED; }
  const float *x = (const float *)in->data;
  int8_t *y = (int8_t *)out->data;
  int64_t n = et_numel(in);
#ifdef CM_MVE
  /* Four lanes: vcvtn rounds to nearest even like et_roundf and gives 0 for NaN like et_f32_to_i64;
   * beyond int32 it saturates, where the clamp below gives what the 64-bit scalar form gives as long as
   * zp and the range stay far from int32's limits. */
  if (zp >= -(1 << 24) && zp <= (1 << 24) && qmin >= -(1 << 30) && qmax <= (1 << 30)) {
    const int32x4_t lo = vdupq_n_s32(qmin), hi = vdupq_n_s32(qmax);
    uint32_t i = 0;
    const uint32_t nn = (uint32_t)n;
    if (qmin == -128 && qmax == 127 && zp >= -1024 && zp <= 1024) {
      /* 16 a pass: vld4 deals the floats out so that the saturating narrows (32 -> 16 bits, + zp, 16 -> 8)
       * put them back in order; each saturation keeps a value's side of [-128, 127], as the clamp does */
      if (nn >= 16) {
        quantize16_asm(x, y, nn >> 4, inv, zp);
        i = nn & ~15u;
      }
    }
    for (; i < nn; i += 4) {
      const mve_pred16_t p = vctp32q(nn - i);
      const int32x4_t q = vqaddq_n_s32(vcvtnq_s32_f32(vmulq_n_f32(vldrwq_z_f32(x + i, p), inv)), zp);
      vstrbq_p_s32(y + i, vminq_s32(vmaxq_s32(q, lo), hi), p);
    }
    return ET_OK;
  }
#endif
#ifdef CM_QUANT_VCVTR
  if (zp >= -(1 << 24) && zp <= (1 << 24) && qmin >= -(1 << 30) && qmax <= (1 << 30) && n <= UINT32_MAX &&
      cm_fpscr_nearest()) {
    cm_quantize_vcvtr(x, y, (uint32_t)n, inv, zp, qmin, qmax);
    return ET_OK;
  }
#endif
  for (int64_t i = 0; i < n; i++) y[i] = cm_quantize_one(x[i], inv, zp, qmin, qmax);
  return ET_OK;
}

/* dequantize_per_tensor.out(Tensor input, float scale, int zero_point, int quant_min, int quant_max,
 *   ScalarType dtype, *, Tensor(a!) out) */
ET_OP("cortex_m::dequantize_per_tensor.out", k_cm_dequantize_per_tensor_out) {
  ET_CHECK_ARGS(7);
  et_tensor *in, *out;
  ARG_TENSOR(0, in);
  ARG_TENSOR(6, out);
  int32_t zp;
  ARG_INT(2, zp);
  if (in->dtype != ET_CHAR || out->dtype != ET_FLOAT) BAD(0);
  float scale = et_value_as_float(args[1]);
  et_status st = et_resize_like(out, in);
  if (st) { ctx->err_detail = 6; return st; }
  if (!et_same_layout(in, out)) { ctx->err_detail = 6; return ET_ERR_UNSUPPORTED; }
  const int8_t *x = (const int8_t *)in->data;
  float *y = (float *)out->data;
  int64_t n = et_numel(in);
  int64_t i = 0;
#ifdef CM_MVE
  /* four lanes: the same wrapping subtraction, exact int -> float conversion and one rounding multiply */
  if (n <= UINT32_MAX) {
    const uint32_t nn = (uint32_t)n;
    for (uint32_t j = 0; j < nn; j += 4) {
      const mve_pred16_t p = vctp32q(nn - j);
      const int32x4_t q = vsubq_n_s32(vldrbq_z_s32(x + j, p), zp);
      vstrwq_p_f32(y + j, vmulq_n_f32(vcvtq_f32_s32(q), scale), p);
    }
    i = n;
  }
#endif
  for (; i < n; i++) y[i] = (float)(int32_t)((uint32_t)(int32_t)x[i] - (uint32_t)zp) * scale;
  return ET_OK;
}
