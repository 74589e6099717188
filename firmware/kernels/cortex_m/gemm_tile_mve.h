/* Private to firmware/kernels/cortex_m/ (included by cm_gemm.h): the two-phase Helium int8 GEMM, per
 * group of four output channels and tile of pixels:
 *  1. sums into the tile buffer ([group][pixel][4] int32), each starting at the channel's constant
 *     (bias + in_off * sum(w); just the bias where export folded the offset into it). Whole groups go
 *     several a pass (gemm_groups_mve.h: 16 bytes of the four weight rows held in q4-q7, two pixels a
 *     pass, rows of 17..32 bytes in two parts; rows over 32 bytes on passes of QT_WPK_MIN pixels or more
 *     with the group's rows packed and streamed two pixels x four channels a pass, on fewer pixels three
 *     pixels x two channels with the rows streamed, or pixel by pixel). A last partial group or unaligned
 *     outputs go group by group (qt_gemm_from: qt_sums4, qt_sums4x2, qt_sums1x4 below). One pixel (a
 *     1x1 map) is a matrix-vector product instead (qt_gemv);
 *  2. requantisation with the pixels on the lanes (gemm_requant_mve.h): vld4 turns four pixels' sums
 *     around (one vector a channel), so the channel's multiplier and shift are scalars (vqrdmlah folds
 *     the round-half-away correction into the multiply: three instructions per four outputs), the
 *     narrows interleave the four channels into one word per pixel, one scatter store writes four pixels.
 * The clamp to [amin, amax] rides on the saturating narrows: (v + out_off - amin) saturated to uint8 is
 * clamp(v + out_off, amin, amin + 255) - amin; the upper bound is a vmin in uint8 (a range of all int8: a
 * signed saturating narrow). Per output: ~1.75 instructions of sums per 16 bytes of row and ~1.7 of
 * requantisation. */
#ifndef ET_CORTEX_M_GEMM_TILE_MVE_H
#define ET_CORTEX_M_GEMM_TILE_MVE_H

#define QT_PIX 256                    /* pixels of a tile */
#define QT_SUMS (4 * (QT_PIX + 4))    /* int32 words of the tile's sums buffer (scratch): [pixel][4], the last
                                       * vld4 reads up to three pixels past the tile */

#ifdef __OPTIMIZE__  /* the asm needs r7 (the frame pointer at -O0) */
#define QT_ASM 1
/* Sums of `pairs` pixel pairs: pixel 2i at x0 + 2i * xs, pixel 2i+1 at x1 + 2i * xs; w: the group's
 * four weight rows, K bytes each and K apart (K in 1..16); k8: the four constants twice; S: 8 words a
 * pair. vmladava takes even registers only: the eight sums are r0 r2 .. r12 lr, the pointers odd. */
#define QT_SUMS4_ASM(LOADS) \
  __asm__ volatile( \
      "add r4, r0, r2\n\t" \
      "add r6, r4, r2\n\t" \
      "add r8, r6, r2\n\t" \
      "vctp.8 r2\n\t" \
      "vpstttt\n\t" \
      "vldrbt.u8 q4, [r0]\n\t" \
      "vldrbt.u8 q5, [r4]\n\t" \
      "vldrbt.u8 q6, [r6]\n\t" \
      "vldrbt.u8 q7, [r8]\n" \
      "1:\n\t" \
      "ldm r9, {r0, r2, r4, r6, r8, r10, r12, lr}\n\t" \
      LOADS \
      "vmladava.s8 r0, q0, q4\n\t" \
      "vmladava.s8 r2, q0, q5\n\t" \
      "vmladava.s8 r4, q0, q6\n\t" \
      "vmladava.s8 r6, q0, q7\n\t" \
      "vmladava.s8 r8, q1, q4\n\t" \
      "vmladava.s8 r10, q1, q5\n\t" \
      "vmladava.s8 r12, q1, q6\n\t" \
      "vmladava.s8 lr, q1, q7\n\t" \
      "stm r5!, {r0, r2, r4, r6, r8, r10, r12, lr}\n\t" \
      "subs r11, r11, #1\n\t" \
      "bne 1b" \
      : "+r"(rx0), "+r"(rx1), "+r"(rs), "+r"(rn), "+r"(rw), "+r"(rK) \
      : "r"(rxs), "r"(rk) \
      : "r4", "r6", "r8", "r10", "r12", "lr", "d0", "d1", "d2", "d3", "d8", "d9", "d10", "d11", "d12", "d13", \
        "d14", "d15", "memory", "cc")
