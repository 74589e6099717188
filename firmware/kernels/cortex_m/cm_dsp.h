/* Private to firmware/kernels/cortex_m/: int8 GEMM cores for the DSP extension (Cortex-M4/M7/M33:
 * SMLAD, two 16x16 MACs an instruction); cm_util.h includes it (CM_DSP) when __ARM_FEATURE_DSP is
 * there and MVE is not. The convolutions and linears run on dsp_gemm.h (the input widened once into
 * a stack buffer); the cores here are what they fall back to, and the depthwise's helpers.
 *
 * The int8 operands stay int8 in memory: a word of four bytes a0..a3 is widened in registers with
 * SXTB16 into (a0, a2) and, rotated by 8, (a1, a3). Widening both operands the same way pairs the
 * right bytes, so SMLAD(sxtb16(a), sxtb16(b)) + SMLAD(sxtb16(a ror 8), sxtb16(b ror 8)) is the dot
 * product of the four bytes: no im2col, no widened copy, no scratch. A pass computes 2 output channels
 * x 2 columns (four accumulators share each widened load): 4 loads, 8 SXTB16, 8 SMLAD per 16 MACs.
 * The input offset is not added to the inputs: it is folded as offset x sum(weights of the taps used),
 * per output channel (see cm_dsp_conv). */
#ifndef ET_CORTEX_M_CM_DSP_H
#define ET_CORTEX_M_CM_DSP_H
#include <arm_acle.h>
#include <string.h>
#include <stdint.h>

/* SXTB16 of the word rotated right by 8: bytes 1 and 3 widened. One instruction (GCC 12 keeps
 * __sxtb16(rotate) as a separate rotate, and its arm_acle.h has no __ror). */
static inline int16x2_t cm_sxtb16_r8(uint32_t v) {
  int16x2_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
  return r;
}

