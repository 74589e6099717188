/* Matrix products: addmm, mm, bmm (float32 fast paths, any float dtype slow path); linear is in
 * linear.c.
 *
 * float32 product core (gemm_f32): one output row at a time, in column blocks whose accumulators stay
 * in registers across the whole K loop (Helium: up to 4 Q registers = 16 columns; portable C: 8
 * scalars), started from the bias row when the bias is fused. Each output element is thus read and
 * written once, and b's rows are streamed contiguously.
 * The common cases (float32, natural layout, beta = alpha = 1) are recognised with a few inline tests
 * first, since the checks and strides of the general path cost as much as the product for small
 * layers (a 32 -> 10 linear is only 320 MACs). */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#define LINALG_MVE 1
#include <arm_mve.h>
#else
#define LINALG_MVE 0
#endif

#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

/* ---------------- float32 product core ---------------- */

/* o[m, n] = init[m, n] + sum_k a[m*ar + k] * b[k*br + n]   (0 <= m < M, 0 <= n < N)
 * o rows at o + m*ors with unit column stride; init is bias[m*bsr + n] (bsr 0: one row for all) or 0. */
#if LINALG_MVE
/* The K loop of a row segment is inline assembly: GCC 12 hoists the loads of an unrolled intrinsics
 * loop and spills, and post-increments through extra copies of the pointer. Here each k costs, per
 * vector of 4 columns, one load and one FMA by the scalar a[k], plus one pointer step; a[k] pairs
 * come in with one LDRD and the loop is a low-overhead loop (WLS/LE). One template serves every
 * shape: nv (1..4) vectors, lt = index of the predicated last vector (4 = none); the assembler's
 * .if keeps only the instructions of the shape. */
#define MM_VSTEP(j, t, off, ra)                                                         \
  ".if %c[nv] > " #j "\n\t"                                                            \
  ".if %c[lt] == " #j "\n\tvpst\n\tvldrwt.u32 %q[" t "], [%[pb], #" off "]\n\t"        \
  ".else\n\tvldrw.u32 %q[" t "], [%[pb], #" off "]\n\t.endif\n\t"                      \
  "vfma.f32 %q[c" #j "], %q[" t "], %[" ra "]\n\t"                                      \
  ".endif\n\t"
#define MM_KSTEP(ra)                                                                   \
  MM_VSTEP(0, "t0", "0", ra) MM_VSTEP(1, "t1", "16", ra) MM_VSTEP(2, "t0", "32", ra)  \
  MM_VSTEP(3, "t1", "48", ra) "add %[pb], %[pb], %[br]\n\t"
#define MM_OPERANDS                                                                    \
  : [c0] "+w"(c0), [c1] "+w"(c1), [c2] "+w"(c2), [c3] "+w"(c3), [t0] "=&w"(t0), [t1] "=&w"(t1), \
    [pa] "+r"(a), [pb] "+r"(b), [lc] "+r"(lc), [a0] "=&r"(a0), [a1] "=&r"(a1)        \
  : [br] "r"(brb), [ln] "r"(lanes), [nv] "i"(nv), [lt] "i"(lt)                        \
  : "memory", "p0"

/* One row segment: o[0, 4*nv) = init + sum_k a[k] * b[k*br + (0, 4*nv)). With lt < 4 the last
 * vector holds only the lanes of pl: its loads and store are predicated, nothing past it is touched. */
