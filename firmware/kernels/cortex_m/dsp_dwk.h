/* Private to firmware/kernels/cortex_m/ (dsp_dw.h): the int8 KxK depthwise (K odd, 3 or 5; multiplier 1,
 * dilation 1, strides 1 or 2, channels contiguous) on the DSP extension.
 *
 * 4 channels at a time, the input is widened once into int16 planes, one per channel, a band of rows
 * at a time (CM_DSP_DW3_BUF): raw values, the padding filled with the input zero point (-offset), so
 * the offset folds into the bias (offset x sum of the K x K weights) and every output is an interior one.
 * Along a plane row a word holds the tap pair (x[j], x[j+1]); the MACs take the doubled weights in pairs
 * with SMLAD / SMLABT / SMLATB (dsp_dwk_mac.h), 4 outputs of a row a block, so the sum is 2 x acc, what
 * SMMULR takes. The output rows are the longer side: a tall image (DS-CNN's 25 x 5) runs transposed. */
#ifndef ET_CORTEX_M_DSP_DWK_H
#define ET_CORTEX_M_DSP_DWK_H
#include "cm_conv.h"
#include "dsp_dwk_mac.h"

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

#define CM_DSP_DW3_BUF 2048   /* int16 of widened planes at most: 4 channels x rows x the padded width (4 KB) */
#define CM_DSP_DW3_ACC 384    /* int32 sums of a band's output rows at most: rows x 4 x ceil(OW / 4) */
/* The call's planned scratch (ET_SCRATCH; kernel_scratch.py mirrors cm_dwk_scratch_bytes): the 4 channels'
 * planes (RB rows of WP int16 each), then the band's sums */

/* The geometry of a call, rows being the longer output side (t: transposed) */
typedef struct {
  int32_t K, H, W, OH, OW, sh, sw, ph, pw, WP, RB;
  ptrdiff_t xsh, xsw, ysh, ysw;
  bool t;
} cm_dwk_geo;

/* Requantisation modes: 0 fast (int8 activation range, one SSAT), 1 fast with the activation clamp,
 * 2 cm_dsp_rq1 (a shift or bias outside the fast form's bounds) */
__attribute__((always_inline)) static inline int8_t cm_dwk_rq(int32_t a2, const cm_dwk_ch *k, int32_t mode,
                                                              int32_t out_off, int32_t amin, int32_t amax) {
  if (mode == 2) {   /* the taps' sum, |sum| < 2^19 (25 x 128 x 128), is exact in a2 - bias2: the bias adds back unwrapped */
    const uint32_t acc = (uint32_t)k->bias + (uint32_t)((int32_t)((uint32_t)a2 - (uint32_t)k->bias2) >> 1);
    return cm_dsp_rq1(acc, k->mult, k->shift, out_off, amin, amax);
  }
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a2), "r"(k->mult));
  int32_t v = __ssat((k->k + (int32_t)((uint32_t)r << 1) + (r >> 31)) >> k->rs1, 8);
  if (mode == 1) v = v < amin ? amin : v > amax ? amax : v;
  return (int8_t)v;
}

/* one channel: nr output rows from its plane r (row pitch WP), nr x 4 x ceil(OW / 4) <= CM_DSP_DW3_ACC:
 * the MACs of every row into acc first, then their requantisation (fewer values live in each loop), each
 * over all the rows in one asm loop */
