/* Operators that sequence and audio models add: glu, elu, log10 (decibel scales), scalar_tensor,
 * baddbmm. Float dtypes (scalar_tensor: any; log10 also reads ints and bool), any dim order. */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"

/* glu.out(self, int dim=-1, out): first half of dim times the sigmoid of the second half */
ET_OP("aten::glu.out", k_aten_glu_out) {
  ET_CHECK_ARGS(3);
  et_tensor *in, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 2, &out)) != ET_OK) return st;
  if (!args[1] || args[1]->tag != ET_TAG_INT) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  int32_t d = et_wrap_dim(args[1]->u.i, in->ndim);
  if (d < 0 || in->ndim == 0) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (in->sizes[d] % 2) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (!et_dtype_is_float(in->dtype) || !et_dtype_is_float(out->dtype)) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  int32_t osz[ET_MAX_DIMS];
  for (uint32_t k = 0; k < in->ndim; k++) osz[k] = in->sizes[k];
  osz[d] /= 2;
  if ((st = et_resize(out, in->ndim, osz)) != ET_OK) { ctx->err_detail = 2; return st; }
  ptrdiff_t is[ET_MAX_DIMS], os[ET_MAX_DIMS];
  et_tensor_strides(in, is);
  et_tensor_strides(out, os);
  ptrdiff_t wst[2][ET_MAX_DIMS];
  for (uint32_t k = 0; k < in->ndim; k++) { wst[0][k] = os[k]; wst[1][k] = is[k]; }
  ptrdiff_t half = (ptrdiff_t)osz[d] * is[d];
  size_t n = (size_t)et_numel(out);
  et_idx it;
  et_idx_init(&it, in->ndim, osz);
  for (size_t i = 0; i < n; i++) {
    float a = et_load_f(in, it.off[1]), b = et_load_f(in, it.off[1] + half);
    et_store_f(out, it.off[0], a * et_sigmoidf(b));
    et_idx_next(&it, 2, wst);
  }
  return ET_OK;
}

/* elu.out(self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1, out):
 * x > 0 ? scale * x : alpha * scale * (exp(input_scale * x) - 1) */
ET_OP("aten::elu.out", k_aten_elu_out) {
  ET_CHECK_ARGS(5);
  for (uint32_t i = 1; i <= 3; i++) {
    const et_value *v = args[i];
    if (!v || (v->tag != ET_TAG_INT && v->tag != ET_TAG_DOUBLE && v->tag != ET_TAG_BOOL)) {
      ctx->err_detail = i; return ET_ERR_INVALID_ARGUMENT;
    }
  }
  et_tensor *in, *out;
  et_status st = et_unary_prep(ctx, args, nargs, 4, &in, &out);
  if (st != ET_OK) return st;
  if (!et_dtype_is_float(in->dtype) || !et_dtype_is_float(out->dtype)) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  float alpha = et_value_as_float(args[1]), scale = et_value_as_float(args[2]);
  float iscale = et_value_as_float(args[3]), neg = alpha * scale;
  et_ew w;
  if ((st = et_ew_prepare(&w, out, &in, 1, false)) != ET_OK) { ctx->err_detail = 4; return st; }
  for (size_t i = 0; i < w.n; i++) {
    float x = et_load_f(in, w.it.off[1]);
    et_store_f(out, w.it.off[0], x > 0.0f ? x * scale : et_expm1f(x * iscale) * neg);  /* NaN: neg branch, stays NaN */
    et_ew_next(&w);
  }
  return ET_OK;
}

/* log10.out(self, out): float out; log(x) / ln(10), so log10(0) = -inf and negatives NaN */
ET_OP("aten::log10.out", k_aten_log10_out) {
  et_tensor *in, *out;
  et_status st = et_unary_prep(ctx, args, nargs, 1, &in, &out);
  if (st != ET_OK) return st;
  if (!et_dtype_is_float(out->dtype)) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  et_ew w;
  if ((st = et_ew_prepare(&w, out, &in, 1, false)) != ET_OK) { ctx->err_detail = 1; return st; }
  for (size_t i = 0; i < w.n; i++) {
    et_store_f(out, w.it.off[0], et_logf(et_load_f(in, w.it.off[1])) * 0.434294481903251828f);
    et_ew_next(&w);
  }
  return ET_OK;
}

