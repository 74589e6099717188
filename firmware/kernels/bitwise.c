/* Bitwise and/or/xor (Tensor and Scalar forms), bitwise_not, masked_fill.Scalar.
 * Bitwise ops take bool and integer tensors (a float operand is refused) and compute in int64
 * (two's complement, then narrowed by the store); on bool they are the logical ops. */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"

enum { B_AND, B_OR, B_XOR };

static inline int64_t bop(int op, int64_t a, int64_t b) {
  return op == B_AND ? (a & b) : op == B_OR ? (a | b) : (a ^ b);
}

static bool int_like(uint32_t dt) { return dt == ET_BOOL || et_dtype_is_int(dt); }

/* bool values load as 0/1; other integers as their value */
static inline int64_t load_bits(const et_tensor *t, ptrdiff_t i) {
  int64_t v = et_load_i(t, i);
  return t->dtype == ET_BOOL ? (v != 0) : v;
}

/* bitwise_*.Tensor_out(self, other, out) */
static et_status bit_tt(et_kctx *ctx, et_value *const *args, uint32_t nargs, int op) {
  ET_CHECK_ARGS(3);
  et_tensor *a, *b, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &a)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 1, &b)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 2, &out)) != ET_OK) return st;
  if (!int_like(a->dtype)) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  if (!int_like(b->dtype)) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (!int_like(out->dtype)) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  et_tensor *ins[2] = {a, b};
  et_ew w;
  if ((st = et_ew_prepare(&w, out, ins, 2, true)) != ET_OK) { ctx->err_detail = 2; return st; }
  bool ob = out->dtype == ET_BOOL;
  for (size_t i = 0; i < w.n; i++) {
    int64_t v = bop(op, load_bits(a, w.it.off[1]), load_bits(b, w.it.off[2]));
    et_store_i(out, w.it.off[0], ob ? (v & 1) : v);
    et_ew_next(&w);
  }
  return ET_OK;
}

/* bitwise_*.Scalar_out(self, Scalar other, out): the scalar must be an Int or Bool */
static et_status bit_ts(et_kctx *ctx, et_value *const *args, uint32_t nargs, int op) {
  ET_CHECK_ARGS(3);
  et_tensor *a, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &a)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 2, &out)) != ET_OK) return st;
  if (!args[1] || (args[1]->tag != ET_TAG_INT && args[1]->tag != ET_TAG_BOOL)) {
    ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT;
  }
  if (!int_like(a->dtype)) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  if (!int_like(out->dtype)) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  int64_t s = args[1]->tag == ET_TAG_BOOL ? (int64_t)args[1]->u.b : args[1]->u.i;
  et_ew w;
  if ((st = et_ew_prepare(&w, out, &a, 1, true)) != ET_OK) { ctx->err_detail = 2; return st; }
  bool ob = out->dtype == ET_BOOL;
  for (size_t i = 0; i < w.n; i++) {
    int64_t v = bop(op, load_bits(a, w.it.off[1]), s);
    et_store_i(out, w.it.off[0], ob ? (v & 1) : v);
    et_ew_next(&w);
  }
  return ET_OK;
}

ET_OP("aten::bitwise_and.Tensor_out", k_aten_bitwise_and_tensor_out) { return bit_tt(ctx, args, nargs, B_AND); }
ET_OP("aten::bitwise_or.Tensor_out", k_aten_bitwise_or_tensor_out) { return bit_tt(ctx, args, nargs, B_OR); }
ET_OP("aten::bitwise_xor.Tensor_out", k_aten_bitwise_xor_tensor_out) { return bit_tt(ctx, args, nargs, B_XOR); }
ET_OP("aten::bitwise_and.Scalar_out", k_aten_bitwise_and_scalar_out) { return bit_ts(ctx, args, nargs, B_AND); }
ET_OP("aten::bitwise_or.Scalar_out", k_aten_bitwise_or_scalar_out) { return bit_ts(ctx, args, nargs, B_OR); }
ET_OP("aten::bitwise_xor.Scalar_out", k_aten_bitwise_xor_scalar_out) { return bit_ts(ctx, args, nargs, B_XOR); }

/* bitwise_not.out(self, out): ~x on integers, logical not on bool */
ET_OP("aten::bitwise_not.out", k_aten_bitwise_not_out) {
  et_tensor *in, *out;
  et_status st = et_unary_prep(ctx, args, nargs, 1, &in, &out);
  if (st != ET_OK) return st;
  if (!int_like(in->dtype)) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  if (!int_like(out->dtype)) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  et_ew w;
  if ((st = et_ew_prepare(&w, out, &in, 1, false)) != ET_OK) { ctx->err_detail = 1; return st; }
  bool ib = in->dtype == ET_BOOL;
  for (size_t i = 0; i < w.n; i++) {
    int64_t v = load_bits(in, w.it.off[1]);
    et_store_i(out, w.it.off[0], ib ? !v : ~v);
    et_ew_next(&w);
  }
  return ET_OK;
}

/* masked_fill.Scalar_out(self, Tensor mask, Scalar value, out): mask (bool) broadcasts to self;
 * out has self's shape. */
ET_OP("aten::masked_fill.Scalar_out", k_aten_masked_fill_scalar_out) {
  ET_CHECK_ARGS(4);
  et_tensor *in, *mask, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 1, &mask)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 3, &out)) != ET_OK) return st;
  const et_value *v = args[2];
  if (!v || (v->tag != ET_TAG_INT && v->tag != ET_TAG_DOUBLE && v->tag != ET_TAG_BOOL)) {
    ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT;
  }
  if (mask->dtype != ET_BOOL) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (out->dtype != in->dtype) { ctx->err_detail = 3; return ET_ERR_INVALID_ARGUMENT; }
  /* the mask broadcasts to self, never the other way round */
  int32_t bs[ET_MAX_DIMS];
  int32_t bn = et_broadcast_shape(in, mask, bs);
  if (bn != (int32_t)in->ndim) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  for (uint32_t d = 0; d < in->ndim; d++)
    if (bs[d] != in->sizes[d]) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  et_tensor *ins[2] = {in, mask};
  et_ew w;
  if ((st = et_ew_prepare(&w, out, ins, 2, true)) != ET_OK) { ctx->err_detail = 3; return st; }
  bool fl = et_dtype_is_float(out->dtype);
  if (!fl && out->dtype != ET_BOOL && v->tag == ET_TAG_DOUBLE) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  float fv = fl ? et_value_as_float(v) : 0.0f;
  int64_t iv = fl ? 0 : (v->tag == ET_TAG_DOUBLE ? (et_value_as_float(v) != 0.0f)
                                                  : v->tag == ET_TAG_BOOL ? (int64_t)v->u.b : v->u.i);
  if (out->dtype == ET_BOOL) iv = iv != 0;
  for (size_t i = 0; i < w.n; i++) {
    if (et_load_i(mask, w.it.off[2])) {
      if (fl) et_store_f(out, w.it.off[0], fv);
      else et_store_i(out, w.it.off[0], iv);
    } else {
      et_copy_elem(out, w.it.off[0], in, w.it.off[1]);
    }
    et_ew_next(&w);
  }
  return ET_OK;
}
