/* Shape kernels: permute, view, squeeze, unsqueeze, expand, slice, select, cat, split,
 * constant_pad_nd. All copy through strided walks honouring each tensor's dim order. */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"

#define ARG_T(i, t) do { et_status s_ = et_arg_tensor(ctx, args, (i), (t)); if (s_ != ET_OK) return s_; } while (0)
#define FAIL(i, code) do { ctx->err_detail = (i); return (code); } while (0)

static bool arg_int(const et_value *v, int64_t *out) {
  if (!v) return false;
  if (v->tag == ET_TAG_INT) { *out = v->u.i; return true; }
  if (v->tag == ET_TAG_BOOL) { *out = v->u.b; return true; }
  return false;
}

/* permute_copy.out(self, dims, out) */
ET_OP("aten::permute_copy.out", k_aten_permute_copy_out) {
  ET_CHECK_ARGS(3);
  et_tensor *in, *out;
  ARG_T(0, &in); ARG_T(2, &out);
  uint32_t n;
  const int64_t *dims = et_int_list(args[1], &n);
  uint32_t nd = in->ndim;
  if ((!dims && nd) || n != nd) FAIL(1, ET_ERR_INVALID_ARGUMENT);
  int32_t osz[ET_MAX_DIMS];
  ptrdiff_t ist[ET_MAX_DIMS], pst[ET_MAX_DIMS], ost[ET_MAX_DIMS];
  et_tensor_strides(in, ist);
  uint32_t seen = 0;
  for (uint32_t i = 0; i < nd; i++) {
    int32_t d = et_wrap_dim(dims[i], nd);
    if (d < 0 || (seen & (1u << d))) FAIL(1, ET_ERR_INVALID_ARGUMENT);
    seen |= 1u << d;
    osz[i] = in->sizes[d];
    pst[i] = ist[d];
  }
  et_status st = et_resize(out, nd, osz);
  if (st != ET_OK) FAIL(2, st);
  et_tensor_strides(out, ost);
  et_strided_copy(out, 0, ost, in, 0, pst, nd, osz);
  return ET_OK;
}

/* view_copy.out(self, size, out): size may hold one -1 */
ET_OP("aten::view_copy.out", k_aten_view_copy_out) {
  ET_CHECK_ARGS(3);
  et_tensor *in, *out;
  ARG_T(0, &in); ARG_T(2, &out);
  uint32_t n;
  const int64_t *sz = et_int_list(args[1], &n);
  if ((!sz && n) || n > ET_MAX_DIMS) FAIL(1, ET_ERR_INVALID_ARGUMENT);
  int32_t osz[ET_MAX_DIMS];
  int64_t known = 1, numel = et_numel(in);
  int infer = -1;
  for (uint32_t i = 0; i < n; i++) {
    if (sz[i] == -1) { if (infer >= 0) FAIL(1, ET_ERR_INVALID_ARGUMENT); infer = (int)i; osz[i] = 1; }
    else if (sz[i] < 0 || sz[i] > INT32_MAX) FAIL(1, ET_ERR_INVALID_ARGUMENT);
    else {   /* numel < 2^32: a larger product is a bad size, and must not overflow */
      osz[i] = (int32_t)sz[i]; known *= sz[i];
      if (known > 0xFFFFFFFFll) FAIL(1, ET_ERR_INVALID_ARGUMENT);
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known) FAIL(1, ET_ERR_INVALID_ARGUMENT);
    osz[infer] = (int32_t)(numel / known);
  } else if (known != numel) {
    FAIL(1, ET_ERR_INVALID_ARGUMENT);
  }
  et_status st = et_resize(out, n, osz);
  if (st != ET_OK) FAIL(2, st);
  return et_copy_reshape(out, in);
}

static et_status squeeze_mask(et_kctx *ctx, et_tensor *in, et_tensor *out, uint32_t mask, uint32_t oi) {
  int32_t osz[ET_MAX_DIMS];
  uint32_t ond = 0;
  for (uint32_t d = 0; d < in->ndim; d++)
    if (!((mask >> d) & 1u) || in->sizes[d] != 1) osz[ond++] = in->sizes[d];
  et_status st = et_resize(out, ond, osz);
  if (st != ET_OK) FAIL(oi, st);
  return et_copy_reshape(out, in);
}