static ALWAYS_INLINE void seg_mve(float *o, const float *a, const float *b, ptrdiff_t br, const float *bias,
                                  int32_t K, const int nv, const int lt, uint32_t lanes) {
  const mve_pred16_t pl = vctp32q(lanes);
  float32x4_t c0, c1, c2, c3, t0, t1;
  c0 = c1 = c2 = c3 = vdupq_n_f32(0.0f);
  if (bias) {
    c0 = lt == 0 ? vldrwq_z_f32(bias, pl) : vld1q_f32(bias);
    if (nv > 1) c1 = lt == 1 ? vldrwq_z_f32(bias + 4, pl) : vld1q_f32(bias + 4);
    if (nv > 2) c2 = lt == 2 ? vldrwq_z_f32(bias + 8, pl) : vld1q_f32(bias + 8);
    if (nv > 3) c3 = lt == 3 ? vldrwq_z_f32(bias + 12, pl) : vld1q_f32(bias + 12);
  }
  const int32_t brb = (int32_t)(br * (ptrdiff_t)sizeof(float));
  uint32_t a0, a1;
  register int32_t lc __asm__("lr") = K >> 1;  /* k pairs: the loop counter of WLS/LE */
  __asm__ volatile(".if %c[lt] < 4\n\tvctp.32 %[ln]\n\t.endif\n\t"  /* VPR: the last vector's lanes */
                   "wls lr, lr, 2f\n"
                   "1:\n\t"
                   "ldrd %[a0], %[a1], [%[pa]], #8\n\t"
                   MM_KSTEP("a0") MM_KSTEP("a1")
                   "le lr, 1b\n"
                   "2:\n\t"
                   MM_OPERANDS);
  if (K & 1)
    __asm__ volatile(".if %c[lt] < 4\n\tvctp.32 %[ln]\n\t.endif\n\t"
                     "ldr %[a0], [%[pa]]\n\t" MM_KSTEP("a0") MM_OPERANDS);
  if (lt == 0) vstrwq_p_f32(o, c0, pl); else vst1q_f32(o, c0);
  if (nv > 1) { if (lt == 1) vstrwq_p_f32(o + 4, c1, pl); else vst1q_f32(o + 4, c1); }
  if (nv > 2) { if (lt == 2) vstrwq_p_f32(o + 8, c2, pl); else vst1q_f32(o + 8, c2); }
  if (nv > 3) { if (lt == 3) vstrwq_p_f32(o + 12, c3, pl); else vst1q_f32(o + 12, c3); }
}
#undef MM_OPERANDS
#undef MM_KSTEP
#undef MM_VSTEP

/* One out-of-line copy per shape: each keeps its setup to what its shape needs (inlined into the
 * row loop, GCC hoists the setup of every shape ahead of the loop: a third of a small layer). */
typedef void (*seg_fn)(float *o, const float *a, const float *b, ptrdiff_t br, const float *bias, int32_t K,
                       uint32_t lanes);
#define MM_SEG(name, nv, lt)                                                                           \
  static __attribute__((noinline)) void name(float *o, const float *a, const float *b, ptrdiff_t br,  \
                                             const float *bias, int32_t K, uint32_t lanes) {          \
    seg_mve(o, a, b, br, bias, K, nv, lt, lanes);                                                      \
  }
MM_SEG(seg_16, 4, 4)
MM_SEG(seg_tail4, 1, 0)
MM_SEG(seg_tail8, 2, 1)
MM_SEG(seg_tail12, 3, 2)
MM_SEG(seg_tail16, 4, 3)
#undef MM_SEG

static ALWAYS_INLINE void gemm_f32(float *o, ptrdiff_t ors, const float *a, ptrdiff_t ar, const float *b,
                                   ptrdiff_t br, const float *bias, ptrdiff_t bsr, int32_t M, int32_t K, int32_t N) {
  static const seg_fn tails[4] = {seg_tail4, seg_tail8, seg_tail12, seg_tail16};
  const int32_t nfull = N & ~15, r = N & 15;
  const seg_fn tail = r ? tails[(r - 1) >> 2] : NULL;
  const uint32_t lanes = (uint32_t)(((r - 1) & 3) + 1);  /* of the last tail vector */
  for (int32_t m = 0; m < M; m++, o += ors, a += ar) {
    const float *bi = bias ? bias + (ptrdiff_t)m * bsr : NULL;
    int32_t n = 0;
    for (; n < nfull; n += 16) seg_16(o + n, a, b + n, br, bi ? bi + n : NULL, K, 4);
    if (tail) tail(o + n, a, b + n, br, bi ? bi + n : NULL, K, lanes);
  }
}
#else
/* Portable: nc (1..8) columns in scalar accumulators (FPU registers; written out one by one since
 * -O2 does not unroll a loop over them, and an array would live in memory). */
