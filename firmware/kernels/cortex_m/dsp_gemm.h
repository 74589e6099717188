/* Private to firmware/kernels/cortex_m/: the int8 GEMM on the DSP extension (SMLAD) for pointwise and
 * KxK convolutions (dsp_conv.h) and linears (linear.c), with the input side widened once.
 *
 * Columns (output pixels, or a linear's input rows) are widened to int16 with the input offset added
 * and doubled, 2 (x + io) (so no weight sums are needed, padded taps are plain zeros, and the
 * accumulator is 2 acc, what SMMULR takes), into the call's planned scratch (cm_dsp_mm_bytes), two columns
 * interleaved per 4 k: (x0 k0|k2, x1 k0|k2, x0 k1|k3, x1 k1|k3). Weight words are widened in registers
 * by SXTB16 / SXTB16 ROR 8, which pairs them with those halves. A pass is 2 output channels x 2 columns
 * (cm_dsp_cols2: per 4 k 2 LDRD + 2 LDR + 4 SXTB16 + 8 SMLAD, the loop unrolled to 8 k) or, for one
 * column, 4 channels (cm_dsp_gemv: LDRD + 4 x (LDR, 2 SXTB16, 2 SMLAD)).
 * Requantisation per channel is set up once per call in a table (cm_dsp_ch): 6 instructions an
 * output with the store. Last rows and pairs overlap the previous ones (odd N or M: a row computed twice, stored
 * twice with the same value), so every pass is whole; a row whose K is not a multiple of 4 reads its
 * last word from the next row (times a zero column), and the very last row from a padded copy. */
#ifndef ET_CORTEX_M_DSP_GEMM_H
#define ET_CORTEX_M_DSP_GEMM_H
#include "cm_util.h"

#define CM_DSP_KMAX 640   /* k of two widened columns (2.5 KB); one column (the gemv) takes 2 x that */
#define CM_DSP_KCOL 256   /* k of the int8 im2col rows (dsp_conv.h, channels not a multiple of 4) */
#define CM_DSP_NB 64      /* channels of a requantisation table block (1 KB) */
#define CM_DSP_KCH 128    /* k of a chunk of the one-column GEMM's widened row (256 bytes), when chunks need less */

/* one output channel: accumulator start (2 x (bias, or kernel sum)), multiplier, the rounding constant
 * with the output offset folded in (2^rs + out_off << (rs + 1)) and rs + 1 */
typedef struct {
  int32_t init, mult, add, rs1;
} cm_dsp_ch;

/* The GEMM's planned scratch (ET_SCRATCH; tools/etdeploy/kernel_scratch.py mirrors cm_dsp_mm_bytes), in
 * 16-aligned parts: the widened columns (two: 16 bytes per 4 k; one: 8, or a chunk of CM_DSP_KCH k of it),
 * the requantisation table of a channel block (two columns), the last weight row zero-padded (K % 4), two
 * pixels' int8 im2col rows (col8: dsp_conv.h, channels not a multiple of 4), the partial sums of the N
 * rows (one column in chunks) */
typedef struct {
  uint32_t *x;        /* widened columns */
  cm_dsp_ch *tab;     /* requantisation of a channel block (CM_DSP_NB at most) */
  uint32_t *wlast;    /* the last weight row, zero-padded to a multiple of 4 */
  int8_t *col[2];     /* im2col rows of two pixels */
  int32_t *part;      /* the rows' sums over the chunks so far (NULL: one chunk) */
  int32_t kch;        /* k of a chunk */
} cm_dsp_scratch;
#define CM_DSP_A16(n) (((uint32_t)(n) + 15u) & ~15u)
/* one column: widened in chunks of CM_DSP_KCH with N partial sums where that takes fewer bytes */
static inline bool cm_dsp_chunked(int32_t K, int32_t N) {
  return K > CM_DSP_KCH && CM_DSP_A16(2u * CM_DSP_KCH) + CM_DSP_A16(4u * (uint32_t)N) < CM_DSP_A16(2u * (uint32_t)K);
}
static inline uint32_t cm_dsp_mm_parts(int32_t K, int32_t N, bool two, bool col8, int8_t *p, cm_dsp_scratch *s) {
  const uint32_t k4 = (uint32_t)(K + 3) >> 2;
  const bool chunks = !two && cm_dsp_chunked(K, N);
  const uint32_t x = CM_DSP_A16((two ? 16u : 8u) * (chunks ? CM_DSP_KCH / 4 : k4));
  const uint32_t tab = two ? 16u * (uint32_t)(N < CM_DSP_NB ? N : CM_DSP_NB) : 0u;
  const uint32_t wl = (K & 3) ? CM_DSP_A16(4u * k4) : 0u, col = col8 ? CM_DSP_A16(K) : 0u;
  const uint32_t part = chunks ? CM_DSP_A16(4u * (uint32_t)N) : 0u;
  if (s) {
    s->x = (uint32_t *)(void *)p;
    s->tab = (cm_dsp_ch *)(void *)(p + x);
    s->wlast = (uint32_t *)(void *)(p + x + tab);
    s->col[0] = p + x + tab + wl;
    s->col[1] = s->col[0] + col;
    s->part = chunks ? (int32_t *)(void *)(p + x + tab + wl + 2u * col) : NULL;
    s->kch = chunks ? CM_DSP_KCH : K;
  }
  return x + tab + wl + 2u * col + part;
}
static inline uint32_t cm_dsp_mm_bytes(int32_t K, int32_t N, bool two, bool col8) {
  return cm_dsp_mm_parts(K, N, two, col8, NULL, NULL);
}

