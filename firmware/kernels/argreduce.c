/* Arg-reductions: argmax/argmin, max/min over a dim (values + indices), max/min of a whole tensor,
 * topk. NaN counts as larger than any number (it wins max and argmax, and min and argmin too:
 * PyTorch propagates it); among equal values the lowest index wins. Integer tensors compare as
 * int64, floating ones as float. */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"
#include "dim_walk.h"

typedef struct { float f; int64_t i; bool nan; } elem_val;

static inline elem_val load_val(const et_tensor *t, ptrdiff_t off, bool fl) {
  elem_val v;
  if (fl) { v.f = et_load_f(t, off); v.nan = v.f != v.f; v.i = 0; }
  else { v.i = et_load_i(t, off); v.f = 0.0f; v.nan = false; }
  return v;
}

/* a strictly better than b for max (want_max) or min; NaN beats everything */
static inline bool better(elem_val a, elem_val b, bool fl, bool want_max) {
  if (fl) {
    if (b.nan) return false;
    if (a.nan) return true;
    return want_max ? a.f > b.f : a.f < b.f;
  }
  return want_max ? a.i > b.i : a.i < b.i;
}

/* values (may be NULL) and indices (may be NULL) of the best element of every reduced line */
static et_status arg_reduce(et_kctx *ctx, et_tensor *in, uint32_t mask, bool keep, bool want_max,
                            et_tensor *vals, uint32_t vi, et_tensor *idx, uint32_t ii) {
  int32_t osz[ET_MAX_DIMS];
  uint32_t ond = et_reduced_sizes(in, mask, keep, osz);
  et_tensor *outs[2];
  uint32_t nouts = 0;
  if (vals) {
    et_status st = et_resize(vals, ond, osz);
    if (st != ET_OK) ET_FAIL(vi, st);
    if (vals->dtype != in->dtype) ET_FAIL(vi, ET_ERR_INVALID_ARGUMENT);
    outs[nouts++] = vals;
  }
  if (idx) {
    et_status st = et_resize(idx, ond, osz);
    if (st != ET_OK) ET_FAIL(ii, st);
    if (idx->dtype != ET_LONG) ET_FAIL(ii, ET_ERR_INVALID_ARGUMENT);
    outs[nouts++] = idx;
  }
  et_rplan p;
  et_rplan_init(&p, in, mask, keep, outs, nouts);
  if (p.nouter == 0) return ET_OK;
  if (p.ninner == 0) ET_FAIL(0, ET_ERR_INVALID_ARGUMENT);  /* no element to pick */
  bool fl = et_dtype_is_float(in->dtype);
  et_idx ko;
  et_idx_init(&ko, p.nk, p.ksz);
  for (size_t o = 0; o < p.nouter; o++) {
    et_idx ri;
    et_idx_init(&ri, p.nr, p.rsz);
    ptrdiff_t base = ko.off[0], best_off = base;
    elem_val best = load_val(in, base, fl);
    size_t best_r = 0;
    for (size_t r = 1; r < p.ninner; r++) {
      et_idx_next(&ri, 1, p.rst);
      elem_val v = load_val(in, base + ri.off[0], fl);
      if (better(v, best, fl, want_max)) { best = v; best_r = r; best_off = base + ri.off[0]; }
    }
    uint32_t k = 1;
    if (vals) et_copy_elem(vals, ko.off[k++], in, best_off);
    if (idx) ((int64_t *)idx->data)[ko.off[k]] = (int64_t)best_r;
    et_idx_next(&ko, p.nops, p.kst);
  }
  return ET_OK;
}

static et_status argmaxmin(et_kctx *ctx, et_value *const *args, uint32_t nargs, bool want_max) {
  ET_CHECK_ARGS(4);
  et_tensor *in, *out;
  ET_ARG_T(0, &in); ET_ARG_T(3, &out);
  uint32_t mask;
  if (!et_dims_mask(args[1], in->ndim, true, &mask)) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  bool keep = et_arg_bool(args[2], false);
  if (et_is_none(args[1])) keep = keep && in->ndim > 0;  /* dim=None, keepdim: all dims kept as 1 */
  return arg_reduce(ctx, in, mask, keep, want_max, NULL, 0, out, 3);
}

/* argmax.out(self, int? dim=None, bool keepdim=False, *, out) */
ET_OP("aten::argmax.out", k_aten_argmax_out) { return argmaxmin(ctx, args, nargs, true); }
ET_OP("aten::argmin.out", k_aten_argmin_out) { return argmaxmin(ctx, args, nargs, false); }

