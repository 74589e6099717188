/* Private to depthwise.c (one translation unit): the Helium taps-on-lanes path (depth multiplier 1, kernels
 * up to 4x4): one vmladav per output pixel and channel. */
#ifndef ET_CM_DW_TAPS_MVE_H
#define ET_CM_DW_TAPS_MVE_H

/* Depthwise on Helium with a window's taps on the lanes, for depth multiplier 1 (the usual layer of real
 * networks), kernels up to 4x4, column stride 1 or 2, unit column dilation, any channel count and padding.
 * Per block of 16 channels and band of output rows, all in the call's planned scratch (qdt_scratch: bands sized
 * so that it stays within QDT_SCRATCH bytes):
 *  1. the block's input rows padded with -in_off (padded taps then add nothing: the input offset is folded
 *     into the per-channel constant), L columns of 16 bytes a row (qdt_pad; with row stride 2 the even rows,
 *     then the odd ones, so that step 2 stays one run);
 *  2. per channel, "segments": segment i interleaves (vst4) plane rows i sh + k dh (k = 0..3), columns 0..L-1,
 *     byte 4 j + k; the plane rows are gathered from the padded block (one byte per pixel: lanes 16 bytes
 *     apart). Segments follow one another, so the window of output pixel (i, ow) is the 16 contiguous bytes
 *     at 4 sw (i P + ow), P = L / sw (lane 4 kw + kh = tap (kh, kw); the weights' other lanes are 0).
 *     L is chosen so that the columns a row's last pixels read past its segment are padding there and in
 *     the next segment's first columns (right padding here, left padding there); the P - OW extra pixels of
 *     a segment are computed and thrown away. One stream of pixels per band: no per-row loop overhead, and
 *     narrow images (DS-CNN's 5 columns) fill the 8-pixel passes;
 *  3. the asm loop (qdt_run1c ...: G channels a call, their segments built by one qdt_segments call), 8 pixels
 *     a pass: a load and a vmladav each, the eight sums moved into two vectors, the channel's constant
 *     bias + in_off sum(w) added, the requantisation (doubling high multiply with the round-half-away
 *     correction folded in by vqrdmlah, rounding shift) on the two vectors, the narrows, the output offset
 *     and clamp in int16, one byte scatter store of the 8 pixels;
 *  4. the band's outputs (16 bytes a pixel in the scratch) copied to the tensor, the extra pixels skipped.
 * 36 instructions per 8 pixels x 9 MACs (3x3) in the loop (67 per 16 without a clamp), a 4-pixel last pass.
 * Tiny images (3x3 outputs) are left to the channels-on-lanes path (QDT_MIN_PIXELS). */
#define QDT_MIN_PIXELS 24   /* computed pixels per channel (OH x P) below which the lanes path is taken */
#define QDT_SCRATCH 12288   /* planned scratch at most: the block's weights and constants, padded block band, G
                             * channels' segments, band outputs */
#define QDT_CONSTS 768      /* the block's packed taps, weight lanes, per-channel constants: 3 x 256 bytes */

