/* Transposed float convolution, the transposed = true case of aten::convolution.out (conv.c). */
#ifndef ET_CONV_TRANSPOSE_H
#define ET_CONV_TRANSPOSE_H
#include "conv_geo.h"

/* args are the op's; in, wt, bias (or NULL) and out are float tensors of 3 or 4 dims */
et_status conv_f32_transposed(et_kctx *ctx, et_value *const *args, et_tensor *in, et_tensor *wt,
                              et_tensor *bias, et_tensor *out);

#endif
