/* aten::convolution.out: direct 1-d / 2-d convolution, float32, any stride / padding / dilation /
 * groups (depthwise included), optional bias, any dim order (NCHW contiguous is the fast path).
 * No scratch: every (in-channel, kh, kw) tap adds a scaled input row into the output row, so the
 * inner loop is a contiguous AXPY over output columns (vectorises with MVE / NEON). */
#include "et_kernel.h"
#include "kernel_util.h"

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

typedef struct {
  int32_t N, C, H, W, O, KH, KW, OH, OW, G;
  int32_t sh, sw, ph, pw, dh, dw;
  ptrdiff_t is[4], ws[4], os[4]; /* element strides in (n, c, h, w) order */
} conv_geo;

static bool get_pair(const et_value *v, uint32_t nsp, int32_t *out, int32_t dflt) {
  uint32_t len;
  if (!v || v->tag != ET_TAG_INT_LIST) return false;
  const int64_t *p = et_int_list(v, &len);
  if (len == 0) { out[0] = out[1] = dflt; return true; }
  if (nsp == 1) { out[0] = dflt == 0 ? 0 : 1; out[1] = (int32_t)p[0]; return len == 1; }
  if (len == 1) { out[0] = out[1] = (int32_t)p[0]; return true; }
  out[0] = (int32_t)p[0]; out[1] = (int32_t)p[1];
  return len == 2;
}

/* strides of t in (n, c, h, w) order; a 3-d tensor gets h stride 0 (h == 1) */
static void nchw_strides(const et_tensor *t, ptrdiff_t *s) {
  ptrdiff_t st[ET_MAX_DIMS];
  et_tensor_strides(t, st);
  if (t->ndim == 4) { s[0] = st[0]; s[1] = st[1]; s[2] = st[2]; s[3] = st[3]; }
  else { s[0] = st[0]; s[1] = st[1]; s[2] = 0; s[3] = st[2]; }
}

/* first and one-past-last output column whose input column ow*s + off lies in [0, W) */
static void col_range(int32_t off, int32_t s, int32_t W, int32_t OW, int32_t *lo, int32_t *hi) {
  int32_t a = 0;
  if (off < 0) a = (-off + s - 1) / s;
  int32_t b = (W - 1 - off) >= 0 ? (W - 1 - off) / s + 1 : 0;
  if (b > OW) b = OW;
  if (a > b) a = b;
  *lo = a; *hi = b;
}

static void conv_f32(const conv_geo *g, const float *x, const float *w, const float *bias, float *y) {
  const int32_t cpg = g->C / g->G, opg = g->O / g->G;
  for (int32_t n = 0; n < g->N; n++) {
    for (int32_t oc = 0; oc < g->O; oc++) {
      float *yo = y + n * g->os[0] + oc * g->os[1];
      const float b = bias ? bias[oc] : 0.0f;
      for (int32_t oh = 0; oh < g->OH; oh++)
        for (int32_t ow = 0; ow < g->OW; ow++) yo[oh * g->os[2] + ow * g->os[3]] = b;
      const int32_t c0 = (oc / opg) * cpg;
      for (int32_t ci = 0; ci < cpg; ci++) {
        const float *xc = x + n * g->is[0] + (c0 + ci) * g->is[1];
        for (int32_t kh = 0; kh < g->KH; kh++) {
          for (int32_t kw = 0; kw < g->KW; kw++) {
            const float wv = w[oc * g->ws[0] + ci * g->ws[1] + kh * g->ws[2] + kw * g->ws[3]];
            const int32_t coff = kw * g->dw - g->pw;
            int32_t lo, hi;
            col_range(coff, g->sw, g->W, g->OW, &lo, &hi);
            if (lo >= hi) continue;
            for (int32_t oh = 0; oh < g->OH; oh++) {
              const int32_t ih = oh * g->sh - g->ph + kh * g->dh;
              if (ih < 0 || ih >= g->H) continue;
              float *yr = yo + oh * g->os[2];
              const float *xr = xc + ih * g->is[2];
              if (g->os[3] == 1 && g->is[3] == 1 && g->sw == 1) {
                axpy_f32(yr + lo, xr + lo + coff, wv, hi - lo);
              } else {
                for (int32_t ow = lo; ow < hi; ow++)
                  yr[ow * g->os[3]] += wv * xr[(ow * g->sw + coff) * g->is[3]];
              }
            }
          }
        }
      }
    }
  }
}