typedef struct {
  const int8_t *x;     /*  0: channel 0's first window; channel k's are k * xch further */
  int8_t *y;           /*  4: channel 0's first output byte in the band outputs (16 bytes a pixel) */
  int32_t passes;      /*  8: 8-pixel passes a channel */
  int32_t nch;         /* 12: channels */
  int32_t xch;         /* 16 */
  int32_t oo;          /* 20 */
  const int32_t *prm;  /* 24: per channel: mult, shift, bias + in_off * sum(w) (wrapping like the accumulator), 0 */
  const int8_t *w;     /* 28: per channel 16 bytes: lane 4 kw + kh = weight of tap (kh, kw), 0 elsewhere */
  uint16x8_t offs;     /* 32: store offsets: lane 2 i = pixel i, lane 2 i + 1 = pixel 4 + i (the narrows' order) */
  int16x8_t lo, hi;    /* 48, 64: the activation range */
  int32_t tail;        /* 80: then a 4-pixel pass (0 / 1) */
  int32_t passes16;    /* 84: 16-pixel passes first (the int8-range variants) */
  int32_t unused[2];   /* 88 */
  uint8x16_t offs16;   /* 96: their store offsets: byte b = pixel (b >> 2) + 4 ((b >> 1) & 1) + 8 (b & 1) */
} qdt_blk;
_Static_assert(offsetof(qdt_blk, prm) == 24 && offsetof(qdt_blk, w) == 28 && offsetof(qdt_blk, offs) == 32 &&
               offsetof(qdt_blk, hi) == 64 && offsetof(qdt_blk, tail) == 80 &&
               offsetof(qdt_blk, passes16) == 84 && offsetof(qdt_blk, offs16) == 96, "qdt_run offsets");

#ifdef __OPTIMIZE__  /* r7 is the frame pointer at -O0 */
#define QDT_ASM 1
/* four pixels: windows S bytes apart, sums into r0 r2 r4 r6, then into lanes 0..3 of q ("vmov q[2], q[0], ra, rb"
 * puts ra in lane 0 and rb in lane 2, as QEMU and cm_gemm.h take it) */
#define QDT_FOUR(S, q)                                                                                  \
  "vldrb.u8 q1, [r1], #" #S "\n\t"                                                                      \
  "vmladav.s8 r0, q1, q0\n\t"                                                                           \
  "vldrb.u8 q1, [r1], #" #S "\n\t"                                                                      \
  "vmladav.s8 r2, q1, q0\n\t"                                                                           \
  "vldrb.u8 q1, [r1], #" #S "\n\t"                                                                      \
  "vmladav.s8 r4, q1, q0\n\t"                                                                           \
  "vldrb.u8 q1, [r1], #" #S "\n\t"                                                                      \
  "vmladav.s8 r6, q1, q0\n\t"                                                                           \
  "vmov " q "[2], " q "[0], r0, r4\n\t"                                                                 \
  "vmov " q "[3], " q "[1], r2, r6\n\t"
/* clamp: the activation range in int16, or (sat) the int8 range by a saturating narrow; the byte store
 * takes each 16-bit lane's low byte */
#define QDT_BODY(S, clamp)                                                                              \
  QDT_FOUR(S, "q2")                                                                                     \
  QDT_FOUR(S, "q3")                                                                                     \
  "vadd.i32 q2, q2, r8\n\t"                                                                             \
  "vadd.i32 q3, q3, r8\n\t"                                                                             \
  "vshr.s32 q4, q2, #31\n\t"                                                                            \
  "vqrdmlah.s32 q4, q2, r5\n\t"                                                                         \
  "vrshl.s32 q4, r7\n\t"                                                                                \
  "vshr.s32 q2, q3, #31\n\t"                                                                            \
  "vqrdmlah.s32 q2, q3, r5\n\t"                                                                         \
  "vrshl.s32 q2, r7\n\t"                                                                                \
  "vqmovnb.s32 q4, q4\n\t"                                                                              \
  "vqmovnt.s32 q4, q2\n\t"                                                                              \
  "vqadd.s16 q4, q4, r9\n\t"                                                                            \
  clamp                                                                                                 \
  "vstrb.16 q4, [r3, q5]\n\t"                                                                           \
  "add r3, r3, #128\n\t"
/* four pixels: the same on q2 alone, stored to the even 16-bit lanes (predicate 0x3333) */
#define QDT_TAIL(S, clamp)                                                                              \
  QDT_FOUR(S, "q2")                                                                                     \
  "vadd.i32 q2, q2, r8\n\t"                                                                             \
  "vshr.s32 q4, q2, #31\n\t"                                                                            \
  "vqrdmlah.s32 q4, q2, r5\n\t"                                                                         \
  "vrshl.s32 q4, r7\n\t"                                                                                \
  "vqmovnb.s32 q4, q4\n\t"                                                                              \
  "vqadd.s16 q4, q4, r9\n\t"                                                                            \
  clamp                                                                                                 \
  "movw r0, #0x3333\n\t"                                                                                \
  "vmsr p0, r0\n\t"                                                                                     \
  "vpst\n\t"                                                                                            \
  "vstrbt.16 q4, [r3, q5]\n\t"
