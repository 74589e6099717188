/* aten::convolution.out: direct 1-d / 2-d convolution, float32, any stride / padding / dilation /
 * groups (depthwise included), optional bias, any dim order.
 *
 * Main path: for one output row, the input rows it reads are copied into a small zero-padded patch
 * on the stack (padding and dim order are dealt with once there, not per tap); then each output
 * channel keeps a chunk of up to 16 output columns in registers across all its (in-channel, kh, kw)
 * taps: per tap one weight load, then one load and one FMA per 4 columns, no bounds checks. Rows of
 * kh inside the vertical padding are skipped. With stride 1 along W one patch row serves every kw
 * (shifted by kw * dilation); with a larger stride each (kh, kw) gets its own patch row (im2col of
 * one output row). Kernels too large for the patch take the fallback: each tap adds a scaled input
 * row into the output row (AXPY over output columns). */
#include "et_kernel.h"
#include "kernel_util.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#include <arm_mve.h>
#define CONV_MVE 1
#endif
/* Without an FPU a multiply-add costs a hundred instructions or more: there the AXPY path, which
 * does exactly the MACs inside the image (no padding taps, no partial-vector lanes), is faster. */
#if defined(__SOFTFP__) || defined(__XTENSA_SOFT_FLOAT__)
#define CONV_SOFT_FLOAT 1
#else
#define CONV_SOFT_FLOAT 0
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
  if (nsp == 1) { out[0] = dflt == 0 ? 0 : 1; out[1] = (int32_t)p[0]; return len == 1 && p[0] == out[1]; }
  if (len == 1) { out[0] = out[1] = (int32_t)p[0]; return p[0] == out[0]; }
  out[0] = (int32_t)p[0]; out[1] = (int32_t)p[1];
  return len == 2 && p[0] == out[0] && p[1] == out[1];
}

/* strides of t in (n, c, h, w) order; a 3-d tensor gets h stride 0 (h == 1) */
static void nchw_strides(const et_tensor *t, ptrdiff_t *s) {
  ptrdiff_t st[ET_MAX_DIMS];
  et_tensor_strides(t, st);
  if (t->ndim == 4) { s[0] = st[0]; s[1] = st[1]; s[2] = st[2]; s[3] = st[3]; }
  else { s[0] = st[0]; s[1] = st[1]; s[2] = 0; s[3] = st[2]; }
}

/* first and one-past-last i < n with i*s + off in [0, W) */
static void col_range(int32_t off, int32_t s, int32_t W, int32_t n, int32_t *lo, int32_t *hi) {
  int32_t a = 0;
  if (off < 0) a = (-off + s - 1) / s;
  int32_t b = (W - 1 - off) >= 0 ? (W - 1 - off) / s + 1 : 0;
  if (b > n) b = n;
  if (a > b) a = b;
  *lo = a; *hi = b;
}

/* ------------------------------------------------------------------ fallback: AXPY per tap */

#ifdef CONV_MVE
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

