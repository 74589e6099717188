/* Statistics: var / var_mean over a set of dims (correction, keepdim), native_group_norm.
 * Float dtypes in and out; any dim order. Two passes (mean, then squared deviations) in float32. */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"

/* dims: NONE or an empty INT_LIST = all dims; a duplicated or out-of-range dim fails. */
static bool dim_mask(const et_value *v, uint32_t ndim, uint32_t *mask) {
  *mask = 0;
  uint32_t n = 0;
  const int64_t *dims = NULL;
  if (!et_is_none(v)) {
    if (v->tag != ET_TAG_INT_LIST) return false;
    dims = et_int_list(v, &n);
  }
  if (n == 0) { *mask = ndim ? (1u << ndim) - 1u : 0u; return true; }
  for (uint32_t i = 0; i < n; i++) {
    int32_t d = et_wrap_dim(dims[i], ndim);
    if (d < 0 && !(ndim == 0 && (dims[i] == 0 || dims[i] == -1))) return false;
    if (ndim == 0) continue;
    if (*mask & (1u << d)) return false;
    *mask |= 1u << d;
  }
  return true;
}

/* correction as a float: NONE -> 1 (unbiased) */
static bool correction_of(const et_value *v, float *c) {
  if (et_is_none(v)) { *c = 1.0f; return true; }
  if (v->tag != ET_TAG_INT && v->tag != ET_TAG_DOUBLE && v->tag != ET_TAG_BOOL) return false;
  *c = et_value_as_float(v);
  return true;
}

/* acc plus, over the n elements of in walked from base (nd dims of sizes sz, in strides st[0]), each
 * element x (sq false) or (x - mean)^2 (sq true), added in walk order */
static float walk_sum(float acc, const et_tensor *in, ptrdiff_t base, uint32_t nd, const int32_t *sz,
                      ptrdiff_t (*st)[ET_MAX_DIMS], size_t n, float mean, bool sq) {
  et_idx it;
  et_idx_init(&it, nd, sz);
  for (size_t i = 0; i < n; i++) {
    const float x = et_load_f(in, base + it.off[0]);
    if (sq) {
      float dl = x - mean;
      acc += dl * dl;
    } else {
      acc += x;
    }
    et_idx_next(&it, 1, st);
  }
  return acc;
}

/* out_var (and out_mean if not NULL) over the dims in mask of in */
static et_status run_var(et_kctx *ctx, et_tensor *in, uint32_t mask, bool keep, float corr,
                         et_tensor *ov, uint32_t vi, et_tensor *om, uint32_t mi) {
  if (!et_dtype_is_float(in->dtype)) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  if (!et_dtype_is_float(ov->dtype)) { ctx->err_detail = vi; return ET_ERR_INVALID_ARGUMENT; }
  if (om && !et_dtype_is_float(om->dtype)) { ctx->err_detail = mi; return ET_ERR_INVALID_ARGUMENT; }
  uint32_t nd = in->ndim;
  int32_t osz[ET_MAX_DIMS];
  uint32_t ond = 0;
  for (uint32_t d = 0; d < nd; d++) {
    if (mask & (1u << d)) { if (keep) osz[ond++] = 1; }
    else osz[ond++] = in->sizes[d];
  }
  et_status st;
  if ((st = et_resize(ov, ond, osz)) != ET_OK) { ctx->err_detail = vi; return st; }
  if (om && (st = et_resize(om, ond, osz)) != ET_OK) { ctx->err_detail = mi; return st; }
  ptrdiff_t ist[ET_MAX_DIMS], vst[ET_MAX_DIMS], mst[ET_MAX_DIMS];
  et_tensor_strides(in, ist);
  et_tensor_strides(ov, vst);
  if (om) et_tensor_strides(om, mst);
  int32_t ksz[ET_MAX_DIMS], rsz[ET_MAX_DIMS];
  ptrdiff_t kst[3][ET_MAX_DIMS], rst[1][ET_MAX_DIMS];
  uint32_t nk = 0, nr = 0, od = 0;
  size_t count = 1;
  for (uint32_t d = 0; d < nd; d++) {
    if (mask & (1u << d)) {
      rsz[nr] = in->sizes[d]; rst[0][nr] = ist[d]; nr++;
      count *= (size_t)in->sizes[d];
      if (keep) od++;
    } else {
      ksz[nk] = in->sizes[d]; kst[0][nk] = ist[d]; kst[1][nk] = vst[od]; kst[2][nk] = om ? mst[od] : 0;
      nk++; od++;
    }
  }
  float denom = (float)count - corr;  /* no degrees of freedom left: NaN, as the portable kernels give */
  size_t nout = (size_t)et_numel(ov);
  et_idx ko;
  et_idx_init(&ko, nk, ksz);
  for (size_t o = 0; o < nout; o++) {
    float s = walk_sum(0.0f, in, ko.off[0], nr, rsz, rst, count, 0.0f, false);
    float mean = count ? s / (float)count : ET_NAN;
    float ss = walk_sum(0.0f, in, ko.off[0], nr, rsz, rst, count, mean, true);
    et_store_f(ov, ko.off[1], denom > 0.0f ? ss / denom : ET_NAN);
    if (om) et_store_f(om, ko.off[2], mean);
    et_idx_next(&ko, 3, kst);
  }
  return ET_OK;
}

