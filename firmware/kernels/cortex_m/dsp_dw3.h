/* Private to firmware/kernels/cortex_m/ (dsp_dw.h): the int8 3x3 depthwise (multiplier 1, dilation 1,
 * strides 1 or 2, channels contiguous) on the DSP extension.
 *
 * 4 channels at a time, the input is widened once into int16 planes, one per channel, a band of rows
 * at a time (CM_DSP_DW3_BUF): raw values, the padding filled with the input zero point (-offset), so
 * the offset folds into the bias (offset x sum of the 9 weights) and every output is an interior one.
 * Along a plane row a word holds the tap pair (x[j], x[j+1]); per kernel row and 2 outputs (stride 1)
 * the words L0 = (x0, x1) and L2 = (x2, x3) against the weight pairs A = (w0, w1), B = (w1, w2):
 *   out0 += SMLAD(L0, A) + SMLABT(L2, B)        out1 += SMLATB(L0, A) + SMLAD(L2, B)
 * (stride 2: out0 += SMLAD(L0, A) + SMLABT(L2, B), out1 the same one word on). 4 outputs a pass: 3 word
 * loads and 8 MACs per kernel row. The weights are doubled, so the sum is 2 x acc, what SMMULR takes.
 * The output rows are the longer side: a tall image (DS-CNN's 25 x 5) runs transposed. */
#ifndef ET_CORTEX_M_DSP_DW3_H
#define ET_CORTEX_M_DSP_DW3_H
#include "cm_conv.h"

/* (lo of a, lo of b) and (hi of a, hi of b) as int16 pairs: PKHBT / PKHTB (GCC 12 does not find them) */
static inline uint32_t cm_pk_lo(uint32_t a, uint32_t b) {
  uint32_t r;
  __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
static inline uint32_t cm_pk_hi(uint32_t a, uint32_t b) {
  uint32_t r;
  __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(b), "r"(a));
  return r;
}

/* an int16 pair from any halfword address */
static inline uint32_t cm_ld32h(const int16_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static inline void cm_st32h(int16_t *p, uint32_t v) { memcpy(p, &v, 4); }

#define CM_DSP_DW3_BUF 2048   /* int16 of widened planes at most: 4 channels x rows x the padded width (4 KB) */
#define CM_DSP_DW3_ACC 384    /* int32 sums of a band's output rows at most: rows x 4 x ceil(OW / 4) */
/* The call's planned scratch (ET_SCRATCH; kernel_scratch.py mirrors cm_dw3_scratch_bytes): the 4 channels'
 * planes (RB rows of WP int16 each), then the band's sums */

typedef struct {   /* cm_dw3_macs reads it by byte offsets: ab at 0, bias2 at 28 */
  uint32_t ab[3][2];     /* per kernel row: (2 w0, 2 w1), (2 w1, 2 w2) as int16 pairs (cm_dw3_macs reads
                          * them as 3 doublewords) */
  int32_t bias, bias2;   /* bias + offset x sum of the weights, and twice that (wrapping) */
  int32_t mult, k, rs1;  /* requantisation: k = 2^rs + (out_off << (rs + 1)), rs1 = rs + 1 (fast form) */
  int32_t shift;         /* for the exact form */
} cm_dw3_ch;
_Static_assert(offsetof(cm_dw3_ch, bias2) == 28, "cm_dw3_macs reads bias2 at byte 28");

/* The geometry of a call, rows being the longer output side (t: transposed) */
typedef struct {
  int32_t H, W, OH, OW, sh, sw, ph, pw, WP, RB;
  ptrdiff_t xsh, xsw, ysh, ysw;
  bool t;
} cm_dw3_geo;

/* Requantisation modes: 0 fast (int8 activation range, one SSAT), 1 fast with the activation clamp,
 * 2 cm_dsp_rq1 (a shift or bias outside the fast form's bounds) */
__attribute__((always_inline)) static inline int8_t cm_dw3_rq(int32_t a2, const cm_dw3_ch *k, int32_t mode,
                                                              int32_t out_off, int32_t amin, int32_t amax) {
  if (mode == 2) {   /* the taps' sum, |sum| < 2^19, is exact in a2 - bias2: the bias adds back unwrapped */
    const uint32_t acc = (uint32_t)k->bias + (uint32_t)((int32_t)((uint32_t)a2 - (uint32_t)k->bias2) >> 1);
    return cm_dsp_rq1(acc, k->mult, k->shift, out_off, amin, amax);
  }
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a2), "r"(k->mult));
  int32_t v = __ssat((k->k + (int32_t)((uint32_t)r << 1) + (r >> 31)) >> k->rs1, 8);
  if (mode == 1) v = v < amin ? amin : v > amax ? amax : v;
  return (int8_t)v;
}

