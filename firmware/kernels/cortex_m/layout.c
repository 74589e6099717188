/* cortex_m:: layout operators (transpose, pad). */
#include "cm_util.h"

/* ---------------------------------------------------------------- layout ops */

/* int8 d[b][r][c] = s[b][c][r] for nb blocks of R x C (the source rows read in order): ShuffleNet's channel
 * shuffle in NHWC is this per pixel, C = groups rows of R = channels / groups interleaved. The index walk
 * of et_strided_copy takes ~8 instructions a byte on its runs of C = 2. */
static void transpose_i8(int8_t *d, const int8_t *s, uint32_t nb, uint32_t R, uint32_t C) {
  const size_t blk = (size_t)R * C;
  for (uint32_t b = 0; b < nb; b++, d += blk, s += blk) {
    uint32_t r0 = 0;
#ifdef CM_MVE
    /* 16 rows of the output a step; a tail of R & 15 as the last 16 again (the same bytes rewritten) */
    if (C == 2 && R >= 16) {
      for (uint32_t r = 0;; r += 16) {
        if (r + 16 > R) r = R - 16;
        const int8x16x2_t v = {{vld1q_s8(s + r), vld1q_s8(s + R + r)}};
        vst2q_s8(d + 2 * r, v);
        if (r + 16 == R) break;
      }
      r0 = R;
    } else if (C == 4 && R >= 16) {
      for (uint32_t r = 0;; r += 16) {
        if (r + 16 > R) r = R - 16;
        const int8x16x4_t v = {{vld1q_s8(s + r), vld1q_s8(s + R + r), vld1q_s8(s + 2 * R + r),
                                vld1q_s8(s + 3 * R + r)}};
        vst4q_s8(d + 4 * r, v);
        if (r + 16 == R) break;
      }
      r0 = R;
    }
#endif
    for (uint32_t c = 0; c < C; c++) {
      const int8_t *sr = s + (size_t)c * R;
      int8_t *dc = d + c;
      for (uint32_t r = r0; r < R; r++) dc[(size_t)r * C] = sr[r];
    }
  }
}

/* The copy out[i] = in[src . i] over the output's dims in memory order (size-1 dims dropped, dims that both
 * sides step over as one merged) is a batch of 2-d transposes: *nb blocks of *R x *C, see transpose_i8 */
static bool as_transposes(const et_tensor *out, const ptrdiff_t *src, uint32_t *nb, uint32_t *R, uint32_t *C) {
  ptrdiff_t ost[ET_MAX_DIMS];
  et_tensor_strides(out, ost);
  /* the output's dims from outermost to innermost in memory */
  int32_t sz[ET_MAX_DIMS];
  ptrdiff_t ss[ET_MAX_DIMS], ds[ET_MAX_DIMS];
  uint32_t n = 0;
  for (uint32_t k = 0; k < out->ndim; k++) {
    const uint32_t d = out->dim_order ? out->dim_order[k] : k;
    if (d >= out->ndim) return false;
    if (out->sizes[d] == 1) continue;
    if (n && ds[n - 1] == ost[d] * out->sizes[d] && ss[n - 1] == src[d] * out->sizes[d]) {
      sz[n - 1] *= out->sizes[d];
      ds[n - 1] = ost[d];
      ss[n - 1] = src[d];
      continue;
    }
    sz[n] = out->sizes[d]; ds[n] = ost[d]; ss[n] = src[d];
    n++;
  }
  if (n < 2 || n > 3) return false;
  const uint32_t o = n - 2;   /* dims o, o + 1: R, C */
  const ptrdiff_t r = sz[o], c = sz[o + 1];
  if (ds[o + 1] != 1 || ds[o] != c || ss[o] != 1 || ss[o + 1] != r) return false;
  if (n == 3 && (ds[0] != r * c || ss[0] != r * c)) return false;
  *nb = n == 3 ? (uint32_t)sz[0] : 1u;
  *R = (uint32_t)r;
  *C = (uint32_t)c;
  return true;
}

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
  uint32_t nb, R, C;
  if (out->dtype == ET_CHAR && as_transposes(out, src, &nb, &R, &C)) {
    transpose_i8((int8_t *)out->data, (const int8_t *)in->data, nb, R, C);
    return ET_OK;
  }
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
