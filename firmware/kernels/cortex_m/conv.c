/* cortex_m:: int8 convolution (dense and grouped). */
#include "cm_gemm.h"
#ifdef CM_DSP
#include "dsp_conv.h"
#endif

/* Group g of a grouped convolution (groups neither 1 nor C) as a dense one over its channels, read and
 * written in place: its cpg input and opg output channels at their offsets, the pixel strides the full
 * tensors'. The caller offsets x and y by group_x / group_y. */
CM_UNUSED static bool qconv_group(const qconv *c, int32_t g, qconv *sub) {
  const int32_t G = c->cpg > 0 ? c->x.c / c->cpg : 0;
  if (c->depthwise || G <= 1 || c->opg <= 0) return false;
  *sub = *c;
  sub->x.c = c->cpg;
  sub->y.c = c->opg;
  const int32_t o0 = g * c->opg;
  sub->w = c->w + (ptrdiff_t)o0 * c->KH * c->KW * c->cpg;
  sub->bias = c->bias ? c->bias + o0 : NULL;
  sub->mult = c->mult + o0;
  sub->shift = c->shift + o0;
  return true;
}
CM_UNUSED static inline ptrdiff_t group_x(const qconv *c, int32_t g) { return (ptrdiff_t)g * c->cpg * c->x.sc; }
CM_UNUSED static inline ptrdiff_t group_y(const qconv *c, int32_t g) { return (ptrdiff_t)g * c->opg * c->y.sc; }

#ifdef CM_DSP
/* Grouped on the DSP cores, whose kernels read dense pixels: group g's channels of an NHWC input are
 * copied to the front of the scratch (n * h * w * cpg bytes, 16-aligned), the dense kernel's scratch
 * follows. false: not this path (sub unset). */
static uint32_t dsp_group_bytes(const qconv *c) {
  return ((uint32_t)c->x.n * (uint32_t)c->x.h * (uint32_t)c->x.w * (uint32_t)c->cpg + 15u) & ~15u;
}
static bool dsp_group_dense(const qconv *c, int32_t g, qconv *sub) {
  if (c->x.sc != 1 || !qconv_group(c, g, sub)) return false;
  sub->x.sw = c->cpg;
  sub->x.sh = (ptrdiff_t)c->x.w * c->cpg;
  sub->x.sn = (ptrdiff_t)c->x.h * sub->x.sh;
  sub->scr = c->scr ? c->scr + dsp_group_bytes(c) : NULL;
  return true;
}
static void dsp_group_copy(const qconv *c, int32_t g, const int8_t *x, int8_t *buf) {
  const int32_t cpg = c->cpg;
  for (int32_t n = 0; n < c->x.n; n++)
    for (int32_t h = 0; h < c->x.h; h++) {
      const int8_t *xr = x + n * c->x.sn + h * c->x.sh + group_x(c, g);
      for (int32_t w = 0; w < c->x.w; w++, buf += cpg) memcpy(buf, xr + w * c->x.sw, (size_t)cpg);
    }
}
#endif

/* planned scratch of a dense/grouped call (ET_SCRATCH; tools/etdeploy/kernel_scratch.py mirrors it): a
 * grouped call's is one group's (they run one after another) */
static uint32_t qconv_scratch(const qconv *c) {
#ifdef CM_MVE
  qconv sub;
  if (qconv_group(c, 0, &sub)) return qconv_mve_scratch(&sub);
  return qconv_mve_scratch(c);
#elif defined(CM_DSP)
  qconv sub;
  if (dsp_group_dense(c, 0, &sub)) return dsp_group_bytes(c) + cm_dsp_conv_scratch(&sub);
  return cm_dsp_conv_scratch(c);
#else
  (void)c;
  return 0;
#endif
}

