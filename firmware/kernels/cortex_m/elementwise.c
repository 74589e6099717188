/* cortex_m:: int8 elementwise operators (add, mul, div, minimum/maximum, LUT activation) and softmax. */
#include "cm_util.h"

/* ---------------------------------------------------------------- elementwise */

static et_status ew2(et_kctx *ctx, et_value *const *args, uint32_t ai, uint32_t bi, uint32_t oi, et_ew *w,
                     et_tensor **a, et_tensor **b, et_tensor **out) {
  ARG_TENSOR(ai, *a);
  ARG_TENSOR(bi, *b);
  ARG_TENSOR(oi, *out);
  et_tensor *ins[2] = {*a, *b};
  et_status st = et_ew_prepare(w, *out, ins, 2, true);
  if (st) { ctx->err_detail = oi; return st; }
  return ET_OK;
}

/* The same elements, in the same order, in a, b and out (no broadcast, one layout): n of them */
CM_UNUSED static bool ew_flat(const et_ew *w, const et_tensor *a, const et_tensor *b, const et_tensor *out) {
  return (int64_t)w->n == et_numel(a) && (int64_t)w->n == et_numel(b) && et_same_layout(a, out) &&
         et_same_layout(b, out);
}

#ifdef CM_MVE
/* cm_requant on four lanes for shift in [-31, 0]: shift 0 is the doubling high multiply alone, which is
 * (v * mult + 2^30) >> 31 exactly (mult > 0: it never saturates); the larger input of an add has it */
static inline bool qadd_req_ok(int32_t mult, int32_t shift) { return mult > 0 && shift <= 0 && shift >= -31; }
__attribute__((always_inline)) static inline int32x4_t qadd_req(int32x4_t v, int32_t mult, int32_t shift) {
  return shift ? cm_requant_vn(v, mult, shift) : vqrdmulhq_n_s32(v, mult);
}

/* quantized_add of whole vectors in asm (n4 >= 1 groups of four): a requantisation is vshr, vand,
 * vqrdmlah, vrshl, the sign correction masked off where the shift is 0 (there cm_requant is the doubling
 * multiply alone): 24 instructions per four elements; 19 in the usual case, where input a has shift 0
 * (its requantisation one vqrdmulh) and b and the output do not. q: [maskA, maskB, maskO, lo, hi]
 * vectors, r: [az, bz, am, as, bm, bs, om, os, oz]. */
#ifdef __OPTIMIZE__  /* the asm needs r7 (the frame pointer at -O0) */
#define QADD_ASM 1
#define QADD_BODY(REQ_A, REQ_B, REQ_O) \
      "vldrw.u32 q5, [r3]\n\t" \
      "vldrw.u32 q6, [r3, #16]\n\t" \
      "vldrw.u32 q7, [r3, #32]\n\t" \
      "vldrw.u32 q3, [r3, #48]\n\t" \
      "vldrw.u32 q4, [r3, #64]\n\t" \
      "ldm r4, {r3, r4, r5, r6, r7, r8, r9, r10, r11}\n\t" \
      "dls lr, r12\n" \
      "1:\n\t" \
      "vldrb.s32 q0, [r0], #4\n\t" \
      "vldrb.s32 q1, [r1], #4\n\t" \
      "vsub.i32 q0, q0, r3\n\t" \
      "vsub.i32 q1, q1, r4\n\t" \
      "vshl.i32 q0, q0, #20\n\t" \
      "vshl.i32 q1, q1, #20\n\t" \
      REQ_A \
      REQ_B \
      "vadd.i32 q0, q0, q2\n\t" \
      REQ_O \
      "vadd.i32 q1, q1, r11\n\t" \
      "vmax.s32 q1, q1, q3\n\t" \
      "vmin.s32 q1, q1, q4\n\t" \
      "vstrb.32 q1, [r2], #4\n\t" \
      "le lr, 1b"