/* squeeze_copy.dim_out(self, dim, out) */
ET_OP("aten::squeeze_copy.dim_out", k_aten_squeeze_copy_dim_out) {
  ET_CHECK_ARGS(3);
  et_tensor *in, *out;
  ARG_T(0, &in); ARG_T(2, &out);
  int64_t dv;
  if (!arg_int(args[1], &dv)) FAIL(1, ET_ERR_INVALID_ARGUMENT);
  int32_t d = et_wrap_dim(dv, in->ndim);
  if (d < 0) FAIL(1, ET_ERR_INVALID_ARGUMENT);
  return squeeze_mask(ctx, in, out, in->ndim ? 1u << d : 0u, 2);
}

/* squeeze_copy.dims_out(self, dims, out) */
ET_OP("aten::squeeze_copy.dims_out", k_aten_squeeze_copy_dims_out) {
  ET_CHECK_ARGS(3);
  et_tensor *in, *out;
  ARG_T(0, &in); ARG_T(2, &out);
  uint32_t n, mask = 0;
  const int64_t *dims = et_int_list(args[1], &n);
  if (!dims && n) FAIL(1, ET_ERR_INVALID_ARGUMENT);
  for (uint32_t i = 0; i < n; i++) {
    int32_t d = et_wrap_dim(dims[i], in->ndim);
    if (d < 0) FAIL(1, ET_ERR_INVALID_ARGUMENT);
    if (in->ndim) mask |= 1u << d;
  }
  return squeeze_mask(ctx, in, out, mask, 2);
}

/* squeeze_copy.out(self, out): all size-1 dims */
ET_OP("aten::squeeze_copy.out", k_aten_squeeze_copy_out) {
  ET_CHECK_ARGS(2);
  et_tensor *in, *out;
  ARG_T(0, &in); ARG_T(1, &out);
  return squeeze_mask(ctx, in, out, 0xFFFFFFFFu, 1);
}

/* unsqueeze_copy.out(self, dim, out) */
ET_OP("aten::unsqueeze_copy.out", k_aten_unsqueeze_copy_out) {
  ET_CHECK_ARGS(3);
  et_tensor *in, *out;
  ARG_T(0, &in); ARG_T(2, &out);
  int64_t dv;
  if (!arg_int(args[1], &dv)) FAIL(1, ET_ERR_INVALID_ARGUMENT);
  if (in->ndim + 1u > ET_MAX_DIMS) FAIL(1, ET_ERR_INVALID_ARGUMENT);
  int32_t d = et_wrap_dim(dv, in->ndim + 1u);
  if (d < 0) FAIL(1, ET_ERR_INVALID_ARGUMENT);
  int32_t osz[ET_MAX_DIMS];
  uint32_t k = 0;
  for (uint32_t i = 0; i <= in->ndim; i++) osz[i] = ((int32_t)i == d) ? 1 : in->sizes[k++];
  et_status st = et_resize(out, in->ndim + 1u, osz);
  if (st != ET_OK) FAIL(2, st);
  return et_copy_reshape(out, in);
}

/* expand_copy.out(self, size, implicit=False, out) */
ET_OP("aten::expand_copy.out", k_aten_expand_copy_out) {
  ET_CHECK_ARGS(4);
  et_tensor *in, *out;
  ARG_T(0, &in); ARG_T(3, &out);
  uint32_t n;
  const int64_t *sz = et_int_list(args[1], &n);
  if ((!sz && n) || n < in->ndim || n > ET_MAX_DIMS) FAIL(1, ET_ERR_INVALID_ARGUMENT);
  int32_t osz[ET_MAX_DIMS];
  uint32_t lead = n - in->ndim;
  for (uint32_t i = 0; i < n; i++) {
    if (i < lead) {
      if (sz[i] < 0) FAIL(1, ET_ERR_INVALID_ARGUMENT);
      osz[i] = (int32_t)sz[i];
    } else {
      int32_t s = in->sizes[i - lead];
      if (sz[i] == -1) osz[i] = s;
      else if (sz[i] == s || s == 1) osz[i] = (int32_t)sz[i];
      else FAIL(1, ET_ERR_INVALID_ARGUMENT);
    }
  }
  et_status st = et_resize(out, n, osz);
  if (st != ET_OK) FAIL(3, st);
  ptrdiff_t sst[ET_MAX_DIMS], ost[ET_MAX_DIMS];
  et_bcast_strides(in, n, osz, sst);
  et_tensor_strides(out, ost);
  et_strided_copy(out, 0, ost, in, 0, sst, n, osz);
  return ET_OK;
}