/* a GEMM's weight side: y[n] = rq_n(init_n + sum_k (x[k] + io) w[n][k]) */
typedef struct {
  const int8_t *w;          /* N rows of K */
  const int32_t *init;      /* per channel accumulator start (bias or kernel sum), or NULL */
  const int32_t *mult, *shift;
  int32_t N, K, io, out_off, amin, amax;
  bool per_channel;
} cm_dsp_mm;

/* Whether the fast forms hold for every channel: |acc| < 2^29 (|init| < 2^28, K x 128 x 383 < 2^28),
 * shift in [-21, 0] (the folded rounding constant stays below 2^30), int8 clamp bounds, K within the
 * widened buffer (kmax: 2 x CM_DSP_KMAX for one column). */
static bool cm_dsp_mm_shape_ok(const cm_dsp_mm *g, int32_t kmax) {   /* the checks on shapes and ints */
  return g->K > 0 && g->K <= kmax && g->N > 0 && g->io >= -255 && g->io <= 255 && g->amin >= -128 &&
         g->amax <= 127 && g->amin <= g->amax && g->out_off >= -255 && g->out_off <= 255;
}
static bool cm_dsp_mm_ok(const cm_dsp_mm *g, int32_t kmax) {
  if (!cm_dsp_mm_shape_ok(g, kmax)) return false;
  const int32_t nq = g->per_channel ? g->N : 1;
  for (int32_t n = 0; n < nq; n++)
    if (g->shift[n] > 0 || g->shift[n] < -21) return false;
  if (g->init)
    for (int32_t n = 0; n < g->N; n++)
      if (g->init[n] >= (1 << 28) || g->init[n] <= -(1 << 28)) return false;
  return true;
}

/* the table of channels [n0, n0 + nn) */
static void cm_dsp_tab(const cm_dsp_mm *g, int32_t n0, int32_t nn, cm_dsp_ch *t) {
  const int32_t d = g->out_off;
  for (int32_t i = 0; i < nn; i++) {
    const int32_t n = n0 + i, q = g->per_channel ? n : 0, rs = -g->shift[q];
    t[i].init = g->init ? 2 * g->init[n] : 0;
    t[i].mult = g->mult[q];
    t[i].rs1 = rs + 1;
    t[i].add = (int32_t)((1u << rs) + ((uint32_t)d << (rs + 1)));
  }
}

/* requantised output of one doubled accumulator a2 = 2 acc (|acc| < 2^29): SMMULR(a2, m) is
 * (acc m + 2^30) >> 31; the rounding shift (half away from zero) is (2r + 2^rs + (r < 0 ? -1 : 0)) >> (rs + 1),
 * with the output offset in the constant; SSAT clamps to int8, and to [amin, amax] unless full
 * (amin = -128, amax = 127). */
__attribute__((always_inline)) static inline int32_t cm_dsp_rqv(int32_t a2, int32_t mult, int32_t add, int32_t rs1,
                                                                int32_t amin, int32_t amax, bool full) {
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a2), "r"(mult));
  int32_t t = __ssat(((int32_t)((uint32_t)r << 1) + add + (r >> 31)) >> rs1, 8);
  if (!full) t = t < amin ? amin : t > amax ? amax : t;
  return t;
}

/* 2 (v + io) of a pair of widened int16 (io2: io in both halves) */
static inline uint32_t cm_dsp_w2(int16x2_t v, uint32_t io2) {
  const int16x2_t s = __sadd16(v, (int16x2_t)io2);
  return (uint32_t)__sadd16(s, s);
}

