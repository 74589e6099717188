/* aten::embedding.out: gather rows of a 2-d weight (any dtype) by int32/int64 indices. */
#include "et_kernel.h"
#include "kernel_util.h"

/* embedding.out(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False,
 *   bool sparse=False, *, Tensor(a!) out) */
ET_OP("aten::embedding.out", k_aten_embedding_out) {
  ET_CHECK_ARGS(6);
  et_tensor *w, *ix, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &w)) || (st = et_arg_tensor(ctx, args, 1, &ix)) ||
      (st = et_arg_tensor(ctx, args, 5, &out))) return st;
  if (w->ndim != 2 || ix->ndim + 1 > ET_MAX_DIMS || (ix->dtype != ET_LONG && ix->dtype != ET_INT) ||
      out->dtype != w->dtype) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (!et_is_contiguous(w) || !et_is_contiguous(ix)) { ctx->err_detail = 0; return ET_ERR_UNSUPPORTED; }
  int32_t os[ET_MAX_DIMS];
  for (uint32_t d = 0; d < ix->ndim; d++) os[d] = ix->sizes[d];
  os[ix->ndim] = w->sizes[1];
  if ((st = et_resize(out, ix->ndim + 1, os)) != ET_OK) { ctx->err_detail = 5; return st; }
  if (!et_is_contiguous(out)) { ctx->err_detail = 5; return ET_ERR_UNSUPPORTED; }
  size_t row = (size_t)w->sizes[1] * et_dtype_size(w->dtype);
  int64_t n = et_numel(ix), V = w->sizes[0];
  const uint8_t *src = (const uint8_t *)w->data;
  uint8_t *dst = (uint8_t *)out->data;
  for (int64_t i = 0; i < n; i++) {
    int64_t r = ix->dtype == ET_LONG ? ((const int64_t *)ix->data)[i] : ((const int32_t *)ix->data)[i];
    if (r < 0 || r >= V) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
    const uint8_t *s = src + (size_t)r * row;
    uint8_t *d = dst + (size_t)i * row;
    for (size_t b = 0; b < row; b++) d[b] = s[b];
  }
  return ET_OK;
}