/* slice_copy.Tensor_out(self, dim=0, start=None, end=None, step=1, out) */
ET_OP("aten::slice_copy.Tensor_out", k_aten_slice_copy_tensor_out) {
  ET_CHECK_ARGS(6);
  et_tensor *in, *out;
  ARG_T(0, &in); ARG_T(5, &out);
  int64_t dv = 0, start = 0, end = INT64_MAX, step = 1;
  if (!et_is_none(args[1]) && !arg_int(args[1], &dv)) FAIL(1, ET_ERR_INVALID_ARGUMENT);
  if (!et_is_none(args[2]) && !arg_int(args[2], &start)) FAIL(2, ET_ERR_INVALID_ARGUMENT);
  if (!et_is_none(args[3]) && !arg_int(args[3], &end)) FAIL(3, ET_ERR_INVALID_ARGUMENT);
  if (!et_is_none(args[4]) && !arg_int(args[4], &step)) FAIL(4, ET_ERR_INVALID_ARGUMENT);
  if (in->ndim == 0) FAIL(0, ET_ERR_INVALID_ARGUMENT);
  int32_t d = et_wrap_dim(dv, in->ndim);
  if (d < 0) FAIL(1, ET_ERR_INVALID_ARGUMENT);
  if (step <= 0) FAIL(4, ET_ERR_INVALID_ARGUMENT);
  int64_t len = in->sizes[d];
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (start > len) start = len;
  if (end < start) end = start;
  if (end > len) end = len;
  int64_t cnt = (end - start + step - 1) / step;
  int32_t osz[ET_MAX_DIMS];
  for (uint32_t i = 0; i < in->ndim; i++) osz[i] = in->sizes[i];
  osz[d] = (int32_t)cnt;
  et_status st = et_resize(out, in->ndim, osz);
  if (st != ET_OK) FAIL(5, st);
  ptrdiff_t ist[ET_MAX_DIMS], ost[ET_MAX_DIMS];
  et_tensor_strides(in, ist);
  et_tensor_strides(out, ost);
  ptrdiff_t base = (ptrdiff_t)start * ist[d];
  ist[d] *= (ptrdiff_t)step;
  et_strided_copy(out, 0, ost, in, base, ist, in->ndim, osz);
  return ET_OK;
}

/* select_copy.int_out(self, dim, index, out) */
ET_OP("aten::select_copy.int_out", k_aten_select_copy_int_out) {
  ET_CHECK_ARGS(4);
  et_tensor *in, *out;
  ARG_T(0, &in); ARG_T(3, &out);
  int64_t dv, idx;
  if (!arg_int(args[1], &dv)) FAIL(1, ET_ERR_INVALID_ARGUMENT);
  if (!arg_int(args[2], &idx)) FAIL(2, ET_ERR_INVALID_ARGUMENT);
  if (in->ndim == 0) FAIL(0, ET_ERR_INVALID_ARGUMENT);
  int32_t d = et_wrap_dim(dv, in->ndim);
  if (d < 0) FAIL(1, ET_ERR_INVALID_ARGUMENT);
  int64_t len = in->sizes[d];
  if (idx < 0) idx += len;
  if (idx < 0 || idx >= len) FAIL(2, ET_ERR_INVALID_ARGUMENT);
  int32_t osz[ET_MAX_DIMS];
  ptrdiff_t ist[ET_MAX_DIMS], sst[ET_MAX_DIMS], ost[ET_MAX_DIMS];
  et_tensor_strides(in, ist);
  uint32_t k = 0;
  for (uint32_t i = 0; i < in->ndim; i++)
    if ((int32_t)i != d) { osz[k] = in->sizes[i]; sst[k] = ist[i]; k++; }
  et_status st = et_resize(out, k, osz);
  if (st != ET_OK) FAIL(3, st);
  et_tensor_strides(out, ost);
  et_strided_copy(out, 0, ost, in, (ptrdiff_t)idx * ist[d], sst, k, osz);
  return ET_OK;
}

