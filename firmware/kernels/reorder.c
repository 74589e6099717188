/* Kernels that move elements without computing on them: as_strided_copy, flip, roll, repeat.
 * Outputs are written in their own dim order; the input is read through its strides (as_strided
 * through its raw memory, which is what the strides given to it describe). */
#include "et_kernel.h"
#include "kernel_util.h"
#include "dim_walk.h"

/* as_strided_copy.out(self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None, *, out).
 * A channels_last export reads NHWC memory back in NCHW order with this. Every element read must
 * lie inside self's elements: a program asking for more is rejected, not read past. */
ET_OP("aten::as_strided_copy.out", k_aten_as_strided_copy_out) {
  ET_CHECK_ARGS(5);
  et_tensor *in, *out;
  ET_ARG_T(0, &in); ET_ARG_T(4, &out);
  uint32_t n, ns;
  const int64_t *sz = et_int_list(args[1], &n);
  const int64_t *sd = et_int_list(args[2], &ns);
  if (args[1]->tag != ET_TAG_INT_LIST || n > ET_MAX_DIMS) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  if (args[2]->tag != ET_TAG_INT_LIST || ns != n) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
  int64_t base = 0;
  if (!et_is_none(args[3]) && !et_arg_int(args[3], &base)) ET_FAIL(3, ET_ERR_INVALID_ARGUMENT);
  if (out->dtype != in->dtype) ET_FAIL(4, ET_ERR_INVALID_ARGUMENT);
  int32_t osz[ET_MAX_DIMS];
  ptrdiff_t sst[ET_MAX_DIMS], ost[ET_MAX_DIMS];
  bool empty = false;
  int64_t last = base;   /* furthest element read */
  for (uint32_t i = 0; i < n; i++) {
    if (sz[i] < 0 || sz[i] > INT32_MAX) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
    if (sd[i] < 0 || sd[i] > INT32_MAX) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
    osz[i] = (int32_t)sz[i];
    sst[i] = (ptrdiff_t)sd[i];
    if (sz[i] == 0) empty = true;
    else last += (sz[i] - 1) * sd[i];   /* < 16 * 2^31 * 2^31: no overflow */
  }
  et_status st = et_resize(out, n, osz);
  if (st != ET_OK) ET_FAIL(4, st);
  if (empty) return ET_OK;
  if (base < 0 || last >= et_numel(in)) ET_FAIL(3, ET_ERR_INVALID_ARGUMENT);
  et_tensor_strides(out, ost);
  et_strided_copy(out, 0, ost, in, (ptrdiff_t)base, sst, n, osz);
  return ET_OK;
}

/* flip.out(self, int[] dims, *, out): read the flipped dims backwards */
ET_OP("aten::flip.out", k_aten_flip_out) {
  ET_CHECK_ARGS(3);
  et_tensor *in, *out;
  ET_ARG_T(0, &in); ET_ARG_T(2, &out);
  uint32_t mask;
  if (et_is_none(args[1]) || !et_dims_mask(args[1], in->ndim, false, &mask)) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  if (out->dtype != in->dtype) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
  et_status st = et_resize_like(out, in);
  if (st != ET_OK) ET_FAIL(2, st);
  if (et_numel(in) == 0) return ET_OK;
  ptrdiff_t ist[ET_MAX_DIMS], ost[ET_MAX_DIMS], base = 0;
  et_tensor_strides(in, ist);
  et_tensor_strides(out, ost);
  for (uint32_t d = 0; d < in->ndim; d++) {
    if (!(mask & (1u << d))) continue;
    base += (ptrdiff_t)(in->sizes[d] - 1) * ist[d];
    ist[d] = -ist[d];
  }
  et_strided_copy(out, 0, ost, in, base, ist, in->ndim, in->sizes);
  return ET_OK;
}

/* roll.out(self, SymInt[1] shifts, int[1] dims=[], *, out). No dims: roll the flattened tensor by
 * shifts[0]. A dim named twice adds its shifts, as PyTorch's one roll after another does. */
