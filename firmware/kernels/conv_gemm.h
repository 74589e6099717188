/* Float32 convolution paths for many channels, included by conv.c only (static functions):
 *
 * - conv_pw_nchw: pointwise 1x1, stride 1, no padding, planes contiguous (NCHW): a GEMM
 *   Y[o, p] = b[o] + sum_c W[o, c] X[c, p] with pixels on the vector lanes, 2 output channels x 3
 *   vectors (12 pixels) of accumulators a pass: per input channel 3 loads, 2 weight loads, 6 FMAs.
 * - nhwc_pixels (driven by conv_col.h's conv_nhwc): any KxK conv (stride, padding, dilation, groups
 *   with several channels each) of channels-last input and output: output channels on the lanes (the weight column of 8 output
 *   channels gathered, lanes one weight row apart), 3 output pixels x 8 channels of accumulators held
 *   across every tap: per (tap, input channel) 2 gathers, 3 scalar input loads, 6 FMAs. Taps outside
 *   the image count as zeros (no im2col buffer: the input is read in place).
 * - gemm3: pointwise channels-last convs, small NCHW planes (output channels on the lanes), and the tap
 *   buffer of conv_col.h; gemv4: one-pixel planes (a matrix-vector product).
 * Few input channels: conv_col.h, conv_rows.h. Depthwise: conv_dw.h. Portable C builds the same loops with plain arrays of accumulators. */
#ifndef ET_CONV_GEMM_H
#define ET_CONV_GEMM_H

/* the zero row read by padded taps (conv_nhwc, channels contiguous or one channel): up to this many */
#define CONV_ZMAX 256

/* ---------------------------------------------------------------- pointwise NCHW */

typedef struct {
  const float *x, *w, *bias;
  float *y;
  ptrdiff_t xc, wo, wc, yo; /* x channel stride, weight strides (o, c), y channel stride */
  int32_t P, C;             /* pixels per plane, input channels */
} pw_args;

#ifdef CONV_MVE
/* FULL: 12 pixels left (no predicates); UNIT: weights contiguous along c (post-incremented loads) */
static inline __attribute__((always_inline)) void pw_block(const pw_args *a, int32_t o, int32_t p, int MI, int FULL,
                                                           int UNIT) {
  const int32_t n = a->P - p;
  const mve_pred16_t q0 = vctp32q((uint32_t)n), q1 = vctp32q((uint32_t)(n > 4 ? n - 4 : 0)),
                     q2 = vctp32q((uint32_t)(n > 8 ? n - 8 : 0));
  const float b0 = a->bias ? a->bias[o] : 0.0f, b1 = (MI > 1 && a->bias) ? a->bias[o + 1] : 0.0f;
  float32x4_t a00 = vdupq_n_f32(b0), a01 = a00, a02 = a00;
  float32x4_t a10 = vdupq_n_f32(b1), a11 = a10, a12 = a10;
  const float *xp = a->x + p, *w0 = a->w + o * a->wo, *w1 = w0 + a->wo;
  const ptrdiff_t xc = a->xc, wc = UNIT ? 1 : a->wc;
  for (int32_t c = a->C; c > 0; c--, xp += xc, w0 += wc, w1 += wc) {
    float32x4_t v0, v1, v2;
    if (FULL) { v0 = vld1q_f32(xp); v1 = vld1q_f32(xp + 4); v2 = vld1q_f32(xp + 8); }
    else { v0 = vld1q_z_f32(xp, q0); v1 = vld1q_z_f32(xp + 4, q1); v2 = vld1q_z_f32(xp + 8, q2); }
    const float s0 = *w0;
    a00 = vfmaq_n_f32(a00, v0, s0); a01 = vfmaq_n_f32(a01, v1, s0); a02 = vfmaq_n_f32(a02, v2, s0);
    if (MI > 1) {
      const float s1 = *w1;
      a10 = vfmaq_n_f32(a10, v0, s1); a11 = vfmaq_n_f32(a11, v1, s1); a12 = vfmaq_n_f32(a12, v2, s1);
    }
  }
  float *y = a->y + o * a->yo + p;
  for (int m = 0; m < MI; m++, y += a->yo) {
    const float32x4_t r0 = m ? a10 : a00, r1 = m ? a11 : a01, r2 = m ? a12 : a02;
    if (FULL) { vst1q_f32(y, r0); vst1q_f32(y + 4, r1); vst1q_f32(y + 8, r2); }
    else { vst1q_p_f32(y, r0, q0); vst1q_p_f32(y + 4, r1, q1); vst1q_p_f32(y + 8, r2, q2); }
  }
}
#else
static inline __attribute__((always_inline)) void pw_block(const pw_args *a, int32_t o, int32_t p, int MI, int FULL,
                                                           int UNIT) {
  (void)FULL; (void)UNIT;
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

#define PW_FN(MI, FULL, UNIT)                                                                       \
  static __attribute__((noinline)) void pw_block_##MI##FULL##UNIT(const pw_args *a, int32_t o, int32_t p) { \
    pw_block(a, o, p, MI, FULL, UNIT);                                                                \
  }