#ifdef __OPTIMIZE__   /* 13 registers: r7 is the frame pointer at -O0 */
/* One kernel row's MACs for 4 outputs, stride 1: LD loads the block's first two words and leaves p 8
 * bytes past the first (row 0 steps p there, post-indexed); FIRST starts the sums from the bias (2 x,
 * at byte 28 of cm_dw3_ch), the other rows accumulate. */
#define CM_DW3_S1_ROW(FIRST, KOFF, LD)                                                                     \
  FIRST("ldr %[A], [%[k]]\n\t" "ldr %[B], [%[k], #28]\n\t", "ldrd %[A], %[B], [%[k], #" KOFF "]\n\t")     \
  "ldrd %[l0], %[l2], " LD "\n\t"                                                                           \
  FIRST("smlad %[a0], %[l0], %[A], %[B]\n\t" "smlatb %[a1], %[l0], %[A], %[B]\n\t"                         \
        "smlad %[a2], %[l2], %[A], %[B]\n\t" "smlatb %[a3], %[l2], %[A], %[B]\n\t"                         \
        "ldr %[B], [%[k], #4]\n\t",                                                                        \
        "smlad %[a0], %[l0], %[A], %[a0]\n\t" "smlatb %[a1], %[l0], %[A], %[a1]\n\t"                       \
        "smlad %[a2], %[l2], %[A], %[a2]\n\t" "smlatb %[a3], %[l2], %[A], %[a3]\n\t")                      \
  "ldr %[l0], [%[p]]\n\t"                                                                                   \
  "smlabt %[a0], %[l2], %[B], %[a0]\n\t" "smlad %[a1], %[l2], %[B], %[a1]\n\t"                            \
  "smlabt %[a2], %[l0], %[B], %[a2]\n\t" "smlad %[a3], %[l0], %[B], %[a3]\n\t"
/* stride 2: the block's words l0..l8 at p - 16 .. p (row 0 steps p by 16); row 0 puts the bias in a2, a3 */
#define CM_DW3_S2_ROW(FIRST, KOFF, LD)                                                                     \
  FIRST("ldr %[l2], [%[k], #28]\n\t" "mov %[a2], %[l2]\n\t" "mov %[a3], %[l2]\n\t", "")                     \
  "ldrd %[A], %[B], [%[k], #" KOFF "]\n\t"                                                                  \
  "ldrd %[l0], %[l2], " LD "\n\t"                                                                           \
  FIRST("smlad %[a0], %[l0], %[A], %[a2]\n\t" "smlad %[a1], %[l2], %[A], %[a3]\n\t",                       \
        "smlad %[a0], %[l0], %[A], %[a0]\n\t" "smlad %[a1], %[l2], %[A], %[a1]\n\t")                       \
  "smlabt %[a0], %[l2], %[B], %[a0]\n\t"                                                                    \
  "ldrd %[l0], %[l2], [%[p], #-8]\n\t"                                                                      \
  "smlabt %[a1], %[l0], %[B], %[a1]\n\t"                                                                    \
  "smlad %[a2], %[l0], %[A], %[a2]\n\t" "smlad %[a3], %[l2], %[A], %[a3]\n\t"                              \
  "smlabt %[a2], %[l2], %[B], %[a2]\n\t"                                                                    \
  "ldr %[l0], [%[p]]\n\t"                                                                                   \
  "smlabt %[a3], %[l0], %[B], %[a3]\n\t"
