/* native_layer_norm, _native_batch_norm_legit_no_training (float32, contiguous). */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#include <arm_mve.h>
#define NORM_MVE 1
#endif

/* batch norm of contiguous NCHW (any rank >= 2): each channel's plane of P floats one run, its 1 / sqrt(var +
 * eps) computed once, then the same operations element by element as the walk below ((x - mean) * inv, times
 * the weight, plus the bias) */
static void bn_planes(const float *x, float *y, int64_t N, int32_t C, int64_t P, const float *mp, const float *vp,
                      const float *wp, const float *bp, float eps) {
  for (int64_t n = 0; n < N; n++)
    for (int32_t c = 0; c < C; c++, x += P, y += P) {
      const float inv = 1.0f / et_sqrtf(vp[c] + eps), m = mp[c];
      int64_t i = 0;
#ifdef NORM_MVE
      for (; i + 4 <= P; i += 4) {
        float32x4_t t = vmulq_n_f32(vsubq_n_f32(vld1q_f32(x + i), m), inv);
        if (wp) t = vmulq_n_f32(t, wp[c]);
        if (bp) t = vaddq_n_f32(t, bp[c]);
        vst1q_f32(y + i, t);
      }
#endif
      for (; i < P; i++) {
        float t = (x[i] - m) * inv;
        if (wp) t = t * wp[c];
        if (bp) t = t + bp[c];
        y[i] = t;
      }
    }
}

static et_status opt_f32(et_kctx *ctx, et_value *const *args, uint32_t i, et_tensor **t) {
  *t = NULL;
  if (et_is_none(args[i])) return ET_OK;
  et_status st = et_arg_tensor(ctx, args, i, t);
  if (st != ET_OK) return st;
  if ((*t)->dtype != ET_FLOAT || !et_is_contiguous(*t)) { ctx->err_detail = i; return ET_ERR_UNSUPPORTED; }
  return ET_OK;
}

/* native_layer_norm.out(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias,
 *   float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (out0, out1, out2) */
ET_OP("aten::native_layer_norm.out", k_aten_native_layer_norm_out) {
  ET_CHECK_ARGS(8);
  et_tensor *in, *w, *b, *out, *mean, *rstd;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) || (st = opt_f32(ctx, args, 2, &w)) ||
      (st = opt_f32(ctx, args, 3, &b)) || (st = et_arg_tensor(ctx, args, 5, &out)) ||
      (st = et_arg_tensor(ctx, args, 6, &mean)) || (st = et_arg_tensor(ctx, args, 7, &rstd))) return st;
  uint32_t nn;
  const int64_t *ns = et_int_list(args[1], &nn);
  if (!ns || nn == 0 || nn > in->ndim) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  int64_t inner = 1;
  for (uint32_t i = 0; i < nn; i++) {
    if (ns[i] != in->sizes[in->ndim - nn + i]) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
    inner *= ns[i];
  }
  if (in->dtype != ET_FLOAT || out->dtype != ET_FLOAT || mean->dtype != ET_FLOAT || rstd->dtype != ET_FLOAT ||
      !et_is_contiguous(in)) { ctx->err_detail = 0; return ET_ERR_UNSUPPORTED; }
  if ((w && et_numel(w) != inner) || (b && et_numel(b) != inner)) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  float eps = et_value_as_float(args[4]);
  int32_t ms[ET_MAX_DIMS];
  for (uint32_t d = 0; d < in->ndim; d++) ms[d] = d < in->ndim - nn ? in->sizes[d] : 1;
  if ((st = et_resize_like(out, in)) != ET_OK) { ctx->err_detail = 5; return st; }
  if ((st = et_resize(mean, in->ndim, ms)) != ET_OK) { ctx->err_detail = 6; return st; }
  if ((st = et_resize(rstd, in->ndim, ms)) != ET_OK) { ctx->err_detail = 7; return st; }
  if (!et_is_contiguous(out) || !et_is_contiguous(mean) || !et_is_contiguous(rstd)) {
    ctx->err_detail = 5; return ET_ERR_UNSUPPORTED;
  }
  int64_t outer = inner ? et_numel(in) / inner : 0;
  const float *x = (const float *)in->data;
  float *y = (float *)out->data, *mo = (float *)mean->data, *ro = (float *)rstd->data;
  const float *wp = w ? (const float *)w->data : NULL, *bp = b ? (const float *)b->data : NULL;
  for (int64_t r = 0; r < outer; r++) {
    const float *xr = x + r * inner;
    float *yr = y + r * inner;
    float s = 0.0f;
    for (int64_t i = 0; i < inner; i++) s += xr[i];
    float m = s / (float)inner;
    float v = 0.0f;
    for (int64_t i = 0; i < inner; i++) { float dlt = xr[i] - m; v += dlt * dlt; }
    v = v / (float)inner;
    float rs = 1.0f / et_sqrtf(v + eps);
    for (int64_t i = 0; i < inner; i++) {
      float t = (xr[i] - m) * rs;
      if (wp) t = t * wp[i];
      if (bp) t = t + bp[i];
      yr[i] = t;
    }
    mo[r] = m;
    ro[r] = rs;
  }
  return ET_OK;
}