PW_FN(1, 0, 0) PW_FN(1, 0, 1) PW_FN(1, 1, 0) PW_FN(1, 1, 1) PW_FN(2, 0, 0) PW_FN(2, 0, 1) PW_FN(2, 1, 0) PW_FN(2, 1, 1)
#undef PW_FN
typedef void (*pw_fn)(const pw_args *, int32_t, int32_t);
static const pw_fn pw_blocks[2][2][2] = {{{pw_block_100, pw_block_101}, {pw_block_110, pw_block_111}},
                                         {{pw_block_200, pw_block_201}, {pw_block_210, pw_block_211}}};

/* ---------------------------------------------------------------- KxK channels-last */

typedef struct {
  const float *x, *w, *bias; /* input of the group (batch and group offsets applied), weights and bias of its channels */
  float *y;                  /* output of the group at pixel (0, 0) */
  int32_t H, W, C, O, KH, KW, sh, sw, ph, pw, dh, dw, OW;
  ptrdiff_t xh, xw, xc;      /* input strides */
  ptrdiff_t wo, wc, wh, ww;  /* weight strides */
  ptrdiff_t yh, yw, yc;      /* output strides */
  int32_t flat;              /* conv_nhwc: (kw, c) steps one float in input and weights (dw == 1) */
  const float *zero;         /* conv_nhwc: C zeros at the input's channel stride, or NULL */
} nhwc_args;

/* np (1..3) output pixels (oh, ow .. ow + np - 1) x all output channels */
#ifdef CONV_MVE
/* Shared by nhwc_block and gemm3_o, for 8 output channels from o (of O): the lane predicates of the
 * two vectors, and their start (the bias, or 0; FULL: all 8 channels exist). */
static inline __attribute__((always_inline)) void oc8_start(const float *bias, int32_t o, int32_t O, int FULL,
                                                            mve_pred16_t *q0, mve_pred16_t *q1, float32x4_t *b0,
                                                            float32x4_t *b1) {
  const int32_t n = O - o;
  *q0 = vctp32q((uint32_t)n);
  *q1 = vctp32q((uint32_t)(n > 4 ? n - 4 : 0));
  *b0 = *b1 = vdupq_n_f32(0.0f);
  if (bias) {
    if (FULL) { *b0 = vld1q_f32(bias + o); *b1 = vld1q_f32(bias + o + 4); }
    else { *b0 = vld1q_z_f32(bias + o, *q0); *b1 = vld1q_z_f32(bias + o + 4, *q1); }
  }
}

/* ... and their store: pixels m < np (at most 3) at y + m * ys, channels o + 0..3 in a<m>0 and
 * o + 4..7 in a<m>1, channel c at c * yc (yc != 1: scattered to channel planes) */
static inline __attribute__((always_inline)) void oc8_store(float *y, ptrdiff_t ys, int32_t o, ptrdiff_t yc,
                                                            uint32x4_t yoff, int32_t np, mve_pred16_t q0,
                                                            mve_pred16_t q1,
                                                            float32x4_t a00, float32x4_t a01, float32x4_t a10,
                                                            float32x4_t a11, float32x4_t a20, float32x4_t a21,
                                                            int FULL) {
  for (int m = 0; m < 3; m++) {
    if (m >= np) break;
    float *yp = y + m * ys + o * yc;
    const float32x4_t r0 = m == 0 ? a00 : m == 1 ? a10 : a20, r1 = m == 0 ? a01 : m == 1 ? a11 : a21;
    if (yc != 1) {
      vstrwq_scatter_shifted_offset_p_f32(yp, yoff, r0, q0);
      vstrwq_scatter_shifted_offset_p_f32(yp + 4 * yc, yoff, r1, q1);
    } else if (FULL) {
      vst1q_f32(yp, r0); vst1q_f32(yp + 4, r1);
    } else {
      vst1q_p_f32(yp, r0, q0); vst1q_p_f32(yp + 4, r1, q1);
    }
  }
}