/* sixteen pixels (int8 range only: q6 holds the byte store offsets, q5 is reloaded after): four vectors, each
 * requantised through q7 and narrowed into q2 / q3, then into bytes */
#define QDT_REQ16(acc, dst, half)                                                                       \
  "vshr.s32 q7, " acc ", #31\n\t"                                                                        \
  "vqrdmlah.s32 q7, " acc ", r5\n\t"                                                                     \
  "vrshl.s32 q7, r7\n\t"                                                                                \
  "vqmovn" half ".s32 " dst ", q7\n\t"
#define QDT_BODY16(S)                                                                                   \
  QDT_FOUR(S, "q2")                                                                                     \
  QDT_FOUR(S, "q3")                                                                                     \
  QDT_FOUR(S, "q4")                                                                                     \
  QDT_FOUR(S, "q5")                                                                                     \
  "vadd.i32 q2, q2, r8\n\t"                                                                             \
  "vadd.i32 q3, q3, r8\n\t"                                                                             \
  "vadd.i32 q4, q4, r8\n\t"                                                                             \
  "vadd.i32 q5, q5, r8\n\t"                                                                             \
  QDT_REQ16("q2", "q2", "b")                                                                            \
  QDT_REQ16("q3", "q2", "t")                                                                            \
  QDT_REQ16("q4", "q3", "b")                                                                            \
  QDT_REQ16("q5", "q3", "t")                                                                            \
  "vqadd.s16 q2, q2, r9\n\t"                                                                            \
  "vqadd.s16 q3, q3, r9\n\t"                                                                            \
  "vqmovnb.s16 q4, q2\n\t"                                                                              \
  "vqmovnt.s16 q4, q3\n\t"                                                                              \
  "vstrb.8 q4, [r3, q6]\n\t"                                                                            \
  "add r3, r3, #256\n\t"
#define QDT_LOOP16(S)                                                                                   \
  "ldr lr, [%[b], #84]\n\t"                                                                             \
  "wls lr, lr, 5f\n"                                                                                     \
  "6:\n\t" QDT_BODY16(S) "le lr, 6b\n"                                                                   \
  "5:\n\t"                                                                                              \
  "vldrw.u32 q5, [%[b], #32]\n\t"
#define QDT_CLAMP "vmax.s16 q4, q4, q6\n\tvmin.s16 q4, q4, q7\n\t"
#define QDT_SAT "vqmovnb.s16 q4, q4\n\t"
/* every channel of the block: its constants (ldm), weights, then the passes; r10 = the constants, r11 = the
 * weights; blk->nch counts the channels down */
