/* Copies and fills: clone, _to_copy, dim-order copies (contiguous <-> permuted layouts, dtype
 * conversion), full / full_like / zeros / ones. */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"

static et_status copy_like(et_kctx *ctx, et_value *const *args, uint32_t nargs, uint32_t oi) {
  et_tensor *in, *out;
  et_status st = et_unary_prep(ctx, args, nargs, oi, &in, &out);
  if (st != ET_OK) return st;
  st = et_copy_same_shape(out, in);
  if (st != ET_OK) ctx->err_detail = oi;
  return st;
}

/* dim_order arg (int[]?): when given it must describe out's layout */
static bool dim_order_matches(const et_value *v, const et_tensor *out) {
  if (et_is_none(v)) return true;
  uint32_t n;
  const int64_t *d = et_int_list(v, &n);
  if (!d && n) return false;
  if (n == 0) return out->ndim == 0 || et_is_contiguous(out);
  if (n != out->ndim) return false;
  for (uint32_t i = 0; i < n; i++) {
    int64_t want = out->dim_order ? out->dim_order[i] : (int64_t)i;
    if (d[i] != want) return false;
  }
  return true;
}

ET_OP("aten::clone.out", k_aten_clone_out) { return copy_like(ctx, args, nargs, 2); }
ET_OP("aten::_to_copy.out", k_aten__to_copy_out) { return copy_like(ctx, args, nargs, 3); }

/* _clone_dim_order.out(self, non_blocking=False, dim_order=None, out) */
ET_OP("dim_order_ops::_clone_dim_order.out", k_dim_order_ops__clone_dim_order_out) {
  ET_CHECK_ARGS(4);
  if (et_is_tensor(args[3]) && !dim_order_matches(args[2], args[3]->u.t)) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  return copy_like(ctx, args, nargs, 3);
}

/* _to_dim_order_copy.out(self, non_blocking=False, dim_order=None, out) */
ET_OP("dim_order_ops::_to_dim_order_copy.out", k_dim_order_ops__to_dim_order_copy_out) {
  ET_CHECK_ARGS(4);
  if (et_is_tensor(args[3]) && !dim_order_matches(args[2], args[3]->u.t)) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  return copy_like(ctx, args, nargs, 3);
}

/* Fill out with a scalar converted to out's dtype. */
static void fill_scalar(et_tensor *out, const et_value *v) {
  uint64_t buf = 0;
  et_tensor one = *out;
  one.data = &buf;
  if (!v) { /* zero */ }
  else if (et_dtype_is_float(out->dtype)) et_store_f(&one, 0, et_value_as_float(v));
  else et_store_i(&one, 0, et_value_as_int(v));
  size_t n = (size_t)et_numel(out), es = et_dtype_size(out->dtype);
  if (out->dtype == ET_FLOAT) {
    float f = et_load_f(&one, 0), *o = (float *)out->data;
    for (size_t i = 0; i < n; i++) o[i] = f;
    return;
  }
  uint8_t *o = (uint8_t *)out->data;
  const uint8_t *b = (const uint8_t *)&buf;
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < es; k++) o[i * es + k] = b[k];
}

static et_status sized_fill(et_kctx *ctx, et_value *const *args, uint32_t nargs, uint32_t oi, const et_value *v) {
  ET_CHECK_ARGS(oi + 1);
  et_tensor *out;
  et_status st = et_arg_tensor(ctx, args, oi, &out);
  if (st != ET_OK) return st;
  uint32_t n;
  const int64_t *sz = et_int_list(args[0], &n);
  if ((!sz && n) || n > ET_MAX_DIMS) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  int32_t osz[ET_MAX_DIMS];
  for (uint32_t i = 0; i < n; i++) {
    if (sz[i] < 0) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
    osz[i] = (int32_t)sz[i];
  }
  if ((st = et_resize(out, n, osz)) != ET_OK) { ctx->err_detail = oi; return st; }
  fill_scalar(out, v);
  return ET_OK;
}

static et_status like_fill(et_kctx *ctx, et_value *const *args, uint32_t nargs, uint32_t oi, const et_value *v) {
  et_tensor *in, *out;
  et_status st = et_unary_prep(ctx, args, nargs, oi, &in, &out);
  if (st != ET_OK) return st;
  fill_scalar(out, v);
  return ET_OK;
}

static const et_value ONE = {ET_TAG_INT, 0, {.i = 1}};

/* full.out(size, fill_value, out) */
ET_OP("aten::full.out", k_aten_full_out) { ET_CHECK_ARGS(3); return sized_fill(ctx, args, nargs, 2, args[1]); }
ET_OP("aten::zeros.out", k_aten_zeros_out) { return sized_fill(ctx, args, nargs, 1, 0); }
ET_OP("aten::ones.out", k_aten_ones_out) { return sized_fill(ctx, args, nargs, 1, &ONE); }
/* full_like.out(self, fill_value, memory_format=None, out) */
ET_OP("aten::full_like.out", k_aten_full_like_out) { ET_CHECK_ARGS(4); return like_fill(ctx, args, nargs, 3, args[1]); }
/* zeros_like.out(self, memory_format=None, out) */
ET_OP("aten::zeros_like.out", k_aten_zeros_like_out) { return like_fill(ctx, args, nargs, 2, 0); }
ET_OP("aten::ones_like.out", k_aten_ones_like_out) { return like_fill(ctx, args, nargs, 2, &ONE); }