/* 2 (v + io) as the low half of a word */
static inline uint32_t cm_dsp_h2(int8_t v, int32_t io) { return (uint16_t)(2 * (v + io)); }

/* (x0 e, x1 e, x0 o, x1 o) words of two columns of K int8, offset io2 (io in both halves) added;
 * the last group zero-padded */
static void cm_dsp_widen2(const int8_t *x0, const int8_t *x1, int32_t K, uint32_t io2, uint32_t *buf) {
  for (int32_t i = K >> 2; i > 0; i--, x0 += 4, x1 += 4, buf += 4) {
    const uint32_t a = cm_ld32(x0), b = cm_ld32(x1);
    buf[0] = cm_dsp_w2(__sxtb16(a), io2);
    buf[1] = cm_dsp_w2(__sxtb16(b), io2);
    buf[2] = cm_dsp_w2(cm_sxtb16_r8(a), io2);
    buf[3] = cm_dsp_w2(cm_sxtb16_r8(b), io2);
  }
  if (K & 3) {   /* 1 to 3 values left: (k0|k2, k1|0) */
    const int32_t io = (int16_t)io2, r = K & 3;
    uint32_t e0 = cm_dsp_h2(x0[0], io), e1 = cm_dsp_h2(x1[0], io), o0 = 0, o1 = 0;
    if (r > 1) { o0 = cm_dsp_h2(x0[1], io); o1 = cm_dsp_h2(x1[1], io); }
    if (r > 2) { e0 |= cm_dsp_h2(x0[2], io) << 16; e1 |= cm_dsp_h2(x1[2], io) << 16; }
    buf[0] = e0; buf[1] = e1; buf[2] = o0; buf[3] = o1;
  }
}

/* (e, o) words of one column */
static void cm_dsp_widen1(const int8_t *x, int32_t K, uint32_t io2, uint32_t *buf) {
  for (int32_t i = K >> 2; i > 0; i--, x += 4, buf += 2) {
    const uint32_t a = cm_ld32(x);
    buf[0] = cm_dsp_w2(__sxtb16(a), io2);
    buf[1] = cm_dsp_w2(cm_sxtb16_r8(a), io2);
  }
  if (K & 3) {
    const int32_t io = (int16_t)io2, r = K & 3;
    buf[0] = cm_dsp_h2(x[0], io) | (r > 2 ? cm_dsp_h2(x[2], io) << 16 : 0u);
    buf[1] = r > 1 ? cm_dsp_h2(x[1], io) : 0u;
  }
}

/* the last weight row, padded with zeros to whole words when K % 4 (else the row itself) */
static const int8_t *cm_dsp_last_row(const cm_dsp_mm *g, cm_dsp_scratch *s) {
  const int8_t *w = g->w + (ptrdiff_t)(g->N - 1) * g->K;
  if (!(g->K & 3)) return w;
  const int32_t k4 = (g->K + 3) >> 2;
  s->wlast[k4 - 1] = 0;
  memcpy(s->wlast, w, (size_t)g->K);
  return (const int8_t *)s->wlast;
}

#ifdef __OPTIMIZE__  /* 14 registers: r7 is the frame pointer at -O0 */
/* 4 k of the 2x2 pass */
#define CM_DSP_C2STEP \
  "ldrd %[xa], %[xc], [%[xb]], #8\n\t" "ldr %[wa], [%[w0]], #4\n\t" "ldr %[wb], [%[w1]], #4\n\t" \
  "sxtb16 %[t1], %[wa]\n\t" "sxtb16 %[t2], %[wb]\n\t" \
  "smlad %[a00], %[xa], %[t1], %[a00]\n\t" "smlad %[a10], %[xc], %[t1], %[a10]\n\t" \
  "smlad %[a01], %[xa], %[t2], %[a01]\n\t" "smlad %[a11], %[xc], %[t2], %[a11]\n\t" \
  "ldrd %[xa], %[xc], [%[xb]], #8\n\t" \
  "sxtb16 %[t1], %[wa], ror #8\n\t" "sxtb16 %[t2], %[wb], ror #8\n\t" \
  "smlad %[a00], %[xa], %[t1], %[a00]\n\t" "smlad %[a10], %[xc], %[t1], %[a10]\n\t" \
  "smlad %[a01], %[xa], %[t2], %[a01]\n\t" "smlad %[a11], %[xc], %[t2], %[a11]\n\t"
