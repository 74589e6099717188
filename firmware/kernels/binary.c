/* Binary elementwise kernels: arithmetic, comparisons, where. Broadcasting and mixed dtypes go
 * through the generic walker (float32 or int64 compute, chosen from the output / input dtypes);
 * float32 contiguous operands of the same shape (or a one-element operand) take tight loops. */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#include <arm_mve.h>
#define BIN_MVE 1
#endif

enum {
  OP_ADD, OP_SUB, OP_RSUB, OP_MUL, OP_DIV, OP_DIV_TRUNC, OP_DIV_FLOOR, OP_MIN, OP_MAX, OP_POW,
  OP_REM, OP_FMOD,
  OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, /* comparisons: bool out */
  OP_AND, OP_OR, OP_XOR,                    /* logical: bool out */
};

static inline bool is_cmp(int op) { return op >= OP_EQ && op <= OP_GE; }
static inline bool is_logical(int op) { return op >= OP_AND; }

static float floor_div_f(float a, float b) {
  /* division by zero: +-inf, and 0/0 -> +inf as executorch's portable kernel gives */
  if (b == 0.0f) return (a == 0.0f) ? ET_INFINITY : a / b;
  float m = et_fmodf(a, b);
  float d = (a - m) / b;
  if (m != 0.0f && ((b < 0.0f) != (m < 0.0f))) d -= 1.0f;
  if (d == 0.0f) return et_copysignf(0.0f, a / b);
  float f = et_floorf(d);
  if (d - f > 0.5f) f += 1.0f;
  return f;
}

static inline float fop(int op, float a, float b, float alpha) {
  switch (op) {
    case OP_ADD: return a + alpha * b;
    case OP_SUB: return a - alpha * b;
    case OP_RSUB: return b - alpha * a;
    case OP_MUL: return a * b;
    case OP_DIV: return a / b;
    case OP_DIV_TRUNC: return et_truncf(a / b);
    case OP_DIV_FLOOR: return floor_div_f(a, b);
    case OP_MIN: return et_fminf_nan(a, b);
    case OP_MAX: return et_fmaxf_nan(a, b);
    case OP_POW: return et_powf(a, b);
    case OP_FMOD: return et_fmodf(a, b);
    case OP_REM: {
      float r = et_fmodf(a, b);
      if (r != 0.0f && ((r < 0.0f) != (b < 0.0f))) r += b;
      return r;
    }
    case OP_EQ: return a == b;
    case OP_NE: return a != b;
    case OP_LT: return a < b;
    case OP_LE: return a <= b;
    case OP_GT: return a > b;
    case OP_GE: return a >= b;
    default: return 0.0f;
  }
}

/* Integer op; *err set on division by zero or a negative power. Wrapping arithmetic. */
static inline int64_t iop(int op, int64_t a, int64_t b, int64_t alpha, bool *err) {
  switch (op) {
    case OP_ADD: return (int64_t)((uint64_t)a + (uint64_t)alpha * (uint64_t)b);
    case OP_SUB: return (int64_t)((uint64_t)a - (uint64_t)alpha * (uint64_t)b);
    case OP_RSUB: return (int64_t)((uint64_t)b - (uint64_t)alpha * (uint64_t)a);
    case OP_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case OP_DIV_TRUNC: case OP_DIV_FLOOR: case OP_REM: case OP_FMOD: {
      if (b == 0) { *err = true; return 0; }
      if (b == -1) return (op == OP_REM || op == OP_FMOD) ? 0 : (int64_t)(0 - (uint64_t)a);
      int64_t q = a / b, r = a % b;
      if (op == OP_FMOD) return r;
      if (op == OP_REM) return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
      if (op == OP_DIV_FLOOR && r != 0 && ((a < 0) != (b < 0))) q--;
      return q;
    }
    case OP_MIN: return a < b ? a : b;
    case OP_MAX: return a > b ? a : b;
    case OP_POW: {
      if (b < 0) { if (a == 1) return 1; if (a == -1) return (b & 1) ? -1 : 1; *err = true; return 0; }
      uint64_t r = 1, x = (uint64_t)a;
      while (b) { if (b & 1) r *= x; x *= x; b >>= 1; }
      return (int64_t)r;
    }
    case OP_EQ: return a == b;
    case OP_NE: return a != b;
    case OP_LT: return a < b;
    case OP_LE: return a <= b;
    case OP_GT: return a > b;
    case OP_GE: return a >= b;
    case OP_AND: return (a != 0) && (b != 0);
    case OP_OR: return (a != 0) || (b != 0);
    case OP_XOR: return (a != 0) != (b != 0);
    default: return 0;
  }
}