/* cat.out(tensors, dim=0, out); 1-d empty tensors are skipped (legacy behaviour) */
ET_OP("aten::cat.out", k_aten_cat_out) {
  ET_CHECK_ARGS(3);
  et_tensor *out;
  ARG_T(2, &out);
  uint32_t n;
  et_tensor *const *ts = et_tensor_list(args[0], &n);
  if (!ts || n == 0) FAIL(0, ET_ERR_INVALID_ARGUMENT);
  int64_t dv = 0;
  if (!et_is_none(args[1]) && !arg_int(args[1], &dv)) FAIL(1, ET_ERR_INVALID_ARGUMENT);
  const et_tensor *ref = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (!ts[i]) FAIL(0, ET_ERR_INVALID_ARGUMENT);
    if (!(ts[i]->ndim == 1 && ts[i]->sizes[0] == 0)) { ref = ts[i]; break; }
  }
  if (!ref) {  /* everything empty */
    int32_t z = 0;
    et_status st = (out->ndim == 1) ? et_resize(out, 1, &z) : ET_OK;
    if (st != ET_OK) FAIL(2, st);
    return ET_OK;
  }
  uint32_t nd = ref->ndim;
  if (nd == 0) FAIL(0, ET_ERR_INVALID_ARGUMENT);
  int32_t d = et_wrap_dim(dv, nd);
  if (d < 0) FAIL(1, ET_ERR_INVALID_ARGUMENT);
  int32_t osz[ET_MAX_DIMS];
  for (uint32_t i = 0; i < nd; i++) osz[i] = ref->sizes[i];
  int64_t total = 0;
  for (uint32_t i = 0; i < n; i++) {
    const et_tensor *t = ts[i];
    if (t->ndim == 1 && t->sizes[0] == 0) continue;
    if (t->ndim != nd) FAIL(0, ET_ERR_INVALID_ARGUMENT);
    for (uint32_t k = 0; k < nd; k++)
      if ((int32_t)k != d && t->sizes[k] != ref->sizes[k]) FAIL(0, ET_ERR_INVALID_ARGUMENT);
    if (!t->data && et_numel(t)) FAIL(0, ET_ERR_INVALID_ARGUMENT);
    total += t->sizes[d];
  }
  osz[d] = (int32_t)total;
  et_status st = et_resize(out, nd, osz);
  if (st != ET_OK) FAIL(2, st);
  ptrdiff_t ost[ET_MAX_DIMS], tst[ET_MAX_DIMS];
  et_tensor_strides(out, ost);
  ptrdiff_t off = 0;
  for (uint32_t i = 0; i < n; i++) {
    const et_tensor *t = ts[i];
    if (t->ndim == 1 && t->sizes[0] == 0) continue;
    et_tensor_strides(t, tst);
    et_strided_copy(out, off * ost[d], ost, t, 0, tst, nd, t->sizes);
    off += t->sizes[d];
  }
  return ET_OK;
}

