/* Private to firmware/kernels/cortex_m/: the dense int8 convolution on the DSP extension, for conv.c
 * (and depthwise.c: a one-channel input). Pointwise and KxK convs run on the widened-column GEMM
 * (dsp_gemm.h: KxK through an im2col of two pixels into its buffer); shapes it does not take (K over
 * its buffer, unusual requantisation) keep the cores of cm_dsp.h below. */
#ifndef ET_CORTEX_M_DSP_CONV_H
#define ET_CORTEX_M_DSP_CONV_H
#include "cm_conv.h"
#include "cm_dsp.h"
#include "dsp_gemm.h"
/* The fallback: dense conv (one group, NHWC input, unit column dilation) on the SMLAD cores: 2 output channels
 * x 2 output pixels a pass; each kernel row's taps are one contiguous run of input, clipped at the
 * borders. acc = bias + sum x.w + in_off x (sum of the weights of the taps inside the input): the tap
 * sums of the channel pair (at most CM_DSP_TAPS taps) are taken once per call. false: not this shape. */
#define CM_DSP_TAPS 64
static int32_t cm_dsp_corr(const int32_t *tap, int32_t KW, int32_t kh0, int32_t kh1, int32_t kw0, int32_t kw1) {
  int32_t s = 0;
  for (int32_t kh = kh0; kh < kh1; kh++)
    for (int32_t kw = kw0; kw < kw1; kw++) s += tap[kh * KW + kw];
  return s;
}


/* 1x1 without padding: a GEMM over the output pixels (all of an image at once when the rows are dense) */
static void cm_dsp_pointwise(const qconv *c, const int8_t *x, int8_t *y) {
  const cm_dsp_gemm_args g = {c->w, c->bias, NULL, c->mult, c->shift, c->y.c, c->x.c, c->in_off, c->out_off,
                              c->amin, c->amax, true};
  const ptrdiff_t xs = (ptrdiff_t)c->sw * c->x.sw;
  const bool flat = c->sw == 1 && c->sh == 1 && c->x.sh == c->x.w * c->x.sw && c->y.sh == c->y.w * c->y.sw &&
                    c->x.h == c->y.h && c->x.w == c->y.w;
  for (int32_t n = 0; n < c->y.n; n++) {
    if (flat) {
      cm_dsp_gemm(&g, x + n * c->x.sn, xs, c->y.h * c->y.w, y + n * c->y.sn, c->y.sw, c->y.sc);
      continue;
    }
    for (int32_t oh = 0; oh < c->y.h; oh++)
      cm_dsp_gemm(&g, x + n * c->x.sn + (ptrdiff_t)oh * c->sh * c->x.sh, xs, c->y.w,
                       y + n * c->y.sn + oh * c->y.sh, c->y.sw, c->y.sc);
  }
}

/* ---- the widened-column GEMM (dsp_gemm.h) */

static cm_dsp_mm cm_dsp_conv_mm(const qconv *c) {
  const cm_dsp_mm g = {c->w, c->bias, c->mult, c->shift, c->y.c, c->KH * c->KW * c->x.c, c->in_off, c->out_off,
                       c->amin, c->amax, true};
  return g;
}

/* planned scratch of cm_dsp_pw: the GEMM's (two columns, the table, the padded last row) */
static uint32_t cm_dsp_pw_scratch(const qconv *c) {
  const cm_dsp_mm g = cm_dsp_conv_mm(c);
  return cm_dsp_mm_shape_ok(&g, CM_DSP_KMAX) ? cm_dsp_mm_bytes(g.K, g.N, true, false) : 0u;
}

/* 1x1 without padding: all pixels of an image as the columns when its rows are dense, else row by row */
__attribute__((noinline)) static bool cm_dsp_pw(const qconv *c, const int8_t *x, int8_t *y) {
  const cm_dsp_mm g = cm_dsp_conv_mm(c);
  if (!c->scr || !cm_dsp_mm_ok(&g, CM_DSP_KMAX)) return false;
  cm_dsp_scratch s;
  cm_dsp_mm_parts(g.K, g.N, true, false, c->scr, &s);
  const ptrdiff_t xs = (ptrdiff_t)c->sw * c->x.sw;
  const bool flat = c->sw == 1 && c->sh == 1 && c->x.sh == c->x.w * c->x.sw && c->y.sh == c->y.w * c->y.sw &&
                    c->x.h == c->y.h && c->x.w == c->y.w;
  for (int32_t n = 0; n < c->y.n; n++) {
    if (flat) {
      cm_dsp_mm_run(&g, &s, x + n * c->x.sn, xs, c->y.h * c->y.w, y + n * c->y.sn, c->y.sw, c->y.sc);
      continue;
    }
    for (int32_t oh = 0; oh < c->y.h; oh++)
      cm_dsp_mm_run(&g, &s, x + n * c->x.sn + (ptrdiff_t)oh * c->sh * c->x.sh, xs, c->y.w,
                    y + n * c->y.sn + oh * c->y.sh, c->y.sw, c->y.sc);
  }
  return true;
}

