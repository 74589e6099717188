/* Private to firmware/kernels/cortex_m/: what the cortex_m:: operator files share (requantisation,
 * argument parsing, 4-d geometry, int8 dot products, the kernel-state call record).
 * Numerics reproduce executorch's Python reference implementations (backends/cortex_m/ops):
 *  - requantize: v * 2^max(shift,0) * multiplier, + 2^30, >> 31 (64-bit, no saturation), then a
 *    rounding right shift by max(-shift,0) (round half away from zero), truncated to int32;
 *  - quantize: rint(x * (float)(1/scale)), dequantize: (float)(q - zp) * (float)scale;
 *  - avg-pool / softmax go through float32 exactly as the reference does.
 * Tensors may be in any dim order (NCHW logical shapes, NHWC memory is the usual layout).
 * Helium (MVE) code sits in `#ifdef CM_MVE` blocks next to the portable C it replaces.
 * Every file includes this one: helpers a file does not use are marked unused (CM_UNUSED). */
#ifndef ET_CORTEX_M_CM_UTIL_H
#define ET_CORTEX_M_CM_UTIL_H
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"
#define CM_UNUSED __attribute__((unused))
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#define CM_MVE 1
/* GCC's induction-variable pass turns the post-incremented vector loads of several streams into one
 * shared index and a subtraction per load (MVE has no register-offset vector load): off for the hot loops. */
#if defined(__GNUC__) && !defined(__clang__)
#define CM_HOT __attribute__((noinline, optimize("no-ivopts")))
#else
#define CM_HOT __attribute__((noinline))
#endif
#elif defined(__ARM_FEATURE_DSP)
/* Cortex-M4/M7/M33: the SMLAD cores (cm_dsp.h, included below the scalar helpers) */
#define CM_DSP 1
#endif

/* ---------------------------------------------------------------- scalar helpers */

static inline int32_t cm_requant(int64_t v, int32_t mult, int32_t shift) {
  /* The usual case (no left shift, 32-bit value, mult not INT32_MIN): (v * mult + 2^30) >> 31 then
   * fits in 32 bits, so the rounding shift below runs in 32-bit arithmetic. Same results. */
  if (shift <= 0 && shift > -32 && v == (int32_t)v && mult != INT32_MIN) {
    int32_t r = (int32_t)(((int64_t)(int32_t)v * mult + ((int64_t)1 << 30)) >> 31);
    const int32_t rs = -shift;
    if (rs > 0) {
      const int32_t mask = (int32_t)(((uint32_t)1 << rs) - 1u), rem = r & mask;
      r >>= rs;
      if (rem > (mask >> 1) + (r < 0 ? 1 : 0)) r += 1;
    }
    return r;
  }
  int32_t ls = shift > 0 ? (shift < 63 ? shift : 63) : 0, rs = shift < 0 ? (shift > -63 ? -shift : 63) : 0;
  uint64_t x = (uint64_t)v << ls;
  int64_t p = (int64_t)(x * (uint64_t)(int64_t)mult + ((uint64_t)1 << 30));
  int64_t r = p >> 31;
  if (rs > 0 && rs < 63) {
    int64_t mask = ((int64_t)1 << rs) - 1;
    int64_t rem = r & mask;
    r >>= rs;
    int64_t thr = (mask >> 1) + (r < 0 ? 1 : 0);
    if (rem > thr) r += 1;
  }
  return (int32_t)(uint32_t)(uint64_t)r;
}

static inline int32_t clamp_i32(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : v > hi ? hi : v; }
/* a + b saturated to int32: a corrupted zero point must not make the sum undefined. */
static inline int32_t add_sat_i32(int32_t a, int32_t b) {
  int64_t v = (int64_t)a + b;
  return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}
#ifdef CM_DSP
#include "cm_dsp.h"
#endif

#if defined(CM_DSP) && defined(__ARM_FP) && (__ARM_FP & 4)
/* A single-precision FPU without MVE (Cortex-M4F/M33/M7): VCVTR rounds to an int32 with the FPSCR's
 * rounding mode, to nearest even (et_roundf's) unless someone changed it: callers check per call. */
