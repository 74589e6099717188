/* Indexing by tensors: index.Tensor (advanced indexing), gather, index_select. Index values may be
 * int64 or int32 and negative (counted from the end); one out of range fails the call with
 * ET_ERR_INVALID_ARGUMENT naming the index argument, before anything past the tensor is read. */
#include "et_kernel.h"
#include "kernel_util.h"
#include "dim_walk.h"

static inline bool is_index_dtype(uint32_t dt) { return dt == ET_LONG || dt == ET_INT; }

/* wrap a possibly negative index into [0, len); false if out of range */
static inline bool wrap_index(int64_t v, int32_t len, int64_t *out) {
  if (v < 0) v += len;
  if (v < 0 || v >= len) return false;
  *out = v;
  return true;
}

/* Broadcast strides of t (its own dim order) over the trailing t->ndim of an nb-d shape. */
static void bcast_strides(const et_tensor *t, uint32_t nb, const int32_t *bsz, ptrdiff_t *out) {
  ptrdiff_t st[ET_MAX_DIMS];
  et_tensor_strides(t, st);
  uint32_t lead = nb - t->ndim;
  for (uint32_t i = 0; i < nb; i++) {
    if (i < lead) { out[i] = 0; continue; }
    uint32_t k = i - lead;
    out[i] = (t->sizes[k] == 1 && bsz[i] != 1) ? 0 : st[k];
  }
}

/* index.Tensor_out(self, Tensor?[] indices, *, out). Integer index tensors broadcast together;
 * their result dims replace the indexed dims when those are adjacent and go first otherwise
 * (NumPy's rule). A bool mask is taken when it is the only index tensor. */