/* var.correction_out and var_mean.correction_out: self, dim, correction, keepdim, out0 at args[4] (the
 * variance) and, with_mean, out1 at args[5] (the mean) */
static et_status var_correction(et_kctx *ctx, et_value *const *args, bool with_mean) {
  et_tensor *in, *ov, *om = NULL;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 4, &ov)) != ET_OK) return st;
  if (with_mean && (st = et_arg_tensor(ctx, args, 5, &om)) != ET_OK) return st;
  uint32_t mask;
  float corr;
  if (!dim_mask(args[1], in->ndim, &mask)) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (!correction_of(args[2], &corr)) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  if (!args[3] || args[3]->tag != ET_TAG_BOOL) { ctx->err_detail = 3; return ET_ERR_INVALID_ARGUMENT; }
  return run_var(ctx, in, mask, args[3]->u.b, corr, ov, 4, om, 5);
}

/* var.correction_out(self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, out) */
ET_OP("aten::var.correction_out", k_aten_var_correction_out) {
  ET_CHECK_ARGS(5);
  return var_correction(ctx, args, false);
}

/* var.out(self, int[1]? dim, bool unbiased=True, bool keepdim=False, out) */
ET_OP("aten::var.out", k_aten_var_out) {
  ET_CHECK_ARGS(5);
  et_tensor *in, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 4, &out)) != ET_OK) return st;
  uint32_t mask;
  if (!dim_mask(args[1], in->ndim, &mask)) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (!args[2] || args[2]->tag != ET_TAG_BOOL) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  if (!args[3] || args[3]->tag != ET_TAG_BOOL) { ctx->err_detail = 3; return ET_ERR_INVALID_ARGUMENT; }
  return run_var(ctx, in, mask, args[3]->u.b, args[2]->u.b ? 1.0f : 0.0f, out, 4, NULL, 0);
}

/* var_mean.correction_out(self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False,
 *   Tensor(a!) out0, Tensor(b!) out1) -> (var, mean) */
ET_OP("aten::var_mean.correction_out", k_aten_var_mean_correction_out) {
  ET_CHECK_ARGS(6);
  return var_correction(ctx, args, true);
}

/* native_group_norm.out(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW,
 *   int group, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (out, mean, rstd)
 * mean and rstd are [N, group]; weight/bias per channel. */