#define CM_VCVTR 1
static inline bool cm_fpscr_nearest(void) {
  uint32_t f;
  __asm__ volatile("vmrs %0, fpscr" : "=r"(f));
  return ((f >> 22) & 3u) == 0u;
}
static inline int32_t cm_rint_s32(float v) {   /* NaN: 0; beyond int32: saturated */
  float r;
  __asm__("vcvtr.s32.f32 %0, %1" : "=t"(r) : "t"(v));
  return (int32_t)et_f32_bits(r);
}
#endif

/* (float)m * 2^e without double arithmetic (exact unless the result is subnormal) */
CM_UNUSED static float ldexp_f(float m, int32_t e) {
  while (e > 100) { m *= 1.2676506e30f; e -= 100; }   /* 2^100 */
  while (e < -100) { m *= 7.888609e-31f; e += 100; }  /* 2^-100 */
  if (e >= -126 && e <= 127) return m * et_bits_f32((uint32_t)(e + 127) << 23);
  /* split to stay in range */
  return (m * et_bits_f32((uint32_t)(e / 2 + 127) << 23)) * et_bits_f32((uint32_t)(e - e / 2 + 127) << 23);
}


/* Taps t in [*t0, *t1) of a k-tap window starting at i0 with dilation dil fall inside [0, n): a range,
 * since i0 + t * dil grows with t (empty when *t0 == *t1). */
static inline void tap_range(int32_t i0, int32_t k, int32_t dil, int32_t n, int32_t *t0, int32_t *t1) {
  int32_t a = 0, b = k;
  while (a < b && i0 + a * dil < 0) a++;
  while (b > a && i0 + (b - 1) * dil >= n) b--;
  *t0 = a;
  *t1 = b;
}

/* ---------------------------------------------------------------- argument helpers */

static inline bool int_arg(const et_value *v, int32_t *out) {
  if (!v) return false;
  if (v->tag == ET_TAG_INT) { *out = (int32_t)v->u.i; return true; }
  if (v->tag == ET_TAG_BOOL) { *out = v->u.b ? 1 : 0; return true; }
  return false;
}

/* et_arg_tensor's checks, inline: the per-call argument work counts for the small layers */
static inline uint32_t numel32(const et_tensor *t) {
  uint32_t n = 1;  /* the loader guarantees numel < 2^32 */
  for (uint32_t d = 0; d < t->ndim; d++) n *= (uint32_t)t->sizes[d];
  return n;
}
static inline et_status arg_tensor(et_kctx *ctx, et_value *const *args, uint32_t i, et_tensor **t) {
  const et_value *v = args[i];
  if (!v || v->tag != ET_TAG_TENSOR || !v->u.t || (!v->u.t->data && numel32(v->u.t) > 0) ||
      !et_dtype_size(v->u.t->dtype)) {
    ctx->err_detail = i;
    return ET_ERR_INVALID_ARGUMENT;
  }
  *t = v->u.t;
  return ET_OK;
}
__attribute__((always_inline)) static inline bool contiguous(const et_tensor *t) {
  if (!t->dim_order) return true;
  for (uint32_t d = 0; d < t->ndim; d++)
    if (t->dim_order[d] != d) return false;
  return true;
}

CM_UNUSED static bool pair_arg(const et_value *v, int32_t *out) {
  if (!v || v->tag != ET_TAG_INT_LIST) return false;
  uint32_t len;
  const int64_t *p = et_int_list(v, &len);
  if (len == 0 || len > 2) return false;
  out[0] = (int32_t)p[0];
  out[1] = (int32_t)(len == 2 ? p[1] : p[0]);
  return true;
}