#define QDT_RUN(name, S, clamp, loop16, init)                                                           \
  __attribute__((noinline)) static void name(qdt_blk *blk) {                                      \
    __asm__ volatile(                                                                                   \
        "ldr r9, [%[b], #20]\n\t"                                                                       \
        "ldrd r10, r11, [%[b], #24]\n\t"                                                                \
        "vldrw.u32 q5, [%[b], #32]\n\t"                                                                 \
        "vldrw.u32 q6, [%[b], #48]\n\t"                                                                 \
        "vldrw.u32 q7, [%[b], #64]\n\t"                                                                 \
        init                                                                                            \
        "ldrd r1, r3, [%[b]]\n"                                                                         \
        "1:\n\t"                                                                                        \
        "ldm r10!, {r5, r7, r8, lr}\n\t"                                                                \
        "vldrw.u32 q0, [r11], #16\n\t"                                                                  \
        "push {r1, r3}\n\t"                                                                             \
        loop16                                                                                          \
        "ldr lr, [%[b], #8]\n\t"                                                                        \
        "wls lr, lr, 3f\n"                                                                              \
        "2:\n\t" QDT_BODY(S, clamp) "le lr, 2b\n"                                                        \
        "3:\n\t"                                                                                        \
        "ldr r0, [%[b], #80]\n\t"                                                                       \
        "cbz r0, 4f\n\t" QDT_TAIL(S, clamp) "\n"                                                          \
        "4:\n\t"                                                                                        \
        "pop {r1, r3}\n\t"                                                                              \
        "ldr r0, [%[b], #16]\n\t"                                                                       \
        "add r1, r1, r0\n\t"                                                                            \
        "add r3, r3, #1\n\t"                                                                            \
        "ldr r0, [%[b], #12]\n\t"                                                                       \
        "subs r0, r0, #1\n\t"                                                                           \
        "str r0, [%[b], #12]\n\t"                                                                       \
        "bne 1b"                                                                                        \
        :                                                                                               \
        : [b] "r"(blk)                                                                                  \
        : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "lr", "d0", "d1", \
          "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15", "memory", \
          "cc");                                                                                        \
  }
QDT_RUN(qdt_run1c, 4, QDT_CLAMP, "", "")
QDT_RUN(qdt_run1s, 4, QDT_SAT, QDT_LOOP16(4), "vldrw.u32 q6, [%[b], #96]\n\t")
QDT_RUN(qdt_run2c, 8, QDT_CLAMP, "", "")
QDT_RUN(qdt_run2s, 8, QDT_SAT, QDT_LOOP16(8), "vldrw.u32 q6, [%[b], #96]\n\t")
#undef QDT_RUN
#undef QDT_SAT
#undef QDT_CLAMP
#undef QDT_BODY
#undef QDT_BODY16
#undef QDT_REQ16
#undef QDT_LOOP16
#undef QDT_TAIL
#undef QDT_FOUR
#else
#define QDT_ASM 0
static void qdt_run1c(qdt_blk *blk) { (void)blk; }
#define qdt_run1s qdt_run1c
#define qdt_run2c qdt_run1c
#define qdt_run2s qdt_run1c
#endif

/* Segments [0, ns) of channels [0, nch), xch bytes apart: pb = the padded block band plus the channel's byte
 * (pixels of 16 bytes, L a row); rows k >= KH are left as they come (their weights are 0). A channel's last
 * chunk may run past its segments into the next channel's, which is built after it. Kernel row k of segment
 * i, column j: pb + 16 (i L + j) + r[k] when the band is "flat" (unit row stride: rows in order; row stride 2
 * and unit dilation: even rows, then odd rows, see qdt_pad), so a channel's segments are one run; otherwise
 * segment by segment, rows `row` bytes apart. */