/* 4 k of the one-column pass, row r */
#define CM_DSP_G1ROW(w, a) \
  "ldr %[wa], [%[" w "]], #4\n\t" "sxtb16 %[t1], %[wa]\n\t" "smlad %[" a "], %[xe], %[t1], %[" a "]\n\t" \
  "sxtb16 %[t1], %[wa], ror #8\n\t" "smlad %[" a "], %[xo], %[t1], %[" a "]\n\t"
#define CM_DSP_G1STEP \
  "ldrd %[xe], %[xo], [%[xb]], #8\n\t" CM_DSP_G1ROW("w0", "a0") CM_DSP_G1ROW("w1", "a1") \
  CM_DSP_G1ROW("w2", "a2") CM_DSP_G1ROW("w3", "a3")
#endif

/* acc += the 2x2 products over k4 groups (xb: two widened columns) */
__attribute__((always_inline)) static inline void cm_dsp_k2x2(const uint32_t *xb, const int8_t *w0, const int8_t *w1,
                                                              int32_t k4, int32_t *acc) {
  int32_t a00 = acc[0], a10 = acc[1], a01 = acc[2], a11 = acc[3];
#ifdef __OPTIMIZE__
  uint32_t xa, xc, wa, wb, t1, t2;
  __asm__ volatile(
      "tst %[k], #1\n\t" "beq 2f\n\t" CM_DSP_C2STEP
      "2:\n\t" "asrs %[k], %[k], #1\n\t" "beq 3f\n\t"
      "1:\n\t" CM_DSP_C2STEP CM_DSP_C2STEP "subs %[k], %[k], #1\n\t" "bne 1b\n\t"
      "3:\n\t"
      : [a00] "+r"(a00), [a10] "+r"(a10), [a01] "+r"(a01), [a11] "+r"(a11), [xb] "+r"(xb), [w0] "+r"(w0),
        [w1] "+r"(w1), [k] "+r"(k4), [xa] "=&r"(xa), [xc] "=&r"(xc), [wa] "=&r"(wa), [wb] "=&r"(wb),
        [t1] "=&r"(t1), [t2] "=&r"(t2)
      :
      : "cc", "memory");
#else
  for (; k4 > 0; k4--, xb += 4, w0 += 4, w1 += 4) {
    const uint32_t wa = cm_ld32(w0), wb = cm_ld32(w1);
    const int16x2_t e0 = __sxtb16(wa), e1 = __sxtb16(wb), o0 = cm_sxtb16_r8(wa), o1 = cm_sxtb16_r8(wb);
    a00 = __smlad((int16x2_t)xb[0], e0, a00); a10 = __smlad((int16x2_t)xb[1], e0, a10);
    a01 = __smlad((int16x2_t)xb[0], e1, a01); a11 = __smlad((int16x2_t)xb[1], e1, a11);
    a00 = __smlad((int16x2_t)xb[2], o0, a00); a10 = __smlad((int16x2_t)xb[3], o0, a10);
    a01 = __smlad((int16x2_t)xb[2], o1, a01); a11 = __smlad((int16x2_t)xb[3], o1, a11);
  }
#endif
  acc[0] = a00; acc[1] = a10; acc[2] = a01; acc[3] = a11;
}

/* acc[i] += x . w_i over k4 groups (xb: one widened column) */
__attribute__((always_inline)) static inline void cm_dsp_k4x1(const uint32_t *xb, const int8_t *w0, const int8_t *w1,
                                                              const int8_t *w2, const int8_t *w3, int32_t k4,
                                                              int32_t *acc) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
#ifdef __OPTIMIZE__
  /* 13 registers (GCC finds no 14th here): the loop ends at the end of the widened column, read from memory */
  const uint32_t *xend = xb + 2 * k4;
  uint32_t xe, xo, wa, t1;
  if (k4 & 1)
    __asm__ volatile(CM_DSP_G1STEP
                     : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [xb] "+r"(xb), [w0] "+r"(w0),
                       [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3), [xe] "=&r"(xe), [xo] "=&r"(xo), [wa] "=&r"(wa),
                       [t1] "=&r"(t1)
                     :
                     : "memory");
  if (k4 >> 1)
    __asm__ volatile("1:\n\t" CM_DSP_G1STEP CM_DSP_G1STEP "ldr %[t1], %[xend]\n\t" "cmp %[xb], %[t1]\n\t" "bne 1b\n\t"
                     : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [xb] "+r"(xb), [w0] "+r"(w0),
                       [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3), [xe] "=&r"(xe), [xo] "=&r"(xo), [wa] "=&r"(wa),
                       [t1] "=&r"(t1)
                     : [xend] "m"(xend)
                     : "cc", "memory");
