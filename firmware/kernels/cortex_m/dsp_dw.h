/* Private to firmware/kernels/cortex_m/: the int8 depthwise convolution on the DSP extension, for
 * depthwise.c. Paths (cm_dsp_dw picks one; false: none fits, the portable code runs):
 *  - (one input channel, many outputs, a first layer: dsp_conv.h's cm_dsp_dw_as_conv, tried before);
 *  - other depth multipliers >= 4: per output pixel and input channel, the window's taps (offset
 *    added, padded taps 0) packed as int16 tap pairs on the stack; 4 output channels a pass read one
 *    word of weights per tap (1HWO: the channels are contiguous), widened and paired (SXTB16,
 *    PKHBT/PKHTB): 4 SMLAD per tap pair and 4 channels;
 *  - multiplier 1, 3x3 or 5x5, strides 1-2, channels contiguous (not an input smaller than the kernel both
 *    ways): int16 planes and SMLAD on tap pairs (dsp_dwk.h);
 *  - multiplier 1, other kernels, channels contiguous: pixel by pixel, 4 channels a pass (cm_dsp_dw_pix);
 *  - multiplier 1..3 otherwise: one output channel at a time, its taps' weights in locals, the input
 *    offset folded as offset x sum(weights) (interior pixels), the 3x3 window unrolled. */
#ifndef ET_CORTEX_M_DSP_DW_H
#define ET_CORTEX_M_DSP_DW_H
#include "dsp_dwk.h"

#define CM_DSP_DW_TAPS 64   /* the stack window: 32 words */
#define CM_DSP_DW_C 256     /* channels of the per-call constants (planned scratch, 1 KB at most) */

/* 4 channels at w (tap stride O) against the packed window xw of np tap pairs: acc[0..3] */
__attribute__((always_inline)) static inline void cm_dsp_dw4(const uint32_t *xw, int32_t np, const int8_t *w,
                                                             ptrdiff_t O, int32_t *acc) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  const ptrdiff_t O2 = 2 * O;
  for (int32_t i = 0; i < np; i++, w += O2) {
    const uint32_t xp = xw[i], wa = cm_ld32(w), wb = cm_ld32(w + O);
    const uint32_t ea = (uint32_t)__sxtb16(wa), oa = (uint32_t)cm_sxtb16_r8(wa);
    const uint32_t eb = (uint32_t)__sxtb16(wb), ob = (uint32_t)cm_sxtb16_r8(wb);
    a0 = __smlad((int16x2_t)xp, (int16x2_t)cm_pk_lo(ea, eb), a0);
    a2 = __smlad((int16x2_t)xp, (int16x2_t)cm_pk_hi(ea, eb), a2);
    a1 = __smlad((int16x2_t)xp, (int16x2_t)cm_pk_lo(oa, ob), a1);
    a3 = __smlad((int16x2_t)xp, (int16x2_t)cm_pk_hi(oa, ob), a3);
  }
  acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;
}

