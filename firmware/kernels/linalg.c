/* Matrix products: addmm, mm, bmm, linear (float32 fast paths, any float dtype slow path).
 * Inner loops are contiguous AXPY rows (out[m, :] += a[m, k] * b[k, :]) so they vectorise. */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#include <arm_mve.h>
/* y[i] += a * x[i] with Helium (4 lanes, tail predicated) */
static inline void axpy_f32(float *y, const float *x, float a, int32_t n) {
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vfmaq_n_f32(vld1q_f32(y + i), vld1q_f32(x + i), a));
  if (i < n) {
    mve_pred16_t p = vctp32q((uint32_t)(n - i));
    vst1q_p_f32(y + i, vfmaq_n_f32(vld1q_z_f32(y + i, p), vld1q_z_f32(x + i, p), a), p);
  }
}
#else
static inline void axpy_f32(float *y, const float *x, float a, int32_t n) {
  for (int32_t i = 0; i < n; i++) y[i] += a * x[i];
}
#endif

/* Element strides of a 2-d (or batched 3-d) operand honouring dim_order. */
typedef struct { ptrdiff_t b, r, c; } mat_st;

static mat_st mat_strides(const et_tensor *t) {
  ptrdiff_t st[ET_MAX_DIMS];
  et_tensor_strides(t, st);
  mat_st m = {0, 0, 0};
  if (t->ndim == 3) { m.b = st[0]; m.r = st[1]; m.c = st[2]; }
  else if (t->ndim == 2) { m.r = st[0]; m.c = st[1]; }
  else if (t->ndim == 1) { m.c = st[0]; }
  return m;
}

/* out[M,N] (contiguous rows, f32) = a[M,K] @ b[K,N]; row strides given, column stride 1 for
 * b and out on the fast path. */
static void mm_f32_rows(float *o, ptrdiff_t ors, const float *a, mat_st as, const float *b, mat_st bs,
                        int32_t M, int32_t K, int32_t N) {
  for (int32_t m = 0; m < M; m++) {
    float *orow = o + (ptrdiff_t)m * ors;
    for (int32_t n = 0; n < N; n++) orow[n] = 0.0f;
    const float *arow = a + (ptrdiff_t)m * as.r;
    for (int32_t k = 0; k < K; k++) {
      const float av = arow[(ptrdiff_t)k * as.c];
      const float *brow = b + (ptrdiff_t)k * bs.r;
      if (bs.c == 1) {
        axpy_f32(orow, brow, av, N);
      } else {
        for (int32_t n = 0; n < N; n++) orow[n] += av * brow[(ptrdiff_t)n * bs.c];
      }
    }
  }
}

/* Generic: any float dtypes, any strides. out element (m, n) at base + m*os.r + n*os.c. */
static void mm_generic(et_tensor *out, ptrdiff_t ob, mat_st os, const et_tensor *a, ptrdiff_t ab, mat_st as,
                       const et_tensor *b, ptrdiff_t bb, mat_st bs, int32_t M, int32_t K, int32_t N) {
  for (int32_t m = 0; m < M; m++)
    for (int32_t n = 0; n < N; n++) {
      float s = 0.0f;
      for (int32_t k = 0; k < K; k++)
        s += et_load_f(a, ab + m * as.r + k * as.c) * et_load_f(b, bb + k * bs.r + n * bs.c);
      et_store_f(out, ob + m * os.r + n * os.c, s);
    }
}

static bool all_f32(const et_tensor *a, const et_tensor *b, const et_tensor *o) {
  return a->dtype == ET_FLOAT && b->dtype == ET_FLOAT && o->dtype == ET_FLOAT;
}

/* One (batched) product into out; out already resized. */
static void matmul(et_tensor *out, const et_tensor *a, const et_tensor *b, int32_t B, int32_t M, int32_t K,
                   int32_t N) {
  mat_st as = mat_strides(a), bs = mat_strides(b), os = mat_strides(out);
  for (int32_t i = 0; i < B; i++) {
    if (all_f32(a, b, out) && os.c == 1) {
      mm_f32_rows((float *)out->data + i * os.b, os.r, (const float *)a->data + i * as.b, as,
                  (const float *)b->data + i * bs.b, bs, M, K, N);
    } else {
      mm_generic(out, i * os.b, os, a, i * as.b, as, b, i * bs.b, bs, M, K, N);
    }
  }
}

