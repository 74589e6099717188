/* Activations and clamps: relu, hardtanh, sigmoid, tanh, gelu, hardswish, hardsigmoid,
 * leaky_relu, silu, clamp (scalar and tensor bounds). */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#include <arm_mve.h>
/* v = c where a > b (lane by lane; false for NaN, which then stays), as one VPT block */
#define ACT_SET_IF_GT(v, c, a, b) \
  __asm__("vpt.f32 gt, %q[A], %q[B]\n\tvmovt %q[V], %q[C]" : [V] "+w"(v) : [A] "w"(a), [B] "w"(b), [C] "w"(c))
#endif

enum { A_RELU, A_CLAMP, A_SIGMOID, A_TANH, A_GELU, A_GELU_TANH, A_HARDSWISH, A_HARDSIGMOID,
       A_LEAKY, A_SILU };

typedef struct { float lo, hi; bool has_lo, has_hi; } aparams;

#define SQRT1_2 0.707106781186547524f
#define SQRT_2_PI 0.797884560802865356f

static inline float clampf(float v, const aparams *p) {
  if (p->has_lo && v < p->lo) v = p->lo;
  if (p->has_hi && v > p->hi) v = p->hi;
  return v;  /* NaN stays NaN */
}

static inline float fapply(int op, float v, const aparams *p) {
  switch (op) {
    case A_RELU: return v < 0.0f ? 0.0f : v;
    case A_CLAMP: return clampf(v, p);
    case A_SIGMOID: return et_sigmoidf(v);
    case A_TANH: return et_tanhf(v);
    case A_GELU: return 0.5f * v * (1.0f + et_erff(v * SQRT1_2));
    case A_GELU_TANH: {
      float inner = SQRT_2_PI * (v + 0.044715f * v * v * v);
      return 0.5f * v * (1.0f + et_tanhf(inner));
    }
    case A_HARDSWISH: { float t = v + 3.0f; t = t < 0.0f ? 0.0f : t > 6.0f ? 6.0f : t; return v * t / 6.0f; }
    case A_HARDSIGMOID: { float t = v + 3.0f; t = t < 0.0f ? 0.0f : t > 6.0f ? 6.0f : t; return t / 6.0f; }
    case A_LEAKY: return v > 0.0f ? v : v * p->lo;
    case A_SILU: return v * et_sigmoidf(v);
    default: return v;
  }
}

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
/* sigmoid (silu: times x) of groups of four with every |x| <= 87, on four lanes: e = e^-|x| by et_expf's
 * steps (k = v * log2e rounded half away from zero, r = (v - k ln2_hi) - k ln2_lo, 1 + the degree-8
 * Taylor polynomial, times 2^k through the exponent bits: k >= -126), then 1 / (1 + e) by Newton's
 * iteration from the exponent-trick estimate (three steps: within an ulp or two of the division, as
 * float results are compared), times e where x < 0 (et_sigmoidf's e / (1 + e)). The constants ride as
 * scalar operands (vector-by-scalar multiply-adds), so that the loop keeps every vector in a register.
 * Other groups (NaN, large |x|) go through fapply. Returns the elements done (a multiple of 4). */
static size_t sigmoid_mve(const float *x, float *o, size_t n, bool silu) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t xv = vld1q_f32(x + i), v = vnegq_f32(vabsq_f32(xv));
    if (vcmpgeq_n_f32(v, -87.0f) != 0xFFFF) {   /* false for NaN too */
      for (size_t l = 0; l < 4; l++) o[i + l] = fapply(silu ? A_SILU : A_SIGMOID, x[i + l], NULL);
      continue;
    }
    const int32x4_t k = vcvtaq_s32_f32(vmulq_n_f32(v, 1.44269504088896341f));
    const float32x4_t kf = vcvtq_f32_s32(k);
    const float32x4_t r = vfmaq_n_f32(vfmaq_n_f32(v, kf, -0.693145751953125f), kf, -1.42860682030941723e-06f);
    float32x4_t q = vfmasq_n_f32(vdupq_n_f32(1.0f / 40320.0f), r, 1.0f / 5040.0f);
    q = vfmasq_n_f32(q, r, 1.0f / 720.0f);
    q = vfmasq_n_f32(q, r, 1.0f / 120.0f);
    q = vfmasq_n_f32(q, r, 1.0f / 24.0f);
    q = vfmasq_n_f32(q, r, 1.0f / 6.0f);
    q = vfmasq_n_f32(q, r, 0.5f);
    const float32x4_t em = vfmaq_f32(r, vmulq_f32(r, r), q);
    const float32x4_t p2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_n_s32(k, 127), 23));
    const float32x4_t e = vfmaq_f32(p2, em, p2), d = vaddq_n_f32(e, 1.0f), nd = vnegq_f32(d); /* d in [1, 2] */
    float32x4_t y = vreinterpretq_f32_s32(vnegq_s32(vsubq_n_s32(vreinterpretq_s32_f32(d), 0x7EF311C7)));
    y = vmulq_f32(y, vfmasq_n_f32(nd, y, 2.0f));
    y = vmulq_f32(y, vfmasq_n_f32(nd, y, 2.0f));
    y = vmulq_f32(y, vfmasq_n_f32(nd, y, 2.0f));
    y = vmulq_m_f32(y, e, y, vcmpltq_n_f32(xv, 0.0f));
    vst1q_f32(o + i, silu ? vmulq_f32(xv, y) : y);
  }
  return i;
}
#endif