__attribute__((noinline)) static void cm_dsp_dw_mult(const qconv *c, const int8_t *x, int8_t *y) {
  const int32_t O = c->y.c, KH = c->KH, KW = c->KW, T = KH * KW, H = c->x.h, W = c->x.w, opg = c->opg;
  const int32_t io = c->in_off, o4 = opg & ~3;
  const ptrdiff_t xsh = c->x.sh, xsw = c->x.sw, xsc = c->x.sc;
  const int32_t *bias = c->bias, *mult = c->mult, *shift = c->shift;
  const int32_t out_off = c->out_off, amin = c->amin, amax = c->amax;
  const ptrdiff_t ysc = c->y.sc;
  uint32_t xw[CM_DSP_DW_TAPS / 2];
  int16_t *xh = (int16_t *)xw;   /* tap pairs; an odd last tap is taken on its own below */
  for (int32_t n = 0; n < c->y.n; n++)
    for (int32_t oh = 0; oh < c->y.h; oh++) {
      const int32_t ih0 = oh * c->sh - c->ph;
      for (int32_t ow = 0; ow < c->y.w; ow++) {
        const int32_t iw0 = ow * c->sw - c->pw;
        int8_t *yp = y + n * c->y.sn + oh * c->y.sh + ow * c->y.sw;
        for (int32_t ic = 0; ic < c->x.c; ic++) {
          const int8_t *xc = x + n * c->x.sn + ic * xsc;
          for (int32_t kh = 0, t = 0; kh < KH; kh++) {
            const int32_t ih = ih0 + kh * c->dh;
            const bool row = ih >= 0 && ih < H;
            for (int32_t kw = 0; kw < KW; kw++, t++) {
              const int32_t iw = iw0 + kw * c->dw;
              xh[t] = (int16_t)(row && iw >= 0 && iw < W ? xc[ih * xsh + iw * xsw] + io : 0);
            }
          }
          const int32_t oc0 = ic * opg;
          const int8_t *wc = c->w + oc0;
          int32_t j = 0;
          for (; j < o4; j += 4) {
            int32_t acc[4] = {0, 0, 0, 0};
            cm_dsp_dw4(xw, T / 2, wc + j, O, acc);
            if (T & 1) {
              const int32_t xl = xh[T - 1];
              const int8_t *wl = wc + j + (ptrdiff_t)(T - 1) * O;
              acc[0] += xl * wl[0]; acc[1] += xl * wl[1]; acc[2] += xl * wl[2]; acc[3] += xl * wl[3];
            }
            for (int32_t k = 0; k < 4; k++) {
              const int32_t oc = oc0 + j + k;
              yp[oc * ysc] = cm_dsp_rq1((bias ? (uint32_t)bias[oc] : 0u) + (uint32_t)acc[k], mult[oc], shift[oc],
                                        out_off, amin, amax);
            }
          }
          for (; j < opg; j++) {
            const int32_t oc = oc0 + j;
            uint32_t acc = c->bias ? (uint32_t)c->bias[oc] : 0u;
            for (int32_t t = 0; t < T; t++) acc += (uint32_t)(xh[t] * (int32_t)wc[j + (ptrdiff_t)t * O]);
            cm_dsp_rq q;
            cm_dsp_rq_set(&q, c->mult[oc], c->shift[oc], c->out_off, c->amin, c->amax);
            yp[oc * c->y.sc] = cm_dsp_rq_apply(&q, acc);
          }
        }
      }
    }
}