/* dense and grouped convolution (the depthwise operators are in depthwise.c) */
static void qconv_run(const qconv *c, const int8_t *x, int8_t *y) {
#ifdef CM_MVE
  qconv sub;
  if (qconv_group(c, 0, &sub)) {   /* grouped: the dense path per group (a refusal is the same for all) */
    bool ok = true;
    for (int32_t g = 0; ok && g < c->x.c / c->cpg; g++)
      ok = qconv_group(c, g, &sub) && qconv_mve(&sub, x + group_x(c, g), y + group_y(c, g));
    if (ok) return;
  }
  if (qconv_mve(c, x, y)) return;
#elif defined(CM_DSP)
  qconv sub;
  if (c->scr && dsp_group_dense(c, 0, &sub)) {   /* grouped: each group copied dense, then the dense path */
    bool ok = true;
    for (int32_t g = 0; ok && g < c->x.c / c->cpg; g++) {
      dsp_group_copy(c, g, x, c->scr);
      ok = dsp_group_dense(c, g, &sub) && cm_dsp_conv(&sub, (const int8_t *)c->scr, y + group_y(c, g));
    }
    if (ok) return;
  }
  if (cm_dsp_conv(c, x, y)) return;
#endif
  const int32_t O = c->y.c;
  /* dense NHWC input, one group, unit column dilation: the kw taps of a row are contiguous */
  const bool merge = !c->depthwise && c->cpg == c->x.c && c->x.sc == 1 && c->x.sw == c->x.c && c->dw == 1;
  for (int32_t n = 0; n < c->y.n; n++)
    for (int32_t oh = 0; oh < c->y.h; oh++)
      for (int32_t ow = 0; ow < c->y.w; ow++) {
        const int32_t ih0 = oh * c->sh - c->ph, iw0 = ow * c->sw - c->pw;
        const int8_t *xn = x + n * c->x.sn;
        for (int32_t oc = 0; oc < O; oc++) {
          /* Wraps like the hardware's 32-bit accumulator; a corrupted bias cannot make it UB. */
          uint32_t acc = c->bias ? (uint32_t)c->bias[oc] : 0u;
          /* dense and grouped (depthwise went to qdw_portable) */
          const int32_t c0 = (oc / c->opg) * c->cpg;
          const int8_t *wo = c->w + (ptrdiff_t)oc * c->KH * c->KW * c->cpg;
          int32_t wsum = 0;
          for (int32_t kh = 0; kh < c->KH; kh++) {
            int32_t ih = ih0 + kh * c->dh;
            if (ih < 0 || ih >= c->x.h) continue;
            if (merge) {
              /* taps kw in [k0, k1) read one contiguous run of (k1 - k0) * C values */
              int32_t k0 = iw0 < 0 ? -iw0 : 0, k1 = c->x.w - iw0;
              if (k1 > c->KW) k1 = c->KW;
              if (k0 >= k1) continue;
              const int8_t *xp = xn + ih * c->x.sh + (iw0 + k0) * c->x.sw;
              const int8_t *wp = wo + ((ptrdiff_t)kh * c->KW + k0) * c->cpg;
              acc += (uint32_t)dot_sum_s8(xp, wp, (k1 - k0) * c->cpg, &wsum);
              continue;
            }
            for (int32_t kw = 0; kw < c->KW; kw++) {
              int32_t iw = iw0 + kw * c->dw;
              if (iw < 0 || iw >= c->x.w) continue;
              const int8_t *xp = xn + c0 * c->x.sc + ih * c->x.sh + iw * c->x.sw;
              const int8_t *wp = wo + ((ptrdiff_t)kh * c->KW + kw) * c->cpg;
              if (c->x.sc == 1) {
                acc += (uint32_t)dot_sum_s8(xp, wp, c->cpg, &wsum);
              } else {
                for (int32_t ci = 0; ci < c->cpg; ci++) {
                  acc += (uint32_t)((int32_t)xp[ci * c->x.sc] * (int32_t)wp[ci]);
                  wsum += wp[ci];
                }
              }
            }
          }
          acc += (uint32_t)c->in_off * (uint32_t)wsum;
          int32_t r = add_sat_i32(cm_requant((int32_t)acc, c->mult[oc], c->shift[oc]), c->out_off);
          y[n * c->y.sn + oc * c->y.sc + oh * c->y.sh + ow * c->y.sw] = (int8_t)clamp_i32(r, c->amin, c->amax);
        }
      }
}

static et_status qconv_op(et_kctx *ctx, et_value *const *args, uint32_t nargs, bool nhwc) {
  ET_CHECK_ARGS(14);
  qconv c;
  et_tensor *in, *out;
  bool constant;
  et_status st = qconv_args(ctx, args, false, nhwc, &c, &in, &out, &constant);
  if (st) return st;
  ET_SCRATCH_TAKE(ctx, qconv_scratch(&c), c.scr);
  qconv_run(&c, (const int8_t *)in->data, (int8_t *)out->data);
  return ET_OK;
}

/* quantized_conv2d.out(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding,
 *   int[] dilation, int input_offset, int output_offset, Tensor requantize_multipliers,
 *   Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch, *, Tensor(a!) out) */
ET_SCRATCH("cortex_m::quantized_conv2d.out");
ET_SCRATCH("cortex_m::quantized_conv2d_nhwc.out");
ET_OP("cortex_m::quantized_conv2d.out", k_cm_quantized_conv2d_out) { return qconv_op(ctx, args, nargs, false); }
ET_OP("cortex_m::quantized_conv2d_nhwc.out", k_cm_quantized_conv2d_nhwc_out) { return qconv_op(ctx, args, nargs, true); }