/* flat float32 loops (kept out of line so relu/clamp vectorise) */
__attribute__((noinline)) static void f32_loop(int op, const float *x, float *o, size_t n, const aparams *p) {
  switch (op) {
    case A_RELU: {
      size_t i = 0;
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
      /* v < 0 ? 0 : v on four lanes, NaN and -0.0 passing through as in fapply: the test is 0 > v,
       * false when unordered (MVE's "lt" on floats is true for NaN) */
      const float32x4_t z = vdupq_n_f32(0.0f);
      for (; i + 4 <= n; i += 4) {
        float32x4_t v = vld1q_f32(x + i);
        ACT_SET_IF_GT(v, z, z, v); /* GCC 12 moves each vcmp's predicate through a core register */
        vst1q_f32(o + i, v);
      }
#endif
      for (; i < n; i++) o[i] = fapply(A_RELU, x[i], p);
      break;
    }
    case A_CLAMP: {
      aparams q = *p;
      size_t i = 0;
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
      /* v < lo -> lo, v > hi -> hi on four lanes; both tests false for NaN, which passes through */
      const float32x4_t lo = vdupq_n_f32(q.lo), hi = vdupq_n_f32(q.hi);
      if (q.has_lo && q.has_hi) /* hardtanh, relu6: both bounds, no tests in the loop */
        for (; i + 4 <= n; i += 4) {
          float32x4_t v = vld1q_f32(x + i);
          ACT_SET_IF_GT(v, lo, lo, v);
          ACT_SET_IF_GT(v, hi, v, hi);
          vst1q_f32(o + i, v);
        }
      else if (q.has_lo) /* one bound: a loop each, no test inside */
        for (; i + 4 <= n; i += 4) {
          float32x4_t v = vld1q_f32(x + i);
          ACT_SET_IF_GT(v, lo, lo, v);
          vst1q_f32(o + i, v);
        }
      else
        for (; i + 4 <= n; i += 4) {
          float32x4_t v = vld1q_f32(x + i);
          ACT_SET_IF_GT(v, hi, v, hi);
          vst1q_f32(o + i, v);
        }
#endif
      for (; i < n; i++) o[i] = fapply(A_CLAMP, x[i], &q);
      break;
    }
    case A_SIGMOID:
    case A_SILU: {
      size_t i = 0;
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
      i = sigmoid_mve(x, o, n, op == A_SILU);
#endif
      for (; i < n; i++) o[i] = fapply(op, x[i], p);
      break;
    }
    default: for (size_t i = 0; i < n; i++) o[i] = fapply(op, x[i], p); break;
  }
}

static et_status run_act(et_kctx *ctx, et_value *const *args, uint32_t nargs, uint32_t oi, int op,
                         const aparams *p, int64_t ilo, int64_t ihi) {
  et_tensor *in, *out;
  et_status st = et_unary_prep(ctx, args, nargs, oi, &in, &out);
  if (st != ET_OK) return st;
  size_t n = (size_t)et_numel(in);
  if (in->dtype == ET_FLOAT && out->dtype == ET_FLOAT && et_same_layout(in, out)) {
    f32_loop(op, (const float *)in->data, (float *)out->data, n, p);
    return ET_OK;
  }
  bool int_op = (op == A_RELU || op == A_CLAMP);
  bool use_f = et_dtype_is_float(out->dtype) || !int_op;
  if (!et_dtype_is_float(out->dtype) && !int_op) { ctx->err_detail = oi; return ET_ERR_INVALID_ARGUMENT; }
  et_ew w;
  if ((st = et_ew_prepare(&w, out, &in, 1, false)) != ET_OK) { ctx->err_detail = oi; return st; }
  for (size_t i = 0; i < w.n; i++) {
    if (use_f) {
      et_store_f(out, w.it.off[0], fapply(op, et_load_f(in, w.it.off[1]), p));
    } else {
      int64_t v = et_load_i(in, w.it.off[1]);
      if (op == A_RELU) v = v < 0 ? 0 : v;
      else { if (p->has_lo && v < ilo) v = ilo; if (p->has_hi && v > ihi) v = ihi; }
      et_store_i(out, w.it.off[0], v);
    }
    et_ew_next(&w);
  }
  return ET_OK;
}

static const aparams NOP = {0.0f, 0.0f, false, false};