/* the pass over a row's blocks: ROW (CM_DW3_S1_ROW or _S2_ROW) for the three kernel rows, STEP the bytes
 * row 0 moves p by (8 for stride 1, 16 for stride 2); the four sums stored, acc[4 b .. 4 b + 3] */
#define CM_DW3_LOOP(ROW, STEP)                                                                               \
  __asm__ volatile("1:\n\t"                                                                                  \
                   ROW(CM_DW3_FIRST, "0", "[%[p]], #" STEP) "add %[p], %[p], %[ws]\n\t"                       \
                   ROW(CM_DW3_NEXT, "8", "[%[p], #-" STEP "]") "add %[p], %[p], %[ws]\n\t"                    \
                   ROW(CM_DW3_NEXT, "16", "[%[p], #-" STEP "]") "sub %[p], %[p], %[ws], lsl #1\n\t"           \
                   "strd %[a2], %[a3], [%[o], #8]\n\t"                                                        \
                   "strd %[a0], %[a1], [%[o]], #16\n\t"                                                       \
                   "cmp %[o], %[e]\n\t"                                                                       \
                   "bne 1b\n\t"                                                                               \
                   : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [A] "=&r"(A), [B] "=&r"(B), \
                     [l0] "=&r"(l0), [l2] "=&r"(l2), [p] "+r"(p), [o] "+r"(o)                                 \
                   : [k] "r"(k), [ws] "r"(ws), [e] "r"(e)                                                     \
                   : "memory")
#define CM_DW3_FIRST(x, y) x
#define CM_DW3_NEXT(x, y) y
#endif

/* the MACs of one output row, 4 outputs a block (nblk >= 1), into acc: 2 x (bias + the taps' sum), i.e.
 * bias2 + the doubled weights' sum; r: the row's first plane row (word-aligned), ws: the row pitch in bytes */
__attribute__((always_inline)) static inline void cm_dw3_macs(const int16_t *r, int32_t ws, const cm_dw3_ch *kc,
                                                              int32_t nblk, int32_t sw, int32_t *acc) {
#ifdef __OPTIMIZE__
  const uint32_t *k = &kc->ab[0][0];
  const char *p = (const char *)r;
  int32_t *o = acc, *e = acc + 4 * nblk;
  int32_t a0, a1, a2, a3;
  uint32_t A, B, l0, l2;
  if (sw == 1)
    CM_DW3_LOOP(CM_DW3_S1_ROW, "8");
  else
    CM_DW3_LOOP(CM_DW3_S2_ROW, "16");
#else
  const int32_t WP = ws / 2;
  for (int32_t b = 0; b < nblk; b++, r += 4 * sw) {
    int32_t a0 = kc->bias2, a1 = kc->bias2, a2 = kc->bias2, a3 = kc->bias2;
    for (int32_t kr = 0; kr < 3; kr++) {
      const int16_t *p = r + kr * WP;
      const int16x2_t A = (int16x2_t)kc->ab[kr][0], B = (int16x2_t)kc->ab[kr][1];
      const int16x2_t l0 = (int16x2_t)cm_ld32h(p), l2 = (int16x2_t)cm_ld32h(p + 2);
      const int16x2_t l4 = (int16x2_t)cm_ld32h(p + 4);
      if (sw == 1) {
        a0 = __smlad(l0, A, a0); a0 = __smlabt(l2, B, a0);
        a1 = __smlatb(l0, A, a1); a1 = __smlad(l2, B, a1);
        a2 = __smlad(l2, A, a2); a2 = __smlabt(l4, B, a2);
        a3 = __smlatb(l2, A, a3); a3 = __smlad(l4, B, a3);
      } else {
        const int16x2_t l6 = (int16x2_t)cm_ld32h(p + 6), l8 = (int16x2_t)cm_ld32h(p + 8);
        a0 = __smlad(l0, A, a0); a0 = __smlabt(l2, B, a0);
        a1 = __smlad(l2, A, a1); a1 = __smlabt(l4, B, a1);
        a2 = __smlad(l4, A, a2); a2 = __smlabt(l6, B, a2);
        a3 = __smlad(l6, A, a3); a3 = __smlabt(l8, B, a3);
      }
    }
    acc[4 * b] = a0; acc[4 * b + 1] = a1; acc[4 * b + 2] = a2; acc[4 * b + 3] = a3;
  }
#endif
}