#define ARG_TENSOR(i, t) do { et_status s_ = arg_tensor(ctx, args, (i), &(t)); if (s_) return s_; } while (0)
/* for tensors whose dtype the op checks itself right after: the et_dtype_size test is then redundant */
#define ARG_TENSOR_DT(i, dst) do { \
    const et_value *v_ = args[i]; \
    if (!v_ || v_->tag != ET_TAG_TENSOR || !v_->u.t || (!v_->u.t->data && numel32(v_->u.t) > 0)) BAD(i); \
    (dst) = v_->u.t; \
  } while (0)
#define ARG_INT(i, x) do { if (!int_arg(args[i], &(x))) { ctx->err_detail = (i); return ET_ERR_INVALID_ARGUMENT; } } while (0)
#define BAD(i) do { ctx->err_detail = (i); return ET_ERR_INVALID_ARGUMENT; } while (0)

/* 4-d geometry with element strides in logical (n, c, h, w) order. nhwc: the tensor's logical
 * shape is [N, H, W, C] (the explicit-layout *_nhwc ops). */
typedef struct { int32_t n, c, h, w; ptrdiff_t sn, sc, sh, sw; } g4;

CM_UNUSED static void geo4(const et_tensor *t, bool nhwc, g4 *g) {
  ptrdiff_t st[ET_MAX_DIMS];
  et_tensor_strides(t, st);
  if (nhwc) {
    g->n = t->sizes[0]; g->h = t->sizes[1]; g->w = t->sizes[2]; g->c = t->sizes[3];
    g->sn = st[0]; g->sh = st[1]; g->sw = st[2]; g->sc = st[3];
  } else {
    g->n = t->sizes[0]; g->c = t->sizes[1]; g->h = t->sizes[2]; g->w = t->sizes[3];
    g->sn = st[0]; g->sc = st[1]; g->sh = st[2]; g->sw = st[3];
  }
}

CM_UNUSED static et_status resize4(et_kctx *ctx, et_tensor *out, bool nhwc, int32_t n, int32_t c, int32_t h, int32_t w,
                         uint32_t oi) {
  int32_t s[4] = {n, c, h, w};
  if (nhwc) { s[1] = h; s[2] = w; s[3] = c; }
  /* the planned output usually has the shape already (what et_resize would accept unchanged) */
  if (out->ndim == 4 && (n | c | h | w) >= 0 && out->sizes[0] == s[0] && out->sizes[1] == s[1] &&
      out->sizes[2] == s[2] && out->sizes[3] == s[3])
    return ET_OK;
  et_status st = et_resize(out, 4, s);
  if (st != ET_OK) ctx->err_detail = oi;
  return st;
}

/* ---------------------------------------------------------------- dot products */

/* sum_k a[k] * b[k] over int8 (int32 accumulation) */
static inline int32_t dot_s8(const int8_t *a, const int8_t *b, int32_t n) {
  int32_t acc = 0;
  int32_t k = 0;
#ifdef CM_MVE
  for (; k + 16 <= n; k += 16) acc = vmladavaq_s8(acc, vld1q_s8(a + k), vld1q_s8(b + k));
  if (k < n) {
    mve_pred16_t p = vctp8q((uint32_t)(n - k));
    acc = vmladavaq_p_s8(acc, vld1q_z_s8(a + k, p), vld1q_z_s8(b + k, p), p);
    k = n;
  }
#endif
  for (; k < n; k++) acc += (int32_t)a[k] * (int32_t)b[k];
  return acc;
}

/* dot product and sum of b in one pass: *bsum += sum b[k]; returns sum a[k] * b[k] */
static inline int32_t dot_sum_s8(const int8_t *a, const int8_t *b, int32_t n, int32_t *bsum) {
  int32_t acc = 0, bs = 0;
  int32_t k = 0;
#ifdef CM_MVE
  for (; k + 16 <= n; k += 16) {
    int8x16_t vb = vld1q_s8(b + k);
    acc = vmladavaq_s8(acc, vld1q_s8(a + k), vb);
    bs = vaddvaq_s8(bs, vb);
  }
  if (k < n) {
    mve_pred16_t p = vctp8q((uint32_t)(n - k));
    int8x16_t vb = vld1q_z_s8(b + k, p);
    acc = vmladavaq_p_s8(acc, vld1q_z_s8(a + k, p), vb, p);
    bs = vaddvaq_p_s8(bs, vb, p);
    k = n;
  }
#endif
  for (; k < n; k++) { acc += (int32_t)a[k] * (int32_t)b[k]; bs += b[k]; }
  *bsum += bs;
  return acc;
}

