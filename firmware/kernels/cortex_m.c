/* cortex_m:: operators (the CMSIS-NN style ops the executorch Cortex-M flow emits), int8.
 * Numerics reproduce executorch's Python reference implementations (backends/cortex_m/ops):
 *  - requantize: v * 2^max(shift,0) * multiplier, + 2^30, >> 31 (64-bit, no saturation), then a
 *    rounding right shift by max(-shift,0) (round half away from zero), truncated to int32;
 *  - quantize: rint(x * (float)(1/scale)), dequantize: (float)(q - zp) * (float)scale;
 *  - avg-pool / softmax go through float32 exactly as the reference does.
 * Tensors may be in any dim order (NCHW logical shapes, NHWC memory is the usual layout).
 * No scratch buffers: the `scratch` args are ignored. */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"
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
#define CM_DSP 1
#include "cm_dsp_gemm.h"
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

/* (float)m * 2^e without double arithmetic (exact unless the result is subnormal) */
static float ldexp_f(float m, int32_t e) {
  while (e > 100) { m *= 1.2676506e30f; e -= 100; }   /* 2^100 */
  while (e < -100) { m *= 7.888609e-31f; e += 100; }  /* 2^-100 */
  if (e >= -126 && e <= 127) return m * et_bits_f32((uint32_t)(e + 127) << 23);
  /* split to stay in range */
  return (m * et_bits_f32((uint32_t)(e / 2 + 127) << 23)) * et_bits_f32((uint32_t)(e - e / 2 + 127) << 23);
}

/* float32 nearest to 1 / d for the IEEE double d given by its bits (integer long division) */
static float recip_double_bits(uint64_t bits) {
  uint32_t sign = (uint32_t)(bits >> 63);
  int32_t e = (int32_t)((bits >> 52) & 0x7ff);
  uint64_t m = bits & (((uint64_t)1 << 52) - 1);
  float sgn = sign ? -1.0f : 1.0f;
  if (e == 0x7ff) return m ? ET_NAN : sgn * 0.0f;
  if (e == 0) {
    if (m == 0) return sgn * ET_INFINITY;
    while (!(m & ((uint64_t)1 << 52))) { m <<= 1; e--; }
    e++;
  } else {
    m |= (uint64_t)1 << 52;
  }
  /* d = m * 2^(e - 1075); q = floor(2^78 / m) in (2^25, 2^26] */
  uint64_t r = (uint64_t)1 << 52, q = 0;
  for (int i = 0; i < 27; i++) {
    q <<= 1;
    if (r >= m) { r -= m; q |= 1; }
    r <<= 1;
  }
  bool sticky = r != 0;
  int32_t shift = q >= ((uint64_t)1 << 26) ? 3 : 2;
  uint64_t keep = q >> shift, rem = q & ((1u << shift) - 1), half = (uint64_t)1 << (shift - 1);
  if (rem > half || (rem == half && (sticky || (keep & 1)))) keep++;
  /* 1/d = keep * 2^(shift + 997 - e) */
  return sgn * ldexp_f((float)(uint32_t)keep, shift + 997 - e);
}