/* one channel: nr output rows from its plane r (row pitch WP), nr x 4 x ceil(OW / 4) <= CM_DSP_DW3_ACC:
 * the MACs of every row into acc first, then their requantisation (fewer values live in each loop) */
__attribute__((always_inline)) static inline void cm_dw3_rows(const int16_t *r, const cm_dw3_geo *g, int32_t nr,
                                                              const cm_dw3_ch *kc, int8_t *y, int32_t sw,
                                                              int32_t mode, int32_t out_off, int32_t amin,
                                                              int32_t amax, int32_t *acc) {
  const int32_t OW = g->OW, nblk = (OW + 3) / 4, n4 = 4 * nblk, ws = 2 * g->WP;
  const ptrdiff_t rstep = (ptrdiff_t)g->sh * g->WP, ysh = g->ysh, ysw = g->ysw;
  int32_t *o = acc;
  for (int32_t i = 0; i < nr; i++, r += rstep, o += n4) cm_dw3_macs(r, ws, kc, nblk, sw, o);
  const cm_dw3_ch k = *kc;   /* a copy: int8 stores could alias *kc */
  const int32_t *ar = acc;
  for (int32_t i = 0; i < nr; i++, y += ysh, ar += n4) {
    int8_t *yp = y;
    const int32_t *ap = ar, *ae = ar + (OW & ~1);
#ifdef __OPTIMIZE__
    if (mode == 0 && OW >= 4) {   /* 4 outputs a step: 30 instructions */
      int32_t n = OW >> 2, a, b, u, v;
#define CM_DW3_RQ2                                                                                           \
  "ldrd %[a], %[b], [%[ap]], #8\n\t"                                                                          \
  "smmulr %[a], %[a], %[m]\n\t" "smmulr %[b], %[b], %[m]\n\t"                                               \
  "add %[u], %[k], %[a], lsl #1\n\t" "add %[u], %[u], %[a], asr #31\n\t"                                    \
  "add %[v], %[k], %[b], lsl #1\n\t" "add %[v], %[v], %[b], asr #31\n\t"                                    \
  "asr %[u], %[u], %[rs]\n\t" "asr %[v], %[v], %[rs]\n\t"                                                   \
  "ssat %[u], #8, %[u]\n\t" "ssat %[v], #8, %[v]\n\t"                                                       \
  "strb %[u], [%[y]]\n\t" "strb %[v], [%[y], %[ys]]\n\t"                                                    \
  "add %[y], %[y], %[ys], lsl #1\n\t"
      __asm__ volatile("1:\n\t" CM_DW3_RQ2 CM_DW3_RQ2 "subs %[n], %[n], #1\n\t" "bne 1b\n\t"
                       : [ap] "+r"(ap), [y] "+r"(yp), [n] "+r"(n), [a] "=&r"(a), [b] "=&r"(b), [u] "=&r"(u),
                         [v] "=&r"(v)
                       : [m] "r"(k.mult), [k] "r"(k.k), [rs] "r"(k.rs1), [ys] "r"(ysw)
                       : "cc", "memory");
#undef CM_DW3_RQ2
    }
#endif
    for (; ap < ae; ap += 2, yp += 2 * ysw) {
      const int32_t v0 = ap[0], v1 = ap[1];
      yp[0] = cm_dw3_rq(v0, &k, mode, out_off, amin, amax);
      yp[ysw] = cm_dw3_rq(v1, &k, mode, out_off, amin, amax);
    }
    if (OW & 1) *yp = cm_dw3_rq(*ap, &k, mode, out_off, amin, amax);
  }
}

