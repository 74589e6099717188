/* Tensor basics (firmware/runtime/et_tensor.c): what the runtime and the kernels both need to read,
 * size and write tensors and scalar values. */
#ifndef ET_TENSOR_H
#define ET_TENSOR_H
#include <stddef.h>
#include "et_types.h"

/* Scalars: Int/Bool/Double values. Conversions do no double arithmetic (soft helpers). */
int64_t et_value_as_int(const et_value *v);
float et_value_as_float(const et_value *v);   /* Int, Bool or Double -> float */
bool et_value_is_floating(const et_value *v);
float et_double_bits_to_float(uint64_t bits);
uint64_t et_float_to_double_bits(float f);

/* ---- tensors ---- */
size_t et_dtype_size(uint32_t dtype);             /* 0 for unknown */
bool et_dtype_is_float(uint32_t dtype);           /* HALF, FLOAT, DOUBLE, BFLOAT16 */
bool et_dtype_is_int(uint32_t dtype);             /* BYTE..LONG, QINT*, UINT* (not BOOL) */
int64_t et_numel(const et_tensor *t);
size_t et_nbytes(const et_tensor *t);
bool et_is_contiguous(const et_tensor *t);        /* dim_order is 0..n-1 */
/* Set out's shape; fails with ET_ERR_OUT_OF_MEMORY if it exceeds the planned capacity and with
 * ET_ERR_INVALID_ARGUMENT if a static tensor would change shape. */
et_status et_resize(et_tensor *out, uint32_t ndim, const int32_t *sizes);
et_status et_resize_like(et_tensor *out, const et_tensor *like);
/* Normalise a possibly negative dim; returns -1 when out of range. */
int32_t et_wrap_dim(int64_t dim, uint32_t ndim);

/* Generic element access by flat (contiguous) index, for slow paths and type promotion. */
float et_load_f(const et_tensor *t, int64_t i);
int64_t et_load_i(const et_tensor *t, int64_t i);
void et_store_f(et_tensor *t, int64_t i, float v);
void et_store_i(et_tensor *t, int64_t i, int64_t v);

/* PyTorch type promotion for two tensor dtypes (no dimension-category rules). */
uint32_t et_promote_types(uint32_t a, uint32_t b);

#endif
