/* Shared by the float convolution sources (conv.c, conv_direct.c, conv_transpose.c): the geometry
 * of one convolution, argument helpers and the target switches. */
#ifndef ET_CONV_GEO_H
#define ET_CONV_GEO_H
#include "et_kernel.h"
#include "kernel_util.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#include <arm_mve.h>
#define CONV_MVE 1
#endif
/* Without an FPU a multiply-add costs a hundred instructions or more: there the AXPY path, which
 * does exactly the MACs inside the image (no padding taps, no partial-vector lanes), is faster. */
#if defined(__SOFTFP__) || defined(__XTENSA_SOFT_FLOAT__)
#define CONV_SOFT_FLOAT 1
#else
#define CONV_SOFT_FLOAT 0
#endif

typedef struct {
  int32_t N, C, H, W, O, KH, KW, OH, OW, G;
  int32_t sh, sw, ph, pw, dh, dw;
  ptrdiff_t is[4], ws[4], os[4]; /* element strides in (n, c, h, w) order */
} conv_geo;

static inline bool get_pair(const et_value *v, uint32_t nsp, int32_t *out, int32_t dflt) {
  uint32_t len;
  if (!v || v->tag != ET_TAG_INT_LIST) return false;
  const int64_t *p = et_int_list(v, &len);
  if (len == 0) { out[0] = out[1] = dflt; return true; }
  if (nsp == 1) { out[0] = dflt == 0 ? 0 : 1; out[1] = (int32_t)p[0]; return len == 1 && p[0] == out[1]; }
  if (len == 1) { out[0] = out[1] = (int32_t)p[0]; return p[0] == out[0]; }
  out[0] = (int32_t)p[0]; out[1] = (int32_t)p[1];
  return len == 2 && p[0] == out[0] && p[1] == out[1];
}

/* strides of t in (n, c, h, w) order; a 3-d tensor gets h stride 0 (h == 1) */
static inline void nchw_strides(const et_tensor *t, ptrdiff_t *s) {
  ptrdiff_t st[ET_MAX_DIMS];
  et_tensor_strides(t, st);
  if (t->ndim == 4) { s[0] = st[0]; s[1] = st[1]; s[2] = st[2]; s[3] = st[3]; }
  else { s[0] = st[0]; s[1] = st[1]; s[2] = 0; s[3] = st[2]; }
}

/* first and one-past-last i < n with i*s + off in [0, W) */
static inline void col_range(int32_t off, int32_t s, int32_t W, int32_t n, int32_t *lo, int32_t *hi) {
  int32_t a = 0;
  if (off < 0) a = (-off + s - 1) / s;
  int32_t b = (W - 1 - off) >= 0 ? (W - 1 - off) / s + 1 : 0;
  if (b > n) b = n;
  if (a > b) a = b;
  *lo = a; *hi = b;
}

/* For the out-of-line tap loops (conv_direct.c's chunks, conv_dw.h's blocks). */
#if defined(__GNUC__) && !defined(__clang__)
/* GCC's pre-allocation scheduling hoists the patch loads of a whole row and spills vectors */
#define CONV_NOSCHED __attribute__((optimize("no-schedule-insns")))
#else
#define CONV_NOSCHED
#endif

#endif