typedef struct {
  int32_t L, ns, KH;
  bool flat;
  ptrdiff_t r1, r2, r3, pstep;  /* kernel rows 1..3; from a segment's rows to the next's (not flat) */
} qdt_seg;
__attribute__((always_inline)) static inline void qdt_seg_run(int8_t *ib, ptrdiff_t xch, int32_t nch, const int8_t *pb,
                                                              const qdt_seg *g, int32_t KH) {
  const uint8x16_t off = vmulq_n_u8(vidupq_n_u8(0, 1), 16);
  const int32_t L = g->L, len = g->flat ? g->ns * L : L, segs = g->flat ? 1 : g->ns;
  const ptrdiff_t r1 = g->r1, r2 = g->r2, r3 = g->r3, pstep = g->pstep;
  for (int32_t k = 0; k < nch; k++, ib += xch, pb++)
    for (int32_t i = 0; i < segs; i++) {
      const int8_t *p = pb + i * pstep;
      int8_t *q = ib + (ptrdiff_t)i * 4 * L;
      for (int32_t j = 0; j < len; j += 16, p += 256, q += 64) {
        const int8x16_t u = vuninitializedq_s8();
        int8x16x4_t v = {{vldrbq_gather_offset_s8(p, off), KH > 1 ? vldrbq_gather_offset_s8(p + r1, off) : u,
                          KH > 2 ? vldrbq_gather_offset_s8(p + r2, off) : u,
                          KH > 3 ? vldrbq_gather_offset_s8(p + r3, off) : u}};
        vst4q_s8(q, v);
      }
    }
}
__attribute__((noinline)) static void qdt_segments(int8_t *ib, ptrdiff_t xch, int32_t nch, const int8_t *pb,
                                                   const qdt_seg *g) {
  switch (g->KH) {
    case 1: qdt_seg_run(ib, xch, nch, pb, g, 1); break;
    case 2: qdt_seg_run(ib, xch, nch, pb, g, 2); break;
    case 3: qdt_seg_run(ib, xch, nch, pb, g, 3); break;
    default: qdt_seg_run(ib, xch, nch, pb, g, 4); break;
  }
}

/* The block's input rows r0 .. r0 + Hp - 1 of the padded image (padding: -in_off), L pixels of 16 bytes a row
 * (the live channels; the others' bytes are 0 and never used); split: the even rows, then the odd ones */
__attribute__((noinline)) static void qdt_pad(const qconv *c, const int8_t *xn, int8_t *const buf0, int32_t r0,
                                              int32_t Hp, int32_t L, bool split, mve_pred16_t pc, int8x16_t vpad) {
  const ptrdiff_t row = (ptrdiff_t)L * 16, odd = row * ((Hp + 1) / 2);
  const int32_t ph = c->ph, H = c->x.h;
  const ptrdiff_t xsh = c->x.sh, xsw = c->x.sw;
  const int32_t lp = c->pw < L ? c->pw : L, cols = c->x.w < L - lp ? c->x.w : L - lp, rp = L - lp - cols;
  for (int32_t i = 0; i < Hp; i++) {
    const int32_t ih = r0 + i - ph;
    int8_t *buf = split ? buf0 + ((i & 1) ? odd : 0) + (i >> 1) * row : buf0 + i * row;
    if (ih < 0 || ih >= H) {
      for (int32_t j = 0; j < L; j++, buf += 16) vst1q_s8(buf, vpad);
      continue;
    }
    for (int32_t j = 0; j < lp; j++, buf += 16) vst1q_s8(buf, vpad);
    const int8_t *s = xn + (ptrdiff_t)ih * xsh;
    if (pc == 0xffff)
      for (int32_t j = 0; j < cols; j++, buf += 16, s += xsw) vst1q_s8(buf, vld1q_s8(s));
    else
      for (int32_t j = 0; j < cols; j++, buf += 16, s += xsw) vst1q_s8(buf, vld1q_z_s8(s, pc));
    for (int32_t j = 0; j < rp; j++, buf += 16) vst1q_s8(buf, vpad);
  }
}

/* the scratch of a band of nb output rows: the padded block rows, 16 channels' segments (xch bytes each) and the
 * outputs; slack past the end for the last chunk's writes and the extra pixels' reads */