/* pixels 2xs apart in general; contiguous rows of 8 or 16 bytes (a flat pointwise input) step by a
 * post-increment (two instructions a pass fewer) */
__attribute__((noinline)) static void qt_sums4(const int8_t *x0, const int8_t *x1, ptrdiff_t xs2, int32_t pairs,
                                               const int8_t *w, int32_t K, const int32_t *k8, int32_t *S) {
  register const int8_t *rx0 __asm__("r1") = x0;
  register const int8_t *rx1 __asm__("r3") = x1;
  register int32_t *rs __asm__("r5") = S;
  register ptrdiff_t rxs __asm__("r7") = xs2;
  register const int32_t *rk __asm__("r9") = k8;
  register int32_t rn __asm__("r11") = pairs;
  register const int8_t *rw __asm__("r0") = w;
  register int32_t rK __asm__("r2") = K;
  if (xs2 == 16 && K == 8)
    QT_SUMS4_ASM("vpstt\n\t"
                 "vldrbt.u8 q0, [r1], #16\n\t"
                 "vldrbt.u8 q1, [r3], #16\n\t");
  else if (xs2 == 32 && K == 16)
    QT_SUMS4_ASM("vldrb.u8 q0, [r1], #32\n\t"
                 "vldrb.u8 q1, [r3], #32\n\t");
  else
    QT_SUMS4_ASM("vpstt\n\t"
                 "vldrbt.u8 q0, [r1]\n\t"
                 "vldrbt.u8 q1, [r3]\n\t"
                 "add r1, r1, r7\n\t"
                 "add r3, r3, r7\n\t");
}
#undef QT_SUMS4_ASM

/* Rows of any length (K > 16): one pixel x four channels a pass, the four weight rows streamed (five
 * loads, four vmladava per 16 bytes); the K & 15 tail predicated (no read past a row). One ldm a pass
 * fills the accumulators (r0 r2 r4 r6, from the constants) and the weight pointers (r7 r9 r10 r11) from
 * blk: [c0, c1, c2, c3, w0, w1, w2, w3, xadj, S end]. */
typedef struct {
  int32_t c[4];
  const int8_t *w[4];
  int32_t xadj;      /* 32: from the pointer after a pass to the next pixel */
  int32_t *send;     /* 36: S after the last pixel */
} qt_blk;
_Static_assert(offsetof(qt_blk, xadj) == 32 && offsetof(qt_blk, send) == 36, "qt_sums1x4 offsets");
#define QT_1X4_HEAD \
      "1:\n\t" \
      "ldm r5, {r0, r2, r4, r6, r7, r9, r10, r11}\n\t" \
      "wls lr, r8, 3f\n" \
      "2:\n\t" \
      "vldrb.u8 q0, [r1], #16\n\t" \
      "vldrb.u8 q1, [r7], #16\n\t" \
      "vmladava.s8 r0, q0, q1\n\t" \
      "vldrb.u8 q1, [r9], #16\n\t" \
      "vmladava.s8 r2, q0, q1\n\t" \
      "vldrb.u8 q1, [r10], #16\n\t" \
      "vmladava.s8 r4, q0, q1\n\t" \
      "vldrb.u8 q1, [r11], #16\n\t" \
      "vmladava.s8 r6, q0, q1\n\t" \
      "le lr, 2b\n" \
      "3:\n\t"
#define QT_1X4_TAIL \
      "vctp.8 r12\n\t" \
      "vpstttt\n\t" \
      "vldrbt.u8 q0, [r1]\n\t" \
      "vldrbt.u8 q1, [r7]\n\t" \
      "vldrbt.u8 q2, [r9]\n\t" \
      "vldrbt.u8 q3, [r10]\n\t" \
      "vmladava.s8 r0, q0, q1\n\t" \
      "vmladava.s8 r2, q0, q2\n\t" \
      "vmladava.s8 r4, q0, q3\n\t" \
      "vpst\n\t" \
      "vldrbt.u8 q1, [r11]\n\t" \
      "vmladava.s8 r6, q0, q1\n\t"