ET_OP("aten::relu.out", k_aten_relu_out) { return run_act(ctx, args, nargs, 1, A_RELU, &NOP, 0, 0); }
ET_OP("aten::sigmoid.out", k_aten_sigmoid_out) { return run_act(ctx, args, nargs, 1, A_SIGMOID, &NOP, 0, 0); }
ET_OP("aten::tanh.out", k_aten_tanh_out) { return run_act(ctx, args, nargs, 1, A_TANH, &NOP, 0, 0); }
ET_OP("aten::hardswish.out", k_aten_hardswish_out) { return run_act(ctx, args, nargs, 1, A_HARDSWISH, &NOP, 0, 0); }
ET_OP("aten::hardsigmoid.out", k_aten_hardsigmoid_out) { return run_act(ctx, args, nargs, 1, A_HARDSIGMOID, &NOP, 0, 0); }
ET_OP("aten::silu.out", k_aten_silu_out) { return run_act(ctx, args, nargs, 1, A_SILU, &NOP, 0, 0); }

/* gelu.out(self, approximate="none"|"tanh", out) */
ET_OP("aten::gelu.out", k_aten_gelu_out) {
  ET_CHECK_ARGS(3);
  int op;
  if (et_is_none(args[1]) || et_string_is(args[1], "none")) op = A_GELU;
  else if (et_string_is(args[1], "tanh")) op = A_GELU_TANH;
  else { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  return run_act(ctx, args, nargs, 2, op, &NOP, 0, 0);
}

/* leaky_relu.out(self, negative_slope=0.01, out) */
ET_OP("aten::leaky_relu.out", k_aten_leaky_relu_out) {
  ET_CHECK_ARGS(3);
  aparams p = {0.01f, 0.0f, false, false};
  if (!et_is_none(args[1])) p.lo = et_value_as_float(args[1]);
  return run_act(ctx, args, nargs, 2, A_LEAKY, &p, 0, 0);
}

/* hardtanh.out(self, min_val=-1, max_val=1, out) */
ET_OP("aten::hardtanh.out", k_aten_hardtanh_out) {
  ET_CHECK_ARGS(4);
  aparams p = {-1.0f, 1.0f, true, true};
  int64_t ilo = -1, ihi = 1;
  if (!et_is_none(args[1])) { p.lo = et_value_as_float(args[1]); ilo = et_value_as_int(args[1]); }
  if (!et_is_none(args[2])) { p.hi = et_value_as_float(args[2]); ihi = et_value_as_int(args[2]); }
  return run_act(ctx, args, nargs, 3, A_CLAMP, &p, ilo, ihi);
}

/* clamp.out(self, Scalar? min, Scalar? max, out) */
ET_OP("aten::clamp.out", k_aten_clamp_out) {
  ET_CHECK_ARGS(4);
  aparams p = {0.0f, 0.0f, !et_is_none(args[1]), !et_is_none(args[2])};
  int64_t ilo = 0, ihi = 0;
  if (!p.has_lo && !p.has_hi) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (p.has_lo) {
    p.lo = et_value_as_float(args[1]);
    /* integer tensor with a fractional bound: bound rounds toward the kept range */
    ilo = et_value_is_floating(args[1]) ? et_f32_to_i64(et_ceilf(p.lo)) : et_value_as_int(args[1]);
  }
  if (p.has_hi) {
    p.hi = et_value_as_float(args[2]);
    ihi = et_value_is_floating(args[2]) ? et_f32_to_i64(et_floorf(p.hi)) : et_value_as_int(args[2]);
  }
  return run_act(ctx, args, nargs, 3, A_CLAMP, &p, ilo, ihi);
}

/* clamp.Tensor_out(self, Tensor? min, Tensor? max, out) */
ET_OP("aten::clamp.Tensor_out", k_aten_clamp_tensor_out) {
  ET_CHECK_ARGS(4);
  et_tensor *x, *lo = 0, *hi = 0, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &x)) != ET_OK) return st;
  if (!et_is_none(args[1]) && (st = et_arg_tensor(ctx, args, 1, &lo)) != ET_OK) return st;
  if (!et_is_none(args[2]) && (st = et_arg_tensor(ctx, args, 2, &hi)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 3, &out)) != ET_OK) return st;
  et_tensor *ins[3];
  uint32_t nin = 0;
  ins[nin++] = x;
  uint32_t ilo = 0, ihi = 0;
  if (lo) { ilo = nin + 1; ins[nin++] = lo; }
  if (hi) { ihi = nin + 1; ins[nin++] = hi; }
  et_ew w;
  if ((st = et_ew_prepare(&w, out, ins, nin, true)) != ET_OK) { ctx->err_detail = 3; return st; }
  bool use_f = et_dtype_is_float(out->dtype);
  for (size_t i = 0; i < w.n; i++) {
    if (use_f) {
      float v = et_load_f(x, w.it.off[1]);
      if (v == v) {
        if (lo) { float l = et_load_f(lo, w.it.off[ilo]); if (v < l || l != l) v = l; }
        if (hi) { float h = et_load_f(hi, w.it.off[ihi]); if (v > h || h != h) v = h; }
      }
      et_store_f(out, w.it.off[0], v);
    } else {
      int64_t v = et_load_i(x, w.it.off[1]);
      if (lo) { int64_t l = et_load_i(lo, w.it.off[ilo]); if (v < l) v = l; }
      if (hi) { int64_t h = et_load_i(hi, w.it.off[ihi]); if (v > h) v = h; }
      et_store_i(out, w.it.off[0], v);
    }
    et_ew_next(&w);
  }
  return ET_OK;
}
