/* Private to firmware/kernels/cortex_m/ (included by cm_gemm.h): the fused Helium GEMM passes, which
 * requantise inside each pass: kept for the calls the two-phase GEMM of gemm_tile_mve.h does not take
 * (a clamp range outside int8, an output zero point far outside it). qc_gemm23: two pixels x three
 * channels a pass in asm; qc_gemm4: four channels, one pixel at a time (more than QC_MAXO channels, or
 * builds without optimisation, where the asm is left out). */
#ifndef ET_CORTEX_M_GEMM_FUSED_MVE_H
#define ET_CORTEX_M_GEMM_FUSED_MVE_H

typedef struct {
  int32x4_t cst, vm, vs;                 /* per-channel constant, multiplier, shift of the group */
  int32_t out_off, amin, amax, K, live;  /* live: channels of the group that exist (1..4) */
} qc_group;

/* P pixels: pixel p reads K bytes at x + p * xs and writes `live` channels at y + p * ys; w0..w3:
 * the group's weight rows (rows past the last live one repeat it). */
CM_UNUSED CM_HOT static void qc_gemm4(const int8_t *x, ptrdiff_t xs, int8_t *y, ptrdiff_t ys, int32_t P, const int8_t *w0,
                            const int8_t *w1, const int8_t *w2, const int8_t *w3, const qc_group *g) {
  const int32_t K = g->K, r = ((K - 1) & 15) + 1, trips = (K - r) >> 4;
  const mve_pred16_t pr = vctp8q((uint32_t)r), pst = vctp32q((uint32_t)g->live);
  const int32x4_t cst = g->cst, vm = g->vm, vs = g->vs, vlo = vdupq_n_s32(g->amin), vhi = vdupq_n_s32(g->amax);
  const int32_t out_off = g->out_off;
  const mve_pred16_t pw = K >= 16 ? (mve_pred16_t)0xffff : pr;  /* a short row: its weights predicated too */
  for (int32_t p = 0; p < P; p++, x += xs, y += ys) {
    const int8_t *xp = x, *p0 = w0, *p1 = w1, *p2 = w2, *p3 = w3;
    int8x16_t vx = vld1q_z_s8(xp, pr);
    int32_t a0 = vmladavq_s8(vx, vld1q_z_s8(p0, pw)), a1 = vmladavq_s8(vx, vld1q_z_s8(p1, pw));
    int32_t a2 = vmladavq_s8(vx, vld1q_z_s8(p2, pw)), a3 = vmladavq_s8(vx, vld1q_z_s8(p3, pw));
    xp += r; p0 += r; p1 += r; p2 += r; p3 += r;
    for (int32_t n = trips; n > 0; n--) {
      vx = vld1q_s8(xp);
      a0 = vmladavaq_s8(a0, vx, vld1q_s8(p0));
      a1 = vmladavaq_s8(a1, vx, vld1q_s8(p1));
      a2 = vmladavaq_s8(a2, vx, vld1q_s8(p2));
      a3 = vmladavaq_s8(a3, vx, vld1q_s8(p3));
      xp += 16; p0 += 16; p1 += 16; p2 += 16; p3 += 16;
    }
    int32x4_t acc = vdupq_n_s32(a0);
    acc = vsetq_lane_s32(a1, acc, 1);
    acc = vsetq_lane_s32(a2, acc, 2);
    acc = vsetq_lane_s32(a3, acc, 3);
    /* wrapping sum, like the 32-bit accumulator of the reference */
    int32x4_t q = vqaddq_n_s32(cm_requant_v(vaddq_s32(acc, cst), vm, vs), out_off);
    vstrbq_p_s32(y, vminq_s32(vmaxq_s32(q, vlo), vhi), pst);
  }
}

/* Two pixels x three output channels a pass (six vmladava per two input and three weight loads: 0.125
 * instructions per MAC over 16 input bytes), in asm: the loop has 14 live registers, which GCC spills.
 * One ldm fills the accumulators (r0 r2 r4: pixel 0, r6 r8 r10: pixel 1; they start at the channels'
 * constants) and the five row pointers; the K & 15 tail is predicated at the end (no read past a row);
 * two vmovs per pixel make the sums a vector (`vmov q[2], q[0], ra, rb`: lane 0 = ra, lane 2 = rb), requantised per channel and stored predicated (`live`
 * channels). Pixel 1 of the last pass may repeat pixel 0 (same input, same output). */