static inline int8_t cm_quantize_one(float x, float inv, int32_t zp, int32_t qmin, int32_t qmax) {
  float r = et_roundf(x * inv);
  int64_t q = et_f32_to_i64(r < -1e12f ? -1e12f : r > 1e12f ? 1e12f : r) + zp;  /* no int64 overflow */
  if (q < qmin) q = qmin;
  if (q > qmax) q = qmax;
  return (int8_t)q;
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

static bool pair_arg(const et_value *v, int32_t *out) {
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

static void geo4(const et_tensor *t, bool nhwc, g4 *g) {
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

static et_status resize4(et_kctx *ctx, et_tensor *out, bool nhwc, int32_t n, int32_t c, int32_t h, int32_t w,
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

/* ---------------------------------------------------------------- quantize / dequantize */

/* quantize_per_tensor.out(Tensor input, float scale, int zero_point, int quant_min, int quant_max,
 *   ScalarType dtype, *, Tensor(a!) out) */
ET_OP("cortex_m::quantize_per_tensor.out", k_cm_quantize_per_tensor_out) {
  ET_CHECK_ARGS(7);
  et_tensor *in, *out;
  ARG_TENSOR(0, in);
  ARG_TENSOR(6, out);
  int32_t zp, qmin, qmax;
  ARG_INT(2, zp); ARG_INT(3, qmin); ARG_INT(4, qmax);
  if (in->dtype != ET_FLOAT || out->dtype != ET_CHAR) BAD(0);
  float inv;
  if (args[1]->tag == ET_TAG_DOUBLE) inv = recip_double_bits(args[1]->u.dbits);
  else inv = 1.0f / et_value_as_float(args[1]);
  et_status st = et_resize_like(out, in);
  if (st) { ctx->err_detail = 6; return st; }
  if (!et_same_layout(in, out)) { ctx->err_detail = 6; return ET_ERR_UNSUPPORTED; }
  const float *x = (const float *)in->data;
  int8_t *y = (int8_t *)out->data;
  int64_t n = et_numel(in);
#ifdef CM_MVE
  /* Four lanes: vcvtn rounds to nearest even like et_roundf and gives 0 for NaN like et_f32_to_i64;
   * beyond int32 it saturates, where the clamp below gives what the 64-bit scalar form gives as long as
   * zp and the range stay far from int32's limits. */
  if (zp >= -(1 << 24) && zp <= (1 << 24) && qmin >= -(1 << 30) && qmax <= (1 << 30)) {
    const int32x4_t lo = vdupq_n_s32(qmin), hi = vdupq_n_s32(qmax);
    for (uint32_t i = 0, nn = (uint32_t)n; i < nn; i += 4) {
      const mve_pred16_t p = vctp32q(nn - i);
      const int32x4_t q = vqaddq_n_s32(vcvtnq_s32_f32(vmulq_n_f32(vldrwq_z_f32(x + i, p), inv)), zp);
      vstrbq_p_s32(y + i, vminq_s32(vmaxq_s32(q, lo), hi), p);
    }
    return ET_OK;
  }
#endif
  for (int64_t i = 0; i < n; i++) y[i] = cm_quantize_one(x[i], inv, zp, qmin, qmax);
  return ET_OK;
}

/* dequantize_per_tensor.out(Tensor input, float scale, int zero_point, int quant_min, int quant_max,
 *   ScalarType dtype, *, Tensor(a!) out) */
ET_OP("cortex_m::dequantize_per_tensor.out", k_cm_dequantize_per_tensor_out) {
  ET_CHECK_ARGS(7);
  et_tensor *in, *out;
  ARG_TENSOR(0, in);
  ARG_TENSOR(6, out);
  int32_t zp;
  ARG_INT(2, zp);
  if (in->dtype != ET_CHAR || out->dtype != ET_FLOAT) BAD(0);
  float scale = et_value_as_float(args[1]);
  et_status st = et_resize_like(out, in);
  if (st) { ctx->err_detail = 6; return st; }
  if (!et_same_layout(in, out)) { ctx->err_detail = 6; return ET_ERR_UNSUPPORTED; }
  const int8_t *x = (const int8_t *)in->data;
  float *y = (float *)out->data;
  int64_t n = et_numel(in);
  for (int64_t i = 0; i < n; i++) y[i] = (float)(int32_t)((uint32_t)(int32_t)x[i] - (uint32_t)zp) * scale;
  return ET_OK;
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
static void cm_call_set(cm_call *c, const et_tensor *x, const et_tensor *y, bool constant_weights) {
  const bool keep = constant_weights && !x->dynamic && !y->dynamic;
  c->x = keep ? x : NULL; c->y = y; c->xd = x->data; c->yd = y->data;
}
static inline bool cm_call_same(const cm_call *c, const et_value *x, const et_value *y) {
  return c->x && x && y && x->tag == ET_TAG_TENSOR && y->tag == ET_TAG_TENSOR && x->u.t == c->x && y->u.t == c->y &&
         c->x->data == c->xd && c->y->data == c->yd;
}

/* ---------------------------------------------------------------- linear */

#ifdef CM_MVE
/* Column constants without kernel sums: io * sum(w_n) + K*io*fo (+ bias), four columns from n
 * (rows past N repeat the last one). */
static int32x4_t qlinear_cols(const int8_t *wd, const int32_t *bd, int32_t n, int32_t N, int32_t K, int32_t in_off,
                              int32_t f_off) {
  int32_t c[4];
  for (int32_t i = 0; i < 4; i++) {
    int32_t r = n + i < N ? n + i : N - 1;
    uint32_t v = (uint32_t)in_off * (uint32_t)sum_s8(wd + (ptrdiff_t)r * K, K) +
                 (uint32_t)K * (uint32_t)in_off * (uint32_t)f_off;
    if (bd) v += (uint32_t)bd[r];
    c[i] = (int32_t)v;
  }
  return vld1q_s32(c);
}

/* d[0..4] = x . w_i for five weight rows of length K > 0 (one input load feeds five vmladava).
 * The K % 16 remainder (or a last full 16) is done first, with the input predicated: the weights
 * then load whole vectors without reading past their row (K >= 16), and the rest are whole trips. */
CM_HOT static void dot5_s8(const int8_t *x, const int8_t *w0, const int8_t *w1, const int8_t *w2, const int8_t *w3,
                           const int8_t *w4, int32_t K, int32_t *d) {
  int32_t r = ((K - 1) & 15) + 1, a0, a1, a2, a3, a4;
  mve_pred16_t p = vctp8q((uint32_t)r);
  int8x16_t vx = vld1q_z_s8(x, p);
  if (K >= 16) {
    a0 = vmladavq_s8(vx, vld1q_s8(w0)); a1 = vmladavq_s8(vx, vld1q_s8(w1)); a2 = vmladavq_s8(vx, vld1q_s8(w2));
    a3 = vmladavq_s8(vx, vld1q_s8(w3)); a4 = vmladavq_s8(vx, vld1q_s8(w4));
  } else {
    a0 = vmladavq_s8(vx, vld1q_z_s8(w0, p)); a1 = vmladavq_s8(vx, vld1q_z_s8(w1, p));
    a2 = vmladavq_s8(vx, vld1q_z_s8(w2, p)); a3 = vmladavq_s8(vx, vld1q_z_s8(w3, p));
    a4 = vmladavq_s8(vx, vld1q_z_s8(w4, p));
  }
  x += r; w0 += r; w1 += r; w2 += r; w3 += r; w4 += r;
  for (int32_t n = (K - r) >> 4; n > 0; n--) {
    vx = vld1q_s8(x);
    a0 = vmladavaq_s8(a0, vx, vld1q_s8(w0));
    a1 = vmladavaq_s8(a1, vx, vld1q_s8(w1));
    a2 = vmladavaq_s8(a2, vx, vld1q_s8(w2));
    a3 = vmladavaq_s8(a3, vx, vld1q_s8(w3));
    a4 = vmladavaq_s8(a4, vx, vld1q_s8(w4));
    x += 16; w0 += 16; w1 += 16; w2 += 16; w3 += 16; w4 += 16;
  }
  d[0] = a0; d[1] = a1; d[2] = a2; d[3] = a3; d[4] = a4;
}

/* The Helium linear, per input row and block of up to 64 output columns: the dot products five
 * columns at a time (columns past the block repeat its last one), then the column constants
 * (kernel sums, or zero-point terms and bias) added and the block requantised four lanes at a time.
 * Needs K > 0 and cm_vec_requant_ok(mult, shift). */
static void qlinear_mve(const int8_t *x, const int8_t *wd, const int32_t *bd, const int32_t *kd, int8_t *y,
                        int32_t M, int32_t N, int32_t K, int32_t in_off, int32_t f_off, int32_t out_off,
                        int32_t mult, int32_t shift, int32_t amin, int32_t amax) {
  int32_t d[64 + 5];
  const int32x4_t vlo = vdupq_n_s32(amin), vhi = vdupq_n_s32(amax);
  for (int32_t m = 0; m < M; m++, x += K, y += N) {
    /* f_off * sum(x): zero in the usual symmetric-weight case */
    const int32_t fx = f_off ? (int32_t)((uint32_t)f_off * (uint32_t)sum_s8(x, K)) : 0;
    for (int32_t nb = 0; nb < N; nb += 64) {
      const int32_t nn = N - nb < 64 ? N - nb : 64;
      const int8_t *wb = wd + (ptrdiff_t)nb * K;
      int32_t n5 = 0;
      for (const int8_t *w0 = wb; n5 + 5 <= nn; n5 += 5, w0 += 5 * (ptrdiff_t)K)
        dot5_s8(x, w0, w0 + K, w0 + 2 * K, w0 + 3 * K, w0 + 4 * K, K, d + n5);
      for (int32_t n = n5; n < nn; n += 5) {  /* a last partial group: its missing rows repeat the last */
        const int32_t left = nn - n;
        const int8_t *w0 = wb + (ptrdiff_t)n * K, *w1 = left > 1 ? w0 + K : w0, *w2 = left > 2 ? w1 + K : w1,
                     *w3 = left > 3 ? w2 + K : w2, *w4 = left > 4 ? w3 + K : w3;
        dot5_s8(x, w0, w1, w2, w3, w4, K, d + n);
      }
      if (kd) {
        /* whole vectors unpredicated, the last partial one predicated (kd must not be read past N) */
        const int32_t *kp = kd + nb;
        int8_t *yp = y + nb;
        int32_t n = 0;
        for (; n + 4 <= nn; n += 4) {
          /* wrapping sums, like the 32-bit accumulator of the reference */
          int32x4_t acc = vaddq_n_s32(vaddq_s32(vld1q_s32(d + n), vld1q_s32(kp + n)), fx);
          int32x4_t r = cm_requant_vn(acc, mult, shift);
          vstrbq_s32(yp + n, vminq_s32(vmaxq_s32(vqaddq_n_s32(r, out_off), vlo), vhi));
        }
        if (n < nn) {
          mve_pred16_t pn = vctp32q((uint32_t)(nn - n));
          int32x4_t acc = vaddq_n_s32(vaddq_s32(vld1q_s32(d + n), vld1q_z_s32(kp + n, pn)), fx);
          int32x4_t r = cm_requant_vn(acc, mult, shift);
          vstrbq_p_s32(yp + n, vminq_s32(vmaxq_s32(vqaddq_n_s32(r, out_off), vlo), vhi), pn);
        }
        continue;
      }
      for (int32_t n = 0; n < nn; n += 4) {
        mve_pred16_t pn = vctp32q((uint32_t)(nn - n));
        int32x4_t cst = qlinear_cols(wd, bd, nb + n, N, K, in_off, f_off);
        /* wrapping sums, like the 32-bit accumulator of the reference */
        int32x4_t acc = vaddq_s32(vaddq_s32(vld1q_s32(d + n), cst), vdupq_n_s32(fx));
        int32x4_t r = cm_requant_vn(acc, mult, shift);
        r = vminq_s32(vmaxq_s32(vqaddq_n_s32(r, out_off), vlo), vhi);
        vstrbq_p_s32(y + nb + n, r, pn);
      }
    }
  }
}
#endif

/* quantized_linear.out(Tensor input, Tensor weights, Tensor? bias, Tensor? kernel_sum, int input_offset,
 *   int filter_offset, int output_offset, int[] requantize_multipliers, int[] requantize_shifts,
 *   int activation_max, int activation_min, *, Tensor(a!) out) */
/* A linear call's arguments, checked */
typedef struct {
  const int8_t *w;
  const int32_t *bias, *ksum;
  int32_t M, N, K, in_off, f_off, out_off, mult, shift, amin, amax;
} qlin;

static void qlinear_run(const qlin *q, const int8_t *x, int8_t *y) {
  const int32_t M = q->M, N = q->N, K = q->K, in_off = q->in_off, f_off = q->f_off, out_off = q->out_off;
  const int32_t mult = q->mult, shift = q->shift, amin = q->amin, amax = q->amax;
  const int8_t *wd = q->w;
  const int32_t *bd = q->bias, *kd = q->ksum;
#ifdef CM_MVE
  if (cm_vec_requant_ok(mult, shift) && K > 0) {
    qlinear_mve(x, wd, bd, kd, y, M, N, K, in_off, f_off, out_off, mult, shift, amin, amax);
    return;
  }
#endif
  for (int32_t m = 0; m < M; m++) {
    const int8_t *xr = x + (ptrdiff_t)m * K;
    int32_t xsum = sum_s8(xr, K);
    for (int32_t n = 0; n < N; n++) {
      const int8_t *wr = wd + (ptrdiff_t)n * K;
      int32_t d = dot_s8(xr, wr, K);
      uint32_t acc;
      if (kd) {
        acc = (uint32_t)d + (uint32_t)xsum * (uint32_t)f_off + (uint32_t)kd[n];
      } else {
        /* sum (x + io)(w + fo) = d + fo*sum(x) + io*sum(w) + K*io*fo */
        int32_t wsum = (in_off != 0) ? sum_s8(wr, K) : 0;
        acc = (uint32_t)d + (uint32_t)f_off * (uint32_t)xsum + (uint32_t)in_off * (uint32_t)wsum +
              (uint32_t)K * (uint32_t)in_off * (uint32_t)f_off;
        if (bd) acc += (uint32_t)bd[n];
      }
      int32_t r = add_sat_i32(cm_requant((int32_t)acc, mult, shift), out_off);
      y[(ptrdiff_t)m * N + n] = (int8_t)clamp_i32(r, amin, amax);
    }
  }
}

/* What a linear call keeps between executions (ET_STATE; filled at method load): its checked
 * arguments, as long as its input and output are the same static tensors at the same data (see
 * cm_call_same) and its weights are constants. */
typedef struct {
  cm_call call;
  qlin q;
} qlin_state;
ET_STATE("cortex_m::quantized_linear.out", 96);
_Static_assert(sizeof(qlin_state) <= 96, "raise the ET_STATE size");

ET_OP("cortex_m::quantized_linear.out", k_cm_quantized_linear_out) {
  ET_CHECK_ARGS(12);
  qlin_state *ks = (qlin_state *)ctx->state;
  if (ks && cm_call_same(&ks->call, args[0], args[11])) {
    if (!ctx->prepare) qlinear_run(&ks->q, (const int8_t *)ks->call.x->data, (int8_t *)ks->call.y->data);
    return ET_OK;
  }
  et_tensor *in, *w, *bias = NULL, *ksum = NULL, *out;
  /* every dtype is checked below */
  ARG_TENSOR_DT(0, in);
  ARG_TENSOR_DT(1, w);
  ARG_TENSOR_DT(11, out);
  if (!et_is_none(args[2])) ARG_TENSOR_DT(2, bias);
  if (!et_is_none(args[3])) ARG_TENSOR_DT(3, ksum);
  qlin q;
  ARG_INT(4, q.in_off); ARG_INT(5, q.f_off); ARG_INT(6, q.out_off); ARG_INT(9, q.amax); ARG_INT(10, q.amin);
  uint32_t nm, ns;
  const int64_t *mults = et_int_list(args[7], &nm), *shifts = et_int_list(args[8], &ns);
  if (!mults || !shifts || nm < 1 || ns < 1) BAD(7);
  q.mult = (int32_t)mults[0]; q.shift = (int32_t)shifts[0];
  if (in->dtype != ET_CHAR || w->dtype != ET_CHAR || out->dtype != ET_CHAR || w->ndim != 2 || in->ndim < 1) BAD(0);
  const int32_t K = w->sizes[1], N = w->sizes[0];
  if (in->sizes[in->ndim - 1] != K) BAD(0);
  if (bias && (bias->dtype != ET_INT || numel32(bias) != (uint32_t)N)) BAD(2);
  if (ksum && (ksum->dtype != ET_INT || numel32(ksum) != (uint32_t)N)) BAD(3);
  if (!contiguous(w)) { ctx->err_detail = 0; return ET_ERR_UNSUPPORTED; }
  /* one pass over the input dims: its contiguity, the row count (numel(in) / K without a division),
   * and whether the planned output has the shape already (et_resize only when it differs) */
  const uint32_t nd = in->ndim;
  const uint8_t *ido = in->dim_order, *odo = out->dim_order;
  bool same = out->ndim == nd && out->sizes[nd - 1] == N, cont = true;
  uint32_t rows = 1;
  for (uint32_t d = 0; d < nd; d++) {
    if (ido && ido[d] != d) cont = false;
    if (d + 1 < nd) {
      rows *= (uint32_t)in->sizes[d];
      if (same && out->sizes[d] != in->sizes[d]) same = false;
    }
  }
  if (!cont) { ctx->err_detail = 0; return ET_ERR_UNSUPPORTED; }
  if (!same) {
    int32_t os[ET_MAX_DIMS];
    for (uint32_t d = 0; d < nd; d++) os[d] = in->sizes[d];
    os[nd - 1] = N;
    et_status st = et_resize(out, nd, os);
    if (st) { ctx->err_detail = 11; return st; }
  }
  /* out has nd dims here */
  for (uint32_t d = 0; odo && d < nd; d++)
    if (odo[d] != d) { ctx->err_detail = 11; return ET_ERR_UNSUPPORTED; }
  q.M = K ? (int32_t)rows : 0; q.N = N; q.K = K;
  q.w = (const int8_t *)w->data;
  q.bias = bias ? (const int32_t *)bias->data : NULL;
  q.ksum = ksum ? (const int32_t *)ksum->data : NULL;
  if (ks) {
    ks->q = q;
    cm_call_set(&ks->call, in, out, w->constant && (!bias || bias->constant) && (!ksum || ksum->constant));
  }
  if (!ctx->prepare) qlinear_run(&q, (const int8_t *)in->data, (int8_t *)out->data);
  return ET_OK;
}

/* ---------------------------------------------------------------- convolution */

typedef struct {
  g4 x, y;
  int32_t KH, KW, sh, sw, ph, pw, dh, dw;
  int32_t cpg;        /* input channels per group */
  int32_t opg;        /* output channels per group */
  int32_t in_off, out_off, amin, amax;
  const int8_t *w;    /* OHWI (conv) or 1HWO (depthwise) */
  bool depthwise;
  const int32_t *bias, *mult, *shift;
} qconv;

#ifdef CM_MVE
/* The 4-channel depthwise over a whole image (qdw_plane_mve below sets it up): windows are 16
 * contiguous bytes of the row-interleaved buffer, one per pixel (post-increment 4). Per pixel: a
 * vmladava per channel onto its constant (accumulators must be even registers: r0 r2 r4 r6; they
 * reach a vector through 16 bytes of memory, stm + vldrw), the requantisation on four lanes, the
 * output offset added between two saturating narrows (the int8 clamp: the same bytes as adding it
 * in 32 bits first) and a four-byte store. Written in asm: GCC 12 spills this loop.
 * blk: 16 bytes of scratch; below it (-16) the constants[4], after it (+16) the row tails: input
 * bytes, output bytes, pixels per row, then (+28) the output pixel stride. */
#define QDW_BODY(store)                                                                                 \
  "1:\n\t"                                                                                              \
  "ldr lr, [%[blk], #24]\n\t"                                                                           \
  "wls lr, lr, 3f\n"                                                                                    \
  "2:\n\t"                                                                                              \
  "vldrb.u8 %q[win], [%[xb]], #4\n\t"                                                                   \
  "ldmdb %[blk], {r0, r2, r4, r6}\n\t"                                                                  \
  "vmladava.s8 r0, %q[win], %q[w0]\n\t"                                                                 \
  "vmladava.s8 r2, %q[win], %q[w1]\n\t"                                                                 \
  "vmladava.s8 r4, %q[win], %q[w2]\n\t"                                                                 \
  "vmladava.s8 r6, %q[win], %q[w3]\n\t"                                                                 \
  "stm %[blk], {r0, r2, r4, r6}\n\t"                                                                    \
  "vldrw.u32 %q[win], [%[blk]]\n\t"                                                                     \
  "vshr.s32 %q[fix], %q[win], #31\n\t"                                                                  \
  "vqrdmulh.s32 %q[win], %q[win], %q[vm]\n\t"                                                           \
  "vadd.i32 %q[win], %q[win], %q[fix]\n\t"                                                              \
  "vrshl.s32 %q[win], %q[win], %q[vs]\n\t"                                                              \
  "vqmovnb.s32 %q[win], %q[win]\n\t"                                                                    \
  "vqadd.s16 %q[win], %q[win], %[oo]\n\t"                                                               \
  "vqmovnb.s16 %q[win], %q[win]\n\t"                                                                    \
  store                                                                                                 \
  "le lr, 2b\n"                                                                                         \
  "3:\n\t"                                                                                              \
  "ldrd r0, r2, [%[blk], #16]\n\t"                                                                      \
  "add %[xb], %[xb], r0\n\t"                                                                            \
  "add %[yo], %[yo], r2\n\t"                                                                            \
  "subs %[rows], %[rows], #1\n\t"                                                                       \
  "bne 1b"
#define QDW_OPERANDS                                                                                    \
  : [xb] "+r"(xb), [yo] "+l"(yo), [rows] "+r"(rows), "=&r"(lc), [win] "=&w"(win), [fix] "=&w"(fix),   \
    "=&r"(a0), "=&r"(a1), "=&r"(a2), "=&r"(a3)                                                          \
  : [blk] "r"(blk), [oo] "r"(oo), [w0] "w"(w0), [w1] "w"(w1), [w2] "w"(w2), \
    [w3] "w"(w3), [vm] "w"(vm), [vs] "w"(vs)                                                            \
  : "memory", "cc"
static void qdw4_image(const int8_t *xb, int8_t *yo, int32_t rows, uint32_t ys, int32_t *blk, int32_t oo,
                       int8x16_t w0, int8x16_t w1, int8x16_t w2, int8x16_t w3, int32x4_t vm,
                       int32x4_t vs) {
  register int32_t a0 __asm__("r0"), a1 __asm__("r2"), a2 __asm__("r4"), a3 __asm__("r6");
  register int32_t lc __asm__("lr");
  int8x16_t win, fix;
  if (ys == 4)  /* NHWC with four channels: pixels are 4 bytes apart */
    __asm__ volatile(QDW_BODY("vstrb.32 %q[win], [%[yo]], #4\n\t") QDW_OPERANDS);
  else
    __asm__ volatile(QDW_BODY("vstrb.32 %q[win], [%[yo]]\n\tldr r0, [%[blk], #28]\n\tadd %[yo], %[yo], r0\n\t")
                     QDW_OPERANDS);
}
#undef QDW_BODY
#undef QDW_OPERANDS

/* The same depthwise on 2x2 blocks of output pixels (four channels, pixel stride 4 bytes): the four
 * pixels' sums go out through 64 bytes of scratch (stmdb) and come back transposed (vld4), one vector
 * per channel with the pixels on the lanes, so the requantisation takes the channel's multiplier and
 * shift as scalars (vqrdmlah adds the round-half-away correction in the multiply), and the narrows
 * interleave the four channels into the 16 output bytes, which one scatter store writes to the two
 * rows (word lanes at y, y+4, y+row, y+row+4). 57 instructions per block, 14.25 per pixel.
 * Walks `pairs` row pairs of `groups` blocks; windows of the second row are `R` bytes further. */
typedef struct {
  int32_t cst[4];          /* -16: bias + in_off * sum(w) per channel (ldmdb) */
  int32_t mq[8];           /*   0: multiplier, shift for channels 0..3 (ldm) */
  int8_t w2[16], w3[16];   /*  32, 48: reloaded per block (their registers are the vld4 targets) */
  int32_t scr[16];         /*  64: the four pixels' sums */
  int32_t groups, pairs, xstep, ystep;  /* 128: blocks per row pair; row pairs; pointer steps per pair */
  int8_t w0[16], w1[16];   /* 144, 160 */
  uint32_t addr[4];        /* 176: store addresses of the first block, minus 8 (pre-indexed) */
} qdw_quads_blk;
/* the asm below addresses these from mq */
_Static_assert(offsetof(qdw_quads_blk, mq) == 16 && offsetof(qdw_quads_blk, groups) == 16 + 128 &&
               offsetof(qdw_quads_blk, w0) == 16 + 144 && offsetof(qdw_quads_blk, addr) == 16 + 176,
               "qdw4_quads offsets");
#ifdef __OPTIMIZE__  /* the loop needs r7, the frame pointer at -O0 */
#define QDW_QUADS 1
/* one pixel of the block: its window (address operand `win`), four sums onto the constants, pushed to scratch */
#define QDW_PIXEL(win)                                                                                  \
  "ldmdb %[blk], {r0, r2, r4, r6}\n\t"                                                                   \
  "vldrb.u8 q3, " win "\n\t"                                                                             \
  "vmladava.s8 r0, q3, q0\n\t"                                                                           \
  "vmladava.s8 r2, q3, q1\n\t"                                                                           \
  "vmladava.s8 r4, q3, q5\n\t"                                                                           \
  "vmladava.s8 r6, q3, q6\n\t"                                                                           \
  "stmdb r12!, {r0, r2, r4, r6}\n\t"
__attribute__((noinline)) static void qdw4_quads(const int8_t *xb, const int8_t *xb2, int32_t *blk, int32_t oo) {
  __asm__ volatile(
      "vldrw.u32 q0, [%[blk], #144]\n\t"
      "vldrw.u32 q1, [%[blk], #160]\n\t"
      "vldrw.u32 q2, [%[blk], #176]\n\t"
      "add r12, %[blk], #128\n"
      "1:\n\t"
      "ldr lr, [%[blk], #128]\n\t"
      "dls lr, lr\n"
      "2:\n\t"
      "vldrw.u32 q5, [%[blk], #32]\n\t"
      "vldrw.u32 q6, [%[blk], #48]\n\t"
      QDW_PIXEL("[%[xb2], #4]")
      QDW_PIXEL("[%[xb2]], #8")
      QDW_PIXEL("[%[xb], #4]")
      QDW_PIXEL("[%[xb]], #8")
      "vld40.32 {q4, q5, q6, q7}, [r12]\n\t"
      "vld41.32 {q4, q5, q6, q7}, [r12]\n\t"
      "vld42.32 {q4, q5, q6, q7}, [r12]\n\t"
      "vld43.32 {q4, q5, q6, q7}, [r12]!\n\t"
      "ldm %[blk], {r0, r1, r2, r3, r4, r5, r6, r7}\n\t"
      "vshr.s32 q3, q4, #31\n\t"
      "vqrdmlah.s32 q3, q4, r0\n\t"
      "vrshl.s32 q3, r1\n\t"
      "vshr.s32 q4, q5, #31\n\t"
      "vqrdmlah.s32 q4, q5, r2\n\t"
      "vrshl.s32 q4, r3\n\t"
      "vshr.s32 q5, q6, #31\n\t"
      "vqrdmlah.s32 q5, q6, r4\n\t"
      "vrshl.s32 q5, r5\n\t"
      "vshr.s32 q6, q7, #31\n\t"
      "vqrdmlah.s32 q6, q7, r6\n\t"
      "vrshl.s32 q6, r7\n\t"
      "vqmovnb.s32 q3, q3\n\t"
      "vqmovnt.s32 q3, q5\n\t"
      "vqmovnb.s32 q4, q4\n\t"
      "vqmovnt.s32 q4, q6\n\t"
      "vqadd.s16 q3, q3, %[oo]\n\t"
      "vqadd.s16 q4, q4, %[oo]\n\t"
      "vqmovnb.s16 q3, q3\n\t"
      "vqmovnt.s16 q3, q4\n\t"
      "vstrw.32 q3, [q2, #8]!\n\t"
      "le lr, 2b\n\t"
      "ldrd r0, r1, [%[blk], #136]\n\t"
      "add %[xb], %[xb], r0\n\t"
      "add %[xb2], %[xb2], r0\n\t"
      "vadd.i32 q2, q2, r1\n\t"
      "ldr r2, [%[blk], #132]\n\t"
      "subs r2, r2, #1\n\t"
      "str r2, [%[blk], #132]\n\t"
      "bne 1b"
      : [xb] "+r"(xb), [xb2] "+r"(xb2)
      : [blk] "r"(blk), [oo] "r"(oo)
      : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r12", "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6",
        "d7", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15", "memory", "cc");
}
#undef QDW_PIXEL
#else
#define QDW_QUADS 0
static void qdw4_quads(const int8_t *xb, const int8_t *xb2, int32_t *blk, int32_t oo) {}
#endif

/* Setup loops of qdw_plane_exec, out of line so that they run with few live registers. The plane:
 * rows [0, Hn) of nch 16-byte chunks; data rows [top, bot) hold input bytes where pch[j] says, the pad
 * elsewhere; masked lanes are not read (a row's first chunk may start before the tensor). src: the
 * source of data row `top`. */
__attribute__((noinline)) static void qdw_plane_rows(int8_t *dst, uintptr_t src, int32_t top, int32_t bot,
                                                     int32_t Hn, uintptr_t xsh, int32_t nch, int8x16_t vpad,
                                                     const mve_pred16_t *pch) {
  int8_t *const end = dst + 16 * nch * Hn, *const dtop = dst + 16 * nch * top;
  for (; dst < dtop; dst += 16) vst1q_s8(dst, vpad);
  if (nch == 1) {  /* the usual small image: no chunk loop (measured: ~20 instructions a row) */
    const mve_pred16_t p = pch[0];
    for (int32_t r = top; r < bot; r++, src += xsh, dst += 16)
      vst1q_s8(dst, vpselq_s8(vldrbq_z_s8((const int8_t *)src, p), vpad, p));
  } else {
    for (int32_t r = top; r < bot; r++, src += xsh)
      for (int32_t j = 0; j < nch; j++, dst += 16)
        vst1q_s8(dst, vpselq_s8(vldrbq_z_s8((const int8_t *)(src + 16u * (uint32_t)j), pch[j]), vpad, pch[j]));
  }
  for (; dst < end; dst += 16) vst1q_s8(dst, vpad);
}
/* Both steps at once for the usual small image (one chunk, unit row stride and dilation): output row
 * oh interleaves plane rows oh..oh+3, kept in q4-q7 and moved down one row per output row, each plane
 * row made once from the input (top, bot, src as in qdw_plane_rows; rows past KH meet zero weights).
 * Per output row: the vst4, three moves and the next row (pad, or a masked load merged with the pad). */
/* one output row (vst4 of q4-q7, ib += 64) and the rows moved down; q7 is then filled by the caller */
#define QDW_ROW_OUT                                                                                     \
  "vst40.8 {q4, q5, q6, q7}, [%[ib]]\n\t"                                                               \
  "vst41.8 {q4, q5, q6, q7}, [%[ib]]\n\t"                                                               \
  "vst42.8 {q4, q5, q6, q7}, [%[ib]]\n\t"                                                               \
  "vst43.8 {q4, q5, q6, q7}, [%[ib]]!\n\t"                                                              \
  "vmov q4, q5\n\t"                                                                                      \
  "vmov q5, q6\n\t"                                                                                      \
  "vmov q6, q7\n\t"
__attribute__((noinline)) static void qdw_interleave_direct(int8_t *ib, uintptr_t src, int32_t top, int32_t bot,
                                                            int32_t rows, uintptr_t xsh, int8x16_t vpad,
                                                            mve_pred16_t p) {
  int8_t first[64] __attribute__((aligned(16)));  /* plane rows 0..3 */
  src -= (uintptr_t)top * xsh;  /* the source of plane row 0 (read only for rows in [top, bot)) */
  for (int32_t k = 0; k < 4; k++)
    vst1q_s8(first + 16 * k, k >= top && k < bot ? vpselq_s8(vldrbq_z_s8((const int8_t *)(src + (uint32_t)k * xsh), p),
                                                             vpad, p) : vpad);
  /* rows fetched in the loop: k = 4 .. rows + 3: pad below top, data in [top, bot), pad after */
  const int32_t k1 = top > 4 ? (top < rows + 4 ? top : rows + 4) : 4;
  const int32_t k2 = bot > k1 ? (bot < rows + 4 ? bot : rows + 4) : k1;
  uint32_t n1 = (uint32_t)(k1 - 4), n2 = (uint32_t)(k2 - k1), n3 = (uint32_t)(rows + 4 - k2);
  src += (uint32_t)k1 * xsh;
  __asm__ volatile(
      "vldrw.u32 q4, [%[f]]\n\t"
      "vldrw.u32 q5, [%[f], #16]\n\t"
      "vldrw.u32 q6, [%[f], #32]\n\t"
      "vldrw.u32 q7, [%[f], #48]\n\t"
      "vmsr p0, %[p]\n\t"
      "wls lr, %[n1], 2f\n"
      "1:\n\t"
      QDW_ROW_OUT
      "vmov q7, %q[pad]\n\t"
      "le lr, 1b\n"
      "2:\n\t"
      "wls lr, %[n2], 4f\n"
      "3:\n\t"
      QDW_ROW_OUT
      "vpst\n\t"
      "vldrbt.u8 q7, [%[src]]\n\t"
      "vpsel q7, q7, %q[pad]\n\t"
      "add %[src], %[src], %[xsh]\n\t"
      "le lr, 3b\n"
      "4:\n\t"
      "wls lr, %[n3], 6f\n"
      "5:\n\t"
      QDW_ROW_OUT
      "vmov q7, %q[pad]\n\t"
      "le lr, 5b\n"
      "6:"
      : [ib] "+r"(ib), [src] "+r"(src)
      : [f] "r"(first), [p] "r"((uint32_t)p), [n1] "r"(n1), [n2] "r"(n2), [n3] "r"(n3), [xsh] "r"(xsh),
        [pad] "w"(vpad)
      : "lr", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15", "memory", "cc");
}
#undef QDW_ROW_OUT
/* Row-interleaves the plane (rows of nch 16-byte chunks): byte 4*col + k of output row oh is plane
 * row oh*sh + k*dh (pr steps `step` per output row, r1..r3 reach rows k = 1..3). */
__attribute__((noinline)) static void qdw_interleave(int8_t *ib, const int8_t *pr, int32_t rows, ptrdiff_t step,
                                                     int32_t nch, ptrdiff_t r1, ptrdiff_t r2, ptrdiff_t r3) {
  if (nch == 1) {  /* as in qdw_plane_rows */
    for (int32_t oh = 0; oh < rows; oh++, pr += step, ib += 64) {
      int8x16x4_t v = {{vld1q_s8(pr), vld1q_s8(pr + r1), vld1q_s8(pr + r2), vld1q_s8(pr + r3)}};
      vst4q_s8(ib, v);
    }
    return;
  }
  for (int32_t oh = 0; oh < rows; oh++, pr += step)
    for (int32_t j = 0; j < 16 * nch; j += 16, ib += 64) {
      int8x16x4_t v = {{vld1q_s8(pr + j), vld1q_s8(pr + r1 + j), vld1q_s8(pr + r2 + j), vld1q_s8(pr + r3 + j)}};
      vst4q_s8(ib, v);
    }
}

/* Depthwise on Helium for groups of four output channels per input channel, unit column stride and
 * dilation, kernels up to 4x4, the int8 clamp (no fused activation range). The input channel is
 * copied once into a padded plane (the padding holds -in_off, so padded taps add nothing), then
 * into a row-interleaved buffer (vst4: byte 4*col + k of output row oh is the plane's row oh*sh + k*dh),
 * where each pixel's window is 16 contiguous bytes: no per-pixel masks or gathers. Buffers live on
 * the stack (up to QDW_PLANE + QDW_IB bytes). qdw_plane_prep works out what does not depend on the
 * input (a depthwise call keeps it in its kernel state), qdw_plane_exec runs the image. */
#define QDW_PLANE 1024
#define QDW_IB 2048
#define QDW_NCH 8   /* 16-column chunks of a plane row */
typedef struct {
  int32_t Hn, Wp, nch, top, bot, cols, R;  /* plane rows, columns, chunks, data rows [top, bot), bytes per ib row */
  int32_t r1, r2, r3;                      /* plane offsets of kernel rows 1..3 */
  int32_t tail[4];                         /* qdw4_image over the whole image: prm[8..11] */
  int32_t quads;                           /* 2x2 blocks; then blk holds the group's weights and constants */
  mve_pred16_t pch[QDW_NCH];               /* input columns of each chunk */
  qdw_quads_blk blk;
} qdw_plan;

/* Weight vectors (lane 4*kw + kh holds tap (kh, kw)) and constants (bias + in_off * sum(w), wrapping
 * like the 32-bit accumulator) of output channels oc0..oc0+3. */
static void qdw_weights(const qconv *c, int32_t oc0, int8x16_t *w, int32_t *cst) {
  const int32_t O = c->y.c;
  const uint8x16_t lane = vidupq_n_u8(0, 1), kh = vandq_u8(lane, vdupq_n_u8(3)), kw = vshrq_n_u8(lane, 2);
  const uint8x16_t woff = vmulq_n_u8(vaddq_u8(vmulq_n_u8(kh, (uint8_t)c->KW), kw), (uint8_t)O);
  const mve_pred16_t ptaps = vcmphiq_u8(vdupq_n_u8((uint8_t)c->KH), kh) & vcmphiq_u8(vdupq_n_u8((uint8_t)c->KW), kw);
  const uint32_t io = (uint32_t)c->in_off;
  for (int32_t i = 0; i < 4; i++) {
    w[i] = vldrbq_gather_offset_z_s8(c->w + oc0 + i, woff, ptaps);
    cst[i] = (int32_t)((c->bias ? (uint32_t)c->bias[oc0 + i] : 0u) + io * (uint32_t)vaddvq_s8(w[i]));
  }
}

/* false: not this path */
static bool qdw_plane_prep(const qconv *c, const int8_t *y, qdw_plan *p) {
  const int32_t KH = c->KH, KW = c->KW, O = c->y.c, OH = c->y.h, OW = c->y.w;
  if (!c->depthwise || c->opg % 4 || KH > 4 || KW > 4 || c->sw != 1 || c->dw != 1 || c->y.sc != 1 ||
      c->amin != -128 || c->amax != 127 || c->in_off < -127 || c->in_off > 128 || c->out_off < -255 ||
      c->out_off > 255 || OH <= 0 || OW <= 0 || O > 255 / 15)
    return false;
  /* padded rows and columns the windows read (conv_out bounded them by the padded input) */
  const int32_t Hn = (OH - 1) * c->sh + (KH - 1) * c->dh + 1, Wp = (OW + KW - 1 + 15) & ~15;
  if ((int64_t)Hn * Wp > QDW_PLANE || (int64_t)OH * 4 * Wp + 16 > QDW_IB || Wp > 16 * QDW_NCH) return false;
  for (int32_t oc = 0; oc < O; oc++)
    if (!cm_vec_requant_ok(c->mult[oc], c->shift[oc])) return false;
  const int32_t ph = c->ph, pw = c->pw;
  p->Hn = Hn; p->Wp = Wp; p->nch = Wp / 16; p->R = 4 * Wp;
  p->top = ph < Hn ? ph : Hn;
  p->bot = ph + c->x.h < Hn ? ph + c->x.h : Hn;
  /* plane columns [pw, pw + cols) hold input columns; a predicate per 16-column chunk */
  p->cols = c->x.w < Wp - pw ? c->x.w : Wp - pw;
  for (int32_t j = 0; j < p->nch; j++) {
    const int32_t lo = pw - 16 * j, hi = pw + p->cols - 16 * j;
    mve_pred16_t m = hi <= 0 ? 0 : vctp8q((uint32_t)hi);
    if (lo > 0) m &= (mve_pred16_t)~vctp8q((uint32_t)lo);
    p->pch[j] = m;
  }
  p->r1 = KH > 1 ? c->dh * Wp : 0; p->r2 = KH > 2 ? 2 * c->dh * Wp : 0; p->r3 = KH > 3 ? 3 * c->dh * Wp : 0;
  p->tail[0] = 4 * (Wp - OW);  /* to the next interleaved row */
  p->tail[1] = (int32_t)(c->y.sh - (ptrdiff_t)OW * c->y.sw);
  p->tail[2] = OW;
  p->tail[3] = (int32_t)c->y.sw;
  /* four channels 4 bytes apart, word-aligned rows, at least one 2x2 block: qdw4_quads */
  const ptrdiff_t ysh = c->y.sh;
  p->quads = QDW_QUADS && O == 4 && c->y.sw == 4 && OH >= 2 && OW >= 2 &&
             !(((uintptr_t)y | (uintptr_t)ysh | (uintptr_t)c->y.sn) & 3u);
  if (p->quads) {
    qdw_quads_blk *q = &p->blk;
    int8x16_t w[4];
    qdw_weights(c, 0, w, q->cst);
    vst1q_s8(q->w0, w[0]); vst1q_s8(q->w1, w[1]); vst1q_s8(q->w2, w[2]); vst1q_s8(q->w3, w[3]);
    for (int32_t i = 0; i < 4; i++) { q->mq[2 * i] = c->mult[i]; q->mq[2 * i + 1] = c->shift[i]; }
    q->groups = OW / 2;
    q->xstep = 2 * p->R - 4 * (OW & ~1);
    q->ystep = (int32_t)(2 * ysh - 4 * (OW & ~1));
  }
  return true;
}

CM_HOT static void qdw_plane_exec(const qconv *c, qdw_plan *p, const int8_t *x, int8_t *y) {
  const int32_t O = c->y.c, OH = c->y.h, OW = c->y.w, Wp = p->Wp, Hn = p->Hn, nch = p->nch, R = p->R;
  const int32_t top = p->top, bot = p->bot, cols = p->cols, ph = c->ph, pw = c->pw;
  int8_t plane[QDW_PLANE] __attribute__((aligned(16)));
  int8_t ib[QDW_IB] __attribute__((aligned(16)));
  int32_t prm[12] __attribute__((aligned(16)));  /* constants, scratch, row tails: qdw4_image */
  const int8x16_t vpad = vdupq_n_s8((int8_t)-c->in_off);
  /* locals: int8 stores may alias *c, whose fields would be reloaded in every loop below */
  const ptrdiff_t xsh = c->x.sh, xsw = c->x.sw, xsn = c->x.sn, xsc = c->x.sc, ysh = c->y.sh;
  const int32_t out_off = c->out_off;
  for (int32_t n = 0; n < c->y.n; n++) {
    int32_t built = -1;  /* input channel in the buffers */
    for (int32_t oc0 = 0; oc0 < O; oc0 += 4) {
      const int32_t ic = oc0 / c->opg;
      if (ic != built) {
        const int8_t *xc = x + n * xsn + ic * xsc;
        if (xsw == 1 && cols > 0 && nch == 1 && c->sh == 1 && c->dh == 1) {
          qdw_interleave_direct(ib, (uintptr_t)xc - (uintptr_t)pw, top, bot, OH, (uintptr_t)xsh, vpad, p->pch[0]);
        } else {
          if (xsw == 1 && cols > 0) {  /* data rows whole */
            qdw_plane_rows(plane, (uintptr_t)xc - (uintptr_t)pw, top, bot, Hn, (uintptr_t)xsh, nch, vpad, p->pch);
          } else {
            for (int32_t i = 0; i < Hn * Wp; i += 16) vst1q_s8(plane + i, vpad);
            for (int32_t r = top; r < bot; r++)
              for (int32_t j = 0; j < cols; j++) plane[r * Wp + pw + j] = xc[(r - ph) * xsh + j * xsw];
          }
          qdw_interleave(ib, plane, OH, c->sh * Wp, nch, p->r1, p->r2, p->r3);
        }
        built = ic;
      }
      int8_t *yg = y + n * c->y.sn + oc0;
      int8x16_t w[4];
      if (!p->quads) {
        qdw_weights(c, oc0, w, prm);
        for (int32_t i = 0; i < 4; i++) prm[8 + i] = p->tail[i];
        qdw4_image(ib, yg, OH, (uint32_t)c->y.sw, prm + 4, out_off, w[0], w[1], w[2], w[3], vld1q_s32(c->mult + oc0),
                   vld1q_s32(c->shift + oc0));
        continue;
      }
      /* 2x2 blocks over the even rows and columns, then the odd column and the odd row one pixel at a time */
      qdw_quads_blk *q = &p->blk;
      q->pairs = OH / 2;
      const uint32_t ya = (uint32_t)(uintptr_t)yg - 8u;
      q->addr[0] = ya; q->addr[1] = ya + 4u; q->addr[2] = ya + (uint32_t)ysh; q->addr[3] = ya + (uint32_t)ysh + 4u;
      qdw4_quads(ib, ib + R, q->mq, out_off);
      if (!((OW | OH) & 1)) continue;
      w[0] = vld1q_s8(q->w0); w[1] = vld1q_s8(q->w1); w[2] = vld1q_s8(q->w2); w[3] = vld1q_s8(q->w3);
      for (int32_t i = 0; i < 4; i++) prm[i] = q->cst[i];
      const int32x4_t vm = vld1q_s32(c->mult + oc0), vs = vld1q_s32(c->shift + oc0);
      if (OW & 1) {
        prm[8] = R - 4; prm[9] = (int32_t)ysh - 4; prm[10] = 1;
        qdw4_image(ib + 4 * (OW - 1), yg + 4 * (OW - 1), OH & ~1, 4u, prm + 4, out_off, w[0], w[1], w[2], w[3], vm, vs);
      }
      if (OH & 1) {
        prm[8] = 4 * (Wp - OW); prm[9] = (int32_t)ysh - 4 * OW; prm[10] = OW;
        qdw4_image(ib + (OH - 1) * R, yg + (OH - 1) * ysh, 1, 4u, prm + 4, out_off, w[0], w[1], w[2], w[3], vm, vs);
      }
    }
  }
}

/* Depthwise on Helium, for groups of four output channels that read one input channel (depth
 * multiplier a multiple of 4), up to 16 taps, NHWC-contiguous output channels: per output pixel, one
 * byte gather of the window (tap offsets in a vector), a vmladav per channel against weight vectors
 * kept in registers, the four requantised together. The input offset is folded in as
 * in_off * sum(w) per channel; taps in the padding read as -in_off (their term then cancels).
 * Returns false (nothing written) when the call is outside that case. */
CM_HOT static bool qdw_mve(const qconv *c, const int8_t *x, int8_t *y) {
  const int32_t KH = c->KH, KW = c->KW, T = KH * KW, O = c->y.c, OW = c->y.w;
  if (!c->depthwise || c->opg % 4 || T > 16 || T < 1 || c->y.sc != 1 || c->x.sh <= 0 || c->x.sw <= 0 || OW > 256)
    return false;
  if (c->in_off < -127 || c->in_off > 128) return false;  /* -in_off must be an int8 */
  uint8_t offs[16] = {0};
  for (int32_t kh = 0; kh < KH; kh++)
    for (int32_t kw = 0; kw < KW; kw++) {
      int64_t off = (int64_t)kh * c->dh * c->x.sh + (int64_t)kw * c->dw * c->x.sw;
      if (off > 255) return false;
      offs[kh * KW + kw] = (uint8_t)off;
    }
  for (int32_t oc = 0; oc < O; oc++)
    if (!cm_vec_requant_ok(c->mult[oc], c->shift[oc])) return false;
  /* taps inside the input, per output column (bit t = tap t, as the byte-lane predicate) */
  uint32_t colbits[16] = {0}, rowbits = (1u << KW) - 1u;  /* taps of kernel column kw / of kernel row 0 */
  for (int32_t kw = 0; kw < KW; kw++)
    for (int32_t kh = 0; kh < KH; kh++) colbits[kw] |= 1u << (kh * KW + kw);
  uint16_t colm[256];
  for (int32_t ow = 0; ow < OW; ow++) {
    uint32_t m = 0;
    for (int32_t kw = 0, iw = ow * c->sw - c->pw; kw < KW; kw++, iw += c->dw)
      if (iw >= 0 && iw < c->x.w) m |= colbits[kw];
    colm[ow] = (uint16_t)m;
  }
  const uint16_t full = (uint16_t)((1u << T) - 1u);
  const uint8x16_t voff = vld1q_u8(offs);
  const int8x16_t vpad = vdupq_n_s8((int8_t)-c->in_off);
  const int32_t amin = c->amin, amax = c->amax, out_off = c->out_off;
  const bool sat8 = amin == -128 && amax == 127;
  const uintptr_t xstep = (uintptr_t)((ptrdiff_t)c->sw * c->x.sw);
  const ptrdiff_t ystep = c->y.sw;
  for (int32_t oc0 = 0; oc0 < O; oc0 += 4) {
    const int32_t ic = oc0 / c->opg;
    int8_t wt[4][16] = {{0}};
    int32_t cst[4], mu[4], sh[4];
    for (int32_t i = 0; i < 4; i++) {
      uint32_t sw = 0;
      for (int32_t t = 0; t < T; t++) {
        wt[i][t] = c->w[(ptrdiff_t)t * O + oc0 + i];
        sw += (uint32_t)(int32_t)wt[i][t];
      }
      cst[i] = (int32_t)((c->bias ? (uint32_t)c->bias[oc0 + i] : 0u) + (uint32_t)c->in_off * sw);
      mu[i] = c->mult[oc0 + i];
      sh[i] = c->shift[oc0 + i];
    }
    const int8x16_t w0 = vld1q_s8(wt[0]), w1 = vld1q_s8(wt[1]), w2 = vld1q_s8(wt[2]), w3 = vld1q_s8(wt[3]);
    const int32x4_t vc = vld1q_s32(cst), vm = vld1q_s32(mu), vs = vld1q_s32(sh);
    for (int32_t n = 0; n < c->y.n; n++)
      for (int32_t oh = 0; oh < c->y.h; oh++) {
        const int32_t ih0 = oh * c->sh - c->ph;
        uint32_t rowm = 0;
        for (int32_t kh = 0, ih = ih0; kh < KH; kh++, ih += c->dh)
          if (ih >= 0 && ih < c->x.h) rowm |= rowbits << (kh * KW);
        /* window origin of column 0; it may lie before the tensor (padding): only taps inside are read */
        uintptr_t xb = (uintptr_t)(x + n * c->x.sn + ic * c->x.sc) +
                       (uintptr_t)((ptrdiff_t)ih0 * c->x.sh - (ptrdiff_t)c->pw * c->x.sw);
        int8_t *yo = y + n * c->y.sn + oh * c->y.sh + oc0;
        for (int32_t ow = 0; ow < OW; ow++, xb += xstep, yo += ystep) {
          const uint16_t m = (uint16_t)(rowm & colm[ow]);
          int8x16_t win;
          if (m == full) {
            win = vldrbq_gather_offset_s8((const int8_t *)xb, voff);
          } else {
            win = vldrbq_gather_offset_z_s8((const int8_t *)xb, voff, m);
            win = vpselq_s8(win, vpad, m);
          }
          int32x4_t acc = vdupq_n_s32(vmladavq_s8(win, w0));
          acc = vsetq_lane_s32(vmladavq_s8(win, w1), acc, 1);
          acc = vsetq_lane_s32(vmladavq_s8(win, w2), acc, 2);
          acc = vsetq_lane_s32(vmladavq_s8(win, w3), acc, 3);
          int32x4_t r = vqaddq_n_s32(cm_requant_v(vaddq_s32(acc, vc), vm, vs), out_off);
          if (sat8) {
            /* the int8 clamp as two saturating narrows: the low byte of each lane is what is stored */
            r = vreinterpretq_s32_s8(vqmovnbq_s16(vreinterpretq_s8_s32(r),
                                                  vqmovnbq_s32(vreinterpretq_s16_s32(r), r)));
          } else {
            r = vminq_s32(vmaxq_s32(r, vdupq_n_s32(amin)), vdupq_n_s32(amax));
          }
          vstrbq_s32(yo, r);
        }
      }
  }
  return true;
}
#endif

/* The portable depthwise, on its own: everything in locals (an int8 store may alias *c, so fields
 * would be reloaded per output), the tap ranges clipped once per pixel instead of tested per tap. */
__attribute__((noinline)) static void qdw_portable(const qconv *c, const int8_t *x, int8_t *y) {
  const int32_t O = c->y.c, KH = c->KH, KW = c->KW, dh = c->dh, dw = c->dw, H = c->x.h, W = c->x.w;
  const int32_t xsh = c->x.sh, xsw = c->x.sw, xsc = c->x.sc, in_off = c->in_off, opg = c->opg;
  const int32_t out_off = c->out_off, amin = c->amin, amax = c->amax, ysc = c->y.sc;
  const int32_t *mult = c->mult, *shift = c->shift, *bias = c->bias;
  const int8_t *wt = c->w;
  for (int32_t n = 0; n < c->y.n; n++)
    for (int32_t oh = 0; oh < c->y.h; oh++) {
      const int32_t ih0 = oh * c->sh - c->ph;
      int32_t kh0, kh1;  /* taps kh in [kh0, kh1) fall inside the input rows */
      tap_range(ih0, KH, dh, H, &kh0, &kh1);
      for (int32_t ow = 0; ow < c->y.w; ow++) {
        const int32_t iw0 = ow * c->sw - c->pw;
        int32_t kw0, kw1;
        tap_range(iw0, KW, dw, W, &kw0, &kw1);
        const int8_t *xp = x + n * c->x.sn;  /* the window origin may lie outside: offsets below stay inside */
        int8_t *yp = y + n * c->y.sn + oh * c->y.sh + ow * c->y.sw;
        for (int32_t oc = 0; oc < O; oc++) {
          /* Wraps like the hardware's 32-bit accumulator; a corrupted bias cannot make it UB. */
          uint32_t acc = bias ? (uint32_t)bias[oc] : 0u;
          const int8_t *xc = xp + (oc / opg) * xsc;
          for (int32_t kh = kh0; kh < kh1; kh++) {
            const int8_t *xr = xc + (ptrdiff_t)(ih0 + kh * dh) * xsh, *wr = wt + (ptrdiff_t)kh * KW * O + oc;
            for (int32_t kw = kw0; kw < kw1; kw++)
              acc += (uint32_t)(((int32_t)xr[(ptrdiff_t)(iw0 + kw * dw) * xsw] + in_off) *
                                (int32_t)wr[(ptrdiff_t)kw * O]);
          }
          int32_t r = add_sat_i32(cm_requant((int32_t)acc, mult[oc], shift[oc]), out_off);
          yp[oc * ysc] = (int8_t)clamp_i32(r, amin, amax);
        }
      }
    }
}

#ifdef CM_DSP
/* Dense conv (one group, NHWC input, unit column dilation) on the SMLAD cores: 2 output channels
 * x 2 output pixels a pass; each kernel row's taps are one contiguous run of input, clipped at the
 * borders. acc = bias + sum x.w + in_off x (sum of the weights of the taps inside the input): the tap
 * sums of the channel pair (at most CM_DSP_TAPS taps) are taken once per call. false: not this shape. */
#define CM_DSP_TAPS 64
static int32_t cm_dsp_corr(const int32_t *tap, int32_t KW, int32_t kh0, int32_t kh1, int32_t kw0, int32_t kw1) {
  int32_t s = 0;
  for (int32_t kh = kh0; kh < kh1; kh++)
    for (int32_t kw = kw0; kw < kw1; kw++) s += tap[kh * KW + kw];
  return s;
}

static inline void cm_dsp_store(const qconv *c, int8_t *yp, int32_t oc, uint32_t acc) {
  int32_t r = add_sat_i32(cm_requant((int32_t)acc, c->mult[oc], c->shift[oc]), c->out_off);
  yp[oc * c->y.sc] = (int8_t)clamp_i32(r, c->amin, c->amax);
}

__attribute__((noinline)) static bool cm_dsp_conv(const qconv *c, const int8_t *x, int8_t *y) {
  const int32_t C = c->x.c, KH = c->KH, KW = c->KW, O = c->y.c, H = c->x.h, W = c->x.w;
  if (c->depthwise || c->cpg != C || c->x.sc != 1 || c->x.sw != C || c->dw != 1 || KH * KW > CM_DSP_TAPS ||
      C <= 0)
    return false;
  const int32_t K = KH * KW * C, io = c->in_off, dh = c->dh;
  const ptrdiff_t xsh = c->x.sh, step = (ptrdiff_t)c->sw * C;
  int32_t tap[2][CM_DSP_TAPS];
  for (int32_t oc = 0; oc < O; oc += 2) {
    const int32_t oc1 = oc + 1 < O ? oc + 1 : oc;  /* an odd last channel is computed twice, stored once */
    const int8_t *w0 = c->w + (ptrdiff_t)oc * K, *w1 = c->w + (ptrdiff_t)oc1 * K;
    int32_t full0 = 0, full1 = 0;
    for (int32_t t = 0; t < KH * KW; t++) {
      tap[0][t] = cm_dsp_sum(w0 + (ptrdiff_t)t * C, C); full0 += tap[0][t];
      tap[1][t] = cm_dsp_sum(w1 + (ptrdiff_t)t * C, C); full1 += tap[1][t];
    }
    const uint32_t b0 = c->bias ? (uint32_t)c->bias[oc] : 0u, b1 = c->bias ? (uint32_t)c->bias[oc1] : 0u;
    for (int32_t n = 0; n < c->y.n; n++) {
      const int8_t *xn = x + n * c->x.sn;
      for (int32_t oh = 0; oh < c->y.h; oh++) {
        const int32_t ih0 = oh * c->sh - c->ph;
        int32_t kh0, kh1;
        tap_range(ih0, KH, dh, H, &kh0, &kh1);
        int8_t *yr = y + n * c->y.sn + oh * c->y.sh;
        for (int32_t ow = 0; ow < c->y.w;) {
          const int32_t iw0 = ow * c->sw - c->pw;
          int32_t kw0, kw1;
          tap_range(iw0, KW, 1, W, &kw0, &kw1);
          const bool full = kh0 == 0 && kh1 == KH && kw0 == 0 && kw1 == KW;
          const int32_t c0 = full ? full0 : cm_dsp_corr(tap[0], KW, kh0, kh1, kw0, kw1);
          const int32_t c1 = full ? full1 : cm_dsp_corr(tap[1], KW, kh0, kh1, kw0, kw1);
          const int8_t *xw = xn + (ptrdiff_t)iw0 * C + kw0 * C;
          const int32_t run = (kw1 - kw0) * C;
          /* the next pixel takes the same taps: a 2x2 pass */
          int32_t k2w0 = 0, k2w1 = 0;
          if (ow + 1 < c->y.w) tap_range(iw0 + c->sw, KW, 1, W, &k2w0, &k2w1);
          int8_t *yp = yr + ow * c->y.sw;
          if (ow + 1 < c->y.w && k2w0 == kw0 && k2w1 == kw1) {
            int32_t acc[4] = {0, 0, 0, 0};
            for (int32_t kh = kh0; kh < kh1; kh++) {
              const int8_t *xr = xw + (ptrdiff_t)(ih0 + kh * dh) * xsh;
              const ptrdiff_t wo = ((ptrdiff_t)kh * KW + kw0) * C;
              cm_dsp_dot2x2(xr, xr + step, w0 + wo, w1 + wo, run, acc);
            }
            const uint32_t k0 = (uint32_t)io * (uint32_t)c0, k1 = (uint32_t)io * (uint32_t)c1;
            if (oc1 != oc) {
              cm_dsp_store(c, yp, oc1, b1 + k1 + (uint32_t)acc[2]);
              cm_dsp_store(c, yp + c->y.sw, oc1, b1 + k1 + (uint32_t)acc[3]);
            }
            cm_dsp_store(c, yp, oc, b0 + k0 + (uint32_t)acc[0]);
            cm_dsp_store(c, yp + c->y.sw, oc, b0 + k0 + (uint32_t)acc[1]);
            ow += 2;
          } else {
            int32_t acc[2] = {0, 0};
            for (int32_t kh = kh0; kh < kh1; kh++) {
              const int8_t *xr = xw + (ptrdiff_t)(ih0 + kh * dh) * xsh;
              const ptrdiff_t wo = ((ptrdiff_t)kh * KW + kw0) * C;
              cm_dsp_dot1x2(xr, w0 + wo, w1 + wo, run, acc);
            }
            if (oc1 != oc) cm_dsp_store(c, yp, oc1, b1 + (uint32_t)io * (uint32_t)c1 + (uint32_t)acc[1]);
            cm_dsp_store(c, yp, oc, b0 + (uint32_t)io * (uint32_t)c0 + (uint32_t)acc[0]);
            ow += 1;
          }
        }
      }
    }
  }
  return true;
}
#endif

/* everything but the plane path */
static void qconv_run(const qconv *c, const int8_t *x, int8_t *y) {
#ifdef CM_MVE
  if (qdw_mve(c, x, y)) return;
#elif defined(CM_DSP)
  if (cm_dsp_conv(c, x, y)) return;
#endif
  if (c->depthwise) { qdw_portable(c, x, y); return; }
  const int32_t O = c->y.c;
  /* dense NHWC input, one group, unit column dilation: the kw taps of a row are contiguous */
  const bool merge = !c->depthwise && c->cpg == c->x.c && c->x.sc == 1 && c->x.sw == c->x.c && c->dw == 1;
  for (int32_t n = 0; n < c->y.n; n++)
    for (int32_t oh = 0; oh < c->y.h; oh++)
      for (int32_t ow = 0; ow < c->y.w; ow++) {
        const int32_t ih0 = oh * c->sh - c->ph, iw0 = ow * c->sw - c->pw;
        const int8_t *xn = x + n * c->x.sn;
        for (int32_t oc = 0; oc < O; oc++) {
          /* Wraps like the hardware's 32-bit accumulator; a corrupted bias cannot make it UB. */
          uint32_t acc = c->bias ? (uint32_t)c->bias[oc] : 0u;
          /* dense and grouped (depthwise went to qdw_portable) */
          const int32_t c0 = (oc / c->opg) * c->cpg;
          const int8_t *wo = c->w + (ptrdiff_t)oc * c->KH * c->KW * c->cpg;
          int32_t wsum = 0;
          for (int32_t kh = 0; kh < c->KH; kh++) {
            int32_t ih = ih0 + kh * c->dh;
            if (ih < 0 || ih >= c->x.h) continue;
            if (merge) {
              /* taps kw in [k0, k1) read one contiguous run of (k1 - k0) * C values */
              int32_t k0 = iw0 < 0 ? -iw0 : 0, k1 = c->x.w - iw0;
              if (k1 > c->KW) k1 = c->KW;
              if (k0 >= k1) continue;
              const int8_t *xp = xn + ih * c->x.sh + (iw0 + k0) * c->x.sw;
              const int8_t *wp = wo + ((ptrdiff_t)kh * c->KW + k0) * c->cpg;
              acc += (uint32_t)dot_sum_s8(xp, wp, (k1 - k0) * c->cpg, &wsum);
              continue;
            }
            for (int32_t kw = 0; kw < c->KW; kw++) {
              int32_t iw = iw0 + kw * c->dw;
              if (iw < 0 || iw >= c->x.w) continue;
              const int8_t *xp = xn + c0 * c->x.sc + ih * c->x.sh + iw * c->x.sw;
              const int8_t *wp = wo + ((ptrdiff_t)kh * c->KW + kw) * c->cpg;
              if (c->x.sc == 1) {
                acc += (uint32_t)dot_sum_s8(xp, wp, c->cpg, &wsum);
              } else {
                for (int32_t ci = 0; ci < c->cpg; ci++) {
                  acc += (uint32_t)((int32_t)xp[ci * c->x.sc] * (int32_t)wp[ci]);
                  wsum += wp[ci];
                }
              }
            }
          }
          acc += (uint32_t)c->in_off * (uint32_t)wsum;
          int32_t r = add_sat_i32(cm_requant((int32_t)acc, c->mult[oc], c->shift[oc]), c->out_off);
          y[n * c->y.sn + oc * c->y.sc + oh * c->y.sh + ow * c->y.sw] = (int8_t)clamp_i32(r, c->amin, c->amax);
        }
      }
}

/* (in + 2 pad - dil (k - 1) - 1) / s + 1, summed in 64 bits; -1 when it is not a positive int32 (a corrupted
 * geometry: the int32 form would overflow) */
static int32_t conv_out(int32_t in, int32_t pad, int32_t dil, int32_t k, int32_t s) {
  if (s <= 0) return -1;
  int64_t num = (int64_t)in + 2 * (int64_t)pad - (int64_t)dil * ((int64_t)k - 1) - 1;
  if (num < 0 || num >= INT32_MAX) return -1;   /* then a 32-bit division (a 64-bit one is a libgcc call) */
  return (int32_t)num / s + 1;
}

/* What a depthwise call keeps between executions (ET_STATE; filled at method load): the checked
 * arguments and the plane path's plan (see cm_call). */
typedef struct {
  cm_call call;
  int32_t plane;   /* qdw_plane_exec with p */
  qconv c;
#ifdef CM_MVE
  qdw_plan p;
#endif
} qconv_state;
#define QCONV_STATE 704
_Static_assert(sizeof(qconv_state) <= QCONV_STATE, "raise QCONV_STATE and the ET_STATE sizes below");

static void qconv_exec(const qconv *c, const int8_t *x, int8_t *y) {
#ifdef CM_MVE
  qdw_plan p;
  if (qdw_plane_prep(c, y, &p)) { qdw_plane_exec(c, &p, x, y); return; }
#endif
  qconv_run(c, x, y);
}

/* common tail: args [input, weight, bias, stride, padding, dilation, (depth_multiplier,) input_offset,
 * output_offset, requantize_multipliers, requantize_shifts, activation_min, activation_max, scratch, out] */
static et_status qconv_op(et_kctx *ctx, et_value *const *args, uint32_t nargs, bool depthwise, bool nhwc) {
  const uint32_t o = depthwise ? 1 : 0;  /* index shift after dilation */
  ET_CHECK_ARGS(14 + o);
  qconv_state *ks = (qconv_state *)ctx->state;
  if (ks && cm_call_same(&ks->call, args[0], args[13 + o])) {
    if (ctx->prepare) return ET_OK;
    const int8_t *x = (const int8_t *)ks->call.x->data;
    int8_t *y = (int8_t *)ks->call.y->data;
#ifdef CM_MVE
    if (ks->plane) { qdw_plane_exec(&ks->c, &ks->p, x, y); return ET_OK; }
#endif
    qconv_run(&ks->c, x, y);
    return ET_OK;
  }
  et_tensor *in, *w, *bias = NULL, *mt, *shf, *out;
  /* every dtype is checked below */
  ARG_TENSOR_DT(0, in);
  ARG_TENSOR_DT(1, w);
  if (!et_is_none(args[2])) ARG_TENSOR_DT(2, bias);
  ARG_TENSOR_DT(8 + o, mt);
  ARG_TENSOR_DT(9 + o, shf);
  ARG_TENSOR_DT(13 + o, out);
  qconv c;
  int32_t s[2], p[2], d[2];
  if (!pair_arg(args[3], s)) BAD(3);
  if (!pair_arg(args[4], p)) BAD(4);
  if (!pair_arg(args[5], d)) BAD(5);
  ARG_INT(6 + o, c.in_off); ARG_INT(7 + o, c.out_off); ARG_INT(10 + o, c.amin); ARG_INT(11 + o, c.amax);
  /* int8 zero points: anything else is a corrupted program, and would overflow the sums. */
  if (c.in_off < -255 || c.in_off > 255) BAD(6 + o);
  if (in->ndim != 4 || w->ndim != 4 || in->dtype != ET_CHAR || w->dtype != ET_CHAR || out->dtype != ET_CHAR) BAD(0);
  if (!contiguous(w)) { ctx->err_detail = 1; return ET_ERR_UNSUPPORTED; }
  geo4(in, nhwc, &c.x);
  c.sh = s[0]; c.sw = s[1]; c.ph = p[0]; c.pw = p[1]; c.dh = d[0]; c.dw = d[1];
  c.KH = w->sizes[1]; c.KW = w->sizes[2];
  int32_t O;
  if (depthwise) {
    O = w->sizes[3];
    int32_t dm;
    ARG_INT(6, dm);
    if (w->sizes[0] != 1 || c.x.c <= 0 || O % c.x.c) BAD(1);
    c.cpg = 1;
    c.opg = O / c.x.c;
    (void)dm;
  } else {
    O = w->sizes[0];
    c.cpg = w->sizes[3];
    if (c.cpg <= 0 || c.x.c % c.cpg) BAD(1);
    int32_t G = c.x.c / c.cpg;
    if (O % G) BAD(1);
    c.opg = O / G;
  }
  if (c.sh <= 0 || c.sw <= 0 || c.dh <= 0 || c.dw <= 0 || c.ph < 0 || c.pw < 0) BAD(3);
  if (O < 0 || numel32(mt) < (uint32_t)O || numel32(shf) < (uint32_t)O || mt->dtype != ET_INT ||
      shf->dtype != ET_INT) BAD(8 + o);
  if (bias && (bias->dtype != ET_INT || numel32(bias) != (uint32_t)O)) BAD(2);
  int32_t OH = conv_out(c.x.h, c.ph, c.dh, c.KH, c.sh), OW = conv_out(c.x.w, c.pw, c.dw, c.KW, c.sw);
  if (OH <= 0 || OW <= 0) BAD(0);
  et_status st = resize4(ctx, out, nhwc, c.x.n, O, OH, OW, 13 + o);
  if (st) return st;
  geo4(out, nhwc, &c.y);
  c.depthwise = depthwise;
  c.w = (const int8_t *)w->data;
  c.bias = bias ? (const int32_t *)bias->data : NULL;
  c.mult = (const int32_t *)mt->data;
  c.shift = (const int32_t *)shf->data;
  if (ks) {
    ks->c = c;
#ifdef CM_MVE
    ks->plane = qdw_plane_prep(&ks->c, (const int8_t *)out->data, &ks->p);
#endif
    cm_call_set(&ks->call, in, out, w->constant && mt->constant && shf->constant && (!bias || bias->constant));
    if (ctx->prepare) return ET_OK;
#ifdef CM_MVE
    if (ks->plane) { qdw_plane_exec(&ks->c, &ks->p, (const int8_t *)in->data, (int8_t *)out->data); return ET_OK; }
#endif
    qconv_run(&ks->c, (const int8_t *)in->data, (int8_t *)out->data);
    return ET_OK;
  }
  if (ctx->prepare) return ET_OK;
  qconv_exec(&c, (const int8_t *)in->data, (int8_t *)out->data);
  return ET_OK;
}

/* quantized_conv2d.out(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding,
 *   int[] dilation, int input_offset, int output_offset, Tensor requantize_multipliers,
 *   Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch, *, Tensor(a!) out) */
ET_OP("cortex_m::quantized_conv2d.out", k_cm_quantized_conv2d_out) { return qconv_op(ctx, args, nargs, false, false); }
ET_OP("cortex_m::quantized_conv2d_nhwc.out", k_cm_quantized_conv2d_nhwc_out) { return qconv_op(ctx, args, nargs, false, true); }
/* quantized_depthwise_conv2d.out(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding,
 *   int[] dilation, int depth_multiplier, int input_offset, int output_offset, Tensor requantize_multipliers,
 *   Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch, *, Tensor(a!) out) */
ET_STATE("cortex_m::quantized_depthwise_conv2d.out", 704);
ET_STATE("cortex_m::quantized_depthwise_conv2d_nhwc.out", 704);
ET_OP("cortex_m::quantized_depthwise_conv2d.out", k_cm_quantized_depthwise_conv2d_out) {
  return qconv_op(ctx, args, nargs, true, false);
}
ET_OP("cortex_m::quantized_depthwise_conv2d_nhwc.out", k_cm_quantized_depthwise_conv2d_nhwc_out) {
  return qconv_op(ctx, args, nargs, true, true);
}

/* ---------------------------------------------------------------- elementwise */

static et_status ew2(et_kctx *ctx, et_value *const *args, uint32_t ai, uint32_t bi, uint32_t oi, et_ew *w,
                     et_tensor **a, et_tensor **b, et_tensor **out) {
  ARG_TENSOR(ai, *a);
  ARG_TENSOR(bi, *b);
  ARG_TENSOR(oi, *out);
  et_tensor *ins[2] = {*a, *b};
  et_status st = et_ew_prepare(w, *out, ins, 2, true);
  if (st) { ctx->err_detail = oi; return st; }
  return ET_OK;
}

/* quantized_add.out(Tensor self, int self_zero_point, int self_multiplier, int self_shift, Tensor other,
 *   int other_zero_point, int other_multiplier, int other_shift, int output_zero_point,
 *   int output_multiplier, int output_shift, int activation_min, int activation_max, *, Tensor(a!) out) */
ET_OP("cortex_m::quantized_add.out", k_cm_quantized_add_out) {
  ET_CHECK_ARGS(14);
  int32_t az, am, as, bz, bm, bs, oz, om, os, lo, hi;
  ARG_INT(1, az); ARG_INT(2, am); ARG_INT(3, as); ARG_INT(5, bz); ARG_INT(6, bm); ARG_INT(7, bs);
  ARG_INT(8, oz); ARG_INT(9, om); ARG_INT(10, os); ARG_INT(11, lo); ARG_INT(12, hi);
  et_ew w;
  et_tensor *a, *b, *out;
  et_status st = ew2(ctx, args, 0, 4, 13, &w, &a, &b, &out);
  if (st) return st;
  if (a->dtype != ET_CHAR || b->dtype != ET_CHAR || out->dtype != ET_CHAR) BAD(0);
  const int8_t *x = (const int8_t *)a->data, *z = (const int8_t *)b->data;
  int8_t *y = (int8_t *)out->data;
  for (size_t i = 0; i < w.n; i++) {
    int32_t xa = cm_requant((int32_t)((uint32_t)((int32_t)x[w.it.off[1]] - az) << 20), am, as);
    int32_t xb = cm_requant((int32_t)((uint32_t)((int32_t)z[w.it.off[2]] - bz) << 20), bm, bs);
    int32_t r = cm_requant((int32_t)((uint32_t)xa + (uint32_t)xb), om, os);
    y[w.it.off[0]] = (int8_t)clamp_i32((int32_t)((uint32_t)r + (uint32_t)oz), lo, hi);
    et_ew_next(&w);
  }
  return ET_OK;
}

/* quantized_mul.out(Tensor self, int self_zero_point, Tensor other, int other_zero_point,
 *   int output_zero_point, int output_multiplier, int output_shift, *, Tensor(a!) out) */
ET_OP("cortex_m::quantized_mul.out", k_cm_quantized_mul_out) {
  ET_CHECK_ARGS(8);
  int32_t az, bz, oz, om, os;
  ARG_INT(1, az); ARG_INT(3, bz); ARG_INT(4, oz); ARG_INT(5, om); ARG_INT(6, os);
  et_ew w;
  et_tensor *a, *b, *out;
  et_status st = ew2(ctx, args, 0, 2, 7, &w, &a, &b, &out);
  if (st) return st;
  if (a->dtype != ET_CHAR || b->dtype != ET_CHAR || out->dtype != ET_CHAR) BAD(0);
  const int8_t *x = (const int8_t *)a->data, *z = (const int8_t *)b->data;
  int8_t *y = (int8_t *)out->data;
  for (size_t i = 0; i < w.n; i++) {
    int32_t p = ((int32_t)x[w.it.off[1]] - az) * ((int32_t)z[w.it.off[2]] - bz);
    int32_t r = cm_requant(p, om, os);
    y[w.it.off[0]] = (int8_t)clamp_i32((int32_t)((uint32_t)r + (uint32_t)oz), -128, 127);
    et_ew_next(&w);
  }
  return ET_OK;
}

/* quantized_div.out(Tensor self, int self_zero_point, Tensor other, int other_zero_point,
 *   int output_zero_point, float output_scale, *, Tensor(a!) out): int8 or int16 */
ET_OP("cortex_m::quantized_div.out", k_cm_quantized_div_out) {
  ET_CHECK_ARGS(7);
  int32_t az, bz, oz;
  ARG_INT(1, az); ARG_INT(3, bz); ARG_INT(4, oz);
  float sc = et_value_as_float(args[5]);
  et_ew w;
  et_tensor *a, *b, *out;
  et_status st = ew2(ctx, args, 0, 2, 6, &w, &a, &b, &out);
  if (st) return st;
  if ((a->dtype != ET_CHAR && a->dtype != ET_SHORT) || b->dtype != a->dtype || out->dtype != a->dtype) BAD(0);
  int32_t lo = a->dtype == ET_CHAR ? -128 : -32768, hi = a->dtype == ET_CHAR ? 127 : 32767;
  for (size_t i = 0; i < w.n; i++) {
    float xf = (float)((int32_t)et_load_i(a, w.it.off[1]) - az);
    float zf = (float)((int32_t)et_load_i(b, w.it.off[2]) - bz);
    float q = zf != 0.0f ? xf / zf : 0.0f;
    float r = et_roundf(q * sc) + (float)oz;
    int64_t v = et_f32_to_i64(r);
    et_store_i(out, w.it.off[0], v < lo ? lo : v > hi ? hi : v);
    et_ew_next(&w);
  }
  return ET_OK;
}

/* minimum.out / maximum.out(Tensor self, Tensor other, *, Tensor(a!) out) */
static et_status minmax(et_kctx *ctx, et_value *const *args, uint32_t nargs, bool mx) {
  ET_CHECK_ARGS(3);
  et_ew w;
  et_tensor *a, *b, *out;
  et_status st = ew2(ctx, args, 0, 1, 2, &w, &a, &b, &out);
  if (st) return st;
  bool fl = et_dtype_is_float(out->dtype);
  for (size_t i = 0; i < w.n; i++) {
    if (fl) {
      float x = et_load_f(a, w.it.off[1]), z = et_load_f(b, w.it.off[2]);
      et_store_f(out, w.it.off[0], mx ? et_fmaxf_nan(x, z) : et_fminf_nan(x, z));
    } else {
      int64_t x = et_load_i(a, w.it.off[1]), z = et_load_i(b, w.it.off[2]);
      et_store_i(out, w.it.off[0], mx ? (x > z ? x : z) : (x < z ? x : z));
    }
    et_ew_next(&w);
  }
  return ET_OK;
}
ET_OP("cortex_m::minimum.out", k_cm_minimum_out) { return minmax(ctx, args, nargs, false); }
ET_OP("cortex_m::maximum.out", k_cm_maximum_out) { return minmax(ctx, args, nargs, true); }

/* quantized_activation.out(Tensor input, Tensor lut, *, Tensor(a!) out): out = lut[in + 128] */
ET_OP("cortex_m::quantized_activation.out", k_cm_quantized_activation_out) {
  ET_CHECK_ARGS(3);
  et_tensor *in, *lut, *out;
  ARG_TENSOR(0, in);
  ARG_TENSOR(1, lut);
  ARG_TENSOR(2, out);
  if (in->dtype != ET_CHAR || lut->dtype != ET_CHAR || out->dtype != ET_CHAR || et_numel(lut) != 256) BAD(1);
  et_status st = et_resize_like(out, in);
  if (st) { ctx->err_detail = 2; return st; }
  if (!et_same_layout(in, out)) { ctx->err_detail = 2; return ET_ERR_UNSUPPORTED; }
  const int8_t *x = (const int8_t *)in->data, *t = (const int8_t *)lut->data;
  int8_t *y = (int8_t *)out->data;
  int64_t n = et_numel(in);
  for (int64_t i = 0; i < n; i++) y[i] = t[(int32_t)x[i] + 128];
  return ET_OK;
}

/* ---------------------------------------------------------------- batch matmul */

/* quantized_batch_matmul.out(Tensor lhs, int lhs_zero_point, Tensor rhs_transposed, int rhs_zero_point,
 *   int output_zero_point, int output_multiplier, int output_shift, Tensor scratch, *, Tensor(a!) out)
 * The "zero points" of lhs / rhs are offsets added to the values (CMSIS-NN convention). */
ET_OP("cortex_m::quantized_batch_matmul.out", k_cm_quantized_batch_matmul_out) {
  ET_CHECK_ARGS(9);
  et_tensor *a, *bt, *out;
  ARG_TENSOR(0, a);
  ARG_TENSOR(2, bt);
  ARG_TENSOR(8, out);
  int32_t ao, bo, oz, om, os;
  ARG_INT(1, ao); ARG_INT(3, bo); ARG_INT(4, oz); ARG_INT(5, om); ARG_INT(6, os);
  if (a->ndim != 3 || bt->ndim != 3 || a->sizes[0] != bt->sizes[0] || a->sizes[2] != bt->sizes[2] ||
      a->dtype != ET_CHAR || bt->dtype != ET_CHAR || out->dtype != ET_CHAR) BAD(0);
  if (!et_is_contiguous(a) || !et_is_contiguous(bt)) { ctx->err_detail = 0; return ET_ERR_UNSUPPORTED; }
  int32_t B = a->sizes[0], M = a->sizes[1], K = a->sizes[2], N = bt->sizes[1];
  int32_t s3[3] = {B, M, N};
  et_status st = et_resize(out, 3, s3);
  if (st) { ctx->err_detail = 8; return st; }
  if (!et_is_contiguous(out)) { ctx->err_detail = 8; return ET_ERR_UNSUPPORTED; }
  const int8_t *x = (const int8_t *)a->data, *z = (const int8_t *)bt->data;
  int8_t *y = (int8_t *)out->data;
  for (int32_t b = 0; b < B; b++)
    for (int32_t m = 0; m < M; m++) {
      const int8_t *xr = x + ((ptrdiff_t)b * M + m) * K;
      int32_t xs = sum_s8(xr, K);
      for (int32_t n = 0; n < N; n++) {
        const int8_t *zr = z + ((ptrdiff_t)b * N + n) * K;
        int32_t acc = dot_s8(xr, zr, K) + bo * xs + ao * sum_s8(zr, K) + K * ao * bo;
        int32_t r = cm_requant(acc, om, os) + oz;
        y[((ptrdiff_t)b * M + m) * N + n] = (int8_t)clamp_i32(r, -128, 127);
      }
    }
  return ET_OK;
}

/* ---------------------------------------------------------------- pooling */

typedef struct {
  int32_t C, H, W, KH, KW, dh, dw, sh, sw, ph, pw, OH, OW, lo, hi;
  ptrdiff_t xsh, xsw, ysh, ysw;
} qpool_geo;

#ifdef CM_MVE
/* Max pool over one image whose channels are contiguous (NHWC), 16 channels per vector max, taps
 * clipped to the input once per output pixel; lo <= hi in int8. A window with no tap inside gives
 * the clamp of -129, as the scalar form (and the reference) does. */
CM_HOT static void qmaxpool_cl_mve(const qpool_geo *gp, const int8_t *x, int8_t *y) {
  const qpool_geo g = *gp;  /* a copy: int8 stores could alias *gp */
  const ptrdiff_t th = (ptrdiff_t)g.dh * g.xsh, tw = (ptrdiff_t)g.dw * g.xsw;
  const int8x16_t vlo = vdupq_n_s8((int8_t)g.lo), vhi = vdupq_n_s8((int8_t)g.hi);
  const int8_t empty = (int8_t)clamp_i32(-129, g.lo, g.hi);
  /* whole windows of up to 16 channels (the usual case): one list of tap offsets, no clipping */
  const int32_t T = g.KH * g.KW;
  ptrdiff_t toff[16];
  const bool listed = g.C <= 16 && T <= 16;
  for (int32_t t = 0; listed && t < T; t++) toff[t] = (t / g.KW) * th + (t % g.KW) * tw;
  const mve_pred16_t pall = vctp8q((uint32_t)(g.C < 16 ? g.C : 16));
  const int32_t wlast = (g.KW - 1) * g.dw;  /* offset of a window's last column */
  for (int32_t oh = 0; oh < g.OH; oh++) {
    const int32_t ih0 = oh * g.sh - g.ph;
    int32_t kh0, kh1;
    tap_range(ih0, g.KH, g.dh, g.H, &kh0, &kh1);
    const bool rows_in = listed && kh0 == 0 && kh1 == g.KH;
    int8_t *yp = y + oh * g.ysh;
    for (int32_t ow = 0, iw0 = -g.pw; ow < g.OW; ow++, iw0 += g.sw, yp += g.ysw) {
      if (rows_in && iw0 >= 0 && iw0 + wlast < g.W) {
        const int8_t *xp = x + (ptrdiff_t)ih0 * g.xsh + (ptrdiff_t)iw0 * g.xsw;
        int8x16_t m = vldrbq_z_s8(xp, pall);  /* tap 0 is at offset 0 */
        for (int32_t t = 1; t < T; t++) m = vmaxq_s8(m, vldrbq_z_s8(xp + toff[t], pall));
        vstrbq_p_s8(yp, vminq_s8(vmaxq_s8(m, vlo), vhi), pall);
        continue;
      }
      int32_t kw0, kw1;
      tap_range(iw0, g.KW, g.dw, g.W, &kw0, &kw1);
      /* the window origin may lie outside: the offsets below stay inside */
      const int8_t *xp = x + (ptrdiff_t)ih0 * g.xsh + (ptrdiff_t)iw0 * g.xsw;
      for (int32_t c0 = 0; c0 < g.C; c0 += 16) {
        const mve_pred16_t pc = vctp8q((uint32_t)(g.C - c0));
        if (kh0 == kh1 || kw0 == kw1) { vstrbq_p_s8(yp + c0, vdupq_n_s8(empty), pc); continue; }
        int8x16_t m = vdupq_n_s8(-128);
        for (int32_t kh = kh0; kh < kh1; kh++) {
          const int8_t *xr = xp + kh * th + c0;
          for (int32_t kw = kw0; kw < kw1; kw++) m = vmaxq_s8(m, vldrbq_z_s8(xr + kw * tw, pc));
        }
        vstrbq_p_s8(yp + c0, vminq_s8(vmaxq_s8(m, vlo), vhi), pc);
      }
    }
  }
}
#endif

/* quantized_max_pool2d.out(Tensor input, int[] kernel_size, int[] stride, int[] padding, int[] dilation,
 *   bool ceil_mode, int input_zero_point, int output_zero_point, int activation_min, int activation_max,
 *   *, Tensor(a!) out) */
static et_status qmaxpool(et_kctx *ctx, et_value *const *args, uint32_t nargs, bool nhwc) {
  ET_CHECK_ARGS(11);
  et_tensor *in, *out;
  ARG_TENSOR(0, in);
  ARG_TENSOR(10, out);
  int32_t k[2], s[2], p[2], d[2], lo, hi;
  if (!pair_arg(args[1], k)) BAD(1);
  if (!pair_arg(args[2], s)) BAD(2);
  if (!pair_arg(args[3], p)) BAD(3);
  if (!pair_arg(args[4], d)) BAD(4);
  ARG_INT(8, lo); ARG_INT(9, hi);
  if (args[5]->tag == ET_TAG_BOOL && args[5]->u.b) { ctx->err_detail = 5; return ET_ERR_UNSUPPORTED; }
  if (in->ndim != 4 || in->dtype != ET_CHAR || out->dtype != ET_CHAR) BAD(0);
  if (k[0] <= 0 || k[1] <= 0 || s[0] <= 0 || s[1] <= 0 || d[0] <= 0 || d[1] <= 0 || p[0] < 0 || p[1] < 0) BAD(1);
  g4 x, y;
  geo4(in, nhwc, &x);
  int32_t OH = conv_out(x.h, p[0], d[0], k[0], s[0]), OW = conv_out(x.w, p[1], d[1], k[1], s[1]);
  if (OH <= 0 || OW <= 0) BAD(0);
  et_status st = resize4(ctx, out, nhwc, x.n, x.c, OH, OW, 10);
  if (st) return st;
  geo4(out, nhwc, &y);
  const int8_t *xd = (const int8_t *)in->data;
  int8_t *yd = (int8_t *)out->data;
  /* locals: int8 stores may alias the arrays and structs, whose values would be reloaded per tap */
  const int32_t C = x.c, H = x.h, W = x.w, KH = k[0], KW = k[1], dh = d[0], dw = d[1];
  const int32_t sh = s[0], sw = s[1], ph = p[0], pw = p[1];
  const ptrdiff_t xsc = x.sc, ysc = y.sc, xsn = x.sn, xsh = x.sh, xsw = x.sw, ysn = y.sn, ysh = y.sh, ysw = y.sw;
  const ptrdiff_t th = (ptrdiff_t)dh * xsh, tw = (ptrdiff_t)dw * xsw;  /* between taps */
#ifdef CM_MVE
  /* channels contiguous in memory on both sides and an int8 activation range: 16 channels per max */
  if (xsc == 1 && ysc == 1 && lo >= -128 && hi <= 127 && lo <= hi) {
    const qpool_geo g = {C, H, W, KH, KW, dh, dw, sh, sw, ph, pw, OH, OW, lo, hi, xsh, xsw, ysh, ysw};
    for (int32_t n = 0; n < x.n; n++) qmaxpool_cl_mve(&g, xd + n * xsn, yd + n * ysn);
    return ET_OK;
  }
#endif
  for (int32_t n = 0; n < x.n; n++)
    for (int32_t oh = 0; oh < OH; oh++) {
      /* taps inside the input: kh in [kh0, kh1), kw in [kw0, kw1) */
      const int32_t ih0 = oh * sh - ph;
      int32_t kh0, kh1;
      tap_range(ih0, KH, dh, H, &kh0, &kh1);
      for (int32_t ow = 0; ow < OW; ow++) {
        const int32_t iw0 = ow * sw - pw;
        int32_t kw0, kw1;
        tap_range(iw0, KW, dw, W, &kw0, &kw1);
        /* the window origin may lie outside: the offsets below stay inside */
        const int8_t *xp = xd + n * xsn + (ptrdiff_t)ih0 * xsh + (ptrdiff_t)iw0 * xsw;
        int8_t *yp = yd + n * ysn + oh * ysh + ow * ysw;
        if (kh0 == kh1 || kw0 == kw1) {  /* no tap inside: the max of nothing, as the reference keeps it */
          for (int32_t c = 0; c < C; c++) yp[c * ysc] = (int8_t)clamp_i32(-129, lo, hi);
          continue;
        }
        for (int32_t c = 0; c < C; c++) {
          int32_t m = -128;
          for (int32_t kh = kh0; kh < kh1; kh++)
            for (int32_t kw = kw0; kw < kw1; kw++) {
              int32_t v = xp[c * xsc + kh * th + kw * tw];
              if (v > m) m = v;
            }
          yp[c * ysc] = (int8_t)clamp_i32(m, lo, hi);
        }
      }
    }
  return ET_OK;
}
ET_OP("cortex_m::quantized_max_pool2d.out", k_cm_quantized_max_pool2d_out) { return qmaxpool(ctx, args, nargs, false); }
ET_OP("cortex_m::quantized_max_pool2d_nhwc.out", k_cm_quantized_max_pool2d_nhwc_out) { return qmaxpool(ctx, args, nargs, true); }

/* quantized_avg_pool2d.out(Tensor input, int[] kernel_size, int[] stride, int[] padding, bool ceil_mode,
 *   int zero_point, int multiplier, int shift, Tensor scratch, *, Tensor(a!) out): the reference
 * dequantizes with scale = multiplier * 2^shift / 2^31, average-pools in float32
 * (count_include_pad=False) and quantizes back with round-half-even. */
static et_status qavgpool(et_kctx *ctx, et_value *const *args, uint32_t nargs, bool nhwc) {
  ET_CHECK_ARGS(10);
  et_tensor *in, *out;
  ARG_TENSOR(0, in);
  ARG_TENSOR(9, out);
  int32_t k[2], s[2], p[2], zp, mult, shift;
  if (!pair_arg(args[1], k)) BAD(1);
  if (!pair_arg(args[2], s)) BAD(2);
  if (!pair_arg(args[3], p)) BAD(3);
  bool ceil = args[4]->tag == ET_TAG_BOOL && args[4]->u.b;
  ARG_INT(5, zp); ARG_INT(6, mult); ARG_INT(7, shift);
  if (in->ndim != 4 || in->dtype != ET_CHAR || out->dtype != ET_CHAR) BAD(0);
  if (k[0] <= 0 || k[1] <= 0 || s[0] <= 0 || s[1] <= 0 || p[0] < 0 || p[1] < 0) BAD(1);
  g4 x, y;
  geo4(in, nhwc, &x);
  int32_t OH = et_pool_out_size(x.h, k[0], p[0], s[0], 1, ceil);
  int32_t OW = et_pool_out_size(x.w, k[1], p[1], s[1], 1, ceil);
  if (OH <= 0 || OW <= 0) BAD(0);
  et_status st = resize4(ctx, out, nhwc, x.n, x.c, OH, OW, 9);
  if (st) return st;
  geo4(out, nhwc, &y);
  const float scale = ldexp_f((float)mult, shift - 31);
  const float zf = (float)zp;
  const int8_t *xd = (const int8_t *)in->data;
  int8_t *yd = (int8_t *)out->data;
  for (int32_t n = 0; n < x.n; n++)
    for (int32_t oh = 0; oh < OH; oh++)
      for (int32_t ow = 0; ow < OW; ow++) {
        int32_t h0 = oh * s[0] - p[0], w0 = ow * s[1] - p[1];
        int32_t h1 = h0 + k[0], w1 = w0 + k[1];
        if (h0 < 0) h0 = 0;
        if (w0 < 0) w0 = 0;
        if (h1 > x.h) h1 = x.h;
        if (w1 > x.w) w1 = x.w;
        int32_t cnt = (h1 - h0) * (w1 - w0);
        for (int32_t c = 0; c < x.c; c++) {
          float sum = 0.0f;
          for (int32_t ih = h0; ih < h1; ih++)
            for (int32_t iw = w0; iw < w1; iw++)
              sum += ((float)xd[n * x.sn + c * x.sc + ih * x.sh + iw * x.sw] - zf) * scale;
          float avg = cnt > 0 ? sum / (float)cnt : 0.0f;
          float q = et_roundf(avg / scale) + zf;
          int64_t v = et_f32_to_i64(q);
          yd[n * y.sn + c * y.sc + oh * y.sh + ow * y.sw] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
        }
      }
  return ET_OK;
}
ET_OP("cortex_m::quantized_avg_pool2d.out", k_cm_quantized_avg_pool2d_out) { return qavgpool(ctx, args, nargs, false); }
ET_OP("cortex_m::quantized_avg_pool2d_nhwc.out", k_cm_quantized_avg_pool2d_nhwc_out) { return qavgpool(ctx, args, nargs, true); }

/* ---------------------------------------------------------------- softmax */

/* softmax.out(Tensor input, int dim, int input_zero_point, int output_zero_point, int input_multiplier,
 *   int input_shift, int diff_min, *, Tensor(a!) out): the reference's float path:
 * x = (q - zp) * (mult * 2^shift / 2^31 / 2^26), p = softmax(x), out = rint(p * 256) + out_zp. */
ET_OP("cortex_m::softmax.out", k_cm_softmax_out) {
  ET_CHECK_ARGS(8);
  et_tensor *in, *out;
  ARG_TENSOR(0, in);
  ARG_TENSOR(7, out);
  int32_t dimv, izp, ozp, mult, shift;
  ARG_INT(1, dimv); ARG_INT(2, izp); ARG_INT(3, ozp); ARG_INT(4, mult); ARG_INT(5, shift);
  if (in->dtype != ET_CHAR || out->dtype != ET_CHAR) BAD(0);
  int32_t dim = et_wrap_dim(dimv, in->ndim);
  if (dim < 0) BAD(1);
  et_status st = et_resize_like(out, in);
  if (st) { ctx->err_detail = 7; return st; }
  const float scale = ldexp_f((float)mult, shift - 31 - 26);
  ptrdiff_t s2[2][ET_MAX_DIMS];
  et_tensor_strides(out, s2[0]);
  et_tensor_strides(in, s2[1]);
  int32_t lane_sizes[ET_MAX_DIMS];
  for (uint32_t d = 0; d < in->ndim; d++) lane_sizes[d] = in->sizes[d];
  int32_t len = in->ndim ? in->sizes[dim] : 1;
  ptrdiff_t so = in->ndim ? s2[0][dim] : 1, si = in->ndim ? s2[1][dim] : 1;
  if (in->ndim) lane_sizes[dim] = 1;
  if (len <= 0) return ET_OK;
  int64_t lanes = et_numel(in) / len;
  const int8_t *x = (const int8_t *)in->data;
  int8_t *y = (int8_t *)out->data;
  et_idx it;
  et_idx_init(&it, in->ndim, lane_sizes);
  for (int64_t l = 0; l < lanes; l++) {
    const int8_t *xl = x + it.off[1];
    int8_t *yl = y + it.off[0];
    float m = -ET_INFINITY;
    for (int32_t k = 0; k < len; k++) {
      float v = (float)((int32_t)xl[k * si] - izp) * scale;
      if (v > m) m = v;
    }
    float sum = 0.0f;
    for (int32_t k = 0; k < len; k++) sum += et_expf((float)((int32_t)xl[k * si] - izp) * scale - m);
    float rs = 1.0f / sum;
    for (int32_t k = 0; k < len; k++) {
      float pr = et_expf((float)((int32_t)xl[k * si] - izp) * scale - m) * rs;
      int64_t v = et_f32_to_i64(et_roundf(pr * 256.0f) + (float)ozp);
      yl[k * so] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
    }
    et_idx_next(&it, 2, s2);
  }
  return ET_OK;
}

/* ---------------------------------------------------------------- layout ops */

/* transpose.out(Tensor input, int[] perm, *, Tensor(a!) out): out = input.permute(perm) */
ET_OP("cortex_m::transpose.out", k_cm_transpose_out) {
  ET_CHECK_ARGS(3);
  et_tensor *in, *out;
  ARG_TENSOR(0, in);
  ARG_TENSOR(2, out);
  uint32_t np;
  const int64_t *perm = et_int_list(args[1], &np);
  if (!perm || np != in->ndim || out->dtype != in->dtype) BAD(1);
  int32_t os[ET_MAX_DIMS];
  ptrdiff_t ist[ET_MAX_DIMS], src[ET_MAX_DIMS], dst[ET_MAX_DIMS];
  et_tensor_strides(in, ist);
  uint32_t seen = 0;
  for (uint32_t j = 0; j < np; j++) {
    int32_t pj = et_wrap_dim(perm[j], in->ndim);
    if (pj < 0 || (seen & (1u << pj))) BAD(1);
    seen |= 1u << pj;
    os[j] = in->sizes[pj];
    src[j] = ist[pj];
  }
  et_status st = et_resize(out, np, os);
  if (st) { ctx->err_detail = 2; return st; }
  et_tensor_strides(out, dst);
  if (et_numel(out) == 0) return ET_OK;
  et_strided_copy(out, 0, dst, in, 0, src, np, out->sizes);
  return ET_OK;
}

/* pad.out(Tensor input, int[] pre_pad, int[] post_pad, int pad_value, *, Tensor(a!) out): pads are
 * 4 entries for the dims of a rank-4 view (right-aligned); for channels-last inputs they are in
 * NHWC (physical) order. */
ET_OP("cortex_m::pad.out", k_cm_pad_out) {
  ET_CHECK_ARGS(5);
  et_tensor *in, *out;
  ARG_TENSOR(0, in);
  ARG_TENSOR(4, out);
  uint32_t n1, n2;
  const int64_t *pre = et_int_list(args[1], &n1), *post = et_int_list(args[2], &n2);
  int32_t val;
  ARG_INT(3, val);
  uint32_t r = in->ndim;
  if (!pre || !post || n1 != 4 || n2 != 4 || r > 4 || r < 1 || out->dtype != in->dtype) BAD(1);
  bool cl = false;
  if (r == 4) {
    if (in->sizes[1] == 1 || (in->sizes[2] == 1 && in->sizes[3] == 1)) cl = true;
    else if (in->dim_order && in->dim_order[0] == 0 && in->dim_order[1] == 2) cl = true;
  }
  static const uint8_t inv_nhwc[4] = {0, 3, 1, 2};
  int32_t lp[4], lq[4];
  for (uint32_t i = 0; i < 4; i++) {
    lp[i] = (int32_t)(cl ? pre[inv_nhwc[i]] : pre[i]);
    lq[i] = (int32_t)(cl ? post[inv_nhwc[i]] : post[i]);
  }
  uint32_t off = 4 - r;
  int32_t os[4];
  for (uint32_t d = 0; d < r; d++) {
    if (lp[off + d] < 0 || lq[off + d] < 0) BAD(1);
    os[d] = in->sizes[d] + lp[off + d] + lq[off + d];
  }
  et_status st = et_resize(out, r, os);
  if (st) { ctx->err_detail = 4; return st; }
  int64_t total = et_numel(out);
  if (et_dtype_is_float(out->dtype)) for (int64_t i = 0; i < total; i++) et_store_f(out, i, (float)val);
  else if (out->dtype == ET_CHAR) { int8_t *y = (int8_t *)out->data; for (int64_t i = 0; i < total; i++) y[i] = (int8_t)val; }
  else for (int64_t i = 0; i < total; i++) et_store_i(out, i, val);
  ptrdiff_t ist[ET_MAX_DIMS], ost[ET_MAX_DIMS];
  et_tensor_strides(in, ist);
  et_tensor_strides(out, ost);
  ptrdiff_t base = 0;
  for (uint32_t d = 0; d < r; d++) base += lp[off + d] * ost[d];
  if (et_numel(in) > 0) et_strided_copy(out, base, ost, in, 0, ist, r, in->sizes);
  return ET_OK;
}
