/* quantized_decomposed:: quantize / dequantize, per tensor (scalar or tensor qparams) and per
 * channel. Numerics of executorch's runtime kernels: q = clamp(zp + rint(x * (1.0f / (float)scale))),
 * x = (float)(q - zp) * (float)scale, all in float32 (no double arithmetic). */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"

/* ---- shared quantization helpers (also in cortex_m/, kept file-local) ---- */
static bool q_dtype_ok(uint32_t dt) {
  return dt == ET_CHAR || dt == ET_BYTE || dt == ET_SHORT || dt == ET_UINT16 || dt == ET_INT;
}
/* clamp(zp + rint(x * inv)) with round half to even; NaN gives zp */
static inline int32_t q_quantize_one(float x, float inv, int32_t zp, int32_t qmin, int32_t qmax) {
  float r = et_roundf(x * inv);
  int64_t q = et_f32_to_i64(r < -1e12f ? -1e12f : r > 1e12f ? 1e12f : r) + zp;  /* no int64 overflow */
  if (q < qmin) q = qmin;
  if (q > qmax) q = qmax;
  return (int32_t)q;
}
static void q_quantize_f32_s8(const float *x, int8_t *y, int64_t n, float inv, int32_t zp, int32_t qmin,
                               int32_t qmax) {
  for (int64_t i = 0; i < n; i++) y[i] = (int8_t)q_quantize_one(x[i], inv, zp, qmin, qmax);
}
static void q_dequantize_s8_f32(const int8_t *x, float *y, int64_t n, float scale, int32_t zp) {
  /* wrapping difference: a corrupted zero point gives wrong numbers, never undefined behaviour */
  for (int64_t i = 0; i < n; i++) y[i] = (float)(int32_t)((uint32_t)(int32_t)x[i] - (uint32_t)zp) * scale;
}

/* quantize_per_tensor.out(Tensor input, float scale, int zero_point, int quant_min, int quant_max,
 *   ScalarType dtype, *, Tensor(a!) out) */
static et_status quantize_pt(et_kctx *ctx, et_tensor *in, et_tensor *out, float inv, int32_t zp,
                             const et_value *qmin_v, const et_value *qmax_v, uint32_t oi) {
  int32_t qmin = (int32_t)et_value_as_int(qmin_v), qmax = (int32_t)et_value_as_int(qmax_v);
  et_status st;
  if (!et_dtype_is_float(in->dtype) || !q_dtype_ok(out->dtype)) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  if ((st = et_resize_like(out, in)) != ET_OK) { ctx->err_detail = oi; return st; }
  if (!et_same_layout(in, out)) { ctx->err_detail = oi; return ET_ERR_UNSUPPORTED; }
  int64_t n = et_numel(in);
  if (in->dtype == ET_FLOAT && out->dtype == ET_CHAR) {
    q_quantize_f32_s8((const float *)in->data, (int8_t *)out->data, n, inv, zp, qmin, qmax);
    return ET_OK;
  }
  for (int64_t i = 0; i < n; i++)
    et_store_i(out, i, q_quantize_one(et_load_f(in, i), inv, zp, qmin, qmax));
  return ET_OK;
}

static et_status dequantize_pt(et_kctx *ctx, et_tensor *in, et_tensor *out, float scale, int32_t zp, uint32_t oi) {
  et_status st;
  if (!q_dtype_ok(in->dtype) || !et_dtype_is_float(out->dtype)) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  if ((st = et_resize_like(out, in)) != ET_OK) { ctx->err_detail = oi; return st; }
  if (!et_same_layout(in, out)) { ctx->err_detail = oi; return ET_ERR_UNSUPPORTED; }
  int64_t n = et_numel(in);
  if (in->dtype == ET_CHAR && out->dtype == ET_FLOAT) {
    q_dequantize_s8_f32((const int8_t *)in->data, (float *)out->data, n, scale, zp);
    return ET_OK;
  }
  for (int64_t i = 0; i < n; i++) et_store_f(out, i, (float)(int32_t)(et_load_i(in, i) - zp) * scale);
  return ET_OK;
}

