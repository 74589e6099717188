/* Extra kernel helpers (implemented in kernel_util.c, always compiled with any kernel). */
#ifndef ET_KERNEL_UTIL_H
#define ET_KERNEL_UTIL_H
#include <stddef.h>
#include "et_kernel.h"

/* Broadcast two size arrays (PyTorch rules) into out; returns ndim or -1. */
int32_t et_broadcast_sizes(const int32_t *as, uint32_t an, const int32_t *bs, uint32_t bn, int32_t *out);
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

#endif
