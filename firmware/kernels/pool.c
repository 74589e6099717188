/* 2-d pooling (float32, 3-d CHW or 4-d NCHW, any dim order): max_pool2d_with_indices,
 * avg_pool2d (ceil_mode, count_include_pad, divisor_override), _adaptive_avg_pool2d. */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#include <arm_mve.h>
#endif

typedef struct {
  int32_t N, C, H, W, OH, OW;
  ptrdiff_t is[4], os[4]; /* (n, c, h, w) element strides */
} pool_geo;

static bool pair_arg(const et_value *v, int32_t *out, bool empty_ok) {
  uint32_t len;
  if (!v || v->tag != ET_TAG_INT_LIST) return false;
  const int64_t *p = et_int_list(v, &len);
  if (len == 0) return empty_ok;
  out[0] = (int32_t)p[0];
  out[1] = (int32_t)(len >= 2 ? p[1] : p[0]);
  return len <= 2;
}

static void pstrides(const et_tensor *t, ptrdiff_t *s) {
  ptrdiff_t st[ET_MAX_DIMS];
  et_tensor_strides(t, st);
  if (t->ndim == 4) { s[0] = st[0]; s[1] = st[1]; s[2] = st[2]; s[3] = st[3]; }
  else { s[0] = 0; s[1] = st[0]; s[2] = st[1]; s[3] = st[2]; }
}

static et_status geo_setup(et_kctx *ctx, pool_geo *g, et_tensor *in, et_tensor *out, uint32_t oi) {
  if (in->ndim != 3 && in->ndim != 4) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  uint32_t b = in->ndim - 3;
  g->N = b ? in->sizes[0] : 1;
  g->C = in->sizes[b]; g->H = in->sizes[b + 1]; g->W = in->sizes[b + 2];
  int32_t os[4];
  if (b) os[0] = g->N;
  os[b] = g->C; os[b + 1] = g->OH; os[b + 2] = g->OW;
  et_status st = et_resize(out, in->ndim, os);
  if (st != ET_OK) { ctx->err_detail = oi; return st; }
  pstrides(in, g->is);
  pstrides(out, g->os);
  return ET_OK;
}

/* max_pool2d over n whole windows of one output row: taps at xw + toff[t] (flat index base + tidx[t]),
 * windows xs apart (index step is), outputs ys / is_ apart. Tap 0 starts the max: the scalar loop's
 * -inf start is always replaced by it or keeps the index it starts with. */
__attribute__((noinline)) static void maxpool_whole(float *y, ptrdiff_t ys, int64_t *yi, ptrdiff_t yis,
                                                    const float *xw, ptrdiff_t xs, int64_t base, int32_t is,
                                                    int32_t n, const ptrdiff_t *toff, const int32_t *tidx, int32_t T) {
  int32_t j = 0;
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
  /* four windows a step on Helium (the taps gathered xs apart), each lane the loop's comparisons below */
  if (xs > 0 && xs <= 0x3FFFFFFF / 4) {
    const uint32x4_t off = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)xs);
    for (; j + 4 <= n; j += 4, xw += 4 * xs, y += 4 * ys, yi += 4 * yis, base += 4 * (int64_t)is) {
      float32x4_t m = vldrwq_gather_shifted_offset_f32(xw, off);
      int32x4_t mt = vdupq_n_s32(0);
      for (int32_t t = 1; t < T; t++) {
        const float32x4_t v = vldrwq_gather_shifted_offset_f32(xw + toff[t], off);
        const mve_pred16_t pr = vcmpgtq_f32(v, m) | vcmpneq_f32(v, v);
        m = vpselq_f32(v, m, pr);
        mt = vpselq_s32(vdupq_n_s32(t), mt, pr);
      }
      float mv[4];
      int32_t tv[4];
      vst1q_f32(mv, m);
      vst1q_s32(tv, mt);
      for (int32_t l = 0; l < 4; l++) {
        y[l * ys] = mv[l];
        yi[l * yis] = base + (int64_t)l * is + tidx[tv[l]];
      }
    }
  }
