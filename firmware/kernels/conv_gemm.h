/* Float32 convolution paths for many channels, included by conv.c only (static functions):
 *
 * - conv_pw_nchw: pointwise 1x1, stride 1, no padding, planes contiguous (NCHW): a GEMM
 *   Y[o, p] = b[o] + sum_c W[o, c] X[c, p] with pixels on the vector lanes, 2 output channels x 3
 *   vectors (12 pixels) of accumulators a pass: per input channel 3 loads, 2 weight loads, 6 FMAs.
 * - conv_nhwc: any KxK conv (stride, padding, dilation, groups with several channels each) of
 *   channels-last input and output: output channels on the lanes (the weight column of 8 output
 *   channels gathered, lanes one weight row apart), 3 output pixels x 8 channels of accumulators held
 *   across every tap: per (tap, input channel) 2 gathers, 3 scalar input loads, 6 FMAs. Taps outside
 *   the image read a zero row (no im2col buffer: the input is read in place).
 * - conv_dw_nhwc: depthwise (one input channel per group, depth multiplier 1), channels-last: channels
 *   on the lanes, per tap one input vector, one gathered weight vector, one FMA; taps outside the
 *   image skipped (their range per output row and column computed once).
 *
 * Portable C builds the same loops with plain arrays of accumulators. */
#ifndef ET_CONV_GEMM_H
#define ET_CONV_GEMM_H

/* zeros read by taps outside the image (conv_nhwc): one row of up to CONV_ZMAX input channels */
#define CONV_ZMAX 512

/* ---------------------------------------------------------------- pointwise NCHW */

typedef struct {
  const float *x, *w, *bias;
  float *y;
  ptrdiff_t xc, wo, wc, yo; /* x channel stride, weight strides (o, c), y channel stride */
  int32_t P, C;             /* pixels per plane, input channels */
} pw_args;

#ifdef CONV_MVE
static inline __attribute__((always_inline)) void pw_block(const pw_args *a, int32_t o, int32_t p, int MI) {
  const int32_t n = a->P - p;
  const mve_pred16_t q0 = vctp32q((uint32_t)n), q1 = vctp32q((uint32_t)(n > 4 ? n - 4 : 0)),
                     q2 = vctp32q((uint32_t)(n > 8 ? n - 8 : 0));
  const float b0 = a->bias ? a->bias[o] : 0.0f, b1 = (MI > 1 && a->bias) ? a->bias[o + 1] : 0.0f;
  float32x4_t a00 = vdupq_n_f32(b0), a01 = a00, a02 = a00;
  float32x4_t a10 = vdupq_n_f32(b1), a11 = a10, a12 = a10;
  const float *xp = a->x + p, *w0 = a->w + o * a->wo, *w1 = w0 + a->wo;
  const ptrdiff_t xc = a->xc, wc = a->wc;
  for (int32_t c = a->C; c > 0; c--, xp += xc, w0 += wc, w1 += wc) {
    const float32x4_t v0 = vld1q_z_f32(xp, q0), v1 = vld1q_z_f32(xp + 4, q1), v2 = vld1q_z_f32(xp + 8, q2);
    const float s0 = *w0;
    a00 = vfmaq_n_f32(a00, v0, s0); a01 = vfmaq_n_f32(a01, v1, s0); a02 = vfmaq_n_f32(a02, v2, s0);
    if (MI > 1) {
      const float s1 = *w1;
      a10 = vfmaq_n_f32(a10, v0, s1); a11 = vfmaq_n_f32(a11, v1, s1); a12 = vfmaq_n_f32(a12, v2, s1);
    }
  }
  float *y = a->y + o * a->yo + p;
  vst1q_p_f32(y, a00, q0); vst1q_p_f32(y + 4, a01, q1); vst1q_p_f32(y + 8, a02, q2);
  if (MI > 1) { y += a->yo; vst1q_p_f32(y, a10, q0); vst1q_p_f32(y + 4, a11, q1); vst1q_p_f32(y + 8, a12, q2); }
}
#else
static inline __attribute__((always_inline)) void pw_block(const pw_args *a, int32_t o, int32_t p, int MI) {
  const int32_t n = a->P - p < 12 ? a->P - p : 12;
  float acc[2][12];
  for (int m = 0; m < MI; m++) {
    const float b = a->bias ? a->bias[o + m] : 0.0f;
    for (int j = 0; j < 12; j++) acc[m][j] = b;
  }
  const float *xp = a->x + p, *w0 = a->w + o * a->wo;
  for (int32_t c = 0; c < a->C; c++, xp += a->xc, w0 += a->wc) {
    for (int m = 0; m < MI; m++) {
      const float s = w0[m * a->wo];
      if (n == 12) { for (int j = 0; j < 12; j++) acc[m][j] += s * xp[j]; }
      else { for (int j = 0; j < n; j++) acc[m][j] += s * xp[j]; }
    }
  }
  for (int m = 0; m < MI; m++)
    for (int j = 0; j < n; j++) a->y[(o + m) * a->yo + p + j] = acc[m][j];
}
#endif