#else
  for (; k4 > 0; k4--, xb += 2, w0 += 4, w1 += 4, w2 += 4, w3 += 4) {
    const int16x2_t xe = (int16x2_t)xb[0], xo = (int16x2_t)xb[1];
    const uint32_t v0 = cm_ld32(w0), v1 = cm_ld32(w1), v2 = cm_ld32(w2), v3 = cm_ld32(w3);
    a0 = __smlad(xe, __sxtb16(v0), a0); a0 = __smlad(xo, cm_sxtb16_r8(v0), a0);
    a1 = __smlad(xe, __sxtb16(v1), a1); a1 = __smlad(xo, cm_sxtb16_r8(v1), a1);
    a2 = __smlad(xe, __sxtb16(v2), a2); a2 = __smlad(xo, cm_sxtb16_r8(v2), a2);
    a3 = __smlad(xe, __sxtb16(v3), a3); a3 = __smlad(xo, cm_sxtb16_r8(v3), a3);
  }
#endif
  acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;
}

/* one 2x2 pass: channels t0 / t1 (weight rows w0 / w1) of the two columns, outputs at ya / yb + o0 / o1 */
__attribute__((always_inline)) static inline void cm_dsp_pass2(const uint32_t *xb, int32_t k4, const int8_t *w0,
                                                               const int8_t *w1, const cm_dsp_ch *t0,
                                                               const cm_dsp_ch *t1, int8_t *ya, int8_t *yb,
                                                               ptrdiff_t o0, ptrdiff_t o1, int32_t amin, int32_t amax,
                                                               bool full) {
  int32_t acc[4] = {t0->init, t0->init, t1->init, t1->init};
  cm_dsp_k2x2(xb, w0, w1, k4, acc);
  /* every table value loaded before the byte stores (which could alias it) */
  const int32_t m0 = t0->mult, c0 = t0->add, s0 = t0->rs1, m1 = t1->mult, c1 = t1->add, s1 = t1->rs1;
  const int32_t r0 = cm_dsp_rqv(acc[0], m0, c0, s0, amin, amax, full);
  const int32_t r1 = cm_dsp_rqv(acc[1], m0, c0, s0, amin, amax, full);
  const int32_t r2 = cm_dsp_rqv(acc[2], m1, c1, s1, amin, amax, full);
  const int32_t r3 = cm_dsp_rqv(acc[3], m1, c1, s1, amin, amax, full);
  ya[o0] = (int8_t)r0; yb[o0] = (int8_t)r1; ya[o1] = (int8_t)r2; yb[o1] = (int8_t)r3;
}

/* Channels [n0, n0 + nn) (nn >= 1; the table t holds them) of two widened columns xb; outputs at
 * ya / yb + (n - n0) * ysn. The last pair is (nn - 2, nn - 1) (overlapping the one before when nn is
 * odd; (0, 0) when nn = 1), and takes wl (cm_dsp_last_row) for row N - 1. */
__attribute__((always_inline)) static inline void cm_dsp_cols2_body(const cm_dsp_mm *g, const uint32_t *xb,
                                                                    int32_t n0, int32_t nn, const cm_dsp_ch *t,
                                                                    const int8_t *wl, int8_t *ya, int8_t *yb,
                                                                    ptrdiff_t ysn, bool full) {
  const int32_t K = g->K, k4 = (K + 3) >> 2, amin = g->amin, amax = g->amax;
  const int8_t *w = g->w + (ptrdiff_t)n0 * K;
  const ptrdiff_t K2 = 2 * (ptrdiff_t)K, ys2 = 2 * ysn;
  const int8_t *wi = w;
  int8_t *yai = ya, *ybi = yb;
  const cm_dsp_ch *ti = t;
  for (int32_t i = nn - 2; i > 0; i -= 2, wi += K2, ti += 2, yai += ys2, ybi += ys2)
    cm_dsp_pass2(xb, k4, wi, wi + K, ti, ti + 1, yai, ybi, 0, ysn, amin, amax, full);
  const int32_t i0 = nn > 1 ? nn - 2 : 0, j = nn - 1;
  const int8_t *w0 = n0 + i0 == g->N - 1 ? wl : w + (ptrdiff_t)i0 * K;
  const int8_t *w1 = n0 + j == g->N - 1 ? wl : w + (ptrdiff_t)j * K;
  cm_dsp_pass2(xb, k4, w0, w1, t + i0, t + j, ya, yb, i0 * ysn, j * ysn, amin, amax, full);
}

