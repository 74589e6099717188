/* Private to firmware/kernels/cortex_m/: a convolution call's checked arguments, shared by the dense
 * (conv.c) and depthwise (depthwise.c) operators. */
#ifndef ET_CORTEX_M_CM_CONV_H
#define ET_CORTEX_M_CM_CONV_H
#include "cm_util.h"

typedef struct {
  g4 x, y;
  int32_t KH, KW, sh, sw, ph, pw, dh, dw;
  int32_t cpg;        /* input channels per group */
  int32_t opg;        /* output channels per group */
  int32_t in_off, out_off, amin, amax;
  const int8_t *w;    /* OHWI (conv) or 1HWO (depthwise) */
  bool depthwise;
  const int32_t *bias, *mult, *shift;
  int8_t *scr;        /* this call's planned scratch (ET_SCRATCH), 16-aligned, or NULL: see qconv_scratch */
} qconv;

/* Checks a call's arguments [input, weight, bias, stride, padding, dilation, (depth_multiplier,)
 * input_offset, output_offset, requantize_multipliers, requantize_shifts, activation_min,
 * activation_max, scratch, out] (nargs checked by the caller), resizes the output and fills *c;
 * *in, *out: the tensors; *constant: weights, bias and requantisation tensors are constants.
 * Inlined: it is the op's own argument check, as one function with the caller. */
__attribute__((always_inline)) static inline et_status qconv_args(et_kctx *ctx, et_value *const *args, bool depthwise,
                                                                   bool nhwc, qconv *cp, et_tensor **inp, et_tensor **outp, bool *constant) {
  const uint32_t o = depthwise ? 1 : 0;  /* index shift after dilation */
  et_tensor *in, *w, *bias = NULL, *mt, *shf, *out;
  /* every dtype is checked below */
  ARG_TENSOR_DT(0, in);
  ARG_TENSOR_DT(1, w);
  if (!et_is_none(args[2])) ARG_TENSOR_DT(2, bias);
  ARG_TENSOR_DT(8 + o, mt);
  ARG_TENSOR_DT(9 + o, shf);
  ARG_TENSOR_DT(13 + o, out);
  qconv *c = cp;  /* filled in place */
  int32_t s[2], p[2], d[2];
  if (!pair_arg(args[3], s)) BAD(3);
  if (!pair_arg(args[4], p)) BAD(4);
  if (!pair_arg(args[5], d)) BAD(5);
  ARG_INT(6 + o, c->in_off); ARG_INT(7 + o, c->out_off); ARG_INT(10 + o, c->amin); ARG_INT(11 + o, c->amax);
  /* int8 zero points: anything else is a corrupted program, and would overflow the sums. */
  if (c->in_off < -255 || c->in_off > 255) BAD(6 + o);
  if (in->ndim != 4 || w->ndim != 4 || in->dtype != ET_CHAR || w->dtype != ET_CHAR || out->dtype != ET_CHAR) BAD(0);
  if (!contiguous(w)) { ctx->err_detail = 1; return ET_ERR_UNSUPPORTED; }
  geo4(in, nhwc, &c->x);
  c->sh = s[0]; c->sw = s[1]; c->ph = p[0]; c->pw = p[1]; c->dh = d[0]; c->dw = d[1];
  c->KH = w->sizes[1]; c->KW = w->sizes[2];
  int32_t O;
  if (depthwise) {
    O = w->sizes[3];
    int32_t dm;
    ARG_INT(6, dm);
    if (w->sizes[0] != 1 || c->x.c <= 0 || O % c->x.c) BAD(1);
    c->cpg = 1;
    c->opg = O / c->x.c;
    (void)dm;
  } else {
    O = w->sizes[0];
    c->cpg = w->sizes[3];
    if (c->cpg <= 0 || c->x.c % c->cpg) BAD(1);
    int32_t G = c->x.c / c->cpg;
    if (O % G) BAD(1);
    c->opg = O / G;
  }
  if (c->sh <= 0 || c->sw <= 0 || c->dh <= 0 || c->dw <= 0 || c->ph < 0 || c->pw < 0) BAD(3);
  if (O < 0 || numel32(mt) < (uint32_t)O || numel32(shf) < (uint32_t)O || mt->dtype != ET_INT ||
      shf->dtype != ET_INT) BAD(8 + o);
  if (bias && (bias->dtype != ET_INT || numel32(bias) != (uint32_t)O)) BAD(2);
  int32_t OH = conv_out(c->x.h, c->ph, c->dh, c->KH, c->sh), OW = conv_out(c->x.w, c->pw, c->dw, c->KW, c->sw);
  if (OH <= 0 || OW <= 0) BAD(0);
  et_status st = resize4(ctx, out, nhwc, c->x.n, O, OH, OW, 13 + o);
  if (st) return st;
  geo4(out, nhwc, &c->y);
  c->depthwise = depthwise;
  c->w = (const int8_t *)w->data;
  c->bias = bias ? (const int32_t *)bias->data : NULL;
  c->mult = (const int32_t *)mt->data;
  c->shift = (const int32_t *)shf->data;
  c->scr = NULL;
  *inp = in;
  *outp = out;
  *constant = w->constant && mt->constant && shf->constant && (!bias || bias->constant);
  return ET_OK;
}

#endif