#endif
  for (; j < n; j++, xw += xs, y += ys, yi += yis, base += is) {
    float m = xw[0];
    int32_t mt = 0;
    for (int32_t t = 1; t < T; t++) {
      const float v = xw[toff[t]];
      if (v > m || v != v) { m = v; mt = t; }  /* a NaN wins (the last one), as in the scalar loop */
    }
    *y = m;
    *yi = base + tidx[mt];
  }
}

/* max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0,
 *   int[2] dilation=1, bool ceil_mode=False, *, Tensor(a!) out, Tensor(b!) indices) */
ET_OP("aten::max_pool2d_with_indices.out", k_aten_max_pool2d_with_indices_out) {
  ET_CHECK_ARGS(8);
  et_tensor *in, *out, *idx;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) || (st = et_arg_tensor(ctx, args, 6, &out)) ||
      (st = et_arg_tensor(ctx, args, 7, &idx))) return st;
  int32_t k[2], s[2], p[2] = {0, 0}, d[2] = {1, 1};
  if (!pair_arg(args[1], k, false)) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  s[0] = k[0]; s[1] = k[1];
  if (!pair_arg(args[2], s, true)) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  if (!pair_arg(args[3], p, true)) { ctx->err_detail = 3; return ET_ERR_INVALID_ARGUMENT; }
  if (!pair_arg(args[4], d, true)) { ctx->err_detail = 4; return ET_ERR_INVALID_ARGUMENT; }
  bool ceil = args[5]->tag == ET_TAG_BOOL && args[5]->u.b;
  if (k[0] <= 0 || k[1] <= 0 || s[0] <= 0 || s[1] <= 0 || d[0] <= 0 || d[1] <= 0 || p[0] < 0 || p[1] < 0 ||
      p[0] > k[0] / 2 || p[1] > k[1] / 2) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (in->dtype != ET_FLOAT || out->dtype != ET_FLOAT || idx->dtype != ET_LONG) {
    ctx->err_detail = 0; return ET_ERR_UNSUPPORTED;
  }
  pool_geo g;
  uint32_t b = in->ndim >= 3 ? in->ndim - 3 : 0;
  if (in->ndim < 3) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  g.OH = et_pool_out_size(in->sizes[b + 1], k[0], p[0], s[0], d[0], ceil);
  g.OW = et_pool_out_size(in->sizes[b + 2], k[1], p[1], s[1], d[1], ceil);
  if ((st = geo_setup(ctx, &g, in, out, 6)) != ET_OK) return st;
  if ((st = et_resize_like(idx, out)) != ET_OK) { ctx->err_detail = 7; return st; }
  ptrdiff_t xs[4];
  pstrides(idx, xs);
  const float *x = (const float *)in->data;
  float *y = (float *)out->data;
  int64_t *yi = (int64_t *)idx->data;
  /* whole windows (the usual case) read taps from one list of offsets and flat-index steps */
  const int32_t T = k[0] * k[1];
  ptrdiff_t toff[16];
  int32_t tidx[16];
  const bool listed = T <= 16;
  for (int32_t t = 0; listed && t < T; t++) {
    const int32_t kh = t / k[1], kw = t % k[1];
    toff[t] = (ptrdiff_t)kh * d[0] * g.is[2] + (ptrdiff_t)kw * d[1] * g.is[3];
    tidx[t] = kh * d[0] * g.W + kw * d[1];
  }
  const int32_t hlast = (k[0] - 1) * d[0], wlast = (k[1] - 1) * d[1];
  /* output columns [owa, owb) have whole windows along w */
  int32_t owa = (p[1] + s[1] - 1) / s[1], owb = g.W - 1 - wlast + p[1] >= 0 ? (g.W - 1 - wlast + p[1]) / s[1] + 1 : 0;
  if (owb > g.OW) owb = g.OW;
  if (owa > owb) owa = owb;
  for (int32_t n = 0; n < g.N; n++)
    for (int32_t c = 0; c < g.C; c++) {
      const float *xc = x + n * g.is[0] + c * g.is[1];
      for (int32_t oh = 0; oh < g.OH; oh++) {
        const int32_t h0r = oh * s[0] - p[0];
        const bool rows_in = listed && h0r >= 0 && h0r + hlast < g.H;
        for (int32_t ow = 0; ow < g.OW; ow++) {
          if (rows_in && ow == owa && owa < owb) {
            const int32_t w0 = owa * s[1] - p[1];
            maxpool_whole(y + n * g.os[0] + c * g.os[1] + oh * g.os[2] + owa * g.os[3], g.os[3],
                          yi + n * xs[0] + c * xs[1] + oh * xs[2] + owa * xs[3], xs[3],
                          xc + h0r * g.is[2] + w0 * g.is[3], (ptrdiff_t)s[1] * g.is[3], (int64_t)h0r * g.W + w0, s[1],
                          owb - owa, toff, tidx, T);
            ow = owb - 1;
            continue;
          }
          int32_t h0 = h0r, w0 = ow * s[1] - p[1];
          int32_t h1 = h0 + (k[0] - 1) * d[0] + 1, w1 = w0 + (k[1] - 1) * d[1] + 1;
          if (h1 > g.H) h1 = g.H;
          if (w1 > g.W) w1 = g.W;
          while (h0 < 0) h0 += d[0];
          while (w0 < 0) w0 += d[1];
          float m = -ET_INFINITY;
          int64_t mi = (int64_t)h0 * g.W + w0;
          for (int32_t ih = h0; ih < h1; ih += d[0])
            for (int32_t iw = w0; iw < w1; iw += d[1]) {
              float v = xc[ih * g.is[2] + iw * g.is[3]];
              if (v > m || v != v) { m = v; mi = (int64_t)ih * g.W + iw; }
            }
          y[n * g.os[0] + c * g.os[1] + oh * g.os[2] + ow * g.os[3]] = m;
          yi[n * xs[0] + c * xs[1] + oh * xs[2] + ow * xs[3]] = mi;
        }
      }
    }
  return ET_OK;
}

/* avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0,
 *   bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, Tensor(a!) out) */
ET_OP("aten::avg_pool2d.out", k_aten_avg_pool2d_out) {
  ET_CHECK_ARGS(8);
  et_tensor *in, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) || (st = et_arg_tensor(ctx, args, 7, &out))) return st;
  int32_t k[2], s[2], p[2] = {0, 0};
  if (!pair_arg(args[1], k, false)) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  s[0] = k[0]; s[1] = k[1];
  if (!pair_arg(args[2], s, true)) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  if (!pair_arg(args[3], p, true)) { ctx->err_detail = 3; return ET_ERR_INVALID_ARGUMENT; }
  bool ceil = args[4]->tag == ET_TAG_BOOL && args[4]->u.b;
  bool incl = !(args[5]->tag == ET_TAG_BOOL && !args[5]->u.b);
  int32_t divisor = 0;
  if (!et_is_none(args[6])) {
    divisor = (int32_t)et_value_as_int(args[6]);
    if (divisor == 0) { ctx->err_detail = 6; return ET_ERR_INVALID_ARGUMENT; }
  }
  if (k[0] <= 0 || k[1] <= 0 || s[0] <= 0 || s[1] <= 0 || p[0] < 0 || p[1] < 0 || p[0] > k[0] / 2 ||
      p[1] > k[1] / 2) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (in->dtype != ET_FLOAT || out->dtype != ET_FLOAT) { ctx->err_detail = 0; return ET_ERR_UNSUPPORTED; }
  if (in->ndim < 3) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  uint32_t b = in->ndim - 3;
  pool_geo g;
  g.OH = et_pool_out_size(in->sizes[b + 1], k[0], p[0], s[0], 1, ceil);
  g.OW = et_pool_out_size(in->sizes[b + 2], k[1], p[1], s[1], 1, ceil);
  if ((st = geo_setup(ctx, &g, in, out, 7)) != ET_OK) return st;
  const float *x = (const float *)in->data;
  float *y = (float *)out->data;
  for (int32_t n = 0; n < g.N; n++)
    for (int32_t c = 0; c < g.C; c++) {
      const float *xc = x + n * g.is[0] + c * g.is[1];
      for (int32_t oh = 0; oh < g.OH; oh++)
        for (int32_t ow = 0; ow < g.OW; ow++) {
          int32_t h0 = oh * s[0] - p[0], w0 = ow * s[1] - p[1];
          int32_t h1 = h0 + k[0], w1 = w0 + k[1];
          if (h1 > g.H + p[0]) h1 = g.H + p[0];
          if (w1 > g.W + p[1]) w1 = g.W + p[1];
          int32_t pool_size = (h1 - h0) * (w1 - w0);
          if (h0 < 0) h0 = 0;
          if (w0 < 0) w0 = 0;
          if (h1 > g.H) h1 = g.H;
          if (w1 > g.W) w1 = g.W;
          float v = 0.0f;
          if (h0 < h1 && w0 < w1) {
            float sum = 0.0f;
            for (int32_t ih = h0; ih < h1; ih++)
              for (int32_t iw = w0; iw < w1; iw++) sum += xc[ih * g.is[2] + iw * g.is[3]];
            int32_t div = divisor ? divisor : incl ? pool_size : (h1 - h0) * (w1 - w0);
            v = sum / (float)div;
          }
          y[n * g.os[0] + c * g.os[1] + oh * g.os[2] + ow * g.os[3]] = v;
        }
    }
  return ET_OK;
}