/* a: q0 -> q2; b: q1 -> q0; out: q0 -> q1 */
#define QADD_A_MASKED "vshr.s32 q2, q0, #31\n\tvand q2, q2, q5\n\tvqrdmlah.s32 q2, q0, r5\n\tvrshl.s32 q2, r6\n\t"
#define QADD_B_MASKED "vshr.s32 q0, q1, #31\n\tvand q0, q0, q6\n\tvqrdmlah.s32 q0, q1, r7\n\tvrshl.s32 q0, r8\n\t"
#define QADD_O_MASKED "vshr.s32 q1, q0, #31\n\tvand q1, q1, q7\n\tvqrdmlah.s32 q1, q0, r9\n\tvrshl.s32 q1, r10\n\t"
#define QADD_A_SHIFT0 "vqrdmulh.s32 q2, q0, r5\n\t"
#define QADD_B_SHIFTED "vshr.s32 q0, q1, #31\n\tvqrdmlah.s32 q0, q1, r7\n\tvrshl.s32 q0, r8\n\t"
#define QADD_O_SHIFTED "vshr.s32 q1, q0, #31\n\tvqrdmlah.s32 q1, q0, r9\n\tvrshl.s32 q1, r10\n\t"
#define QADD_OPERANDS \
      : "+r"(rx), "+r"(rz), "+r"(ry), "+r"(rn), "+r"(rq), "+r"(rr) \
      : \
      : "r5", "r6", "r7", "r8", "r9", "r10", "r11", "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", \
        "d10", "d11", "d12", "d13", "d14", "d15", "memory"
__attribute__((noinline)) static void qadd_asm(const int8_t *x, const int8_t *z, int8_t *y, uint32_t n4,
                                               const int32x4_t *q, const int32_t *r, bool usual) {
  register const int8_t *rx __asm__("r0") = x;
  register const int8_t *rz __asm__("r1") = z;
  register int8_t *ry __asm__("r2") = y;
  register uint32_t rn __asm__("r12") = n4;
  register const int32x4_t *rq __asm__("r3") = q;
  register const int32_t *rr __asm__("r4") = r;
  if (usual) __asm__ volatile(QADD_BODY(QADD_A_SHIFT0, QADD_B_SHIFTED, QADD_O_SHIFTED) QADD_OPERANDS);
  else __asm__ volatile(QADD_BODY(QADD_A_MASKED, QADD_B_MASKED, QADD_O_MASKED) QADD_OPERANDS);
}
#undef QADD_BODY
#undef QADD_A_MASKED
#undef QADD_B_MASKED
#undef QADD_O_MASKED
#undef QADD_A_SHIFT0
#undef QADD_B_SHIFTED
#undef QADD_O_SHIFTED
#undef QADD_OPERANDS
#else
#define QADD_ASM 0
#endif

/* quantized_add on four lanes: exact where qadd_req_ok holds for all three requantisations */
CM_HOT static void qadd_mve(const int8_t *x, const int8_t *z, int8_t *y, uint32_t n, const int32_t *p) {
  const int32_t az = p[0], am = p[1], as = p[2], bz = p[3], bm = p[4], bs = p[5], oz = p[6], om = p[7], os = p[8];
  const int32x4_t lo = vdupq_n_s32(p[9]), hi = vdupq_n_s32(p[10]);
  uint32_t i = 0;
#if QADD_ASM
  if (n >= 4) {
    /* the sum is symmetric: b with shift 0 and a without becomes the usual case with the inputs swapped */
    const bool swap = as != 0 && bs == 0;
    const int32_t r[9] = {swap ? bz : az, swap ? az : bz, swap ? bm : am, swap ? bs : as, swap ? am : bm,
                          swap ? as : bs, om, os, oz};
    const int32x4_t q[5] = {vdupq_n_s32(r[3] ? -1 : 0), vdupq_n_s32(r[5] ? -1 : 0), vdupq_n_s32(os ? -1 : 0), lo, hi};
    const bool usual = r[3] == 0 && r[5] != 0 && os != 0;
    qadd_asm(swap ? z : x, swap ? x : z, y, n >> 2, q, r, usual);
    i = n & ~3u;
  }
#endif
  for (; i < n; i += 4) {
    const mve_pred16_t pr = vctp32q(n - i);
    const int32x4_t xa = qadd_req(vshlq_n_s32(vsubq_n_s32(vldrbq_z_s32(x + i, pr), az), 20), am, as);
    const int32x4_t xb = qadd_req(vshlq_n_s32(vsubq_n_s32(vldrbq_z_s32(z + i, pr), bz), 20), bm, bs);
    /* wrapping sums, as the scalar form */
    const int32x4_t r = vaddq_n_s32(qadd_req(vaddq_s32(xa, xb), om, os), oz);
    vstrbq_p_s32(y + i, vminq_s32(vmaxq_s32(r, lo), hi), pr);
  }
}