/* the nch channels of a group (planes cst apart, outputs ysc apart), one requantisation mode for all */
#define CM_DW3_ROWS(name, SW, MODE)                                                                         \
  __attribute__((noinline)) static void name(const int16_t *r, const cm_dw3_geo *g, int32_t nr,           \
                                             const cm_dw3_ch *k, int32_t nch, ptrdiff_t cst, int8_t *y,    \
                                             ptrdiff_t ysc, const int32_t *act, int32_t *acc) {            \
    for (int32_t j = 0; j < nch; j++)                                                                      \
      cm_dw3_rows(r + j * cst, g, nr, k + j, y + j * ysc, SW, MODE, act[0], act[1], act[2], acc);          \
  }
CM_DW3_ROWS(cm_dw3_rows_s1, 1, 0)
CM_DW3_ROWS(cm_dw3_rows_s2, 2, 0)
CM_DW3_ROWS(cm_dw3_rows_s1c, 1, 1)
CM_DW3_ROWS(cm_dw3_rows_s2c, 2, 1)
CM_DW3_ROWS(cm_dw3_rows_s1x, 1, 2)
CM_DW3_ROWS(cm_dw3_rows_s2x, 2, 2)
#undef CM_DW3_ROWS

/* input row xr (channel 0 of the group; NULL: a padding row) into the data columns [pw, pw + W) of the
 * plane rows d + k * cst, k < nch (the padding columns hold the pad value from cm_dw3_pad) */
__attribute__((noinline)) static void cm_dw3_widen(int16_t *d, ptrdiff_t cst, const int8_t *xr, const cm_dw3_geo *g,
                                                   int32_t nch, int16_t pad) {
  const int32_t W = g->W;
  d += g->pw;
  if (!xr) {
    for (int32_t k = 0; k < nch; k++)
      for (int32_t j = 0; j < W; j++) d[k * cst + j] = pad;
    return;
  }
  const ptrdiff_t xsw = g->xsw;
  int32_t iw = 0;
  if (nch == 4) {   /* a word of 4 channels per pixel, two pixels a step */
    int16_t *d0 = d, *d1 = d0 + cst, *d2 = d1 + cst, *d3 = d2 + cst;
#ifdef __OPTIMIZE__
    int32_t n = W >> 2;
    if (n) {   /* 4 pixels a step: 32 instructions for 16 values */
      uint32_t a, b, e, f, s;
#define CM_DW3_WIDEN2                                                                                        \
  "ldr %[a], [%[x]]\n\t" "ldr %[b], [%[x], %[xs]]\n\t" "add %[x], %[x], %[xs], lsl #1\n\t"                  \
  "sxtb16 %[e], %[a]\n\t" "sxtb16 %[f], %[b]\n\t"                                                            \
  "sxtb16 %[a], %[a], ror #8\n\t" "sxtb16 %[b], %[b], ror #8\n\t"                                            \
  "pkhbt %[s], %[e], %[f], lsl #16\n\t" "str %[s], [%[d0]], #4\n\t"                                          \
  "pkhtb %[s], %[f], %[e], asr #16\n\t" "str %[s], [%[d2]], #4\n\t"                                          \
  "pkhbt %[s], %[a], %[b], lsl #16\n\t" "str %[s], [%[d1]], #4\n\t"                                          \
  "pkhtb %[s], %[b], %[a], asr #16\n\t" "str %[s], [%[d3]], #4\n\t"
      __asm__ volatile("1:\n\t" CM_DW3_WIDEN2 CM_DW3_WIDEN2 "subs %[n], %[n], #1\n\t" "bne 1b\n\t"
                       : [x] "+r"(xr), [d0] "+r"(d0), [d1] "+r"(d1), [d2] "+r"(d2), [d3] "+r"(d3), [n] "+r"(n),
                         [a] "=&r"(a), [b] "=&r"(b), [e] "=&r"(e), [f] "=&r"(f), [s] "=&r"(s)
                       : [xs] "r"(xsw)
                       : "cc", "memory");
#undef CM_DW3_WIDEN2
      iw = W & ~3;
      d0 -= iw; d1 -= iw; d2 -= iw; d3 -= iw;   /* the loop below indexes from the row's start */
    }
#endif
    for (; iw + 2 <= W; iw += 2, xr += 2 * xsw) {
      const uint32_t a = cm_ld32(xr), b = cm_ld32(xr + xsw);
      const uint32_t ae = (uint32_t)__sxtb16(a), be = (uint32_t)__sxtb16(b);
      const uint32_t ao = (uint32_t)cm_sxtb16_r8(a), bo = (uint32_t)cm_sxtb16_r8(b);
      cm_st32h(d0 + iw, cm_pk_lo(ae, be)); cm_st32h(d2 + iw, cm_pk_hi(ae, be));
      cm_st32h(d1 + iw, cm_pk_lo(ao, bo)); cm_st32h(d3 + iw, cm_pk_hi(ao, bo));
    }
    if (iw < W) {
      const uint32_t a = cm_ld32(xr), ae = (uint32_t)__sxtb16(a), ao = (uint32_t)cm_sxtb16_r8(a);
      d0[iw] = (int16_t)ae; d2[iw] = (int16_t)(ae >> 16); d1[iw] = (int16_t)ao; d3[iw] = (int16_t)(ao >> 16);
    }
    return;
  }
  for (; iw < W; iw++, xr += xsw)
    for (int32_t k = 0; k < nch; k++) d[k * cst + iw] = xr[k];
}

