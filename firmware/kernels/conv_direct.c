/* Direct float convolution (aten::convolution.out's paths besides conv_gemm.h's).
 *
 * Main path: for one output row, the input rows it reads are copied into a small zero-padded patch
 * on the stack (padding and dim order are dealt with once there, not per tap); then each output
 * channel keeps a chunk of up to 16 output columns in registers across all its (in-channel, kh, kw)
 * taps: per tap one weight load, then one load and one FMA per 4 columns, no bounds checks. Rows of
 * kh inside the vertical padding are skipped. With stride 1 along W one patch row serves every kw
 * (shifted by kw * dilation); with a larger stride each (kh, kw) gets its own patch row (im2col of
 * one output row). Kernels too large for the patch take the fallback: each tap adds a scaled input
 * row into the output row (AXPY over output columns). */
#include "conv_direct.h"

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

void conv_f32_direct(const conv_geo *g, const float *x, const float *w, const float *bias, float *y) {
  conv_plan pl;
  if (!CONV_SOFT_FLOAT && plan_patch(g, &pl)) conv_f32_patch(g, &pl, x, w, bias, y);
  else conv_f32_axpy(g, x, w, bias, y);
}