static ALWAYS_INLINE void seg_c(float *o, const float *a, const float *b, ptrdiff_t br,
                                const float *bias, int32_t K, const int nc) {
  float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f, c4 = 0.0f, c5 = 0.0f, c6 = 0.0f, c7 = 0.0f;
  if (bias) {
    c0 = bias[0];
    if (nc > 1) c1 = bias[1];
    if (nc > 2) c2 = bias[2];
    if (nc > 3) c3 = bias[3];
    if (nc > 4) c4 = bias[4];
    if (nc > 5) c5 = bias[5];
    if (nc > 6) c6 = bias[6];
    if (nc > 7) c7 = bias[7];
  }
  for (int32_t k = 0; k < K; k++, b += br) {
    const float av = a[k];
    c0 += av * b[0];
    if (nc > 1) c1 += av * b[1];
    if (nc > 2) c2 += av * b[2];
    if (nc > 3) c3 += av * b[3];
    if (nc > 4) c4 += av * b[4];
    if (nc > 5) c5 += av * b[5];
    if (nc > 6) c6 += av * b[6];
    if (nc > 7) c7 += av * b[7];
  }
  o[0] = c0;
  if (nc > 1) o[1] = c1;
  if (nc > 2) o[2] = c2;
  if (nc > 3) o[3] = c3;
  if (nc > 4) o[4] = c4;
  if (nc > 5) o[5] = c5;
  if (nc > 6) o[6] = c6;
  if (nc > 7) o[7] = c7;
}

static void gemm_f32(float *o, ptrdiff_t ors, const float *a, ptrdiff_t ar, const float *b,
                     ptrdiff_t br, const float *bias, ptrdiff_t bsr, int32_t M, int32_t K, int32_t N) {
  const int32_t nfull = N & ~7;
  for (int32_t m = 0; m < M; m++, o += ors, a += ar) {
    const float *bi = bias ? bias + (ptrdiff_t)m * bsr : NULL;
    int32_t n = 0;
    for (; n < nfull; n += 8) seg_c(o + n, a, b + n, br, bi ? bi + n : NULL, K, 8);
    const float *bt = bi ? bi + n : NULL;
    switch (N - n) {
      case 1: seg_c(o + n, a, b + n, br, bt, K, 1); break;
      case 2: seg_c(o + n, a, b + n, br, bt, K, 2); break;
      case 3: seg_c(o + n, a, b + n, br, bt, K, 3); break;
      case 4: seg_c(o + n, a, b + n, br, bt, K, 4); break;
      case 5: seg_c(o + n, a, b + n, br, bt, K, 5); break;
      case 6: seg_c(o + n, a, b + n, br, bt, K, 6); break;
      case 7: seg_c(o + n, a, b + n, br, bt, K, 7); break;
      default: break;
    }
  }
}
#endif

/* ---------------- operand layout ---------------- */

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

/* The tensor of a value, NULL if none (the general path then reports why). */
static inline et_tensor *tensor_of(const et_value *v) { return et_is_tensor(v) ? v->u.t : NULL; }

/* Bound float32 tensor of rank nd in row-major layout: what the fast paths take as is. Inline
 * (nd is a constant): on small layers these tests cost as much as the product. */
static ALWAYS_INLINE bool plain_f32(const et_tensor *t, const uint32_t nd) {
  /* dtype and ndim are adjacent bytes, and so are the first dim_order entries: the compiler merges
   * each pair of tests into one halfword compare */
  if (!t || (t->dtype | (uint32_t)t->ndim << 8) != (ET_FLOAT | nd << 8) || !t->data) return false;
  const uint8_t *d = t->dim_order;
  if (!d) return true;
  if (nd == 1) return d[0] == 0;
  if (nd == 2) return (d[0] | (uint32_t)d[1] << 8) == 0x100u;
  for (uint32_t i = 0; i < nd; i++)
    if (d[i] != i) return false;
  return true;
}

/* Scalar argument equal to 1 (Int 1, Double 1.0 or Bool true). */
static ALWAYS_INLINE bool is_one(const et_value *v) {
  return v && ((v->tag == ET_TAG_INT && v->u.i == 1) || (v->tag == ET_TAG_DOUBLE && v->u.dbits == 0x3FF0000000000000ull) ||
               (v->tag == ET_TAG_BOOL && v->u.b));
}

/* ---------------- general path ---------------- */

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