__attribute__((always_inline)) static inline void cm_dwk_rows(const int16_t *r, const cm_dwk_geo *g, int32_t nr,
                                                              const cm_dwk_ch *kc, int8_t *y, int32_t sw,
                                                              int32_t mode, int32_t out_off, int32_t amin,
                                                              int32_t amax, int32_t *acc) {
  const int32_t OW = g->OW, nblk = (OW + 3) / 4, n4 = 4 * nblk, ws = 2 * g->WP;
  const ptrdiff_t ysh = g->ysh, ysw = g->ysw;
  cm_dwk_macs(r, ws, g->sh * ws, kc, nblk, nr, g->K, sw, acc);
  const cm_dwk_ch k = *kc;   /* a copy: int8 stores could alias *kc */
#ifdef __OPTIMIZE__
  if (mode == 0) {
    /* 2 outputs a step: 16 instructions; an odd last output of a row on its own; between rows ap and y
     * skip what the row's outputs did not take. (Mode 1, a clamp inside the int8 range, stays in C: the
     * cortex_m quantizer gives fused activations the full range, so no exported program reaches it.) */
    const int32_t pb = 8 * (OW >> 1), odd = OW & 1, apskip = 4 * (n4 - OW), yskip = (int32_t)(ysh - OW * ysw);
    int32_t rows = nr, a, b, u, v;
    const int32_t *ap = acc, *ape = acc + 2 * (OW >> 1);
    int8_t *yp = y;
#define CM_DWK_RQ2                                                                                           \
  "ldrd %[a], %[b], [%[ap]], #8\n\t"                                                                          \
  "smmulr %[a], %[a], %[m]\n\t" "smmulr %[b], %[b], %[m]\n\t"                                               \
  "add %[u], %[k], %[a], lsl #1\n\t" "add %[u], %[u], %[a], asr #31\n\t"                                    \
  "add %[v], %[k], %[b], lsl #1\n\t" "add %[v], %[v], %[b], asr #31\n\t"                                    \
  "asr %[u], %[u], %[rs]\n\t" "asr %[v], %[v], %[rs]\n\t"                                                   \
  "ssat %[u], #8, %[u]\n\t" "ssat %[v], #8, %[v]\n\t"                                                       \
  "strb %[u], [%[y]]\n\t" "strb %[v], [%[y], %[ys]]\n\t"                                                    \
  "add %[y], %[y], %[ys], lsl #1\n\t"
    __asm__ volatile("1:\n\t" "cmp %[ap], %[ape]\n\t" "beq 3f\n\t"
                     "2:\n\t" CM_DWK_RQ2 "cmp %[ap], %[ape]\n\t" "bne 2b\n\t"
                     "3:\n\t" "ldr %[a], %[odd]\n\t" "cmp %[a], #0\n\t" "beq 4f\n\t"
                     "ldr %[a], [%[ap]], #4\n\t" "smmulr %[a], %[a], %[m]\n\t"
                     "add %[u], %[k], %[a], lsl #1\n\t" "add %[u], %[u], %[a], asr #31\n\t"
                     "asr %[u], %[u], %[rs]\n\t" "ssat %[u], #8, %[u]\n\t"
                     "strb %[u], [%[y]]\n\t" "add %[y], %[y], %[ys]\n\t"
                     "4:\n\t" "ldr %[a], %[apskip]\n\t" "add %[ap], %[ap], %[a]\n\t" "ldr %[a], %[yskip]\n\t"
                     "add %[y], %[y], %[a]\n\t" "ldr %[a], %[pb]\n\t" "add %[ape], %[ap], %[a]\n\t"
                     "ldr %[a], %[rows]\n\t" "subs %[a], %[a], #1\n\t" "str %[a], %[rows]\n\t" "bne 1b\n\t"
                     : [ap] "+r"(ap), [ape] "+r"(ape), [y] "+r"(yp), [rows] "+m"(rows), [a] "=&r"(a), [b] "=&r"(b),
                       [u] "=&r"(u), [v] "=&r"(v)
                     : [m] "r"(k.mult), [k] "r"(k.k), [rs] "r"(k.rs1), [ys] "r"(ysw), [odd] "m"(odd),
                       [apskip] "m"(apskip), [yskip] "m"(yskip), [pb] "m"(pb)
                     : "cc", "memory");
#undef CM_DWK_RQ2
    return;
  }
#endif
  const int32_t *ar = acc;
  for (int32_t i = 0; i < nr; i++, y += ysh, ar += n4) {
    int8_t *yp = y;
    const int32_t *ap = ar, *ae = ar + (OW & ~1);
    for (; ap < ae; ap += 2, yp += 2 * ysw) {
      const int32_t v0 = ap[0], v1 = ap[1];
      yp[0] = cm_dwk_rq(v0, &k, mode, out_off, amin, amax);
      yp[ysw] = cm_dwk_rq(v1, &k, mode, out_off, amin, amax);
    }
    if (OW & 1) *yp = cm_dwk_rq(*ap, &k, mode, out_off, amin, amax);
  }
}

