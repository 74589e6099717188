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

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
/* Helium, unit column stride and dilation, NCHW-contiguous output rows, small planes: each input
 * channel is first copied into a zero-padded plane on the stack (any input layout), so every tap
 * is an unpredicated load. A chunk of up to 16 output columns of one output channel stays in
 * registers over all KH x KW taps: per tap one weight load, then a load and an FMA per vector. */
#define CONV_PAD_MAX 1024      /* floats of padded plane on the stack (4 KB) */
#define CONV_TAPS_MAX 64
typedef struct {
  const float *plane;          /* padded input plane, row stride rs */
  int32_t rs, sh, dh, KH, KW, OH;
  ptrdiff_t ors;               /* output row stride */
} conv_pad;

#define KH_DONE(yr, a0, a1, a2, a3, ps) \
  do { vst1q_f32(yr, a0); vst1q_f32(yr + 4, a1); vst1q_f32(yr + 8, a2); vst1q_p_f32(yr + 12, a3, ps); } while (0)
static inline __attribute__((always_inline)) void conv_chunk(const conv_pad *c, const float *wt, float *yo,
                                                             int32_t ow0, int32_t nn, bool first, float b, int NV,
                                                             int K3) {
  const mve_pred16_t ps = vctp32q((uint32_t)(nn - 4 * (NV - 1)));
  const int32_t KH = K3 ? 3 : c->KH, KW = K3 ? 3 : c->KW;   /* 3 x 3: all nine taps unrolled */
  for (int32_t oh = 0; oh < c->OH; oh++) {
    float *yr = yo + oh * c->ors + ow0;
    float32x4_t a0, a1, a2, a3;
    a0 = a1 = a2 = a3 = vdupq_n_f32(b);
    if (!first) {   /* later input channels of a group add to what the earlier ones left */
      a0 = NV > 1 ? vld1q_f32(yr) : vld1q_z_f32(yr, ps);
      if (NV > 1) a1 = NV > 2 ? vld1q_f32(yr + 4) : vld1q_z_f32(yr + 4, ps);
      if (NV > 2) a2 = NV > 3 ? vld1q_f32(yr + 8) : vld1q_z_f32(yr + 8, ps);
      if (NV > 3) a3 = vld1q_z_f32(yr + 12, ps);
    }
    const float *row = c->plane + oh * c->sh * c->rs + ow0;
    const float *wp = wt;
    if (K3 && NV == 4) {
      /* 3 x 3 over 16 columns: GCC 12 spills the 36 load addresses of the unrolled C to the stack;
       * written out, each tap row is 3 weight loads, 12 loads with immediate offsets, 12 FMAs. */
      const ptrdiff_t rstep = (ptrdiff_t)c->dh * c->rs * 4;
      for (int32_t kh = 0; kh < 3; kh++, row = (const float *)((const char *)row + rstep), wp += 3) {
        float32x4_t t;
        float w0, w1, w2;
        __asm__("ldr %[w0], [%[wp]]\n\t"
                "ldr %[w1], [%[wp], #4]\n\t"
                "ldr %[w2], [%[wp], #8]\n\t"
                "vldrw.u32 %q[t], [%[x]]\n\t"        "vfma.f32 %q[a0], %q[t], %[w0]\n\t"
                "vldrw.u32 %q[t], [%[x], #16]\n\t"   "vfma.f32 %q[a1], %q[t], %[w0]\n\t"
                "vldrw.u32 %q[t], [%[x], #32]\n\t"   "vfma.f32 %q[a2], %q[t], %[w0]\n\t"
                "vldrw.u32 %q[t], [%[x], #48]\n\t"   "vfma.f32 %q[a3], %q[t], %[w0]\n\t"
                "vldrw.u32 %q[t], [%[x], #4]\n\t"    "vfma.f32 %q[a0], %q[t], %[w1]\n\t"
                "vldrw.u32 %q[t], [%[x], #20]\n\t"   "vfma.f32 %q[a1], %q[t], %[w1]\n\t"
                "vldrw.u32 %q[t], [%[x], #36]\n\t"   "vfma.f32 %q[a2], %q[t], %[w1]\n\t"
                "vldrw.u32 %q[t], [%[x], #52]\n\t"   "vfma.f32 %q[a3], %q[t], %[w1]\n\t"
                "vldrw.u32 %q[t], [%[x], #8]\n\t"    "vfma.f32 %q[a0], %q[t], %[w2]\n\t"
                "vldrw.u32 %q[t], [%[x], #24]\n\t"   "vfma.f32 %q[a1], %q[t], %[w2]\n\t"
                "vldrw.u32 %q[t], [%[x], #40]\n\t"   "vfma.f32 %q[a2], %q[t], %[w2]\n\t"
                "vldrw.u32 %q[t], [%[x], #56]\n\t"   "vfma.f32 %q[a3], %q[t], %[w2]"
                : [a0] "+w"(a0), [a1] "+w"(a1), [a2] "+w"(a2), [a3] "+w"(a3), [t] "=&w"(t),
                  [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2)
                : [x] "r"(row), [wp] "r"(wp)
                : "memory");
      }
      KH_DONE(yr, a0, a1, a2, a3, ps);
      continue;
    }
    for (int32_t kh = 0; kh < KH; kh++, row += c->dh * c->rs) {
      const float *xp = row;
      for (int32_t kw = 0; kw < KW; kw++, xp++) {
        const float wv = *wp++;
        a0 = vfmaq_n_f32(a0, vld1q_f32(xp), wv);
        if (NV > 1) a1 = vfmaq_n_f32(a1, vld1q_f32(xp + 4), wv);
        if (NV > 2) a2 = vfmaq_n_f32(a2, vld1q_f32(xp + 8), wv);
        if (NV > 3) a3 = vfmaq_n_f32(a3, vld1q_f32(xp + 12), wv);
      }
    }
    if (NV == 1) vst1q_p_f32(yr, a0, ps);
    if (NV == 2) { vst1q_f32(yr, a0); vst1q_p_f32(yr + 4, a1, ps); }
    if (NV == 3) { vst1q_f32(yr, a0); vst1q_f32(yr + 4, a1); vst1q_p_f32(yr + 8, a2, ps); }
    if (NV == 4) KH_DONE(yr, a0, a1, a2, a3, ps);
  }
}
/* out of line per width: the tap loop gets the registers to itself */
#define CONV_CHUNK(NV, K3) \
  static __attribute__((noinline)) void conv_chunk_##NV##_##K3(const conv_pad *c, const float *wt, float *yo, \
                                                               int32_t ow0, int32_t nn, bool first, float b) { \
    conv_chunk(c, wt, yo, ow0, nn, first, b, NV, K3); \
  }