/* output channels [o0, o1) in blocks of 8; FULL: every block whole (no predicates); UNIT: input and
 * weights contiguous along c */
static inline __attribute__((always_inline)) void nhwc_block(const nhwc_args *a, int32_t oh, int32_t ow, int32_t np,
                                                             int32_t o0, int32_t o1, int FULL, int UNIT) {
  const uint32x4_t off = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)a->wo);
  const uint32x4_t yoff = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)a->yc);
  const ptrdiff_t wo4 = 4 * a->wo, xc = UNIT ? 1 : a->xc, wc = UNIT ? 1 : a->wc;
  const int32_t C = a->C;
  float *y = a->y + oh * a->yh + ow * a->yw;
  for (int32_t o = o0; o < o1; o += 8) {
    mve_pred16_t q0, q1;
    float32x4_t b0, b1;
    oc8_start(a->bias, o, a->O, FULL, &q0, &q1, &b0, &b1);
    float32x4_t a00 = b0, a01 = b1, a10 = b0, a11 = b1, a20 = b0, a21 = b1;
    /* a kernel row whose taps are all inside the image for the 3 pixels, with (kw, c) one run in the
     * input and the weights (a->flat): one loop of KW * C steps instead of KW loops of C */
    const int32_t iwa = ow * a->sw - a->pw, iwb = (ow + 2) * a->sw - a->pw + (a->KW - 1) * a->dw;
    const int flat = a->flat && np == 3 && iwa >= 0 && iwb < a->W;
    const int32_t nkw = flat ? 1 : a->KW, cnt = flat ? a->KW * C : C;
    const ptrdiff_t sx = flat ? 1 : xc, sk = flat ? 1 : wc;
    for (int32_t kh = 0; kh < a->KH; kh++) {
      const int32_t ih = oh * a->sh - a->ph + kh * a->dh;
      if (ih < 0 || ih >= a->H) continue;
      const float *xr = a->x + ih * a->xh;
      for (int32_t kw = 0; kw < nkw; kw++) {
        const float *s[3];
        int ok[3], all = 1;
        /* a pixel whose tap is outside the image reads the zero row when there is one, else its row's
         * start, taken as 0 (the slower loop below); pixels past np (never stored) read their row */
        for (int m = 0; m < 3; m++) {
          const int32_t iw = (ow + m) * a->sw - a->pw + kw * a->dw;
          const int in = iw >= 0 && iw < a->W;
          ok[m] = m >= np || in || a->zero;
          s[m] = m < np && in ? xr + iw * a->xw : m < np && a->zero ? a->zero : xr;
          all &= ok[m];
        }
        const float *s0 = s[0], *s1 = s[1], *s2 = s[2];
        const float *wp = a->w + o * a->wo + kh * a->wh + kw * a->ww;
        if (!all) {
          const int ok0 = ok[0], ok1 = ok[1], ok2 = ok[2];
          for (int32_t c = C; c > 0; c--, s0 += xc, s1 += xc, s2 += xc, wp += wc) {
            const float32x4_t v0 = vldrwq_gather_shifted_offset_z_f32(wp, off, q0);
            const float32x4_t v1 = vldrwq_gather_shifted_offset_z_f32(wp + wo4, off, q1);
            const float x0 = ok0 ? *s0 : 0.0f, x1 = ok1 ? *s1 : 0.0f, x2 = ok2 ? *s2 : 0.0f;
            a00 = vfmaq_n_f32(a00, v0, x0); a01 = vfmaq_n_f32(a01, v1, x0);
            a10 = vfmaq_n_f32(a10, v0, x1); a11 = vfmaq_n_f32(a11, v1, x1);
            a20 = vfmaq_n_f32(a20, v0, x2); a21 = vfmaq_n_f32(a21, v1, x2);
          }
          continue;
        }
        for (int32_t c = cnt; c > 0; c--, s0 += sx, s1 += sx, s2 += sx, wp += sk) {
          float32x4_t v0, v1;
          if (FULL) {
            v0 = vldrwq_gather_shifted_offset_f32(wp, off);
            v1 = vldrwq_gather_shifted_offset_f32(wp + wo4, off);
          } else {
            v0 = vldrwq_gather_shifted_offset_z_f32(wp, off, q0);
            v1 = vldrwq_gather_shifted_offset_z_f32(wp + wo4, off, q1);
          }
          const float x0 = *s0, x1 = *s1, x2 = *s2;
          a00 = vfmaq_n_f32(a00, v0, x0); a01 = vfmaq_n_f32(a01, v1, x0);
          a10 = vfmaq_n_f32(a10, v0, x1); a11 = vfmaq_n_f32(a11, v1, x1);
          a20 = vfmaq_n_f32(a20, v0, x2); a21 = vfmaq_n_f32(a21, v1, x2);
        }
      }
    }
    oc8_store(y, a->yw, o, a->yc, yoff, np, q0, q1, a00, a01, a10, a11, a20, a21, FULL);
  }
}
#define NHWC_FN(FULL, UNIT)                                                                             \
  static __attribute__((noinline)) void nhwc_block_##FULL##UNIT(const nhwc_args *a, int32_t oh, int32_t ow, \
                                                                int32_t np, int32_t o0, int32_t o1) {    \
    nhwc_block(a, oh, ow, np, o0, o1, FULL, UNIT);                                                       \
  }