static __attribute__((noinline)) void pw_block2(const pw_args *a, int32_t o, int32_t p) { pw_block(a, o, p, 2); }
static __attribute__((noinline)) void pw_block1(const pw_args *a, int32_t o, int32_t p) { pw_block(a, o, p, 1); }

/* O output planes of a->P pixels */
static void conv_pw_nchw(const pw_args *a, int32_t O) {
  int32_t o = 0;
  for (; o + 2 <= O; o += 2)
    for (int32_t p = 0; p < a->P; p += 12) pw_block2(a, o, p);
  if (o < O)
    for (int32_t p = 0; p < a->P; p += 12) pw_block1(a, o, p);
}

/* ---------------------------------------------------------------- KxK channels-last */

typedef struct {
  const float *x, *w, *bias; /* input of the group (batch and group offsets applied), weights and bias of its channels */
  float *y;                  /* output of the group at pixel (0, 0) */
  const float *zero;         /* CONV_ZMAX zeros */
  int32_t H, W, C, O, KH, KW, sh, sw, ph, pw, dh, dw, OW;
  ptrdiff_t xh, xw, xc;      /* input strides */
  ptrdiff_t wo, wc, wh, ww;  /* weight strides */
  ptrdiff_t yh, yw;          /* output strides (channels contiguous) */
} nhwc_args;