CM_UNUSED __attribute__((noinline)) static void cm_dsp_cols2(const cm_dsp_mm *g, const uint32_t *xb, int32_t n0,
                                                             int32_t nn, const cm_dsp_ch *t, const int8_t *wl,
                                                             int8_t *ya, int8_t *yb, ptrdiff_t ysn) {
  if (g->amin == -128 && g->amax == 127)
    cm_dsp_cols2_body(g, xb, n0, nn, t, wl, ya, yb, ysn, true);
  else
    cm_dsp_cols2_body(g, xb, n0, nn, t, wl, ya, yb, ysn, false);
}

/* channel n's table entry, worked out in place (the one-column pass uses each channel once) */
__attribute__((always_inline)) static inline cm_dsp_ch cm_dsp_ch_of(const cm_dsp_mm *g, int32_t n) {
  const int32_t q = g->per_channel ? n : 0, rs = -g->shift[q];
  const cm_dsp_ch c = {g->init ? 2 * g->init[n] : 0, g->mult[q],
                       (int32_t)((1u << rs) + ((uint32_t)g->out_off << (rs + 1))), rs + 1};
  return c;
}

/* rows n0..n3's sums requantised into y (the one-column passes) */
__attribute__((always_inline)) static inline void cm_dsp_store4(const cm_dsp_mm *g, const int32_t *acc, int32_t n0,
                                                                int32_t n1, int32_t n2, int32_t n3, int8_t *y,
                                                                ptrdiff_t ysn, bool full) {
  const cm_dsp_ch c0 = cm_dsp_ch_of(g, n0), c1 = cm_dsp_ch_of(g, n1), c2 = cm_dsp_ch_of(g, n2),
                  c3 = cm_dsp_ch_of(g, n3);
  const int32_t amin = g->amin, amax = g->amax;
  const int32_t r0 = cm_dsp_rqv(acc[0], c0.mult, c0.add, c0.rs1, amin, amax, full);
  const int32_t r1 = cm_dsp_rqv(acc[1], c1.mult, c1.add, c1.rs1, amin, amax, full);
  const int32_t r2 = cm_dsp_rqv(acc[2], c2.mult, c2.add, c2.rs1, amin, amax, full);
  const int32_t r3 = cm_dsp_rqv(acc[3], c3.mult, c3.add, c3.rs1, amin, amax, full);
  y[n0 * ysn] = (int8_t)r0; y[n1 * ysn] = (int8_t)r1; y[n2 * ysn] = (int8_t)r2; y[n3 * ysn] = (int8_t)r3;
}

/* one pass of the one-column GEMM: rows n0..n3 (weights w0..w3) */
__attribute__((always_inline)) static inline void cm_dsp_pass4(const cm_dsp_mm *g, const uint32_t *xb, int32_t k4,
                                                               const int8_t *w0, const int8_t *w1, const int8_t *w2,
                                                               const int8_t *w3, int32_t n0, int32_t n1, int32_t n2,
                                                               int32_t n3, int8_t *y, ptrdiff_t ysn, bool full) {
  int32_t acc[4] = {g->init ? 2 * g->init[n0] : 0, g->init ? 2 * g->init[n1] : 0, g->init ? 2 * g->init[n2] : 0,
                    g->init ? 2 * g->init[n3] : 0};
  cm_dsp_k4x1(xb, w0, w1, w2, w3, k4, acc);
  cm_dsp_store4(g, acc, n0, n1, n2, n3, y, ysn, full);
}

/* All N channels of one widened column, 4 a pass; the last pass is rows N - 4 .. N - 1 (overlapping
 * the one before; fewer than 4 rows repeat the last) with wl for row N - 1. */