ET_OP("aten::index.Tensor_out", k_aten_index_tensor_out) {
  ET_CHECK_ARGS(3);
  et_tensor *in, *out;
  ET_ARG_T(0, &in); ET_ARG_T(2, &out);
  uint32_t nl;
  et_tensor *const *ix = et_tensor_list(args[1], &nl);
  uint32_t nd = in->ndim;
  if (!ix || nl == 0 || nl > nd) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  if (out->dtype != in->dtype) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
  /* which dims are indexed, by what; broadcast shape of the index tensors */
  int32_t bsz[ET_MAX_DIMS];
  uint32_t nb = 0, nidx = 0, first = nd, lastp = 0;
  bool adjacent = true, mask = false;
  for (uint32_t i = 0; i < nl; i++) {
    et_tensor *t = ix[i];
    if (!t) continue;
    if (!t->data && et_numel(t) > 0) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
    if (t->dtype == ET_BOOL || t->dtype == ET_BYTE) mask = true;
    else if (!is_index_dtype(t->dtype)) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
    if (nidx && lastp + 1 != i) adjacent = false;
    if (first == nd) first = i;
    lastp = i;
    nidx++;
    int32_t tmp[ET_MAX_DIMS];
    int32_t r = et_broadcast_sizes(bsz, nb, t->sizes, t->ndim, tmp);
    if (r < 0) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
    nb = (uint32_t)r;
    for (uint32_t k = 0; k < nb; k++) bsz[k] = tmp[k];
  }
  if (nidx == 0) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  if (mask) {   /* x[m]: m covers dims first..first+m.ndim-1; out has one dim, the count of trues */
    et_tensor *m = ix[first];
    if (nidx != 1 || first + m->ndim > nd) ET_FAIL(1, ET_ERR_UNSUPPORTED);
    for (uint32_t k = 0; k < m->ndim; k++)
      if (m->sizes[k] != in->sizes[first + k]) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
    ptrdiff_t mst[ET_MAX_DIMS], ist[ET_MAX_DIMS], ost[ET_MAX_DIMS];
    et_tensor_strides(m, mst);
    et_tensor_strides(in, ist);
    int32_t mpos[ET_MAX_DIMS] = {0};
    int64_t count = 0, mn = et_numel(m);
    for (int64_t e = 0; e < mn; e++) {
      if (et_load_i(m, et_pos_offset(mpos, mst, m->ndim))) count++;
      (void)et_pos_next(mpos, m->sizes, m->ndim);
    }
    int32_t osz[ET_MAX_DIMS], rsz[ET_MAX_DIMS];   /* rest: the dims outside the mask, in order */
    uint32_t ond = 0, nrest = 0;
    ptrdiff_t rist[ET_MAX_DIMS];
    for (uint32_t d = 0; d < first; d++) { osz[ond++] = in->sizes[d]; }
    osz[ond++] = (int32_t)count;
    for (uint32_t d = first + m->ndim; d < nd; d++) osz[ond++] = in->sizes[d];
    et_status st = et_resize(out, ond, osz);
    if (st != ET_OK) ET_FAIL(2, st);
    et_tensor_strides(out, ost);
    ptrdiff_t rost[ET_MAX_DIMS];
    for (uint32_t d = 0; d < nd; d++) {
      if (d >= first && d < first + m->ndim) continue;
      uint32_t od = d < first ? d : d - m->ndim + 1;
      rsz[nrest] = in->sizes[d]; rist[nrest] = ist[d]; rost[nrest] = ost[od]; nrest++;
    }
    if (et_numel(out) == 0) return ET_OK;
    for (uint32_t k = 0; k < m->ndim; k++) mpos[k] = 0;
    int64_t c = 0;
    for (int64_t e = 0; e < mn; e++) {
      if (et_load_i(m, et_pos_offset(mpos, mst, m->ndim))) {
        ptrdiff_t ib = 0;
        for (uint32_t k = 0; k < m->ndim; k++) ib += (ptrdiff_t)mpos[k] * ist[first + k];
        et_strided_copy(out, (ptrdiff_t)c * ost[first], rost, in, ib, rist, nrest, rsz);
        c++;
      }
      (void)et_pos_next(mpos, m->sizes, m->ndim);
    }
    return ET_OK;
  }
  /* out dims: a slot is either one of self's sliced dims or one of the broadcast dims */
  uint32_t bpos = adjacent ? first : 0;    /* where the broadcast dims go in out */
  int32_t osz[ET_MAX_DIMS];
  int8_t src[ET_MAX_DIMS];                 /* slot -> self dim (sliced) or -1 (broadcast dim) */
  uint32_t ond = 0;
  for (uint32_t d = 0; d < nd && ond <= ET_MAX_DIMS; d++) {
    if (d == bpos) for (uint32_t k = 0; k < nb && ond < ET_MAX_DIMS; k++) { src[ond] = -1; osz[ond++] = bsz[k]; }
    bool indexed = d < nl && ix[d];
    if (!indexed) {
      if (ond >= ET_MAX_DIMS) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
      src[ond] = (int8_t)d; osz[ond++] = in->sizes[d];
    }
  }
  if (ond != nd - nidx + nb) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);   /* more than ET_MAX_DIMS */
  et_status st = et_resize(out, ond, osz);
  if (st != ET_OK) ET_FAIL(2, st);
  if (et_numel(out) == 0) return ET_OK;
  ptrdiff_t ist[ET_MAX_DIMS], ost[ET_MAX_DIMS], xst[ET_MAX_DIMS][ET_MAX_DIMS];
  et_tensor_strides(in, ist);
  et_tensor_strides(out, ost);
  for (uint32_t i = 0; i < nl; i++) if (ix[i]) bcast_strides(ix[i], nb, bsz, xst[i]);
  int32_t pos[ET_MAX_DIMS] = {0}, bp[ET_MAX_DIMS];
  do {
    ptrdiff_t io = 0;
    uint32_t k = 0;
    for (uint32_t s = 0; s < ond; s++) {
      if (src[s] >= 0) io += (ptrdiff_t)pos[s] * ist[(uint32_t)src[s]];
      else bp[k++] = pos[s];
    }
    for (uint32_t i = 0; i < nl; i++) {
      if (!ix[i]) continue;
      int64_t v;
      if (!wrap_index(et_load_i(ix[i], et_pos_offset(bp, xst[i], nb)), in->sizes[i], &v)) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
      io += (ptrdiff_t)v * ist[i];
    }
    et_copy_elem(out, et_pos_offset(pos, ost, ond), in, io);
  } while (et_pos_next(pos, osz, ond));
  return ET_OK;
}

/* gather.out(self, int dim, Tensor index, *, bool sparse_grad=False, out): out[p] = self[p with
 * p[dim] = index[p]]; index no larger than self outside dim. */