/* multiplier 1..3: channel by channel */
__attribute__((noinline)) static void cm_dsp_dw_chan(const qconv *c, const int8_t *x, int8_t *y) {
  const int32_t O = c->y.c, KH = c->KH, KW = c->KW, T = KH * KW, H = c->x.h, W = c->x.w, opg = c->opg;
  const int32_t io = c->in_off, dh = c->dh, dw = c->dw, sw = c->sw;
  const ptrdiff_t xsh = c->x.sh, xsw = c->x.sw, xsc = c->x.sc, ysw = c->y.sw;
  int32_t wk[CM_DSP_DW_TAPS];
  ptrdiff_t off[CM_DSP_DW_TAPS];
  for (int32_t kh = 0, t = 0; kh < KH; kh++)
    for (int32_t kw = 0; kw < KW; kw++, t++) off[t] = (ptrdiff_t)kh * dh * xsh + (ptrdiff_t)kw * dw * xsw;
  for (int32_t t = T; t < 9; t++) { off[t] = 0; wk[t] = 0; }  /* read by the 3x3 setup below, unused */
  const bool k33 = KH == 3 && KW == 3;
  /* interior columns: [owa, owb) take every tap */
  int32_t owa = 0, owb = 0;
  while (owa < c->y.w && owa * sw - c->pw < 0) owa++;
  owb = owa;
  while (owb < c->y.w && owb * sw - c->pw + (KW - 1) * dw < W) owb++;
  for (int32_t oc = 0; oc < O; oc++) {
    const int32_t ic = oc / opg;
    int32_t wsum = 0;
    for (int32_t t = 0; t < T; t++) { wk[t] = c->w[(ptrdiff_t)t * O + oc]; wsum += wk[t]; }
    cm_dsp_rq q;
    cm_dsp_rq_set(&q, c->mult[oc], c->shift[oc], c->out_off, c->amin, c->amax);
    const uint32_t b = c->bias ? (uint32_t)c->bias[oc] : 0u, bfull = b + (uint32_t)io * (uint32_t)wsum;
    const int32_t w0 = wk[0], w1 = wk[1], w2 = wk[2], w3 = wk[3], w4 = wk[4], w5 = wk[5], w6 = wk[6], w7 = wk[7],
                  w8 = wk[8];
    const ptrdiff_t o1 = off[1], o2 = off[2], o3 = off[3], o4 = off[4], o5 = off[5], o6 = off[6], o7 = off[7],
                    o8 = off[8];
    for (int32_t n = 0; n < c->y.n; n++)
      for (int32_t oh = 0; oh < c->y.h; oh++) {
        const int32_t ih0 = oh * c->sh - c->ph;
        int32_t kh0, kh1;
        tap_range(ih0, KH, dh, H, &kh0, &kh1);
        const int8_t *xc = x + n * c->x.sn + ic * xsc;
        int8_t *yr = y + n * c->y.sn + oh * c->y.sh + oc * c->y.sc;
        const bool rows = kh0 == 0 && kh1 == KH;
        for (int32_t ow = 0; ow < c->y.w; ow++) {
          const int32_t iw0 = ow * sw - c->pw;
          const ptrdiff_t org = (ptrdiff_t)ih0 * xsh + (ptrdiff_t)iw0 * xsw;  /* the window's origin, maybe outside */
          if (rows && ow >= owa && ow < owb) {
            const int8_t *p = xc + org;
            uint32_t acc = bfull;
            if (k33) {
              /* the weights are in registers (or one stack load each) */
              if (ow + 1 < owb) {   /* two pixels */
                const int8_t *p2 = p + sw * xsw;
                uint32_t acc2 = bfull;
                acc += (uint32_t)(p[0] * w0 + p[o1] * w1 + p[o2] * w2 + p[o3] * w3 + p[o4] * w4 + p[o5] * w5 +
                                  p[o6] * w6 + p[o7] * w7 + p[o8] * w8);
                acc2 += (uint32_t)(p2[0] * w0 + p2[o1] * w1 + p2[o2] * w2 + p2[o3] * w3 + p2[o4] * w4 +
                                   p2[o5] * w5 + p2[o6] * w6 + p2[o7] * w7 + p2[o8] * w8);
                yr[ow * ysw] = cm_dsp_rq_apply(&q, acc);
                yr[(ow + 1) * ysw] = cm_dsp_rq_apply(&q, acc2);
                ow++;
                continue;
              }
              acc += (uint32_t)(p[0] * w0 + p[o1] * w1 + p[o2] * w2 + p[o3] * w3 + p[o4] * w4 + p[o5] * w5 +
                                p[o6] * w6 + p[o7] * w7 + p[o8] * w8);
            } else {
              for (int32_t t = 0; t < T; t++) acc += (uint32_t)(p[off[t]] * wk[t]);
            }
            yr[ow * ysw] = cm_dsp_rq_apply(&q, acc);
          } else {
            int32_t kw0, kw1;
            tap_range(iw0, KW, dw, W, &kw0, &kw1);
            uint32_t acc = b;
            for (int32_t kh = kh0; kh < kh1; kh++)
              for (int32_t kw = kw0; kw < kw1; kw++) {
                const int32_t t = kh * KW + kw;
                acc += (uint32_t)((xc[org + off[t]] + io) * wk[t]);
              }
            yr[ow * ysw] = cm_dsp_rq_apply(&q, acc);
          }
        }
      }
  }
}

/* multiplier 1, channels contiguous (NHWC): pixel by pixel, 4 channels a pass over the taps inside
 * the input (clipped once per pixel, for all channels): a word of input and of weights per tap,
 * widened (SXTB16), the offset added to the inputs (SADD16), 4 SMLABB/SMLATT. */
