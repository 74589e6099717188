/* cortex_m:: int8 linear (fully connected) and batch matmul. */
#include "cm_util.h"
#ifdef CM_DSP
#include "dsp_gemm.h"
#endif

/* ---------------------------------------------------------------- linear */

#ifdef CM_MVE
#define QL_NB 192   /* output columns a block (sums on the stack: 4 * (QL_NB + 5) bytes); a multiple of 6 and 16 */
/* Column constants without kernel sums: io * sum(w_n) + K*io*fo (+ bias), four columns from n
 * (rows past N repeat the last one). */
static int32x4_t qlinear_cols(const int8_t *wd, const int32_t *bd, int32_t n, int32_t N, int32_t K, int32_t in_off,
                              int32_t f_off) {
  int32_t c[4];
  for (int32_t i = 0; i < 4; i++) {
    int32_t r = n + i < N ? n + i : N - 1;
    uint32_t v = (uint32_t)in_off * (uint32_t)sum_s8(wd + (ptrdiff_t)r * K, K) +
                 (uint32_t)K * (uint32_t)in_off * (uint32_t)f_off;
    if (bd) v += (uint32_t)bd[r];
    c[i] = (int32_t)v;
  }
  return vld1q_s32(c);
}

/* d[0..4] = x . w_i for five weight rows of length K > 0 (one input load feeds five vmladava).
 * The K % 16 remainder (or a last full 16) is done first, with the input predicated: the weights
 * then load whole vectors without reading past their row (K >= 16), and the rest are whole trips. */
CM_HOT static void dot5_s8(const int8_t *x, const int8_t *w0, const int8_t *w1, const int8_t *w2, const int8_t *w3,
                           const int8_t *w4, int32_t K, int32_t *d) {
  int32_t r = ((K - 1) & 15) + 1, a0, a1, a2, a3, a4;
  mve_pred16_t p = vctp8q((uint32_t)r);
  int8x16_t vx = vld1q_z_s8(x, p);
  if (K >= 16) {
    a0 = vmladavq_s8(vx, vld1q_s8(w0)); a1 = vmladavq_s8(vx, vld1q_s8(w1)); a2 = vmladavq_s8(vx, vld1q_s8(w2));
    a3 = vmladavq_s8(vx, vld1q_s8(w3)); a4 = vmladavq_s8(vx, vld1q_s8(w4));
  } else {
    a0 = vmladavq_s8(vx, vld1q_z_s8(w0, p)); a1 = vmladavq_s8(vx, vld1q_z_s8(w1, p));
    a2 = vmladavq_s8(vx, vld1q_z_s8(w2, p)); a3 = vmladavq_s8(vx, vld1q_z_s8(w3, p));
    a4 = vmladavq_s8(vx, vld1q_z_s8(w4, p));
  }
  x += r; w0 += r; w1 += r; w2 += r; w3 += r; w4 += r;
  for (int32_t n = (K - r) >> 4; n > 0; n--) {
    vx = vld1q_s8(x);
    a0 = vmladavaq_s8(a0, vx, vld1q_s8(w0));
    a1 = vmladavaq_s8(a1, vx, vld1q_s8(w1));
    a2 = vmladavaq_s8(a2, vx, vld1q_s8(w2));
    a3 = vmladavaq_s8(a3, vx, vld1q_s8(w3));
    a4 = vmladavaq_s8(a4, vx, vld1q_s8(w4));
    x += 16; w0 += 16; w1 += 16; w2 += 16; w3 += 16; w4 += 16;
  }
  d[0] = a0; d[1] = a1; d[2] = a2; d[3] = a3; d[4] = a4;
}

/* d[0..1] = x . w_i for two weight rows of length K > 0, the K % 16 remainder first as in dot5_s8 */
CM_HOT static void dot2_s8(const int8_t *x, const int8_t *w0, const int8_t *w1, int32_t K, int32_t *d) {
  const int32_t r = ((K - 1) & 15) + 1;
  const mve_pred16_t p = vctp8q((uint32_t)r);
  const int8x16_t vx = vld1q_z_s8(x, p);
  int32_t a0 = vmladavq_s8(vx, vld1q_z_s8(w0, p)), a1 = vmladavq_s8(vx, vld1q_z_s8(w1, p));
  x += r; w0 += r; w1 += r;
  for (int32_t n = (K - r) >> 4; n > 0; n--, x += 16, w0 += 16, w1 += 16) {
    const int8x16_t v = vld1q_s8(x);
    a0 = vmladavaq_s8(a0, v, vld1q_s8(w0));
    a1 = vmladavaq_s8(a1, v, vld1q_s8(w1));
  }
  d[0] = a0; d[1] = a1;
}