static int64_t qdt_xch(int32_t nb, int32_t L, bool spill) {
  return (4 * (int64_t)L * (nb + (spill ? 1 : 0)) + 15) & ~(int64_t)15;
}
static int64_t qdt_pbytes(int32_t nb, int32_t L, int32_t sh, int32_t KH, int32_t dh) {
  return 16 * (int64_t)L * ((int64_t)nb * sh + (int64_t)(KH - 1) * dh + 1) + 256;
}
static int64_t qdt_bytes(int32_t nb, int32_t G, int32_t L, int32_t P, int32_t sh, int32_t sw, int32_t KH, int32_t dh,
                         bool spill) {
  return qdt_pbytes(nb, L, sh, KH, dh) + G * qdt_xch(nb, L, spill) + 64 + 32 * sw + 16 +
         128 * (((int64_t)nb * P + 7) / 8);
}
/* the tallest band for G channels' segments at a time (0: none fits) */
static int32_t qdt_rows(int32_t OH, int32_t G, int32_t L, int32_t P, int32_t sh, int32_t sw, int32_t KH, int32_t dh,
                        bool spill) {
  int32_t nb = OH;
  const int64_t per = 16 * (int64_t)L * sh + 4 * (int64_t)G * L + 16 * (int64_t)P + 16;
  if ((int64_t)nb * per > QDT_SCRATCH) nb = (int32_t)(QDT_SCRATCH / per) + 1;
  while (nb > 0 && qdt_bytes(nb, G, L, P, sh, sw, KH, dh, spill) > QDT_SCRATCH) nb--;
  return nb;
}

/* A call's bands (from shapes and int arguments only; false where the taps path does not take the shapes):
 * L, P, spill: see above; G channels' segments at a time, nb output rows a band */
typedef struct { int32_t L, P, G, nb; bool spill; } qdt_geo;
static bool qdt_geo_of(const qconv *c, qdt_geo *q) {
  const int32_t KH = c->KH, KW = c->KW, T = KH * KW, O = c->y.c, OH = c->y.h, OW = c->y.w;
  const int32_t sh = c->sh, sw = c->sw, dh = c->dh, W = c->x.w, pw = c->pw;
  if (!c->depthwise || c->opg != 1 || c->x.c != O || KH > 4 || KW > 4 || T < 1 || c->dw != 1 ||
      (sw != 1 && sw != 2) || sh < 1 || dh < 1 || pw < 0 || c->x.sc != 1 || c->y.sc != 1 || c->in_off < -127 ||
      c->in_off > 128 || c->out_off < -255 || c->out_off > 255 || c->amin < -128 || c->amax > 127 ||
      c->amin > c->amax || OH < 1 || OW < 1 || W < 1)
    return false;
  /* L: see above. R = the last padded column a real pixel reads */
  const int32_t R = sw * (OW - 1) + KW - 1;
  int32_t L = sw * OW;
  while (!(L > R || (L >= pw + W && L > R - pw))) L += sw;
  const int32_t P = L / sw;
  const bool spill = R >= L;  /* the last segment's pixels read the next one */
  /* tiny images: the per-channel setup and the extra pixels dominate; the channels-on-lanes path is faster there
   * (measured on MobileNets' 3x3 outputs: 2.0-2.3 instructions/MAC there, 2.4-2.9 here; 6x6: 1.35 there, 1.23 here) */
  if ((int64_t)OH * P < QDT_MIN_PIXELS) return false;
  /* G channels' segments at a time: the fewest bands (each pads KH - 1 rows more and may build one segment more
   * per channel), then the most channels a call; bands of equal height, as many rows as QDT_SCRATCH holds */
  int32_t G = 1, nb = 0, bands = 0;
  for (int32_t g = 16; g >= 1; g = g > 4 ? g - 4 : g - 1) {
    const int32_t r = qdt_rows(OH, g, L, P, sh, sw, KH, dh, spill);
    if (r < 1) continue;
    const int32_t bd = (OH + r - 1) / r;
    if (!bands || bd < bands) { G = g; nb = r; bands = bd; }
  }
  if (nb < 1) return false;
  q->L = L; q->P = P; q->G = G; q->nb = (OH + bands - 1) / bands; q->spill = spill;
  return true;
}

/* Planned scratch of the taps path (ET_SCRATCH; kernel_scratch.py mirrors it): the block's constants
 * (QDT_CONSTS), then its band (qdt_bytes of the call's bands) */