static void conv_f32_axpy(const conv_geo *g, const float *x, const float *w, const float *bias, float *y) {
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

/* ------------------------------------------------------------------ main path: patch + register chunks */

#define CONV_PATCH 512 /* floats of stack for the patch (2 KiB) */
#define CONV_CHUNK 16  /* output columns held in registers */

/* Output rows [0, nrow) of output channels [0, noc), one chunk of columns, over one patch. For
 * output row 0, tap (ci, kh, kw) reads the patch at P + ci * RSc + kh * RSh + kw * KS (+ column)
 * and its weight is at wo + o * ws0 + ci * ws1 + kh * ws2 + kw * ws3; each further output row moves
 * P by prow. The chunk of output channel o, row r is at dst + o * ys1 + r * yrow (columns
 * contiguous): it starts from bias[o] (0 without bias) or, with accum, from what dst holds. */
typedef struct {
  const float *wo, *bias;
  ptrdiff_t RSc, RSh, KS, prow, ws0, ws1, ws2, ws3, ys1, yrow;
  int32_t nci, KH, KW, noc, nrow, accum;
} conv_taps;

/* kernel shapes with their own tap loops */
enum { CONV_K_ANY, CONV_K_3X3, CONV_K_1X1 };

#ifdef CONV_MVE
/* NV vectors of 4 columns, the last one predicated to nvalid columns for the init load and the store
 * (patch loads need no predicate: patch rows are padded to whole vectors). CONV_K_3X3: KS == 1 and
 * weights (kh, kw) contiguous, all nine taps of an in-channel unrolled with immediate offsets. */
static inline __attribute__((always_inline)) void conv_chunk(const conv_taps *t, const float *P, float *dst,
                                                             int32_t nvalid, int NV, int K) {
  const mve_pred16_t pt = vctp32q((uint32_t)(nvalid - 4 * (NV - 1)));
  const float *wo = t->wo, *bp = t->bias;
  const int32_t nci = t->nci, nrow = t->nrow, accum = t->accum;
  const ptrdiff_t RSc = t->RSc, RSh = t->RSh, ws1 = t->ws1, prow = t->prow, yrow = t->yrow;
  for (int32_t o = t->noc; o > 0; o--, wo += t->ws0, dst += t->ys1) {
    const float b = bp ? *bp++ : 0.0f;
    const float *prw = P;
    float *yr = dst;
    for (int32_t r = nrow; r > 0; r--, prw += prow, yr += yrow) {
      float32x4_t a0, a1, a2, a3;
      if (accum) {
        if (NV > 0) a0 = NV == 1 ? vld1q_z_f32(yr, pt) : vld1q_f32(yr);
        if (NV > 1) a1 = NV == 2 ? vld1q_z_f32(yr + 4, pt) : vld1q_f32(yr + 4);
        if (NV > 2) a2 = NV == 3 ? vld1q_z_f32(yr + 8, pt) : vld1q_f32(yr + 8);
        if (NV > 3) a3 = vld1q_z_f32(yr + 12, pt);
      } else {
        a0 = a1 = a2 = a3 = vdupq_n_f32(b);
      }
#define CONV_MAC(p, w)                                        \
  do {                                                        \
    const float wv_ = (w);                                    \
    if (NV > 0) a0 = vfmaq_n_f32(a0, vld1q_f32((p)), wv_);      \
    if (NV > 1) a1 = vfmaq_n_f32(a1, vld1q_f32((p) + 4), wv_);  \
    if (NV > 2) a2 = vfmaq_n_f32(a2, vld1q_f32((p) + 8), wv_);  \
    if (NV > 3) a3 = vfmaq_n_f32(a3, vld1q_f32((p) + 12), wv_); \
  } while (0)
      const float *wc = wo, *pc = prw;
      if (K == CONV_K_3X3) {
        for (int32_t ci = nci; ci > 0; ci--, wc += ws1, pc += RSc) {
          const float *p1 = pc + RSh, *p2 = p1 + RSh;
          CONV_MAC(pc, wc[0]); CONV_MAC(pc + 1, wc[1]); CONV_MAC(pc + 2, wc[2]);
          CONV_MAC(p1, wc[3]); CONV_MAC(p1 + 1, wc[4]); CONV_MAC(p1 + 2, wc[5]);
          CONV_MAC(p2, wc[6]); CONV_MAC(p2 + 1, wc[7]); CONV_MAC(p2 + 2, wc[8]);
        }
      } else if (K == CONV_K_1X1) {
        for (int32_t ci = nci; ci > 0; ci--, wc += ws1, pc += RSc) CONV_MAC(pc, *wc);
      } else {
        for (int32_t ci = nci; ci > 0; ci--, wc += ws1, pc += RSc) {
          const float *wr = wc, *pr = pc;
          for (int32_t kh = t->KH; kh > 0; kh--, wr += t->ws2, pr += RSh) {
            const float *wk = wr, *pk = pr;
            for (int32_t kw = t->KW; kw > 0; kw--, wk += t->ws3, pk += t->KS) CONV_MAC(pk, *wk);
          }
        }
      }
#undef CONV_MAC
      if (NV > 0) { if (NV == 1) vst1q_p_f32(yr, a0, pt); else vst1q_f32(yr, a0); }
      if (NV > 1) { if (NV == 2) vst1q_p_f32(yr + 4, a1, pt); else vst1q_f32(yr + 4, a1); }
      if (NV > 2) { if (NV == 3) vst1q_p_f32(yr + 8, a2, pt); else vst1q_f32(yr + 8, a2); }
      if (NV > 3) vst1q_p_f32(yr + 12, a3, pt);
    }
  }
}
#else
/* Portable: 4 * NV accumulators, the lane loops unrolled so that they live in registers (FPU
 * targets) or vectors (where the compiler vectorises). */
#define CONV_LANES(body) \
  _Pragma("GCC unroll 16") for (int j = 0; j < 4 * NV; j++) body
static inline __attribute__((always_inline)) void conv_chunk(const conv_taps *t, const float *P, float *dst,
                                                             int32_t nvalid, int NV, int K) {
  const int32_t KH = K == CONV_K_3X3 ? 3 : K == CONV_K_1X1 ? 1 : t->KH;
  const int32_t KW = K == CONV_K_3X3 ? 3 : K == CONV_K_1X1 ? 1 : t->KW;
  const ptrdiff_t KS = K == CONV_K_3X3 ? 1 : t->KS, ws2 = K == CONV_K_3X3 ? 3 : t->ws2;
  const ptrdiff_t ws3 = K == CONV_K_3X3 ? 1 : t->ws3;
  const float *wo = t->wo, *bp = t->bias;
  const int32_t nci = t->nci, nrow = t->nrow, accum = t->accum;
  const ptrdiff_t RSc = t->RSc, RSh = t->RSh, ws1 = t->ws1, prow = t->prow, yrow = t->yrow;
  for (int32_t o = t->noc; o > 0; o--, wo += t->ws0, dst += t->ys1) {
    const float b = bp ? *bp++ : 0.0f;
    const float *prw = P;
    float *yr = dst;
    for (int32_t r = nrow; r > 0; r--, prw += prow, yr += yrow) {
      float a[CONV_CHUNK];
      if (accum) CONV_LANES({ a[j] = j < nvalid ? yr[j] : 0.0f; })
      else CONV_LANES({ a[j] = b; })
      const float *wc = wo, *pc = prw;
      for (int32_t ci = nci; ci > 0; ci--, wc += ws1, pc += RSc) {
        const float *wr = wc, *pr = pc;
        for (int32_t kh = KH; kh > 0; kh--, wr += ws2, pr += RSh) {
          const float *wk = wr, *pk = pr;
          for (int32_t kw = KW; kw > 0; kw--, wk += ws3, pk += KS) {
            const float wv = *wk;
            CONV_LANES({ a[j] += wv * pk[j]; })
          }
        }
      }
      CONV_LANES({ if (j < nvalid) yr[j] = a[j]; })
    }
  }
}
#undef CONV_LANES
#endif

/* One out-of-line copy per shape, so that each tap loop gets the registers to itself. */
#if defined(__GNUC__) && !defined(__clang__)
/* GCC's pre-allocation scheduling hoists the patch loads of a whole row and spills vectors */
#define CONV_NOSCHED __attribute__((optimize("no-schedule-insns")))
#else
#define CONV_NOSCHED
#endif
#define CONV_CHUNK_FN(NV, K)                                                                           \
  static __attribute__((noinline)) CONV_NOSCHED void conv_chunk_##NV##_##K(                            \
      const conv_taps *t, const float *P, float *dst, int32_t nvalid) {                                \
    conv_chunk(t, P, dst, nvalid, NV, K);                                                              \
  }
