/* Reductions over a set of dims: sum, mean, amax, amin (compensated float32 sums, int64 for
 * integer sums). */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#include <arm_mve.h>
#define RED_MVE 1
#endif

enum { R_SUM, R_MEAN, R_AMAX, R_AMIN };

/* dims: INT_LIST (empty = all for every op here), NONE = all, or a single INT. */
static bool reduce_mask(const et_value *v, uint32_t ndim, uint32_t *mask) {
  *mask = 0;
  if (et_is_none(v)) { *mask = (1u << ndim) - 1u; return true; }
  if (v->tag == ET_TAG_INT) {
    int32_t d = et_wrap_dim(v->u.i, ndim);
    if (d < 0) return false;
    if (ndim) *mask = 1u << d;
    return true;
  }
  uint32_t n;
  if (v->tag != ET_TAG_INT_LIST) return false;
  const int64_t *dims = et_int_list(v, &n);
  if (n == 0 || !dims) { *mask = (1u << ndim) - 1u; return true; }
  for (uint32_t i = 0; i < n; i++) {
    int32_t d = et_wrap_dim(dims[i], ndim);
    if (d < 0) return false;
    if (ndim) {
      if (*mask & (1u << d)) return false;  /* duplicate dim */
      *mask |= 1u << d;
    }
  }
  return true;
}

/* The dims with size > 1 among sizes[0..n) as one arithmetic run: count elements at *step apart (their
 * strides, in increasing order, each the previous one times its size). false when they are not. */
static bool as_run(const int32_t *sizes, const ptrdiff_t *strides, uint32_t n, ptrdiff_t *step, size_t *count) {
  uint32_t used = 0;
  ptrdiff_t next = 0;
  *count = 1;
  *step = 1;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t best = n;
    for (uint32_t d = 0; d < n; d++) /* the smallest stride not used yet, of a dim longer than 1 */
      if (!(used & (1u << d)) && sizes[d] > 1 && (best == n || strides[d] < strides[best])) best = d;
    if (best == n) break;
    used |= 1u << best;
    if (next && strides[best] != next) return false;
    if (!next) *step = strides[best];
    *count *= (size_t)sizes[best];
    next = strides[best] * sizes[best];
  }
  return true;
}

/* float32 sum / mean where the reduced elements of one output are one arithmetic run and the outputs
 * another (NCHW or channels-last global pooling): Neumaier sums without the index walker */
static void reduce_runs_f32(int op, const float *x, float *y, ptrdiff_t ostep_in, ptrdiff_t ostep_out, size_t nout,
                            ptrdiff_t rstep, size_t rcount) {
  const float countf = (float)rcount;
  size_t o = 0;
#ifdef RED_MVE
  /* four outputs a vector (their runs gathered unless the outputs are neighbours in the input), each lane the
   * same Neumaier steps as the scalar loop below (the same results) */
  if (ostep_in >= 0 && ostep_in <= (ptrdiff_t)(UINT32_MAX / 16)) {
    const uint32x4_t off = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)ostep_in);
    for (; o + 4 <= nout; o += 4, x += 4 * ostep_in) {
      float32x4_t acc = vdupq_n_f32(0.0f), comp = acc;
      const float *p = x;
      for (size_t r = rcount; r > 0; r--, p += rstep) {
        const float32x4_t v = ostep_in == 1 ? vld1q_f32(p) : vldrwq_gather_shifted_offset_f32(p, off);
        const float32x4_t t = vaddq_f32(acc, v);
        const mve_pred16_t big = vcmpgeq_f32(vabsq_f32(acc), vabsq_f32(v));
        comp = vaddq_f32(comp, vpselq_f32(vaddq_f32(vsubq_f32(acc, t), v), vaddq_f32(vsubq_f32(v, t), acc), big));
        acc = t;
      }
      float sums[4];
      vst1q_f32(sums, vaddq_f32(acc, comp));
      for (int l = 0; l < 4; l++) y[(o + l) * ostep_out] = op == R_MEAN ? sums[l] / countf : sums[l];
    }
  }