NHWC_FN(0, 0) NHWC_FN(0, 1) NHWC_FN(1, 0) NHWC_FN(1, 1)
#undef NHWC_FN
/* The lean case of nhwc_block (1x1 taps, weights unit-strided along K): 3 rows s0..s2 of K floats (xk
 * apart: 1 channels-last, the plane size NCHW) times the output channels' weight rows (wo apart), stored
 * for pixels m < np at y + m * ys, channel o at o * yc. */
typedef struct {
  const float *s[3], *w, *bias;
  float *y;
  ptrdiff_t wo, ys, yc, xk;
  int32_t K, O, np, adj; /* adj: s[m] = s[0] + m (neighbouring pixels of an NCHW plane) */
} gemm3_args;

/* XK 0: rows s0..s2 each unit-strided along K (three post-incremented pointers); 1: the three pixels are
 * neighbours (s[m] = s[0] + m, NCHW planes), one pointer steps xk along K; 2: three pointers step xk */
static inline __attribute__((always_inline)) void gemm3_o(const gemm3_args *g, int32_t o, uint32x4_t off,
                                                          uint32x4_t yoff, int FULL, int XK) {
  mve_pred16_t q0, q1;
  float32x4_t b0, b1;
  oc8_start(g->bias, o, g->O, FULL, &q0, &q1, &b0, &b1);
  float32x4_t a00 = b0, a01 = b1, a10 = b0, a11 = b1, a20 = b0, a21 = b1;
  const float *s0 = g->s[0], *s1 = g->s[1], *s2 = g->s[2], *wp = g->w + o * g->wo;
  const ptrdiff_t wo4 = 4 * g->wo, xk = g->xk;
  for (int32_t k = g->K; k > 0; k--, wp++) {
    float32x4_t v0, v1;
    if (FULL) { v0 = vldrwq_gather_shifted_offset_f32(wp, off); v1 = vldrwq_gather_shifted_offset_f32(wp + wo4, off); }
    else { v0 = vldrwq_gather_shifted_offset_z_f32(wp, off, q0); v1 = vldrwq_gather_shifted_offset_z_f32(wp + wo4, off, q1); }
    float x0, x1, x2;
    if (XK == 0) { x0 = *s0++; x1 = *s1++; x2 = *s2++; }
    else if (XK == 1) { x0 = s0[0]; x1 = s0[1]; x2 = s0[2]; s0 += xk; }
    else { x0 = *s0; x1 = *s1; x2 = *s2; s0 += xk; s1 += xk; s2 += xk; }
    a00 = vfmaq_n_f32(a00, v0, x0); a01 = vfmaq_n_f32(a01, v1, x0);
    a10 = vfmaq_n_f32(a10, v0, x1); a11 = vfmaq_n_f32(a11, v1, x1);
    a20 = vfmaq_n_f32(a20, v0, x2); a21 = vfmaq_n_f32(a21, v1, x2);
  }
  oc8_store(g->y, g->ys, o, g->yc, yoff, g->np, q0, q1, a00, a01, a10, a11, a20, a21, FULL);
}