/* quantized_mul on four lanes: exact where qadd_req_ok(om, os). With zero points within +-16000 (the
 * differences fit int16, the output's offset leaves room below the int16 bounds), eight a step: the
 * differences in int16 lanes, their exact products in two int32 halves (even and odd lanes), each
 * requantised, narrowed back saturating (a result past int16 clamps to the same int8 bound), + oz, clamp */
CM_HOT static void qmul_mve(const int8_t *x, const int8_t *z, int8_t *y, uint32_t n, int32_t az, int32_t bz,
                            int32_t oz, int32_t om, int32_t os) {
  const int32x4_t lo = vdupq_n_s32(-128), hi = vdupq_n_s32(127);
  if (az >= -16000 && az <= 16000 && bz >= -16000 && bz <= 16000 && oz >= -16000 && oz <= 16000) {
    const int16x8_t lo8 = vdupq_n_s16(-128), hi8 = vdupq_n_s16(127);
    for (uint32_t i = 0; i < n; i += 8) {
      const mve_pred16_t pr = vctp16q(n - i);
      const int16x8_t pa = vsubq_n_s16(vldrbq_z_s16(x + i, pr), (int16_t)az);
      const int16x8_t pb = vsubq_n_s16(vldrbq_z_s16(z + i, pr), (int16_t)bz);
      const int32x4_t e = qadd_req(vmullbq_int_s16(pa, pb), om, os), o = qadd_req(vmulltq_int_s16(pa, pb), om, os);
      const int16x8_t r = vqaddq_n_s16(vqmovntq_s32(vqmovnbq_s32(vdupq_n_s16(0), e), o), (int16_t)oz);
      vstrbq_p_s16(y + i, vminq_s16(vmaxq_s16(r, lo8), hi8), pr);
    }
    return;
  }
  for (uint32_t i = 0; i < n; i += 4) {
    const mve_pred16_t pr = vctp32q(n - i);
    const int32x4_t pa = vsubq_n_s32(vldrbq_z_s32(x + i, pr), az), pb = vsubq_n_s32(vldrbq_z_s32(z + i, pr), bz);
    const int32x4_t r = vaddq_n_s32(qadd_req(vmulq_s32(pa, pb), om, os), oz);
    vstrbq_p_s32(y + i, vminq_s32(vmaxq_s32(r, lo), hi), pr);
  }
}
#endif

#ifdef CM_DSP
/* cm_requant for shift in [-30, 0] of v2 / 2 (v2 = 2v, |v| < 2^29), as cm_dsp_rq1 computes it: SMMULR(2v, m)
 * is (v * m + 2^30) >> 31, then the rounding shift by rs = -shift (half away from zero) */
__attribute__((always_inline)) static inline int32_t qew_rq(int32_t v2, int32_t mult, int32_t rnd, int32_t rs1) {
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(v2), "r"(mult));
  return ((int32_t)((uint32_t)r << 1) + rnd + (r >> 31)) >> rs1;
}
static inline bool qew_rq_ok(int32_t shift) { return shift <= 0 && shift >= -30; }
static inline bool qew_zp_ok(int32_t zp) { return zp >= -128 && zp <= 127; }

/* quantized_add on the DSP cores: int8 zero points bound |x - zp| by 255, so the shifted inputs
 * (<< 20) stay below 2^28 and their requantised sum below 2^29: every step takes the fast form. Each
 * input's requantisation depends on its int8 value alone: for long tensors a table of the 256 values
 * per input (doubled: their sum is what SMMULR takes), and the output offset folded into the rounding
 * constant k (|out_zp| << 23 at most) so one SSAT gives the int8 range; k is added saturating: where
 * that saturates, the exact value is far outside int8 on the same side. */