/* runs of a few bytes: GCC would turn these loops into memcpy / memset calls (tens of instructions
 * for a 9-byte run) */
#define CM_DSP_NO_LIBCALL __attribute__((optimize("no-tree-loop-distribute-patterns")))

/* n bytes (unaligned words, then bytes) */
CM_DSP_NO_LIBCALL static inline void cm_dsp_copy(int8_t *d, const int8_t *s, int32_t n) {
  for (; n >= 4; n -= 4, d += 4, s += 4) {
    const uint32_t v = cm_ld32(s);
    memcpy(d, &v, 4);
  }
  for (; n > 0; n--) *d++ = *s++;
}
CM_DSP_NO_LIBCALL static inline void cm_dsp_fill(int8_t *d, int8_t v, int32_t n) {
  for (; n > 0; n--) *d++ = v;
}

/* the taps of output pixel (oh, ow) of image xn as int8, tap-major (OHWI order), padded taps = -in_off */
CM_DSP_NO_LIBCALL static void cm_dsp_im2col8(const qconv *c, const int8_t *xn, int32_t oh, int32_t ow, int8_t *col) {
  const int32_t C = c->x.c, KH = c->KH, KW = c->KW, run = KW * C, ih0 = oh * c->sh - c->ph, iw0 = ow * c->sw - c->pw;
  const int8_t pad = (int8_t)-c->in_off;
  const ptrdiff_t xsh = c->x.sh;
  if (c->dw == 1 && iw0 >= 0 && iw0 + KW <= c->x.w && ih0 >= 0 && ih0 + (KH - 1) * c->dh < c->x.h) {
    /* an interior pixel (most of them): a run of KW x C bytes a kernel row, in words */
    const int8_t *xr = xn + (ptrdiff_t)ih0 * xsh + (ptrdiff_t)iw0 * C;
    const ptrdiff_t step = (ptrdiff_t)c->dh * xsh;
    const int32_t nw = run >> 2, nb = run & 3;
    for (int32_t kh = 0; kh < KH; kh++, col += run, xr += step) {
      int8_t *d = col;
      const int8_t *sp = xr;
      for (int32_t i = 0; i < nw; i++, d += 4, sp += 4) {
        const uint32_t v = cm_ld32(sp);
        memcpy(d, &v, 4);
      }
      for (int32_t i = 0; i < nb; i++) d[i] = sp[i];
    }
    return;
  }
  int32_t kw0, kw1;
  tap_range(iw0, KW, c->dw, c->x.w, &kw0, &kw1);
  for (int32_t kh = 0; kh < KH; kh++, col += run) {
    const int32_t ih = ih0 + kh * c->dh;
    if (ih < 0 || ih >= c->x.h || kw0 >= kw1) {
      cm_dsp_fill(col, pad, run);
      continue;
    }
    const int8_t *xr = xn + (ptrdiff_t)ih * c->x.sh;
    cm_dsp_fill(col, pad, kw0 * C);
    if (c->dw == 1) {
      cm_dsp_copy(col + kw0 * C, xr + (ptrdiff_t)(iw0 + kw0) * C, (kw1 - kw0) * C);
    } else {
      for (int32_t kw = kw0; kw < kw1; kw++) cm_dsp_copy(col + kw * C, xr + (ptrdiff_t)(iw0 + kw * c->dw) * C, C);
    }
    cm_dsp_fill(col + kw1 * C, pad, (KW - kw1) * C);
  }
}

/* n groups of 4 int8 at src, widened (2 (x + io)) into column slot b (every 4th word, e then o) */
static inline void cm_dsp_widen_run(const int8_t *src, int32_t n, uint32_t io2, uint32_t *b) {
  for (; n > 0; n--, src += 4, b += 4) {
    const uint32_t a = cm_ld32(src);
    b[0] = cm_dsp_w2(__sxtb16(a), io2);
    b[2] = cm_dsp_w2(cm_sxtb16_r8(a), io2);
  }
}
static inline void cm_dsp_zero_run(int32_t n, uint32_t *b) {
  for (; n > 0; n--, b += 4) b[0] = b[2] = 0;
}