CONV_CHUNK_FN(4, 0) CONV_CHUNK_FN(3, 0) CONV_CHUNK_FN(2, 0) CONV_CHUNK_FN(1, 0)
CONV_CHUNK_FN(4, 1) CONV_CHUNK_FN(3, 1) CONV_CHUNK_FN(2, 1) CONV_CHUNK_FN(1, 1)
CONV_CHUNK_FN(4, 2) CONV_CHUNK_FN(3, 2) CONV_CHUNK_FN(2, 2) CONV_CHUNK_FN(1, 2)

typedef void (*conv_chunk_fn)(const conv_taps *, const float *, float *, int32_t);
static const conv_chunk_fn conv_chunks[3][4] = {
    {conv_chunk_1_0, conv_chunk_2_0, conv_chunk_3_0, conv_chunk_4_0},
    {conv_chunk_1_1, conv_chunk_2_1, conv_chunk_3_1, conv_chunk_4_1},
    {conv_chunk_1_2, conv_chunk_2_2, conv_chunk_3_2, conv_chunk_4_2},
};

/* n zeros (Helium: whole vectors, up to 3 floats past the end; see patch_rows_unit) */
static void patch_zero(float *dst, int32_t n) {
#ifdef CONV_MVE
  const float32x4_t z = vdupq_n_f32(0.0f);
  for (int32_t i = 0; i < n; i += 4) vst1q_f32(dst + i, z);
#else
  for (int32_t i = 0; i < n; i++) dst[i] = 0.0f;
#endif
}

/* rows patch rows of n floats (consecutive in dst): row r = x[r * xrs + off + i] for i in [lo, hi)
 * (contiguous input columns), 0 elsewhere. The Helium version stores whole vectors: up to 3 floats
 * past a row get zeros or are rewritten by the next row (the patch has slack at its end). */