/* convolution.out(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding,
 *   SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, *, Tensor(a!) out) */
ET_OP("aten::convolution.out", k_aten_convolution_out) {
  ET_CHECK_ARGS(10);
  et_tensor *in, *wt, *out, *bias = NULL;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) || (st = et_arg_tensor(ctx, args, 1, &wt)) ||
      (st = et_arg_tensor(ctx, args, 9, &out))) return st;
  if (!et_is_none(args[2]) && (st = et_arg_tensor(ctx, args, 2, &bias))) return st;
  if (args[6]->tag != ET_TAG_BOOL || args[6]->u.b) { ctx->err_detail = 6; return ET_ERR_UNSUPPORTED; }
  uint32_t nd = in->ndim;
  if ((nd != 3 && nd != 4) || wt->ndim != nd) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  if (in->dtype != ET_FLOAT || wt->dtype != ET_FLOAT || out->dtype != ET_FLOAT ||
      (bias && bias->dtype != ET_FLOAT)) { ctx->err_detail = 0; return ET_ERR_UNSUPPORTED; }
  uint32_t nsp = nd - 2;
  conv_geo g;
  int32_t s[2], p[2], d[2];
  if (!get_pair(args[3], nsp, s, 1)) { ctx->err_detail = 3; return ET_ERR_INVALID_ARGUMENT; }
  if (!get_pair(args[4], nsp, p, 0)) { ctx->err_detail = 4; return ET_ERR_INVALID_ARGUMENT; }
  if (!get_pair(args[5], nsp, d, 1)) { ctx->err_detail = 5; return ET_ERR_INVALID_ARGUMENT; }
  g.sh = s[0]; g.sw = s[1]; g.ph = p[0]; g.pw = p[1]; g.dh = d[0]; g.dw = d[1];
  g.G = (int32_t)et_value_as_int(args[8]);
  g.N = in->sizes[0]; g.C = in->sizes[1];
  g.H = nd == 4 ? in->sizes[2] : 1; g.W = in->sizes[nd - 1];
  g.O = wt->sizes[0];
  g.KH = nd == 4 ? wt->sizes[2] : 1; g.KW = wt->sizes[nd - 1];
  if (g.G <= 0 || g.C % g.G || g.O % g.G || wt->sizes[1] * g.G != g.C || g.sh <= 0 || g.sw <= 0 ||
      g.dh <= 0 || g.dw <= 0 || g.ph < 0 || g.pw < 0 || (bias && et_numel(bias) != g.O)) {
    ctx->err_detail = 8; return ET_ERR_INVALID_ARGUMENT;
  }
  g.OH = (g.H + 2 * g.ph - g.dh * (g.KH - 1) - 1) / g.sh + 1;
  g.OW = (g.W + 2 * g.pw - g.dw * (g.KW - 1) - 1) / g.sw + 1;
  if (g.OH <= 0 || g.OW <= 0) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  int32_t os[4] = {g.N, g.O, g.OH, g.OW};
  if (nd == 3) os[2] = g.OW;
  if ((st = et_resize(out, nd, os)) != ET_OK) { ctx->err_detail = 9; return st; }
  if (bias && !et_is_contiguous(bias)) { ctx->err_detail = 2; return ET_ERR_UNSUPPORTED; }
  nchw_strides(in, g.is);
  nchw_strides(wt, g.ws);
  nchw_strides(out, g.os);
  if (et_numel(out) == 0) return ET_OK;
  conv_f32(&g, (const float *)in->data, (const float *)wt->data, bias ? (const float *)bias->data : NULL,
           (float *)out->data);
  return ET_OK;
}
