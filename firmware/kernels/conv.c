/* aten::convolution.out: 1-d / 2-d convolution, float32, any stride / padding / dilation / groups
 * (depthwise included), optional bias, any dim order. This file checks the arguments and picks a path:
 * the many-channel paths (conv_gemm.h, conv_dw.h), else the direct paths (conv_direct.c); transposed
 * convolutions go to conv_transpose.c. */
#include "conv_direct.h"
#include "conv_transpose.h"
#include "conv_gemm.h"
#include "conv_col.h"
#include "conv_dw.h"
#include "conv_rows.h"

/* The many-channel paths (conv_gemm.h): pointwise NCHW with contiguous planes, channels-last
 * depthwise and channels-last convolutions with several channels per group. false: not one of them. */
static bool conv_f32_gemm(const conv_geo *g, uint32_t nd, const float *x, const float *w, const float *bias,
                          float *y) {
  const int32_t cpg = g->C / g->G, opg = g->O / g->G;
  if (cpg == 0) return false;
  if (g->KH == 1 && g->KW == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0 && g->is[3] == 1 &&
      g->os[3] == 1 && (g->H == 1 || g->is[2] == g->W) && (g->OH == 1 || g->os[2] == g->OW) && cpg > 1) {
    pw_args a;
    a.xc = g->is[1]; a.wo = g->ws[0]; a.wc = g->ws[1]; a.yo = g->os[1];
    a.P = g->H * g->W; a.C = cpg;
    for (int32_t n = 0; n < g->N; n++)
      for (int32_t grp = 0; grp < g->G; grp++) {
        a.x = x + n * g->is[0] + grp * cpg * g->is[1];
        a.w = w + grp * opg * g->ws[0];
        a.bias = bias ? bias + grp * opg : NULL;
        a.y = y + n * g->os[0] + grp * opg * g->os[1];
        conv_pw_nchw(&a, opg);
      }
    return true;
  }
  if (nd != 4) return false;
  nhwc_args a;
  a.H = g->H; a.W = g->W; a.KH = g->KH; a.KW = g->KW; a.sh = g->sh; a.sw = g->sw; a.ph = g->ph; a.pw = g->pw;
  a.dh = g->dh; a.dw = g->dw; a.OW = g->OW;
  a.xh = g->is[2]; a.xw = g->is[3]; a.xc = g->is[1];
  a.wo = g->ws[0]; a.wc = g->ws[1]; a.wh = g->ws[2]; a.ww = g->ws[3];
  a.yh = g->os[2]; a.yw = g->os[3]; a.yc = g->os[1];
  const bool cl = g->is[1] == 1 && g->os[1] == 1;
  /* depthwise, channels on the lanes (Helium gathers them from NCHW planes; portable C keeps NCHW on
   * the patch path) */
  if (cpg == 1 && opg == 1 && (cl || DW_BLOCKS > 1)) {
    a.C = 1; a.O = g->C;
    for (int32_t n = 0; n < g->N; n++) {
      a.x = x + n * g->is[0]; a.w = w; a.bias = bias; a.y = y + n * g->os[0];
      conv_dw(&a, g->OH);
    }
    return true;
  }
#ifdef CONV_MVE
  if (!cl) { /* few input channels (first layers): im2col rows and the pointwise GEMM, outputs stored in place */
    const int32_t q = conv_rows_q(g);
    if (q) {
      conv_rows_nchw(g, q, x, w, bias, y);
      return true;
    }
  }
#endif
  /* NCHW: Helium reads the input in place and scatters the outputs to their planes; worth it from 8
   * output channels a group with a column stride (the patch path copies those taps one by one);
   * portable C keeps NCHW on the patch path */
  if (!(cl || (DW_BLOCKS > 1 && opg >= 8 && g->sw > 1))) return false;
  float zero[CONV_ZMAX];
  a.zero = NULL;
  if ((g->is[1] == 1 || cpg == 1) && cpg <= CONV_ZMAX) {
    for (int32_t i = 0; i < cpg; i++) zero[i] = 0.0f;
    a.zero = zero;
  }
  a.C = cpg; a.O = opg;
  a.flat = g->dw == 1 && (cpg == 1 ? g->is[3] == 1 && g->ws[3] == 1
                                   : g->is[1] == 1 && g->ws[1] == 1 && g->is[3] == cpg && g->ws[3] == cpg);
  for (int32_t n = 0; n < g->N; n++)
    for (int32_t grp = 0; grp < g->G; grp++) {
      a.x = x + n * g->is[0] + grp * cpg * g->is[1];
      a.w = w + grp * opg * g->ws[0];
      a.bias = bias ? bias + grp * opg : NULL;
      a.y = y + n * g->os[0] + grp * opg * g->os[1];
      conv_nhwc(&a, g->OH);
    }
  return true;
}