#endif
  for (; o < nout; o++, x += ostep_in) {
    float acc = 0.0f, comp = 0.0f;
    const float *p = x;
    for (size_t r = 0; r < rcount; r++, p += rstep) {
      const float v = *p, t = acc + v;
      if (et_fabsf(acc) >= et_fabsf(v)) comp += (acc - t) + v;
      else comp += (v - t) + acc;
      acc = t;
    }
    acc += comp;
    y[o * ostep_out] = op == R_MEAN ? acc / countf : acc;
  }
}

static et_status run_reduce(et_kctx *ctx, et_value *const *args, uint32_t nargs, int op,
                            const et_value *dimv, const et_value *keepv, uint32_t oi) {
  ET_CHECK_ARGS(oi + 1);
  et_tensor *in, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, oi, &out)) != ET_OK) return st;
  uint32_t nd = in->ndim, mask;
  if (!reduce_mask(dimv, nd, &mask)) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  bool keep = keepv && keepv->tag == ET_TAG_BOOL && keepv->u.b;
  int32_t osz[ET_MAX_DIMS];
  uint32_t ond = 0;
  for (uint32_t d = 0; d < nd; d++) {
    if (mask & (1u << d)) { if (keep) osz[ond++] = 1; }
    else osz[ond++] = in->sizes[d];
  }
  if ((st = et_resize(out, ond, osz)) != ET_OK) { ctx->err_detail = oi; return st; }
  if ((op == R_AMAX || op == R_AMIN)) {
    for (uint32_t d = 0; d < nd; d++)
      if ((mask & (1u << d)) && in->sizes[d] == 0) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  }
  if (op == R_MEAN && !et_dtype_is_float(out->dtype)) { ctx->err_detail = oi; return ET_ERR_INVALID_ARGUMENT; }
  /* split dims: kept (outer walker over in + out) and reduced (inner walker over in) */
  ptrdiff_t ist[ET_MAX_DIMS], ost[ET_MAX_DIMS];
  et_tensor_strides(in, ist);
  et_tensor_strides(out, ost);
  int32_t ksz[ET_MAX_DIMS], rsz[ET_MAX_DIMS];
  ptrdiff_t kst[2][ET_MAX_DIMS], rst[1][ET_MAX_DIMS];
  uint32_t nk = 0, nr = 0, od = 0;
  size_t rcount = 1;
  for (uint32_t d = 0; d < nd; d++) {
    if (mask & (1u << d)) {
      rsz[nr] = in->sizes[d]; rst[0][nr] = ist[d]; nr++;
      rcount *= (size_t)in->sizes[d];
      if (keep) od++;
    } else {
      ksz[nk] = in->sizes[d]; kst[0][nk] = ost[od]; kst[1][nk] = ist[d]; nk++; od++;
    }
  }
  size_t nout = (size_t)et_numel(out);
  if ((op == R_SUM || op == R_MEAN) && in->dtype == ET_FLOAT && out->dtype == ET_FLOAT && rcount > 0 && nout > 0) {
    ptrdiff_t rstep, kstep_in, kstep_out;
    size_t rc, kc, kc_out;
    if (as_run(rsz, rst[0], nr, &rstep, &rc) && as_run(ksz, kst[1], nk, &kstep_in, &kc) &&
        as_run(ksz, kst[0], nk, &kstep_out, &kc_out) && rc == rcount && kc == nout && kc_out == nout) {
      /* one kept dim longer than 1 at most: input and output then walk it in the same order */
      uint32_t longk = 0;
      for (uint32_t d = 0; d < nk; d++) longk += ksz[d] > 1;
      if (longk <= 1) {
        reduce_runs_f32(op, (const float *)in->data, (float *)out->data, kstep_in, kstep_out, nout, rstep, rcount);
        return ET_OK;
      }
    }
  }
  bool use_f = et_dtype_is_float(out->dtype) || (op == R_MEAN);
  bool in_f = et_dtype_is_float(in->dtype);
  bool f32 = in->dtype == ET_FLOAT;
  float countf = (float)rcount;
  et_idx ko;
  et_idx_init(&ko, nk, ksz);
  for (size_t o = 0; o < nout; o++) {
    ptrdiff_t base = ko.off[1];
    et_idx ri;
    et_idx_init(&ri, nr, rsz);
    if (use_f || in_f) {
      float acc = 0.0f, comp = 0.0f;
      bool first = true;
      const float *x = (const float *)in->data;
      for (size_t r = 0; r < rcount; r++) {
        ptrdiff_t off = base + ri.off[0];
        float v = f32 ? x[off] : et_load_f(in, off);
        if (op == R_SUM || op == R_MEAN) {  /* Kahan-Babuska (Neumaier) compensation */
          float t = acc + v;
          if (et_fabsf(acc) >= et_fabsf(v)) comp += (acc - t) + v;
          else comp += (v - t) + acc;
          acc = t;
        } else if (first) {
          acc = v; first = false;
        } else if (op == R_AMAX) {
          acc = et_fmaxf_nan(acc, v);
        } else {
          acc = et_fminf_nan(acc, v);
        }
        et_idx_next(&ri, 1, rst);
      }
      if (op == R_SUM || op == R_MEAN) acc += comp;
      if (op == R_MEAN) acc = acc / countf;
      if (use_f) et_store_f(out, ko.off[0], acc);
      else et_store_i(out, ko.off[0], et_f32_to_i64(acc));
    } else {
      int64_t acc = 0;
      for (size_t r = 0; r < rcount; r++) {
        int64_t v = et_load_i(in, base + ri.off[0]);
        if (op == R_SUM) acc = (int64_t)((uint64_t)acc + (uint64_t)v);
        else if (r == 0) acc = v;
        else if (op == R_AMAX) acc = v > acc ? v : acc;
        else acc = v < acc ? v : acc;
        et_idx_next(&ri, 1, rst);
      }
      et_store_i(out, ko.off[0], acc);
    }
    et_idx_next(&ko, 2, kst);
  }
  return ET_OK;
}