typedef struct {
  int32_t c0; const int8_t *x0; int32_t c1; const int8_t *x1;      /*  0: ldm r0..r10 */
  int32_t c2; const int8_t *w0; int32_t d0; const int8_t *w1;      /* 16 */
  int32_t d1; const int8_t *w2; int32_t d2;                        /* 32: d0..d2 = c0..c2 (pixel 1) */
  int32_t trips;           /* 44: K >> 4 */
  uint32_t tailp;          /* 48: predicate of the K & 15 tail, 0 if none */
  int32_t xadj;            /* 52: from a row pointer after the loop to the next pass's */
  int32_t ystep;           /* 56 */
  int8_t *y0, *y1;         /* 60, 64 */
  int32_t passes;          /* 68 */
  uint32_t storep;         /* 72: predicate of the live channels (32-bit lanes) */
  int32_t oo;              /* 76: output offset */
  int32_t pad_[8];
  int32x4_t vm, vs, vlo, vhi;  /* 112 .. 175 */
} qc_blk;
_Static_assert(offsetof(qc_blk, trips) == 44 && offsetof(qc_blk, y0) == 60 && offsetof(qc_blk, oo) == 76 &&
               offsetof(qc_blk, vm) == 112 && offsetof(qc_blk, vhi) == 160, "qc_gemm23 offsets");
#ifdef __OPTIMIZE__  /* the loop needs r7, the frame pointer at -O0 */
#define QC_ASM 1
/* tail: the K & 15 bytes after the whole vectors, predicated (P0 from blk->tailp) */
#define QC_TAIL                                                                                          \
      "ldr lr, [%[b], #48]\n\t" \
      "vmsr p0, lr\n\t" \
      "vpstttt\n\t" \
      "vldrbt.u8 q0, [r1]\n\t" \
      "vldrbt.u8 q1, [r3]\n\t" \
      "vldrbt.u8 q2, [r5]\n\t" \
      "vmladavat.s8 r0, q0, q2\n\t" \
      "vpstttt\n\t" \
      "vmladavat.s8 r6, q1, q2\n\t" \
      "vldrbt.u8 q2, [r7]\n\t" \
      "vmladavat.s8 r2, q0, q2\n\t" \
      "vmladavat.s8 r8, q1, q2\n\t" \
      "vpsttt\n\t" \
      "vldrbt.u8 q2, [r9]\n\t" \
      "vmladavat.s8 r4, q0, q2\n\t" \
      "vmladavat.s8 r10, q1, q2\n"
/* the pass loop's start and the whole 16-byte trips */
#define QC_HEAD \
      "vldrw.u32 q4, [%[b], #112]\n\t" \
      "vldrw.u32 q5, [%[b], #128]\n\t" \
      "vldrw.u32 q6, [%[b], #144]\n\t" \
      "vldrw.u32 q7, [%[b], #160]\n\t" \
      "ldr r12, [%[b], #68]\n" \
      "1:\n\t" \
      "ldm %[b], {r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10}\n\t" \
      "ldr lr, [%[b], #44]\n\t" \
      "wls lr, lr, 3f\n" \
      "2:\n\t" \
      "vldrb.u8 q0, [r1], #16\n\t" \
      "vldrb.u8 q1, [r3], #16\n\t" \
      "vldrb.u8 q2, [r5], #16\n\t" \
      "vmladava.s8 r0, q0, q2\n\t" \
      "vmladava.s8 r6, q1, q2\n\t" \
      "vldrb.u8 q2, [r7], #16\n\t" \
      "vmladava.s8 r2, q0, q2\n\t" \
      "vmladava.s8 r8, q1, q2\n\t" \
      "vldrb.u8 q2, [r9], #16\n\t" \
      "vmladava.s8 r4, q0, q2\n\t" \
      "vmladava.s8 r10, q1, q2\n\t" \
      "le lr, 2b\n"
/* the sums to vectors, requantised, stored; the next pass */
#define QC_REST \
      "vmov q0[2], q0[0], r0, r4\n\t" \
      "vmov q0[3], q0[1], r2, r2\n\t" \
      "vmov q1[2], q1[0], r6, r10\n\t" \
      "vmov q1[3], q1[1], r8, r8\n\t" \
      "ldrd r2, r9, [%[b], #72]\n\t" \
      "vshr.s32 q2, q0, #31\n\t" \
      "vqrdmulh.s32 q0, q0, q4\n\t" \
      "vadd.i32 q0, q0, q2\n\t" \
      "vrshl.s32 q0, q0, q5\n\t" \
      "vshr.s32 q2, q1, #31\n\t" \
      "vqrdmulh.s32 q1, q1, q4\n\t" \
      "vadd.i32 q1, q1, q2\n\t" \
      "vrshl.s32 q1, q1, q5\n\t" \
      "vqadd.s32 q0, q0, r9\n\t" \
      "vqadd.s32 q1, q1, r9\n\t" \
      "vmax.s32 q0, q0, q6\n\t" \
      "vmax.s32 q1, q1, q6\n\t" \
      "vmin.s32 q0, q0, q7\n\t" \
      "vmin.s32 q1, q1, q7\n\t" \
      "ldrd r4, r6, [%[b], #60]\n\t" \
      "vmsr p0, r2\n\t" \
      "vpstt\n\t" \
      "vstrbt.32 q0, [r4]\n\t" \
      "vstrbt.32 q1, [r6]\n\t" \
      "ldrd r0, r8, [%[b], #52]\n\t" \
      "add r4, r4, r8\n\t" \
      "add r6, r6, r8\n\t" \
      "strd r4, r6, [%[b], #60]\n\t" \
      "add r1, r1, r0\n\t" \
      "add r3, r3, r0\n\t" \
      "str r1, [%[b], #4]\n\t" \
      "str r3, [%[b], #12]\n\t" \
      "subs r12, r12, #1\n\t" \
      "bne 1b"