/* np (1..3) output pixels (oh, ow .. ow + np - 1) x all output channels */
#ifdef CONV_MVE
static __attribute__((noinline)) void nhwc_pixels(const nhwc_args *a, int32_t oh, int32_t ow, int32_t np) {
  const uint32x4_t off = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)a->wo);
  const ptrdiff_t wo4 = 4 * a->wo, xc = a->xc, wc = a->wc;
  const int32_t C = a->C;
  float *y = a->y + oh * a->yh + ow * a->yw;
  for (int32_t o = 0; o < a->O; o += 8) {
    const int32_t n = a->O - o;
    const mve_pred16_t q0 = vctp32q((uint32_t)n), q1 = vctp32q((uint32_t)(n > 4 ? n - 4 : 0));
    float32x4_t b0 = vdupq_n_f32(0.0f), b1 = b0;
    if (a->bias) { b0 = vld1q_z_f32(a->bias + o, q0); b1 = vld1q_z_f32(a->bias + o + 4, q1); }
    float32x4_t a00 = b0, a01 = b1, a10 = b0, a11 = b1, a20 = b0, a21 = b1;
    for (int32_t kh = 0; kh < a->KH; kh++) {
      const int32_t ih = oh * a->sh - a->ph + kh * a->dh;
      if (ih < 0 || ih >= a->H) continue;
      const float *xr = a->x + ih * a->xh;
      for (int32_t kw = 0; kw < a->KW; kw++) {
        const float *s[3];
        for (int m = 0; m < 3; m++) {
          const int32_t iw = (ow + m) * a->sw - a->pw + kw * a->dw;
          s[m] = (m < np && iw >= 0 && iw < a->W) ? xr + iw * a->xw : a->zero;
        }
        const float *s0 = s[0], *s1 = s[1], *s2 = s[2];
        const float *wp = a->w + o * a->wo + kh * a->wh + kw * a->ww;
        for (int32_t c = C; c > 0; c--, s0 += xc, s1 += xc, s2 += xc, wp += wc) {
          const float32x4_t v0 = vldrwq_gather_shifted_offset_z_f32(wp, off, q0);
          const float32x4_t v1 = vldrwq_gather_shifted_offset_z_f32(wp + wo4, off, q1);
          const float x0 = *s0, x1 = *s1, x2 = *s2;
          a00 = vfmaq_n_f32(a00, v0, x0); a01 = vfmaq_n_f32(a01, v1, x0);
          a10 = vfmaq_n_f32(a10, v0, x1); a11 = vfmaq_n_f32(a11, v1, x1);
          a20 = vfmaq_n_f32(a20, v0, x2); a21 = vfmaq_n_f32(a21, v1, x2);
        }
      }
    }
    vst1q_p_f32(y + o, a00, q0); vst1q_p_f32(y + o + 4, a01, q1);
    if (np > 1) { vst1q_p_f32(y + a->yw + o, a10, q0); vst1q_p_f32(y + a->yw + o + 4, a11, q1); }
    if (np > 2) { vst1q_p_f32(y + 2 * a->yw + o, a20, q0); vst1q_p_f32(y + 2 * a->yw + o + 4, a21, q1); }
  }
}
#else
static __attribute__((noinline)) void nhwc_pixels(const nhwc_args *a, int32_t oh, int32_t ow, int32_t np) {
  float *y = a->y + oh * a->yh + ow * a->yw;
  for (int32_t o = 0; o < a->O; o += 8) {
    const int32_t n = a->O - o < 8 ? a->O - o : 8;
    float acc[3][8];
    for (int m = 0; m < 3; m++)
      for (int j = 0; j < 8; j++) acc[m][j] = (a->bias && j < n) ? a->bias[o + j] : 0.0f;
    for (int32_t kh = 0; kh < a->KH; kh++) {
      const int32_t ih = oh * a->sh - a->ph + kh * a->dh;
      if (ih < 0 || ih >= a->H) continue;
      const float *xr = a->x + ih * a->xh;
      for (int32_t kw = 0; kw < a->KW; kw++) {
        const float *s[3];
        for (int m = 0; m < 3; m++) {
          const int32_t iw = (ow + m) * a->sw - a->pw + kw * a->dw;
          s[m] = (m < np && iw >= 0 && iw < a->W) ? xr + iw * a->xw : a->zero;
        }
        const float *wp = a->w + o * a->wo + kh * a->wh + kw * a->ww;
        for (int32_t c = 0; c < a->C; c++) {
          const float x0 = s[0][c * a->xc], x1 = s[1][c * a->xc], x2 = s[2][c * a->xc];
          for (int j = 0; j < n; j++) {
            const float wv = wp[j * a->wo + c * a->wc];
            acc[0][j] += x0 * wv; acc[1][j] += x1 * wv; acc[2][j] += x2 * wv;
          }
        }
      }
    }
    for (int m = 0; m < np; m++)
      for (int j = 0; j < n; j++) y[m * a->yw + o + j] = acc[m][j];
  }
}
#endif

static void conv_nhwc(const nhwc_args *a, int32_t OH) {
  for (int32_t oh = 0; oh < OH; oh++)
    for (int32_t ow = 0; ow < a->OW; ow += 3) nhwc_pixels(a, oh, ow, a->OW - ow < 3 ? a->OW - ow : 3);
}