#define QADD_DSP_LUT 256   /* int32 entries a table (two tables: 2 KB of stack) */
#define QADD_DSP_LUT_MIN 384    /* elements from which the tables pay for their 512 requantisations */
__attribute__((noinline)) static void qadd_dsp(const int8_t *x, const int8_t *z, int8_t *y, uint32_t n,
                                               const int32_t *p) {
  const int32_t az = p[0], am = p[1], ar = 1 << -p[2], ar1 = 1 - p[2], bz = p[3], bm = p[4], br = 1 << -p[5];
  const int32_t br1 = 1 - p[5], oz = p[6], om = p[7], orr = 1 << -p[8], or1 = 1 - p[8], lo = p[9], hi = p[10];
  const bool full = lo == -128 && hi == 127;
  if (n >= QADD_DSP_LUT_MIN && full && or1 <= 23 && oz >= -128 && oz <= 127) {
    int32_t lut[2][QADD_DSP_LUT];
    for (int32_t v = -128; v < 128; v++) {
      lut[0][v + 128] = 2 * qew_rq((int32_t)((uint32_t)(v - az) << 21), am, ar, ar1);
      lut[1][v + 128] = 2 * qew_rq((int32_t)((uint32_t)(v - bz) << 21), bm, br, br1);
    }
    const int32_t *ta = lut[0] + 128, *tb = lut[1] + 128;
    const int32_t k = orr + (int32_t)((uint32_t)oz << or1);
    for (uint32_t i = 0; i < n; i++) {
      int32_t r;
      __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(ta[x[i]] + tb[z[i]]), "r"(om));
      y[i] = (int8_t)__ssat(__qadd((int32_t)((uint32_t)r << 1) + (r >> 31), k) >> or1, 8);
    }
    return;
  }
  for (uint32_t i = 0; i < n; i++) {
    const int32_t xa = qew_rq((int32_t)((uint32_t)(x[i] - az) << 21), am, ar, ar1);
    const int32_t xb = qew_rq((int32_t)((uint32_t)(z[i] - bz) << 21), bm, br, br1);
    const int32_t r = (int32_t)((uint32_t)qew_rq((int32_t)((uint32_t)(xa + xb) << 1), om, orr, or1) + (uint32_t)oz);
    y[i] = (int8_t)(full ? __ssat(r, 8) : clamp_i32(r, lo, hi));
  }
}

/* quantized_mul: |(x - az)(z - bz)| < 2^29 (qmul_zp_ok), qew_rq's bound; zero points may lie past int8
 * (mobilenet_v3's hardswish has one of -433) */
static inline bool qmul_zp_ok(int32_t az, int32_t bz) {
  return az >= -16384 && az <= 16384 && bz >= -16384 && bz <= 16384 &&
         (int64_t)(128 + (az < 0 ? -az : az)) * (128 + (bz < 0 ? -bz : bz)) < ((int64_t)1 << 29);
}
__attribute__((noinline)) static void qmul_dsp(const int8_t *x, const int8_t *z, int8_t *y, uint32_t n, int32_t az,
                                               int32_t bz, int32_t oz, int32_t om, int32_t os) {
  const int32_t rnd = 1 << -os, rs1 = 1 - os;
  for (uint32_t i = 0; i < n; i++) {
    const int32_t pr = (x[i] - az) * (z[i] - bz);
    y[i] = (int8_t)__ssat((int32_t)((uint32_t)qew_rq(pr * 2, om, rnd, rs1) + (uint32_t)oz), 8);
  }
}
#endif

/* A per-channel operand ((1, C, 1, 1): a squeeze-excitation scale) against a 4-d one laid out as the
 * output in NHWC memory: it repeats every C elements, so the op runs on rows of C. The full operand is
 * a (full 0) or b (full 1). */
typedef struct { uint32_t rows, len; int full; } chan_bcast;

static bool chan_bcast_of(const et_tensor *a, const et_tensor *b, const et_tensor *out, chan_bcast *cb) {
  if (out->ndim != 4) return false;
  const int32_t n = out->sizes[0], c = out->sizes[1], hw = out->sizes[2] * out->sizes[3];
  const bool nhwc = hw == 1 || (out->dim_order && out->dim_order[1] == 2 && out->dim_order[3] == 1);
  if (!nhwc || c <= 1) return false;
  const uint32_t total = numel32(out);
  for (int f = 0; f < 2; f++) {
    const et_tensor *full = f ? b : a, *small = f ? a : b;
    if (numel32(full) != total || !et_same_shape(full, out) || !et_same_layout(full, out)) continue;
    /* other dims 1: the C values are contiguous whatever the small side's dim order */
    if (small->ndim != 4 || small->sizes[0] != 1 || small->sizes[1] != c || small->sizes[2] != 1 ||
        small->sizes[3] != 1 || n < 1)
      continue;
    cb->full = f;
    cb->len = (uint32_t)c;
    cb->rows = total / (uint32_t)c;
    return true;
  }
  return false;
}