#define QT_1X4_REST \
      "stm r3!, {r0, r2, r4, r6}\n\t" \
      "ldrd r0, r2, [r5, #32]\n\t" \
      "add r1, r1, r0\n\t" \
      "cmp r3, r2\n\t" \
      "bne 1b"
#define QT_1X4_OPERANDS \
      : "+r"(rx), "+r"(rs) \
      : "r"(rb), "r"(rt), "r"(rr) \
      : "r0", "r2", "r4", "r6", "r7", "r9", "r10", "r11", "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", \
        "memory", "cc"
/* np >= 1 pixels at x + p * xs into S[p][4] */
__attribute__((noinline)) static void qt_sums1x4(const int8_t *x, ptrdiff_t xs, int32_t np, int32_t K, qt_blk *blk,
                                                 int32_t *S) {
  blk->xadj = (int32_t)(xs - 16 * (K >> 4));
  blk->send = S + 4 * np;
  register const int8_t *rx __asm__("r1") = x;
  register int32_t *rs __asm__("r3") = S;
  register qt_blk *rb __asm__("r5") = blk;
  register int32_t rt __asm__("r8") = K >> 4;
  register int32_t rr __asm__("r12") = K & 15;
  if (K & 15) __asm__ volatile(QT_1X4_HEAD QT_1X4_TAIL QT_1X4_REST QT_1X4_OPERANDS);
  else __asm__ volatile(QT_1X4_HEAD QT_1X4_REST QT_1X4_OPERANDS);
}
#undef QT_1X4_HEAD
#undef QT_1X4_TAIL
#undef QT_1X4_REST
#undef QT_1X4_OPERANDS

/* Rows of 17..32 bytes: four pixels x two channels a pass, the two channels' rows held in q4-q7 (the
 * second vector of each loaded with zeros past K); per pixel one whole and one predicated input load
 * (P0 set once), four vmladava; the eight sums go to words `half` and `half + 1` of S's [pixel][4]
 * (strd, post-incremented). 39 instructions per 8 outputs. k8: the two constants, four times; w0, w1:
 * the channels' rows; xs == 0 repeats one pixel (a last partial quad). */