#include "dot6_mve.h"

/* n16 blocks of sixteen columns: sums d + kernel sums k requantised to y, in asm, 37 instructions a
 * block (was ~56 four lanes at a time): vld4 deals a block's columns out as c, c+4, c+8, c+12 per
 * vector, so the narrows (even lanes from one vector, odd from another) put them back in order; the
 * clamp rides on the saturating narrows as in gemm_requant_mve.h ((v + out_off - amin) saturated to
 * uint8, min amax - amin, + amin; exact for amin <= amax in int8 and |out_off| <= 1024). p: mult, shift,
 * out_off - amin, amin, amax - amin. */
#if QL_ASM
__attribute__((noinline)) static void qlin_req16(const int32_t *d, const int32_t *k, int8_t *y, int32_t n16,
                                                 const int32_t *p) {
  register const int32_t *rd __asm__("r0") = d;
  register const int32_t *rk __asm__("r1") = k;
  register int8_t *ry __asm__("r2") = y;
  register int32_t rn __asm__("r3") = n16;
  register const int32_t *rp __asm__("r4") = p;
  __asm__ volatile(
      "ldm r4, {r4, r5, r6, r7, r8}\n\t"
      "dls lr, r3\n"
      "1:\n\t"
      "vld40.32 {q0, q1, q2, q3}, [r0]\n\t"
      "vld41.32 {q0, q1, q2, q3}, [r0]\n\t"
      "vld42.32 {q0, q1, q2, q3}, [r0]\n\t"
      "vld43.32 {q0, q1, q2, q3}, [r0]!\n\t"
      "vld40.32 {q4, q5, q6, q7}, [r1]\n\t"
      "vld41.32 {q4, q5, q6, q7}, [r1]\n\t"
      "vld42.32 {q4, q5, q6, q7}, [r1]\n\t"
      "vld43.32 {q4, q5, q6, q7}, [r1]!\n\t"
      "vadd.i32 q0, q0, q4\n\t"
      "vadd.i32 q1, q1, q5\n\t"
      "vadd.i32 q2, q2, q6\n\t"
      "vadd.i32 q3, q3, q7\n\t"
      "vshr.s32 q4, q0, #31\n\t"
      "vqrdmlah.s32 q4, q0, r4\n\t"
      "vshr.s32 q5, q1, #31\n\t"
      "vqrdmlah.s32 q5, q1, r4\n\t"
      "vshr.s32 q6, q2, #31\n\t"
      "vqrdmlah.s32 q6, q2, r4\n\t"
      "vshr.s32 q7, q3, #31\n\t"
      "vqrdmlah.s32 q7, q3, r4\n\t"
      "vrshl.s32 q4, r5\n\t"
      "vrshl.s32 q5, r5\n\t"
      "vrshl.s32 q6, r5\n\t"
      "vrshl.s32 q7, r5\n\t"
      "vqmovnb.s32 q0, q4\n\t"
      "vqmovnt.s32 q0, q6\n\t"
      "vqmovnb.s32 q1, q5\n\t"
      "vqmovnt.s32 q1, q7\n\t"
      "vqadd.s16 q0, q0, r6\n\t"
      "vqadd.s16 q1, q1, r6\n\t"
      "vqmovunb.s16 q2, q0\n\t"
      "vqmovunt.s16 q2, q1\n\t"
      "vdup.8 q3, r8\n\t"
      "vmin.u8 q2, q2, q3\n\t"
      "vadd.i8 q2, q2, r7\n\t"
      "vstrb.8 q2, [r2], #16\n\t"
      "le lr, 1b"
      : "+r"(rd), "+r"(rk), "+r"(ry), "+r"(rn), "+r"(rp)
      :
      : "r5", "r6", "r7", "r8", "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11",
        "d12", "d13", "d14", "d15", "memory");
}
#else
static void qlin_req16(const int32_t *d, const int32_t *k, int8_t *y, int32_t n16, const int32_t *p) {
  (void)d; (void)k; (void)y; (void)n16; (void)p;
}
#endif