/* split_with_sizes_copy.out(self, split_sizes, dim=0, Tensor[] out) -> () */
ET_OP("aten::split_with_sizes_copy.out", k_aten_split_with_sizes_copy_out) {
  ET_CHECK_ARGS(4);
  et_tensor *in;
  ARG_T(0, &in);
  uint32_t ns, no;
  const int64_t *sz = et_int_list(args[1], &ns);
  et_tensor *const *outs = et_tensor_list(args[3], &no);
  if (!sz || ns == 0) FAIL(1, ET_ERR_INVALID_ARGUMENT);
  if (!outs || no != ns) FAIL(3, ET_ERR_INVALID_ARGUMENT);
  int64_t dv = 0;
  if (!et_is_none(args[2]) && !arg_int(args[2], &dv)) FAIL(2, ET_ERR_INVALID_ARGUMENT);
  if (in->ndim == 0) FAIL(0, ET_ERR_INVALID_ARGUMENT);
  int32_t d = et_wrap_dim(dv, in->ndim);
  if (d < 0) FAIL(2, ET_ERR_INVALID_ARGUMENT);
  int64_t total = 0;
  for (uint32_t i = 0; i < ns; i++) { if (sz[i] < 0) FAIL(1, ET_ERR_INVALID_ARGUMENT); total += sz[i]; }
  if (total != in->sizes[d]) FAIL(1, ET_ERR_INVALID_ARGUMENT);
  ptrdiff_t ist[ET_MAX_DIMS], ost[ET_MAX_DIMS];
  et_tensor_strides(in, ist);
  int32_t osz[ET_MAX_DIMS];
  for (uint32_t k = 0; k < in->ndim; k++) osz[k] = in->sizes[k];
  ptrdiff_t off = 0;
  for (uint32_t i = 0; i < ns; i++) {
    et_tensor *o = outs[i];
    if (!o || !et_dtype_size(o->dtype)) FAIL(3, ET_ERR_INVALID_ARGUMENT);
    osz[d] = (int32_t)sz[i];
    et_status st = et_resize(o, in->ndim, osz);
    if (st != ET_OK) FAIL(3, st);
    if (!o->data && sz[i]) FAIL(3, ET_ERR_INVALID_ARGUMENT);
    et_tensor_strides(o, ost);
    et_strided_copy(o, 0, ost, in, off * ist[d], ist, in->ndim, osz);
    off += (ptrdiff_t)sz[i];
  }
  return ET_OK;
}

/* constant_pad_nd.out(self, pad, value=0, out): pad pairs from the last dim; negative crops */
ET_OP("aten::constant_pad_nd.out", k_aten_constant_pad_nd_out) {
  ET_CHECK_ARGS(4);
  et_tensor *in, *out;
  ARG_T(0, &in); ARG_T(3, &out);
  uint32_t np;
  const int64_t *pad = et_int_list(args[1], &np);
  uint32_t nd = in->ndim;
  if ((!pad && np) || (np & 1u) || np / 2 > nd) FAIL(1, ET_ERR_INVALID_ARGUMENT);
  int32_t before[ET_MAX_DIMS], osz[ET_MAX_DIMS];
  for (uint32_t k = 0; k < nd; k++) { before[k] = 0; osz[k] = in->sizes[k]; }
  for (uint32_t i = 0; i < np / 2; i++) {
    uint32_t k = nd - 1 - i;
    int64_t s = (int64_t)in->sizes[k] + pad[2 * i] + pad[2 * i + 1];
    if (s < 0) FAIL(1, ET_ERR_INVALID_ARGUMENT);
    before[k] = (int32_t)pad[2 * i];
    osz[k] = (int32_t)s;
  }
  et_status st = et_resize(out, nd, osz);
  if (st != ET_OK) FAIL(3, st);
  /* the fill value in out's dtype */
  uint64_t fillbuf = 0;
  et_tensor fill = *out;
  fill.data = &fillbuf;
  if (et_dtype_is_float(out->dtype)) et_store_f(&fill, 0, et_value_as_float(args[2]));
  else et_store_i(&fill, 0, et_value_as_int(args[2]));
  ptrdiff_t ist[ET_MAX_DIMS], ost[1][ET_MAX_DIMS];
  et_tensor_strides(in, ist);
  et_tensor_strides(out, ost[0]);
  et_idx it;
  et_idx_init(&it, nd, osz);
  size_t n = (size_t)et_numel(out);
  for (size_t i = 0; i < n; i++) {
    ptrdiff_t src = 0;
    bool inside = true;
    for (uint32_t k = 0; k < nd; k++) {
      int32_t p = it.pos[k] - before[k];
      if (p < 0 || p >= in->sizes[k]) { inside = false; break; }
      src += (ptrdiff_t)p * ist[k];
    }
    if (inside) et_copy_elem(out, it.off[0], in, src);
    else et_copy_elem(out, it.off[0], &fill, 0);
    et_idx_next(&it, 1, ost);
  }
  return ET_OK;
}