/* _adaptive_avg_pool2d.out(Tensor self, SymInt[2] output_size, *, Tensor(a!) out) */
ET_OP("aten::_adaptive_avg_pool2d.out", k_aten__adaptive_avg_pool2d_out) {
  ET_CHECK_ARGS(3);
  et_tensor *in, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) || (st = et_arg_tensor(ctx, args, 2, &out))) return st;
  int32_t o[2];
  if (!pair_arg(args[1], o, false) || o[0] <= 0 || o[1] <= 0) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (in->dtype != ET_FLOAT || out->dtype != ET_FLOAT) { ctx->err_detail = 0; return ET_ERR_UNSUPPORTED; }
  if (in->ndim < 3) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  pool_geo g;
  g.OH = o[0]; g.OW = o[1];
  if ((st = geo_setup(ctx, &g, in, out, 2)) != ET_OK) return st;
  const float *x = (const float *)in->data;
  float *y = (float *)out->data;
  for (int32_t n = 0; n < g.N; n++)
    for (int32_t c = 0; c < g.C; c++) {
      const float *xc = x + n * g.is[0] + c * g.is[1];
      for (int32_t oh = 0; oh < g.OH; oh++) {
        int32_t h0 = (int32_t)(((int64_t)oh * g.H) / g.OH);
        int32_t h1 = (int32_t)((((int64_t)oh + 1) * g.H + g.OH - 1) / g.OH);
        for (int32_t ow = 0; ow < g.OW; ow++) {
          int32_t w0 = (int32_t)(((int64_t)ow * g.W) / g.OW);
          int32_t w1 = (int32_t)((((int64_t)ow + 1) * g.W + g.OW - 1) / g.OW);
          float sum = 0.0f;
          for (int32_t ih = h0; ih < h1; ih++)
            for (int32_t iw = w0; iw < w1; iw++) sum += xc[ih * g.is[2] + iw * g.is[3]];
          int32_t cnt = (h1 - h0) * (w1 - w0);   /* 0 only for an empty input, whose sum is 0 */
          /* the division unconditional: GCC 12 at -Os put a conditional vcvt (an IT block) that the M55's
           * assembler rejects */
          y[n * g.os[0] + c * g.os[1] + oh * g.os[2] + ow * g.os[3]] = sum / (float)(cnt > 0 ? cnt : 1);
        }
      }
    }
  return ET_OK;
}