/* quantized_mul of each row of x against the per-channel row z */
static void qmul_rows(const int8_t *x, const int8_t *z, int8_t *y, const chan_bcast *cb, int32_t az, int32_t bz,
                      int32_t oz, int32_t om, int32_t os) {
  for (uint32_t r = 0; r < cb->rows; r++) {
    const int8_t *xr = x + (size_t)r * cb->len;
    int8_t *yr = y + (size_t)r * cb->len;
#ifdef CM_MVE
    if (qadd_req_ok(om, os)) {
      qmul_mve(xr, z, yr, cb->len, az, bz, oz, om, os);
      continue;
    }
#elif defined(CM_DSP)
    if (qmul_zp_ok(az, bz) && qew_rq_ok(os)) {
      qmul_dsp(xr, z, yr, cb->len, az, bz, oz, om, os);
      continue;
    }
#endif
    for (uint32_t i = 0; i < cb->len; i++) {
      const int32_t p = ((int32_t)xr[i] - az) * ((int32_t)z[i] - bz);
      yr[i] = (int8_t)clamp_i32((int32_t)((uint32_t)cm_requant(p, om, os) + (uint32_t)oz), -128, 127);
    }
  }
}

/* quantized_add.out(Tensor self, int self_zero_point, int self_multiplier, int self_shift, Tensor other,
 *   int other_zero_point, int other_multiplier, int other_shift, int output_zero_point,
 *   int output_multiplier, int output_shift, int activation_min, int activation_max, *, Tensor(a!) out) */
ET_OP("cortex_m::quantized_add.out", k_cm_quantized_add_out) {
  ET_CHECK_ARGS(14);
  int32_t az, am, as, bz, bm, bs, oz, om, os, lo, hi;
  ARG_INT(1, az); ARG_INT(2, am); ARG_INT(3, as); ARG_INT(5, bz); ARG_INT(6, bm); ARG_INT(7, bs);
  ARG_INT(8, oz); ARG_INT(9, om); ARG_INT(10, os); ARG_INT(11, lo); ARG_INT(12, hi);
  et_ew w;
  et_tensor *a, *b, *out;
  et_status st = ew2(ctx, args, 0, 4, 13, &w, &a, &b, &out);
  if (st) return st;
  if (a->dtype != ET_CHAR || b->dtype != ET_CHAR || out->dtype != ET_CHAR) BAD(0);
  const int8_t *x = (const int8_t *)a->data, *z = (const int8_t *)b->data;
  int8_t *y = (int8_t *)out->data;
#ifdef CM_MVE
  if (qadd_req_ok(am, as) && qadd_req_ok(bm, bs) && qadd_req_ok(om, os) && w.n <= UINT32_MAX &&
      ew_flat(&w, a, b, out)) {
    const int32_t p[11] = {az, am, as, bz, bm, bs, oz, om, os, lo, hi};
    qadd_mve(x, z, y, (uint32_t)w.n, p);
    return ET_OK;
  }
#elif defined(CM_DSP)
  if (qew_zp_ok(az) && qew_zp_ok(bz) && qew_rq_ok(as) && qew_rq_ok(bs) && qew_rq_ok(os) && w.n <= UINT32_MAX &&
      ew_flat(&w, a, b, out)) {
    const int32_t p[11] = {az, am, as, bz, bm, bs, oz, om, os, lo, hi};
    qadd_dsp(x, z, y, (uint32_t)w.n, p);
    return ET_OK;
  }
#endif
  for (size_t i = 0; i < w.n; i++) {
    int32_t xa = cm_requant((int32_t)((uint32_t)((int32_t)x[w.it.off[1]] - az) << 20), am, as);
    int32_t xb = cm_requant((int32_t)((uint32_t)((int32_t)z[w.it.off[2]] - bz) << 20), bm, bs);
    int32_t r = cm_requant((int32_t)((uint32_t)xa + (uint32_t)xb), om, os);
    y[w.it.off[0]] = (int8_t)clamp_i32((int32_t)((uint32_t)r + (uint32_t)oz), lo, hi);
    et_ew_next(&w);
  }
  return ET_OK;
}

