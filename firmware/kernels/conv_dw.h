/* Float32 depthwise convolution (one input channel per group, depth multiplier 1), included by conv.c
 * after conv_gemm.h (static functions). Channels on the lanes in either layout (Helium gathers the
 * channels from NCHW planes and scatters the outputs back): inside the image 3 output pixels share each
 * tap's weight gather, and 3x3 kernels at strides 1 and 2 load each input column once per kernel row for
 * the taps of the 3 pixels that read it; border pixels go one at a time over their valid taps only.
 * Portable C: one pixel, one channel at a time (conv.c keeps NCHW depthwise on the patch path there). */
#ifndef ET_CONV_DW_H
#define ET_CONV_DW_H

/* NP (1 or 3) output pixels along a row, all channels: taps kh in [kh0, kh1), kw in [kw0, kw1); (ih0,
 * iw0) is the input pixel of tap (0, 0) of the first pixel, maybe outside the image (only taps in the
 * ranges are read). Helium: 4 channels a vector, the weights of a tap gathered once for the NP
 * pixels; inputs and outputs gathered / scattered when channels are not contiguous (NCHW). */
#ifdef CONV_MVE
static inline __attribute__((always_inline)) void dw_block(const nhwc_args *a, int32_t ih0, int32_t iw0, float *y,
                                                           int32_t kh0, int32_t kh1, int32_t kw0, int32_t kw1,
                                                           int NP, int XG) {
  const uint32x4_t lane = vidupq_n_u32(0, 1);
  const uint32x4_t woff = vmulq_n_u32(lane, (uint32_t)a->wo), xoff = vmulq_n_u32(lane, (uint32_t)a->xc),
                   yoff = vmulq_n_u32(lane, (uint32_t)a->yc);
  const ptrdiff_t xstep = a->dw * a->xw, rstep = a->dh * a->xh, ps = a->sw * a->xw, ys = a->yw;
  const float *x0 = a->x + (ih0 + kh0 * a->dh) * a->xh + (iw0 + kw0 * a->dw) * a->xw;
  const float *w0 = a->w + kh0 * a->wh + kw0 * a->ww;
  const int32_t nkh = kh1 - kh0, nkw = kw1 - kw0;
#define DW_LD(p) (XG ? vldrwq_gather_shifted_offset_z_f32((p), xoff, q) : vld1q_z_f32((p), q))
#define DW_LDF(p) (XG ? vldrwq_gather_shifted_offset_f32((p), xoff) : vld1q_f32((p)))
#define DW_STF(p, v) do { if (XG) vstrwq_scatter_shifted_offset_f32((p), yoff, (v)); else vst1q_f32((p), (v)); } while (0)
#define DW_ST(p, v) do { if (XG) vstrwq_scatter_shifted_offset_p_f32((p), yoff, (v), q); else vst1q_p_f32((p), (v), q); } while (0)
  /* whole vectors of channels without predicates (FULL), then the last one predicated */
  for (int32_t c = 0; c < a->O; c += 4) {
    const int FULL = a->O - c >= 4;
    const mve_pred16_t q = vctp32q((uint32_t)(a->O - c));
    float32x4_t b = vdupq_n_f32(0.0f);
    if (a->bias) b = FULL ? vld1q_f32(a->bias + c) : vld1q_z_f32(a->bias + c, q);
    float32x4_t a0 = b, a1 = b, a2 = b;
    const float *xr = x0 + c * a->xc, *wr = w0 + c * a->wo;
    float *yp = y + c * a->yc;
    if (FULL) {
      for (int32_t kh = nkh; kh > 0; kh--, xr += rstep, wr += a->wh) {
        const float *xk = xr, *wk = wr;
        for (int32_t kw = nkw; kw > 0; kw--, xk += xstep, wk += a->ww) {
          const float32x4_t wv = vldrwq_gather_shifted_offset_f32(wk, woff);
          a0 = vfmaq_f32(a0, DW_LDF(xk), wv);
          if (NP > 1) { a1 = vfmaq_f32(a1, DW_LDF(xk + ps), wv); a2 = vfmaq_f32(a2, DW_LDF(xk + 2 * ps), wv); }
        }
      }
      DW_STF(yp, a0);
      if (NP > 1) { DW_STF(yp + ys, a1); DW_STF(yp + 2 * ys, a2); }
      continue;
    }
    for (int32_t kh = nkh; kh > 0; kh--, xr += rstep, wr += a->wh) {
      const float *xk = xr, *wk = wr;
      for (int32_t kw = nkw; kw > 0; kw--, xk += xstep, wk += a->ww) {
        const float32x4_t wv = vldrwq_gather_shifted_offset_z_f32(wk, woff, q);
        a0 = vfmaq_f32(a0, DW_LD(xk), wv);
        if (NP > 1) { a1 = vfmaq_f32(a1, DW_LD(xk + ps), wv); a2 = vfmaq_f32(a2, DW_LD(xk + 2 * ps), wv); }
      }
    }
    DW_ST(yp, a0);
    if (NP > 1) { DW_ST(yp + ys, a1); DW_ST(yp + 2 * ys, a2); }
  }
#undef DW_LDF
#undef DW_STF
#undef DW_LD
#undef DW_ST
}
/* 3x3 kernels (kernel column step 1, column stride 1 or 2) on the inside of the image: per kernel row the
 * three weight vectors are gathered once and each input column is loaded once for the taps of the three
 * pixels that read it (5 columns at stride 1, 7 at stride 2) */