/* The Helium linear, per input row and block of up to QL_NB output columns: the dot products six
 * columns at a time (qlin_dot6), the rest two or five (columns past the block repeat its last one), then the
 * column constants (kernel sums, or zero-point terms and bias) added and the block requantised four
 * lanes at a time.
 * Needs K > 0 and cm_vec_requant_ok(mult, shift). */
static void qlinear_mve(const int8_t *x, const int8_t *wd, const int32_t *bd, const int32_t *kd, int8_t *y,
                        int32_t M, int32_t N, int32_t K, int32_t in_off, int32_t f_off, int32_t out_off,
                        int32_t mult, int32_t shift, int32_t amin, int32_t amax) {
  int32_t d[QL_NB + 5] __attribute__((aligned(16)));
  const int32x4_t vlo = vdupq_n_s32(amin), vhi = vdupq_n_s32(amax);
  const bool qr16 = amin >= -128 && amin <= amax && amax <= 127 && out_off >= -1024 && out_off <= 1024;
  const int32_t rq[5] = {mult, shift, out_off - amin, amin, amax - amin};
  for (int32_t m = 0; m < M; m++, x += K, y += N) {
    /* f_off * sum(x): zero in the usual symmetric-weight case */
    const int32_t fx = f_off ? (int32_t)((uint32_t)f_off * (uint32_t)sum_s8(x, K)) : 0;
    for (int32_t nb = 0; nb < N; nb += QL_NB) {
      const int32_t nn = N - nb < QL_NB ? N - nb : QL_NB;
      const int8_t *wb = wd + (ptrdiff_t)nb * K;
      int32_t n5 = 0;
      if (QL_ASM && nn >= 12) {  /* six rows a pass, the rest below */
        qlin_dot6(x, wb, K, nn / 6, d);
        n5 = nn / 6 * 6;
      }
      for (const int8_t *w0 = wb + (ptrdiff_t)n5 * K; n5 + 5 <= nn; n5 += 5, w0 += 5 * (ptrdiff_t)K)
        dot5_s8(x, w0, w0 + K, w0 + 2 * K, w0 + 3 * K, w0 + 4 * K, K, d + n5);
      if (nn - n5 == 1 || nn - n5 == 2) {  /* one or two rows left: a two-row pass */
        const int8_t *w0 = wb + (ptrdiff_t)n5 * K;
        dot2_s8(x, w0, nn - n5 == 2 ? w0 + K : w0, K, d + n5);
        n5 = nn;
      }
      for (int32_t n = n5; n < nn; n += 5) {  /* a last partial group: its missing rows repeat the last */
        const int32_t left = nn - n;
        const int8_t *w0 = wb + (ptrdiff_t)n * K, *w1 = left > 1 ? w0 + K : w0, *w2 = left > 2 ? w1 + K : w1,
                     *w3 = left > 3 ? w2 + K : w2, *w4 = left > 4 ? w3 + K : w3;
        dot5_s8(x, w0, w1, w2, w3, w4, K, d + n);
      }
      if (kd) {
        /* 16 columns a pass (qlin_req16), whole vectors unpredicated, the last partial one predicated (kd
         * must not be read past N) */
        const int32_t *kp = kd + nb;
        int8_t *yp = y + nb;
        int32_t n = 0;
        if (QL_ASM && qr16 && fx == 0 && nn >= 16) {
          qlin_req16(d, kp, yp, nn >> 4, rq);
          n = nn & ~15;
        }
        for (; n + 4 <= nn; n += 4) {
          /* wrapping sums, like the 32-bit accumulator of the reference */
          int32x4_t acc = vaddq_n_s32(vaddq_s32(vld1q_s32(d + n), vld1q_s32(kp + n)), fx);
          int32x4_t r = cm_requant_vn(acc, mult, shift);
          vstrbq_s32(yp + n, vminq_s32(vmaxq_s32(vqaddq_n_s32(r, out_off), vlo), vhi));
        }
        if (n < nn) {
          mve_pred16_t pn = vctp32q((uint32_t)(nn - n));
          int32x4_t acc = vaddq_n_s32(vaddq_s32(vld1q_s32(d + n), vld1q_z_s32(kp + n, pn)), fx);
          int32x4_t r = cm_requant_vn(acc, mult, shift);
          vstrbq_p_s32(yp + n, vminq_s32(vmaxq_s32(vqaddq_n_s32(r, out_off), vlo), vhi), pn);
        }
        continue;
      }
      for (int32_t n = 0; n < nn; n += 4) {
        mve_pred16_t pn = vctp32q((uint32_t)(nn - n));
        int32x4_t cst = qlinear_cols(wd, bd, nb + n, N, K, in_off, f_off);
        /* wrapping sums, like the 32-bit accumulator of the reference */
        int32x4_t acc = vaddq_s32(vaddq_s32(vld1q_s32(d + n), cst), vdupq_n_s32(fx));
        int32x4_t r = cm_requant_vn(acc, mult, shift);
        r = vminq_s32(vmaxq_s32(vqaddq_n_s32(r, out_off), vlo), vhi);
        vstrbq_p_s32(y + nb + n, r, pn);
      }
    }
  }
}
#endif