/* quantized_mul.out(Tensor self, int self_zero_point, Tensor other, int other_zero_point,
 *   int output_zero_point, int output_multiplier, int output_shift, *, Tensor(a!) out) */
ET_OP("cortex_m::quantized_mul.out", k_cm_quantized_mul_out) {
  ET_CHECK_ARGS(8);
  int32_t az, bz, oz, om, os;
  ARG_INT(1, az); ARG_INT(3, bz); ARG_INT(4, oz); ARG_INT(5, om); ARG_INT(6, os);
  et_ew w;
  et_tensor *a, *b, *out;
  et_status st = ew2(ctx, args, 0, 2, 7, &w, &a, &b, &out);
  if (st) return st;
  if (a->dtype != ET_CHAR || b->dtype != ET_CHAR || out->dtype != ET_CHAR) BAD(0);
  const int8_t *x = (const int8_t *)a->data, *z = (const int8_t *)b->data;
  int8_t *y = (int8_t *)out->data;
#ifdef CM_MVE
  if (qadd_req_ok(om, os) && w.n <= UINT32_MAX && ew_flat(&w, a, b, out)) {
    qmul_mve(x, z, y, (uint32_t)w.n, az, bz, oz, om, os);
    return ET_OK;
  }
#elif defined(CM_DSP)
  if (qmul_zp_ok(az, bz) && qew_rq_ok(os) && w.n <= UINT32_MAX && ew_flat(&w, a, b, out)) {
    qmul_dsp(x, z, y, (uint32_t)w.n, az, bz, oz, om, os);
    return ET_OK;
  }
#endif
  chan_bcast cb;
  if (chan_bcast_of(a, b, out, &cb)) {   /* the full side first: (x - az)(z - bz) is symmetric */
    if (cb.full) qmul_rows(z, x, y, &cb, bz, az, oz, om, os);
    else qmul_rows(x, z, y, &cb, az, bz, oz, om, os);
    return ET_OK;
  }
  for (size_t i = 0; i < w.n; i++) {
    int32_t p = ((int32_t)x[w.it.off[1]] - az) * ((int32_t)z[w.it.off[2]] - bz);
    int32_t r = cm_requant(p, om, os);
    y[w.it.off[0]] = (int8_t)clamp_i32((int32_t)((uint32_t)r + (uint32_t)oz), -128, 127);
    et_ew_next(&w);
  }
  return ET_OK;
}

/* quantized_div.out(Tensor self, int self_zero_point, Tensor other, int other_zero_point,
 *   int output_zero_point, float output_scale, *, Tensor(a!) out): int8 or int16 */
ET_OP("cortex_m::quantized_div.out", k_cm_quantized_div_out) {
  ET_CHECK_ARGS(7);
  int32_t az, bz, oz;
  ARG_INT(1, az); ARG_INT(3, bz); ARG_INT(4, oz);
  float sc = et_value_as_float(args[5]);
  et_ew w;
  et_tensor *a, *b, *out;
  et_status st = ew2(ctx, args, 0, 2, 6, &w, &a, &b, &out);
  if (st) return st;
  if ((a->dtype != ET_CHAR && a->dtype != ET_SHORT) || b->dtype != a->dtype || out->dtype != a->dtype) BAD(0);
  int32_t lo = a->dtype == ET_CHAR ? -128 : -32768, hi = a->dtype == ET_CHAR ? 127 : 32767;
  for (size_t i = 0; i < w.n; i++) {
    float xf = (float)((int32_t)et_load_i(a, w.it.off[1]) - az);
    float zf = (float)((int32_t)et_load_i(b, w.it.off[2]) - bz);
    float q = zf != 0.0f ? xf / zf : 0.0f;
    float r = et_roundf(q * sc) + (float)oz;
    int64_t v = et_f32_to_i64(r);
    et_store_i(out, w.it.off[0], v < lo ? lo : v > hi ? hi : v);
    et_ew_next(&w);
  }
  return ET_OK;
}

/* minimum.out / maximum.out(Tensor self, Tensor other, *, Tensor(a!) out) */
/* int8 minimum/maximum where one side is a single value (hardswish's clamp against a constant) or both
 * sides are laid out as the output: a plain loop (the generic index walk costs ~119 instructions an element) */