static uint32_t qdt_scratch(const qconv *c) {
  qdt_geo q;
  if (!qdt_geo_of(c, &q)) return 0u;
  return QDT_CONSTS + (uint32_t)qdt_bytes(q.nb, q.G, q.L, q.P, c->sh, c->sw, c->KH, c->dh, q.spill);
}

/* false: not this path (nothing written) */
__attribute__((noinline)) static bool qdw_taps(const qconv *c, const int8_t *x, int8_t *y) {
  const int32_t KH = c->KH, KW = c->KW, T = KH * KW, O = c->y.c, OH = c->y.h, OW = c->y.w;
  const int32_t sh = c->sh, sw = c->sw, dh = c->dh;
  qdt_geo q;
  if (!QDT_ASM || !c->scr || !qdt_geo_of(c, &q)) return false;
  for (int32_t oc = 0; oc < O; oc++)
    if (!cm_vec_requant_ok(c->mult[oc], c->shift[oc])) return false;
  const int32_t L = q.L, P = q.P, G = q.G, nb = q.nb;
  const bool spill = q.spill;
  int8_t *const wpk = c->scr, *const wv = c->scr + 256;   /* qdt_scratch(c) bytes: QDT_CONSTS, then the band */
  int32_t *const prm = (int32_t *)(void *)(c->scr + 512);
  int8_t *const scr = c->scr + QDT_CONSTS;
  const ptrdiff_t xch = (ptrdiff_t)qdt_xch(nb, L, spill);
  int8_t *const pbuf = scr, *const ib = scr + ((qdt_pbytes(nb, L, sh, KH, dh) + 15) & ~(int64_t)15);
  int8_t *const ob = ib + G * xch + ((64 + 32 * sw + 16 + 15) & ~15);
  /* weight lanes: lane 4 kw + kh <- the packed tap kh KW + kw (16 bytes a tap) */
  const uint8x16_t lane = vidupq_n_u8(0, 1), lkh = vandq_u8(lane, vdupq_n_u8(3)), lkw = vshrq_n_u8(lane, 2);
  const uint8x16_t woff = vmulq_n_u8(vaddq_u8(vmulq_n_u8(lkh, (uint8_t)KW), lkw), 16);
  const mve_pred16_t ptaps = vcmphiq_u8(vdupq_n_u8((uint8_t)KH), lkh) & vcmphiq_u8(vdupq_n_u8((uint8_t)KW), lkw);
  qdt_blk blk;
  {
    uint16_t offs[8];
    for (int32_t i = 0; i < 4; i++) { offs[2 * i] = (uint16_t)(16 * i); offs[2 * i + 1] = (uint16_t)(16 * (4 + i)); }
    blk.offs = vld1q_u16(offs);
    uint8_t o16[16];
    for (int32_t b = 0; b < 16; b++) o16[b] = (uint8_t)(16 * ((b >> 2) + 4 * ((b >> 1) & 1) + 8 * (b & 1)));
    blk.offs16 = vld1q_u8(o16);
  }
  blk.oo = c->out_off; blk.xch = (int32_t)xch;
  blk.lo = vdupq_n_s16((int16_t)c->amin); blk.hi = vdupq_n_s16((int16_t)c->amax);
  const bool sat8 = c->amin == -128 && c->amax == 127;
  void (*const run)(qdt_blk *) = sw == 1 ? (sat8 ? qdt_run1s : qdt_run1c) : (sat8 ? qdt_run2s : qdt_run2c);
  const int8x16_t vpad = vdupq_n_s8((int8_t)-c->in_off);
  const uint32_t io = (uint32_t)c->in_off;
  const ptrdiff_t ysh = c->y.sh, ysw = c->y.sw;
  /* the segments' rows: see qdt_seg_run */
  const bool split = sh == 2 && dh == 1;
  qdt_seg sg;
  sg.L = L; sg.KH = KH; sg.flat = sh == 1 || split;
  sg.r1 = (ptrdiff_t)dh * L * 16; sg.r2 = 2 * sg.r1; sg.r3 = 3 * sg.r1; sg.pstep = (ptrdiff_t)sh * L * 16;
  if (split) sg.r2 = (ptrdiff_t)L * 16;
  for (int32_t c0 = 0; c0 < O; c0 += 16) {
    const int32_t live = O - c0 < 16 ? O - c0 : 16;
    const mve_pred16_t pc = vctp8q((uint32_t)live);
    for (int32_t t = 0; t < T; t++) vst1q_s8(wpk + 16 * t, vld1q_z_s8(c->w + (ptrdiff_t)t * O + c0, pc));
    int32_t sums[16] __attribute__((aligned(16)));
    for (int32_t k = 0; k < live; k++) {
      const int8x16_t w = vldrbq_gather_offset_z_s8(wpk + k, woff, ptaps);
      vst1q_s8(wv + 16 * k, w);
      sums[k] = vaddvq_s8(w);
    }
    /* per channel: mult, shift, bias + in_off * sum(w) (wrapping), 0; four channels a vst4 */
    for (int32_t k = 0; k < live; k += 4) {
      const mve_pred16_t p4 = vctp32q((uint32_t)(live - k));
      const int32x4_t bias = c->bias ? vld1q_z_s32(c->bias + c0 + k, p4) : vdupq_n_s32(0);
      int32x4x4_t v = {{vld1q_z_s32(c->mult + c0 + k, p4), vld1q_z_s32(c->shift + c0 + k, p4),
                        vreinterpretq_s32_u32(vmlaq_n_u32(vreinterpretq_u32_s32(bias),
                                                          vreinterpretq_u32_s32(vld1q_z_s32(sums + k, p4)), io)),
                        vdupq_n_s32(0)}};
      vst4q_s32(prm + 4 * k, v);
    }
    for (int32_t n = 0; n < c->y.n; n++)
      for (int32_t oh0 = 0; oh0 < OH; oh0 += nb) {
        const int32_t rows = OH - oh0 < nb ? OH - oh0 : nb;
        const int32_t Hp = rows * sh + (KH - 1) * dh + 1;
        qdt_pad(c, x + n * c->x.sn + c0, pbuf, oh0 * sh, Hp, L, split, pc, vpad);
        sg.ns = rows + (spill ? 1 : 0);
        if (split) { sg.r1 = 16 * (ptrdiff_t)L * ((Hp + 1) / 2); sg.r3 = sg.r1 + sg.r2; }
        /* 16-pixel passes (int8 range), then 8, then 4 */
        blk.passes16 = sat8 ? rows * P / 16 : 0;
        const int32_t rest = rows * P - 16 * blk.passes16;
        blk.passes = rest / 8;
        blk.tail = 0;
        if (rest % 8 > 4) blk.passes++;
        else if (rest % 8) blk.tail = 1;
        blk.x = ib;
        for (int32_t g0 = 0; g0 < live; g0 += G) {
          const int32_t g = live - g0 < G ? live - g0 : G;
          qdt_segments(ib, xch, g, pbuf + g0, &sg);
          blk.nch = g; blk.prm = prm + 4 * g0; blk.w = wv + 16 * g0; blk.y = ob + g0;
          run(&blk);
        }
        int8_t *yr = y + n * c->y.sn + (ptrdiff_t)oh0 * ysh + c0;
        const int8_t *s = ob;
        for (int32_t i = 0; i < rows; i++, yr += ysh, s += 16 * (P - OW)) {
          int8_t *yp = yr;
          if (live == 16)
            for (int32_t ow = 0; ow < OW; ow++, yp += ysw, s += 16) vst1q_s8(yp, vld1q_s8(s));
          else
            for (int32_t ow = 0; ow < OW; ow++, yp += ysw, s += 16) vstrbq_p_s8(yp, vld1q_s8(s), pc);
        }
      }
  }
  return true;
}

#endif
