/* _softmax / _log_softmax along one dim (any layout; float32 fast pointer path). */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"

static et_status run_softmax(et_kctx *ctx, et_value *const *args, uint32_t nargs, bool log) {
  ET_CHECK_ARGS(4);
  et_tensor *in, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 3, &out)) != ET_OK) return st;
  if (args[1]->tag != ET_TAG_INT) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  int32_t dim = et_wrap_dim(args[1]->u.i, in->ndim);
  if (dim < 0) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (!et_dtype_is_float(in->dtype) || !et_dtype_is_float(out->dtype)) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  if ((st = et_resize_like(out, in)) != ET_OK) { ctx->err_detail = 3; return st; }
  if (et_numel(in) == 0) return ET_OK;
  int32_t lane_sizes[ET_MAX_DIMS];
  ptrdiff_t st2[2][ET_MAX_DIMS];
  et_tensor_strides(out, st2[0]);
  et_tensor_strides(in, st2[1]);
  uint32_t nd = in->ndim;
  int32_t len = 1;
  ptrdiff_t so = 1, si = 1;
  for (uint32_t d = 0; d < nd; d++) lane_sizes[d] = in->sizes[d];
  if (nd) { len = in->sizes[dim]; so = st2[0][dim]; si = st2[1][dim]; lane_sizes[dim] = 1; }
  size_t lanes = (size_t)et_numel(in) / (size_t)len;
  bool f32 = in->dtype == ET_FLOAT && out->dtype == ET_FLOAT;
  et_idx it;
  et_idx_init(&it, nd, lane_sizes);
  for (size_t l = 0; l < lanes; l++) {
    ptrdiff_t oo = it.off[0], io = it.off[1];
    if (f32) {
      const float *x = (const float *)in->data + io;
      float *o = (float *)out->data + oo;
      float m = x[0];
      for (int32_t k = 1; k < len; k++) m = et_fmaxf_nan(m, x[k * si]);
      float s = 0.0f;
      if (log) {
        for (int32_t k = 0; k < len; k++) s += et_expf(x[k * si] - m);
        float ls = et_logf(s);
        for (int32_t k = 0; k < len; k++) o[k * so] = (x[k * si] - m) - ls;
      } else {
        for (int32_t k = 0; k < len; k++) { float e = et_expf(x[k * si] - m); o[k * so] = e; s += e; }
        for (int32_t k = 0; k < len; k++) o[k * so] = o[k * so] / s;
      }
    } else {
      float m = et_load_f(in, io);
      for (int32_t k = 1; k < len; k++) m = et_fmaxf_nan(m, et_load_f(in, io + k * si));
      float s = 0.0f;
      for (int32_t k = 0; k < len; k++) s += et_expf(et_load_f(in, io + k * si) - m);
      float ls = et_logf(s);
      for (int32_t k = 0; k < len; k++) {
        float v = et_load_f(in, io + k * si) - m;
        et_store_f(out, oo + k * so, log ? v - ls : et_expf(v) / s);
      }
    }
    et_idx_next(&it, 2, st2);
  }
  return ET_OK;
}

/* _softmax.out(self, dim, half_to_float, out) */
ET_OP("aten::_softmax.out", k_aten__softmax_out) { return run_softmax(ctx, args, nargs, false); }
ET_OP("aten::_log_softmax.out", k_aten__log_softmax_out) { return run_softmax(ctx, args, nargs, true); }