/* the nch channels of a group (planes cst apart, outputs ysc apart), one requantisation mode for all */
#define CM_DWK_ROWS(name, SW, MODE)                                                                         \
  __attribute__((noinline)) static void name(const int16_t *r, const cm_dwk_geo *g, int32_t nr,           \
                                             const cm_dwk_ch *k, int32_t nch, ptrdiff_t cst, int8_t *y,    \
                                             ptrdiff_t ysc, const int32_t *act, int32_t *acc) {            \
    for (int32_t j = 0; j < nch; j++)                                                                      \
      cm_dwk_rows(r + j * cst, g, nr, k + j, y + j * ysc, SW, MODE, act[0], act[1], act[2], acc);          \
  }
CM_DWK_ROWS(cm_dwk_rows_s1, 1, 0)
CM_DWK_ROWS(cm_dwk_rows_s2, 2, 0)
CM_DWK_ROWS(cm_dwk_rows_s1c, 1, 1)
CM_DWK_ROWS(cm_dwk_rows_s2c, 2, 1)
CM_DWK_ROWS(cm_dwk_rows_s1x, 1, 2)
CM_DWK_ROWS(cm_dwk_rows_s2x, 2, 2)
#undef CM_DWK_ROWS

/* input row xr (channel 0 of the group; NULL: a padding row) into the data columns [pw, pw + W) of the
 * plane rows d + k * cst, k < nch (the padding columns hold the pad value from cm_dwk_pad) */