__attribute__((noinline)) static void cm_dsp_dw_pix(const qconv *c, const int8_t *x, int8_t *y) {
  const int32_t C = c->y.c, KW = c->KW, H = c->x.h, W = c->x.w, dh = c->dh, dw = c->dw, c4 = C & ~3;
  const ptrdiff_t xsh = c->x.sh, xsw = c->x.sw, tsw = (ptrdiff_t)dw * xsw, tsh = (ptrdiff_t)dh * xsh;
  const uint32_t io2 = ((uint32_t)c->in_off & 0xFFFFu) * 0x10001u;
  /* in locals: an int8 store may alias *c, so its fields would be reloaded per output */
  const int32_t *bias = c->bias, *mult = c->mult, *shift = c->shift;
  const int32_t out_off = c->out_off, amin = c->amin, amax = c->amax, in_off = c->in_off;
  const ptrdiff_t ysc = c->y.sc;
  /* 3x3: bias + offset x sum of the channel's 9 weights, once per call; the full windows then take
   * no offset adds */
  int32_t *const bfull = (int32_t *)(void *)c->scr;   /* CM_DSP_DW_BFULL_BYTES(c) of scratch */
  const bool k33 = c->KH == 3 && KW == 3 && C <= CM_DSP_DW_C && bfull;
  if (k33)
    for (int32_t ch = 0; ch < C; ch++) {
      int32_t ws = 0;
      for (int32_t t = 0; t < 9; t++) ws += c->w[(ptrdiff_t)t * C + ch];
      bfull[ch] = (int32_t)((bias ? (uint32_t)bias[ch] : 0u) + (uint32_t)in_off * (uint32_t)ws);
    }
  for (int32_t n = 0; n < c->y.n; n++)
    for (int32_t oh = 0; oh < c->y.h; oh++) {
      const int32_t ih0 = oh * c->sh - c->ph;
      int32_t kh0, kh1;
      tap_range(ih0, c->KH, dh, H, &kh0, &kh1);
      for (int32_t ow = 0; ow < c->y.w; ow++) {
        const int32_t iw0 = ow * c->sw - c->pw;
        int32_t kw0, kw1;
        tap_range(iw0, KW, dw, W, &kw0, &kw1);
        const int32_t nkh = kh1 - kh0, nkw = kw1 - kw0;
        /* the first tap inside the input, for channel 0 */
        const int8_t *x0 = x + n * c->x.sn + (ptrdiff_t)(ih0 + kh0 * dh) * xsh + (ptrdiff_t)(iw0 + kw0 * dw) * xsw;
        const int8_t *w0 = c->w + ((ptrdiff_t)kh0 * KW + kw0) * C;
        int8_t *yp = y + n * c->y.sn + oh * c->y.sh + ow * c->y.sw;
        int32_t ch = 0;
        if (k33 && nkh == 3 && nkw == 3) {
          const ptrdiff_t C2 = 2 * C, C3 = 3 * C, C6 = 6 * C, t2 = 2 * tsw;
#define CM_DW_TAPF(xp, wp)                                                                                  \
  do {                                                                                                      \
    const uint32_t xv = cm_ld32(xp), wv = cm_ld32(wp);                                                      \
    const int16x2_t xe = __sxtb16(xv), xo = cm_sxtb16_r8(xv), we = __sxtb16(wv), wo = cm_sxtb16_r8(wv);     \
    a0 = __smlabb(xe, we, a0); a2 = __smlatt(xe, we, a2);                                                   \
    a1 = __smlabb(xo, wo, a1); a3 = __smlatt(xo, wo, a3);                                                   \
  } while (0)
          for (; ch < c4; ch += 4) {
            int32_t a0 = bfull[ch], a1 = bfull[ch + 1], a2 = bfull[ch + 2], a3 = bfull[ch + 3];
            const int8_t *xr = x0 + ch, *wr = w0 + ch;
            CM_DW_TAPF(xr, wr); CM_DW_TAPF(xr + tsw, wr + C); CM_DW_TAPF(xr + t2, wr + C2);
            xr += tsh;
            CM_DW_TAPF(xr, wr + C3); CM_DW_TAPF(xr + tsw, wr + C3 + C); CM_DW_TAPF(xr + t2, wr + C3 + C2);
            xr += tsh;
            CM_DW_TAPF(xr, wr + C6); CM_DW_TAPF(xr + tsw, wr + C6 + C); CM_DW_TAPF(xr + t2, wr + C6 + C2);
            yp[ch * ysc] = cm_dsp_rq1((uint32_t)a0, mult[ch], shift[ch], out_off, amin, amax);
            yp[(ch + 1) * ysc] = cm_dsp_rq1((uint32_t)a1, mult[ch + 1], shift[ch + 1], out_off, amin, amax);
            yp[(ch + 2) * ysc] = cm_dsp_rq1((uint32_t)a2, mult[ch + 2], shift[ch + 2], out_off, amin, amax);
            yp[(ch + 3) * ysc] = cm_dsp_rq1((uint32_t)a3, mult[ch + 3], shift[ch + 3], out_off, amin, amax);
          }
#undef CM_DW_TAPF
        }
        for (; ch < c4; ch += 4) {
          int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
          const int8_t *xr = x0 + ch, *wr = w0 + ch;
#define CM_DW_TAP(xp, wp)                                                                                   \
  do {                                                                                                      \
    const uint32_t xv = cm_ld32(xp), wv = cm_ld32(wp);                                                      \
    const int16x2_t xe = __sadd16(__sxtb16(xv), (int16x2_t)io2), xo = __sadd16(cm_sxtb16_r8(xv), (int16x2_t)io2); \
    const int16x2_t we = __sxtb16(wv), wo = cm_sxtb16_r8(wv);                                               \
    a0 = __smlabb(xe, we, a0); a2 = __smlatt(xe, we, a2);                                                   \
    a1 = __smlabb(xo, wo, a1); a3 = __smlatt(xo, wo, a3);                                                   \
  } while (0)
          for (int32_t i = 0; i < nkh; i++, xr += tsh, wr += (ptrdiff_t)KW * C) {
            if (nkw == 3) {   /* the usual 3-wide row, unrolled */
              CM_DW_TAP(xr, wr); CM_DW_TAP(xr + tsw, wr + C); CM_DW_TAP(xr + 2 * tsw, wr + 2 * C);
              continue;
            }
            const int8_t *xp = xr, *wp = wr;
            for (int32_t j = 0; j < nkw; j++, xp += tsw, wp += C) CM_DW_TAP(xp, wp);
          }
#undef CM_DW_TAP
          const int32_t acc[4] = {a0, a1, a2, a3};
          for (int32_t k = 0; k < 4; k++) {
            const int32_t oc = ch + k;
            yp[oc * ysc] = cm_dsp_rq1((bias ? (uint32_t)bias[oc] : 0u) + (uint32_t)acc[k], mult[oc], shift[oc],
                                      out_off, amin, amax);
          }
        }
        for (; ch < C; ch++) {
          uint32_t acc = bias ? (uint32_t)bias[ch] : 0u;
          for (int32_t i = 0; i < nkh; i++)
            for (int32_t j = 0; j < nkw; j++)
              acc += (uint32_t)((x0[i * tsh + j * tsw + ch] + in_off) * w0[((ptrdiff_t)i * KW + j) * C + ch]);
          yp[ch * ysc] = cm_dsp_rq1(acc, mult[ch], shift[ch], out_off, amin, amax);
        }
      }
    }
}