/* the taps of output pixel (oh, ow) straight into widened column slot b (C % 4 == 0: taps are whole groups) */
static void cm_dsp_im2col16(const qconv *c, const int8_t *xn, int32_t oh, int32_t ow, uint32_t io2, uint32_t *b) {
  const int32_t C4 = c->x.c >> 2, KH = c->KH, KW = c->KW, ih0 = oh * c->sh - c->ph, iw0 = ow * c->sw - c->pw;
  int32_t kw0, kw1;
  tap_range(iw0, KW, c->dw, c->x.w, &kw0, &kw1);
  for (int32_t kh = 0; kh < KH; kh++, b += 4 * KW * C4) {
    const int32_t ih = ih0 + kh * c->dh;
    if (ih < 0 || ih >= c->x.h || kw0 >= kw1) {
      cm_dsp_zero_run(KW * C4, b);
      continue;
    }
    const int8_t *xr = xn + (ptrdiff_t)ih * c->x.sh;
    cm_dsp_zero_run(kw0 * C4, b);
    if (c->dw == 1) {
      cm_dsp_widen_run(xr + (ptrdiff_t)(iw0 + kw0) * c->x.c, (kw1 - kw0) * C4, io2, b + 4 * kw0 * C4);
    } else {
      for (int32_t kw = kw0; kw < kw1; kw++)
        cm_dsp_widen_run(xr + (ptrdiff_t)(iw0 + kw * c->dw) * c->x.c, C4, io2, b + 4 * kw * C4);
    }
    cm_dsp_zero_run((KW - kw1) * C4, b + 4 * kw1 * C4);
  }
}

/* KxK (dense, NHWC input): output pixels two at a time (across rows; an odd last one overlaps the
 * pair before it) im2col'd into the widened buffer, then the channel pairs. false: not this shape. */
/* planned scratch of cm_dsp_convk (0: not its shapes): the GEMM's, with the int8 im2col rows unless the
 * channels are a multiple of 4 */
static uint32_t cm_dsp_convk_scratch(const qconv *c) {
  const cm_dsp_mm g = cm_dsp_conv_mm(c);
  const bool aligned = (c->x.c & 3) == 0;
  if (!aligned && (g.K > CM_DSP_KCOL || c->in_off < -127 || c->in_off > 128)) return 0u;
  return cm_dsp_mm_shape_ok(&g, CM_DSP_KMAX) ? cm_dsp_mm_bytes(g.K, g.N, true, !aligned) : 0u;
}
__attribute__((noinline)) static bool cm_dsp_convk(const qconv *c, const int8_t *x, int8_t *y) {
  const cm_dsp_mm g = cm_dsp_conv_mm(c);
  const bool aligned = (c->x.c & 3) == 0;
  if (!c->scr || !cm_dsp_convk_scratch(c) || !cm_dsp_mm_ok(&g, CM_DSP_KMAX)) return false;
  cm_dsp_scratch s;
  cm_dsp_mm_parts(g.K, g.N, true, !aligned, c->scr, &s);
  const uint32_t io2 = ((uint32_t)g.io & 0xFFFFu) * 0x10001u;
  const int8_t *wl = cm_dsp_last_row(&g, &s);
  const int32_t OW = c->y.w, M = c->y.h * OW;
  for (int32_t n0 = 0; n0 < g.N;) {
    const int32_t nn = cm_dsp_block(g.N, n0);
    cm_dsp_tab(&g, n0, nn, s.tab);
    for (int32_t n = 0; n < c->y.n; n++) {
      const int8_t *xn = x + n * c->x.sn;
      int8_t *yn = y + n * c->y.sn + n0 * c->y.sc;
      for (int32_t m = 0; m < M; m += 2) {
        if (m + 2 > M) m = M > 1 ? M - 2 : m;   /* an odd last pixel: the pair before it again */
        int8_t *yp[2];
        for (int32_t p = 0; p < 2; p++) {
          const int32_t mp = m + p < M ? m + p : m, oh = mp / OW, ow = mp - oh * OW;
          yp[p] = yn + oh * c->y.sh + ow * c->y.sw;
          if (aligned) cm_dsp_im2col16(c, xn, oh, ow, io2, s.x + p);
          else cm_dsp_im2col8(c, xn, oh, ow, s.col[p]);
        }
        if (!aligned) cm_dsp_widen2(s.col[0], s.col[1], g.K, io2, s.x);
        cm_dsp_cols2(&g, s.x, n0, nn, s.tab, wl, yp[0], yp[1], c->y.sc);
      }
    }
    n0 += nn;
  }
  return true;
}