ET_OP("aten::gather.out", k_aten_gather_out) {
  ET_CHECK_ARGS(5);
  et_tensor *in, *idx, *out;
  ET_ARG_T(0, &in); ET_ARG_T(2, &idx); ET_ARG_T(4, &out);
  int64_t dv;
  if (!et_arg_int(args[1], &dv)) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  uint32_t nd = in->ndim;
  int32_t d = et_wrap_dim(dv, nd);
  if (d < 0) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  if (!is_index_dtype(idx->dtype)) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
  if (out->dtype != in->dtype) ET_FAIL(4, ET_ERR_INVALID_ARGUMENT);
  uint32_t xd = idx->ndim;
  if (xd != nd && !(nd == 0 && xd <= 1) && !(xd == 0 && nd <= 1)) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
  for (uint32_t k = 0; k < xd && nd; k++)
    if ((int32_t)k != d && idx->sizes[k] > in->sizes[k]) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
  et_status st = et_resize_like(out, idx);
  if (st != ET_OK) ET_FAIL(4, st);
  if (et_numel(idx) == 0) return ET_OK;
  ptrdiff_t ist[ET_MAX_DIMS], xst[ET_MAX_DIMS], ost[ET_MAX_DIMS];
  et_tensor_strides(in, ist); et_tensor_strides(idx, xst); et_tensor_strides(out, ost);
  int32_t len = nd ? in->sizes[d] : 1;
  int32_t pos[ET_MAX_DIMS] = {0};
  uint32_t wd = xd < nd ? xd : nd;   /* 0-d and 1-element 1-d mix: no dims to offset */
  do {
    int64_t v;
    if (!wrap_index(et_load_i(idx, et_pos_offset(pos, xst, xd)), len, &v)) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
    ptrdiff_t io = 0;
    for (uint32_t k = 0; k < wd; k++) io += (ptrdiff_t)((int32_t)k == d ? (int32_t)v : pos[k]) * ist[k];
    et_copy_elem(out, et_pos_offset(pos, ost, xd), in, io);
  } while (et_pos_next(pos, idx->sizes, xd));
  return ET_OK;
}

/* index_select.out(self, int dim, Tensor index, *, out): whole slices of dim, in index order */
ET_OP("aten::index_select.out", k_aten_index_select_out) {
  ET_CHECK_ARGS(4);
  et_tensor *in, *idx, *out;
  ET_ARG_T(0, &in); ET_ARG_T(2, &idx); ET_ARG_T(3, &out);
  int64_t dv;
  if (!et_arg_int(args[1], &dv)) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  uint32_t nd = in->ndim;
  int32_t d = et_wrap_dim(dv, nd);
  if (d < 0) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  if (!is_index_dtype(idx->dtype) || idx->ndim > 1) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
  if (out->dtype != in->dtype) ET_FAIL(3, ET_ERR_INVALID_ARGUMENT);
  int64_t ni = et_numel(idx);
  if (nd == 0 && ni != 1) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
  int32_t osz[ET_MAX_DIMS];
  for (uint32_t k = 0; k < nd; k++) osz[k] = in->sizes[k];
  if (nd) osz[d] = (int32_t)ni;
  et_status st = et_resize(out, nd, osz);
  if (st != ET_OK) ET_FAIL(3, st);
  if (et_numel(out) == 0) return ET_OK;
  ptrdiff_t ist[ET_MAX_DIMS], ost[ET_MAX_DIMS];
  et_tensor_strides(in, ist); et_tensor_strides(out, ost);
  int32_t len = nd ? in->sizes[d] : 1;
  ptrdiff_t xs = idx->ndim ? 1 : 0;
  for (int64_t j = 0; j < ni; j++) {
    int64_t v;
    if (!wrap_index(et_load_i(idx, (ptrdiff_t)j * xs), len, &v)) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
    if (nd == 0) { et_copy_elem(out, 0, in, 0); break; }
    osz[d] = 1;   /* one slice: every dim but d, at position v of self and j of out */
    et_strided_copy(out, (ptrdiff_t)j * ost[d], ost, in, (ptrdiff_t)v * ist[d], ist, nd, osz);
  }
  return ET_OK;
}