static inline __attribute__((always_inline)) void dw3_rows(const nhwc_args *a, int32_t nkh, const float *xr,
                                                           const float *wr, float32x4_t *acc, uint32x4_t woff,
                                                           uint32x4_t xoff, mve_pred16_t q, int SW, int XG, int FULL) {
  float32x4_t a0 = acc[0], a1 = acc[1], a2 = acc[2];
  const ptrdiff_t xw = a->xw, ww = a->ww, rstep = a->dh * a->xh, wh = a->wh;
#define DW3_LD(p) (XG ? (FULL ? vldrwq_gather_shifted_offset_f32((p), xoff) : vldrwq_gather_shifted_offset_z_f32((p), xoff, q)) \
                      : (FULL ? vld1q_f32((p)) : vld1q_z_f32((p), q)))
#define DW3_W(p) (FULL ? vldrwq_gather_shifted_offset_f32((p), woff) : vldrwq_gather_shifted_offset_z_f32((p), woff, q))
  for (int32_t kh = nkh; kh > 0; kh--, xr += rstep, wr += wh) {
    const float32x4_t w0 = DW3_W(wr), w1 = DW3_W(wr + ww), w2 = DW3_W(wr + 2 * ww);
    const float *p = xr;
    float32x4_t v = DW3_LD(p);
    a0 = vfmaq_f32(a0, v, w0);
    if (SW == 1) {
      v = DW3_LD(p + xw); a0 = vfmaq_f32(a0, v, w1); a1 = vfmaq_f32(a1, v, w0);
      p += 2 * xw;
      v = DW3_LD(p); a0 = vfmaq_f32(a0, v, w2); a1 = vfmaq_f32(a1, v, w1); a2 = vfmaq_f32(a2, v, w0);
      v = DW3_LD(p + xw); a1 = vfmaq_f32(a1, v, w2); a2 = vfmaq_f32(a2, v, w1);
      p += 2 * xw;
      v = DW3_LD(p); a2 = vfmaq_f32(a2, v, w2);
    } else {
      v = DW3_LD(p + xw); a0 = vfmaq_f32(a0, v, w1);
      p += 2 * xw;
      v = DW3_LD(p); a0 = vfmaq_f32(a0, v, w2); a1 = vfmaq_f32(a1, v, w0);
      v = DW3_LD(p + xw); a1 = vfmaq_f32(a1, v, w1);
      p += 2 * xw;
      v = DW3_LD(p); a1 = vfmaq_f32(a1, v, w2); a2 = vfmaq_f32(a2, v, w0);
      v = DW3_LD(p + xw); a2 = vfmaq_f32(a2, v, w1);
      p += 2 * xw;
      v = DW3_LD(p); a2 = vfmaq_f32(a2, v, w2);
    }
  }
#undef DW3_LD
#undef DW3_W
  acc[0] = a0; acc[1] = a1; acc[2] = a2;
}

/* 3 pixels whose taps along the row are inside the image; nkh kernel rows from x0 / w0 */
static inline __attribute__((always_inline)) void dw3_block(const nhwc_args *a, const float *x0, const float *w0,
                                                            int32_t nkh, float *y, int SW, int XG) {
  const uint32x4_t lane = vidupq_n_u32(0, 1);
  const uint32x4_t woff = vmulq_n_u32(lane, (uint32_t)a->wo), xoff = vmulq_n_u32(lane, (uint32_t)a->xc),
                   yoff = vmulq_n_u32(lane, (uint32_t)a->yc);
  for (int32_t c = 0; c < a->O; c += 4) {
    const int FULL = a->O - c >= 4;
    const mve_pred16_t q = vctp32q((uint32_t)(a->O - c));
    float32x4_t bv = vdupq_n_f32(0.0f);
    if (a->bias) bv = FULL ? vld1q_f32(a->bias + c) : vld1q_z_f32(a->bias + c, q);
    float32x4_t acc[3] = {bv, bv, bv};
    const float *xr = x0 + c * a->xc, *wr = w0 + c * a->wo;
    if (FULL) dw3_rows(a, nkh, xr, wr, acc, woff, xoff, q, SW, XG, 1);
    else dw3_rows(a, nkh, xr, wr, acc, woff, xoff, q, SW, XG, 0);
    float *yp = y + c * a->yc;
    for (int m = 0; m < 3; m++, yp += a->yw) {
      if (XG) vstrwq_scatter_shifted_offset_p_f32(yp, yoff, acc[m], q);
      else vst1q_p_f32(yp, acc[m], q);
    }
  }
}
#define DW3_FN(SW, XG)                                                                                      \
  static __attribute__((noinline)) CONV_NOSCHED void dw3_block_##SW##_##XG(const nhwc_args *a, const float *x0, const float *w0, \
                                                              int32_t nkh, float *y) {                     \
    dw3_block(a, x0, w0, nkh, y, SW, XG);                                                                   \
  }