__attribute__((always_inline)) static inline void cm_dsp_gemv_body(const cm_dsp_mm *g, const uint32_t *xb,
                                                                   const int8_t *wl, int8_t *y, ptrdiff_t ysn,
                                                                   bool full) {
  const int32_t K = g->K, k4 = (K + 3) >> 2, N = g->N;
  int32_t i = 0;
  for (const int8_t *w0 = g->w; i + 4 < N; i += 4, w0 += 4 * (ptrdiff_t)K)
    cm_dsp_pass4(g, xb, k4, w0, w0 + K, w0 + 2 * K, w0 + 3 * K, i, i + 1, i + 2, i + 3, y, ysn, full);
  i = N >= 4 ? N - 4 : 0;
  const int32_t n0 = i, n1 = i + 1 < N ? i + 1 : N - 1, n2 = i + 2 < N ? i + 2 : N - 1, n3 = N - 1;
  const int8_t *w = g->w;
  cm_dsp_pass4(g, xb, k4, n0 == n3 ? wl : w + (ptrdiff_t)n0 * K, n1 == n3 ? wl : w + (ptrdiff_t)n1 * K,
               n2 == n3 ? wl : w + (ptrdiff_t)n2 * K, wl, n0, n1, n2, n3, y, ysn, full);
}

CM_UNUSED __attribute__((noinline)) static void cm_dsp_gemv(const cm_dsp_mm *g, const uint32_t *xb, const int8_t *wl,
                                                            int8_t *y, ptrdiff_t ysn) {
  if (g->amin == -128 && g->amax == 127)
    cm_dsp_gemv_body(g, xb, wl, y, ysn, true);
  else
    cm_dsp_gemv_body(g, xb, wl, y, ysn, false);
}

/* the block of channels from n0: CM_DSP_NB, or fewer so that no block of one channel is left over */
static inline int32_t cm_dsp_block(int32_t N, int32_t n0) {
  const int32_t left = N - n0;
  return left <= CM_DSP_NB ? left : left == CM_DSP_NB + 1 ? CM_DSP_NB - 1 : CM_DSP_NB;
}

/* one pass of the chunked one-column GEMM: rows n0..n3 (weights w0..w3 at the chunk), k4 groups of the
 * widened chunk xb; the sums start from the rows' init (first chunk) or their partial sums, and go back to
 * the partial sums, or (last chunk) are requantised into y */
__attribute__((always_inline)) static inline void cm_dsp_pass4c(const cm_dsp_mm *g, const uint32_t *xb, int32_t k4,
                                                                const int8_t *w0, const int8_t *w1, const int8_t *w2,
                                                                const int8_t *w3, int32_t n0, int32_t n1, int32_t n2,
                                                                int32_t n3, int32_t *part, bool first, bool last,
                                                                int8_t *y, ptrdiff_t ysn, bool full) {
  int32_t acc[4];
  if (first) {
    acc[0] = g->init ? 2 * g->init[n0] : 0; acc[1] = g->init ? 2 * g->init[n1] : 0;
    acc[2] = g->init ? 2 * g->init[n2] : 0; acc[3] = g->init ? 2 * g->init[n3] : 0;
  } else {
    acc[0] = part[n0]; acc[1] = part[n1]; acc[2] = part[n2]; acc[3] = part[n3];
  }
  cm_dsp_k4x1(xb, w0, w1, w2, w3, k4, acc);
  if (!last) {
    part[n0] = acc[0]; part[n1] = acc[1]; part[n2] = acc[2]; part[n3] = acc[3];
    return;
  }
  cm_dsp_store4(g, acc, n0, n1, n2, n3, y, ysn, full);
}

/* All N rows over one chunk [k0, k0 + kc) of the widened xb, 4 a pass; the last pass takes the 1 to 4 rows
 * left, repeating row N - 1 (no overlap with the pass before: each row's partial sum is read and written
 * once a chunk), with wl for row N - 1. */
__attribute__((always_inline)) static inline void cm_dsp_gemv_chunk_body(const cm_dsp_mm *g, const uint32_t *xb,
                                                                         const int8_t *wl, int32_t k0, int32_t kc,
                                                                         int32_t *part, bool first, bool last,
                                                                         int8_t *y, ptrdiff_t ysn, bool full) {
  const int32_t K = g->K, k4 = (kc + 3) >> 2, N = g->N;
  const int8_t *w0 = g->w + k0;
  int32_t i = 0;
  for (; i + 4 < N; i += 4, w0 += 4 * (ptrdiff_t)K)
    cm_dsp_pass4c(g, xb, k4, w0, w0 + K, w0 + 2 * K, w0 + 3 * K, i, i + 1, i + 2, i + 3, part, first, last, y, ysn,
                  full);
  const int32_t n0 = i, n1 = i + 1 < N ? i + 1 : N - 1, n2 = i + 2 < N ? i + 2 : N - 1, n3 = N - 1;
  const int8_t *w = g->w + k0;
  wl += k0;
  cm_dsp_pass4c(g, xb, k4, n0 == n3 ? wl : w + (ptrdiff_t)n0 * K, n1 == n3 ? wl : w + (ptrdiff_t)n1 * K,
                n2 == n3 ? wl : w + (ptrdiff_t)n2 * K, wl, n0, n1, n2, n3, part, first, last, y, ysn, full);
}