static void patch_rows_unit(float *dst, const float *x, ptrdiff_t xrs, int32_t rows, int32_t off, int32_t lo,
                            int32_t hi, int32_t n) {
#ifdef CONV_MVE
  const float32x4_t z = vdupq_n_f32(0.0f);
  const int32_t nfull = (hi - lo) >> 2, tail = (hi - lo) & 3;
  const mve_pred16_t pt = vctp32q((uint32_t)tail);
  for (; rows > 0; rows--, dst += n, x += xrs) {
    for (int32_t i = 0; i < lo; i += 4) vst1q_f32(dst + i, z);
    float *d = dst + lo;
    const float *s = x + off + lo;
    for (int32_t k = nfull; k > 0; k--, s += 4, d += 4) vst1q_f32(d, vld1q_f32(s));
    if (tail) { /* the predicated load zeroes the lanes past hi */
      vst1q_f32(d, vld1q_z_f32(s, pt));
      d += 4;
    }
    for (; d < dst + n; d += 4) vst1q_f32(d, z);
  }
#else
  for (; rows > 0; rows--, dst += n, x += xrs) {
    int32_t i = 0;
    for (; i < lo; i++) dst[i] = 0.0f;
    for (; i < hi; i++) dst[i] = x[off + i];
    for (; i < n; i++) dst[i] = 0.0f;
  }
#endif
}

/* dst[i] = x[(start + i * step) * xs] where 0 <= start + i * step < W, else 0, for i < n */
static void patch_row(float *dst, const float *xr, int32_t start, int32_t step, int32_t n, int32_t W,
                      ptrdiff_t xs) {
  int32_t lo, hi;
  col_range(start, step, W, n, &lo, &hi);
  int32_t i = 0;
  for (; i < lo; i++) dst[i] = 0.0f;
  for (; i < hi; i++) dst[i] = xr[(ptrdiff_t)(start + i * step) * xs];
  for (; i < n; i++) dst[i] = 0.0f;
}

/* Patch layout: bands of OHB output rows; for a block of CB in-channels the patch holds the BR
 * input rows a band reads (rows in the vertical padding as zeros, so every output row uses every
 * kh), each as KWR patch rows of PWd floats (KWR = 1 with stride 1 along W: kw then shifts by
 * kw * dw; else one im2col row per kw). */
typedef struct {
  int32_t shared, KWR, WW, PWd, CB, OHB, BR;
} conv_plan;

/* input rows read by nr consecutive output rows (fits: the op's checks bound (KH - 1) * dh and
 * (OH - 1) * sh by the padded input size) */
static int32_t band_rows(const conv_geo *g, int32_t nr) {
  return (nr - 1) * g->sh + (g->KH - 1) * g->dh + 1;
}

/* false when even one in-channel, one output row and 4 columns do not fit */
static bool plan_patch(const conv_geo *g, conv_plan *pl) {
  const int32_t cpg = g->C / g->G;
  if (cpg == 0) return false; /* no taps: the fallback writes the bias */
  pl->shared = g->sw == 1;
  pl->KWR = pl->shared ? 1 : g->KW;
  const int64_t ext = pl->shared ? (int64_t)(g->KW - 1) * g->dw : 0;
  const int64_t rpc = (int64_t)band_rows(g, 1) * pl->KWR; /* patch rows per in-channel, one output row */
  if (rpc * (4 + ext) > CONV_PATCH) return false;
  const int32_t avail = CONV_PATCH / (int32_t)rpc - (int32_t)ext; /* floats of a row left for columns */
  int32_t ww = (g->OW + 3) & ~3;
  if (ww > avail) ww = avail & ~3;
  pl->WW = ww < g->OW ? ww : g->OW;
  pl->PWd = ((pl->WW + 3) & ~3) + (int32_t)ext;
  const int32_t cb = CONV_PATCH / ((int32_t)rpc * pl->PWd);
  pl->CB = cb < cpg ? cb : cpg;
  /* as many output rows per band as the patch holds for CB channels */
  const int32_t R = CONV_PATCH / (pl->CB * pl->KWR * pl->PWd); /* input rows per channel */
  const int32_t ohb = (R - band_rows(g, 1)) / g->sh + 1;     /* R >= band_rows(g, 1) */
  pl->OHB = ohb > g->OH ? g->OH : ohb;
  pl->BR = band_rows(g, pl->OHB);
  return true;
}