/* ---------------------------------------------------------------- float32 runs */

/* o[i] = x op y over n floats; MODE 0: both operands runs, 1: y one value, 2: x one value. Helium: add / sub / mul
 * (alpha 1) on four lanes, the tail predicated (the same single rounding as the scalar forms). */
#ifdef BIN_MVE
static inline __attribute__((always_inline)) void run_mve(int OP, int MODE, const float *x, const float *y, float *o,
                                                          size_t n) {
  const float32x4_t xs = vdupq_n_f32(x[0]), ys = vdupq_n_f32(y[0]);
#define BIN_V(p, q) (OP == OP_ADD ? vaddq_f32((p), (q)) : OP == OP_SUB ? vsubq_f32((p), (q)) : vmulq_f32((p), (q)))
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t p = MODE == 2 ? xs : vld1q_f32(x + i), q = MODE == 1 ? ys : vld1q_f32(y + i);
    vst1q_f32(o + i, BIN_V(p, q));
  }
  if (i < n) {
    const mve_pred16_t pr = vctp32q((uint32_t)(n - i));
    const float32x4_t p = MODE == 2 ? xs : vld1q_z_f32(x + i, pr), q = MODE == 1 ? ys : vld1q_z_f32(y + i, pr);
    vst1q_p_f32(o + i, BIN_V(p, q), pr);
  }
#undef BIN_V
}
#define RUN_FN(OP, MODE) \
  static __attribute__((noinline)) void run_##OP##_##MODE(const float *x, const float *y, float *o, size_t n) { \
    run_mve(OP, MODE, x, y, o, n);                                                                                  \
  }
RUN_FN(OP_ADD, 0) RUN_FN(OP_ADD, 1) RUN_FN(OP_ADD, 2) RUN_FN(OP_SUB, 0) RUN_FN(OP_SUB, 1) RUN_FN(OP_SUB, 2)
RUN_FN(OP_MUL, 0) RUN_FN(OP_MUL, 1) RUN_FN(OP_MUL, 2)
#undef RUN_FN
typedef void (*run_fn)(const float *, const float *, float *, size_t);
static const run_fn run_fns[3][3] = {{run_OP_ADD_0, run_OP_ADD_1, run_OP_ADD_2},
                                     {run_OP_SUB_0, run_OP_SUB_1, run_OP_SUB_2},
                                     {run_OP_MUL_0, run_OP_MUL_1, run_OP_MUL_2}};
#endif

/* the scalar forms (any target), one loop per op and mode */
static __attribute__((noinline)) void run_scalar(int op, int mode, const float *x, const float *y, float *o, size_t n,
                                                 float alpha) {
#define LOOP(EXPR) do { \
    if (mode == 0) { for (size_t i = 0; i < n; i++) { float p = x[i], q = y[i]; o[i] = (EXPR); } } \
    else if (mode == 1) { float q = y[0]; for (size_t i = 0; i < n; i++) { float p = x[i]; o[i] = (EXPR); } } \
    else { float p = x[0]; for (size_t i = 0; i < n; i++) { float q = y[i]; o[i] = (EXPR); } } \
  } while (0)
  switch (op) {
    case OP_ADD: if (alpha == 1.0f) LOOP(p + q); else LOOP(p + alpha * q); break;
    case OP_SUB: if (alpha == 1.0f) LOOP(p - q); else LOOP(p - alpha * q); break;
    case OP_MUL: LOOP(p * q); break;
    case OP_DIV: LOOP(p / q); break;
    case OP_MIN: LOOP(et_fminf_nan(p, q)); break;
    case OP_MAX: LOOP(et_fmaxf_nan(p, q)); break;
    default: break;
  }
#undef LOOP
}

/* float32 add / sub / rsub / mul / div / minimum / maximum, broadcasting and any dim orders: the dims in the
 * output's memory order, size-1 dims dropped, neighbours merged where every operand steps evenly across both;
 * the innermost run (output contiguous, each operand contiguous or one value: same shapes, scalars, per-channel
 * scales of either layout) in tight loops, the outer dims by counters. false: not such a problem (the walker). */