/* sum.IntList_out(self, int[1]? dim, bool keepdim=False, ScalarType? dtype, out) */
ET_OP("aten::sum.IntList_out", k_aten_sum_intlist_out) {
  ET_CHECK_ARGS(5);
  return run_reduce(ctx, args, nargs, R_SUM, args[1], args[2], 4);
}
/* mean.out(self, int[1]? dim, bool keepdim=False, ScalarType? dtype, out) */
ET_OP("aten::mean.out", k_aten_mean_out) {
  ET_CHECK_ARGS(5);
  return run_reduce(ctx, args, nargs, R_MEAN, args[1], args[2], 4);
}
/* sum.out(self, ScalarType? dtype, out), mean.dtype_out(self, ScalarType? dtype, out) */
ET_OP("aten::sum.out", k_aten_sum_out) { ET_CHECK_ARGS(3); return run_reduce(ctx, args, nargs, R_SUM, 0, 0, 2); }
ET_OP("aten::mean.dtype_out", k_aten_mean_dtype_out) { ET_CHECK_ARGS(3); return run_reduce(ctx, args, nargs, R_MEAN, 0, 0, 2); }
/* amax.out(self, int[1] dim=[], bool keepdim=False, out) */
ET_OP("aten::amax.out", k_aten_amax_out) {
  ET_CHECK_ARGS(4);
  return run_reduce(ctx, args, nargs, R_AMAX, args[1], args[2], 3);
}
ET_OP("aten::amin.out", k_aten_amin_out) {
  ET_CHECK_ARGS(4);
  return run_reduce(ctx, args, nargs, R_AMIN, args[1], args[2], 3);
}