static void conv_f32_patch(const conv_geo *g, const conv_plan *pl, const float *x, const float *w,
                           const float *bias, float *y) {
  float P[CONV_PATCH + 4]; /* + 4: whole-vector stores at the end of the last row */
  float tmp[CONV_CHUNK];
  const int32_t cpg = g->C / g->G, opg = g->O / g->G;
  const int32_t KW = g->KW, PWd = pl->PWd, WW = pl->WW, KWR = pl->KWR;
  const ptrdiff_t RSr = (ptrdiff_t)KWR * PWd; /* patch floats per input row */
  conv_taps t;
  t.KH = g->KH; t.KW = KW;
  t.ws0 = g->ws[0]; t.ws1 = g->ws[1]; t.ws2 = g->ws[2]; t.ws3 = g->ws[3];
  t.RSc = (ptrdiff_t)pl->BR * RSr;
  t.RSh = g->dh * RSr;
  t.KS = pl->shared ? g->dw : PWd;
  t.prow = g->sh * RSr;
  t.ys1 = g->os[1];
  t.yrow = g->os[2];
  int K = CONV_K_ANY;
  if (g->KH == 1 && KW == 1) K = CONV_K_1X1;
  else if (g->KH == 3 && KW == 3 && t.KS == 1 && t.ws3 == 1 && t.ws2 == 3) K = CONV_K_3X3;
  const conv_chunk_fn *fns = conv_chunks[K];
  const ptrdiff_t ys = g->os[3];
  for (int32_t n = 0; n < g->N; n++)
    for (int32_t grp = 0; grp < g->G; grp++)
      for (int32_t owa = 0; owa < g->OW; owa += WW) {
        const int32_t ww = g->OW - owa < WW ? g->OW - owa : WW;
        /* patch column i of an input row is input column owa - pw + i (stride 1 along W): the same
         * valid range for every row */
        int32_t lo, hi;
        col_range(owa - g->pw, 1, g->W, PWd, &lo, &hi);
        for (int32_t ob = 0; ob < g->OH; ob += pl->OHB) {
          const int32_t oe = g->OH - ob < pl->OHB ? g->OH - ob : pl->OHB;
          const int32_t ia = ob * g->sh - g->ph, nr = band_rows(g, oe);
          for (int32_t cb = 0; cb < cpg; cb += pl->CB) {
            const int32_t nci = cpg - cb < pl->CB ? cpg - cb : pl->CB;
            for (int32_t ci = 0; ci < nci; ci++) {
              const float *xc = x + n * g->is[0] + (grp * cpg + cb + ci) * g->is[1];
              float *pr = P + ci * t.RSc;
              if (pl->shared && g->is[3] == 1) { /* rows above, inside and below the image */
                const int32_t r0 = ia < 0 ? (-ia < nr ? -ia : nr) : 0;
                const int32_t r1 = g->H - ia < nr ? (g->H - ia > r0 ? g->H - ia : r0) : nr;
                patch_zero(pr, r0 * PWd);
                if (r1 > r0)
                  patch_rows_unit(pr + r0 * PWd, xc + (ia + r0) * g->is[2], g->is[2], r1 - r0, owa - g->pw, lo,
                                  hi, PWd);
                patch_zero(pr + r1 * PWd, (nr - r1) * PWd);
                continue;
              }
              for (int32_t ih = ia; ih < ia + nr; ih++) {
                if (ih < 0 || ih >= g->H) {
                  patch_zero(pr, (int32_t)RSr);
                  pr += RSr;
                  continue;
                }
                const float *xr = xc + ih * g->is[2];
                if (pl->shared) {
                  patch_row(pr, xr, owa - g->pw, 1, PWd, g->W, g->is[3]);
                  pr += PWd;
                } else {
                  for (int32_t kw = 0; kw < KW; kw++, pr += PWd)
                    patch_row(pr, xr, owa * g->sw + kw * g->dw - g->pw, g->sw, PWd, g->W, g->is[3]);
                }
              }
            }
            const int32_t oc0 = grp * opg;
            t.accum = cb > 0;
            t.bias = cb == 0 && bias ? bias + oc0 : NULL;
            t.noc = opg;
            t.nci = nci;
            t.nrow = oe;
            t.wo = w + oc0 * g->ws[0] + cb * g->ws[1];
            float *yr = y + n * g->os[0] + oc0 * g->os[1] + ob * g->os[2] + owa * ys;
            for (int32_t c0 = 0; c0 < ww; c0 += CONV_CHUNK) {
              const int32_t nv = ww - c0 < CONV_CHUNK ? ww - c0 : CONV_CHUNK;
              const conv_chunk_fn fn = fns[(nv - 1) >> 2];
              if (ys == 1) { /* all the group's output channels and the band's rows in one call */
                fn(&t, P + c0, yr + c0, nv);
                continue;
              }
              /* strided output columns (channels last): one channel and row at a time through tmp */
              conv_taps t1 = t;
              t1.noc = 1;
              t1.nrow = 1;
              for (int32_t r = 0; r < oe; r++)
                for (int32_t o = 0; o < opg; o++) {
                  float *yc = yr + o * g->os[1] + r * g->os[2] + c0 * ys;
                  if (t.accum)
                    for (int32_t j = 0; j < nv; j++) tmp[j] = yc[j * ys];
                  t1.wo = t.wo + o * g->ws[0];
                  t1.bias = t.bias ? t.bias + o : NULL;
                  fn(&t1, P + c0 + r * t.prow, tmp, nv);
                  for (int32_t j = 0; j < nv; j++) yc[j * ys] = tmp[j];
                }
            }
          }
        }
      }
}