#define QT_4X2_ASM(QT_4X2_PIX) \
  __asm__ volatile( \
      "vctp.8 r4\n\t" \
      "vldrb.u8 q4, [r0]\n\t" \
      "vldrb.u8 q6, [r2]\n\t" \
      "vpstt\n\t" \
      "vldrbt.u8 q5, [r0, #16]\n\t" \
      "vldrbt.u8 q7, [r2, #16]\n" \
      "1:\n\t" \
      "ldm r7, {r0, r2, r4, r6, r8, r10, r12, lr}\n\t" \
      QT_4X2_PIX \
      "vmladava.s8 r0, q0, q4\n\t" \
      "vmladava.s8 r0, q1, q5\n\t" \
      "vmladava.s8 r2, q0, q6\n\t" \
      "vmladava.s8 r2, q1, q7\n\t" \
      QT_4X2_PIX \
      "vmladava.s8 r4, q0, q4\n\t" \
      "vmladava.s8 r4, q1, q5\n\t" \
      "vmladava.s8 r6, q0, q6\n\t" \
      "vmladava.s8 r6, q1, q7\n\t" \
      QT_4X2_PIX \
      "vmladava.s8 r8, q0, q4\n\t" \
      "vmladava.s8 r8, q1, q5\n\t" \
      "vmladava.s8 r10, q0, q6\n\t" \
      "vmladava.s8 r10, q1, q7\n\t" \
      QT_4X2_PIX \
      "vmladava.s8 r12, q0, q4\n\t" \
      "vmladava.s8 r12, q1, q5\n\t" \
      "vmladava.s8 lr, q0, q6\n\t" \
      "vmladava.s8 lr, q1, q7\n\t" \
      "strd r0, r2, [r5], #16\n\t" \
      "strd r4, r6, [r5], #16\n\t" \
      "strd r8, r10, [r5], #16\n\t" \
      "strd r12, lr, [r5], #16\n\t" \
      "subs r9, r9, #1\n\t" \
      "bne 1b" \
      : "+r"(rx), "+r"(rs), "+r"(rn), "+r"(r0), "+r"(r2), "+r"(r4) \
      : "r"(rxs), "r"(rk) \
      : "r6", "r8", "r10", "r12", "lr", "d0", "d1", "d2", "d3", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15", \
        "memory", "cc")
__attribute__((noinline)) static void qt_sums4x2(const int8_t *x, ptrdiff_t xs, int32_t quads, const int8_t *w0,
                                                 const int8_t *w1, int32_t K, const int32_t *k8, int32_t *S) {
  register const int8_t *rx __asm__("r1") = x;
  register ptrdiff_t rxs __asm__("r3") = xs;
  register int32_t *rs __asm__("r5") = S;
  register const int32_t *rk __asm__("r7") = k8;
  register int32_t rn __asm__("r9") = quads;
  register const int8_t *r0 __asm__("r0") = w0;
  register const int8_t *r2 __asm__("r2") = w1;
  register int32_t r4 __asm__("r4") = K - 16;
  if (K == 32)  /* whole rows: no predicate on the second load */
    QT_4X2_ASM("vldrb.u8 q0, [r1]\n\t"
               "vldrb.u8 q1, [r1, #16]\n\t"
               "add r1, r1, r3\n\t");
  else
    QT_4X2_ASM("vldrb.u8 q0, [r1]\n\t"
               "vpst\n\t"
               "vldrbt.u8 q1, [r1, #16]\n\t"
               "add r1, r1, r3\n\t");
}
#undef QT_4X2_ASM

#else
#define QT_ASM 0
typedef struct { int32_t c[4]; const int8_t *w[4]; } qt_blk;
static void qt_sums4(const int8_t *x0, const int8_t *x1, ptrdiff_t xs2, int32_t pairs, const int8_t *w, int32_t K,
                     const int32_t *k8, int32_t *S) {
  (void)x0; (void)x1; (void)xs2; (void)pairs; (void)w; (void)K; (void)k8; (void)S;
}
static void qt_sums1x4(const int8_t *x, ptrdiff_t xs, int32_t np, int32_t K, qt_blk *blk, int32_t *S) {
  (void)x; (void)xs; (void)np; (void)K; (void)blk; (void)S;
}
static void qt_sums4x2(const int8_t *x, ptrdiff_t xs, int32_t quads, const int8_t *w0, const int8_t *w1, int32_t K,
                       const int32_t *k8, int32_t *S) {
  (void)x; (void)xs; (void)quads; (void)w0; (void)w1; (void)K; (void)k8; (void)S;
}
#endif

#include "gemm_groups_mve.h"
#include "gemm_requant_mve.h"

/* k[i] = bias + in_off * sum(w) of channels oc .. oc+3 (past `live` the last one repeats), wrapping like
 * the 32-bit accumulator: whole 16-byte trips unpredicated, the K & 15 tail loaded with zeros past it */
static void qt_consts4(const qconv *c, int32_t oc, int32_t live, int32_t K, int32_t *k) {
  const int8_t *r0 = c->w + (ptrdiff_t)oc * K, *r1 = live > 1 ? r0 + K : r0, *r2 = live > 2 ? r1 + K : r1,
               *r3 = live > 3 ? r2 + K : r2;
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (int32_t n = c->in_off ? K >> 4 : 0; n > 0; n--, r0 += 16, r1 += 16, r2 += 16, r3 += 16) {
    a0 = vaddvaq_s8(a0, vld1q_s8(r0));
    a1 = vaddvaq_s8(a1, vld1q_s8(r1));
    a2 = vaddvaq_s8(a2, vld1q_s8(r2));
    a3 = vaddvaq_s8(a3, vld1q_s8(r3));
  }
  if ((K & 15) && c->in_off) {
    const mve_pred16_t p = vctp8q((uint32_t)(K & 15));
    a0 = vaddvaq_s8(a0, vld1q_z_s8(r0, p));
    a1 = vaddvaq_s8(a1, vld1q_z_s8(r1, p));
    a2 = vaddvaq_s8(a2, vld1q_z_s8(r2, p));
    a3 = vaddvaq_s8(a3, vld1q_z_s8(r3, p));
  }
  int32x4_t a = vdupq_n_s32(a0);
  a = vsetq_lane_s32(a1, a, 1);
  a = vsetq_lane_s32(a2, a, 2);
  a = vsetq_lane_s32(a3, a, 3);
  int32x4_t b = vdupq_n_s32(0);
  if (c->bias && live == 4) {
    b = vld1q_s32(c->bias + oc);
  } else if (c->bias) {
    int32_t bb[4];
    for (int32_t i = 0; i < 4; i++) bb[i] = c->bias[oc + (i < live ? i : live - 1)];
    b = vld1q_s32(bb);
  }
  vst1q_s32(k, vmlaq_n_s32(b, a, c->in_off));  /* wrapping, as the accumulator */
}

/* The two-phase GEMM over a run of np pixels (pixel p reads K bytes at x + p * xs, writes its O channels
 * at y + p * ys); ks: every channel's constant (qt_consts4), or NULL (worked out here); S: QT_SUMS words,
 * wpad: 64 bytes (16-aligned). Needs QT_ASM, every channel's cm_vec_requant_ok and the clamp range
 * inside int8 (qt_ok). */
static inline bool qt_range_ok(const qconv *c, int32_t K) {   /* qt_ok from shapes and ints (planned scratch) */
  return K >= 1 && c->amin >= -128 && c->amin <= c->amax && c->amax <= 127 && c->out_off >= -1024 &&
         c->out_off <= 1024;
}
static inline bool qt_ok(const qconv *c, int32_t K) { return QT_ASM && qt_range_ok(c, K); }
/* k[0 .. 4 groups) = the constants of channels oc.. (bias + in_off * sum(w), wrapping like the accumulator)
 * for whole groups of four: the weight sums in asm (four rows at a time, 9 instructions per 64 bytes, the
 * K & 15 tail predicated), then bias and offset folded on the lanes; ~60% of qt_consts4's instructions */
static void qt_consts_groups(const qconv *c, int32_t oc, int32_t groups, int32_t K, int32_t *k) {
  if (c->in_off == 0) {   /* the offset folded into the bias at export (conv_offset_fold.py): no weight sums */
    for (int32_t i = 0; i < 4 * groups; i += 4) vst1q_s32(k + i, c->bias ? vld1q_s32(c->bias + oc + i) : vdupq_n_s32(0));
    return;
  }
#if QT_ASM
  qt_ksums(c->w + (ptrdiff_t)oc * K, K, groups, k);
  const int32_t io = c->in_off;
  for (int32_t i = 0; i < 4 * groups; i += 4) {
    const int32x4_t b = c->bias ? vld1q_s32(c->bias + oc + i) : vdupq_n_s32(0);
    vst1q_s32(k + i, vmlaq_n_s32(b, vld1q_s32(k + i), io));
  }
#else
  for (int32_t i = 0; i < groups; i++) qt_consts4(c, oc + 4 * i, 4, K, k + 4 * i);
#endif
}

/* The sums buffer's pixels (scratch, QT_S_BYTES) for a call of P output pixels: a tile, and at least
 * QT_GPIX so that short runs take several groups a pass (qt_gemm) */
#define QT_GPIX 128
#define QT_KC 64    /* channels whose constants a pass works out when the call has none (ks NULL) */
static inline int32_t qt_cap(int32_t P) { return P < QT_GPIX ? QT_GPIX : P < QT_PIX ? P : QT_PIX; }
/* the same for im2col chunks of n pixels: at least half as many (a chunk's scratch is the larger part) */
static inline int32_t qt_cap_cols(int32_t n) { return n < QT_GPIX / 2 ? QT_GPIX / 2 : n; }


/* One pixel (a squeeze-excitation's pointwise on a 1x1 map): the O >= 6 dot products six weight rows a
 * pass (qlin_dot6, the linear's: one input load feeds six vmladava) into d, a block of up to 4 * cap
 * channels at a time (a last short block recomputes rows of the one before to make six), then
 * requantised with the channels on the lanes (their multipliers and shifts as vectors); the four-channel
 * groups' pixels-on-lanes passes cost ~100 instructions a group on one pixel. k: the channels'
 * constants, or NULL (zero). */
static void qt_gemv(const qconv *c, int32_t K, const int8_t *x, int8_t *y, const int32_t *k, int32_t *d,
                    int32_t cap) {
  const int32_t O = c->y.c, B = 4 * cap, oo = c->out_off;
  const int32x4_t lo = vdupq_n_s32(c->amin), hi = vdupq_n_s32(c->amax);
  for (int32_t o0 = 0; o0 < O; o0 += B) {
    int32_t s0 = o0, n = O - o0 < B ? O - o0 : B;
    if (n < 6) { s0 = O - 6; n = 6; }
    const int8_t *w = c->w + (ptrdiff_t)s0 * K;
    qlin_dot6(x, w, K, n / 6, d);
    if (n % 6) qlin_dot6(x, w + (ptrdiff_t)(n - 6) * K, K, 1, d + n - 6);
    /* whole vectors, then a last one overlapping them (n >= 6) */
    const int32_t *kp = k ? k + s0 : NULL, *mp = c->mult + s0, *sp = c->shift + s0;
    int8_t *yp = y + s0;
    for (int32_t i = 0;; i += 4) {
      if (i + 4 > n) i = n - 4;
      int32x4_t v = vld1q_s32(d + i);
      if (kp) v = vaddq_s32(v, vld1q_s32(kp + i));   /* wrapping, as the accumulator */
      const int32x4_t r = cm_requant_v(v, vld1q_s32(mp + i), vld1q_s32(sp + i));
      vstrbq_s32(yp + i, vminq_s32(vmaxq_s32(vqaddq_n_s32(r, oo), lo), hi));
      if (i + 4 >= n) break;
    }
  }
}

/* channels from oc0 on, one group of four at a time */
static void qt_gemm_from(const qconv *c, int32_t K, const int8_t *x, ptrdiff_t xs, int8_t *y, ptrdiff_t ys,
                         int32_t np, const int32_t *ks, int32_t *S, int8_t *wpad, int32_t oc0);
/* The two-phase GEMM: whole groups of four channels (packed word stores; K <= 16 or K > 32) several
 * groups a pass, as many as the sums buffer (cap pixels, qt_cap) holds for the run's pixels, the sums
 * and the requantisation each one asm call a pass (qt_sums4g / qt_sums1x4g, qt_requant4g); the rest
 * (a last partial group, rows of 17..32 bytes, unaligned outputs) group by group. */
static void qt_gemm(const qconv *c, int32_t K, const int8_t *x, ptrdiff_t xs, int8_t *y, ptrdiff_t ys, int32_t np,
                    const int32_t *ks, int32_t *S, int8_t *wpad, int32_t cap, int8_t *wpk) {
  const int32_t O = c->y.c;
  if (QT_ASM && QL_ASM && np == 1 && O >= 6 && (ks || c->in_off == 0)) {
    qt_gemv(c, K, x, y, ks ? ks : c->bias, S, cap);
    return;
  }
  const bool packed = (ys & 3) == 0 && ((uintptr_t)y & 3) == 0;  /* word stores of four channels */
  const int32_t O4 = QT_ASM && packed ? O & ~3 : 0;
  if (O4 > 0) {
    qt_out o __attribute__((aligned(16)));
    int32_t kc[QT_KC] __attribute__((aligned(16)));
    o.c16 = c->out_off - c->amin;
    o.lo = c->amin;
    vst1q_u8(o.d, vdupq_n_u8((uint8_t)(c->amax - c->amin)));
    const uint32x4_t off = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)ys);
    for (int32_t p0 = 0; p0 < np; p0 += QT_PIX) {
      const int32_t n = np - p0 < QT_PIX ? np - p0 : QT_PIX;
      /* rows over 32 bytes on too few pixels to pack them: pixel triples (qt_sums3x2g, ~15% fewer
       * instructions an output than qt_sums1x4g), each group's sums padded to a whole triple (n3 pixels);
       * where a last partial triple would waste more than that, pixel by pixel */
      const int32_t n3 = (n + 2) / 3 * 3;
      const bool t3 = K > 32 && !(wpk && n >= QT_WPK_MIN) && (n3 == n || (n3 - n == 1 && n >= 8)) && n3 <= cap;
      const int32_t ng = t3 ? n3 : n;
      int32_t G = cap / ng;
      if (!ks && G > QT_KC / 4) G = QT_KC / 4;
      const int8_t *xp = x + (ptrdiff_t)p0 * xs;
      int8_t *yp = y + (ptrdiff_t)p0 * ys;
      for (int32_t oc = 0, g; oc < O4; oc += 4 * g) {
        g = (O4 - oc) / 4 < G ? (O4 - oc) / 4 : G;
        const int32_t *kk = ks ? ks + oc : kc;
        if (!ks) qt_consts_groups(c, oc, g, K, kc);
        const int8_t *w = c->w + (ptrdiff_t)oc * K;
        if (K <= 32) {  /* rows of 17..32 bytes: their first 16 bytes, then the rest added (acc) */
          qt_g4 gs;
          vst1q_s32(gs.k8, vld1q_s32(kk));
          vst1q_s32(gs.k8 + 4, vld1q_s32(kk));
          gs.x0 = xp; gs.x1 = xp + xs; gs.pairs = n >> 1; gs.odd = n & 1; gs.gleft = g; gs.kp = kk + 4;
          gs.w = w; gs.K = K; gs.Kl = K < 16 ? K : 16;
          /* whole-vector loads may read past the run's last pixel when it is not the call's last */
          qt_sums4g(&gs, 2 * xs, S, false, p0 + n < np);
          if (K > 16) {
            gs.x0 = xp + 16; gs.x1 = xp + xs + 16; gs.gleft = g; gs.kp = kk + 4; gs.w = w + 16; gs.Kl = K - 16;
            qt_sums4g(&gs, 2 * xs, S, true, false);
          }
        } else if (wpk && n >= QT_WPK_MIN) {  /* the group's rows packed, two pixels a pass (qt_sums2x4w) */
          qt_b24 b;
          b.trips = K >> 4; b.wp = wpk; b.adj = (int32_t)(2 * xs) - 16 * (K >> 4); b.tail = K & 15;
          for (int32_t i = 0; i < g; i++) {
            qt_pack4(w + (ptrdiff_t)4 * i * K, K, wpk);
            vst1q_s32(b.k8, vld1q_s32(kk + 4 * i));
            vst1q_s32(b.k8 + 4, vld1q_s32(kk + 4 * i));
            int32_t *Sg = S + 4 * n * i;
            b.pairs = n >> 1;
            if (n >= 2) qt_sums2x4w(xp, xp + xs, &b, Sg);
            if (n & 1) {
              const int8_t *xl = xp + (ptrdiff_t)(n - 1) * xs;
              b.pairs = 1;
              qt_sums2x4w(xl, xl, &b, Sg + 4 * (n - 1));
            }
          }
        } else if (t3) {
          qt_f32 f;
          f.trips = K >> 4; f.wadj = 2 * K - 16 * (K >> 4); f.sstep = 16 * n3; f.tail = K & 15;
          for (int32_t p = 0; p < n; p += 3) {
            const int8_t *xa = xp + (ptrdiff_t)p * xs;
            f.x[0] = xa;
            f.x[1] = p + 1 < n ? xa + xs : xa;
            f.x[2] = p + 2 < n ? xa + 2 * xs : f.x[1];
            f.S = S + 4 * p;
            f.gleft = g;
            qt_sums3x2g(&f, w, K, kk);
          }
        } else {
          qt_blkg b;
          vst1q_s32(b.b.c, vld1q_s32(kk));
          for (int32_t i = 0; i < 4; i++) b.b.w[i] = w + (ptrdiff_t)i * K;
          b.gleft = g; b.kp = kk + 4; b.wstep = 4 * K;
          qt_sums1x4g(xp, xs, n, K, &b, S);
        }
        o.n4 = n >> 2; o.rem = n & 3; o.mp = c->mult + oc; o.sp = c->shift + oc; o.gleft = g; o.sg = S;
        o.sstep = 16 * ng;
        vst1q_u32(o.yq, vaddq_n_u32(off, (uint32_t)(uintptr_t)(yp + oc)));
        qt_requant4g(&o, (int32_t)ys);
      }
    }
  }
  if (O4 < O) qt_gemm_from(c, K, x, xs, y, ys, np, ks, S, wpad, O4);
}