#define QC_OPERANDS \
      : \
      : [b] "r"(blk) \
      : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r12", "lr", "d0", "d1", "d2", "d3", \
        "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15", "memory", "cc"
/* two copies: with the tail, and without it (K a multiple of 16: three instructions a pass fewer) */
CM_UNUSED __attribute__((noinline)) static void qc_gemm23(qc_blk *blk) {
  if (blk->tailp) __asm__ volatile(QC_HEAD "3:\n\t" QC_TAIL "\n" "4:\n\t" QC_REST QC_OPERANDS);
  else __asm__ volatile(QC_HEAD "3:\n\t" "4:\n\t" QC_REST QC_OPERANDS);
}
#undef QC_HEAD
#undef QC_TAIL
#undef QC_REST
#undef QC_OPERANDS
#else
#define QC_ASM 0
CM_UNUSED static void qc_gemm23(qc_blk *blk) { (void)blk; }
#endif

/* `rows` rows of np pixels (input x, pixels xstep and rows xrow apart; output y, pixels y.sw and rows yrow
 * apart) through qc_gemm23, three channels a pass; ks: the channels' constants (bias + in_off * sum(w)) */
CM_UNUSED static void qc_gemm_rows(const qconv *c, int32_t K, const int8_t *x, ptrdiff_t xstep, ptrdiff_t xrow, int8_t *y,
                         ptrdiff_t yrow, int32_t np, int32_t rows, const int32_t *ks) {
  qc_blk blk;
  const int32_t O = c->y.c;
  blk.trips = K >> 4;
  blk.tailp = K & 15 ? vctp8q((uint32_t)(K & 15)) : 0u;
  blk.oo = c->out_off;
  blk.vlo = vdupq_n_s32(c->amin); blk.vhi = vdupq_n_s32(c->amax);
  const ptrdiff_t ys = c->y.sw;
  for (int32_t oc = 0; oc < O; oc += 3) {
    const int32_t live = O - oc < 3 ? O - oc : 3;
    int32_t mu[4], sh[4], cs[3];
    const int8_t *wr[3];
    for (int32_t i = 0; i < 4; i++) {
      const int32_t o = oc + (i < live ? i : live - 1);
      if (i < 3) {
        wr[i] = c->w + (ptrdiff_t)o * K;
        cs[i] = ks[o];
      }
      mu[i] = c->mult[o];
      sh[i] = c->shift[o];
    }
    blk.vm = vld1q_s32(mu); blk.vs = vld1q_s32(sh);
    blk.storep = vctp32q((uint32_t)live);
    for (int32_t row = 0; row < rows; row++)
    for (int32_t half = 0; half < 2; half++) {
      /* pairs of pixels, then a last odd pixel twice */
      const int32_t passes = half ? np & 1 : np >> 1;
      if (!passes) continue;
      const int32_t p0 = half ? np - 1 : 0;
      const ptrdiff_t dx = half ? 0 : xstep, dy = half ? 0 : ys;
      blk.c0 = blk.d0 = cs[0]; blk.c1 = blk.d1 = cs[1]; blk.c2 = blk.d2 = cs[2];
      blk.w0 = wr[0]; blk.w1 = wr[1]; blk.w2 = wr[2];
      blk.x0 = x + row * xrow + (ptrdiff_t)p0 * xstep; blk.x1 = blk.x0 + dx;
      blk.xadj = (int32_t)(2 * xstep - 16 * (ptrdiff_t)blk.trips);
      blk.y0 = y + row * yrow + (ptrdiff_t)p0 * ys + oc; blk.y1 = blk.y0 + dy;
      blk.ystep = (int32_t)(2 * ys);
      blk.passes = passes;
      qc_gemm23(&blk);
    }
  }
}

#endif