static __attribute__((noinline)) void gemm3(const gemm3_args *g) {
  const uint32x4_t lane = vidupq_n_u32(0, 1);
  const uint32x4_t off = vmulq_n_u32(lane, (uint32_t)g->wo), yoff = vmulq_n_u32(lane, (uint32_t)g->yc);
  int32_t o = 0;
  if (g->xk == 1) {
    for (; o + 8 <= g->O; o += 8) gemm3_o(g, o, off, yoff, 1, 0);
    if (o < g->O) gemm3_o(g, o, off, yoff, 0, 0);
  } else if (g->adj) {
    for (; o + 8 <= g->O; o += 8) gemm3_o(g, o, off, yoff, 1, 1);
    if (o < g->O) gemm3_o(g, o, off, yoff, 0, 1);
  } else {
    for (; o + 8 <= g->O; o += 8) gemm3_o(g, o, off, yoff, 1, 2);
    if (o < g->O) gemm3_o(g, o, off, yoff, 0, 2);
  }
}

/* One pixel (1x1 planes: SE squeezes and excitations): y[o] = b[o] + W[o, :] . x, four output rows a pass
 * sharing each input vector, the weight rows contiguous (wc == 1), sums over the lanes through a VLD4
 * transpose. x is K floats at unit stride; outputs o * yc apart. */
static __attribute__((noinline)) void gemv4(const float *x, const float *w, const float *bias, float *y, ptrdiff_t wo,
                                            ptrdiff_t yc, int32_t K, int32_t O) {
  const mve_pred16_t qt = vctp32q((uint32_t)(K & 3));
  const int32_t k4 = K >> 2;
  float t[16];
  int32_t o = 0;
  for (; o + 4 <= O; o += 4) {
    const float *w0 = w + o * wo, *w1 = w0 + wo, *w2 = w1 + wo, *w3 = w2 + wo, *xp = x;
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
    for (int32_t k = k4; k > 0; k--, xp += 4, w0 += 4, w1 += 4, w2 += 4, w3 += 4) {
      const float32x4_t v = vld1q_f32(xp);
      a0 = vfmaq_f32(a0, v, vld1q_f32(w0)); a1 = vfmaq_f32(a1, v, vld1q_f32(w1));
      a2 = vfmaq_f32(a2, v, vld1q_f32(w2)); a3 = vfmaq_f32(a3, v, vld1q_f32(w3));
    }
    if (K & 3) {
      const float32x4_t v = vld1q_z_f32(xp, qt);
      a0 = vfmaq_f32(a0, v, vld1q_z_f32(w0, qt)); a1 = vfmaq_f32(a1, v, vld1q_z_f32(w1, qt));
      a2 = vfmaq_f32(a2, v, vld1q_z_f32(w2, qt)); a3 = vfmaq_f32(a3, v, vld1q_z_f32(w3, qt));
    }
    vst1q_f32(t, a0); vst1q_f32(t + 4, a1); vst1q_f32(t + 8, a2); vst1q_f32(t + 12, a3);
    const float32x4x4_t r = vld4q_f32(t); /* r.val[l] = lane l of a0..a3 */
    float32x4_t sum = vaddq_f32(vaddq_f32(r.val[0], r.val[1]), vaddq_f32(r.val[2], r.val[3]));
    if (bias) sum = vaddq_f32(sum, vld1q_f32(bias + o));
    if (yc == 1) vst1q_f32(y + o, sum);
    else { vst1q_f32(t, sum); for (int l = 0; l < 4; l++) y[(o + l) * yc] = t[l]; }
  }
  for (; o < O; o++) {
    const float *w0 = w + o * wo, *xp = x;
    float32x4_t a0 = vdupq_n_f32(0.0f);
    for (int32_t k = k4; k > 0; k--, xp += 4, w0 += 4) a0 = vfmaq_f32(a0, vld1q_f32(xp), vld1q_f32(w0));
    if (K & 3) a0 = vfmaq_f32(a0, vld1q_z_f32(xp, qt), vld1q_z_f32(w0, qt));
    vst1q_f32(t, a0);
    y[o * yc] = (bias ? bias[o] : 0.0f) + ((t[0] + t[1]) + (t[2] + t[3]));
  }
}