static void qt_gemm_from(const qconv *c, int32_t K, const int8_t *x, ptrdiff_t xs, int8_t *y, ptrdiff_t ys,
                         int32_t np, const int32_t *ks, int32_t *S, int8_t *wpad, int32_t oc0) {
  const int32_t O = c->y.c;
  const bool packed = (ys & 3) == 0 && ((uintptr_t)y & 3) == 0;  /* word stores of four channels */
  qt_out o __attribute__((aligned(16)));
  o.c16 = c->out_off - c->amin;
  o.lo = c->amin;
  for (int32_t i = 0; i < 4; i++) o.off[i] = (uint32_t)(i * ys);
  vst1q_u8(o.d, vdupq_n_u8((uint8_t)(c->amax - c->amin)));
  const uint32x4_t wstep = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)K);
  qt_blk blk;
  int32_t k8[8];
  for (int32_t oc = oc0; oc < O; oc += 4) {
    const int32_t live = O - oc < 4 ? O - oc : 4;
    const int8_t *w = c->w + (ptrdiff_t)oc * K;
    const int32_t *mp = c->mult + oc, *sp = c->shift + oc;
    if (live == 4) {
      vst1q_s32(k8, ks ? vld1q_s32(ks + oc) : vdupq_n_s32(0));
      if (!ks) qt_consts4(c, oc, 4, K, k8);
      vst1q_u32((uint32_t *)(void *)blk.w, vaddq_n_u32(wstep, (uint32_t)(uintptr_t)w));
    } else {
      for (int32_t i = 0; i < 4; i++) {
        const int32_t ch = oc + (i < live ? i : live - 1);
        if (ks) k8[i] = ks[ch];
        o.m[i] = c->mult[ch];
        o.s[i] = c->shift[ch];
        blk.w[i] = c->w + (ptrdiff_t)ch * K;  /* rows past the last live one repeat it (sums not stored) */
      }
      if (!ks) qt_consts4(c, oc, live, K, k8);
      mp = o.m;
      sp = o.s;
      if (K <= 16) {  /* the last rows, then zeros: no read past the weights */
        for (int32_t i = 0; i < 4 * K; i++) wpad[i] = i < live * K ? w[i] : 0;
        w = wpad;
      }
    }
    vst1q_s32(blk.c, vld1q_s32(k8));
    vst1q_s32(k8 + 4, vld1q_s32(k8));
    for (int32_t p0 = 0; p0 < np; p0 += QT_PIX) {
      const int32_t n = np - p0 < QT_PIX ? np - p0 : QT_PIX;
      const int8_t *xp = x + (ptrdiff_t)p0 * xs;
      if (K > 16 && K <= 32) {  /* two channels at a time, four pixels a pass, a last partial quad pixel by pixel */
        for (int32_t h = 0; h < (live > 2 ? 2 : 1); h++) {
          int32_t kh[8];
          for (int32_t i = 0; i < 8; i += 2) { kh[i] = k8[2 * h]; kh[i + 1] = k8[2 * h + 1]; }
          const int8_t *wa = blk.w[2 * h], *wb = blk.w[2 * h + 1];
          if (n >= 4) qt_sums4x2(xp, xs, n >> 2, wa, wb, K, kh, S + 2 * h);
          for (int32_t p = n & ~3; p < n; p++) qt_sums4x2(xp + (ptrdiff_t)p * xs, 0, 1, wa, wb, K, kh, S + 4 * p + 2 * h);
        }
      } else if (K > 16) {
        qt_sums1x4(xp, xs, n, K, &blk, S);
      } else {
        if (n >= 2) qt_sums4(xp, xp + xs, 2 * xs, n >> 1, w, K, k8, S);
        if (n & 1) {
          const int8_t *xl = xp + (ptrdiff_t)(n - 1) * xs;
          qt_sums4(xl, xl, 0, 1, w, K, k8, S + 4 * (n - 1));
        }
      }
      int8_t *yp = y + (ptrdiff_t)p0 * ys + oc;
      if (live == 4 && packed) {
        qt_requant4(S, n, yp, (int32_t)ys, &o, mp, sp);
      } else {
        for (int32_t i = 0; i < live; i++)
          qt_requant1(S + i, n, yp + i, (int32_t)ys, mp[i], sp[i], c->out_off, c->amin, c->amax);
      }
    }
  }
}

#endif