/* float32 with strided columns (transposed views): scalar dot products. */
static void mm_f32_strided(float *o, mat_st os, const float *a, mat_st as, const float *b, mat_st bs, int32_t M,
                           int32_t K, int32_t N) {
  for (int32_t m = 0; m < M; m++)
    for (int32_t n = 0; n < N; n++) {
      float s = 0.0f;
      for (int32_t k = 0; k < K; k++) s += a[m * as.r + k * as.c] * b[k * bs.r + n * bs.c];
      o[m * os.r + n * os.c] = s;
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
    if (all_f32(a, b, out)) {
      float *o = (float *)out->data + i * os.b;
      const float *ap = (const float *)a->data + i * as.b, *bp = (const float *)b->data + i * bs.b;
      if (os.c == 1 && bs.c == 1 && as.c == 1) gemm_f32(o, os.r, ap, as.r, bp, bs.r, NULL, 0, M, K, N);
      else mm_f32_strided(o, os, ap, as, bp, bs, M, K, N);
    } else {
      mm_generic(out, i * os.b, os, a, i * as.b, as, b, i * bs.b, bs, M, K, N);
    }
  }
}

static bool float_dt(const et_tensor *t) { return et_dtype_is_float(t->dtype); }

/* Fast path of mm/bmm: all float32, row-major, out already of the right shape, no empty dims. */
static ALWAYS_INLINE bool mm_fast(const et_tensor *a, const et_tensor *b, const et_tensor *out, const uint32_t nd) {
  if (!plain_f32(a, nd) || !plain_f32(b, nd) || !plain_f32(out, nd)) return false;
  for (uint32_t d = 0; d + 2 < nd; d++)
    if (a->sizes[d] <= 0 || b->sizes[d] != a->sizes[d] || out->sizes[d] != a->sizes[d]) return false;
  const int32_t M = a->sizes[nd - 2], K = a->sizes[nd - 1], N = b->sizes[nd - 1];
  return M > 0 && K > 0 && N > 0 && b->sizes[nd - 2] == K && out->sizes[nd - 2] == M && out->sizes[nd - 1] == N;
}

/* mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) */
ET_OP("aten::mm.out", k_aten_mm_out) {
  ET_CHECK_ARGS(3);
  et_tensor *a = tensor_of(args[0]), *b = tensor_of(args[1]), *out = tensor_of(args[2]);
  if (mm_fast(a, b, out, 2)) {
    const int32_t M = a->sizes[0], K = a->sizes[1], N = b->sizes[1];
    gemm_f32((float *)out->data, N, (const float *)a->data, K, (const float *)b->data, N, NULL, 0, M, K, N);
    return ET_OK;
  }
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
  et_tensor *a = tensor_of(args[0]), *b = tensor_of(args[1]), *out = tensor_of(args[2]);
  if (mm_fast(a, b, out, 3)) {
    const int32_t B = a->sizes[0], M = a->sizes[1], K = a->sizes[2], N = b->sizes[2];
    for (int32_t i = 0; i < B; i++)
      gemm_f32((float *)out->data + (ptrdiff_t)i * M * N, N, (const float *)a->data + (ptrdiff_t)i * M * K, K,
               (const float *)b->data + (ptrdiff_t)i * K * N, N, NULL, 0, M, K, N);
    return ET_OK;
  }
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
/* The general path: any float dtypes, layouts, bias shapes and beta/alpha; reports bad arguments.
 * Out of line so that the fast path's frame stays small. */
static __attribute__((noinline)) et_status addmm_general(et_kctx *ctx, et_value *const *args) {
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

ET_OP("aten::addmm.out", k_aten_addmm_out) {
  ET_CHECK_ARGS(6);
  const et_tensor *bias = tensor_of(args[0]), *a = tensor_of(args[1]), *b = tensor_of(args[2]);
  const et_tensor *out = tensor_of(args[5]);
  /* Fast path (linear layers): beta = alpha = 1, bias a float32 row [N] / [1, N] or matrix [M, N],
   * fused as the accumulators' start. */
  if (mm_fast(a, b, out, 2) && is_one(args[3]) && is_one(args[4]) && (plain_f32(bias, 1) || plain_f32(bias, 2))) {
    const int32_t M = a->sizes[0], K = a->sizes[1], N = b->sizes[1];
    const int32_t b0 = bias->sizes[0];
    ptrdiff_t bsr = -1;
    if (bias->ndim == 1) { if (b0 == N) bsr = 0; }
    else if (bias->sizes[1] == N && (b0 == 1 || b0 == M)) bsr = b0 == 1 ? 0 : N;
    if (bsr >= 0) {
      gemm_f32((float *)out->data, N, (const float *)a->data, K, (const float *)b->data, N,
               (const float *)bias->data, bsr, M, K, N);
      return ET_OK;
    }
  }
  return addmm_general(ctx, args);
}