/* quantized_linear.out(Tensor input, Tensor weights, Tensor? bias, Tensor? kernel_sum, int input_offset,
 *   int filter_offset, int output_offset, int[] requantize_multipliers, int[] requantize_shifts,
 *   int activation_max, int activation_min, *, Tensor(a!) out) */
/* A linear call's arguments, checked */
typedef struct {
  const int8_t *w;
  const int32_t *bias, *ksum;
  int32_t M, N, K, in_off, f_off, out_off, mult, shift, amin, amax;
} qlin;

/* Planned scratch of a linear call (ET_SCRATCH; tools/etdeploy/kernel_scratch.py mirrors it): on the DSP
 * extension the one-column GEMM's (dsp_gemm.h: a widened input row, the padded last weight row) */
static uint32_t qlin_scratch(const qlin *q) {
#if defined(CM_DSP) && !defined(CM_MVE)
  const cm_dsp_mm gm = {q->w, NULL, NULL, NULL, q->N, q->K, q->ksum ? 0 : q->in_off, q->out_off, q->amin, q->amax,
                        false};
  return q->f_off == 0 && cm_dsp_mm_shape_ok(&gm, 2 * CM_DSP_KMAX) ? cm_dsp_mm_bytes(q->K, q->N, false, false) : 0u;
#else
  (void)q;
  return 0u;
#endif
}

/* scr: qlin_scratch(q) bytes of planned scratch, or NULL (then the paths without) */
static void qlinear_run(const qlin *q, const int8_t *x, int8_t *y, int8_t *scr) {
  (void)scr;   /* the DSP GEMM's only */
  const int32_t M = q->M, N = q->N, K = q->K, in_off = q->in_off, f_off = q->f_off, out_off = q->out_off;
  const int32_t mult = q->mult, shift = q->shift, amin = q->amin, amax = q->amax;
  const int8_t *wd = q->w;
  const int32_t *bd = q->bias, *kd = q->ksum;
#ifdef CM_MVE
  if (cm_vec_requant_ok(mult, shift) && K > 0) {
    qlinear_mve(x, wd, bd, kd, y, M, N, K, in_off, f_off, out_off, mult, shift, amin, amax);
    return;
  }
#elif defined(CM_DSP)
  if (f_off == 0 && K > 0) {
    /* sum (x + io) w + bias with the offset added to the widened input, or x.w + kernel_sum */
    const cm_dsp_mm gm = {wd, kd ? kd : bd, &mult, &shift, N, K, kd ? 0 : in_off, out_off, amin, amax, false};
    if (scr && cm_dsp_mm_ok(&gm, 2 * CM_DSP_KMAX)) {
      cm_dsp_scratch s;
      cm_dsp_mm_parts(K, N, false, false, scr, &s);
      cm_dsp_mm_rows(&gm, &s, x, K, M, y, N, 1);
      return;
    }
  }   /* the rest (K over 1280, a left shift, huge biases): the portable loop below */
#endif
  for (int32_t m = 0; m < M; m++) {
    const int8_t *xr = x + (ptrdiff_t)m * K;
    int32_t xsum = sum_s8(xr, K);
    for (int32_t n = 0; n < N; n++) {
      const int8_t *wr = wd + (ptrdiff_t)n * K;
      int32_t d = dot_s8(xr, wr, K);
      uint32_t acc;
      if (kd) {
        acc = (uint32_t)d + (uint32_t)xsum * (uint32_t)f_off + (uint32_t)kd[n];
      } else {
        /* sum (x + io)(w + fo) = d + fo*sum(x) + io*sum(w) + K*io*fo */
        int32_t wsum = (in_off != 0) ? sum_s8(wr, K) : 0;
        acc = (uint32_t)d + (uint32_t)f_off * (uint32_t)xsum + (uint32_t)in_off * (uint32_t)wsum +
              (uint32_t)K * (uint32_t)in_off * (uint32_t)f_off;
        if (bd) acc += (uint32_t)bd[n];
      }
      int32_t r = add_sat_i32(cm_requant((int32_t)acc, mult, shift), out_off);
      y[(ptrdiff_t)m * N + n] = (int8_t)clamp_i32(r, amin, amax);
    }
  }
}

