/* Extra kernel helpers (implemented in kernel_util.c, always compiled with any kernel). */
#ifndef ET_KERNEL_UTIL_H
#define ET_KERNEL_UTIL_H
#include <stddef.h>
#include "et_kernel.h"

/* Broadcast two size arrays (PyTorch rules) into out; returns ndim or -1. */
int32_t et_broadcast_sizes(const int32_t *as, uint32_t an, const int32_t *bs, uint32_t bn, int32_t *out);
/* PyTorch's pooling output size along one dim (floor or ceil mode); -1 for geometry beyond any real
 * tensor (a corrupted program). */
int32_t et_pool_out_size(int32_t in, int32_t k, int32_t pad, int32_t s, int32_t dil, bool ceil);
/* Contiguous (row-major) element strides for sizes. */
void et_contig_strides(const int32_t *sizes, uint32_t ndim, ptrdiff_t *strides);
/* Element strides of t's memory layout, honouring its dim_order. */
void et_tensor_strides(const et_tensor *t, ptrdiff_t *strides);
bool et_same_shape(const et_tensor *a, const et_tensor *b);
/* Strides (elements) to read contiguous tensor t broadcast to the ondim-d shape osizes (0 on
 * broadcast dims). */
void et_bcast_strides(const et_tensor *t, uint32_t ondim, const int32_t *osizes, ptrdiff_t *strides);
/* True if v is a Double scalar (Python float), false for Int/Bool. */
bool et_scalar_is_float(const et_value *v);

/* N-d index walker over a shape, keeping a flat offset per operand (row-major order). */
#define ET_IDX_MAX_OPS 4
typedef struct et_idx {
  uint32_t ndim;
  const int32_t *sizes;
  int32_t pos[ET_MAX_DIMS];
  ptrdiff_t off[ET_IDX_MAX_OPS];
} et_idx;
void et_idx_init(et_idx *it, uint32_t ndim, const int32_t *sizes);
/* Advance one element; strides[k] are operand k's element strides over the walked shape. */
void et_idx_next(et_idx *it, uint32_t nops, ptrdiff_t (*strides)[ET_MAX_DIMS]);

/* Elementwise op over out and nin broadcast inputs (nin <= 3): operand 0 is out, k+1 is ins[k].
 * Offsets are element offsets into each tensor's data, honouring dim_order. With resize, out is
 * resized to the broadcast shape first. Loop: for (i < w.n) { use w.it.off[k]; et_ew_next(&w); } */
typedef struct et_ew {
  et_idx it;
  ptrdiff_t st[ET_IDX_MAX_OPS][ET_MAX_DIMS];
  uint32_t nops;
  size_t n;
} et_ew;
et_status et_ew_prepare(et_ew *w, et_tensor *out, et_tensor *const *ins, uint32_t nin, bool resize);
static inline void et_ew_next(et_ew *w) { et_idx_next(&w->it, w->nops, w->st); }

/* Copy one element with dtype conversion (same dtype: bytes). Offsets in elements. */
void et_copy_elem(et_tensor *dst, ptrdiff_t di, const et_tensor *src, ptrdiff_t si);
/* Copy over an ndim shape: dst[dbase + sum pos*dst_st] = src[sbase + sum pos*src_st]. */
void et_strided_copy(et_tensor *dst, ptrdiff_t dbase, const ptrdiff_t *dst_st,
                     const et_tensor *src, ptrdiff_t sbase, const ptrdiff_t *src_st,
                     uint32_t ndim, const int32_t *sizes);
/* Same logical shape, any dim orders / dtypes. */
et_status et_copy_same_shape(et_tensor *out, const et_tensor *in);
/* Same numel, logical row-major element order (view/reshape semantics). */
et_status et_copy_reshape(et_tensor *out, const et_tensor *in);

/* Fetch tensor arg i (bound, known dtype) or fail with err_detail = i. */
et_status et_arg_tensor(et_kctx *ctx, et_value *const *args, uint32_t i, et_tensor **t);
/* Same memory layout (dim order) for two tensors of the same rank. */
bool et_same_layout(const et_tensor *a, const et_tensor *b);
/* Shared prologue of unary out-variants: in = args[0], out = args[oi] resized like in. */
et_status et_unary_prep(et_kctx *ctx, et_value *const *args, uint32_t nargs, uint32_t oi,
                        et_tensor **in, et_tensor **out);
/* v is a String equal to s */
bool et_string_is(const et_value *v, const char *s);

#endif