/* Planned scratch of cm_dsp_dw (ET_SCRATCH; tools/etdeploy/kernel_scratch.py mirrors it): the KxK plane
 * path's planes and sums (cm_dwk_scratch_bytes), else the 3x3 per-channel path's folded biases (bias +
 * offset x sum of the 9 weights). A one-channel input is dsp_conv.h's (cm_dsp_dw_as_conv_scratch). */
#define CM_DSP_DW_BFULL_BYTES(c) ((c)->KH == 3 && (c)->KW == 3 && (c)->y.c <= CM_DSP_DW_C ? 4u * (uint32_t)(c)->y.c : 0u)
static uint32_t cm_dsp_dw_scratch(const qconv *c) {
  const int32_t T = c->KH * c->KW;
  if (T > CM_DSP_DW_TAPS || T < 1 || c->opg >= 4) return 0;
  cm_dwk_geo g;
  if (cm_dwk_geometry(c, &g)) return cm_dwk_scratch_bytes(&g);
  if (!(c->opg == 1 && c->x.sc == 1 && c->x.c >= 4)) return 0;
  return CM_DSP_DW_BFULL_BYTES(c);
}

static bool cm_dsp_dw(const qconv *c, const int8_t *x, int8_t *y) {
  const int32_t T = c->KH * c->KW;
  if (T > CM_DSP_DW_TAPS || T < 1) return false;
  if (c->opg >= 4) {
    /* the padded taps are 0 after the offset: x + io must fit int16 (it does for int8 zero points) */
    cm_dsp_dw_mult(c, x, y);
    return true;
  }
  cm_dwk_geo g;
  if (cm_dwk_geometry(c, &g)) {
    if (!c->scr) return false;   /* no scratch (a harness without a plan): the portable code */
    cm_dsp_dwk(c, &g, x, y);
    return true;
  }
  if (c->opg == 1 && c->x.sc == 1 && c->x.c >= 4) {
    cm_dsp_dw_pix(c, x, y);
    return true;
  }
  cm_dsp_dw_chan(c, x, y);
  return true;
}
#endif