static inline int32_t sum_s8(const int8_t *a, int32_t n) {
  int32_t acc = 0;
  int32_t k = 0;
#ifdef CM_MVE
  for (; k + 16 <= n; k += 16) acc = vaddvaq_s8(acc, vld1q_s8(a + k));
#endif
  for (; k < n; k++) acc += a[k];
  return acc;
}

/* ---------------------------------------------------------------- vector requantisation */

#ifdef CM_MVE
/* cm_requant on four lanes, exact when mult > 0 and shift is in [-31, -1] (the usual case: a scale
 * below one half); callers check that and keep the scalar path otherwise.
 * vqrdmulh is (2ab + 2^31) >> 32 = (ab + 2^30) >> 31, with no saturation unless both are INT32_MIN.
 * vrshl by -rs rounds half up; subtracting 1 from negative values first makes it round half away from
 * zero. With mult > 0 the product has the sign of acc (or is 0, where -1 still rounds to 0 for rs >= 1),
 * so the sign is taken from acc, before the multiply. */
static inline int32x4_t cm_requant_v(int32x4_t acc, int32x4_t mult, int32x4_t nrs) {
  int32x4_t r = vaddq_s32(vqrdmulhq_s32(acc, mult), vshrq_n_s32(acc, 31));
  return vrshlq_s32(r, nrs);
}
static inline int32x4_t cm_requant_vn(int32x4_t acc, int32_t mult, int32_t nrs) {
  int32x4_t r = vaddq_s32(vqrdmulhq_n_s32(acc, mult), vshrq_n_s32(acc, 31));
  return vrshlq_n_s32(r, nrs);
}
static inline bool cm_vec_requant_ok(int32_t mult, int32_t shift) { return mult > 0 && shift <= -1 && shift >= -31; }
#endif

/* ---------------------------------------------------------------- kernel state */

/* The call a kernel state (ET_STATE) was filled for: its input and output tensors at their data. It is
 * only kept for static tensors (et_resize refuses to change their shape; their dim order is fixed) and
 * constant weights, and trusts what a valid program guarantees: scalar arguments and constants do not
 * change. Anything else means the full checks on every call. */
typedef struct {
  const et_tensor *x, *y;
  const void *xd, *yd;
} cm_call;
CM_UNUSED static void cm_call_set(cm_call *c, const et_tensor *x, const et_tensor *y, bool constant_weights) {
  const bool keep = constant_weights && !x->dynamic && !y->dynamic;
  c->x = keep ? x : NULL; c->y = y; c->xd = x->data; c->yd = y->data;
}
static inline bool cm_call_same(const cm_call *c, const et_value *x, const et_value *y) {
  return c->x && x && y && x->tag == ET_TAG_TENSOR && y->tag == ET_TAG_TENSOR && x->u.t == c->x && y->u.t == c->y &&
         c->x->data == c->xd && c->y->data == c->yd;
}

/* (in + 2 pad - dil (k - 1) - 1) / s + 1, summed in 64 bits; -1 when it is not a positive int32 (a corrupted
 * geometry: the int32 form would overflow) */
CM_UNUSED static int32_t conv_out(int32_t in, int32_t pad, int32_t dil, int32_t k, int32_t s) {
  if (s <= 0) return -1;
  int64_t num = (int64_t)in + 2 * (int64_t)pad - (int64_t)dil * ((int64_t)k - 1) - 1;
  if (num < 0 || num >= INT32_MAX) return -1;   /* then a 32-bit division (a 64-bit one is a libgcc call) */
  return (int32_t)num / s + 1;
}


#endif