/* _native_batch_norm_legit_no_training.out(Tensor input, Tensor? weight, Tensor? bias,
 *   Tensor running_mean, Tensor running_var, float momentum, float eps, *, Tensor(a!) out0,
 *   Tensor(b!) out1, Tensor(c!) out2) -> (out0, out1, out2); channel dim 1, out1/out2 empty. */
ET_OP("aten::_native_batch_norm_legit_no_training.out", k_aten__native_batch_norm_legit_no_training_out) {
  ET_CHECK_ARGS(10);
  et_tensor *in, *w, *b, *rm, *rv, *out, *o1, *o2;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) || (st = opt_f32(ctx, args, 1, &w)) ||
      (st = opt_f32(ctx, args, 2, &b)) || (st = opt_f32(ctx, args, 3, &rm)) || (st = opt_f32(ctx, args, 4, &rv)) ||
      (st = et_arg_tensor(ctx, args, 7, &out)) || (st = et_arg_tensor(ctx, args, 8, &o1)) ||
      (st = et_arg_tensor(ctx, args, 9, &o2))) return st;
  if (!rm || !rv) { ctx->err_detail = 3; return ET_ERR_INVALID_ARGUMENT; }
  if (in->ndim < 2 || in->dtype != ET_FLOAT || out->dtype != ET_FLOAT) { ctx->err_detail = 0; return ET_ERR_UNSUPPORTED; }
  int32_t C = in->sizes[1];
  if (et_numel(rm) != C || et_numel(rv) != C || (w && et_numel(w) != C) || (b && et_numel(b) != C)) {
    ctx->err_detail = 3; return ET_ERR_INVALID_ARGUMENT;
  }
  float eps = et_value_as_float(args[6]);
  if ((st = et_resize_like(out, in)) != ET_OK) { ctx->err_detail = 7; return st; }
  int32_t zero = 0;
  if (o1->ndim == 1) { if ((st = et_resize(o1, 1, &zero)) != ET_OK) { ctx->err_detail = 8; return st; } }
  if (o2->ndim == 1) { if ((st = et_resize(o2, 1, &zero)) != ET_OK) { ctx->err_detail = 9; return st; } }
  if (et_is_contiguous(in) && et_is_contiguous(out)) {
    const int64_t P = C ? et_numel(in) / ((int64_t)in->sizes[0] * C) : 0;
    if (C && in->sizes[0])
      bn_planes((const float *)in->data, (float *)out->data, in->sizes[0], C, P, (const float *)rm->data,
                (const float *)rv->data, w ? (const float *)w->data : NULL, b ? (const float *)b->data : NULL, eps);
    return ET_OK;
  }
  ptrdiff_t is[ET_MAX_DIMS], os[ET_MAX_DIMS];
  et_tensor_strides(in, is);
  et_tensor_strides(out, os);
  /* walk all elements except the channel dim; channel innermost */
  int32_t sizes[ET_MAX_DIMS];
  for (uint32_t d = 0; d < in->ndim; d++) sizes[d] = in->sizes[d];
  sizes[1] = 1;
  ptrdiff_t st2[2][ET_MAX_DIMS];
  for (uint32_t d = 0; d < in->ndim; d++) { st2[0][d] = os[d]; st2[1][d] = is[d]; }
  et_idx it;
  et_idx_init(&it, in->ndim, sizes);
  int64_t lanes = C ? et_numel(in) / C : 0;
  const float *x = (const float *)in->data;
  float *y = (float *)out->data;
  const float *mp = (const float *)rm->data, *vp = (const float *)rv->data;
  const float *wp = w ? (const float *)w->data : NULL, *bp = b ? (const float *)b->data : NULL;
  for (int64_t l = 0; l < lanes; l++) {
    for (int32_t c = 0; c < C; c++) {
      float inv = 1.0f / et_sqrtf(vp[c] + eps);
      float t = (x[it.off[1] + c * is[1]] - mp[c]) * inv;
      if (wp) t = t * wp[c];
      if (bp) t = t + bp[c];
      y[it.off[0] + c * os[1]] = t;
    }
    et_idx_next(&it, 2, st2);
  }
  return ET_OK;
}
