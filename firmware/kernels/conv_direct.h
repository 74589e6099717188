/* The direct float convolution paths of aten::convolution.out (conv.c), for what the many-channel
 * paths (conv_gemm.h) do not take: the patch + register-chunk main path and the AXPY fallback. */
#ifndef ET_CONV_DIRECT_H
#define ET_CONV_DIRECT_H
#include "conv_geo.h"

/* y = conv(x, w) + bias (bias may be NULL) for the checked geometry g */
void conv_f32_direct(const conv_geo *g, const float *x, const float *w, const float *bias, float *y);

#endif