/* A depthwise call on a one-channel input (a first layer: DS-CNN's 10x4 conv is exported so) is a dense
 * conv with one input channel: its 1HWO weights transposed to OHWI into the planned scratch (the first
 * CM_A16(O T) bytes), then cm_dsp_convk on the rest. false: not this shape. */
#define CM_DSP_DWT 4096
static bool cm_dsp_dw_view(const qconv *c, qconv *d) {
  const int32_t O = c->y.c, T = c->KH * c->KW;
  if (!c->depthwise || c->x.c != 1 || c->x.sw != 1 || O < 1 || T < 1 || O * T > CM_DSP_DWT) return false;
  *d = *c;
  d->depthwise = false; d->cpg = 1; d->opg = O;
  return true;
}
/* planned scratch of cm_dsp_dw_as_conv (ET_SCRATCH; kernel_scratch.py mirrors it) */
CM_UNUSED static uint32_t cm_dsp_dw_as_conv_scratch(const qconv *c) {
  qconv d;
  if (!cm_dsp_dw_view(c, &d)) return 0u;
  const uint32_t k = cm_dsp_convk_scratch(&d);
  return k ? CM_DSP_A16(c->y.c * c->KH * c->KW) + k : 0u;
}
CM_UNUSED __attribute__((noinline)) static bool cm_dsp_dw_as_conv(const qconv *c, const int8_t *x, int8_t *y) {
  const int32_t O = c->y.c, T = c->KH * c->KW;
  qconv d;
  if (!c->scr || !cm_dsp_dw_view(c, &d) || !cm_dsp_convk_scratch(&d)) return false;
  int8_t *const wt = c->scr;   /* CM_DSP_A16(O T) bytes of scratch */
  const int8_t *const w = c->w;   /* a local: the int8 stores below may alias *c */
  for (int32_t o = 0; o < O; o++)
    for (int32_t t = 0; t < T; t++) wt[o * T + t] = w[(ptrdiff_t)t * O + o];
  d.w = wt; d.scr = c->scr + CM_DSP_A16(O * T);
  return cm_dsp_convk(&d, x, y);
}

/* Planned scratch of cm_dsp_conv (ET_SCRATCH; tools/etdeploy/kernel_scratch.py mirrors it): the pointwise
 * or the KxK GEMM's */
CM_UNUSED static uint32_t cm_dsp_conv_scratch(const qconv *c) {
  const int32_t C = c->x.c;
  if (c->depthwise || c->cpg != C || c->x.sc != 1 || c->x.sw != C || C <= 0) return 0u;
  if (c->KH == 1 && c->KW == 1 && c->ph == 0 && c->pw == 0) return cm_dsp_pw_scratch(c);
  return cm_dsp_convk_scratch(c);
}

