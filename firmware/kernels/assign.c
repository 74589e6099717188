/* Kernels that write one tensor's values into another: copy (broadcast, with dtype conversion),
 * slice_scatter, select_scatter, scalar_tensor. Window transformers (swin) export these. */
#include "et_kernel.h"
#include "kernel_util.h"
#include "dim_walk.h"

/* Strides reading src (its own dim order) broadcast over the nd-d shape sizes; false if it does
 * not broadcast there. */
static bool bcast_to(const et_tensor *src, uint32_t nd, const int32_t *sizes, ptrdiff_t *st) {
  if (src->ndim > nd) return false;
  ptrdiff_t ss[ET_MAX_DIMS];
  et_tensor_strides(src, ss);
  uint32_t lead = nd - src->ndim;
  for (uint32_t i = 0; i < nd; i++) {
    if (i < lead) { st[i] = 0; continue; }
    int32_t s = src->sizes[i - lead];
    if (s != sizes[i] && s != 1) return false;
    st[i] = s == sizes[i] ? ss[i - lead] : 0;
  }
  return true;
}

/* self -> out (same shape), unless they are the same memory */
static et_status copy_self(et_kctx *ctx, et_tensor *self, et_tensor *out, uint32_t oi) {
  if (out->dtype != self->dtype) ET_FAIL(oi, ET_ERR_INVALID_ARGUMENT);
  et_status st = et_resize_like(out, self);
  if (st != ET_OK) ET_FAIL(oi, st);
  st = et_copy_same_shape(out, self);
  if (st != ET_OK) ET_FAIL(oi, st);
  return ET_OK;
}

/* copy.out(self, src, bool non_blocking=False, *, out): self's shape and dtype, src's values */
ET_OP("aten::copy.out", k_aten_copy_out) {
  ET_CHECK_ARGS(4);
  et_tensor *self, *src, *out;
  ET_ARG_T(0, &self); ET_ARG_T(1, &src); ET_ARG_T(3, &out);
  if (out->dtype != self->dtype) ET_FAIL(3, ET_ERR_INVALID_ARGUMENT);
  et_status st = et_resize_like(out, self);
  if (st != ET_OK) ET_FAIL(3, st);
  ptrdiff_t sst[ET_MAX_DIMS], ost[ET_MAX_DIMS];
  if (!bcast_to(src, out->ndim, out->sizes, sst)) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  et_tensor_strides(out, ost);
  et_strided_copy(out, 0, ost, src, 0, sst, out->ndim, out->sizes);
  return ET_OK;
}

/* slice_scatter.out(self, src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1, *,
 * out): self with self[start:end:step] along dim replaced by src (Python slice bounds, clamped). */
ET_OP("aten::slice_scatter.out", k_aten_slice_scatter_out) {
  ET_CHECK_ARGS(7);
  et_tensor *self, *src, *out;
  ET_ARG_T(0, &self); ET_ARG_T(1, &src); ET_ARG_T(6, &out);
  int64_t dv = 0, step = 1;
  if (!et_is_none(args[2]) && !et_arg_int(args[2], &dv)) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
  if (!et_is_none(args[5]) && !et_arg_int(args[5], &step)) ET_FAIL(5, ET_ERR_INVALID_ARGUMENT);
  uint32_t nd = self->ndim;
  int32_t d = et_wrap_dim(dv, nd);
  if (d < 0 || nd == 0) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
  if (step <= 0) ET_FAIL(5, ET_ERR_INVALID_ARGUMENT);
  int64_t len = self->sizes[d], start = 0, end = len;
  if (!et_is_none(args[3]) && !et_arg_int(args[3], &start)) ET_FAIL(3, ET_ERR_INVALID_ARGUMENT);
  if (!et_is_none(args[4]) && !et_arg_int(args[4], &end)) ET_FAIL(4, ET_ERR_INVALID_ARGUMENT);
  if (start < 0) start += len;
  if (end < 0) end += len;
  start = start < 0 ? 0 : start > len ? len : start;
  end = end < start ? start : end > len ? len : end;
  int64_t n = (end - start + step - 1) / step;
  if (src->ndim != nd) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  for (uint32_t k = 0; k < nd; k++)
    if (src->sizes[k] != ((int32_t)k == d ? n : self->sizes[k])) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  et_status st = copy_self(ctx, self, out, 6);
  if (st != ET_OK) return st;
  if (n == 0) return ET_OK;
  ptrdiff_t ost[ET_MAX_DIMS], sst[ET_MAX_DIMS];
  et_tensor_strides(out, ost);
  et_tensor_strides(src, sst);
  ptrdiff_t base = (ptrdiff_t)start * ost[d];
  ost[d] *= (ptrdiff_t)step;
  et_strided_copy(out, base, ost, src, 0, sst, nd, src->sizes);
  return ET_OK;
}

/* select_scatter.out(self, src, int dim, SymInt index, *, out): self with self.select(dim, index)
 * replaced by src */
ET_OP("aten::select_scatter.out", k_aten_select_scatter_out) {
  ET_CHECK_ARGS(5);
  et_tensor *self, *src, *out;
  ET_ARG_T(0, &self); ET_ARG_T(1, &src); ET_ARG_T(4, &out);
  int64_t dv, idx;
  if (!et_arg_int(args[2], &dv)) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
  if (!et_arg_int(args[3], &idx)) ET_FAIL(3, ET_ERR_INVALID_ARGUMENT);
  uint32_t nd = self->ndim;
  int32_t d = et_wrap_dim(dv, nd);
  if (d < 0 || nd == 0) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
  int64_t len = self->sizes[d];
  if (idx < 0) idx += len;
  if (idx < 0 || idx >= len) ET_FAIL(3, ET_ERR_INVALID_ARGUMENT);
  if ((uint32_t)src->ndim + 1u != nd) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  for (uint32_t k = 0, j = 0; k < nd; k++) {
    if ((int32_t)k == d) continue;
    if (src->sizes[j++] != self->sizes[k]) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  }
  et_status st = copy_self(ctx, self, out, 4);
  if (st != ET_OK) return st;
  ptrdiff_t ost[ET_MAX_DIMS], wst[ET_MAX_DIMS], sst[ET_MAX_DIMS];
  et_tensor_strides(out, ost);
  et_tensor_strides(src, sst);
  for (uint32_t k = 0, j = 0; k < nd; k++) if ((int32_t)k != d) wst[j++] = ost[k];
  et_strided_copy(out, (ptrdiff_t)idx * ost[d], wst, src, 0, sst, src->ndim, src->sizes);
  return ET_OK;
}

/* scalar_tensor.out(Scalar s, *, out): a 0-d tensor holding s in out's dtype */
ET_OP("aten::scalar_tensor.out", k_aten_scalar_tensor_out) {
  ET_CHECK_ARGS(2);
  et_tensor *out;
  ET_ARG_T(1, &out);
  const et_value *s = args[0];
  if (!s || (s->tag != ET_TAG_INT && s->tag != ET_TAG_BOOL && s->tag != ET_TAG_DOUBLE)) ET_FAIL(0, ET_ERR_INVALID_ARGUMENT);
  et_status st = et_resize(out, 0, NULL);
  if (st != ET_OK) ET_FAIL(1, st);
  if (et_value_is_floating(s)) et_store_f(out, 0, et_value_as_float(s));
  else et_store_i(out, 0, et_value_as_int(s));
  return ET_OK;
}