/* the pad value in rows [0, rows) of the 4 planes (every column: cm_dw3_widen writes the data ones) */
static void cm_dw3_pad(int16_t *buf, const cm_dw3_geo *g, int32_t rows, int16_t pad) {
  const uint32_t pad2 = ((uint32_t)(uint16_t)pad) * 0x10001u;
  const int32_t nw = rows * g->WP / 2;   /* WP is even */
  for (int32_t k = 0; k < 4; k++) {
    uint32_t *p = (uint32_t *)(void *)(buf + (ptrdiff_t)k * g->RB * g->WP);
    for (int32_t j = 0; j < nw; j++) p[j] = pad2;
  }
}

/* the call's geometry, or false when the band cannot hold 3 rows of 4 channels */
static bool cm_dw3_geometry(const qconv *c, cm_dw3_geo *g) {
  if (c->opg != 1 || c->x.sc != 1 || c->KH != 3 || c->KW != 3 || c->dh != 1 || c->dw != 1) return false;
  if ((c->sh != 1 && c->sh != 2) || (c->sw != 1 && c->sw != 2) || c->y.c < 1) return false;
  const bool t = c->y.h > c->y.w;
  g->t = t;
  g->H = t ? c->x.w : c->x.h; g->W = t ? c->x.h : c->x.w;
  g->OH = t ? c->y.w : c->y.h; g->OW = t ? c->y.h : c->y.w;
  g->sh = t ? c->sw : c->sh; g->sw = t ? c->sh : c->sw;
  g->ph = t ? c->pw : c->ph; g->pw = t ? c->ph : c->pw;
  g->xsh = t ? c->x.sw : c->x.sh; g->xsw = t ? c->x.sh : c->x.sw;
  g->ysh = t ? c->y.sw : c->y.sh; g->ysw = t ? c->y.sh : c->y.sw;
  /* plane columns read: the padded input, and the last block of 4 outputs whole (+ its word pair) */
  const int64_t blocks = ((int64_t)g->OW + 3) / 4, reach = blocks * 4 * g->sw + 2;
  int64_t WP = (int64_t)g->W + 2 * (int64_t)g->pw;
  if (WP < reach) WP = reach;
  WP += WP & 1;
  if (WP * 4 * 3 > CM_DSP_DW3_BUF || blocks * 4 > CM_DSP_DW3_ACC) return false;
  g->WP = (int32_t)WP;
  /* the planes hold one band's rows: as many as CM_DSP_DW3_BUF and the sums allow, no more than the image's */
  const int32_t rb = (int32_t)(CM_DSP_DW3_BUF / (WP * 4)), nacc = (int32_t)(CM_DSP_DW3_ACC / (blocks * 4));
  int32_t nb = (rb - 3) / g->sh + 1;
  if (nb > nacc) nb = nacc;
  if (nb > g->OH) nb = g->OH;
  g->RB = (nb - 1) * g->sh + 3;
  return true;
}