#include "conv_gemm.h"
#include "conv_dw.h"

/* The many-channel paths (conv_gemm.h): pointwise NCHW with contiguous planes, channels-last
 * depthwise and channels-last convolutions with several channels per group. false: not one of them. */
static bool conv_f32_gemm(const conv_geo *g, uint32_t nd, const float *x, const float *w, const float *bias,
                          float *y) {
  const int32_t cpg = g->C / g->G, opg = g->O / g->G;
  if (cpg == 0) return false;
  if (g->KH == 1 && g->KW == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0 && g->is[3] == 1 &&
      g->os[3] == 1 && (g->H == 1 || g->is[2] == g->W) && (g->OH == 1 || g->os[2] == g->OW) && cpg > 1) {
    pw_args a;
    a.xc = g->is[1]; a.wo = g->ws[0]; a.wc = g->ws[1]; a.yo = g->os[1];
    a.P = g->H * g->W; a.C = cpg;
    for (int32_t n = 0; n < g->N; n++)
      for (int32_t grp = 0; grp < g->G; grp++) {
        a.x = x + n * g->is[0] + grp * cpg * g->is[1];
        a.w = w + grp * opg * g->ws[0];
        a.bias = bias ? bias + grp * opg : NULL;
        a.y = y + n * g->os[0] + grp * opg * g->os[1];
        conv_pw_nchw(&a, opg);
      }
    return true;
  }
  if (nd != 4) return false;
  nhwc_args a;
  a.H = g->H; a.W = g->W; a.KH = g->KH; a.KW = g->KW; a.sh = g->sh; a.sw = g->sw; a.ph = g->ph; a.pw = g->pw;
  a.dh = g->dh; a.dw = g->dw; a.OW = g->OW;
  a.xh = g->is[2]; a.xw = g->is[3]; a.xc = g->is[1];
  a.wo = g->ws[0]; a.wc = g->ws[1]; a.wh = g->ws[2]; a.ww = g->ws[3];
  a.yh = g->os[2]; a.yw = g->os[3]; a.yc = g->os[1];
  const bool cl = g->is[1] == 1 && g->os[1] == 1;
  /* depthwise, channels on the lanes (Helium gathers them from NCHW planes; portable C keeps NCHW on
   * the patch path) */
  if (cpg == 1 && opg == 1 && (cl || DW_BLOCKS > 1)) {
    a.C = 1; a.O = g->C;
    for (int32_t n = 0; n < g->N; n++) {
      a.x = x + n * g->is[0]; a.w = w; a.bias = bias; a.y = y + n * g->os[0];
      conv_dw(&a, g->OH);
    }
    return true;
  }
  /* NCHW: Helium reads the input in place and scatters the outputs to their planes; worth it from 8
   * output channels a group with a column stride (the patch path copies those taps one by one);
   * portable C keeps NCHW on the patch path */
  if (!(cl || (DW_BLOCKS > 1 && opg >= 8 && g->sw > 1))) return false;
  float zero[CONV_ZMAX];
  a.zero = NULL;
  if ((g->is[1] == 1 || cpg == 1) && cpg <= CONV_ZMAX) {
    for (int32_t i = 0; i < cpg; i++) zero[i] = 0.0f;
    a.zero = zero;
  }
  a.C = cpg; a.O = opg;
  a.flat = g->dw == 1 && (cpg == 1 ? g->is[3] == 1 && g->ws[3] == 1
                                   : g->is[1] == 1 && g->ws[1] == 1 && g->is[3] == cpg && g->ws[3] == cpg);
  for (int32_t n = 0; n < g->N; n++)
    for (int32_t grp = 0; grp < g->G; grp++) {
      a.x = x + n * g->is[0] + grp * cpg * g->is[1];
      a.w = w + grp * opg * g->ws[0];
      a.bias = bias ? bias + grp * opg : NULL;
      a.y = y + n * g->os[0] + grp * opg * g->os[1];
      conv_nhwc(&a, g->OH);
    }
  return true;
}