__attribute__((noinline)) static bool fast_f32(int op, const et_tensor *a, const et_tensor *b, et_tensor *out, float alpha) {
  if (a->dtype != ET_FLOAT || b->dtype != ET_FLOAT || out->dtype != ET_FLOAT) return false;
  if (op == OP_RSUB) {  /* b - alpha * a */
    const et_tensor *t = a; a = b; b = t;
    op = OP_SUB;
  }
  if (op != OP_ADD && op != OP_SUB && op != OP_MUL && op != OP_DIV && op != OP_MIN && op != OP_MAX) return false;
  const uint32_t nd = out->ndim;
  if (a->ndim > nd || b->ndim > nd) return false;
  size_t n = (size_t)et_numel(out);
  if (n == 0) return true;
  ptrdiff_t so[ET_MAX_DIMS], sa[ET_MAX_DIMS], sb[ET_MAX_DIMS];
  et_tensor_strides(out, so);
  et_bcast_strides(a, nd, out->sizes, sa);
  et_bcast_strides(b, nd, out->sizes, sb);
  /* kept dims, outermost first in the output's memory order, merged */
  int32_t sz[ET_MAX_DIMS];
  ptrdiff_t to[ET_MAX_DIMS], ta[ET_MAX_DIMS], tb[ET_MAX_DIMS];
  uint32_t k = 0;
  for (uint32_t j = 0; j < nd; j++) {
    const uint32_t d = out->dim_order && !et_is_contiguous(out) ? out->dim_order[j] : j;
    if (d >= nd) return false;
    const int32_t s = out->sizes[d];
    if (s == 1) continue;
    if (k && to[k - 1] == so[d] * s && ta[k - 1] == sa[d] * s && tb[k - 1] == sb[d] * s) {
      sz[k - 1] *= s; to[k - 1] = so[d]; ta[k - 1] = sa[d]; tb[k - 1] = sb[d];
      continue;
    }
    sz[k] = s; to[k] = so[d]; ta[k] = sa[d]; tb[k] = sb[d];
    k++;
  }
  if (k == 0) { sz[0] = 1; to[0] = 1; ta[0] = tb[0] = 0; k = 1; }
  const uint32_t in = k - 1;
  if (to[in] != 1 || (ta[in] != 0 && ta[in] != 1) || (tb[in] != 0 && tb[in] != 1)) return false;
  int mode = ta[in] && tb[in] ? 0 : tb[in] == 0 && ta[in] ? 1 : ta[in] == 0 && tb[in] ? 2 : -1;
  if (mode < 0) { /* both one value along the run: as a run of one value (n == 1) or not ours */
    if (sz[in] != 1) return false;
    mode = 0;
  }
  const float *x = (const float *)a->data, *y = (const float *)b->data;
  float *o = (float *)out->data;
  const size_t len = (size_t)sz[in], outer = n / len;
  int32_t cnt[ET_MAX_DIMS] = {0};
  ptrdiff_t xo = 0, yo = 0, oo = 0;
#ifdef BIN_MVE
  const run_fn fn = (op == OP_ADD || op == OP_SUB || op == OP_MUL) && alpha == 1.0f
                        ? run_fns[op == OP_ADD ? 0 : op == OP_SUB ? 1 : 2][mode] : NULL;
#endif
  for (size_t r = 0; r < outer; r++) {
#ifdef BIN_MVE
    if (fn) fn(x + xo, y + yo, o + oo, len);
    else
#endif
      run_scalar(op, mode, x + xo, y + yo, o + oo, len, alpha);
    for (uint32_t d = in; d-- > 0;) { /* the next run */
      xo += ta[d]; yo += tb[d]; oo += to[d];
      if (++cnt[d] < sz[d]) break;
      cnt[d] = 0;
      xo -= ta[d] * sz[d]; yo -= tb[d] * sz[d]; oo -= to[d] * sz[d];
    }
  }
  return true;
}