static et_status maxmin_dim(et_kctx *ctx, et_value *const *args, uint32_t nargs, bool want_max) {
  ET_CHECK_ARGS(5);
  et_tensor *in, *vals, *idx;
  ET_ARG_T(0, &in); ET_ARG_T(3, &vals); ET_ARG_T(4, &idx);
  int64_t dv;
  if (!et_arg_int(args[1], &dv)) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  int32_t d = et_wrap_dim(dv, in->ndim);
  if (d < 0) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  uint32_t mask = in->ndim ? 1u << d : 0u;
  return arg_reduce(ctx, in, mask, et_arg_bool(args[2], false), want_max, vals, 3, idx, 4);
}

/* max.dim_max(self, int dim, bool keepdim=False, *, max, max_values) -> (values, indices) */
ET_OP("aten::max.dim_max", k_aten_max_dim_max) { return maxmin_dim(ctx, args, nargs, true); }
/* min.dim_min(self, int dim, bool keepdim=False, *, min, min_indices) -> (values, indices) */
ET_OP("aten::min.dim_min", k_aten_min_dim_min) { return maxmin_dim(ctx, args, nargs, false); }

static et_status maxmin_all(et_kctx *ctx, et_value *const *args, uint32_t nargs, bool want_max) {
  ET_CHECK_ARGS(2);
  et_tensor *in, *out;
  ET_ARG_T(0, &in); ET_ARG_T(1, &out);
  uint32_t mask = in->ndim ? (uint32_t)((1ull << in->ndim) - 1u) : 0u;
  return arg_reduce(ctx, in, mask, false, want_max, out, 1, NULL, 0);
}

/* max.unary_out(self, *, out), min.unary_out: the whole tensor's max / min as a 0-d tensor */
ET_OP("aten::max.unary_out", k_aten_max_unary_out) { return maxmin_all(ctx, args, nargs, true); }
ET_OP("aten::min.unary_out", k_aten_min_unary_out) { return maxmin_all(ctx, args, nargs, false); }

/* ---- topk ---- */

/* Order of topk's picks: the better value first (NaN the largest), equal values by lower index.
 * PyTorch leaves the order of ties unspecified; its CPU kernel and executorch's give whatever their
 * partial sort leaves, which no simple rule reproduces. */
static inline bool topk_before(elem_val a, int64_t ai, elem_val b, int64_t bi, bool fl, bool largest) {
  bool tie_first = ai < bi;
  (void)largest;
  if (fl && (a.nan || b.nan)) {
    if (a.nan && b.nan) return tie_first;
    return largest ? a.nan : b.nan;
  }
  if (better(a, b, fl, largest)) return true;
  if (better(b, a, fl, largest)) return false;
  return tie_first;
}

/* topk.values(self, SymInt k, int dim=-1, bool largest=True, bool sorted=True, *, values, indices).
 * Selection without scratch memory: pick i is the first element (in pick order) after pick i-1,
 * O(n k) per line, which suits the small k real models use. Always returns the picks sorted. */
ET_OP("aten::topk.values", k_aten_topk_values) {
  ET_CHECK_ARGS(7);
  et_tensor *in, *vals, *idx;
  ET_ARG_T(0, &in); ET_ARG_T(5, &vals); ET_ARG_T(6, &idx);
  int64_t k, dv;
  if (!et_arg_int(args[1], &k)) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  if (!et_arg_int(args[2], &dv)) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
  bool largest = et_arg_bool(args[3], true);
  uint32_t nd = in->ndim;
  int32_t d = et_wrap_dim(dv, nd);
  if (d < 0) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
  int32_t len = nd ? in->sizes[d] : 1;
  if (k < 0 || k > len) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  int32_t osz[ET_MAX_DIMS];
  for (uint32_t i = 0; i < nd; i++) osz[i] = in->sizes[i];
  if (nd) osz[d] = (int32_t)k;
  et_status st;
  if ((st = et_resize(vals, nd, osz)) != ET_OK) ET_FAIL(5, st);
  if ((st = et_resize(idx, nd, osz)) != ET_OK) ET_FAIL(6, st);
  if (vals->dtype != in->dtype) ET_FAIL(5, ET_ERR_INVALID_ARGUMENT);
  if (idx->dtype != ET_LONG) ET_FAIL(6, ET_ERR_INVALID_ARGUMENT);
  ptrdiff_t ist[ET_MAX_DIMS], vst[ET_MAX_DIMS], xst[ET_MAX_DIMS];
  et_tensor_strides(in, ist); et_tensor_strides(vals, vst); et_tensor_strides(idx, xst);
  ptrdiff_t is_d = nd ? ist[d] : 1, vs_d = nd ? vst[d] : 1, xs_d = nd ? xst[d] : 1;
  int32_t pos[ET_MAX_DIMS] = {0}, lsz[ET_MAX_DIMS];  /* lines: every dim but d (size 1 there) */
  for (uint32_t i = 0; i < nd; i++) lsz[i] = (int32_t)i == d ? 1 : in->sizes[i];
  if (et_numel(vals) == 0) return ET_OK;
  bool fl = et_dtype_is_float(in->dtype);
  int64_t *xo = (int64_t *)idx->data;
  do {
    ptrdiff_t ib = et_pos_offset(pos, ist, nd), vb = et_pos_offset(pos, vst, nd), xb = et_pos_offset(pos, xst, nd);
    elem_val prev = {0.0f, 0, false};
    int64_t prev_i = -1;
    for (int64_t s = 0; s < k; s++) {
      elem_val best = {0.0f, 0, false};
      int64_t best_i = -1;
      for (int32_t j = 0; j < len; j++) {
        elem_val v = load_val(in, ib + (ptrdiff_t)j * is_d, fl);
        if (prev_i >= 0 && !topk_before(prev, prev_i, v, j, fl, largest)) continue;  /* taken already */
        if (best_i < 0 || topk_before(v, j, best, best_i, fl, largest)) { best = v; best_i = j; }
      }
      if (best_i < 0) ET_FAIL(0, ET_ERR_INTERNAL);
      et_copy_elem(vals, vb + (ptrdiff_t)s * vs_d, in, ib + (ptrdiff_t)best_i * is_d);
      xo[xb + (ptrdiff_t)s * xs_d] = best_i;
      prev = best; prev_i = best_i;
    }
  } while (et_pos_next(pos, lsz, nd));
  return ET_OK;
}

