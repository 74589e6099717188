/* cortex_m:: int8 transposed convolution (ConvTranspose2d), portable C.
 * Numerics of executorch's reference op (backends/cortex_m/ops): every input value plus input_offset,
 * times the OHWI weight, summed with the bias per output pixel; then the per-channel requantisation,
 * output_offset and the activation clamp of the dense convolution. The reference sums in float32, which
 * is exact while partial sums stay below 2^24 in magnitude (any int8 layer of fewer than ~500 taps an
 * output); this kernel sums in int32 (wrapping, as the hardware does).
 * Gather form: each output pixel collects the input pixels whose stride grid lands on it, so no
 * scratch (and no stack array) is needed and each output is written once. One group (the quantizer lowers only
 * groups == 1, as the reference's weight layout implies); stride, padding, output_padding and
 * dilation are general. */
#include "cm_util.h"

typedef struct {
  g4 x, y;
  int32_t KH, KW, sh, sw, ph, pw, dh, dw;
  int32_t in_off, out_off, amin, amax;
  const int8_t *w;  /* OHWI, I = all input channels */
  const int32_t *bias, *mult, *shift;
} qtconv;

/* (in - 1) s - 2 p + d (k - 1) + op + 1, summed in 64 bits; -1 unless it is positive and the extent
 * before the padding, (in - 1) s + d (k - 1) + op + 1, fits an int32 (then o + p - t d below does too). */
static int32_t tconv_out(int32_t in, int32_t s, int32_t p, int32_t d, int32_t k, int32_t op) {
  const int64_t extent = ((int64_t)in - 1) * s + (int64_t)d * ((int64_t)k - 1) + op + 1;
  const int64_t v = extent - 2 * (int64_t)p;
  return v <= 0 || extent >= INT32_MAX ? -1 : (int32_t)v;
}

/* Along one axis the taps t in [0, k) reaching output o are those with o + p - t d = i s for an input
 * index i in [0, n): an arithmetic progression of step s / gcd(s, d) from the first one, with q = o + p - t d
 * falling as t grows. Returns that first tap, or k when there is none. */
static int32_t tconv_first_tap(int32_t o, int32_t p, int32_t d, int32_t s, int32_t k) {
  for (int32_t t = 0; t < k && t < s; t++) {  /* the residues of t d mod s repeat within s taps */
    const int32_t q = o + p - t * d;            /* in range (tconv_out) */
    if (q < 0) return k;
    if (q % s == 0) return t;
  }
  return k;
}

static int32_t tconv_step(int32_t s, int32_t d) {
  int32_t a = s, b = d;
  while (b) {
    const int32_t r = a % b;
    a = b;
    b = r;
  }
  return s / a;
}

static void qtconv_run(const qtconv *c, const int8_t *x, int8_t *y) {
  const int32_t O = c->y.c, C = c->x.c;
  const int32_t steph = tconv_step(c->sh, c->dh), stepw = tconv_step(c->sw, c->dw);
  for (int32_t n = 0; n < c->y.n; n++)
    for (int32_t oh = 0; oh < c->y.h; oh++) {
      const int32_t th0 = tconv_first_tap(oh, c->ph, c->dh, c->sh, c->KH);
      for (int32_t ow = 0; ow < c->y.w; ow++) {
        const int32_t tw0 = tconv_first_tap(ow, c->pw, c->dw, c->sw, c->KW);
        int8_t *yp = y + n * c->y.sn + oh * c->y.sh + ow * c->y.sw;
        for (int32_t oc = 0; oc < O; oc++) {
          uint32_t acc = c->bias ? (uint32_t)c->bias[oc] : 0u;  /* wraps like a 32-bit accumulator */
          int32_t wsum = 0;
          const int8_t *wo = c->w + (ptrdiff_t)oc * c->KH * c->KW * C;
          for (int32_t th = th0; th < c->KH; th += steph) {
            const int32_t qh = oh + c->ph - th * c->dh;
            if (qh < 0) break;
            if (qh / c->sh >= c->x.h) continue;
            for (int32_t tw = tw0; tw < c->KW; tw += stepw) {
              const int32_t qw = ow + c->pw - tw * c->dw;
              if (qw < 0) break;
              if (qw / c->sw >= c->x.w) continue;
              const int8_t *xp = x + n * c->x.sn + (qh / c->sh) * c->x.sh + (qw / c->sw) * c->x.sw;
              const int8_t *wp = wo + ((ptrdiff_t)th * c->KW + tw) * C;
              if (c->x.sc == 1) {
                acc += (uint32_t)dot_sum_s8(xp, wp, C, &wsum);
              } else {
                for (int32_t ci = 0; ci < C; ci++) {
                  acc += (uint32_t)((int32_t)xp[ci * c->x.sc] * (int32_t)wp[ci]);
                  wsum += wp[ci];
                }
              }
            }
          }
          acc += (uint32_t)c->in_off * (uint32_t)wsum;
          const int32_t r = add_sat_i32(cm_requant((int32_t)acc, c->mult[oc], c->shift[oc]), c->out_off);
          yp[oc * c->y.sc] = (int8_t)clamp_i32(r, c->amin, c->amax);
        }
      }
    }
}