static et_status binary_run(et_kctx *ctx, int op, et_tensor *a, et_tensor *b, et_tensor *out,
                            const et_value *alpha_v, uint32_t out_idx) {
  et_tensor *ins[2] = {a, b};
  et_ew w;
  et_status st = et_ew_prepare(&w, out, ins, 2, true);
  if (st != ET_OK) { ctx->err_detail = out_idx; return st; }
  bool fa = et_dtype_is_float(a->dtype), fb = et_dtype_is_float(b->dtype);
  bool use_f;
  if (is_cmp(op)) use_f = fa || fb;
  else if (is_logical(op)) use_f = false;
  else if (op == OP_DIV) use_f = true;
  else use_f = et_dtype_is_float(out->dtype);
  if (!is_cmp(op) && !is_logical(op) && op != OP_DIV && !use_f && (fa || fb)) {
    ctx->err_detail = out_idx;  /* float inputs into an integer result */
    return ET_ERR_INVALID_ARGUMENT;
  }
  if (op == OP_DIV && !et_dtype_is_float(out->dtype)) { ctx->err_detail = out_idx; return ET_ERR_INVALID_ARGUMENT; }
  if (use_f) {
    float alpha = alpha_v && !et_is_none(alpha_v) ? et_value_as_float(alpha_v) : 1.0f;
    if (!is_cmp(op) && fast_f32(op, a, b, out, alpha)) return ET_OK;
    if (is_cmp(op)) {
      for (size_t i = 0; i < w.n; i++) {
        et_store_i(out, w.it.off[0], (int64_t)fop(op, et_load_f(a, w.it.off[1]), et_load_f(b, w.it.off[2]), 0.0f));
        et_ew_next(&w);
      }
    } else {
      for (size_t i = 0; i < w.n; i++) {
        et_store_f(out, w.it.off[0], fop(op, et_load_f(a, w.it.off[1]), et_load_f(b, w.it.off[2]), alpha));
        et_ew_next(&w);
      }
    }
    return ET_OK;
  }
  int64_t alpha = alpha_v && !et_is_none(alpha_v) ? et_value_as_int(alpha_v) : 1;
  bool err = false;
  for (size_t i = 0; i < w.n; i++) {
    et_store_i(out, w.it.off[0], iop(op, et_load_i(a, w.it.off[1]), et_load_i(b, w.it.off[2]), alpha, &err));
    et_ew_next(&w);
  }
  if (err) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  return ET_OK;
}

/* A Scalar argument as a 0-d tensor (Double -> float32, Int -> int64, Bool -> bool). */
typedef struct { et_tensor t; union { float f; int64_t i; uint8_t b; } v; } scalar_t;
static bool scalar_tensor(scalar_t *s, const et_value *v) {
  s->t.sizes = 0; s->t.dim_order = 0; s->t.ndim = 0; s->t.dynamic = 0; s->t.constant = 0;
  if (!v) return false;
  switch (v->tag) {
    case ET_TAG_DOUBLE: s->v.f = et_value_as_float(v); s->t.dtype = ET_FLOAT; s->t.capacity = 4; break;
    case ET_TAG_INT: s->v.i = v->u.i; s->t.dtype = ET_LONG; s->t.capacity = 8; break;
    case ET_TAG_BOOL: s->v.b = v->u.b ? 1 : 0; s->t.dtype = ET_BOOL; s->t.capacity = 1; break;
    default: return false;
  }
  s->t.data = &s->v;
  return true;
}

/* An integer or bool Scalar against a float32 tensor into float32: the value as float32 up front (what the
 * walker's et_load_f gives element by element), so that the float32 runs take it */
static void scalar_as_f32(scalar_t *s, const et_tensor *a, const et_tensor *out) {
  if (a->dtype != ET_FLOAT || out->dtype != ET_FLOAT || s->t.dtype == ET_FLOAT) return;
  s->v.f = s->t.dtype == ET_LONG ? (float)s->v.i : s->v.b ? 1.0f : 0.0f;
  s->t.dtype = ET_FLOAT;
  s->t.capacity = 4;
}

/* args: self, other(Tensor), [alpha], out */
static et_status tensor_tensor(et_kctx *ctx, et_value *const *args, uint32_t nargs, int op, bool has_alpha) {
  uint32_t oi = has_alpha ? 3 : 2;
  ET_CHECK_ARGS(oi + 1);
  et_tensor *a, *b, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &a)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 1, &b)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, oi, &out)) != ET_OK) return st;
  return binary_run(ctx, op, a, b, out, has_alpha ? args[2] : 0, oi);
}