/* scalar from a one-element tensor (float64/float32 scale, int64/int32 zero point) */
static bool scalar_tensor_f(const et_value *v, float *f) {
  if (!et_is_tensor(v) || !v->u.t->data || et_numel(v->u.t) < 1) return false;
  const et_tensor *t = v->u.t;
  if (t->dtype == ET_DOUBLE) { *f = et_double_bits_to_float(*(const uint64_t *)t->data); return true; }
  if (t->dtype == ET_FLOAT) { *f = *(const float *)t->data; return true; }
  return false;
}
static bool scalar_tensor_i(const et_value *v, int32_t *i) {
  if (!et_is_tensor(v) || !v->u.t->data || et_numel(v->u.t) < 1 || !et_dtype_is_int(v->u.t->dtype)) return false;
  *i = (int32_t)et_load_i(v->u.t, 0);
  return true;
}

ET_OP("quantized_decomposed::quantize_per_tensor.out", k_qd_quantize_per_tensor_out) {
  ET_CHECK_ARGS(7);
  et_tensor *in, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) || (st = et_arg_tensor(ctx, args, 6, &out))) return st;
  float scale = et_value_as_float(args[1]);
  return quantize_pt(ctx, in, out, 1.0f / scale, (int32_t)et_value_as_int(args[2]), args[3], args[4], 6);
}

/* quantize_per_tensor.Tensor_out(Tensor input, Tensor scale, Tensor zero_point, int quant_min,
 *   int quant_max, ScalarType dtype, *, Tensor(a!) out) */
ET_OP("quantized_decomposed::quantize_per_tensor.Tensor_out", k_qd_quantize_per_tensor_tensor_out) {
  ET_CHECK_ARGS(7);
  et_tensor *in, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) || (st = et_arg_tensor(ctx, args, 6, &out))) return st;
  float scale;
  int32_t zp;
  if (!scalar_tensor_f(args[1], &scale)) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (!scalar_tensor_i(args[2], &zp)) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  return quantize_pt(ctx, in, out, 1.0f / scale, zp, args[3], args[4], 6);
}

/* dequantize_per_tensor.out(Tensor input, float scale, int zero_point, int quant_min, int quant_max,
 *   ScalarType dtype, *, ScalarType? out_dtype=None, Tensor(a!) out) */
ET_OP("quantized_decomposed::dequantize_per_tensor.out", k_qd_dequantize_per_tensor_out) {
  ET_CHECK_ARGS(8);
  et_tensor *in, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) || (st = et_arg_tensor(ctx, args, 7, &out))) return st;
  return dequantize_pt(ctx, in, out, et_value_as_float(args[1]), (int32_t)et_value_as_int(args[2]), 7);
}

ET_OP("quantized_decomposed::dequantize_per_tensor.Tensor_out", k_qd_dequantize_per_tensor_tensor_out) {
  ET_CHECK_ARGS(8);
  et_tensor *in, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) || (st = et_arg_tensor(ctx, args, 7, &out))) return st;
  float scale;
  int32_t zp;
  if (!scalar_tensor_f(args[1], &scale)) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (!scalar_tensor_i(args[2], &zp)) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  return dequantize_pt(ctx, in, out, scale, zp, 7);
}

/* per-channel geometry: channel of flat (contiguous) index i = (i / inner) % C */
static et_status pc_setup(et_kctx *ctx, et_tensor *in, const et_value *axis_v, int64_t *inner, int32_t *C) {
  int32_t ax = et_wrap_dim(et_value_as_int(axis_v), in->ndim);
  if (ax < 0) { ctx->err_detail = 3; return ET_ERR_INVALID_ARGUMENT; }
  *C = in->sizes[ax];
  int64_t s = 1;
  for (uint32_t d = (uint32_t)ax + 1; d < in->ndim; d++) s *= in->sizes[d];
  *inner = s;
  return ET_OK;
}

