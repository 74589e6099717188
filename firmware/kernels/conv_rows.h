/* Float32 first layers in NCHW (few input channels, any kernel, stride, padding, dilation), included by
 * conv.c after conv_gemm.h (static functions): per output row, the taps of up to Q output columns are
 * copied into a stack buffer as K = C * KH * KW rows of Q pixels (im2col; zeros for taps outside the
 * image; Helium gathers a strided row four pixels at a time), then conv_pw_nchw's GEMM runs over them
 * with the pixels on the lanes (2 output channels x 12 pixels a pass), storing straight into the output
 * planes. Beside the channels-last tap buffer (conv_gemm.h's nhwc_pixels_col), which scatters every
 * output pixel to its planes and fills its buffer a pixel block at a time. */
#ifndef ET_CONV_ROWS_H
#define ET_CONV_ROWS_H
#ifdef CONV_MVE /* measured there only (the other targets keep conv_nhwc / conv_direct.c) */

/* columns a pass (a multiple of 12, whole pixel blocks, where 12 fit; else of 4), 0 when this path does
 * not apply: one group of fewer than 8 input channels, a column stride (at stride 1 conv_direct.c's patch
 * rows serve every kw: cheaper), rows of 12 outputs or more (narrower ones leave most lanes idle: the
 * channels-last tap buffer), unit column strides in input and output, weights dense OIHW */
static int32_t conv_rows_q(const conv_geo *g) {
  const int32_t K = g->C * g->KH * g->KW;
  if (g->sw == 1 || g->OW < 12) return 0;
  if (g->G != 1 || g->C >= 8 || g->is[3] != 1 || g->os[3] != 1 || g->ws[3] != 1 || g->ws[2] != g->KW ||
      g->ws[1] != (ptrdiff_t)g->KH * g->KW || g->ws[0] != K)
    return 0;
  int32_t q = CONV_COL / K;
  q = q >= 12 ? q / 12 * 12 : q & ~3;
  const int32_t ow = (g->OW + 3) & ~3;
  return q < ow ? q : ow;
}

/* col row (c, kh, kw): x[c, oh * sh - ph + kh * dh, (ow0 + j) * sw - pw + kw * dw] for j < q, 0 outside */
static void conv_rows_fill(const conv_geo *g, const float *x, int32_t oh, int32_t ow0, int32_t q, int32_t Q,
                           float *col) {
  const uint32x4_t off = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)g->sw);
  for (int32_t c = 0; c < g->C; c++)
    for (int32_t kh = 0; kh < g->KH; kh++) {
      const int32_t ih = oh * g->sh - g->ph + kh * g->dh;
      for (int32_t kw = 0; kw < g->KW; kw++, col += Q) {
        int32_t lo = 0, hi = 0;
        const int32_t start = ow0 * g->sw - g->pw + kw * g->dw;
        if (ih >= 0 && ih < g->H) col_range(start, g->sw, g->W, q, &lo, &hi);
        const float *s = hi > lo ? x + c * g->is[1] + ih * g->is[2] + (start + lo * g->sw) : x;
        int32_t j = 0;
        for (; j < lo; j++) col[j] = 0.0f;
        for (; j + 4 <= hi; j += 4, s += 4 * g->sw)
          vst1q_f32(col + j, g->sw == 1 ? vld1q_f32(s) : vldrwq_gather_shifted_offset_f32(s, off));
        for (; j < hi; j++, s += g->sw) col[j] = *s;
        for (; j < q; j++) col[j] = 0.0f;
      }
    }
}

static void conv_rows_nchw(const conv_geo *g, int32_t Q, const float *x, const float *w, const float *bias,
                           float *y) {
  float col[CONV_COL];
  pw_args a;
  a.x = col; a.w = w; a.bias = bias;
  a.xc = Q; a.wo = g->ws[0]; a.wc = 1; a.yo = g->os[1]; a.C = g->C * g->KH * g->KW;
  for (int32_t n = 0; n < g->N; n++)
    for (int32_t oh = 0; oh < g->OH; oh++)
      for (int32_t ow0 = 0; ow0 < g->OW; ow0 += Q) {
        const int32_t q = g->OW - ow0 < Q ? g->OW - ow0 : Q;
        conv_rows_fill(g, x + n * g->is[0], oh, ow0, q, Q, col);
        a.P = q;
        a.y = y + n * g->os[0] + oh * g->os[2] + ow0;
        conv_pw_nchw(&a, g->O);
      }
}

#endif
#endif