/* args: self, other(Scalar), [alpha], out */
static et_status tensor_scalar(et_kctx *ctx, et_value *const *args, uint32_t nargs, int op, bool has_alpha) {
  uint32_t oi = has_alpha ? 3 : 2;
  ET_CHECK_ARGS(oi + 1);
  et_tensor *a, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &a)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, oi, &out)) != ET_OK) return st;
  scalar_t s;
  if (!scalar_tensor(&s, args[1])) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  scalar_as_f32(&s, a, out);
  return binary_run(ctx, op, a, &s.t, out, has_alpha ? args[2] : 0, oi);
}

/* rounding_mode: None -> true division, "trunc", "floor" */
static int div_mode(const et_value *v, bool *ok) {
  *ok = true;
  if (et_is_none(v)) return OP_DIV;
  if (et_string_is(v, "trunc")) return OP_DIV_TRUNC;
  if (et_string_is(v, "floor")) return OP_DIV_FLOOR;
  *ok = false;
  return OP_DIV;
}

ET_OP("aten::add.out", k_aten_add_out) { return tensor_tensor(ctx, args, nargs, OP_ADD, true); }
ET_OP("aten::sub.out", k_aten_sub_out) { return tensor_tensor(ctx, args, nargs, OP_SUB, true); }
ET_OP("aten::mul.out", k_aten_mul_out) { return tensor_tensor(ctx, args, nargs, OP_MUL, false); }
ET_OP("aten::div.out", k_aten_div_out) { return tensor_tensor(ctx, args, nargs, OP_DIV, false); }
ET_OP("aten::add.Scalar_out", k_aten_add_scalar_out) { return tensor_scalar(ctx, args, nargs, OP_ADD, true); }
ET_OP("aten::sub.Scalar_out", k_aten_sub_scalar_out) { return tensor_scalar(ctx, args, nargs, OP_SUB, true); }
ET_OP("aten::rsub.Scalar_out", k_aten_rsub_scalar_out) { return tensor_scalar(ctx, args, nargs, OP_RSUB, true); }
ET_OP("aten::mul.Scalar_out", k_aten_mul_scalar_out) { return tensor_scalar(ctx, args, nargs, OP_MUL, false); }
ET_OP("aten::div.Scalar_out", k_aten_div_scalar_out) { return tensor_scalar(ctx, args, nargs, OP_DIV, false); }

ET_OP("aten::div.out_mode", k_aten_div_out_mode) {
  ET_CHECK_ARGS(4);
  bool ok;
  int op = div_mode(args[2], &ok);
  if (!ok) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  et_tensor *a, *b, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &a)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 1, &b)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 3, &out)) != ET_OK) return st;
  return binary_run(ctx, op, a, b, out, 0, 3);
}

ET_OP("aten::div.Scalar_mode_out", k_aten_div_scalar_mode_out) {
  ET_CHECK_ARGS(4);
  bool ok;
  int op = div_mode(args[2], &ok);
  if (!ok) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  et_tensor *a, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &a)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 3, &out)) != ET_OK) return st;
  scalar_t s;
  if (!scalar_tensor(&s, args[1])) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  scalar_as_f32(&s, a, out);
  return binary_run(ctx, op, a, &s.t, out, 0, 3);
}

ET_OP("aten::minimum.out", k_aten_minimum_out) { return tensor_tensor(ctx, args, nargs, OP_MIN, false); }
ET_OP("aten::maximum.out", k_aten_maximum_out) { return tensor_tensor(ctx, args, nargs, OP_MAX, false); }
ET_OP("aten::pow.Tensor_Tensor_out", k_aten_pow_tt_out) { return tensor_tensor(ctx, args, nargs, OP_POW, false); }
ET_OP("aten::pow.Tensor_Scalar_out", k_aten_pow_ts_out) { return tensor_scalar(ctx, args, nargs, OP_POW, false); }
ET_OP("aten::remainder.Tensor_out", k_aten_remainder_t_out) { return tensor_tensor(ctx, args, nargs, OP_REM, false); }
ET_OP("aten::remainder.Scalar_out", k_aten_remainder_s_out) { return tensor_scalar(ctx, args, nargs, OP_REM, false); }
ET_OP("aten::fmod.Tensor_out", k_aten_fmod_t_out) { return tensor_tensor(ctx, args, nargs, OP_FMOD, false); }
ET_OP("aten::fmod.Scalar_out", k_aten_fmod_s_out) { return tensor_scalar(ctx, args, nargs, OP_FMOD, false); }