ET_OP("aten::roll.out", k_aten_roll_out) {
  ET_CHECK_ARGS(4);
  et_tensor *in, *out;
  ET_ARG_T(0, &in); ET_ARG_T(3, &out);
  uint32_t ns, ndl;
  const int64_t *sh = et_int_list(args[1], &ns);
  const int64_t *dl = et_int_list(args[2], &ndl);
  if (args[1]->tag != ET_TAG_INT_LIST || ns == 0) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  if (!et_is_none(args[2]) && args[2]->tag != ET_TAG_INT_LIST) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
  if (ndl != 0 && ndl != ns) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
  if (ndl == 0 && ns != 1) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  if (out->dtype != in->dtype) ET_FAIL(3, ET_ERR_INVALID_ARGUMENT);
  et_status st = et_resize_like(out, in);
  if (st != ET_OK) ET_FAIL(3, st);
  int64_t numel = et_numel(in);
  if (numel == 0) return ET_OK;
  uint32_t nd = in->ndim;
  ptrdiff_t ist[ET_MAX_DIMS], ost[ET_MAX_DIMS];
  et_tensor_strides(in, ist);
  et_tensor_strides(out, ost);
  int32_t pos[ET_MAX_DIMS] = {0};
  if (ndl == 0) {   /* flattened: out flat index f takes in flat index f - shift (row-major) */
    int64_t s = sh[0] % numel;
    if (s < 0) s += numel;
    int32_t ipos[ET_MAX_DIMS] = {0};
    int64_t start = (numel - s) % numel;   /* in's flat index read for out's element 0 */
    for (int64_t f = 0; f < start; f++) (void)et_pos_next(ipos, in->sizes, nd);
    do {
      et_copy_elem(out, et_pos_offset(pos, ost, nd), in, et_pos_offset(ipos, ist, nd));
      if (!et_pos_next(ipos, in->sizes, nd)) for (uint32_t d = 0; d < nd; d++) ipos[d] = 0;
    } while (et_pos_next(pos, out->sizes, nd));
    return ET_OK;
  }
  int32_t shift[ET_MAX_DIMS] = {0};
  for (uint32_t i = 0; i < ndl; i++) {
    int32_t d = et_wrap_dim(dl[i], nd);
    if (d < 0) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
    if (nd == 0) continue;
    int64_t len = in->sizes[d];
    int64_t s = (shift[d] + sh[i] % len) % len;
    if (s < 0) s += len;
    shift[d] = (int32_t)s;
  }
  do {
    ptrdiff_t io = 0;
    for (uint32_t d = 0; d < nd; d++) {
      int32_t p = pos[d] - shift[d];
      if (p < 0) p += in->sizes[d];
      io += (ptrdiff_t)p * ist[d];
    }
    et_copy_elem(out, et_pos_offset(pos, ost, nd), in, io);
  } while (et_pos_next(pos, out->sizes, nd));
  return ET_OK;
}

/* repeat.out(self, SymInt[] repeats, *, out): len(repeats) >= self.dim(); leading repeats add dims */
ET_OP("aten::repeat.out", k_aten_repeat_out) {
  ET_CHECK_ARGS(3);
  et_tensor *in, *out;
  ET_ARG_T(0, &in); ET_ARG_T(2, &out);
  uint32_t nr;
  const int64_t *rp = et_int_list(args[1], &nr);
  uint32_t nd = in->ndim;
  if (args[1]->tag != ET_TAG_INT_LIST || nr < nd || nr > ET_MAX_DIMS) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  if (out->dtype != in->dtype) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
  uint32_t lead = nr - nd;
  int32_t osz[ET_MAX_DIMS];
  for (uint32_t i = 0; i < nr; i++) {
    int64_t isz = i < lead ? 1 : in->sizes[i - lead];
    if (rp[i] < 0 || rp[i] > INT32_MAX || isz * rp[i] > INT32_MAX) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
    osz[i] = (int32_t)(isz * rp[i]);
  }
  et_status st = et_resize(out, nr, osz);
  if (st != ET_OK) ET_FAIL(2, st);
  if (et_numel(out) == 0) return ET_OK;
  /* copy one tile per repeat position: a strided copy of self into the tile's window of out */
  ptrdiff_t ist[ET_MAX_DIMS], ost[ET_MAX_DIMS], tst[ET_MAX_DIMS];
  int32_t tsz[ET_MAX_DIMS], tpos[ET_MAX_DIMS] = {0}, tiles[ET_MAX_DIMS];
  et_tensor_strides(in, ist);
  et_tensor_strides(out, ost);
  for (uint32_t i = 0; i < nr; i++) {
    tiles[i] = (int32_t)rp[i];
    tsz[i] = i < lead ? 1 : in->sizes[i - lead];
    tst[i] = i < lead ? 0 : ist[i - lead];
  }
  do {
    ptrdiff_t ob = 0;
    for (uint32_t i = 0; i < nr; i++) ob += (ptrdiff_t)tpos[i] * tsz[i] * ost[i];
    et_strided_copy(out, ob, ost, in, 0, tst, nr, tsz);
  } while (et_pos_next(tpos, tiles, nr));
  return ET_OK;
}