/* baddbmm.out(self, batch1, batch2, *, Scalar beta=1, Scalar alpha=1, out):
 * beta * self + alpha * (batch1 @ batch2), self broadcast to [B, M, N]; beta 0 ignores self (NaN too) */
ET_OP("aten::baddbmm.out", k_aten_baddbmm_out) {
  ET_CHECK_ARGS(6);
  et_tensor *c, *a, *b, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &c)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 1, &a)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 2, &b)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 5, &out)) != ET_OK) return st;
  for (uint32_t i = 3; i <= 4; i++) {
    const et_value *v = args[i];
    if (!v || (v->tag != ET_TAG_INT && v->tag != ET_TAG_DOUBLE && v->tag != ET_TAG_BOOL)) {
      ctx->err_detail = i; return ET_ERR_INVALID_ARGUMENT;
    }
  }
  if (a->ndim != 3) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (b->ndim != 3 || b->sizes[0] != a->sizes[0] || b->sizes[1] != a->sizes[2]) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  if (!et_dtype_is_float(a->dtype) || !et_dtype_is_float(b->dtype) || !et_dtype_is_float(c->dtype) ||
      !et_dtype_is_float(out->dtype)) { ctx->err_detail = 5; return ET_ERR_INVALID_ARGUMENT; }
  int32_t osz[3] = {a->sizes[0], a->sizes[1], b->sizes[2]};
  /* self must broadcast to the product's shape */
  if (c->ndim > 3) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  for (uint32_t k = 0; k < c->ndim; k++) {
    int32_t cs = c->sizes[c->ndim - 1 - k], ps = osz[2 - k];
    if (cs != 1 && cs != ps) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  }
  if ((st = et_resize(out, 3, osz)) != ET_OK) { ctx->err_detail = 5; return st; }
  float beta = et_value_as_float(args[3]), alpha = et_value_as_float(args[4]);
  ptrdiff_t as[ET_MAX_DIMS], bs[ET_MAX_DIMS], os[ET_MAX_DIMS], cs[ET_MAX_DIMS];
  et_tensor_strides(a, as);
  et_tensor_strides(b, bs);
  et_tensor_strides(out, os);
  {
    ptrdiff_t own[ET_MAX_DIMS];
    et_tensor_strides(c, own);
    for (uint32_t k = 0; k < 3; k++) {
      int32_t cd = (int32_t)c->ndim - 3 + (int32_t)k;
      cs[k] = (cd < 0 || c->sizes[cd] == 1) ? 0 : own[cd];
    }
  }
  int32_t K = a->sizes[2];
  bool f32 = a->dtype == ET_FLOAT && b->dtype == ET_FLOAT && c->dtype == ET_FLOAT && out->dtype == ET_FLOAT;
  const float *ap = (const float *)a->data, *bp = (const float *)b->data, *cp = (const float *)c->data;
  float *op = (float *)out->data;
  for (int32_t bi = 0; bi < osz[0]; bi++)
    for (int32_t i = 0; i < osz[1]; i++)
      for (int32_t j = 0; j < osz[2]; j++) {
        ptrdiff_t ai = bi * as[0] + i * as[1], bj = bi * bs[0] + j * bs[2];
        ptrdiff_t ci = bi * cs[0] + i * cs[1] + j * cs[2], oi = bi * os[0] + i * os[1] + j * os[2];
        float acc = 0.0f;
        if (f32)
          for (int32_t k = 0; k < K; k++) acc += ap[ai + k * as[2]] * bp[bj + k * bs[1]];
        else
          for (int32_t k = 0; k < K; k++) acc += et_load_f(a, ai + k * as[2]) * et_load_f(b, bj + k * bs[1]);
        float v = alpha * acc;
        if (beta != 0.0f) v += beta * (f32 ? cp[ci] : et_load_f(c, ci));
        if (f32) op[oi] = v;
        else et_store_f(out, oi, v);
      }
  return ET_OK;
}