static bool minmax_i8(const et_tensor *a, const et_tensor *b, et_tensor *out, bool mx) {
  if (a->dtype != ET_CHAR || b->dtype != ET_CHAR || out->dtype != ET_CHAR) return false;
  const int64_t n = et_numel(out);
  int8_t *y = (int8_t *)out->data;
  const int8_t *x, *z;
  int64_t zs;   /* z's step: 0 for a single value */
  /* a broadcast side the size of the output has the output's shape; et_same_layout compares dim orders */
  const bool af = et_numel(a) == n && et_same_layout(a, out), bf = et_numel(b) == n && et_same_layout(b, out);
  if (af && (bf || et_numel(b) == 1)) {
    x = (const int8_t *)a->data; z = (const int8_t *)b->data; zs = bf ? 1 : 0;
  } else if (bf && et_numel(a) == 1) {
    x = (const int8_t *)b->data; z = (const int8_t *)a->data; zs = 0;
  } else {
    return false;
  }
  int64_t i = 0;
#ifdef CM_MVE
  /* 16 a step, the tail predicated */
  const int8x16_t zc = vdupq_n_s8(z[0]);
  for (; i < n; i += 16) {
    const mve_pred16_t p = vctp8q((uint32_t)(n - i < 16 ? n - i : 16));
    const int8x16_t u = vld1q_z_s8(x + i, p), v = zs ? vld1q_z_s8(z + i, p) : zc;
    vst1q_p_s8(y + i, mx ? vmaxq_s8(u, v) : vminq_s8(u, v), p);
  }
#elif defined(CM_DSP)
  /* 4 a word: SSUB8 sets each lane's GE flag where u >= v, SEL picks by it */
  const uint32_t zc = (uint32_t)(uint8_t)z[0] * 0x01010101u;
  for (; i + 4 <= n; i += 4) {
    const uint32_t u = cm_ld32(x + i), v = zs ? cm_ld32(z + i) : zc;
    (void)__ssub8((int8x4_t)u, (int8x4_t)v);
    const uint32_t r = mx ? (uint32_t)__sel((uint8x4_t)u, (uint8x4_t)v) : (uint32_t)__sel((uint8x4_t)v, (uint8x4_t)u);
    memcpy(y + i, &r, 4);
  }
#endif
  for (; i < n; i++) {
    const int8_t u = x[i], v = z[i * zs];
    y[i] = mx ? (u > v ? u : v) : (u < v ? u : v);
  }
  return true;
}

static et_status minmax(et_kctx *ctx, et_value *const *args, uint32_t nargs, bool mx) {
  ET_CHECK_ARGS(3);
  et_ew w;
  et_tensor *a, *b, *out;
  et_status st = ew2(ctx, args, 0, 1, 2, &w, &a, &b, &out);
  if (st) return st;
  if (minmax_i8(a, b, out, mx)) return ET_OK;
  bool fl = et_dtype_is_float(out->dtype);
  for (size_t i = 0; i < w.n; i++) {
    if (fl) {
      float x = et_load_f(a, w.it.off[1]), z = et_load_f(b, w.it.off[2]);
      et_store_f(out, w.it.off[0], mx ? et_fmaxf_nan(x, z) : et_fminf_nan(x, z));
    } else {
      int64_t x = et_load_i(a, w.it.off[1]), z = et_load_i(b, w.it.off[2]);
      et_store_i(out, w.it.off[0], mx ? (x > z ? x : z) : (x < z ? x : z));
    }
    et_ew_next(&w);
  }
  return ET_OK;
}
ET_OP("cortex_m::minimum.out", k_cm_minimum_out) { return minmax(ctx, args, nargs, false); }
ET_OP("cortex_m::maximum.out", k_cm_maximum_out) { return minmax(ctx, args, nargs, true); }

