/* cortex_m:: layout operators (transpose, pad). */
#include "cm_util.h"

/* ---------------------------------------------------------------- layout ops */

/* transpose.out(Tensor input, int[] perm, *, Tensor(a!) out): out = input.permute(perm) */
ET_OP("cortex_m::transpose.out", k_cm_transpose_out) {
  ET_CHECK_ARGS(3);
  et_tensor *in, *out;
  ARG_TENSOR(0, in);
  ARG_TENSOR(2, out);
  uint32_t np;
  const int64_t *perm = et_int_list(args[1], &np);
  if (!perm || np != in->ndim || out->dtype != in->dtype) BAD(1);
  int32_t os[ET_MAX_DIMS];
  ptrdiff_t ist[ET_MAX_DIMS], src[ET_MAX_DIMS], dst[ET_MAX_DIMS];
  et_tensor_strides(in, ist);
  uint32_t seen = 0;
  for (uint32_t j = 0; j < np; j++) {
    int32_t pj = et_wrap_dim(perm[j], in->ndim);
    if (pj < 0 || (seen & (1u << pj))) BAD(1);
    seen |= 1u << pj;
    os[j] = in->sizes[pj];
    src[j] = ist[pj];
  }
  et_status st = et_resize(out, np, os);
  if (st) { ctx->err_detail = 2; return st; }
  et_tensor_strides(out, dst);
  if (et_numel(out) == 0) return ET_OK;
  et_strided_copy(out, 0, dst, in, 0, src, np, out->sizes);
  return ET_OK;
}

/* pad.out(Tensor input, int[] pre_pad, int[] post_pad, int pad_value, *, Tensor(a!) out): pads are
 * 4 entries for the dims of a rank-4 view (right-aligned); for channels-last inputs they are in
 * NHWC (physical) order. */
ET_OP("cortex_m::pad.out", k_cm_pad_out) {
  ET_CHECK_ARGS(5);
  et_tensor *in, *out;
  ARG_TENSOR(0, in);
  ARG_TENSOR(4, out);
  uint32_t n1, n2;
  const int64_t *pre = et_int_list(args[1], &n1), *post = et_int_list(args[2], &n2);
  int32_t val;
  ARG_INT(3, val);
  uint32_t r = in->ndim;
  if (!pre || !post || n1 != 4 || n2 != 4 || r > 4 || r < 1 || out->dtype != in->dtype) BAD(1);
  bool cl = false;
  if (r == 4) {
    if (in->sizes[1] == 1 || (in->sizes[2] == 1 && in->sizes[3] == 1)) cl = true;
    else if (in->dim_order && in->dim_order[0] == 0 && in->dim_order[1] == 2) cl = true;
  }
  static const uint8_t inv_nhwc[4] = {0, 3, 1, 2};
  int32_t lp[4], lq[4];
  for (uint32_t i = 0; i < 4; i++) {
    lp[i] = (int32_t)(cl ? pre[inv_nhwc[i]] : pre[i]);
    lq[i] = (int32_t)(cl ? post[inv_nhwc[i]] : post[i]);
  }
  uint32_t off = 4 - r;
  int32_t os[4];
  for (uint32_t d = 0; d < r; d++) {
    if (lp[off + d] < 0 || lq[off + d] < 0) BAD(1);
    os[d] = in->sizes[d] + lp[off + d] + lq[off + d];
  }
  et_status st = et_resize(out, r, os);
  if (st) { ctx->err_detail = 4; return st; }
  int64_t total = et_numel(out);
  if (et_dtype_is_float(out->dtype)) for (int64_t i = 0; i < total; i++) et_store_f(out, i, (float)val);
  else if (out->dtype == ET_CHAR) { int8_t *y = (int8_t *)out->data; for (int64_t i = 0; i < total; i++) y[i] = (int8_t)val; }
  else for (int64_t i = 0; i < total; i++) et_store_i(out, i, val);
  ptrdiff_t ist[ET_MAX_DIMS], ost[ET_MAX_DIMS];
  et_tensor_strides(in, ist);
  et_tensor_strides(out, ost);
  ptrdiff_t base = 0;
  for (uint32_t d = 0; d < r; d++) base += lp[off + d] * ost[d];
  if (et_numel(in) > 0) et_strided_copy(out, base, ost, in, 0, ist, r, in->sizes);
  return ET_OK;
}
