/* Float32 convolutions with fewer than 8 input channels a group (first layers) and the channels-last /
 * NCHW-scattering KxK driver, included by conv.c after conv_gemm.h (static functions): the taps of 3
 * output pixels copied into a stack buffer (zeros outside the image) for one 1x1 pass of gemm3, so that
 * the per-tap work of nhwc_pixels is paid once per pixel block and not per tap; conv_nhwc walks the
 * output pixels 3 at a time through it or through nhwc_pixels. */
#ifndef ET_CONV_COL_H
#define ET_CONV_COL_H

/* first and one-past-last k < K with i0 + k * d in [0, n) */
static void tap_range(int32_t i0, int32_t d, int32_t n, int32_t K, int32_t *k0, int32_t *k1) {
  int32_t a = i0 < 0 ? (-i0 + d - 1) / d : 0, b = K;
  while (b > a && i0 + (b - 1) * d >= n) b--;
  *k0 = a < K ? a : K;
  *k1 = b;
}

/* Few input channels (first layers): the taps of 3 output pixels copied into col (3 rows of
 * KH * KW * C floats, zeros for taps outside the image), then one 1x1 pass over them, so that the
 * per-tap work of nhwc_pixels is paid once per pixel block and not per tap. Needs the weights of an
 * output channel to be one run in (kh, kw, c) order. */
#define CONV_COL 768 /* floats of stack */
/* the weights of one output channel are one dense block of KH * KW * C floats, in any order of the
 * three dims (NCHW: (c, kh, kw); channels-last: (kh, kw, c)); the input in any layout (nhwc_pixels_col
 * copies a kernel row's taps as one run where they are one in the input and in col, else tap by tap) */
static bool col_fits(const nhwc_args *a) {
  const int32_t K = a->KH * a->KW * a->C;
  if (a->C >= 8 || 3 * K > CONV_COL) return false;
  ptrdiff_t st[3] = {a->wh, a->ww, a->wc};
  int32_t sz[3] = {a->KH, a->KW, a->C};
  ptrdiff_t next = 1;
  for (int k = 0; k < 3; k++) { /* the dims longer than 1 by increasing stride, each the product so far */
    int best = -1;
    for (int d = 0; d < 3; d++)
      if (sz[d] > 1 && (best < 0 || st[d] < st[best])) best = d;
    if (best < 0) break;
    if (st[best] != next) return false;
    next *= sz[best];
    sz[best] = 1;
  }
  return true;
}

/* col row m: the taps of pixel m in the weights' order (kh * wh + kw * ww + c * wc), zeros outside */
static void nhwc_pixels_col(const nhwc_args *a, int32_t oh, int32_t ow, int32_t np, float *col) {
  const int32_t K = a->KH * a->KW * a->C, C = a->C, KW = a->KW, dw = a->dw;
  const ptrdiff_t xw = a->xw, xc = a->xc, wh = a->wh, ww = a->ww, wc = a->wc;
  const int run = (C == 1 || (xc == 1 && wc == 1)) && ww == C && xw == C && dw == 1;
  const int32_t iwa = ow * a->sw - a->pw, iwz = (ow + 2) * a->sw - a->pw + (KW - 1) * dw;
  const int32_t iha = oh * a->sh - a->ph, ihz = iha + (a->KH - 1) * a->dh;
  const int inside = np == 3 && iwa >= 0 && iwz < a->W && iha >= 0 && ihz < a->H; /* every tap: no zeros */
  int32_t nfill = np; /* pixels filled below, their valid taps' runs */
  if (inside && !run) { /* tap by tap, the three pixels' values of a tap together */
    const ptrdiff_t ps = a->sw * xw, ts = dw * xw;
    for (int32_t c = 0; c < C; c++)
      for (int32_t kh = 0; kh < a->KH; kh++) {
        const float *x = a->x + c * xc + (iha + kh * a->dh) * a->xh + iwa * xw;
        float *d = col + c * wc + kh * wh;
        for (int32_t kw = KW; kw > 0; kw--, x += ts, d += ww) {
          const float v0 = x[0], v1 = x[ps], v2 = x[2 * ps];
          d[0] = v0; d[K] = v1; d[2 * K] = v2;
        }
      }
    nfill = 0;
  } else if (!inside) {
    for (int32_t i = 0; i < 3 * K; i++) col[i] = 0.0f;
  }
  for (int32_t m = 0; m < nfill; m++) {
    const int32_t iw0 = (ow + m) * a->sw - a->pw;
    int32_t kw0, kw1;
    tap_range(iw0, dw, a->W, KW, &kw0, &kw1);
    if (kw1 <= kw0) continue;
    float *row = col + m * K;
    for (int32_t kh = 0; kh < a->KH; kh++) {
      const int32_t ih = oh * a->sh - a->ph + kh * a->dh;
      if (ih < 0 || ih >= a->H) continue;
      const float *x = a->x + ih * a->xh + (iw0 + kw0 * dw) * xw;
      float *d = row + kh * wh + kw0 * ww;
      if (run) { /* the row's valid taps: one run in the input and in col */
        for (int32_t i = 0; i < (kw1 - kw0) * C; i++) d[i] = x[i];
        continue;
      }
      for (int32_t c = 0; c < C; c++, x += xc, d += wc) {
        const float *xs = x;
        float *ds = d;
        for (int32_t kw = kw1 - kw0; kw > 0; kw--, xs += dw * xw, ds += ww) *ds = *xs;
      }
    }
  }
  nhwc_args b = *a; /* a 1x1 conv over a 1 x 3 image of K channels */
  b.x = col; b.H = 1; b.W = 3; b.C = K; b.KH = b.KW = 1; b.sh = b.sw = b.dh = b.dw = 1; b.ph = b.pw = 0;
  b.xh = 0; b.xw = K; b.xc = 1; b.wc = 1; b.flat = 0; b.zero = col; /* never read: every tap is inside */
  b.y = a->y + oh * a->yh + ow * a->yw;
  nhwc_pixels(&b, 0, 0, np);
}

static void conv_nhwc(const nhwc_args *a, int32_t OH) {
  float col[CONV_COL];
  const bool use_col = col_fits(a);
  for (int32_t oh = 0; oh < OH; oh++)
    for (int32_t ow = 0; ow < a->OW; ow += 3) {
      const int32_t np = a->OW - ow < 3 ? a->OW - ow : 3;
      if (use_col) nhwc_pixels_col(a, oh, ow, np, col);
      else nhwc_pixels(a, oh, ow, np);
    }
}

#endif
