/* Unary elementwise kernels: neg, abs, logical_not, rounding, sqrt/exp/log family. float32 with
 * the same layout on both sides takes a flat loop; other dtypes / layouts go through the walker. */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"

enum { U_NEG, U_ABS, U_SQRT, U_RSQRT, U_EXP, U_LOG, U_FLOOR, U_CEIL, U_ROUND, U_TRUNC, U_RECIP,
       U_SIGN, U_ERF, U_EXPM1, U_LOG1P, U_LOG2 };

static inline float fapply(int op, float v) {
  switch (op) {
    case U_NEG: return -v;
    case U_ABS: return et_fabsf(v);
    case U_SQRT: return et_sqrtf(v);
    case U_RSQRT: return et_rsqrtf(v);
    case U_EXP: return et_expf(v);
    case U_LOG: return et_logf(v);
    case U_FLOOR: return et_floorf(v);
    case U_CEIL: return et_ceilf(v);
    case U_ROUND: return et_roundf(v);
    case U_TRUNC: return et_truncf(v);
    case U_RECIP: return 1.0f / v;
    case U_SIGN: return v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v;  /* NaN and +-0 pass through */
    case U_ERF: return et_erff(v);
    case U_EXPM1: return et_expm1f(v);
    case U_LOG1P: return et_log1pf(v);
    case U_LOG2: return et_log2f(v);
    default: return v;
  }
}

static inline int64_t iapply(int op, int64_t v) {
  switch (op) {
    case U_NEG: return (int64_t)(0 - (uint64_t)v);
    case U_ABS: return v < 0 ? (int64_t)(0 - (uint64_t)v) : v;
    case U_SIGN: return v > 0 ? 1 : v < 0 ? -1 : 0;
    default: return v;  /* floor/ceil/round/trunc of an integer */
  }
}

static bool int_ok(int op) {
  return op == U_NEG || op == U_ABS || op == U_SIGN || op == U_FLOOR || op == U_CEIL || op == U_ROUND ||
         op == U_TRUNC;
}

__attribute__((noinline)) static void f32_loop(int op, const float *x, float *o, size_t n) {
#define FLOOP(OP) for (size_t i = 0; i < n; i++) o[i] = fapply(OP, x[i]); break
  switch (op) {
    case U_NEG: FLOOP(U_NEG);
    case U_ABS: FLOOP(U_ABS);
    case U_SQRT: FLOOP(U_SQRT);
    case U_RSQRT: FLOOP(U_RSQRT);
    case U_EXP: FLOOP(U_EXP);
    case U_LOG: FLOOP(U_LOG);
    case U_FLOOR: FLOOP(U_FLOOR);
    case U_CEIL: FLOOP(U_CEIL);
    case U_ROUND: FLOOP(U_ROUND);
    case U_TRUNC: FLOOP(U_TRUNC);
    case U_RECIP: FLOOP(U_RECIP);
    default: for (size_t i = 0; i < n; i++) o[i] = fapply(op, x[i]); break;
  }
#undef FLOOP
}

static et_status run_unary(et_kctx *ctx, et_value *const *args, uint32_t nargs, int op) {
  et_tensor *in, *out;
  et_status st = et_unary_prep(ctx, args, nargs, 1, &in, &out);
  if (st != ET_OK) return st;
  size_t n = (size_t)et_numel(in);
  if (in->dtype == ET_FLOAT && out->dtype == ET_FLOAT && et_same_layout(in, out)) {
    f32_loop(op, (const float *)in->data, (float *)out->data, n);
    return ET_OK;
  }
  bool use_f = et_dtype_is_float(out->dtype) || et_dtype_is_float(in->dtype) || !int_ok(op);
  if (!int_ok(op) && !et_dtype_is_float(out->dtype)) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (in->dtype == ET_BOOL && (op == U_NEG)) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  et_ew w;
  if ((st = et_ew_prepare(&w, out, &in, 1, false)) != ET_OK) { ctx->err_detail = 1; return st; }
  for (size_t i = 0; i < w.n; i++) {
    if (use_f) et_store_f(out, w.it.off[0], fapply(op, et_load_f(in, w.it.off[1])));
    else et_store_i(out, w.it.off[0], iapply(op, et_load_i(in, w.it.off[1])));
    et_ew_next(&w);
  }
  return ET_OK;
}

ET_OP("aten::neg.out", k_aten_neg_out) { return run_unary(ctx, args, nargs, U_NEG); }
ET_OP("aten::abs.out", k_aten_abs_out) { return run_unary(ctx, args, nargs, U_ABS); }
ET_OP("aten::sqrt.out", k_aten_sqrt_out) { return run_unary(ctx, args, nargs, U_SQRT); }
ET_OP("aten::rsqrt.out", k_aten_rsqrt_out) { return run_unary(ctx, args, nargs, U_RSQRT); }
ET_OP("aten::exp.out", k_aten_exp_out) { return run_unary(ctx, args, nargs, U_EXP); }
ET_OP("aten::expm1.out", k_aten_expm1_out) { return run_unary(ctx, args, nargs, U_EXPM1); }
ET_OP("aten::log.out", k_aten_log_out) { return run_unary(ctx, args, nargs, U_LOG); }
ET_OP("aten::log1p.out", k_aten_log1p_out) { return run_unary(ctx, args, nargs, U_LOG1P); }
ET_OP("aten::log2.out", k_aten_log2_out) { return run_unary(ctx, args, nargs, U_LOG2); }
ET_OP("aten::floor.out", k_aten_floor_out) { return run_unary(ctx, args, nargs, U_FLOOR); }
ET_OP("aten::ceil.out", k_aten_ceil_out) { return run_unary(ctx, args, nargs, U_CEIL); }
ET_OP("aten::round.out", k_aten_round_out) { return run_unary(ctx, args, nargs, U_ROUND); }
ET_OP("aten::trunc.out", k_aten_trunc_out) { return run_unary(ctx, args, nargs, U_TRUNC); }
ET_OP("aten::reciprocal.out", k_aten_reciprocal_out) { return run_unary(ctx, args, nargs, U_RECIP); }
ET_OP("aten::sign.out", k_aten_sign_out) { return run_unary(ctx, args, nargs, U_SIGN); }
ET_OP("aten::erf.out", k_aten_erf_out) { return run_unary(ctx, args, nargs, U_ERF); }

/* logical_not.out(self, out): out usually bool; any input dtype */
ET_OP("aten::logical_not.out", k_aten_logical_not_out) {
  et_tensor *in, *out;
  et_status st = et_unary_prep(ctx, args, nargs, 1, &in, &out);
  if (st != ET_OK) return st;
  et_ew w;
  if ((st = et_ew_prepare(&w, out, &in, 1, false)) != ET_OK) { ctx->err_detail = 1; return st; }
  bool fin = et_dtype_is_float(in->dtype);
  for (size_t i = 0; i < w.n; i++) {
    bool z = fin ? (et_load_f(in, w.it.off[1]) == 0.0f) : (et_load_i(in, w.it.off[1]) == 0);
    et_store_i(out, w.it.off[0], z ? 1 : 0);
    et_ew_next(&w);
  }
  return ET_OK;
}