/* What a linear call keeps between executions (ET_STATE; filled at method load): its checked
 * arguments, as long as its input and output are the same static tensors at the same data (see
 * cm_call_same) and its weights are constants. */
typedef struct {
  cm_call call;
  qlin q;
} qlin_state;
ET_STATE("cortex_m::quantized_linear.out", 96);
ET_SCRATCH("cortex_m::quantized_linear.out");
_Static_assert(sizeof(qlin_state) <= 96, "raise the ET_STATE size");

ET_OP("cortex_m::quantized_linear.out", k_cm_quantized_linear_out) {
  ET_CHECK_ARGS(12);
  qlin_state *ks = (qlin_state *)ctx->state;
  if (ks && cm_call_same(&ks->call, args[0], args[11])) {
    const uint32_t need = qlin_scratch(&ks->q);
    if (ctx->prepare) { ctx->scratch_need = need; return ET_OK; }
    qlinear_run(&ks->q, (const int8_t *)ks->call.x->data, (int8_t *)ks->call.y->data, (int8_t *)et_scratch(ctx, need));
    return ET_OK;
  }
  et_tensor *in, *w, *bias = NULL, *ksum = NULL, *out;
  /* every dtype is checked below */
  ARG_TENSOR_DT(0, in);
  ARG_TENSOR_DT(1, w);
  ARG_TENSOR_DT(11, out);
  if (!et_is_none(args[2])) ARG_TENSOR_DT(2, bias);
  if (!et_is_none(args[3])) ARG_TENSOR_DT(3, ksum);
  qlin q;
  ARG_INT(4, q.in_off); ARG_INT(5, q.f_off); ARG_INT(6, q.out_off); ARG_INT(9, q.amax); ARG_INT(10, q.amin);
  uint32_t nm, ns;
  const int64_t *mults = et_int_list(args[7], &nm), *shifts = et_int_list(args[8], &ns);
  if (!mults || !shifts || nm < 1 || ns < 1) BAD(7);
  q.mult = (int32_t)mults[0]; q.shift = (int32_t)shifts[0];
  if (in->dtype != ET_CHAR || w->dtype != ET_CHAR || out->dtype != ET_CHAR || w->ndim != 2 || in->ndim < 1) BAD(0);
  const int32_t K = w->sizes[1], N = w->sizes[0];
  if (in->sizes[in->ndim - 1] != K) BAD(0);
  if (bias && (bias->dtype != ET_INT || numel32(bias) != (uint32_t)N)) BAD(2);
  if (ksum && (ksum->dtype != ET_INT || numel32(ksum) != (uint32_t)N)) BAD(3);
  if (!contiguous(w)) { ctx->err_detail = 0; return ET_ERR_UNSUPPORTED; }
  /* one pass over the input dims: its contiguity, the row count (numel(in) / K without a division),
   * and whether the planned output has the shape already (et_resize only when it differs) */
  const uint32_t nd = in->ndim;
  const uint8_t *ido = in->dim_order, *odo = out->dim_order;
  bool same = out->ndim == nd && out->sizes[nd - 1] == N, cont = true;
  uint32_t rows = 1;
  for (uint32_t d = 0; d < nd; d++) {
    if (ido && ido[d] != d) cont = false;
    if (d + 1 < nd) {
      rows *= (uint32_t)in->sizes[d];
      if (same && out->sizes[d] != in->sizes[d]) same = false;
    }
  }
  if (!cont) { ctx->err_detail = 0; return ET_ERR_UNSUPPORTED; }
  if (!same) {
    int32_t os[ET_MAX_DIMS];
    for (uint32_t d = 0; d < nd; d++) os[d] = in->sizes[d];
    os[nd - 1] = N;
    et_status st = et_resize(out, nd, os);
    if (st) { ctx->err_detail = 11; return st; }
  }
  /* out has nd dims here */
  for (uint32_t d = 0; odo && d < nd; d++)
    if (odo[d] != d) { ctx->err_detail = 11; return ET_ERR_UNSUPPORTED; }
  q.M = K ? (int32_t)rows : 0; q.N = N; q.K = K;
  q.w = (const int8_t *)w->data;
  q.bias = bias ? (const int32_t *)bias->data : NULL;
  q.ksum = ksum ? (const int32_t *)ksum->data : NULL;
  if (ks) {
    ks->q = q;
    cm_call_set(&ks->call, in, out, w->constant && (!bias || bias->constant) && (!ksum || ksum->constant));
  }
  int8_t *scr = NULL;
  ET_SCRATCH_TAKE(ctx, qlin_scratch(&q), scr);
  qlinear_run(&q, (const int8_t *)in->data, (int8_t *)out->data, scr);
  return ET_OK;
}