/* a word of int8 from any address (the M4/M33/M7 load words unaligned; memcpy becomes one LDR) */
static inline uint32_t cm_ld32(const int8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

#ifdef __OPTIMIZE__  /* the loop needs 14 registers: r7 is the frame pointer at -O0 */
/* One 4-byte step of the 2x2 pass: 3 loads, 6 SXTB16, 8 SMLAD (the second weight row loads last). */
#define CM_DSP_STEP2X2 \
  "ldr %[t0], [%[x0]], #4\n\t" "ldr %[t1], [%[x1]], #4\n\t" "ldr %[t2], [%[w0]], #4\n\t" \
  "sxtb16 %[t3], %[t0]\n\t" "sxtb16 %[t0], %[t0], ror #8\n\t" \
  "sxtb16 %[t4], %[t1]\n\t" "sxtb16 %[t1], %[t1], ror #8\n\t" \
  "sxtb16 %[t5], %[t2]\n\t" "sxtb16 %[t2], %[t2], ror #8\n\t" \
  "smlad %[a00], %[t3], %[t5], %[a00]\n\t" "smlad %[a00], %[t0], %[t2], %[a00]\n\t" \
  "smlad %[a10], %[t4], %[t5], %[a10]\n\t" "smlad %[a10], %[t1], %[t2], %[a10]\n\t" \
  "ldr %[t2], [%[w1]], #4\n\t" \
  "sxtb16 %[t5], %[t2]\n\t" "sxtb16 %[t2], %[t2], ror #8\n\t" \
  "smlad %[a01], %[t3], %[t5], %[a01]\n\t" "smlad %[a01], %[t0], %[t2], %[a01]\n\t" \
  "smlad %[a11], %[t4], %[t5], %[a11]\n\t" "smlad %[a11], %[t1], %[t2], %[a11]\n\t"
#endif

/* acc[0] += x0.w0, acc[1] += x1.w0, acc[2] += x0.w1, acc[3] += x1.w1 over n int8 */
__attribute__((always_inline)) static inline void cm_dsp_dot2x2(const int8_t *x0, const int8_t *x1,
                                                                const int8_t *w0, const int8_t *w1, int32_t n,
                                                                int32_t *acc) {
  int32_t a00 = acc[0], a10 = acc[1], a01 = acc[2], a11 = acc[3];
#ifdef __OPTIMIZE__
  /* 8 bytes a trip; the trip count lives on the stack: 4 accumulators, 4 pointers and 6 temporaries
   * take all 14 registers. 44 instructions per 32 MACs. */
  int32_t trips = n >> 3;
  if (trips > 0) {
    uint32_t t0, t1, t2, t3, t4, t5;
    __asm__ volatile("1:\n\t" CM_DSP_STEP2X2 CM_DSP_STEP2X2
                     "ldr %[t0], %[n]\n\t" "subs %[t0], %[t0], #1\n\t" "str %[t0], %[n]\n\t" "bne 1b\n\t"
                     : [a00] "+r"(a00), [a10] "+r"(a10), [a01] "+r"(a01), [a11] "+r"(a11), [x0] "+r"(x0),
                       [x1] "+r"(x1), [w0] "+r"(w0), [w1] "+r"(w1), [n] "+m"(trips), [t0] "=&r"(t0),
                       [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4), [t5] "=&r"(t5)
                     :
                     : "cc", "memory");
  }
  n &= 7;
#endif
  for (int32_t k = n >> 2; k > 0; k--) {
    const uint32_t xa = cm_ld32(x0), xb = cm_ld32(x1), wa = cm_ld32(w0), wb = cm_ld32(w1);
    x0 += 4; x1 += 4; w0 += 4; w1 += 4;
    const int16x2_t xae = __sxtb16(xa), xao = cm_sxtb16_r8(xa);
    const int16x2_t xbe = __sxtb16(xb), xbo = cm_sxtb16_r8(xb);
    const int16x2_t wae = __sxtb16(wa), wao = cm_sxtb16_r8(wa);
    a00 = __smlad(xae, wae, a00); a00 = __smlad(xao, wao, a00);
    a10 = __smlad(xbe, wae, a10); a10 = __smlad(xbo, wao, a10);
    const int16x2_t wbe = __sxtb16(wb), wbo = cm_sxtb16_r8(wb);
    a01 = __smlad(xae, wbe, a01); a01 = __smlad(xao, wbo, a01);
    a11 = __smlad(xbe, wbe, a11); a11 = __smlad(xbo, wbo, a11);
  }
  for (int32_t k = n & 3; k > 0; k--) {
    const int32_t xa = *x0++, xb = *x1++, wa = *w0++, wb = *w1++;
    a00 += xa * wa; a10 += xb * wa; a01 += xa * wb; a11 += xb * wb;
  }
  acc[0] = a00; acc[1] = a10; acc[2] = a01; acc[3] = a11;
}

/* acc[0] += x0.w0, acc[1] += x0.w1 over n int8 (one column: a border pixel, an odd last column) */
__attribute__((always_inline)) static inline void cm_dsp_dot1x2(const int8_t *x0, const int8_t *w0,
                                                                const int8_t *w1, int32_t n, int32_t *acc) {
  int32_t a0 = acc[0], a1 = acc[1];
  for (int32_t k = n >> 2; k > 0; k--) {
    const uint32_t xa = cm_ld32(x0), wa = cm_ld32(w0), wb = cm_ld32(w1);
    x0 += 4; w0 += 4; w1 += 4;
    const int16x2_t xe = __sxtb16(xa), xo = cm_sxtb16_r8(xa);
    a0 = __smlad(xe, __sxtb16(wa), a0); a0 = __smlad(xo, cm_sxtb16_r8(wa), a0);
    a1 = __smlad(xe, __sxtb16(wb), a1); a1 = __smlad(xo, cm_sxtb16_r8(wb), a1);
  }
  for (int32_t k = n & 3; k > 0; k--) {
    const int32_t xa = *x0++;
    a0 += xa * *w0++; a1 += xa * *w1++;
  }
  acc[0] = a0; acc[1] = a1;
}

/* sum of n int8 (weights' sums, once per output channel and call) */
static inline int32_t cm_dsp_sum(const int8_t *a, int32_t n) {
  int32_t s = 0;
  for (int32_t k = n >> 2; k > 0; k--, a += 4) {
    const uint32_t v = cm_ld32(a);
    s = __smlad(__sxtb16(v), 0x00010001, s);
    s = __smlad(cm_sxtb16_r8(v), 0x00010001, s);
  }
  for (int32_t k = n & 3; k > 0; k--) s += *a++;
  return s;
}

/* Requantisation of one channel, set up once (cm_dsp_rq_set) and applied per output: what cm_requant
 * + out_off (saturating) + the activation clamp give, in about a dozen instructions:
 * (v * m + 2^30) >> 31 is SMMULR(2v, m) = (2vm + 2^31) >> 32 while |v| < 2^30; the rounding right
 * shift by rs (half away from zero) is (r + 2^(rs-1) + (r < 0 ? -1 : 0)) >> rs, no overflow for
 * |r| < 2^30. Other shifts and accumulators take cm_requant. */
typedef struct {
  int32_t mult, shift, rs, half, out_off, amin, amax;
  bool fast;
} cm_dsp_rq;

static inline void cm_dsp_rq_set(cm_dsp_rq *q, int32_t mult, int32_t shift, int32_t out_off, int32_t amin,
                                 int32_t amax) {
  q->mult = mult; q->shift = shift; q->out_off = out_off; q->amin = amin; q->amax = amax;
  q->fast = shift <= 0 && shift >= -31;
  q->rs = q->fast ? -shift : 0;
  q->half = q->rs > 0 ? (int32_t)(1u << (q->rs - 1)) : 0;
}

/* cm_requant off the hot path (keeps the callers' registers free) */
CM_UNUSED __attribute__((noinline)) static int32_t cm_dsp_requant_slow(int32_t v, int32_t mult, int32_t shift) {
  return cm_requant(v, mult, shift);
}

/* The same from a channel's multiplier and shift directly (no setup: for channel-inner loops), in
 * about 14 instructions: for |v| < 2^29 and shift in [-30, 0], r = SMMULR(2v, m) (|r| < 2^29) and the
 * rounding shift by rs = -shift is (2r + 2^rs + (r < 0 ? -1 : 0)) >> (rs + 1): the same value as
 * (r + 2^(rs-1) - [r < 0]) >> rs for rs >= 1 (the numerators differ by one and the larger is odd),
 * and r itself for rs = 0. */
static inline int8_t cm_dsp_rq1(uint32_t acc, int32_t mult, int32_t shift, int32_t out_off, int32_t amin,
                                int32_t amax) {
  const int32_t v = (int32_t)acc;
  int32_t r;
  if (__builtin_expect((uint32_t)(shift + 30) <= 30u && (int32_t)((uint32_t)v << 2) >> 2 == v, 1)) {
    __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"((int32_t)((uint32_t)v << 1)), "r"(mult));
    r = ((int32_t)((uint32_t)r << 1) + (int32_t)(1u << -shift) + (r >> 31)) >> (1 - shift);
  } else {
    r = cm_dsp_requant_slow(v, mult, shift);
  }
  r = __qadd(r, out_off);
  return (int8_t)(r < amin ? amin : r > amax ? amax : r);
}

static inline int8_t cm_dsp_rq_apply(const cm_dsp_rq *q, uint32_t acc) {
  const int32_t v = (int32_t)acc;
  int32_t r;
  if (q->fast && (int32_t)((uint32_t)v << 1) >> 1 == v) {
    __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"((int32_t)((uint32_t)v << 1)), "r"(q->mult));
    if (q->rs > 0) r = (r + q->half + (r >> 31)) >> q->rs;
  } else {
    r = cm_requant(v, q->mult, q->shift);
  }
  r = __qadd(r, q->out_off);
  return (int8_t)(r < q->amin ? q->amin : r > q->amax ? q->amax : r);
}

/* The int8 GEMM on the 2x2 pass: for rows m < M of x (row m at x + m * xs, K int8) and weight rows
 * n < N (row n at w + n * K):  y[m * ysm + n * ysn] = rq_n(c_n + sum_k x[m][k] w[n][k]), where
 * c_n = bias[n] (if any) + (ksum ? ksum[n] : io * sum_k w[n][k]) and rq_n requantises with
 * mult[n], shift[n] (or [0] for all when !per_channel). Used by pointwise convs and linears. */
typedef struct {
  const int8_t *w;
  const int32_t *bias, *ksum, *mult, *shift;
  int32_t N, K, io, out_off, amin, amax;
  bool per_channel;
} cm_dsp_gemm_args;

CM_UNUSED __attribute__((noinline)) static void cm_dsp_gemm(const cm_dsp_gemm_args *g, const int8_t *x, ptrdiff_t xs,
                                                  int32_t M, int8_t *y, ptrdiff_t ysm, ptrdiff_t ysn) {
  const int32_t N = g->N, K = g->K;
  for (int32_t n = 0; n < N; n += 2) {
    const int32_t n1 = n + 1 < N ? n + 1 : n;  /* an odd last row is computed twice, stored once */
    const int8_t *w0 = g->w + (ptrdiff_t)n * K, *w1 = g->w + (ptrdiff_t)n1 * K;
    uint32_t c0 = g->bias ? (uint32_t)g->bias[n] : 0u, c1 = g->bias ? (uint32_t)g->bias[n1] : 0u;
    if (g->ksum) {
      c0 += (uint32_t)g->ksum[n]; c1 += (uint32_t)g->ksum[n1];
    } else if (g->io) {
      c0 += (uint32_t)g->io * (uint32_t)cm_dsp_sum(w0, K); c1 += (uint32_t)g->io * (uint32_t)cm_dsp_sum(w1, K);
    }
    const int32_t q0i = g->per_channel ? n : 0, q1i = g->per_channel ? n1 : 0;
    cm_dsp_rq q0, q1;
    cm_dsp_rq_set(&q0, g->mult[q0i], g->shift[q0i], g->out_off, g->amin, g->amax);
    cm_dsp_rq_set(&q1, g->mult[q1i], g->shift[q1i], g->out_off, g->amin, g->amax);
    int8_t *y0 = y + n * ysn, *y1 = y + n1 * ysn;
    const bool two = n1 != n;
    const int8_t *xm = x;
    int32_t m = 0;
    for (; m + 2 <= M; m += 2, xm += 2 * xs) {
      int32_t acc[4] = {0, 0, 0, 0};
      cm_dsp_dot2x2(xm, xm + xs, w0, w1, K, acc);
      y0[m * ysm] = cm_dsp_rq_apply(&q0, c0 + (uint32_t)acc[0]);
      y0[(m + 1) * ysm] = cm_dsp_rq_apply(&q0, c0 + (uint32_t)acc[1]);
      if (two) {
        y1[m * ysm] = cm_dsp_rq_apply(&q1, c1 + (uint32_t)acc[2]);
        y1[(m + 1) * ysm] = cm_dsp_rq_apply(&q1, c1 + (uint32_t)acc[3]);
      }
    }
    if (m < M) {
      int32_t acc[2] = {0, 0};
      cm_dsp_dot1x2(xm, w0, w1, K, acc);
      y0[m * ysm] = cm_dsp_rq_apply(&q0, c0 + (uint32_t)acc[0]);
      if (two) y1[m * ysm] = cm_dsp_rq_apply(&q1, c1 + (uint32_t)acc[1]);
    }
  }
}

#endif