/* the bytes of a call's scratch: the planes, then the sums of a band of (RB - 3) / sh + 1 output rows */
static uint32_t cm_dw3_scratch_bytes(const cm_dw3_geo *g) {
  const uint32_t nb = (uint32_t)((g->RB - 3) / g->sh + 1), blocks = (uint32_t)((g->OW + 3) / 4);
  return 8u * (uint32_t)g->RB * (uint32_t)g->WP + 16u * nb * blocks;
}

/* one channel's requantisation constants from the sum of its weights; false: the exact (slow) form is
 * needed */
static bool cm_dw3_consts(const qconv *c, int32_t ch, int32_t ws, cm_dw3_ch *k) {
  const uint32_t bf = (c->bias ? (uint32_t)c->bias[ch] : 0u) + (uint32_t)c->in_off * (uint32_t)ws;
  k->bias = (int32_t)bf;
  k->bias2 = (int32_t)(bf << 1);
  k->mult = c->mult[ch];
  k->shift = c->shift[ch];
  const int32_t rs = -k->shift, b = (int32_t)bf, oz = c->out_off;
  /* |acc| < 2^27 + 9 x 255 x 128 < 2^28: SMMULR(2 acc) is exact and the sum below stays in int32 */
  if (rs < 0 || rs > 22 || b <= -(1 << 27) || b >= (1 << 27) || oz < -128 || oz > 127) return false;
  k->rs1 = rs + 1;
  k->k = (int32_t)(1u << rs) + (int32_t)((uint32_t)oz << (rs + 1));
  return true;
}

/* the weight pairs of one channel; returns the sum of its 9 weights */
static int32_t cm_dw3_weights(const qconv *c, const cm_dw3_geo *g, int32_t ch, cm_dw3_ch *k) {
  const int32_t C = c->y.c;
  int32_t ws = 0;
  for (int32_t i = 0; i < 3; i++) {   /* kernel row i of the (maybe transposed) window */
    int32_t w[3];
    for (int32_t j = 0; j < 3; j++) w[j] = c->w[(ptrdiff_t)(g->t ? j * 3 + i : i * 3 + j) * C + ch];
    k->ab[i][0] = ((uint32_t)(2 * w[0]) & 0xFFFFu) | ((uint32_t)(2 * w[1]) << 16);
    k->ab[i][1] = ((uint32_t)(2 * w[1]) & 0xFFFFu) | ((uint32_t)(2 * w[2]) << 16);
    ws += w[0] + w[1] + w[2];
  }
  return ws;
}

/* the same for 4 channels at once (a word of weights per tap, 1HWO; tap i of the window's row r at
 * w + toff[3 r + i]): sums into ws[0..3] */
__attribute__((always_inline)) static inline void cm_dw3_weights4(const int8_t *w, const ptrdiff_t *toff,
                                                                  cm_dw3_ch *k, int32_t *ws) {
  int16x2_t se = 0, so = 0;   /* weight sums of channels (0, 2) and (1, 3) */
#pragma GCC unroll 3
  for (int32_t i = 0; i < 3; i++) {
    uint32_t e[3], o[3];
#pragma GCC unroll 3
    for (int32_t j = 0; j < 3; j++) {
      const uint32_t v = cm_ld32(w + toff[3 * i + j]);
      const int16x2_t ve = __sxtb16(v), vo = cm_sxtb16_r8(v);
      se = __sadd16(se, ve); so = __sadd16(so, vo);
      e[j] = (uint32_t)__sadd16(ve, ve); o[j] = (uint32_t)__sadd16(vo, vo);
    }
    k[0].ab[i][0] = cm_pk_lo(e[0], e[1]); k[2].ab[i][0] = cm_pk_hi(e[0], e[1]);
    k[1].ab[i][0] = cm_pk_lo(o[0], o[1]); k[3].ab[i][0] = cm_pk_hi(o[0], o[1]);
    k[0].ab[i][1] = cm_pk_lo(e[1], e[2]); k[2].ab[i][1] = cm_pk_hi(e[1], e[2]);
    k[1].ab[i][1] = cm_pk_lo(o[1], o[2]); k[3].ab[i][1] = cm_pk_hi(o[1], o[2]);
  }
  ws[0] = (int16_t)(uint32_t)se; ws[2] = (int32_t)se >> 16;
  ws[1] = (int16_t)(uint32_t)so; ws[3] = (int32_t)so >> 16;
}