/* quantized_activation.out(Tensor input, Tensor lut, *, Tensor(a!) out): out = lut[in + 128] */
ET_OP("cortex_m::quantized_activation.out", k_cm_quantized_activation_out) {
  ET_CHECK_ARGS(3);
  et_tensor *in, *lut, *out;
  ARG_TENSOR(0, in);
  ARG_TENSOR(1, lut);
  ARG_TENSOR(2, out);
  if (in->dtype != ET_CHAR || lut->dtype != ET_CHAR || out->dtype != ET_CHAR || et_numel(lut) != 256) BAD(1);
  et_status st = et_resize_like(out, in);
  if (st) { ctx->err_detail = 2; return st; }
  if (!et_same_layout(in, out)) { ctx->err_detail = 2; return ET_ERR_UNSUPPORTED; }
  const int8_t *x = (const int8_t *)in->data, *t = (const int8_t *)lut->data;
  int8_t *y = (int8_t *)out->data;
  int64_t n = et_numel(in), i = 0;
#ifdef CM_MVE
  /* 16 lookups a gather: x + 128 is x's bits with the sign flipped, as an unsigned byte offset */
  for (; i + 16 <= n; i += 16)
    vst1q_s8(y + i, vreinterpretq_s8_u8(vldrbq_gather_offset_u8((const uint8_t *)t,
                                                                 veorq_u8(vld1q_u8((const uint8_t *)x + i), vdupq_n_u8(0x80)))));
#else
  for (; i + 4 <= n; i += 4) {
    const int8_t a = t[(int32_t)x[i] + 128], b = t[(int32_t)x[i + 1] + 128], c = t[(int32_t)x[i + 2] + 128],
                 d = t[(int32_t)x[i + 3] + 128];
    y[i] = a; y[i + 1] = b; y[i + 2] = c; y[i + 3] = d;
  }
#endif
  for (; i < n; i++) y[i] = t[(int32_t)x[i] + 128];
  return ET_OK;
}

/* ---------------------------------------------------------------- softmax */

/* softmax.out(Tensor input, int dim, int input_zero_point, int output_zero_point, int input_multiplier,
 *   int input_shift, int diff_min, *, Tensor(a!) out): the reference's float path:
 * x = (q - zp) * (mult * 2^shift / 2^31 / 2^26), p = softmax(x), out = rint(p * 256) + out_zp. */
ET_OP("cortex_m::softmax.out", k_cm_softmax_out) {
  ET_CHECK_ARGS(8);
  et_tensor *in, *out;
  ARG_TENSOR(0, in);
  ARG_TENSOR(7, out);
  int32_t dimv, izp, ozp, mult, shift;
  ARG_INT(1, dimv); ARG_INT(2, izp); ARG_INT(3, ozp); ARG_INT(4, mult); ARG_INT(5, shift);
  if (in->dtype != ET_CHAR || out->dtype != ET_CHAR) BAD(0);
  int32_t dim = et_wrap_dim(dimv, in->ndim);
  if (dim < 0) BAD(1);
  et_status st = et_resize_like(out, in);
  if (st) { ctx->err_detail = 7; return st; }
  const float scale = ldexp_f((float)mult, shift - 31 - 26);
  ptrdiff_t s2[2][ET_MAX_DIMS];
  et_tensor_strides(out, s2[0]);
  et_tensor_strides(in, s2[1]);
  int32_t lane_sizes[ET_MAX_DIMS];
  for (uint32_t d = 0; d < in->ndim; d++) lane_sizes[d] = in->sizes[d];
  int32_t len = in->ndim ? in->sizes[dim] : 1;
  ptrdiff_t so = in->ndim ? s2[0][dim] : 1, si = in->ndim ? s2[1][dim] : 1;
  if (in->ndim) lane_sizes[dim] = 1;
  if (len <= 0) return ET_OK;
  int64_t lanes = et_numel(in) / len;
  const int8_t *x = (const int8_t *)in->data;
  int8_t *y = (int8_t *)out->data;
  et_idx it;
  et_idx_init(&it, in->ndim, lane_sizes);
  for (int64_t l = 0; l < lanes; l++) {
    const int8_t *xl = x + it.off[1];
    int8_t *yl = y + it.off[0];
    float m = -ET_INFINITY;
    for (int32_t k = 0; k < len; k++) {
      float v = (float)((int32_t)xl[k * si] - izp) * scale;
      if (v > m) m = v;
    }
    float sum = 0.0f;
    for (int32_t k = 0; k < len; k++) sum += et_expf((float)((int32_t)xl[k * si] - izp) * scale - m);
    float rs = 1.0f / sum;
    for (int32_t k = 0; k < len; k++) {
      float pr = et_expf((float)((int32_t)xl[k * si] - izp) * scale - m) * rs;
      int64_t v = et_f32_to_i64(et_roundf(pr * 256.0f) + (float)ozp);
      yl[k * so] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
    }
    et_idx_next(&it, 2, s2);
  }
  return ET_OK;
}