CM_UNUSED __attribute__((noinline)) static void cm_dsp_gemv_chunk(const cm_dsp_mm *g, const uint32_t *xb,
                                                                  const int8_t *wl, int32_t k0, int32_t kc,
                                                                  int32_t *part, bool first, bool last, int8_t *y,
                                                                  ptrdiff_t ysn) {
  if (g->amin == -128 && g->amax == 127)
    cm_dsp_gemv_chunk_body(g, xb, wl, k0, kc, part, first, last, y, ysn, true);
  else
    cm_dsp_gemv_chunk_body(g, xb, wl, k0, kc, part, first, last, y, ysn, false);
}

/* The one-column GEMM over chunks of k (s->part: the N rows' sums between chunks) */
CM_UNUSED static void cm_dsp_gemv_chunks(const cm_dsp_mm *g, cm_dsp_scratch *s, const int8_t *x, uint32_t io2,
                                         const int8_t *wl, int8_t *y, ptrdiff_t ysn) {
  const int32_t K = g->K, kch = s->kch;
  for (int32_t k0 = 0; k0 < K; k0 += kch) {
    const int32_t kc = K - k0 < kch ? K - k0 : kch;
    cm_dsp_widen1(x + k0, kc, io2, s->x);
    cm_dsp_gemv_chunk(g, s->x, wl, k0, kc, s->part, k0 == 0, k0 + kc == K, y, ysn);
  }
}

/* M rows one at a time on the one-column GEMM (linears: a batch is mostly one row; this keeps the
 * two-column code out of linear.c), row m at x + m * xs, outputs at y + m * ysm + n * ysn.
 * Needs cm_dsp_mm_ok(g, 2 * CM_DSP_KMAX). */
CM_UNUSED static void cm_dsp_mm_rows(const cm_dsp_mm *g, cm_dsp_scratch *s, const int8_t *x, ptrdiff_t xs,
                                     int32_t M, int8_t *y, ptrdiff_t ysm, ptrdiff_t ysn) {
  const uint32_t io2 = ((uint32_t)g->io & 0xFFFFu) * 0x10001u;
  const int8_t *wl = cm_dsp_last_row(g, s);
  for (int32_t m = 0; m < M; m++) {
    if (s->part) {
      cm_dsp_gemv_chunks(g, s, x + (ptrdiff_t)m * xs, io2, wl, y + (ptrdiff_t)m * ysm, ysn);
      continue;
    }
    cm_dsp_widen1(x + (ptrdiff_t)m * xs, g->K, io2, s->x);
    cm_dsp_gemv(g, s->x, wl, y + (ptrdiff_t)m * ysm, ysn);
  }
}

/* The GEMM over M columns (column m at x + m * xs, K int8), outputs at y + m * ysm + n * ysn.
 * Needs cm_dsp_mm_ok(g, M == 1 ? 2 * CM_DSP_KMAX : CM_DSP_KMAX). */
CM_UNUSED static void cm_dsp_mm_run(const cm_dsp_mm *g, cm_dsp_scratch *s, const int8_t *x, ptrdiff_t xs, int32_t M,
                                    int8_t *y, ptrdiff_t ysm, ptrdiff_t ysn) {
  const uint32_t io2 = ((uint32_t)g->io & 0xFFFFu) * 0x10001u;
  const int8_t *wl = cm_dsp_last_row(g, s);
  if (M == 1) {
    cm_dsp_widen1(x, g->K, io2, s->x);
    cm_dsp_gemv(g, s->x, wl, y, ysn);
    return;
  }
  for (int32_t n0 = 0; n0 < g->N;) {
    const int32_t nn = cm_dsp_block(g->N, n0);
    cm_dsp_tab(g, n0, nn, s->tab);
    for (int32_t m = 0; m < M; m += 2) {
      if (m + 2 > M) m = M - 2;   /* an odd last column: the pair before it again */
      const int8_t *x0 = x + (ptrdiff_t)m * xs;
      cm_dsp_widen2(x0, x0 + xs, g->K, io2, s->x);
      int8_t *ya = y + (ptrdiff_t)m * ysm + n0 * ysn;
      cm_dsp_cols2(g, s->x, n0, nn, s->tab, wl, ya, ya + ysm, ysn);
    }
    n0 += nn;
  }
}
#endif