static void nhwc_pixels(const nhwc_args *a, int32_t oh, int32_t ow, int32_t np) {
  const int unit = a->xc == 1 && a->wc == 1;
  if (unit && a->KH == 1 && a->KW == 1 && a->ph == 0 && a->pw == 0) { /* pointwise (or 1x1 strided) */
    gemm3_args g;
    const float *xr = a->x + oh * a->sh * a->xh;
    for (int m = 0; m < 3; m++) g.s[m] = xr + (m < np ? ow + m : ow) * a->sw * a->xw;
    g.w = a->w; g.bias = a->bias; g.y = a->y + oh * a->yh + ow * a->yw;
    g.wo = a->wo; g.ys = a->yw; g.yc = a->yc; g.xk = 1; g.adj = 0; g.K = a->C; g.O = a->O; g.np = np;
    gemm3(&g);
    return;
  }
  const int32_t ofull = a->O & ~7;
  if (ofull) (unit ? nhwc_block_11 : nhwc_block_10)(a, oh, ow, np, 0, ofull);
  if (ofull < a->O) (unit ? nhwc_block_01 : nhwc_block_00)(a, oh, ow, np, ofull, a->O);
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
        int ok[3];
        for (int m = 0; m < 3; m++) {
          const int32_t iw = (ow + m) * a->sw - a->pw + kw * a->dw;
          ok[m] = m < np && iw >= 0 && iw < a->W;
          s[m] = ok[m] ? xr + iw * a->xw : xr;
        }
        const float *wp = a->w + o * a->wo + kh * a->wh + kw * a->ww;
        for (int32_t c = 0; c < a->C; c++) {
          const float x0 = ok[0] ? s[0][c * a->xc] : 0.0f, x1 = ok[1] ? s[1][c * a->xc] : 0.0f,
                      x2 = ok[2] ? s[2][c * a->xc] : 0.0f;
          for (int j = 0; j < n; j++) {
            const float wv = wp[j * a->wo + c * a->wc];
            acc[0][j] += x0 * wv; acc[1][j] += x1 * wv; acc[2][j] += x2 * wv;
          }
        }
      }
    }
    for (int m = 0; m < np; m++)
      for (int j = 0; j < n; j++) y[m * a->yw + (o + j) * a->yc] = acc[m][j];
  }
}
#endif

/* ---------------------------------------------------------------- pointwise NCHW: the driver */

/* O output planes of a->P pixels */
static void conv_pw_nchw(const pw_args *a, int32_t O) {
  const int unit = a->wc == 1;
#ifdef CONV_MVE
  /* Small planes (SE squeezes on 1x1, late layers on 3x3): the output channels on the lanes instead (gemm3,
   * 8 channels x 3 pixels a pass, weights gathered), when that costs less per input channel: instructions
   * measured per input channel and pass, about 14 for gemm3 (scattered stores, a call per 3 pixels), 12 for a
   * whole 12-pixel block of 2 channels and 19 for a partial one (predicated loads) */
  if (unit && a->P == 1 && a->xc == 1) { /* one pixel: a matrix-vector product */
    gemv4(a->x, a->w, a->bias, a->y, a->wo, a->yo, a->C, O);
    return;
  }
  const int32_t nfull = a->P / 12, ntail = a->P % 12 != 0;
  if (unit && 14 * (int64_t)((a->P + 2) / 3) * ((O + 7) / 8) < (int64_t)((O + 1) / 2) * (12 * nfull + 19 * ntail)) {
    gemm3_args g;
    g.w = a->w; g.bias = a->bias; g.wo = a->wo; g.ys = 1; g.yc = a->yo; g.K = a->C; g.O = O;
    g.xk = a->xc;
    for (int32_t p = 0; p < a->P; p += 3) {
      g.np = a->P - p < 3 ? a->P - p : 3;
      g.adj = g.np == 3; /* the last pixels (fewer than 3) each through a pointer of their own */
      for (int m = 0; m < 3; m++) g.s[m] = a->x + p + (m < g.np ? m : 0);
      g.y = a->y + p;
      gemm3(&g);
    }
    return;
  }
#endif
  for (int32_t o = 0; o < O; o += 2) {
    const int mi = O - o >= 2;
    const pw_fn full = pw_blocks[mi][1][unit], part = pw_blocks[mi][0][unit];
    int32_t p = 0;
    for (; p + 12 <= a->P; p += 12) full(a, o, p);
    if (p < a->P) part(a, o, p);
  }
}

#endif
