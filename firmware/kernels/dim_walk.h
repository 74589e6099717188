/* Walks shared by the indexing, reordering and arg-reduction kernels (index.c, reorder.c,
 * argreduce.c, scan.c): header-only so that each kernel file stays self-contained for bake, which
 * compiles only the files of the operators a program uses (plus kernel_util.c and etmath.c). */
#ifndef ET_DIM_WALK_H
#define ET_DIM_WALK_H
#include "et_kernel.h"
#include "kernel_util.h"

#define ET_FAIL(i, code) do { ctx->err_detail = (i); return (code); } while (0)
#define ET_ARG_T(i, t) do { et_status s_ = et_arg_tensor(ctx, args, (i), (t)); if (s_ != ET_OK) return s_; } while (0)

/* Advance a row-major position over sizes; false after the last one. */
static inline bool et_pos_next(int32_t *pos, const int32_t *sizes, uint32_t nd) {
  for (uint32_t d = nd; d-- > 0;) {
    if (++pos[d] < sizes[d]) return true;
    pos[d] = 0;
  }
  return false;
}

static inline ptrdiff_t et_pos_offset(const int32_t *pos, const ptrdiff_t *st, uint32_t nd) {
  ptrdiff_t off = 0;
  for (uint32_t d = 0; d < nd; d++) off += (ptrdiff_t)pos[d] * st[d];
  return off;
}

/* Int (or Bool) scalar argument. */
static inline bool et_arg_int(const et_value *v, int64_t *out) {
  if (!v) return false;
  if (v->tag == ET_TAG_INT) { *out = v->u.i; return true; }
  if (v->tag == ET_TAG_BOOL) { *out = v->u.b; return true; }
  return false;
}
static inline bool et_arg_bool(const et_value *v, bool dflt) {
  if (!v || v->tag == ET_TAG_NONE) return dflt;
  if (v->tag == ET_TAG_BOOL) return v->u.b;
  if (v->tag == ET_TAG_INT) return v->u.i != 0;
  return dflt;
}

/* A reduction split: the kept dims (outer walker over the input, operand 0, and the outputs,
 * operands 1..) and the reduced dims of `mask` (inner walker over the input only). The inner walk's
 * element count r is the reduced sub-tensor's row-major index, which is what arg-reductions return. */
typedef struct et_rplan {
  uint32_t nk, nr, nops;
  int32_t ksz[ET_MAX_DIMS], rsz[ET_MAX_DIMS];
  ptrdiff_t kst[ET_IDX_MAX_OPS][ET_MAX_DIMS];
  ptrdiff_t rst[1][ET_MAX_DIMS];
  size_t nouter, ninner;
} et_rplan;

/* Output shape of reducing in over mask (keepdim: size 1 left in place). Returns the rank. */
static inline uint32_t et_reduced_sizes(const et_tensor *in, uint32_t mask, bool keep, int32_t *osz) {
  uint32_t ond = 0;
  for (uint32_t d = 0; d < in->ndim; d++) {
    if (mask & (1u << d)) { if (keep) osz[ond++] = 1; }
    else osz[ond++] = in->sizes[d];
  }
  return ond;
}

/* outs must already have the reduced shape (et_reduced_sizes); nouts <= ET_IDX_MAX_OPS - 1. */
static inline void et_rplan_init(et_rplan *p, const et_tensor *in, uint32_t mask, bool keep,
                                 et_tensor *const *outs, uint32_t nouts) {
  ptrdiff_t ist[ET_MAX_DIMS], ost[ET_IDX_MAX_OPS - 1][ET_MAX_DIMS];
  et_tensor_strides(in, ist);
  for (uint32_t j = 0; j < nouts; j++) et_tensor_strides(outs[j], ost[j]);
  p->nk = p->nr = 0;
  p->nops = nouts + 1;
  p->nouter = p->ninner = 1;
  uint32_t od = 0;
  for (uint32_t d = 0; d < in->ndim; d++) {
    if (mask & (1u << d)) {
      p->rsz[p->nr] = in->sizes[d];
      p->rst[0][p->nr] = ist[d];
      p->nr++;
      p->ninner *= (size_t)in->sizes[d];
      if (keep) od++;
    } else {
      p->ksz[p->nk] = in->sizes[d];
      p->kst[0][p->nk] = ist[d];
      for (uint32_t j = 0; j < nouts; j++) p->kst[j + 1][p->nk] = ost[j][od];
      p->nk++;
      od++;
      p->nouter *= (size_t)in->sizes[d];
    }
  }
}

/* dims argument (INT, INT_LIST, or NONE / empty list when empty_all) -> bit mask; false on a bad
 * or repeated dim. A 0-d tensor accepts dim 0 / -1 and reduces nothing. */
static inline bool et_dims_mask(const et_value *v, uint32_t ndim, bool empty_all, uint32_t *mask) {
  uint32_t all = ndim ? (uint32_t)((1ull << ndim) - 1u) : 0u;
  *mask = 0;
  if (et_is_none(v)) { *mask = all; return true; }
  if (v->tag == ET_TAG_INT) {
    int32_t d = et_wrap_dim(v->u.i, ndim);
    if (d < 0) return false;
    if (ndim) *mask = 1u << d;
    return true;
  }
  uint32_t n;
  const int64_t *dims = et_int_list(v, &n);
  if (v->tag != ET_TAG_INT_LIST) return false;
  if (n == 0) { *mask = empty_all ? all : 0u; return true; }
  for (uint32_t i = 0; i < n; i++) {
    int32_t d = et_wrap_dim(dims[i], ndim);
    if (d < 0) return false;
    if (ndim) {
      if (*mask & (1u << d)) return false;
      *mask |= 1u << d;
    }
  }
  return true;
}

#endif