ET_OP("aten::native_group_norm.out", k_aten_native_group_norm_out) {
  ET_CHECK_ARGS(11);
  et_tensor *in, *w = NULL, *b = NULL, *out, *mo, *ro;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) != ET_OK) return st;
  if (!et_is_none(args[1]) && (st = et_arg_tensor(ctx, args, 1, &w)) != ET_OK) return st;
  if (!et_is_none(args[2]) && (st = et_arg_tensor(ctx, args, 2, &b)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 8, &out)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 9, &mo)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 10, &ro)) != ET_OK) return st;
  for (uint32_t i = 3; i <= 6; i++)
    if (!args[i] || args[i]->tag != ET_TAG_INT) { ctx->err_detail = i; return ET_ERR_INVALID_ARGUMENT; }
  int64_t N = args[3]->u.i, C = args[4]->u.i, HW = args[5]->u.i, G = args[6]->u.i;
  if (in->ndim < 2 || N != in->sizes[0] || C != in->sizes[1]) { ctx->err_detail = 3; return ET_ERR_INVALID_ARGUMENT; }
  if (G <= 0 || C % G) { ctx->err_detail = 6; return ET_ERR_INVALID_ARGUMENT; }
  if (N * C * HW != et_numel(in)) { ctx->err_detail = 5; return ET_ERR_INVALID_ARGUMENT; }
  if (!et_dtype_is_float(in->dtype) || out->dtype != in->dtype) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  if (!et_dtype_is_float(mo->dtype) || !et_dtype_is_float(ro->dtype)) { ctx->err_detail = 9; return ET_ERR_INVALID_ARGUMENT; }
  if ((w && (et_numel(w) != C || !et_dtype_is_float(w->dtype)))) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if ((b && (et_numel(b) != C || !et_dtype_is_float(b->dtype)))) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  float eps = et_value_as_float(args[7]);
  int32_t ms[2] = {(int32_t)N, (int32_t)G};
  if ((st = et_resize_like(out, in)) != ET_OK) { ctx->err_detail = 8; return st; }
  if ((st = et_resize(mo, 2, ms)) != ET_OK) { ctx->err_detail = 9; return st; }
  if ((st = et_resize(ro, 2, ms)) != ET_OK) { ctx->err_detail = 10; return st; }
  /* walk each (n, channel) plane over the spatial dims with their own strides (dim order kept) */
  ptrdiff_t is[ET_MAX_DIMS], os[ET_MAX_DIMS];
  et_tensor_strides(in, is);
  et_tensor_strides(out, os);
  uint32_t ns = in->ndim - 2;
  int32_t ssz[ET_MAX_DIMS];
  ptrdiff_t sst[2][ET_MAX_DIMS];
  for (uint32_t d = 0; d < ns; d++) { ssz[d] = in->sizes[d + 2]; sst[0][d] = is[d + 2]; sst[1][d] = os[d + 2]; }
  ptrdiff_t mst[ET_MAX_DIMS], rst[ET_MAX_DIMS];
  et_tensor_strides(mo, mst);
  et_tensor_strides(ro, rst);
  int64_t cpg = C / G;
  float cnt = (float)(cpg * HW);
  for (int64_t n = 0; n < N; n++) {
    for (int64_t g = 0; g < G; g++) {
      float s = 0.0f;
      for (int64_t c = g * cpg; c < (g + 1) * cpg; c++)
        s = walk_sum(s, in, (ptrdiff_t)n * is[0] + (ptrdiff_t)c * is[1], ns, ssz, sst, (size_t)HW, 0.0f, false);
      float mean = cnt > 0.0f ? s / cnt : ET_NAN;
      float ss = 0.0f;
      for (int64_t c = g * cpg; c < (g + 1) * cpg; c++)
        ss = walk_sum(ss, in, (ptrdiff_t)n * is[0] + (ptrdiff_t)c * is[1], ns, ssz, sst, (size_t)HW, mean, true);
      float rstd = et_rsqrtf(ss / cnt + eps);
      for (int64_t c = g * cpg; c < (g + 1) * cpg; c++) {
        float sc = w ? et_load_f(w, c) : 1.0f, sh = b ? et_load_f(b, c) : 0.0f;
        et_idx it;
        et_idx_init(&it, ns, ssz);
        ptrdiff_t ib = (ptrdiff_t)n * is[0] + (ptrdiff_t)c * is[1], ob = (ptrdiff_t)n * os[0] + (ptrdiff_t)c * os[1];
        for (int64_t i = 0; i < HW; i++) {
          float t = (et_load_f(in, ib + it.off[0]) - mean) * rstd;
          et_store_f(out, ob + it.off[1], t * sc + sh);
          et_idx_next(&it, 2, sst);
        }
      }
      et_store_f(mo, n * mst[0] + g * mst[1], mean);
      et_store_f(ro, n * rst[0] + g * rst[1], rstd);
    }
  }
  return ET_OK;
}
