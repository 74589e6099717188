/* aten::linear.out (weight [N, K]): dot products over K, several weight rows sharing each input load
 * (float32 fast path, any float dtype slow path). The matrix products mm, bmm, addmm are in linalg.c. */
#include "et_kernel.h"
#include "kernel_util.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#include <arm_mve.h>
#define LINEAR_MVE 1
#endif

static bool float_dt(const et_tensor *t) { return et_dtype_is_float(t->dtype); }

/* o[m*N + n] = bias[n] + sum_k x[m*K + k] * w[n*K + k], all contiguous float32. */
#ifdef LINEAR_MVE
/* Horizontal sum of the 4 lanes (MVE has no float add-across-vector). */
static inline float hsum(float32x4_t v) {
  return (vgetq_lane_f32(v, 0) + vgetq_lane_f32(v, 1)) + (vgetq_lane_f32(v, 2) + vgetq_lane_f32(v, 3));
}

static void linear_f32(float *o, const float *x, const float *w, const float *bias, int32_t M, int32_t K,
                       int32_t N) {
  const int32_t kfull = K & ~3;
  const mve_pred16_t pk = vctp32q((uint32_t)(K & 3));
  for (int32_t m = 0; m < M; m++, x += K, o += N) {
    int32_t n = 0;
    /* 4 weight rows at a time share each input vector */
    for (; n + 4 <= N; n += 4) {
      const float *w0 = w + (ptrdiff_t)n * K, *w1 = w0 + K, *w2 = w1 + K, *w3 = w2 + K, *xp = x;
      float32x4_t c0 = vdupq_n_f32(0.0f), c1 = c0, c2 = c0, c3 = c0;
      /* pointers stepped by 4: post-incremented loads, no address arithmetic in the loop */
      for (int32_t k = 0; k < kfull; k += 4, xp += 4, w0 += 4, w1 += 4, w2 += 4, w3 += 4) {
        const float32x4_t xv = vld1q_f32(xp);
        c0 = vfmaq_f32(c0, xv, vld1q_f32(w0));
        c1 = vfmaq_f32(c1, xv, vld1q_f32(w1));
        c2 = vfmaq_f32(c2, xv, vld1q_f32(w2));
        c3 = vfmaq_f32(c3, xv, vld1q_f32(w3));
      }
      if (kfull < K) {  /* inactive lanes load as 0 in both operands: they add 0 */
        const float32x4_t xv = vldrwq_z_f32(xp, pk);
        c0 = vfmaq_f32(c0, xv, vldrwq_z_f32(w0, pk));
        c1 = vfmaq_f32(c1, xv, vldrwq_z_f32(w1, pk));
        c2 = vfmaq_f32(c2, xv, vldrwq_z_f32(w2, pk));
        c3 = vfmaq_f32(c3, xv, vldrwq_z_f32(w3, pk));
      }
      float s0 = hsum(c0), s1 = hsum(c1), s2 = hsum(c2), s3 = hsum(c3);
      if (bias) { s0 += bias[n]; s1 += bias[n + 1]; s2 += bias[n + 2]; s3 += bias[n + 3]; }
      o[n] = s0; o[n + 1] = s1; o[n + 2] = s2; o[n + 3] = s3;
    }
    for (; n < N; n++) {
      const float *w0 = w + (ptrdiff_t)n * K;
      float32x4_t c0 = vdupq_n_f32(0.0f);
      int32_t k = 0;
      for (; k < kfull; k += 4) c0 = vfmaq_f32(c0, vld1q_f32(x + k), vld1q_f32(w0 + k));
      if (k < K) c0 = vfmaq_f32(c0, vldrwq_z_f32(x + k, pk), vldrwq_z_f32(w0 + k, pk));
      float s = hsum(c0);
      if (bias) s += bias[n];
      o[n] = s;
    }
  }
}
#else
static void linear_f32(float *o, const float *x, const float *w, const float *bias, int32_t M, int32_t K,
                       int32_t N) {
  for (int32_t m = 0; m < M; m++, x += K, o += N) {
    int32_t n = 0;
    /* 2 weight rows share each input load; 2 partial sums per row (independent adds) */
    for (; n + 2 <= N; n += 2) {
      const float *w0 = w + (ptrdiff_t)n * K, *w1 = w0 + K;
      float p0 = 0.0f, p1 = 0.0f, q0 = 0.0f, q1 = 0.0f;
      int32_t k = 0;
      for (; k + 2 <= K; k += 2) {
        const float x0 = x[k], x1 = x[k + 1];
        p0 += x0 * w0[k]; p1 += x1 * w0[k + 1];
        q0 += x0 * w1[k]; q1 += x1 * w1[k + 1];
      }
      if (k < K) { p0 += x[k] * w0[k]; q0 += x[k] * w1[k]; }
      float s0 = p0 + p1, s1 = q0 + q1;
      if (bias) { s0 += bias[n]; s1 += bias[n + 1]; }
      o[n] = s0; o[n + 1] = s1;
    }
    if (n < N) {
      const float *w0 = w + (ptrdiff_t)n * K;
      float p0 = 0.0f, p1 = 0.0f;
      int32_t k = 0;
      for (; k + 2 <= K; k += 2) { p0 += x[k] * w0[k]; p1 += x[k + 1] * w0[k + 1]; }
      if (k < K) p0 += x[k] * w0[k];
      float s = p0 + p1;
      if (bias) s += bias[n];
      o[n] = s;
    }
  }
}
#endif

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
  if (in->dtype == ET_FLOAT && w->dtype == ET_FLOAT && out->dtype == ET_FLOAT && (!bias || bias->dtype == ET_FLOAT)) {
    linear_f32((float *)out->data, (const float *)in->data, (const float *)w->data,
               bias ? (const float *)bias->data : NULL, M, K, N);
    return ET_OK;
  }
  for (int32_t m = 0; m < M; m++)
    for (int32_t n = 0; n < N; n++) {
      float s = 0.0f;
      for (int32_t k = 0; k < K; k++) s += et_load_f(in, (int64_t)m * K + k) * et_load_f(w, (int64_t)n * K + k);
      if (bias) s += et_load_f(bias, n);
      et_store_f(out, (int64_t)m * N + n, s);
    }
  return ET_OK;
}