typedef void (*cm_dw3_rows_fn)(const int16_t *, const cm_dw3_geo *, int32_t, const cm_dw3_ch *, int32_t, ptrdiff_t,
                               int8_t *, ptrdiff_t, const int32_t *, int32_t *);

__attribute__((noinline)) static void cm_dsp_dw3(const qconv *c, const cm_dw3_geo *gp, const int8_t *x, int8_t *y) {
  const cm_dw3_geo g = *gp;
  const int32_t C = c->y.c, out_off = c->out_off, amin = c->amin, amax = c->amax;
  const bool full = amin == -128 && amax == 127, ranged = amin >= -128 && amax <= 127 && amin <= amax;
  const int32_t act[3] = {out_off, amin, amax};
  const int16_t pad = (int16_t)-c->in_off;
  const ptrdiff_t cst = (ptrdiff_t)g.RB * g.WP;   /* between the channels' planes */
  int32_t nb = (g.RB - 3) / g.sh + 1;               /* output rows a band: the planes' rows and the sums' */
  const int32_t nacc = CM_DSP_DW3_ACC / (4 * ((g.OW + 3) / 4));
  if (nb > nacc) nb = nacc;
  int16_t *const buf = (int16_t *)(void *)c->scr;   /* cm_dw3_scratch_bytes(gp): the planes, then the sums */
  int32_t *const acc = (int32_t *)(void *)(c->scr + 8 * (ptrdiff_t)g.RB * g.WP);
  cm_dw3_pad(buf, &g, ((g.OH < nb ? g.OH : nb) - 1) * g.sh + 3, pad);
  ptrdiff_t toff[9];   /* the window's taps (maybe transposed) in the 1HWO weights */
  for (int32_t i = 0; i < 3; i++)
    for (int32_t j = 0; j < 3; j++) toff[3 * i + j] = (ptrdiff_t)(g.t ? j * 3 + i : i * 3 + j) * C;
  for (int32_t n = 0; n < c->y.n; n++)
    for (int32_t c0 = 0; c0 < C; c0 += 4) {
      const int32_t nch = C - c0 < 4 ? C - c0 : 4;
      cm_dw3_ch kc[4];
      int32_t ws[4];
      if (nch == 4) cm_dw3_weights4(c->w + c0, toff, kc, ws);
      else
        for (int32_t j = 0; j < nch; j++) ws[j] = cm_dw3_weights(c, &g, c0 + j, &kc[j]);
      bool fast = true;   /* one channel off the fast form's bounds: the group takes the exact form */
      for (int32_t j = 0; j < nch; j++) fast = cm_dw3_consts(c, c0 + j, ws[j], &kc[j]) && fast;
      const cm_dw3_rows_fn fn =
          g.sw == 1 ? (!fast ? cm_dw3_rows_s1x : full ? cm_dw3_rows_s1 : ranged ? cm_dw3_rows_s1c : cm_dw3_rows_s1x)
                    : (!fast ? cm_dw3_rows_s2x : full ? cm_dw3_rows_s2 : ranged ? cm_dw3_rows_s2c : cm_dw3_rows_s2x);
      const int8_t *xq = x + n * c->x.sn + c0;
      int8_t *yq = y + n * c->y.sn + c0 * c->y.sc;
      for (int32_t oh = 0; oh < g.OH; oh += nb) {
        const int32_t nr = g.OH - oh < nb ? g.OH - oh : nb, ih0 = oh * g.sh - g.ph, rows = (nr - 1) * g.sh + 3;
        for (int32_t i = 0; i < rows; i++) {
          const int32_t ih = ih0 + i;
          cm_dw3_widen(buf + (ptrdiff_t)i * g.WP, cst, ih >= 0 && ih < g.H ? xq + ih * g.xsh : NULL, &g, nch, pad);
        }
        fn(buf, &g, nr, kc, nch, cst, yq + oh * g.ysh, c->y.sc, act, acc);
      }
    }
}

#endif