/* convolution.out(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding,
 *   SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, *, Tensor(a!) out) */
ET_OP("aten::convolution.out", k_aten_convolution_out) {
  ET_CHECK_ARGS(10);
  et_tensor *in, *wt, *out, *bias = NULL;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) || (st = et_arg_tensor(ctx, args, 1, &wt)) ||
      (st = et_arg_tensor(ctx, args, 9, &out))) return st;
  if (!et_is_none(args[2]) && (st = et_arg_tensor(ctx, args, 2, &bias))) return st;
  if (args[6]->tag != ET_TAG_BOOL) { ctx->err_detail = 6; return ET_ERR_INVALID_ARGUMENT; }
  uint32_t nd = in->ndim;
  if ((nd != 3 && nd != 4) || wt->ndim != nd) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  if (in->dtype != ET_FLOAT || wt->dtype != ET_FLOAT || out->dtype != ET_FLOAT ||
      (bias && bias->dtype != ET_FLOAT)) { ctx->err_detail = 0; return ET_ERR_UNSUPPORTED; }
  if (args[6]->u.b) return conv_f32_transposed(ctx, args, in, wt, bias, out);
  uint32_t nsp = nd - 2;
  conv_geo g;
  int32_t s[2], p[2], d[2];
  if (!get_pair(args[3], nsp, s, 1)) { ctx->err_detail = 3; return ET_ERR_INVALID_ARGUMENT; }
  if (!get_pair(args[4], nsp, p, 0)) { ctx->err_detail = 4; return ET_ERR_INVALID_ARGUMENT; }
  if (!get_pair(args[5], nsp, d, 1)) { ctx->err_detail = 5; return ET_ERR_INVALID_ARGUMENT; }
  g.sh = s[0]; g.sw = s[1]; g.ph = p[0]; g.pw = p[1]; g.dh = d[0]; g.dw = d[1];
  const int64_t groups = et_value_as_int(args[8]);
  g.G = (int32_t)groups;
  g.N = in->sizes[0]; g.C = in->sizes[1];
  g.H = nd == 4 ? in->sizes[2] : 1; g.W = in->sizes[nd - 1];
  g.O = wt->sizes[0];
  g.KH = nd == 4 ? wt->sizes[2] : 1; g.KW = wt->sizes[nd - 1];
  if (groups != g.G || g.G <= 0 || g.C % g.G || g.O % g.G || wt->sizes[1] * (int64_t)g.G != g.C ||
      g.sh <= 0 || g.sw <= 0 || g.dh <= 0 || g.dw <= 0 || g.ph < 0 || g.pw < 0 || g.KH <= 0 || g.KW <= 0 ||
      (bias && et_numel(bias) != g.O)) {
    ctx->err_detail = 8; return ET_ERR_INVALID_ARGUMENT;
  }
  /* in 64 bits: hostile paddings / dilations must not overflow the index arithmetic below */
  const int64_t eh = (int64_t)g.H + 2 * (int64_t)g.ph, ew = (int64_t)g.W + 2 * (int64_t)g.pw;
  const int64_t kh = (int64_t)g.dh * (g.KH - 1) + 1, kw = (int64_t)g.dw * (g.KW - 1) + 1;
  if (eh > INT32_MAX / 2 || ew > INT32_MAX / 2 || kh > eh || kw > ew) {
    ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT;
  }
  g.OH = (int32_t)(eh - kh) / g.sh + 1;
  g.OW = (int32_t)(ew - kw) / g.sw + 1;
  int32_t os[4] = {g.N, g.O, g.OH, g.OW};
  if (nd == 3) os[2] = g.OW;
  if ((st = et_resize(out, nd, os)) != ET_OK) { ctx->err_detail = 9; return st; }
  if (bias && !et_is_contiguous(bias)) { ctx->err_detail = 2; return ET_ERR_UNSUPPORTED; }
  nchw_strides(in, g.is);
  nchw_strides(wt, g.ws);
  nchw_strides(out, g.os);
  if (et_numel(out) == 0) return ET_OK;
  const float *xp = (const float *)in->data, *wp = (const float *)wt->data;
  const float *bp = bias ? (const float *)bias->data : NULL;
  if (!CONV_SOFT_FLOAT && conv_f32_gemm(&g, nd, xp, wp, bp, (float *)out->data)) return ET_OK;
  conv_f32_direct(&g, xp, wp, bp, (float *)out->data);
  return ET_OK;
}