/* Transposed convolution (ConvTranspose1d/2d, float): each input pixel scatters its weighted taps
 * into the output, which starts at the bias. Weight is [C, O/G, KH, KW]; any dim order (strides). */
static et_status conv_transposed_f32(et_kctx *ctx, et_value *const *args, et_tensor *in, et_tensor *wt,
                                     et_tensor *bias, et_tensor *out) {
  uint32_t nd = in->ndim, nsp = nd - 2;
  int32_t s[2], p[2], d[2], op[2];
  if (!get_pair(args[3], nsp, s, 1)) { ctx->err_detail = 3; return ET_ERR_INVALID_ARGUMENT; }
  if (!get_pair(args[4], nsp, p, 0)) { ctx->err_detail = 4; return ET_ERR_INVALID_ARGUMENT; }
  if (!get_pair(args[5], nsp, d, 1)) { ctx->err_detail = 5; return ET_ERR_INVALID_ARGUMENT; }
  if (!get_pair(args[7], nsp, op, 0)) { ctx->err_detail = 7; return ET_ERR_INVALID_ARGUMENT; }
  const int64_t G = et_value_as_int(args[8]);
  const int32_t N = in->sizes[0], C = in->sizes[1], H = nd == 4 ? in->sizes[2] : 1, W = in->sizes[nd - 1];
  const int32_t KH = nd == 4 ? wt->sizes[2] : 1, KW = wt->sizes[nd - 1];
  if (G <= 0 || G > C || C % G || wt->sizes[0] != C || s[0] <= 0 || s[1] <= 0 || d[0] <= 0 || d[1] <= 0 ||
      p[0] < 0 || p[1] < 0 || op[0] < 0 || op[1] < 0 || s[0] > 65536 || s[1] > 65536 || d[0] > 65536 ||
      d[1] > 65536 || p[0] > 65536 || p[1] > 65536 || (op[0] >= s[0] && op[0] >= d[0]) ||
      (op[1] >= s[1] && op[1] >= d[1])) { ctx->err_detail = 8; return ET_ERR_INVALID_ARGUMENT; }
  const int32_t opg = wt->sizes[1], O = opg * (int32_t)G, cpg = C / (int32_t)G;
  if (bias && et_numel(bias) != O) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  const int64_t oh = (int64_t)(H - 1) * s[0] - 2 * (int64_t)p[0] + (int64_t)d[0] * (KH - 1) + op[0] + 1;
  const int64_t ow = (int64_t)(W - 1) * s[1] - 2 * (int64_t)p[1] + (int64_t)d[1] * (KW - 1) + op[1] + 1;
  if (oh <= 0 || ow <= 0 || oh > INT32_MAX / 4 || ow > INT32_MAX / 4) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  int32_t os[4] = {N, O, (int32_t)oh, (int32_t)ow};
  if (nd == 3) os[2] = (int32_t)ow;
  et_status st;
  if ((st = et_resize(out, nd, os)) != ET_OK) { ctx->err_detail = 9; return st; }
  if (bias && !et_is_contiguous(bias)) { ctx->err_detail = 2; return ET_ERR_UNSUPPORTED; }
  ptrdiff_t is[4], ws[4], ys[4];
  nchw_strides(in, is); nchw_strides(wt, ws); nchw_strides(out, ys);
  const float *x = (const float *)in->data, *w = (const float *)wt->data;
  const float *b = bias ? (const float *)bias->data : NULL;
  float *y = (float *)out->data;
  const int32_t OH = (int32_t)oh, OW = (int32_t)ow;
  for (int32_t n = 0; n < N; n++)
    for (int32_t o = 0; o < O; o++)
      for (int32_t r = 0; r < OH; r++)
        for (int32_t c = 0; c < OW; c++) y[n * ys[0] + o * ys[1] + r * ys[2] + c * ys[3]] = b ? b[o] : 0.0f;
  for (int32_t n = 0; n < N; n++)
    for (int32_t ci = 0; ci < C; ci++) {
      const int32_t grp = ci / cpg;
      for (int32_t ih = 0; ih < H; ih++)
        for (int32_t iw = 0; iw < W; iw++) {
          const float v = x[n * is[0] + ci * is[1] + ih * is[2] + iw * is[3]];
          for (int32_t kh = 0; kh < KH; kh++) {
            const int32_t r = ih * s[0] - p[0] + kh * d[0];
            if (r < 0 || r >= OH) continue;
            for (int32_t kw = 0; kw < KW; kw++) {
              const int32_t c = iw * s[1] - p[1] + kw * d[1];
              if (c < 0 || c >= OW) continue;
              for (int32_t oo = 0; oo < opg; oo++)
                y[n * ys[0] + (grp * opg + oo) * ys[1] + r * ys[2] + c * ys[3]] +=
                    v * w[ci * ws[0] + oo * ws[1] + kh * ws[2] + kw * ws[3]];
            }
          }
        }
    }
  return ET_OK;
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
  if (args[6]->tag != ET_TAG_BOOL) { ctx->err_detail = 6; return ET_ERR_INVALID_ARGUMENT; }
  uint32_t nd = in->ndim;
  if ((nd != 3 && nd != 4) || wt->ndim != nd) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  if (in->dtype != ET_FLOAT || wt->dtype != ET_FLOAT || out->dtype != ET_FLOAT ||
      (bias && bias->dtype != ET_FLOAT)) { ctx->err_detail = 0; return ET_ERR_UNSUPPORTED; }
  if (args[6]->u.b) return conv_transposed_f32(ctx, args, in, wt, bias, out);
  uint32_t nsp = nd - 2;
  conv_geo g;
  int32_t s[2], p[2], d[2];
  if (!get_pair(args[3], nsp, s, 1)) { ctx->err_detail = 3; return ET_ERR_INVALID_ARGUMENT; }
  if (!get_pair(args[4], nsp, p, 0)) { ctx->err_detail = 4; return ET_ERR_INVALID_ARGUMENT; }
  if (!get_pair(args[5], nsp, d, 1)) { ctx->err_detail = 5; return ET_ERR_INVALID_ARGUMENT; }
  g.sh = s[0]; g.sw = s[1]; g.ph = p[0]; g.pw = p[1]; g.dh = d[0]; g.dw = d[1];
  const int64_t groups = et_value_as_int(args[8]);
  g.G = (int32_t)groups;
  g.N = in->sizes[0]; g.C = in->sizes[1];
  g.H = nd == 4 ? in->sizes[2] : 1; g.W = in->sizes[nd - 1];
  g.O = wt->sizes[0];
  g.KH = nd == 4 ? wt->sizes[2] : 1; g.KW = wt->sizes[nd - 1];
  if (groups != g.G || g.G <= 0 || g.C % g.G || g.O % g.G || wt->sizes[1] * (int64_t)g.G != g.C ||
      g.sh <= 0 || g.sw <= 0 || g.dh <= 0 || g.dw <= 0 || g.ph < 0 || g.pw < 0 || g.KH <= 0 || g.KW <= 0 ||
      (bias && et_numel(bias) != g.O)) {
    ctx->err_detail = 8; return ET_ERR_INVALID_ARGUMENT;
  }
  /* in 64 bits: hostile paddings / dilations must not overflow the index arithmetic below */
  const int64_t eh = (int64_t)g.H + 2 * (int64_t)g.ph, ew = (int64_t)g.W + 2 * (int64_t)g.pw;
  const int64_t kh = (int64_t)g.dh * (g.KH - 1) + 1, kw = (int64_t)g.dw * (g.KW - 1) + 1;
  if (eh > INT32_MAX / 2 || ew > INT32_MAX / 2 || kh > eh || kw > ew) {
    ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT;
  }
  g.OH = (int32_t)(eh - kh) / g.sh + 1;
  g.OW = (int32_t)(ew - kw) / g.sw + 1;
  int32_t os[4] = {g.N, g.O, g.OH, g.OW};
  if (nd == 3) os[2] = g.OW;
  if ((st = et_resize(out, nd, os)) != ET_OK) { ctx->err_detail = 9; return st; }
  if (bias && !et_is_contiguous(bias)) { ctx->err_detail = 2; return ET_ERR_UNSUPPORTED; }
  nchw_strides(in, g.is);
  nchw_strides(wt, g.ws);
  nchw_strides(out, g.os);
  if (et_numel(out) == 0) return ET_OK;
  const float *xp = (const float *)in->data, *wp = (const float *)wt->data;
  const float *bp = bias ? (const float *)bias->data : NULL;
  conv_plan pl;
  if (!CONV_SOFT_FLOAT && conv_f32_gemm(&g, nd, xp, wp, bp, (float *)out->data)) return ET_OK;
  if (!CONV_SOFT_FLOAT && plan_patch(&g, &pl)) conv_f32_patch(&g, &pl, xp, wp, bp, (float *)out->data);
  else conv_f32_axpy(&g, xp, wp, bp, (float *)out->data);
  return ET_OK;
}