static float load_scale(const et_tensor *t, int32_t c) {
  if (t->dtype == ET_DOUBLE) return et_double_bits_to_float(((const uint64_t *)t->data)[c]);
  return et_load_f(t, c);
}

/* quantize_per_channel.out(Tensor input, Tensor scales, Tensor zero_points, int axis, int quant_min,
 *   int quant_max, ScalarType dtype, *, Tensor(a!) out) */
ET_OP("quantized_decomposed::quantize_per_channel.out", k_qd_quantize_per_channel_out) {
  ET_CHECK_ARGS(8);
  et_tensor *in, *sc, *zp, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) || (st = et_arg_tensor(ctx, args, 1, &sc)) ||
      (st = et_arg_tensor(ctx, args, 2, &zp)) || (st = et_arg_tensor(ctx, args, 7, &out))) return st;
  int64_t inner;
  int32_t C;
  if ((st = pc_setup(ctx, in, args[3], &inner, &C)) != ET_OK) return st;
  if (et_numel(sc) != C || et_numel(zp) != C || !et_dtype_is_float(sc->dtype) || !et_dtype_is_int(zp->dtype) ||
      !et_dtype_is_float(in->dtype) || !q_dtype_ok(out->dtype)) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (!et_is_contiguous(in)) { ctx->err_detail = 0; return ET_ERR_UNSUPPORTED; }
  if ((st = et_resize_like(out, in)) != ET_OK) { ctx->err_detail = 7; return st; }
  if (!et_is_contiguous(out)) { ctx->err_detail = 7; return ET_ERR_UNSUPPORTED; }
  int32_t qmin = (int32_t)et_value_as_int(args[4]), qmax = (int32_t)et_value_as_int(args[5]);
  int64_t n = et_numel(in);
  for (int64_t i = 0; i < n; i++) {
    int32_t c = (int32_t)((i / inner) % C);
    float inv = 1.0f / load_scale(sc, c);
    et_store_i(out, i, q_quantize_one(et_load_f(in, i), inv, (int32_t)et_load_i(zp, c), qmin, qmax));
  }
  return ET_OK;
}

/* dequantize_per_channel.out(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min,
 *   int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None, Tensor(a!) out) */
ET_OP("quantized_decomposed::dequantize_per_channel.out", k_qd_dequantize_per_channel_out) {
  ET_CHECK_ARGS(9);
  et_tensor *in, *sc, *zp = NULL, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) || (st = et_arg_tensor(ctx, args, 1, &sc)) ||
      (st = et_arg_tensor(ctx, args, 8, &out))) return st;
  if (!et_is_none(args[2]) && (st = et_arg_tensor(ctx, args, 2, &zp))) return st;
  int64_t inner;
  int32_t C;
  if ((st = pc_setup(ctx, in, args[3], &inner, &C)) != ET_OK) return st;
  if (et_numel(sc) != C || (zp && (et_numel(zp) != C || !et_dtype_is_int(zp->dtype))) ||
      !et_dtype_is_float(sc->dtype) || !q_dtype_ok(in->dtype) || !et_dtype_is_float(out->dtype)) {
    ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT;
  }
  if (!et_is_contiguous(in)) { ctx->err_detail = 0; return ET_ERR_UNSUPPORTED; }
  if ((st = et_resize_like(out, in)) != ET_OK) { ctx->err_detail = 8; return st; }
  if (!et_is_contiguous(out)) { ctx->err_detail = 8; return ET_ERR_UNSUPPORTED; }
  int64_t n = et_numel(in);
  for (int64_t i = 0; i < n; i++) {
    int32_t c = (int32_t)((i / inner) % C);
    int32_t z = zp ? (int32_t)et_load_i(zp, c) : 0;
    et_store_f(out, i, (float)(int32_t)(et_load_i(in, i) - z) * load_scale(sc, c));
  }
  return ET_OK;
}