/* ---------------------------------------------------------------- batch matmul */

/* quantized_batch_matmul.out(Tensor lhs, int lhs_zero_point, Tensor rhs_transposed, int rhs_zero_point,
 *   int output_zero_point, int output_multiplier, int output_shift, Tensor scratch, *, Tensor(a!) out)
 * The "zero points" of lhs / rhs are offsets added to the values (CMSIS-NN convention). */
ET_OP("cortex_m::quantized_batch_matmul.out", k_cm_quantized_batch_matmul_out) {
  ET_CHECK_ARGS(9);
  et_tensor *a, *bt, *out;
  ARG_TENSOR(0, a);
  ARG_TENSOR(2, bt);
  ARG_TENSOR(8, out);
  int32_t ao, bo, oz, om, os;
  ARG_INT(1, ao); ARG_INT(3, bo); ARG_INT(4, oz); ARG_INT(5, om); ARG_INT(6, os);
  if (a->ndim != 3 || bt->ndim != 3 || a->sizes[0] != bt->sizes[0] || a->sizes[2] != bt->sizes[2] ||
      a->dtype != ET_CHAR || bt->dtype != ET_CHAR || out->dtype != ET_CHAR) BAD(0);
  if (!et_is_contiguous(a) || !et_is_contiguous(bt)) { ctx->err_detail = 0; return ET_ERR_UNSUPPORTED; }
  int32_t B = a->sizes[0], M = a->sizes[1], K = a->sizes[2], N = bt->sizes[1];
  int32_t s3[3] = {B, M, N};
  et_status st = et_resize(out, 3, s3);
  if (st) { ctx->err_detail = 8; return st; }
  if (!et_is_contiguous(out)) { ctx->err_detail = 8; return ET_ERR_UNSUPPORTED; }
  const int8_t *x = (const int8_t *)a->data, *z = (const int8_t *)bt->data;
  int8_t *y = (int8_t *)out->data;
  for (int32_t b = 0; b < B; b++)
    for (int32_t m = 0; m < M; m++) {
      const int8_t *xr = x + ((ptrdiff_t)b * M + m) * K;
      int32_t xs = sum_s8(xr, K);
      for (int32_t n = 0; n < N; n++) {
        const int8_t *zr = z + ((ptrdiff_t)b * N + n) * K;
        int32_t acc = dot_s8(xr, zr, K) + bo * xs + ao * sum_s8(zr, K) + K * ao * bo;
        int32_t r = cm_requant(acc, om, os) + oz;
        y[((ptrdiff_t)b * M + m) * N + n] = (int8_t)clamp_i32(r, -128, 127);
      }
    }
  return ET_OK;
}
