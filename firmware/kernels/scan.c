/* Sequences: cumsum along a dim, arange. */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"
#include "dim_walk.h"

/* cumsum.out(self, int dim, *, ScalarType? dtype=None, out). Accumulates in the output's type,
 * element after element (float sums in float, as the reference does; integers in int64, wrapping). */
ET_OP("aten::cumsum.out", k_aten_cumsum_out) {
  ET_CHECK_ARGS(4);
  et_tensor *in, *out;
  ET_ARG_T(0, &in); ET_ARG_T(3, &out);
  int64_t dv;
  if (!et_arg_int(args[1], &dv)) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  uint32_t nd = in->ndim;
  int32_t d = et_wrap_dim(dv, nd);
  if (d < 0) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  if (!et_dtype_size(out->dtype) || out->dtype == ET_BOOL) ET_FAIL(3, ET_ERR_INVALID_ARGUMENT);
  et_status st = et_resize_like(out, in);
  if (st != ET_OK) ET_FAIL(3, st);
  if (et_numel(in) == 0) return ET_OK;
  ptrdiff_t ist[ET_MAX_DIMS], ost[ET_MAX_DIMS];
  et_tensor_strides(in, ist); et_tensor_strides(out, ost);
  int32_t lsz[ET_MAX_DIMS], pos[ET_MAX_DIMS] = {0};
  for (uint32_t k = 0; k < nd; k++) lsz[k] = (int32_t)k == d ? 1 : in->sizes[k];
  int32_t len = nd ? in->sizes[d] : 1;
  ptrdiff_t is = nd ? ist[d] : 0, os = nd ? ost[d] : 0;
  bool fl = et_dtype_is_float(out->dtype);
  bool f32 = in->dtype == ET_FLOAT && out->dtype == ET_FLOAT;
  do {
    ptrdiff_t io = et_pos_offset(pos, ist, nd), oo = et_pos_offset(pos, ost, nd);
    if (f32) {
      const float *x = (const float *)in->data;
      float *y = (float *)out->data, acc = 0.0f;
      for (int32_t j = 0; j < len; j++) { acc += x[io + j * is]; y[oo + j * os] = acc; }
    } else if (fl) {
      float acc = 0.0f;
      for (int32_t j = 0; j < len; j++) { acc += et_load_f(in, io + j * is); et_store_f(out, oo + j * os, acc); }
    } else {
      uint64_t acc = 0;
      for (int32_t j = 0; j < len; j++) {
        acc += (uint64_t)et_load_i(in, io + j * is);
        et_store_i(out, oo + j * os, (int64_t)acc);
      }
    }
  } while (et_pos_next(pos, lsz, nd));
  return ET_OK;
}

/* Scalars as exact integers when they are ints, else as floats. */
typedef struct { bool is_int; int64_t i; float f; } num;
static bool arg_num(const et_value *v, num *n) {
  if (!v) return false;
  if (v->tag == ET_TAG_INT || v->tag == ET_TAG_BOOL) {
    n->is_int = true; n->i = et_value_as_int(v); n->f = (float)n->i; return true;
  }
  if (v->tag == ET_TAG_DOUBLE) { n->is_int = false; n->f = et_value_as_float(v); n->i = 0; return true; }
  return false;
}

static et_status arange(et_kctx *ctx, num start, num end, num step, et_tensor *out, uint32_t oi) {
  if (out->ndim != 1) ET_FAIL(oi, ET_ERR_INVALID_ARGUMENT);
  bool ints = start.is_int && end.is_int && step.is_int;
  int64_t n;
  if (ints) {
    if (step.i == 0) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
    /* exact ceil((end - start) / step), 0 when the range is empty; no int64 overflow for the
     * ranges a tensor of < 2^32 elements can hold */
    if (end.i > INT64_MAX / 2 || end.i < INT64_MIN / 2 || start.i > INT64_MAX / 2 || start.i < INT64_MIN / 2)
      ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
    int64_t span = end.i - start.i;
    if ((span > 0 && step.i < 0) || (span < 0 && step.i > 0) || span == 0) n = 0;
    else {
      int64_t a = span < 0 ? -span : span, b = step.i < 0 ? -step.i : step.i;
      n = a / b + (a % b != 0);
    }
  } else {
    if (step.f == 0.0f || step.f != step.f || start.f != start.f || end.f != end.f) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
    float q = (end.f - start.f) / step.f;
    if (!(q < 4294967296.0f)) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
    n = q <= 0.0f ? 0 : et_f32_to_i64(et_ceilf(q));
    /* the float quotient may land one off an integer where the exporter's double did not: a static
     * output's planned length decides then */
    if (!out->dynamic && (n == out->sizes[0] + 1 || n + 1 == out->sizes[0])) n = out->sizes[0];
  }
  if (n > INT32_MAX) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  int32_t sz = (int32_t)n;
  et_status st = et_resize(out, 1, &sz);
  if (st != ET_OK) ET_FAIL(oi, st);
  bool fl = et_dtype_is_float(out->dtype);
  for (int64_t k = 0; k < n; k++) {
    if (ints) {
      int64_t v = start.i + k * step.i;
      if (fl) et_store_f(out, k, (float)v); else et_store_i(out, k, v);
    } else {
      float v = start.f + (float)k * step.f;
      if (fl) et_store_f(out, k, v); else et_store_i(out, k, et_f32_to_i64(v));
    }
  }
  return ET_OK;
}

/* arange.out(Scalar end, *, out) */
ET_OP("aten::arange.out", k_aten_arange_out) {
  ET_CHECK_ARGS(2);
  et_tensor *out;
  ET_ARG_T(1, &out);
  num s = {true, 0, 0.0f}, e, st = {true, 1, 1.0f};
  if (!arg_num(args[0], &e)) ET_FAIL(0, ET_ERR_INVALID_ARGUMENT);
  return arange(ctx, s, e, st, out, 1);
}

/* arange.start_out(Scalar start, Scalar end, Scalar step=1, *, out) */
ET_OP("aten::arange.start_out", k_aten_arange_start_out) {
  ET_CHECK_ARGS(4);
  et_tensor *out;
  ET_ARG_T(3, &out);
  num s, e, st;
  if (!arg_num(args[0], &s)) ET_FAIL(0, ET_ERR_INVALID_ARGUMENT);
  if (!arg_num(args[1], &e)) ET_FAIL(1, ET_ERR_INVALID_ARGUMENT);
  if (!arg_num(args[2], &st)) ET_FAIL(2, ET_ERR_INVALID_ARGUMENT);
  return arange(ctx, s, e, st, out, 3);
}