/* [input, weight, bias, stride, padding, output_padding, dilation, input_offset, output_offset,
 *  requantize_multipliers, requantize_shifts, activation_min, activation_max, scratch, output_scratch, out] */
static et_status qtconv_op(et_kctx *ctx, et_value *const *args, uint32_t nargs, bool nhwc) {
  ET_CHECK_ARGS(16);
  qtconv c;
  et_tensor *in, *w, *bias = NULL, *mt, *shf, *out;
  ARG_TENSOR_DT(0, in);
  ARG_TENSOR_DT(1, w);
  if (!et_is_none(args[2])) ARG_TENSOR_DT(2, bias);
  ARG_TENSOR_DT(9, mt);
  ARG_TENSOR_DT(10, shf);
  ARG_TENSOR_DT(15, out);
  int32_t s[2], p[2], op[2], d[2];
  if (!pair_arg(args[3], s)) BAD(3);
  if (!pair_arg(args[4], p)) BAD(4);
  if (!pair_arg(args[5], op)) BAD(5);
  if (!pair_arg(args[6], d)) BAD(6);
  ARG_INT(7, c.in_off); ARG_INT(8, c.out_off); ARG_INT(11, c.amin); ARG_INT(12, c.amax);
  if (c.in_off < -255 || c.in_off > 255) BAD(7);  /* int8 zero points: anything else is corrupted */
  if (in->ndim != 4 || w->ndim != 4 || in->dtype != ET_CHAR || w->dtype != ET_CHAR || out->dtype != ET_CHAR) BAD(0);
  if (!contiguous(w)) { ctx->err_detail = 1; return ET_ERR_UNSUPPORTED; }
  geo4(in, nhwc, &c.x);
  c.sh = s[0]; c.sw = s[1]; c.ph = p[0]; c.pw = p[1]; c.dh = d[0]; c.dw = d[1];
  c.KH = w->sizes[1]; c.KW = w->sizes[2];
  const int32_t O = w->sizes[0];
  if (w->sizes[3] != c.x.c || O <= 0 || c.KH <= 0 || c.KW <= 0) BAD(1);
  if (c.sh <= 0 || c.sw <= 0 || c.dh <= 0 || c.dw <= 0 || c.ph < 0 || c.pw < 0) BAD(3);
  if (op[0] < 0 || op[1] < 0 || (op[0] >= c.sh && op[0] >= c.dh) || (op[1] >= c.sw && op[1] >= c.dw)) BAD(5);
  if (numel32(mt) < (uint32_t)O || numel32(shf) < (uint32_t)O || mt->dtype != ET_INT || shf->dtype != ET_INT) BAD(9);
  if (bias && (bias->dtype != ET_INT || numel32(bias) != (uint32_t)O)) BAD(2);
  const int32_t OH = tconv_out(c.x.h, c.sh, c.ph, c.dh, c.KH, op[0]);
  const int32_t OW = tconv_out(c.x.w, c.sw, c.pw, c.dw, c.KW, op[1]);
  if (OH <= 0 || OW <= 0) BAD(0);
  et_status st = resize4(ctx, out, nhwc, c.x.n, O, OH, OW, 15);
  if (st) return st;
  if (ctx->prepare) return ET_OK;
  geo4(out, nhwc, &c.y);
  c.w = (const int8_t *)w->data;
  c.bias = bias ? (const int32_t *)bias->data : NULL;
  c.mult = (const int32_t *)mt->data;
  c.shift = (const int32_t *)shf->data;
  qtconv_run(&c, (const int8_t *)in->data, (int8_t *)out->data);
  return ET_OK;
}

ET_OP("cortex_m::quantized_transpose_conv2d.out", k_cm_quantized_transpose_conv2d_out) {
  return qtconv_op(ctx, args, nargs, false);
}
ET_OP("cortex_m::quantized_transpose_conv2d_nhwc.out", k_cm_quantized_transpose_conv2d_nhwc_out) {
  return qtconv_op(ctx, args, nargs, true);
}