DW3_FN(1, 0) DW3_FN(2, 0) DW3_FN(1, 1) DW3_FN(2, 1)
#undef DW3_FN
typedef void (*dw3_fn)(const nhwc_args *, const float *, const float *, int32_t, float *);

#define DW_FN(NP, XG)                                                                                        \
  static __attribute__((noinline)) void dw_block_##NP##_##XG(const nhwc_args *a, int32_t ih0, int32_t iw0,  \
                                                             float *y, int32_t kh0, int32_t kh1, int32_t kw0, \
                                                             int32_t kw1) {                                  \
    dw_block(a, ih0, iw0, y, kh0, kh1, kw0, kw1, NP, XG);                                                    \
  }
DW_FN(1, 0) DW_FN(3, 0) DW_FN(1, 1) DW_FN(3, 1)
#undef DW_FN
typedef void (*dw_fn)(const nhwc_args *, int32_t, int32_t, float *, int32_t, int32_t, int32_t, int32_t);
#define DW_BLOCKS 3 /* pixels a call on the image's inside */
#else
static __attribute__((noinline)) void dw_block_1_0(const nhwc_args *a, int32_t ih0, int32_t iw0, float *y, int32_t kh0,
                                                   int32_t kh1, int32_t kw0, int32_t kw1) {
  for (int32_t c = 0; c < a->O; c++) {
    float acc = a->bias ? a->bias[c] : 0.0f;
    for (int32_t kh = kh0; kh < kh1; kh++)
      for (int32_t kw = kw0; kw < kw1; kw++)
        acc += a->x[c * a->xc + (ih0 + kh * a->dh) * a->xh + (iw0 + kw * a->dw) * a->xw] *
               a->w[c * a->wo + kh * a->wh + kw * a->ww];
    y[c * a->yc] = acc;
  }
}
typedef void (*dw_fn)(const nhwc_args *, int32_t, int32_t, float *, int32_t, int32_t, int32_t, int32_t);
#define dw_block_3_0 dw_block_1_0
#define dw_block_1_1 dw_block_1_0
#define dw_block_3_1 dw_block_1_0
#define DW_BLOCKS 1
#endif


/* a->x is the input at pixel (0, 0) channel 0; a->O channels, one input channel each */
static void conv_dw(const nhwc_args *a, int32_t OH) {
  const int xg = a->xc != 1 || a->yc != 1;
  const dw_fn one = xg ? dw_block_1_1 : dw_block_1_0, three = xg ? dw_block_3_1 : dw_block_3_0;
#ifdef CONV_MVE
  dw3_fn dw3 = NULL;
  if (a->KW == 3 && a->dw == 1 && (a->sw == 1 || a->sw == 2))
    dw3 = a->sw == 1 ? (xg ? dw3_block_1_1 : dw3_block_1_0) : (xg ? dw3_block_2_1 : dw3_block_2_0);
#endif
  for (int32_t oh = 0; oh < OH; oh++) {
    const int32_t ih0 = oh * a->sh - a->ph;
    int32_t kh0, kh1;
    tap_range(ih0, a->dh, a->H, a->KH, &kh0, &kh1);
    for (int32_t ow = 0; ow < a->OW;) {
      const int32_t iw0 = ow * a->sw - a->pw;
      float *y = a->y + oh * a->yh + ow * a->yw;
      /* DW_BLOCKS pixels whose every tap is inside the image along the row */
      const int32_t last = iw0 + (DW_BLOCKS - 1) * a->sw + (a->KW - 1) * a->dw;
      if (DW_BLOCKS > 1 && ow + DW_BLOCKS <= a->OW && iw0 >= 0 && last < a->W) {
#ifdef CONV_MVE
        if (dw3) { /* 3x3: each input column loaded once per kernel row */
          if (kh1 > kh0)
            dw3(a, a->x + (ih0 + kh0 * a->dh) * a->xh + iw0 * a->xw, a->w + kh0 * a->wh, kh1 - kh0, y);
          else
            three(a, ih0, iw0, y, kh0, kh1, 0, a->KW); /* no rows: the bias alone */
          ow += DW_BLOCKS;
          continue;
        }
#endif
        three(a, ih0, iw0, y, kh0, kh1, 0, a->KW);
        ow += DW_BLOCKS;
        continue;
      }
      int32_t kw0, kw1;
      tap_range(iw0, a->dw, a->W, a->KW, &kw0, &kw1);
      one(a, ih0, iw0, y, kh0, kh1, kw0, kw1);
      ow++;
    }
  }
}

#endif