/* ---- any / all ---- */

static et_status any_all(et_kctx *ctx, et_tensor *in, et_tensor *out, uint32_t oi, uint32_t mask,
                         bool keep, bool is_any) {
  int32_t osz[ET_MAX_DIMS];
  uint32_t ond = et_reduced_sizes(in, mask, keep, osz);
  et_status st = et_resize(out, ond, osz);
  if (st != ET_OK) ET_FAIL(oi, st);
  if (out->dtype != ET_BOOL && out->dtype != ET_BYTE) ET_FAIL(oi, ET_ERR_INVALID_ARGUMENT);
  et_rplan p;
  et_rplan_init(&p, in, mask, keep, &out, 1);
  bool fl = et_dtype_is_float(in->dtype);
  uint8_t *o = (uint8_t *)out->data;
  et_idx ko;
  et_idx_init(&ko, p.nk, p.ksz);
  for (size_t n = 0; n < p.nouter; n++) {
    et_idx ri;
    et_idx_init(&ri, p.nr, p.rsz);
    bool acc = !is_any;
    for (size_t r = 0; r < p.ninner; r++) {
      ptrdiff_t off = ko.off[0] + ri.off[0];
      bool t = fl ? et_load_f(in, off) != 0.0f : et_load_i(in, off) != 0;  /* NaN is true */
      if (t == is_any) { acc = is_any; break; }
      et_idx_next(&ri, 1, p.rst);
    }
    o[ko.off[1]] = acc ? 1u : 0u;
    et_idx_next(&ko, 2, p.kst);
  }
  return ET_OK;
}

static et_status any_all_dims(et_kctx *ctx, et_value *const *args, uint32_t nargs, bool is_any) {
  ET_CHECK_ARGS(4);
  et_tensor *in, *out;
  ET_ARG_T(0, &in); ET_ARG_T(3, &out);
  uint32_t mask;
  /* dims=None reduces every dim, dims=[] none (unlike sum's empty list) */
  if (!et_dims_mask(args[1], in->ndim, false, &mask)) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  return any_all(ctx, in, out, 3, mask, et_arg_bool(args[2], false), is_any);
}

static et_status any_all_whole(et_kctx *ctx, et_value *const *args, uint32_t nargs, bool is_any) {
  ET_CHECK_ARGS(2);
  et_tensor *in, *out;
  ET_ARG_T(0, &in); ET_ARG_T(1, &out);
  uint32_t mask = in->ndim ? (uint32_t)((1ull << in->ndim) - 1u) : 0u;
  return any_all(ctx, in, out, 1, mask, false, is_any);
}

/* any.out(self, int dim, bool keepdim=False, *, out); any.dims_out(self, int[]? dim=None, ...);
 * any.all_out(self, *, out); all likewise */
ET_OP("aten::any.out", k_aten_any_out) { return any_all_dims(ctx, args, nargs, true); }
ET_OP("aten::any.dims_out", k_aten_any_dims_out) { return any_all_dims(ctx, args, nargs, true); }
ET_OP("aten::any.all_out", k_aten_any_all_out) { return any_all_whole(ctx, args, nargs, true); }
ET_OP("aten::all.out", k_aten_all_out) { return any_all_dims(ctx, args, nargs, false); }
ET_OP("aten::all.dims_out", k_aten_all_dims_out) { return any_all_dims(ctx, args, nargs, false); }
ET_OP("aten::all.all_out", k_aten_all_all_out) { return any_all_whole(ctx, args, nargs, false); }