__attribute__((noinline)) static void cm_dwk_widen(int16_t *d, ptrdiff_t cst, const int8_t *xr, const cm_dwk_geo *g,
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
#define CM_DWK_WIDEN2                                                                                        \
  "ldr %[a], [%[x]]\n\t" "ldr %[b], [%[x], %[xs]]\n\t" "add %[x], %[x], %[xs], lsl #1\n\t"                  \
  "sxtb16 %[e], %[a]\n\t" "sxtb16 %[f], %[b]\n\t"                                                            \
  "sxtb16 %[a], %[a], ror #8\n\t" "sxtb16 %[b], %[b], ror #8\n\t"                                            \
  "pkhbt %[s], %[e], %[f], lsl #16\n\t" "str %[s], [%[d0]], #4\n\t"                                          \
  "pkhtb %[s], %[f], %[e], asr #16\n\t" "str %[s], [%[d2]], #4\n\t"                                          \
  "pkhbt %[s], %[a], %[b], lsl #16\n\t" "str %[s], [%[d1]], #4\n\t"                                          \
  "pkhtb %[s], %[b], %[a], asr #16\n\t" "str %[s], [%[d3]], #4\n\t"
      __asm__ volatile("1:\n\t" CM_DWK_WIDEN2 CM_DWK_WIDEN2 "subs %[n], %[n], #1\n\t" "bne 1b\n\t"
                       : [x] "+r"(xr), [d0] "+r"(d0), [d1] "+r"(d1), [d2] "+r"(d2), [d3] "+r"(d3), [n] "+r"(n),
                         [a] "=&r"(a), [b] "=&r"(b), [e] "=&r"(e), [f] "=&r"(f), [s] "=&r"(s)
                       : [xs] "r"(xsw)
                       : "cc", "memory");
#undef CM_DWK_WIDEN2
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

/* the pad value in rows [0, rows) of the 4 planes (every column: cm_dwk_widen writes the data ones) */
static void cm_dwk_pad(int16_t *buf, const cm_dwk_geo *g, int32_t rows, int16_t pad) {
  const uint32_t pad2 = ((uint32_t)(uint16_t)pad) * 0x10001u;
  const int32_t nw = rows * g->WP / 2;   /* WP is even */
  for (int32_t k = 0; k < 4; k++) {
    uint32_t *p = (uint32_t *)(void *)(buf + (ptrdiff_t)k * g->RB * g->WP);
    for (int32_t j = 0; j < nw; j++) p[j] = pad2;
  }
}

/* the call's geometry, or false when the band cannot hold K rows of 4 channels */
static bool cm_dwk_geometry(const qconv *c, cm_dwk_geo *g) {
  const int32_t K = c->KH;
  if (c->opg != 1 || c->x.sc != 1 || K != c->KW || K < 3 || K > CM_DSP_DWK_KMAX || !(K & 1) || c->dh != 1 ||
      c->dw != 1)
    return false;
  if ((c->sh != 1 && c->sh != 2) || (c->sw != 1 && c->sw != 2) || c->y.c < 1) return false;
  const bool t = c->y.h > c->y.w;
  g->t = t;
  g->K = K;
  g->H = t ? c->x.w : c->x.h; g->W = t ? c->x.h : c->x.w;
  g->OH = t ? c->y.w : c->y.h; g->OW = t ? c->y.h : c->y.w;
  g->sh = t ? c->sw : c->sh; g->sw = t ? c->sh : c->sw;
  g->ph = t ? c->pw : c->ph; g->pw = t ? c->ph : c->pw;
  g->xsh = t ? c->x.sw : c->x.sh; g->xsw = t ? c->x.sh : c->x.sw;
  g->ysh = t ? c->y.sw : c->y.sh; g->ysw = t ? c->y.sh : c->y.sw;
  /* an input smaller than the kernel both ways (a 3x3 image under a 5x5 kernel): most taps are padding, which
   * the pixel path (dsp_dw.h) skips and the planes would multiply */
  if (g->H < K && g->W < K) return false;
  /* plane columns read: the padded input, and the last block of 4 outputs whole (+ its last word pair) */
  const int64_t blocks = ((int64_t)g->OW + 3) / 4, reach = blocks * 4 * g->sw + K - 1;
  int64_t WP = (int64_t)g->W + 2 * (int64_t)g->pw;
  if (WP < reach) WP = reach;
  WP += WP & 1;
  if (WP * 4 * K > CM_DSP_DW3_BUF || blocks * 4 > CM_DSP_DW3_ACC) return false;
  g->WP = (int32_t)WP;
  /* the planes hold one band's rows: as many as CM_DSP_DW3_BUF and the sums allow, no more than the image's */
  const int32_t rb = (int32_t)(CM_DSP_DW3_BUF / (WP * 4)), nacc = (int32_t)(CM_DSP_DW3_ACC / (blocks * 4));
  int32_t nb = (rb - K) / g->sh + 1;
  if (nb > nacc) nb = nacc;
  if (nb > g->OH) nb = g->OH;
  g->RB = (nb - 1) * g->sh + K;
  return true;
}

/* the bytes of a call's scratch: the planes, then the sums of a band of (RB - K) / sh + 1 output rows */
static uint32_t cm_dwk_scratch_bytes(const cm_dwk_geo *g) {
  const uint32_t nb = (uint32_t)((g->RB - g->K) / g->sh + 1), blocks = (uint32_t)((g->OW + 3) / 4);
  return 8u * (uint32_t)g->RB * (uint32_t)g->WP + 16u * nb * blocks;
}

/* one channel's requantisation constants from the sum of its weights; false: the exact (slow) form is
 * needed */
static bool cm_dwk_consts(const qconv *c, int32_t ch, int32_t ws, cm_dwk_ch *k) {
  const uint32_t bf = (c->bias ? (uint32_t)c->bias[ch] : 0u) + (uint32_t)c->in_off * (uint32_t)ws;
  k->bias = (int32_t)bf;
  k->bias2 = k->bias2b = (int32_t)(bf << 1);
  k->mult = c->mult[ch];
  k->shift = c->shift[ch];
  const int32_t rs = -k->shift, b = (int32_t)bf, oz = c->out_off;
  /* |acc| < 2^27 + 25 x 128 x 128 < 2^28: SMMULR(2 acc) is exact and the sum below stays in int32 */
  if (rs < 0 || rs > 22 || b <= -(1 << 27) || b >= (1 << 27) || oz < -128 || oz > 127) return false;
  k->rs1 = rs + 1;
  k->k = (int32_t)(1u << rs) + (int32_t)((uint32_t)oz << (rs + 1));
  return true;
}

/* a kernel row's doubled weights w[0..K-1] (e: even lanes, as int16 in the low half) as its pairs A_i, B_i
 * (dsp_dwk_mac.h) at ab; PK takes the low halves of two words (cm_pk_lo) or the high ones (cm_pk_hi) */
#define CM_DWK_PAIRS(ab, w, K, PK)                                                                           \
  do {                                                                                                      \
    const int32_t m_ = (K) / 2;                                                                             \
    for (int32_t i_ = 0; i_ < m_; i_++) {                                                                   \
      (ab)[i_] = PK((w)[2 * i_], (w)[2 * i_ + 1]);                                                          \
      (ab)[m_ + i_] = PK((w)[2 * i_ + 1], (w)[2 * i_ + 2]);                                                 \
    }                                                                                                       \
  } while (0)

/* the weight pairs of one channel; returns the sum of its K x K weights */
static int32_t cm_dwk_weights(const qconv *c, const cm_dwk_geo *g, int32_t ch, cm_dwk_ch *k) {
  const int32_t C = c->y.c, K = g->K;
  int32_t ws = 0;
  for (int32_t i = 0; i < K; i++) {   /* kernel row i of the (maybe transposed) window */
    uint32_t w[CM_DSP_DWK_KMAX];
    for (int32_t j = 0; j < K; j++) {
      const int32_t v = c->w[(ptrdiff_t)(g->t ? j * K + i : i * K + j) * C + ch];
      w[j] = (uint32_t)(2 * v) & 0xFFFFu;
      ws += v;
    }
    CM_DWK_PAIRS(&k->ab[i * (K - 1)], w, K, cm_pk_lo);
  }
  return ws;
}

/* the same for 4 channels at once (a word of weights per tap, 1HWO; tap j of the window's row i at
 * w + toff[K i + j]): sums into ws[0..3] */
__attribute__((always_inline)) static inline void cm_dwk_weights4(const int8_t *w, const ptrdiff_t *toff, int32_t K,
                                                                  cm_dwk_ch *k, int32_t *ws) {
  int16x2_t se = 0, so = 0;   /* weight sums of channels (0, 2) and (1, 3) */
#pragma GCC unroll 5
  for (int32_t i = 0; i < K; i++) {
    uint32_t e[CM_DSP_DWK_KMAX], o[CM_DSP_DWK_KMAX];
#pragma GCC unroll 5
    for (int32_t j = 0; j < K; j++) {
      const uint32_t v = cm_ld32(w + toff[K * i + j]);
      const int16x2_t ve = __sxtb16(v), vo = cm_sxtb16_r8(v);
      se = __sadd16(se, ve); so = __sadd16(so, vo);
      e[j] = (uint32_t)__sadd16(ve, ve); o[j] = (uint32_t)__sadd16(vo, vo);
    }
    const int32_t r = i * (K - 1);
    CM_DWK_PAIRS(&k[0].ab[r], e, K, cm_pk_lo); CM_DWK_PAIRS(&k[2].ab[r], e, K, cm_pk_hi);
    CM_DWK_PAIRS(&k[1].ab[r], o, K, cm_pk_lo); CM_DWK_PAIRS(&k[3].ab[r], o, K, cm_pk_hi);
  }
  ws[0] = (int16_t)(uint32_t)se; ws[2] = (int32_t)se >> 16;
  ws[1] = (int16_t)(uint32_t)so; ws[3] = (int32_t)so >> 16;
}

typedef void (*cm_dwk_rows_fn)(const int16_t *, const cm_dwk_geo *, int32_t, const cm_dwk_ch *, int32_t, ptrdiff_t,
                               int8_t *, ptrdiff_t, const int32_t *, int32_t *);

__attribute__((noinline)) static void cm_dsp_dwk(const qconv *c, const cm_dwk_geo *gp, const int8_t *x, int8_t *y) {
  const cm_dwk_geo g = *gp;
  const int32_t C = c->y.c, K = g.K, out_off = c->out_off, amin = c->amin, amax = c->amax;
  const bool full = amin == -128 && amax == 127, ranged = amin >= -128 && amax <= 127 && amin <= amax;
  const int32_t act[3] = {out_off, amin, amax};
  const int16_t pad = (int16_t)-c->in_off;
  const ptrdiff_t cst = (ptrdiff_t)g.RB * g.WP;   /* between the channels' planes */
  int32_t nb = (g.RB - K) / g.sh + 1;               /* output rows a band: the planes' rows and the sums' */
  const int32_t nacc = CM_DSP_DW3_ACC / (4 * ((g.OW + 3) / 4));
  if (nb > nacc) nb = nacc;
  int16_t *const buf = (int16_t *)(void *)c->scr;   /* cm_dwk_scratch_bytes(gp): the planes, then the sums */
  int32_t *const acc = (int32_t *)(void *)(c->scr + 8 * (ptrdiff_t)g.RB * g.WP);
  cm_dwk_pad(buf, &g, ((g.OH < nb ? g.OH : nb) - 1) * g.sh + K, pad);
  ptrdiff_t toff[CM_DSP_DWK_KMAX * CM_DSP_DWK_KMAX];   /* the window's taps (maybe transposed) in the 1HWO weights */
  for (int32_t i = 0; i < K; i++)
    for (int32_t j = 0; j < K; j++) toff[K * i + j] = (ptrdiff_t)(g.t ? j * K + i : i * K + j) * C;
  for (int32_t n = 0; n < c->y.n; n++)
    for (int32_t c0 = 0; c0 < C; c0 += 4) {
      const int32_t nch = C - c0 < 4 ? C - c0 : 4;
      cm_dwk_ch kc[4];
      int32_t ws[4];
      if (nch == 4 && K == 3) cm_dwk_weights4(c->w + c0, toff, 3, kc, ws);   /* unrolled */
      else if (nch == 4 && K == 5) cm_dwk_weights4(c->w + c0, toff, 5, kc, ws);
      else
        for (int32_t j = 0; j < nch; j++) ws[j] = cm_dwk_weights(c, &g, c0 + j, &kc[j]);
      bool fast = true;   /* one channel off the fast form's bounds: the group takes the exact form */
      for (int32_t j = 0; j < nch; j++) fast = cm_dwk_consts(c, c0 + j, ws[j], &kc[j]) && fast;
      const cm_dwk_rows_fn fn =
          g.sw == 1 ? (!fast ? cm_dwk_rows_s1x : full ? cm_dwk_rows_s1 : ranged ? cm_dwk_rows_s1c : cm_dwk_rows_s1x)
                    : (!fast ? cm_dwk_rows_s2x : full ? cm_dwk_rows_s2 : ranged ? cm_dwk_rows_s2c : cm_dwk_rows_s2x);
      const int8_t *xq = x + n * c->x.sn + c0;
      int8_t *yq = y + n * c->y.sn + c0 * c->y.sc;
      for (int32_t oh = 0; oh < g.OH; oh += nb) {
        const int32_t nr = g.OH - oh < nb ? g.OH - oh : nb, ih0 = oh * g.sh - g.ph, rows = (nr - 1) * g.sh + K;
        for (int32_t i = 0; i < rows; i++) {
          const int32_t ih = ih0 + i;
          cm_dwk_widen(buf + (ptrdiff_t)i * g.WP, cst, ih >= 0 && ih < g.H ? xq + ih * g.xsh : NULL, &g, nch, pad);
        }
        fn(buf, &g, nr, kc, nch, cst, yq + oh * g.ysh, c->y.sc, act, acc);
      }
    }
}

#endif
