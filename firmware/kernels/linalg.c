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

/* One row block of out[m, n0:n0+nn) = init + sum_k a[k] * b[k, n0:...] (a's row and b's rows
 * contiguous), held in registers across
 * the whole K loop: per k one scalar load, then a load and an FMA per column vector. NF full vectors
 * (no predicate) plus, with TAIL, one predicated vector: a single predicate stays in VPR for the
 * whole loop. NF and TAIL are constants at each call, so unused vectors vanish. */
static inline __attribute__((always_inline)) void mm_block_f32(float *o, const float *a,
                                                               const float *b, ptrdiff_t brs, const float *init,
                                                               int32_t K, int32_t nn, int NF, int TAIL) {
  const mve_pred16_t pt = vctp32q((uint32_t)(nn - 4 * NF));
  float32x4_t z = vdupq_n_f32(0.0f), c0 = z, c1 = z, c2 = z, c3 = z, ct = z;
  if (init) {
    if (NF > 0) c0 = vld1q_f32(init);
    if (NF > 1) c1 = vld1q_f32(init + 4);
    if (NF > 2) c2 = vld1q_f32(init + 8);
    if (NF > 3) c3 = vld1q_f32(init + 12);
    if (TAIL) ct = vld1q_z_f32(init + 4 * NF, pt);
  }
  int32_t k = 0;
  /* two k per trip where registers allow (four accumulators plus two rows in flight spill): the
   * loop overhead is a large share of a narrow row */
  for (; NF + TAIL <= 3 && k + 2 <= K; k += 2, a += 2, b += 2 * brs) {
    const float av = a[0], aw = a[1];
    const float *b2 = b + brs;
    if (NF > 0) c0 = vfmaq_n_f32(c0, vld1q_f32(b), av);
    if (NF > 1) c1 = vfmaq_n_f32(c1, vld1q_f32(b + 4), av);
    if (NF > 2) c2 = vfmaq_n_f32(c2, vld1q_f32(b + 8), av);
    if (NF > 3) c3 = vfmaq_n_f32(c3, vld1q_f32(b + 12), av);
    if (TAIL) ct = vfmaq_n_f32(ct, vld1q_z_f32(b + 4 * NF, pt), av);
    if (NF > 0) c0 = vfmaq_n_f32(c0, vld1q_f32(b2), aw);
    if (NF > 1) c1 = vfmaq_n_f32(c1, vld1q_f32(b2 + 4), aw);
    if (NF > 2) c2 = vfmaq_n_f32(c2, vld1q_f32(b2 + 8), aw);
    if (NF > 3) c3 = vfmaq_n_f32(c3, vld1q_f32(b2 + 12), aw);
    if (TAIL) ct = vfmaq_n_f32(ct, vld1q_z_f32(b2 + 4 * NF, pt), aw);
  }
  for (; k < K; k++, a++, b += brs) {
    const float av = *a;
    if (NF > 0) c0 = vfmaq_n_f32(c0, vld1q_f32(b), av);
    if (NF > 1) c1 = vfmaq_n_f32(c1, vld1q_f32(b + 4), av);
    if (NF > 2) c2 = vfmaq_n_f32(c2, vld1q_f32(b + 8), av);
    if (NF > 3) c3 = vfmaq_n_f32(c3, vld1q_f32(b + 12), av);
    if (TAIL) ct = vfmaq_n_f32(ct, vld1q_z_f32(b + 4 * NF, pt), av);
  }
  if (NF > 0) vst1q_f32(o, c0);
  if (NF > 1) vst1q_f32(o + 4, c1);
  if (NF > 2) vst1q_f32(o + 8, c2);
  if (NF > 3) vst1q_f32(o + 12, c3);
  if (TAIL) vst1q_p_f32(o + 4 * NF, ct, pt);
}
/* One out-of-line copy per shape: the K loop then gets the registers to itself (inlined into the
 * row loops, GCC spills its pointers inside the loop). */
#define MM_BLOCK(NF, TAIL) \
  static __attribute__((noinline)) void mm_block_##NF##_##TAIL(float *o, const float *a, \
      const float *b, ptrdiff_t brs, const float *init, int32_t K, int32_t nn) { \
    mm_block_f32(o, a, b, brs, init, K, nn, NF, TAIL); \
  }
MM_BLOCK(4, 0) MM_BLOCK(3, 1) MM_BLOCK(3, 0) MM_BLOCK(2, 1) MM_BLOCK(2, 0) MM_BLOCK(1, 1) MM_BLOCK(1, 0)
MM_BLOCK(0, 1)
#define ET_MM_BLOCKS 1
#else
static inline void axpy_f32(float *y, const float *x, float a, int32_t n) {
  for (int32_t i = 0; i < n; i++) y[i] += a * x[i];
}
#endif