ET_OP("aten::eq.Tensor_out", k_aten_eq_tensor_out) { return tensor_tensor(ctx, args, nargs, OP_EQ, false); }
ET_OP("aten::ne.Tensor_out", k_aten_ne_tensor_out) { return tensor_tensor(ctx, args, nargs, OP_NE, false); }
ET_OP("aten::lt.Tensor_out", k_aten_lt_tensor_out) { return tensor_tensor(ctx, args, nargs, OP_LT, false); }
ET_OP("aten::le.Tensor_out", k_aten_le_tensor_out) { return tensor_tensor(ctx, args, nargs, OP_LE, false); }
ET_OP("aten::gt.Tensor_out", k_aten_gt_tensor_out) { return tensor_tensor(ctx, args, nargs, OP_GT, false); }
ET_OP("aten::ge.Tensor_out", k_aten_ge_tensor_out) { return tensor_tensor(ctx, args, nargs, OP_GE, false); }
ET_OP("aten::eq.Scalar_out", k_aten_eq_scalar_out) { return tensor_scalar(ctx, args, nargs, OP_EQ, false); }
ET_OP("aten::ne.Scalar_out", k_aten_ne_scalar_out) { return tensor_scalar(ctx, args, nargs, OP_NE, false); }
ET_OP("aten::lt.Scalar_out", k_aten_lt_scalar_out) { return tensor_scalar(ctx, args, nargs, OP_LT, false); }
ET_OP("aten::le.Scalar_out", k_aten_le_scalar_out) { return tensor_scalar(ctx, args, nargs, OP_LE, false); }
ET_OP("aten::gt.Scalar_out", k_aten_gt_scalar_out) { return tensor_scalar(ctx, args, nargs, OP_GT, false); }
ET_OP("aten::ge.Scalar_out", k_aten_ge_scalar_out) { return tensor_scalar(ctx, args, nargs, OP_GE, false); }
ET_OP("aten::logical_and.out", k_aten_logical_and_out) { return tensor_tensor(ctx, args, nargs, OP_AND, false); }
ET_OP("aten::logical_or.out", k_aten_logical_or_out) { return tensor_tensor(ctx, args, nargs, OP_OR, false); }
ET_OP("aten::logical_xor.out", k_aten_logical_xor_out) { return tensor_tensor(ctx, args, nargs, OP_XOR, false); }

/* where.self_out(condition, self, other, out) */
ET_OP("aten::where.self_out", k_aten_where_self_out) {
  ET_CHECK_ARGS(4);
  et_tensor *c, *a, *b, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &c)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 1, &a)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 2, &b)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 3, &out)) != ET_OK) return st;
  et_tensor *ins[3] = {c, a, b};
  et_ew w;
  if ((st = et_ew_prepare(&w, out, ins, 3, true)) != ET_OK) { ctx->err_detail = 3; return st; }
  if (a->dtype == ET_FLOAT && b->dtype == ET_FLOAT && out->dtype == ET_FLOAT && c->dtype == ET_BOOL &&
      et_is_contiguous(a) && et_is_contiguous(b) && et_is_contiguous(c) && et_is_contiguous(out) &&
      et_same_shape(a, out) && et_same_shape(b, out) && et_same_shape(c, out)) {
    const uint8_t *cc = (const uint8_t *)c->data;
    const float *x = (const float *)a->data, *y = (const float *)b->data;
    float *o = (float *)out->data;
    for (size_t i = 0; i < w.n; i++) o[i] = cc[i] ? x[i] : y[i];
    return ET_OK;
  }
  for (size_t i = 0; i < w.n; i++) {
    bool pick = et_load_i(c, w.it.off[1]) != 0;
    if (pick) et_copy_elem(out, w.it.off[0], a, w.it.off[2]);
    else et_copy_elem(out, w.it.off[0], b, w.it.off[3]);
    et_ew_next(&w);
  }
  return ET_OK;
}