/* ---------------------------------------------------------------- depthwise channels-last */

/* one output pixel, all channels: taps kh in [kh0, kh1), kw in [kw0, kw1); (ih0, iw0) is the input
 * pixel of tap (0, 0), maybe outside the image (only taps in the ranges are read) */
#ifdef CONV_MVE
static __attribute__((noinline)) void dw_pixel(const nhwc_args *a, int32_t ih0, int32_t iw0, float *y, int32_t kh0,
                                               int32_t kh1, int32_t kw0, int32_t kw1) {
  const uint32x4_t off = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)a->wo);
  const ptrdiff_t xstep = a->dw * a->xw, rstep = a->dh * a->xh;
  const float *x0 = a->x + (ih0 + kh0 * a->dh) * a->xh + (iw0 + kw0 * a->dw) * a->xw;
  const float *w0 = a->w + kh0 * a->wh + kw0 * a->ww;
  for (int32_t c = 0; c < a->O; c += 4) {
    const mve_pred16_t q = vctp32q((uint32_t)(a->O - c));
    float32x4_t acc = a->bias ? vld1q_z_f32(a->bias + c, q) : vdupq_n_f32(0.0f);
    const float *xr = x0 + c * a->xc, *wr = w0 + c * a->wo;
    for (int32_t kh = kh1 - kh0; kh > 0; kh--, xr += rstep, wr += a->wh) {
      const float *xk = xr, *wk = wr;
      for (int32_t kw = kw1 - kw0; kw > 0; kw--, xk += xstep, wk += a->ww)
        acc = vfmaq_f32(acc, vld1q_z_f32(xk, q), vldrwq_gather_shifted_offset_z_f32(wk, off, q));
    }
    vst1q_p_f32(y + c, acc, q);
  }
}
#else
static __attribute__((noinline)) void dw_pixel(const nhwc_args *a, int32_t ih0, int32_t iw0, float *y, int32_t kh0,
                                               int32_t kh1, int32_t kw0, int32_t kw1) {
  for (int32_t c = 0; c < a->O; c++) {
    float acc = a->bias ? a->bias[c] : 0.0f;
    for (int32_t kh = kh0; kh < kh1; kh++)
      for (int32_t kw = kw0; kw < kw1; kw++)
        acc += a->x[c * a->xc + (ih0 + kh * a->dh) * a->xh + (iw0 + kw * a->dw) * a->xw] *
               a->w[c * a->wo + kh * a->wh + kw * a->ww];
    y[c] = acc;
  }
}
#endif

/* first and one-past-last k < K with i0 + k * d in [0, n) */
static void tap_range(int32_t i0, int32_t d, int32_t n, int32_t K, int32_t *k0, int32_t *k1) {
  int32_t a = i0 < 0 ? (-i0 + d - 1) / d : 0, b = K;
  while (b > a && i0 + (b - 1) * d >= n) b--;
  *k0 = a < K ? a : K;
  *k1 = b;
}

/* a->x is the input at pixel (0, 0) channel 0; a->O channels, one input channel each */
static void conv_dw_nhwc(const nhwc_args *a, int32_t OH) {
  for (int32_t oh = 0; oh < OH; oh++) {
    const int32_t ih0 = oh * a->sh - a->ph;
    int32_t kh0, kh1;
    tap_range(ih0, a->dh, a->H, a->KH, &kh0, &kh1);
    for (int32_t ow = 0; ow < a->OW; ow++) {
      const int32_t iw0 = ow * a->sw - a->pw;
      int32_t kw0, kw1;
      tap_range(iw0, a->dw, a->W, a->KW, &kw0, &kw1);
      dw_pixel(a, ih0, iw0, a->y + oh * a->yh + ow * a->yw, kh0, kh1, kw0, kw1);
    }
  }
}

#endif