/* Element strides of a 2-d (or batched 3-d) operand honouring dim_order. */
typedef struct { ptrdiff_t b, r, c; } mat_st;

static mat_st mat_strides(const et_tensor *t) {
  if (t->ndim == 2 && et_is_contiguous(t)) {   /* the usual case, without the general stride walk */
    mat_st m = {0, t->sizes[1], 1};
    return m;
  }
  ptrdiff_t st[ET_MAX_DIMS];
  et_tensor_strides(t, st);
  mat_st m = {0, 0, 0};
  if (t->ndim == 3) { m.b = st[0]; m.r = st[1]; m.c = st[2]; }
  else if (t->ndim == 2) { m.r = st[0]; m.c = st[1]; }
  else if (t->ndim == 1) { m.c = st[0]; }
  return m;
}

/* out[M,N] (contiguous rows, f32) = init + a[M,K] @ b[K,N]; row strides given, column stride 1 for
 * b and out on the fast path. init: a row of N added to every output row (the bias), or NULL. */
static void mm_f32_rows(float *o, ptrdiff_t ors, const float *a, mat_st as, const float *b, mat_st bs,
                        int32_t M, int32_t K, int32_t N, const float *init) {
#ifdef ET_MM_BLOCKS
  if (bs.c == 1 && as.c == 1) {
    for (int32_t m = 0; m < M; m++)
      for (int32_t n0 = 0; n0 < N; n0 += 16) {
        int32_t nn = N - n0 < 16 ? N - n0 : 16;
        float *op = o + (ptrdiff_t)m * ors + n0;
        const float *ap = a + (ptrdiff_t)m * as.r, *bp = b + n0, *ip = init ? init + n0 : NULL;
        switch (nn) {
          case 16: mm_block_4_0(op, ap, bp, bs.r, ip, K, nn); break;
          case 15: case 14: case 13: mm_block_3_1(op, ap, bp, bs.r, ip, K, nn); break;
          case 12: mm_block_3_0(op, ap, bp, bs.r, ip, K, nn); break;
          case 11: case 10: case 9: mm_block_2_1(op, ap, bp, bs.r, ip, K, nn); break;
          case 8: mm_block_2_0(op, ap, bp, bs.r, ip, K, nn); break;
          case 7: case 6: case 5: mm_block_1_1(op, ap, bp, bs.r, ip, K, nn); break;
          case 4: mm_block_1_0(op, ap, bp, bs.r, ip, K, nn); break;
          default: mm_block_0_1(op, ap, bp, bs.r, ip, K, nn); break;
        }
      }
    return;
  }
#endif
  for (int32_t m = 0; m < M; m++) {
    float *orow = o + (ptrdiff_t)m * ors;
    for (int32_t n = 0; n < N; n++) orow[n] = init ? init[n] : 0.0f;
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
                   int32_t N, const float *init) {
  mat_st as = mat_strides(a), bs = mat_strides(b), os = mat_strides(out);
  for (int32_t i = 0; i < B; i++) {
    if (all_f32(a, b, out) && os.c == 1) {
      mm_f32_rows((float *)out->data + i * os.b, os.r, (const float *)a->data + i * as.b, as,
                  (const float *)b->data + i * bs.b, bs, M, K, N, init);
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
  matmul(out, a, b, 1, a->sizes[0], a->sizes[1], b->sizes[1], NULL);
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
  matmul(out, a, b, a->sizes[0], a->sizes[1], a->sizes[2], b->sizes[2], NULL);
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
  /* The common addmm (a linear layer): f32, beta = alpha = 1, a contiguous bias row of N: the bias
   * starts the accumulators and no second pass runs. */
  if (beta == 1.0f && alpha == 1.0f && bias->dtype == ET_FLOAT && all_f32(a, b, out) && et_is_contiguous(out) &&
      et_numel(bias) == b->sizes[1] && bias->ndim >= 1 && bias->ndim <= 2 &&
      bias->sizes[bias->ndim - 1] == b->sizes[1] && et_is_contiguous(bias)) {
    matmul(out, a, b, 1, a->sizes[0], a->sizes[1], b->sizes[1], (const float *)bias->data);
    return ET_OK;
  }
  matmul(out, a, b, 1, a->sizes[0], a->sizes[1], b->sizes[1], NULL);
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