static bool float_dt(const et_tensor *t) { return et_dtype_is_float(t->dtype); }

/* mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) */
ET_OP("aten::mm.out", k_aten_mm_out) {
  ET_CHECK_ARGS(3);
  et_tensor *a, *b, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &a)) || (st = et_arg_tensor(ctx, args, 1, &b)) ||
      (st = et_arg_tensor(ctx, args, 2, &out))) return st;
  if (a->ndim != 2 || b->ndim != 2 || a->sizes[1] != b->sizes[0] || !float_dt(a) || !float_dt(b) ||
      !float_dt(out)) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  int32_t os[2] = {a->sizes[0], b->sizes[1]};
  if ((st = et_resize(out, 2, os)) != ET_OK) { ctx->err_detail = 2; return st; }
  matmul(out, a, b, 1, a->sizes[0], a->sizes[1], b->sizes[1]);
  return ET_OK;
}

/* bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) */
ET_OP("aten::bmm.out", k_aten_bmm_out) {
  ET_CHECK_ARGS(3);
  et_tensor *a, *b, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &a)) || (st = et_arg_tensor(ctx, args, 1, &b)) ||
      (st = et_arg_tensor(ctx, args, 2, &out))) return st;
  if (a->ndim != 3 || b->ndim != 3 || a->sizes[0] != b->sizes[0] || a->sizes[2] != b->sizes[1] ||
      !float_dt(a) || !float_dt(b) || !float_dt(out)) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  int32_t os[3] = {a->sizes[0], a->sizes[1], b->sizes[2]};
  if ((st = et_resize(out, 3, os)) != ET_OK) { ctx->err_detail = 2; return st; }
  matmul(out, a, b, a->sizes[0], a->sizes[1], a->sizes[2], b->sizes[2]);
  return ET_OK;
}

/* out = beta * bias(broadcast to [M,N]) + alpha * out (out holds the product). */
static et_status add_bias(et_kctx *ctx, et_tensor *out, const et_tensor *bias, float beta, float alpha,
                          uint32_t bias_arg) {
  int32_t M = out->sizes[0], N = out->sizes[1];
  mat_st os = mat_strides(out);
  ptrdiff_t bst[ET_MAX_DIMS];
  ptrdiff_t br = 0, bc = 0;
  if (bias) {
    if (bias->ndim > 2 || !float_dt(bias)) { ctx->err_detail = bias_arg; return ET_ERR_INVALID_ARGUMENT; }
    et_bcast_strides(bias, 2, out->sizes, bst);
    int32_t bs[2] = {1, 1};
    for (uint32_t d = 0; d < bias->ndim; d++) bs[2 - bias->ndim + d] = bias->sizes[d];
    if ((bs[0] != 1 && bs[0] != M) || (bs[1] != 1 && bs[1] != N)) {
      ctx->err_detail = bias_arg;
      return ET_ERR_INVALID_ARGUMENT;
    }
    br = bst[0]; bc = bst[1];
  }
  bool f32 = out->dtype == ET_FLOAT && (!bias || bias->dtype == ET_FLOAT);
  bool use_bias = bias && beta != 0.0f;
  for (int32_t m = 0; m < M; m++)
    for (int32_t n = 0; n < N; n++) {
      ptrdiff_t oi = m * os.r + n * os.c;
      float p = f32 ? ((float *)out->data)[oi] : et_load_f(out, oi);
      float v = alpha == 1.0f ? p : alpha * p;
      if (use_bias) {
        float bv = f32 ? ((const float *)bias->data)[m * br + n * bc] : et_load_f(bias, m * br + n * bc);
        v = (beta == 1.0f ? bv : beta * bv) + v;
      }
      if (f32) ((float *)out->data)[oi] = v; else et_store_f(out, oi, v);
    }
  return ET_OK;
}

/* addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) */
ET_OP("aten::addmm.out", k_aten_addmm_out) {
  ET_CHECK_ARGS(6);
  et_tensor *bias, *a, *b, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &bias)) || (st = et_arg_tensor(ctx, args, 1, &a)) ||
      (st = et_arg_tensor(ctx, args, 2, &b)) || (st = et_arg_tensor(ctx, args, 5, &out))) return st;
  if (a->ndim != 2 || b->ndim != 2 || a->sizes[1] != b->sizes[0] || !float_dt(a) || !float_dt(b) ||
      !float_dt(out)) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  float beta = et_value_as_float(args[3]), alpha = et_value_as_float(args[4]);
  int32_t os[2] = {a->sizes[0], b->sizes[1]};
  if ((st = et_resize(out, 2, os)) != ET_OK) { ctx->err_detail = 5; return st; }
  matmul(out, a, b, 1, a->sizes[0], a->sizes[1], b->sizes[1]);
  return add_bias(ctx, out, bias, beta, alpha, 0);
}

/* linear.out(Tensor input, Tensor weight, Tensor? bias=None, *, Tensor(a!) out)
 * out[..., n] = sum_k in[..., k] * w[n, k] + bias[n] */
ET_OP("aten::linear.out", k_aten_linear_out) {
  ET_CHECK_ARGS(4);
  et_tensor *in, *w, *out, *bias = NULL;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) || (st = et_arg_tensor(ctx, args, 1, &w)) ||
      (st = et_arg_tensor(ctx, args, 3, &out))) return st;
  if (!et_is_none(args[2]) && (st = et_arg_tensor(ctx, args, 2, &bias))) return st;
  if (in->ndim < 1 || w->ndim != 2 || in->sizes[in->ndim - 1] != w->sizes[1] || !float_dt(in) ||
      !float_dt(w) || !float_dt(out) || (bias && (!float_dt(bias) || et_numel(bias) != w->sizes[0] ||
      !et_is_contiguous(bias)))) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (!et_is_contiguous(in) || !et_is_contiguous(w)) { ctx->err_detail = 0; return ET_ERR_UNSUPPORTED; }
  int32_t os[ET_MAX_DIMS];
  for (uint32_t d = 0; d < in->ndim; d++) os[d] = in->sizes[d];
  os[in->ndim - 1] = w->sizes[0];
  if ((st = et_resize(out, in->ndim, os)) != ET_OK) { ctx->err_detail = 3; return st; }
  if (!et_is_contiguous(out)) { ctx->err_detail = 3; return ET_ERR_UNSUPPORTED; }
  int32_t K = w->sizes[1], N = w->sizes[0];
  int32_t M = K ? (int32_t)(et_numel(in) / K) : (int32_t)(et_numel(out) / (N ? N : 1));
  bool f32 = in->dtype == ET_FLOAT && w->dtype == ET_FLOAT && out->dtype == ET_FLOAT &&
             (!bias || bias->dtype == ET_FLOAT);
  for (int32_t m = 0; m < M; m++) {
    for (int32_t n = 0; n < N; n++) {
      float s;
      if (f32) {
        const float *x = (const float *)in->data + (ptrdiff_t)m * K;
        const float *wr = (const float *)w->data + (ptrdiff_t)n * K;
        /* 4 interleaved partial sums: vectorisable without reassociation flags */
        float p0 = 0.0f, p1 = 0.0f, p2 = 0.0f, p3 = 0.0f;
        int32_t k = 0;
        for (; k + 4 <= K; k += 4) {
          p0 += x[k] * wr[k]; p1 += x[k + 1] * wr[k + 1];
          p2 += x[k + 2] * wr[k + 2]; p3 += x[k + 3] * wr[k + 3];
        }
        for (; k < K; k++) p0 += x[k] * wr[k];
        s = (p0 + p1) + (p2 + p3);
        if (bias) s += ((const float *)bias->data)[n];
        ((float *)out->data)[(ptrdiff_t)m * N + n] = s;
      } else {
        s = 0.0f;
        for (int32_t k = 0; k < K; k++) s += et_load_f(in, (int64_t)m * K + k) * et_load_f(w, (int64_t)n * K + k);
        if (bias) s += et_load_f(bias, n);
        et_store_f(out, (int64_t)m * N + n, s);
      }
    }
  }
  return ET_OK;
}