CM_UNUSED __attribute__((noinline)) static bool cm_dsp_conv(const qconv *c, const int8_t *x, int8_t *y) {
  const int32_t C = c->x.c, KH = c->KH, KW = c->KW, O = c->y.c, H = c->x.h, W = c->x.w;
  if (c->depthwise || c->cpg != C || c->x.sc != 1 || c->x.sw != C || C <= 0) return false;
  if (KH == 1 && KW == 1 && c->ph == 0 && c->pw == 0) {
    if (cm_dsp_pw(c, x, y)) return true;
    if (c->dw != 1) return false;
    cm_dsp_pointwise(c, x, y);
    return true;
  }
  if (cm_dsp_convk(c, x, y)) return true;
  if (c->dw != 1 || KH * KW > CM_DSP_TAPS) return false;
  const int32_t K = KH * KW * C, io = c->in_off, dh = c->dh;
  const ptrdiff_t xsh = c->x.sh, step = (ptrdiff_t)c->sw * C;
  int32_t tap[2][CM_DSP_TAPS];
  for (int32_t oc = 0; oc < O; oc += 2) {
    const int32_t oc1 = oc + 1 < O ? oc + 1 : oc;  /* an odd last channel is computed twice, stored once */
    const int8_t *w0 = c->w + (ptrdiff_t)oc * K, *w1 = c->w + (ptrdiff_t)oc1 * K;
    int32_t full0 = 0, full1 = 0;
    for (int32_t t = 0; t < KH * KW; t++) {
      tap[0][t] = cm_dsp_sum(w0 + (ptrdiff_t)t * C, C); full0 += tap[0][t];
      tap[1][t] = cm_dsp_sum(w1 + (ptrdiff_t)t * C, C); full1 += tap[1][t];
    }
    const uint32_t b0 = c->bias ? (uint32_t)c->bias[oc] : 0u, b1 = c->bias ? (uint32_t)c->bias[oc1] : 0u;
    cm_dsp_rq q0, q1;
    cm_dsp_rq_set(&q0, c->mult[oc], c->shift[oc], c->out_off, c->amin, c->amax);
    cm_dsp_rq_set(&q1, c->mult[oc1], c->shift[oc1], c->out_off, c->amin, c->amax);
    const ptrdiff_t s0 = oc * c->y.sc, s1 = oc1 * c->y.sc;
    for (int32_t n = 0; n < c->y.n; n++) {
      const int8_t *xn = x + n * c->x.sn;
      for (int32_t oh = 0; oh < c->y.h; oh++) {
        const int32_t ih0 = oh * c->sh - c->ph;
        int32_t kh0, kh1;
        tap_range(ih0, KH, dh, H, &kh0, &kh1);
        int8_t *yr = y + n * c->y.sn + oh * c->y.sh;
        for (int32_t ow = 0; ow < c->y.w;) {
          const int32_t iw0 = ow * c->sw - c->pw;
          int32_t kw0, kw1;
          tap_range(iw0, KW, 1, W, &kw0, &kw1);
          const bool full = kh0 == 0 && kh1 == KH && kw0 == 0 && kw1 == KW;
          const int32_t c0 = full ? full0 : cm_dsp_corr(tap[0], KW, kh0, kh1, kw0, kw1);
          const int32_t c1 = full ? full1 : cm_dsp_corr(tap[1], KW, kh0, kh1, kw0, kw1);
          const int8_t *xw = xn + (ptrdiff_t)iw0 * C + kw0 * C;
          const int32_t run = (kw1 - kw0) * C;
          /* the next pixel takes the same taps: a 2x2 pass */
          int32_t k2w0 = 0, k2w1 = 0;
          if (ow + 1 < c->y.w) tap_range(iw0 + c->sw, KW, 1, W, &k2w0, &k2w1);
          int8_t *yp = yr + ow * c->y.sw;
          if (ow + 1 < c->y.w && k2w0 == kw0 && k2w1 == kw1) {
            int32_t acc[4] = {0, 0, 0, 0};
            for (int32_t kh = kh0; kh < kh1; kh++) {
              const int8_t *xr = xw + (ptrdiff_t)(ih0 + kh * dh) * xsh;
              const ptrdiff_t wo = ((ptrdiff_t)kh * KW + kw0) * C;
              cm_dsp_dot2x2(xr, xr + step, w0 + wo, w1 + wo, run, acc);
            }
            const uint32_t k0 = (uint32_t)io * (uint32_t)c0, k1 = (uint32_t)io * (uint32_t)c1;
            if (oc1 != oc) {
              (yp)[s1] = cm_dsp_rq_apply(&q1, b1 + k1 + (uint32_t)acc[2]);
              (yp + c->y.sw)[s1] = cm_dsp_rq_apply(&q1, b1 + k1 + (uint32_t)acc[3]);
            }
            (yp)[s0] = cm_dsp_rq_apply(&q0, b0 + k0 + (uint32_t)acc[0]);
            (yp + c->y.sw)[s0] = cm_dsp_rq_apply(&q0, b0 + k0 + (uint32_t)acc[1]);
            ow += 2;
          } else {
            int32_t acc[2] = {0, 0};
            for (int32_t kh = kh0; kh < kh1; kh++) {
              const int8_t *xr = xw + (ptrdiff_t)(ih0 + kh * dh) * xsh;
              const ptrdiff_t wo = ((ptrdiff_t)kh * KW + kw0) * C;
              cm_dsp_dot1x2(xr, w0 + wo, w1 + wo, run, acc);
            }
            if (oc1 != oc) (yp)[s1] = cm_dsp_rq_apply(&q1, b1 + (uint32_t)io * (uint32_t)c1 + (uint32_t)acc[1]);
            (yp)[s0] = cm_dsp_rq_apply(&q0, b0 + (uint32_t)io * (uint32_t)c0 + (uint32_t)acc[0]);
            ow += 1;
          }
        }
      }
    }
  }
  return true;
}
#endif