CONV_CHUNK(1, 0) CONV_CHUNK(2, 0) CONV_CHUNK(3, 0) CONV_CHUNK(4, 0)
CONV_CHUNK(1, 1) CONV_CHUNK(2, 1) CONV_CHUNK(3, 1) CONV_CHUNK(4, 1)
typedef void (*conv_chunk_fn)(const conv_pad *, const float *, float *, int32_t, int32_t, bool, float);
static const conv_chunk_fn conv_chunks[2][4] = {{conv_chunk_1_0, conv_chunk_2_0, conv_chunk_3_0, conv_chunk_4_0},
                                                {conv_chunk_1_1, conv_chunk_2_1, conv_chunk_3_1, conv_chunk_4_1}};

/* y[0:n) = 0 and y[0:n) = x[0:n*xs:xs), four lanes at a time */
static void fill0_f32(float *y, int32_t n) {
  for (int32_t i = 0; i < n; i += 4) vst1q_p_f32(y + i, vdupq_n_f32(0.0f), vctp32q((uint32_t)(n - i)));
}
static void copy_f32(float *y, const float *x, int32_t n, ptrdiff_t xs) {
  if (xs != 1) { for (int32_t i = 0; i < n; i++) y[i] = x[i * xs]; return; }
  for (int32_t i = 0; i < n; i += 4) {
    mve_pred16_t p = vctp32q((uint32_t)(n - i));
    vst1q_p_f32(y + i, vld1q_z_f32(x + i, p), p);
  }
}

static bool conv_f32_mve(const conv_geo *g, const float *x, const float *w, const float *bias, float *y) {
  const int32_t rs = g->W + 2 * g->pw + 4, rows = g->H + 2 * g->ph;   /* +4: the last vector's spare lanes */
  if (g->sw != 1 || g->dw != 1 || g->os[3] != 1 || (int64_t)rs * rows > CONV_PAD_MAX ||
      g->KH * g->KW > CONV_TAPS_MAX) return false;
  float plane[CONV_PAD_MAX], wt[CONV_TAPS_MAX];
  const int32_t cpg = g->C / g->G, opg = g->O / g->G;
  conv_pad c = {plane, rs, g->sh, g->dh, g->KH, g->KW, g->OH, g->os[2]};
  fill0_f32(plane, rs * rows);
  const bool k3 = g->KH == 3 && g->KW == 3;
  for (int32_t n = 0; n < g->N; n++)
    for (int32_t ic = 0; ic < g->C; ic++) {
      const float *xc = x + n * g->is[0] + ic * g->is[1];
      for (int32_t ih = 0; ih < g->H; ih++) {
        float *pr = plane + (ih + g->ph) * rs + g->pw;
        const float *xr = xc + ih * g->is[2];
        copy_f32(pr, xr, g->W, g->is[3]);
      }
      const int32_t grp = ic / cpg, ci = ic % cpg;
      for (int32_t oc = grp * opg; oc < (grp + 1) * opg; oc++) {
        float *yo = y + n * g->os[0] + oc * g->os[1];
        for (int32_t kh = 0; kh < g->KH; kh++)
          for (int32_t kw = 0; kw < g->KW; kw++)
            wt[kh * g->KW + kw] = w[oc * g->ws[0] + ci * g->ws[1] + kh * g->ws[2] + kw * g->ws[3]];
        const float b = bias ? bias[oc] : 0.0f;
        for (int32_t ow0 = 0; ow0 < g->OW; ow0 += 16) {
          const int32_t nn = g->OW - ow0 < 16 ? g->OW - ow0 : 16;
          conv_chunks[k3][(nn + 3) / 4 - 1](&c, wt, yo, ow0, nn, ci == 0, b);
        }
      }
    }
  return true;
}
#endif

static void conv_f32(const conv_geo *g, const float *x, const float *w, const float *bias, float *y) {
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
  if (conv_f32_mve(g, x, w, bias, y)) return;
#endif
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
