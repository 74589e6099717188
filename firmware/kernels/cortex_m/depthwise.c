/* cortex_m:: int8 depthwise convolution. */
#include "cm_gemm.h"
#ifdef CM_DSP
#include "dsp_dw.h"
#endif

#ifdef CM_MVE
/* The 4-channel depthwise over a whole image (qdw_plane_mve below sets it up): windows are 16
 * contiguous bytes of the row-interleaved buffer, one per pixel (post-increment 4). Per pixel: a
 * vmladava per channel onto its constant (accumulators must be even registers: r0 r2 r4 r6; they
 * reach a vector through 16 bytes of memory, stm + vldrw), the requantisation on four lanes, the
 * output offset added between two saturating narrows (the int8 clamp: the same bytes as adding it
 * in 32 bits first) and a four-byte store. Written in asm: GCC 12 spills this loop.
 * blk: 16 bytes of scratch; below it (-16) the constants[4], after it (+16) the row tails: input
 * bytes, output bytes, pixels per row, then (+28) the output pixel stride. */
#define QDW_BODY(store)                                                                                 \
  "1:\n\t"                                                                                              \
  "ldr lr, [%[blk], #24]\n\t"                                                                           \
  "wls lr, lr, 3f\n"                                                                                    \
  "2:\n\t"                                                                                              \
  "vldrb.u8 %q[win], [%[xb]], #4\n\t"                                                                   \
  "ldmdb %[blk], {r0, r2, r4, r6}\n\t"                                                                  \
  "vmladava.s8 r0, %q[win], %q[w0]\n\t"                                                                 \
  "vmladava.s8 r2, %q[win], %q[w1]\n\t"                                                                 \
  "vmladava.s8 r4, %q[win], %q[w2]\n\t"                                                                 \
  "vmladava.s8 r6, %q[win], %q[w3]\n\t"                                                                 \
  "stm %[blk], {r0, r2, r4, r6}\n\t"                                                                    \
  "vldrw.u32 %q[win], [%[blk]]\n\t"                                                                     \
  "vshr.s32 %q[fix], %q[win], #31\n\t"                                                                  \
  "vqrdmulh.s32 %q[win], %q[win], %q[vm]\n\t"                                                           \
  "vadd.i32 %q[win], %q[win], %q[fix]\n\t"                                                              \
  "vrshl.s32 %q[win], %q[win], %q[vs]\n\t"                                                              \
  "vqmovnb.s32 %q[win], %q[win]\n\t"                                                                    \
  "vqadd.s16 %q[win], %q[win], %[oo]\n\t"                                                               \
  "vqmovnb.s16 %q[win], %q[win]\n\t"                                                                    \
  store                                                                                                 \
  "le lr, 2b\n"                                                                                         \
  "3:\n\t"                                                                                              \
  "ldrd r0, r2, [%[blk], #16]\n\t"                                                                      \
  "add %[xb], %[xb], r0\n\t"                                                                            \
  "add %[yo], %[yo], r2\n\t"                                                                            \
  "subs %[rows], %[rows], #1\n\t"                                                                       \
  "bne 1b"
#define QDW_OPERANDS                                                                                    \
  : [xb] "+r"(xb), [yo] "+l"(yo), [rows] "+r"(rows), "=&r"(lc), [win] "=&w"(win), [fix] "=&w"(fix),   \
    "=&r"(a0), "=&r"(a1), "=&r"(a2), "=&r"(a3)                                                          \
  : [blk] "r"(blk), [oo] "r"(oo), [w0] "w"(w0), [w1] "w"(w1), [w2] "w"(w2), \
    [w3] "w"(w3), [vm] "w"(vm), [vs] "w"(vs)                                                            \
  : "memory", "cc"
static void qdw4_image(const int8_t *xb, int8_t *yo, int32_t rows, uint32_t ys, int32_t *blk, int32_t oo,
                       int8x16_t w0, int8x16_t w1, int8x16_t w2, int8x16_t w3, int32x4_t vm,
                       int32x4_t vs) {
  register int32_t a0 __asm__("r0"), a1 __asm__("r2"), a2 __asm__("r4"), a3 __asm__("r6");
  register int32_t lc __asm__("lr");
  int8x16_t win, fix;
  if (ys == 4)  /* NHWC with four channels: pixels are 4 bytes apart */
    __asm__ volatile(QDW_BODY("vstrb.32 %q[win], [%[yo]], #4\n\t") QDW_OPERANDS);
  else
    __asm__ volatile(QDW_BODY("vstrb.32 %q[win], [%[yo]]\n\tldr r0, [%[blk], #28]\n\tadd %[yo], %[yo], r0\n\t")
                     QDW_OPERANDS);
}
#undef QDW_BODY
#undef QDW_OPERANDS

/* The same depthwise on 2x2 blocks of output pixels (four channels, pixel stride 4 bytes): the four
 * pixels' sums go out through 64 bytes of scratch (stmdb) and come back transposed (vld4), one vector
 * per channel with the pixels on the lanes, so the requantisation takes the channel's multiplier and
 * shift as scalars (vqrdmlah adds the round-half-away correction in the multiply), and the narrows
 * interleave the four channels into the 16 output bytes, which one scatter store writes to the two
 * rows (word lanes at y, y+4, y+row, y+row+4). 57 instructions per block, 14.25 per pixel.
 * Walks `pairs` row pairs of `groups` blocks; windows of the second row are `R` bytes further. */
typedef struct {
  int32_t cst[4];          /* -16: bias + in_off * sum(w) per channel (ldmdb) */
  int32_t mq[8];           /*   0: multiplier, shift for channels 0..3 (ldm) */
  int8_t w2[16], w3[16];   /*  32, 48: reloaded per block (their registers are the vld4 targets) */
  int32_t scr[16];         /*  64: the four pixels' sums */
  int32_t groups, pairs, xstep, ystep;  /* 128: blocks per row pair; row pairs; pointer steps per pair */
  int8_t w0[16], w1[16];   /* 144, 160 */
  uint32_t addr[4];        /* 176: store addresses of the first block, minus 8 (pre-indexed) */
} qdw_quads_blk;
/* the asm below addresses these from mq */
_Static_assert(offsetof(qdw_quads_blk, mq) == 16 && offsetof(qdw_quads_blk, groups) == 16 + 128 &&
               offsetof(qdw_quads_blk, w0) == 16 + 144 && offsetof(qdw_quads_blk, addr) == 16 + 176,
               "qdw4_quads offsets");
#ifdef __OPTIMIZE__  /* the loop needs r7, the frame pointer at -O0 */
#define QDW_QUADS 1
/* one pixel of the block: its window (address operand `win`), four sums onto the constants, pushed to scratch */
#define QDW_PIXEL(win)                                                                                  \
  "ldmdb %[blk], {r0, r2, r4, r6}\n\t"                                                                   \
  "vldrb.u8 q3, " win "\n\t"                                                                             \
  "vmladava.s8 r0, q3, q0\n\t"                                                                           \
  "vmladava.s8 r2, q3, q1\n\t"                                                                           \
  "vmladava.s8 r4, q3, q5\n\t"                                                                           \
  "vmladava.s8 r6, q3, q6\n\t"                                                                           \
  "stmdb r12!, {r0, r2, r4, r6}\n\t"
__attribute__((noinline)) static void qdw4_quads(const int8_t *xb, const int8_t *xb2, int32_t *blk, int32_t oo) {
  __asm__ volatile(
      "vldrw.u32 q0, [%[blk], #144]\n\t"
      "vldrw.u32 q1, [%[blk], #160]\n\t"
      "vldrw.u32 q2, [%[blk], #176]\n\t"
      "add r12, %[blk], #128\n"
      "1:\n\t"
      "ldr lr, [%[blk], #128]\n\t"
      "dls lr, lr\n"
      "2:\n\t"
      "vldrw.u32 q5, [%[blk], #32]\n\t"
      "vldrw.u32 q6, [%[blk], #48]\n\t"
      QDW_PIXEL("[%[xb2], #4]")
      QDW_PIXEL("[%[xb2]], #8")
      QDW_PIXEL("[%[xb], #4]")
      QDW_PIXEL("[%[xb]], #8")
      "vld40.32 {q4, q5, q6, q7}, [r12]\n\t"
      "vld41.32 {q4, q5, q6, q7}, [r12]\n\t"
      "vld42.32 {q4, q5, q6, q7}, [r12]\n\t"
      "vld43.32 {q4, q5, q6, q7}, [r12]!\n\t"
      "ldm %[blk], {r0, r1, r2, r3, r4, r5, r6, r7}\n\t"
      "vshr.s32 q3, q4, #31\n\t"
      "vqrdmlah.s32 q3, q4, r0\n\t"
      "vrshl.s32 q3, r1\n\t"
      "vshr.s32 q4, q5, #31\n\t"
      "vqrdmlah.s32 q4, q5, r2\n\t"
      "vrshl.s32 q4, r3\n\t"
      "vshr.s32 q5, q6, #31\n\t"
      "vqrdmlah.s32 q5, q6, r4\n\t"
      "vrshl.s32 q5, r5\n\t"
      "vshr.s32 q6, q7, #31\n\t"
      "vqrdmlah.s32 q6, q7, r6\n\t"
      "vrshl.s32 q6, r7\n\t"
      "vqmovnb.s32 q3, q3\n\t"
      "vqmovnt.s32 q3, q5\n\t"
      "vqmovnb.s32 q4, q4\n\t"
      "vqmovnt.s32 q4, q6\n\t"
      "vqadd.s16 q3, q3, %[oo]\n\t"
      "vqadd.s16 q4, q4, %[oo]\n\t"
      "vqmovnb.s16 q3, q3\n\t"
      "vqmovnt.s16 q3, q4\n\t"
      "vstrw.32 q3, [q2, #8]!\n\t"
      "le lr, 2b\n\t"
      "ldrd r0, r1, [%[blk], #136]\n\t"
      "add %[xb], %[xb], r0\n\t"
      "add %[xb2], %[xb2], r0\n\t"
      "vadd.i32 q2, q2, r1\n\t"
      "ldr r2, [%[blk], #132]\n\t"
      "subs r2, r2, #1\n\t"
      "str r2, [%[blk], #132]\n\t"
      "bne 1b"
      : [xb] "+r"(xb), [xb2] "+r"(xb2)
      : [blk] "r"(blk), [oo] "r"(oo)
      : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r12", "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6",
        "d7", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15", "memory", "cc");
}
#undef QDW_PIXEL
#else
#define QDW_QUADS 0
static void qdw4_quads(const int8_t *xb, const int8_t *xb2, int32_t *blk, int32_t oo) {
  (void)xb; (void)xb2; (void)blk; (void)oo;
}
#endif

/* Setup loops of qdw_plane_exec, out of line so that they run with few live registers. The plane:
 * rows [0, Hn) of nch 16-byte chunks; data rows [top, bot) hold input bytes where pch[j] says, the pad
 * elsewhere; masked lanes are not read (a row's first chunk may start before the tensor). src: the
 * source of data row `top`. */
__attribute__((noinline)) static void qdw_plane_rows(int8_t *dst, uintptr_t src, int32_t top, int32_t bot,
                                                     int32_t Hn, uintptr_t xsh, int32_t nch, int8x16_t vpad,
                                                     const mve_pred16_t *pch) {
  int8_t *const end = dst + 16 * nch * Hn, *const dtop = dst + 16 * nch * top;
  for (; dst < dtop; dst += 16) vst1q_s8(dst, vpad);
  if (nch == 1) {  /* the usual small image: no chunk loop (measured: ~20 instructions a row) */
    const mve_pred16_t p = pch[0];
    for (int32_t r = top; r < bot; r++, src += xsh, dst += 16)
      vst1q_s8(dst, vpselq_s8(vldrbq_z_s8((const int8_t *)src, p), vpad, p));
  } else {
    for (int32_t r = top; r < bot; r++, src += xsh)
      for (int32_t j = 0; j < nch; j++, dst += 16)
        vst1q_s8(dst, vpselq_s8(vldrbq_z_s8((const int8_t *)(src + 16u * (uint32_t)j), pch[j]), vpad, pch[j]));
  }
  for (; dst < end; dst += 16) vst1q_s8(dst, vpad);
}
/* Both steps at once for the usual small image (one chunk, unit row stride and dilation): output row
 * oh interleaves plane rows oh..oh+3, kept in q4-q7 and moved down one row per output row, each plane
 * row made once from the input (top, bot, src as in qdw_plane_rows; rows past KH meet zero weights).
 * Per output row: the vst4, three moves and the next row (pad, or a masked load merged with the pad). */
/* one output row (vst4 of q4-q7, ib += 64) and the rows moved down; q7 is then filled by the caller */
#define QDW_ROW_OUT                                                                                     \
  "vst40.8 {q4, q5, q6, q7}, [%[ib]]\n\t"                                                               \
  "vst41.8 {q4, q5, q6, q7}, [%[ib]]\n\t"                                                               \
  "vst42.8 {q4, q5, q6, q7}, [%[ib]]\n\t"                                                               \
  "vst43.8 {q4, q5, q6, q7}, [%[ib]]!\n\t"                                                              \
  "vmov q4, q5\n\t"                                                                                      \
  "vmov q5, q6\n\t"                                                                                      \
  "vmov q6, q7\n\t"
__attribute__((noinline)) static void qdw_interleave_direct(int8_t *ib, uintptr_t src, int32_t top, int32_t bot,
                                                            int32_t rows, uintptr_t xsh, int8x16_t vpad,
                                                            mve_pred16_t p) {
  int8_t first[64] __attribute__((aligned(16)));  /* plane rows 0..3 */
  src -= (uintptr_t)top * xsh;  /* the source of plane row 0 (read only for rows in [top, bot)) */
  for (int32_t k = 0; k < 4; k++)
    vst1q_s8(first + 16 * k, k >= top && k < bot ? vpselq_s8(vldrbq_z_s8((const int8_t *)(src + (uint32_t)k * xsh), p),
                                                             vpad, p) : vpad);
  /* rows fetched in the loop: k = 4 .. rows + 3: pad below top, data in [top, bot), pad after */
  const int32_t k1 = top > 4 ? (top < rows + 4 ? top : rows + 4) : 4;
  const int32_t k2 = bot > k1 ? (bot < rows + 4 ? bot : rows + 4) : k1;
  uint32_t n1 = (uint32_t)(k1 - 4), n2 = (uint32_t)(k2 - k1), n3 = (uint32_t)(rows + 4 - k2);
  src += (uint32_t)k1 * xsh;
  __asm__ volatile(
      "vldrw.u32 q4, [%[f]]\n\t"
      "vldrw.u32 q5, [%[f], #16]\n\t"
      "vldrw.u32 q6, [%[f], #32]\n\t"
      "vldrw.u32 q7, [%[f], #48]\n\t"
      "vmsr p0, %[p]\n\t"
      "wls lr, %[n1], 2f\n"
      "1:\n\t"
      QDW_ROW_OUT
      "vmov q7, %q[pad]\n\t"
      "le lr, 1b\n"
      "2:\n\t"
      "wls lr, %[n2], 4f\n"
      "3:\n\t"
      QDW_ROW_OUT
      "vpst\n\t"
      "vldrbt.u8 q7, [%[src]]\n\t"
      "vpsel q7, q7, %q[pad]\n\t"
      "add %[src], %[src], %[xsh]\n\t"
      "le lr, 3b\n"
      "4:\n\t"
      "wls lr, %[n3], 6f\n"
      "5:\n\t"
      QDW_ROW_OUT
      "vmov q7, %q[pad]\n\t"
      "le lr, 5b\n"
      "6:"
      : [ib] "+r"(ib), [src] "+r"(src)
      : [f] "r"(first), [p] "r"((uint32_t)p), [n1] "r"(n1), [n2] "r"(n2), [n3] "r"(n3), [xsh] "r"(xsh),
        [pad] "w"(vpad)
      : "lr", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15", "memory", "cc");
}
#undef QDW_ROW_OUT
/* Row-interleaves the plane (rows of nch 16-byte chunks): byte 4*col + k of output row oh is plane
 * row oh*sh + k*dh (pr steps `step` per output row, r1..r3 reach rows k = 1..3). */
__attribute__((noinline)) static void qdw_interleave(int8_t *ib, const int8_t *pr, int32_t rows, ptrdiff_t step,
                                                     int32_t nch, ptrdiff_t r1, ptrdiff_t r2, ptrdiff_t r3) {
  if (nch == 1) {  /* as in qdw_plane_rows */
    for (int32_t oh = 0; oh < rows; oh++, pr += step, ib += 64) {
      int8x16x4_t v = {{vld1q_s8(pr), vld1q_s8(pr + r1), vld1q_s8(pr + r2), vld1q_s8(pr + r3)}};
      vst4q_s8(ib, v);
    }
    return;
  }
  for (int32_t oh = 0; oh < rows; oh++, pr += step)
    for (int32_t j = 0; j < 16 * nch; j += 16, ib += 64) {
      int8x16x4_t v = {{vld1q_s8(pr + j), vld1q_s8(pr + r1 + j), vld1q_s8(pr + r2 + j), vld1q_s8(pr + r3 + j)}};
      vst4q_s8(ib, v);
    }
}

/* Depthwise on Helium for groups of four output channels per input channel, unit column stride and
 * dilation, kernels up to 4x4, the int8 clamp (no fused activation range). The input channel is
 * copied once into a padded plane (the padding holds -in_off, so padded taps add nothing), then
 * into a row-interleaved buffer (vst4: byte 4*col + k of output row oh is the plane's row oh*sh + k*dh),
 * where each pixel's window is 16 contiguous bytes: no per-pixel masks or gathers. Buffers live on
 * the stack (up to QDW_PLANE + QDW_IB bytes). qdw_plane_prep works out what does not depend on the
 * input (a depthwise call keeps it in its kernel state), qdw_plane_exec runs the image. */
#define QDW_PLANE 1024
#define QDW_IB 2048
#define QDW_NCH 8   /* 16-column chunks of a plane row */
typedef struct {
  int32_t Hn, Wp, nch, top, bot, cols, R;  /* plane rows, columns, chunks, data rows [top, bot), bytes per ib row */
  int32_t r1, r2, r3;                      /* plane offsets of kernel rows 1..3 */
  int32_t tail[4];                         /* qdw4_image over the whole image: prm[8..11] */
  int32_t quads;                           /* 2x2 blocks; then blk holds the group's weights and constants */
  mve_pred16_t pch[QDW_NCH];               /* input columns of each chunk */
  qdw_quads_blk blk;
} qdw_plan;

/* Weight vectors (lane 4*kw + kh holds tap (kh, kw)) and constants (bias + in_off * sum(w), wrapping
 * like the 32-bit accumulator) of output channels oc0..oc0+3. */
static void qdw_weights(const qconv *c, int32_t oc0, int8x16_t *w, int32_t *cst) {
  const int32_t O = c->y.c;
  const uint8x16_t lane = vidupq_n_u8(0, 1), kh = vandq_u8(lane, vdupq_n_u8(3)), kw = vshrq_n_u8(lane, 2);
  const uint8x16_t woff = vmulq_n_u8(vaddq_u8(vmulq_n_u8(kh, (uint8_t)c->KW), kw), (uint8_t)O);
  const mve_pred16_t ptaps = vcmphiq_u8(vdupq_n_u8((uint8_t)c->KH), kh) & vcmphiq_u8(vdupq_n_u8((uint8_t)c->KW), kw);
  const uint32_t io = (uint32_t)c->in_off;
  for (int32_t i = 0; i < 4; i++) {
    w[i] = vldrbq_gather_offset_z_s8(c->w + oc0 + i, woff, ptaps);
    cst[i] = (int32_t)((c->bias ? (uint32_t)c->bias[oc0 + i] : 0u) + io * (uint32_t)vaddvq_s8(w[i]));
  }
}

/* false: not this path */
static bool qdw_plane_prep(const qconv *c, const int8_t *y, qdw_plan *p) {
  const int32_t KH = c->KH, KW = c->KW, O = c->y.c, OH = c->y.h, OW = c->y.w;
  if (!c->depthwise || c->opg % 4 || KH > 4 || KW > 4 || c->sw != 1 || c->dw != 1 || c->y.sc != 1 ||
      c->amin != -128 || c->amax != 127 || c->in_off < -127 || c->in_off > 128 || c->out_off < -255 ||
      c->out_off > 255 || OH <= 0 || OW <= 0 || O > 255 / 15)
    return false;
  /* padded rows and columns the windows read (conv_out bounded them by the padded input) */
  const int32_t Hn = (OH - 1) * c->sh + (KH - 1) * c->dh + 1, Wp = (OW + KW - 1 + 15) & ~15;
  if ((int64_t)Hn * Wp > QDW_PLANE || (int64_t)OH * 4 * Wp + 16 > QDW_IB || Wp > 16 * QDW_NCH) return false;
  for (int32_t oc = 0; oc < O; oc++)
    if (!cm_vec_requant_ok(c->mult[oc], c->shift[oc])) return false;
  const int32_t ph = c->ph, pw = c->pw;
  p->Hn = Hn; p->Wp = Wp; p->nch = Wp / 16; p->R = 4 * Wp;
  p->top = ph < Hn ? ph : Hn;
  p->bot = ph + c->x.h < Hn ? ph + c->x.h : Hn;
  /* plane columns [pw, pw + cols) hold input columns; a predicate per 16-column chunk */
  p->cols = c->x.w < Wp - pw ? c->x.w : Wp - pw;
  for (int32_t j = 0; j < p->nch; j++) {
    const int32_t lo = pw - 16 * j, hi = pw + p->cols - 16 * j;
    mve_pred16_t m = hi <= 0 ? 0 : vctp8q((uint32_t)hi);
    if (lo > 0) m &= (mve_pred16_t)~vctp8q((uint32_t)lo);
    p->pch[j] = m;
  }
  p->r1 = KH > 1 ? c->dh * Wp : 0; p->r2 = KH > 2 ? 2 * c->dh * Wp : 0; p->r3 = KH > 3 ? 3 * c->dh * Wp : 0;
  p->tail[0] = 4 * (Wp - OW);  /* to the next interleaved row */
  p->tail[1] = (int32_t)(c->y.sh - (ptrdiff_t)OW * c->y.sw);
  p->tail[2] = OW;
  p->tail[3] = (int32_t)c->y.sw;
  /* four channels 4 bytes apart, word-aligned rows, at least one 2x2 block: qdw4_quads */
  const ptrdiff_t ysh = c->y.sh;
  p->quads = QDW_QUADS && O == 4 && c->y.sw == 4 && OH >= 2 && OW >= 2 &&
             !(((uintptr_t)y | (uintptr_t)ysh | (uintptr_t)c->y.sn) & 3u);
  if (p->quads) {
    qdw_quads_blk *q = &p->blk;
    int8x16_t w[4];
    qdw_weights(c, 0, w, q->cst);
    vst1q_s8(q->w0, w[0]); vst1q_s8(q->w1, w[1]); vst1q_s8(q->w2, w[2]); vst1q_s8(q->w3, w[3]);
    for (int32_t i = 0; i < 4; i++) { q->mq[2 * i] = c->mult[i]; q->mq[2 * i + 1] = c->shift[i]; }
    q->groups = OW / 2;
    q->xstep = 2 * p->R - 4 * (OW & ~1);
    q->ystep = (int32_t)(2 * ysh - 4 * (OW & ~1));
  }
  return true;
}

CM_HOT static void qdw_plane_exec(const qconv *c, qdw_plan *p, const int8_t *x, int8_t *y) {
  const int32_t O = c->y.c, OH = c->y.h, OW = c->y.w, Wp = p->Wp, Hn = p->Hn, nch = p->nch, R = p->R;
  const int32_t top = p->top, bot = p->bot, cols = p->cols, ph = c->ph, pw = c->pw;
  int8_t plane[QDW_PLANE] __attribute__((aligned(16)));
  int8_t ib[QDW_IB] __attribute__((aligned(16)));
  int32_t prm[12] __attribute__((aligned(16)));  /* constants, scratch, row tails: qdw4_image */
  const int8x16_t vpad = vdupq_n_s8((int8_t)-c->in_off);
  /* locals: int8 stores may alias *c, whose fields would be reloaded in every loop below */
  const ptrdiff_t xsh = c->x.sh, xsw = c->x.sw, xsn = c->x.sn, xsc = c->x.sc, ysh = c->y.sh;
  const int32_t out_off = c->out_off;
  for (int32_t n = 0; n < c->y.n; n++) {
    int32_t built = -1;  /* input channel in the buffers */
    for (int32_t oc0 = 0; oc0 < O; oc0 += 4) {
      const int32_t ic = oc0 / c->opg;
      if (ic != built) {
        const int8_t *xc = x + n * xsn + ic * xsc;
        if (xsw == 1 && cols > 0 && nch == 1 && c->sh == 1 && c->dh == 1) {
          qdw_interleave_direct(ib, (uintptr_t)xc - (uintptr_t)pw, top, bot, OH, (uintptr_t)xsh, vpad, p->pch[0]);
        } else {
          if (xsw == 1 && cols > 0) {  /* data rows whole */
            qdw_plane_rows(plane, (uintptr_t)xc - (uintptr_t)pw, top, bot, Hn, (uintptr_t)xsh, nch, vpad, p->pch);
          } else {
            for (int32_t i = 0; i < Hn * Wp; i += 16) vst1q_s8(plane + i, vpad);
            for (int32_t r = top; r < bot; r++)
              for (int32_t j = 0; j < cols; j++) plane[r * Wp + pw + j] = xc[(r - ph) * xsh + j * xsw];
          }
          qdw_interleave(ib, plane, OH, c->sh * Wp, nch, p->r1, p->r2, p->r3);
        }
        built = ic;
      }
      int8_t *yg = y + n * c->y.sn + oc0;
      int8x16_t w[4];
      if (!p->quads) {
        qdw_weights(c, oc0, w, prm);
        for (int32_t i = 0; i < 4; i++) prm[8 + i] = p->tail[i];
        qdw4_image(ib, yg, OH, (uint32_t)c->y.sw, prm + 4, out_off, w[0], w[1], w[2], w[3], vld1q_s32(c->mult + oc0),
                   vld1q_s32(c->shift + oc0));
        continue;
      }
      /* 2x2 blocks over the even rows and columns, then the odd column and the odd row one pixel at a time */
      qdw_quads_blk *q = &p->blk;
      q->pairs = OH / 2;
      const uint32_t ya = (uint32_t)(uintptr_t)yg - 8u;
      q->addr[0] = ya; q->addr[1] = ya + 4u; q->addr[2] = ya + (uint32_t)ysh; q->addr[3] = ya + (uint32_t)ysh + 4u;
      qdw4_quads(ib, ib + R, q->mq, out_off);
      if (!((OW | OH) & 1)) continue;
      w[0] = vld1q_s8(q->w0); w[1] = vld1q_s8(q->w1); w[2] = vld1q_s8(q->w2); w[3] = vld1q_s8(q->w3);
      for (int32_t i = 0; i < 4; i++) prm[i] = q->cst[i];
      const int32x4_t vm = vld1q_s32(c->mult + oc0), vs = vld1q_s32(c->shift + oc0);
      if (OW & 1) {
        prm[8] = R - 4; prm[9] = (int32_t)ysh - 4; prm[10] = 1;
        qdw4_image(ib + 4 * (OW - 1), yg + 4 * (OW - 1), OH & ~1, 4u, prm + 4, out_off, w[0], w[1], w[2], w[3], vm, vs);
      }
      if (OH & 1) {
        prm[8] = 4 * (Wp - OW); prm[9] = (int32_t)ysh - 4 * OW; prm[10] = OW;
        qdw4_image(ib + (OH - 1) * R, yg + (OH - 1) * ysh, 1, 4u, prm + 4, out_off, w[0], w[1], w[2], w[3], vm, vs);
      }
    }
  }
}

/* Depthwise on Helium with the output channels on the lanes, 16 a vector (NHWC: a pixel's channels are
 * contiguous; a last partial block predicated), any kernel up to QDL_TAPS taps, any stride and padding.
 * Two cases: one output channel per input channel (depth multiplier 1, the usual one in real networks)
 * and a single input channel with many outputs (a first layer: the input tap broadcast to the lanes).
 * Per tap, vmullb/vmullt give the 16 int8 x int8 products as two int16 vectors (even and odd channels);
 * two taps are summed in int16 (|x w| <= 128 * 127, so two fit; a block with a -128 weight sums one tap
 * at a time) and then widened onto four int32 accumulators: channels 4j, 4j+1, 4j+2, 4j+3 on lanes j.
 * The input offset is folded into the accumulators' start (bias + in_off * sum(w), per channel, once per
 * call and block); taps in the padding read -in_off (their product then cancels that term). The
 * requantisation runs on the four vectors; the narrows put the channels back in order. */
#define QDL_TAPS 64   /* bit t of a uint64_t mask: tap t inside the input */
#define QDL_COLS 256   /* output columns (their tap masks sit on the stack) */
#define QDL_PAD 8192   /* bytes of a padded block image on the stack */
typedef struct {
  int32x4_t cst[4], vm[4], vs[4];  /* per lane group j: channels c0 + 4 * lane + j */
} qdl_block;

/* the tap t input vector: 16 channels at p, or p's byte on every lane (bcast), or the pad */
__attribute__((always_inline)) static inline int8x16_t qdl_x(const int8_t *p, bool inside, bool full, bool bcast,
                                                             mve_pred16_t pc, int8x16_t vpad) {
  if (!inside) return vpad;
  if (bcast) return vdupq_n_s8(*p);
  return full ? vld1q_s8(p) : vld1q_z_s8(p, pc);
}

/* one output pixel of a block: xp = the window origin (taps at xp + toff[t]; with `check`, read only
 * where bit t of `in` is set, else the pad), wp = the block's weights of tap 0 (taps O bytes apart) */
__attribute__((always_inline)) static inline int8x16_t qdl_pixel(const qdl_block *b, const int8_t *xp,
                                                                 const ptrdiff_t *toff, uint64_t in, bool check,
                                                                 bool full, bool bcast, const int8_t *wp, ptrdiff_t O,
                                                                 int32_t T, bool pairs, mve_pred16_t pc,
                                                                 int8x16_t vpad, int16_t oo) {
  int32x4_t a0 = b->cst[0], a1 = b->cst[1], a2 = b->cst[2], a3 = b->cst[3];
  int32_t t = 0;
  if (pairs) {
    for (; t + 2 <= T; t += 2, wp += 2 * O) {
      const int8x16_t x0 = qdl_x(xp + toff[t], !check || ((in >> t) & 1u), full, bcast, pc, vpad);
      const int8x16_t w0 = full ? vld1q_s8(wp) : vld1q_z_s8(wp, pc);
      int16x8_t e = vmullbq_int_s8(x0, w0), o = vmulltq_int_s8(x0, w0);
      const int8x16_t x1 = qdl_x(xp + toff[t + 1], !check || ((in >> (t + 1)) & 1u), full, bcast, pc, vpad);
      const int8x16_t w1 = full ? vld1q_s8(wp + O) : vld1q_z_s8(wp + O, pc);
      e = vaddq_s16(e, vmullbq_int_s8(x1, w1));
      o = vaddq_s16(o, vmulltq_int_s8(x1, w1));
      a0 = vaddq_s32(a0, vmovlbq_s16(e)); a2 = vaddq_s32(a2, vmovltq_s16(e));
      a1 = vaddq_s32(a1, vmovlbq_s16(o)); a3 = vaddq_s32(a3, vmovltq_s16(o));
    }
  }
  for (; t < T; t++, wp += O) {
    const int8x16_t x0 = qdl_x(xp + toff[t], !check || ((in >> t) & 1u), full, bcast, pc, vpad);
    const int8x16_t w0 = full ? vld1q_s8(wp) : vld1q_z_s8(wp, pc);
    const int16x8_t e = vmullbq_int_s8(x0, w0), o = vmulltq_int_s8(x0, w0);
    a0 = vaddq_s32(a0, vmovlbq_s16(e)); a2 = vaddq_s32(a2, vmovltq_s16(e));
    a1 = vaddq_s32(a1, vmovlbq_s16(o)); a3 = vaddq_s32(a3, vmovltq_s16(o));
  }
  const int32x4_t r0 = cm_requant_v(a0, b->vm[0], b->vs[0]), r2 = cm_requant_v(a2, b->vm[2], b->vs[2]);
  int16x8_t e = vqmovntq_s32(vqmovnbq_s32(vdupq_n_s16(0), r0), r2);
  const int32x4_t r1 = cm_requant_v(a1, b->vm[1], b->vs[1]), r3 = cm_requant_v(a3, b->vm[3], b->vs[3]);
  int16x8_t o = vqmovntq_s32(vqmovnbq_s32(vdupq_n_s16(0), r1), r3);
  /* the output offset between two saturating narrows: the same bytes as adding it in 32 bits (|oo| <= 255) */
  e = vqaddq_n_s16(e, oo);
  o = vqaddq_n_s16(o, oo);
  return vqmovntq_s16(vqmovnbq_s16(vdupq_n_s8(0), e), o);
}

typedef struct {
  const int8_t *x;
  int8_t *y;
  const int8_t *w;
  const ptrdiff_t *toff;
  const uint64_t *colm;
  uint64_t rowm, all;
  int32_t T, OW;
  ptrdiff_t O, xstep, ystep;
  bool pairs;
  mve_pred16_t pc;
  int8x16_t vpad, vlo, vhi;
  int16_t oo;
} qdl_row;

/* one output row of a block; full / bcast: see qdl_pixel */
__attribute__((always_inline)) static inline void qdl_row_run(const qdl_block *b, const qdl_row *r, bool full,
                                                             bool bcast) {
  const int8_t *xp = r->x;
  int8_t *yp = r->y;
  for (int32_t ow = 0; ow < r->OW; ow++, xp += r->xstep, yp += r->ystep) {
    const uint64_t in = r->rowm & r->colm[ow];
    int8x16_t v;
    if (in == r->all) v = qdl_pixel(b, xp, r->toff, in, false, full, bcast, r->w, r->O, r->T, r->pairs, r->pc, r->vpad, r->oo);
    else v = qdl_pixel(b, xp, r->toff, in, true, full, bcast, r->w, r->O, r->T, r->pairs, r->pc, r->vpad, r->oo);
    v = vminq_s8(vmaxq_s8(v, r->vlo), r->vhi);
    if (full) vst1q_s8(yp, v);
    else vstrbq_p_s8(yp, v, r->pc);
  }
}
/* `rows` output rows whose windows lie wholly inside the (padded) input: no tap checks; row steps xrow / yrow */
__attribute__((always_inline)) static inline void qdl_rows_in(const qdl_block *b, const qdl_row *r, int32_t rows,
                                                             ptrdiff_t xrow, ptrdiff_t yrow, bool full, bool bcast) {
  for (int32_t oh = 0; oh < rows; oh++) {
    const int8_t *xp = r->x + oh * xrow;
    int8_t *yp = r->y + oh * yrow;
    for (int32_t ow = 0; ow < r->OW; ow++, xp += r->xstep, yp += r->ystep) {
      int8x16_t v = qdl_pixel(b, xp, r->toff, 0, false, full, bcast, r->w, r->O, r->T, r->pairs, r->pc, r->vpad, r->oo);
      v = vminq_s8(vmaxq_s8(v, r->vlo), r->vhi);
      if (full) vst1q_s8(yp, v);
      else vstrbq_p_s8(yp, v, r->pc);
    }
  }
}
CM_HOT static void qdl_in_full(const qdl_block *b, const qdl_row *r, int32_t rows, ptrdiff_t xrow, ptrdiff_t yrow) {
  qdl_rows_in(b, r, rows, xrow, yrow, true, false);
}
CM_HOT static void qdl_in_part(const qdl_block *b, const qdl_row *r, int32_t rows, ptrdiff_t xrow, ptrdiff_t yrow) {
  qdl_rows_in(b, r, rows, xrow, yrow, false, false);
}
CM_HOT static void qdl_in_bcast(const qdl_block *b, const qdl_row *r, int32_t rows, ptrdiff_t xrow, ptrdiff_t yrow) {
  qdl_rows_in(b, r, rows, xrow, yrow, true, true);
}
CM_HOT static void qdl_in_bcast_part(const qdl_block *b, const qdl_row *r, int32_t rows, ptrdiff_t xrow,
                                     ptrdiff_t yrow) {
  qdl_rows_in(b, r, rows, xrow, yrow, false, true);
}

/* The padded path's hot loop for a 16-channel block (unit column dilation: a kernel row's taps are 16
 * bytes apart in the padded image; the block's weights packed 16 bytes a tap, zero past the live
 * channels), one output row a call, in asm (GCC spills this loop): per tap the input and weight vectors,
 * vmullb/vmullt into two int16 vectors and their four widenings added onto the accumulators q0..q3
 * (channels 4j, 4j+1, 4j+2, 4j+3 on lanes j; |x w| <= 2^14, so each tap's products fit the int16 lanes),
 * then the requantisation, narrows and one 16-byte store a pixel, predicated to the live channels. */
typedef struct {
  int32x4_t cst[4], vm[4], vs[4];  /*   0, 64, 128: see qdl_block */
  int8x16_t vlo, vhi;              /* 192, 208 */
  const int8_t *x;                 /* 224: window origin of the row's first pixel */
  int8_t *y;                       /* 228 */
  const int8_t *w;                 /* 232: the block's weights, packed: 16 bytes a tap */
  int32_t O;                       /* 236: (unused) */
  int32_t KH, KW;                  /* 240, 244 */
  int32_t rowadj;                  /* 248: from a kernel row's end to the next row's start */
  int32_t xstep, ystep;            /* 252, 256 */
  int32_t npix;                    /* 260 */
  int32_t oo;                      /* 264 */
  uint32_t storep;                 /* 268: predicate of the block's live channels */
} qdl_asm_blk;
_Static_assert(offsetof(qdl_asm_blk, vlo) == 192 && offsetof(qdl_asm_blk, x) == 224 &&
               offsetof(qdl_asm_blk, npix) == 260 && offsetof(qdl_asm_blk, oo) == 264 &&
               offsetof(qdl_asm_blk, storep) == 268, "qdl_asm_row offsets");
#ifdef __OPTIMIZE__  /* r7 is the frame pointer at -O0 */
#define QDL_ASM 1
#define QDL_REQ(acc, off)                                                                               \
  "vldrw.u32 q4, [%[b], #" #off "]\n\t"                                                                 \
  "vldrw.u32 q5, [%[b], #" #off " + 64]\n\t"                                                            \
  "vshr.s32 q6, " acc ", #31\n\t"                                                                        \
  "vqrdmulh.s32 " acc ", " acc ", q4\n\t"                                                                \
  "vadd.i32 " acc ", " acc ", q6\n\t"                                                                    \
  "vrshl.s32 " acc ", " acc ", q5\n\t"
#define QDL_TAIL \
      QDL_REQ("q0", 64) \
      QDL_REQ("q1", 80) \
      QDL_REQ("q2", 96) \
      QDL_REQ("q3", 112) \
      "vqmovnb.s32 q4, q0\n\t" \
      "vqmovnt.s32 q4, q2\n\t" \
      "vqmovnb.s32 q5, q1\n\t" \
      "vqmovnt.s32 q5, q3\n\t" \
      "ldr r0, [%[b], #264]\n\t" \
      "vqadd.s16 q4, q4, r0\n\t" \
      "vqadd.s16 q5, q5, r0\n\t" \
      "vqmovnb.s16 q6, q4\n\t" \
      "vqmovnt.s16 q6, q5\n\t" \
      "vldrw.u32 q7, [%[b], #192]\n\t" \
      "vmax.s8 q6, q6, q7\n\t" \
      "vldrw.u32 q7, [%[b], #208]\n\t" \
      "vmin.s8 q6, q6, q7\n\t" \
      "ldr r0, [%[b], #268]\n\t" \
      "vmsr p0, r0\n\t" \
      "vpst\n\t" \
      "vstrbt.8 q6, [r7]\n\t" \
      "ldrd r0, r1, [%[b], #252]\n\t" \
      "add r6, r6, r0\n\t" \
      "add r7, r7, r1\n\t" \
      "subs r5, r5, #1\n\t"
__attribute__((noinline)) static void qdl_asm_row(qdl_asm_blk *blk) {
  __asm__ volatile(
      "ldr r5, [%[b], #260]\n\t"
      "ldr r6, [%[b], #224]\n\t"
      "ldr r7, [%[b], #228]\n"
      "1:\n\t"
      "vldrw.u32 q0, [%[b]]\n\t"
      "vldrw.u32 q1, [%[b], #16]\n\t"
      "vldrw.u32 q2, [%[b], #32]\n\t"
      "vldrw.u32 q3, [%[b], #48]\n\t"
      "mov r1, r6\n\t"
      "ldrd r2, r3, [%[b], #232]\n\t"
      "ldr r4, [%[b], #240]\n"
      "2:\n\t"
      "ldr lr, [%[b], #244]\n\t"
      "dls lr, lr\n"
      "3:\n\t"
      "vldrb.u8 q4, [r1], #16\n\t"
      "vldrb.u8 q5, [r2], #16\n\t"
      "vmullb.s8 q6, q4, q5\n\t"
      "vmullt.s8 q7, q4, q5\n\t"
      "vmovlb.s16 q4, q6\n\t"
      "vadd.i32 q0, q0, q4\n\t"
      "vmovlt.s16 q4, q6\n\t"
      "vadd.i32 q2, q2, q4\n\t"
      "vmovlb.s16 q4, q7\n\t"
      "vadd.i32 q1, q1, q4\n\t"
      "vmovlt.s16 q4, q7\n\t"
      "vadd.i32 q3, q3, q4\n\t"
      "le lr, 3b\n\t"
      "ldr r0, [%[b], #248]\n\t"
      "add r1, r1, r0\n\t"
      "subs r4, r4, #1\n\t"
      "bne 2b\n\t"
      QDL_TAIL
      "bne 1b"
      :
      : [b] "r"(blk)
      : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7",
        "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15", "memory", "cc");
}
/* 3x3, unit dilation, no channel with weight -128 in both taps of a pair (then a pair of products lies in
 * [-32512, 32640] and adds in the int16 lanes: only (-128 x -128) exceeds 16256):
 * the taps unrolled in pairs, one widening onto the int32 accumulators per pair instead of per tap
 * (19 instructions a pair for 16 channels, the ninth tap alone: 88 a pixel instead of 117 plus loops).
 * O (236) holds the padded row stride. */
#define QDL_PAIR(xa, wa, xb, wb)                                                                        \
  "vldrw.u32 q4, [" xa "]\n\t"                                                                            \
  "vldrw.u32 q5, [" wa "]\n\t"                                                                            \
  "vmullb.s8 q6, q4, q5\n\t"                                                                              \
  "vmullt.s8 q7, q4, q5\n\t"                                                                              \
  "vldrw.u32 q4, [" xb "]\n\t"                                                                            \
  "vldrw.u32 q5, [" wb "]\n\t"                                                                            \
  "vmullb.s8 q5, q4, q5\n\t"                                                                              \
  "vadd.i16 q6, q6, q5\n\t"                                                                               \
  "vldrw.u32 q5, [" wb "]\n\t"                                                                            \
  "vmullt.s8 q4, q4, q5\n\t"                                                                              \
  "vadd.i16 q7, q7, q4\n\t"                                                                               \
  "vmovlb.s16 q4, q6\n\t"                                                                                 \
  "vadd.i32 q0, q0, q4\n\t"                                                                               \
  "vmovlt.s16 q4, q6\n\t"                                                                                 \
  "vadd.i32 q2, q2, q4\n\t"                                                                               \
  "vmovlb.s16 q4, q7\n\t"                                                                                 \
  "vadd.i32 q1, q1, q4\n\t"                                                                               \
  "vmovlt.s16 q4, q7\n\t"                                                                                 \
  "vadd.i32 q3, q3, q4\n\t"
__attribute__((noinline)) static void qdl_asm_row3(qdl_asm_blk *blk) {
  __asm__ volatile(
      "ldr r5, [%[b], #260]\n\t"
      "ldr r6, [%[b], #224]\n\t"
      "ldr r7, [%[b], #228]\n\t"
      "ldr r3, [%[b], #236]\n\t"
      "ldr r2, [%[b], #232]\n"
      "1:\n\t"
      "vldrw.u32 q0, [%[b]]\n\t"
      "vldrw.u32 q1, [%[b], #16]\n\t"
      "vldrw.u32 q2, [%[b], #32]\n\t"
      "vldrw.u32 q3, [%[b], #48]\n\t"
      "add r4, r6, r3\n\t"
      "add r0, r4, r3\n\t"
      QDL_PAIR("r6", "r2", "r6, #16", "r2, #16")
      QDL_PAIR("r6, #32", "r2, #32", "r4", "r2, #48")
      QDL_PAIR("r4, #16", "r2, #64", "r4, #32", "r2, #80")
      QDL_PAIR("r0", "r2, #96", "r0, #16", "r2, #112")
      "vldrw.u32 q4, [r0, #32]\n\t"
      "vldrw.u32 q5, [r2, #128]\n\t"
      "vmullb.s8 q6, q4, q5\n\t"
      "vmullt.s8 q7, q4, q5\n\t"
      "vmovlb.s16 q4, q6\n\t"
      "vadd.i32 q0, q0, q4\n\t"
      "vmovlt.s16 q4, q6\n\t"
      "vadd.i32 q2, q2, q4\n\t"
      "vmovlb.s16 q4, q7\n\t"
      "vadd.i32 q1, q1, q4\n\t"
      "vmovlt.s16 q4, q7\n\t"
      "vadd.i32 q3, q3, q4\n\t"
      QDL_TAIL
      "bne 1b"
      :
      : [b] "r"(blk)
      : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7",
        "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15", "memory", "cc");
}
#undef QDL_PAIR
#undef QDL_TAIL
#undef QDL_REQ
#else
#define QDL_ASM 0
static void qdl_asm_row(qdl_asm_blk *blk) { (void)blk; }
static void qdl_asm_row3(qdl_asm_blk *blk) { (void)blk; }
#endif

/* The block's input with its padding (-in_off) in a stack buffer, so that every window lies inside:
 * padded rows r0 .. r0+Hp-1, Wp pixels of es bytes (16 channels, or the one input channel when broadcasting) */
static void qdl_pad_image(const qconv *c, const int8_t *xn, int8_t *buf, int32_t r0, int32_t Hp, int32_t Wp,
                          bool bcast, mve_pred16_t pc, int8x16_t vpad) {
  /* locals: the int8 stores below may alias *c */
  const int32_t ph = c->ph, pw = c->pw, H = c->x.h, W = c->x.w;
  const ptrdiff_t xsh = c->x.sh, xsw = c->x.sw;
  const int8_t pad = (int8_t)-c->in_off;
  /* padded columns [pw, pw + cols) hold input columns [0, cols) */
  const int32_t cols = W < Wp - pw ? W : Wp - pw;
  for (int32_t i = 0; i < Hp; i++) {
    const int32_t ih = r0 + i - ph;
    const int8_t *xr = xn + (ptrdiff_t)ih * xsh;
    if (bcast) {
      for (int32_t j = 0; j < Wp; j++) *buf++ = ih >= 0 && ih < H && j >= pw && j < pw + cols ? xr[(ptrdiff_t)(j - pw) * xsw] : pad;
      continue;
    }
    if (ih < 0 || ih >= H || cols <= 0) {
      for (int32_t j = 0; j < Wp; j++, buf += 16) vst1q_s8(buf, vpad);
      continue;
    }
    int32_t j = 0;
    for (; j < pw && j < Wp; j++, buf += 16) vst1q_s8(buf, vpad);
    for (const int8_t *s = xr; j < pw + cols; j++, buf += 16, s += xsw) vst1q_s8(buf, vld1q_z_s8(s, pc));
    for (; j < Wp; j++, buf += 16) vst1q_s8(buf, vpad);
  }
}

CM_HOT static void qdl_row_full(const qdl_block *b, const qdl_row *r) { qdl_row_run(b, r, true, false); }
CM_HOT static void qdl_row_part(const qdl_block *b, const qdl_row *r) { qdl_row_run(b, r, false, false); }
CM_HOT static void qdl_row_bcast(const qdl_block *b, const qdl_row *r) { qdl_row_run(b, r, true, true); }
CM_HOT static void qdl_row_bcast_part(const qdl_block *b, const qdl_row *r) { qdl_row_run(b, r, false, true); }

/* false: not this path (nothing written) */
static bool qdw_lanes(const qconv *c, const int8_t *x, int8_t *y) {
  const int32_t KH = c->KH, KW = c->KW, T = KH * KW, C = c->x.c, O = c->y.c, OH = c->y.h, OW = c->y.w;
  const bool bcast = C == 1;
  if (!c->depthwise || (!bcast && c->opg != 1) || T > QDL_TAPS || T < 1 || OW > QDL_COLS || (!bcast && c->x.sc != 1) ||
      c->y.sc != 1 || c->in_off < -127 || c->in_off > 128 || c->out_off < -255 || c->out_off > 255 ||
      c->amin < -128 || c->amax > 127 || c->amin > c->amax)
    return false;
  for (int32_t oc = 0; oc < O; oc++)
    if (!cm_vec_requant_ok(c->mult[oc], c->shift[oc])) return false;
  ptrdiff_t toff[QDL_TAPS];
  uint64_t colbits[QDL_TAPS] = {0}, rowbits[QDL_TAPS] = {0};  /* taps of kernel column kw / row kh */
  for (int32_t kh = 0; kh < KH; kh++)
    for (int32_t kw = 0; kw < KW; kw++) {
      toff[kh * KW + kw] = (ptrdiff_t)kh * c->dh * c->x.sh + (ptrdiff_t)kw * c->dw * c->x.sw;
      colbits[kw] |= (uint64_t)1 << (kh * KW + kw);
      rowbits[kh] |= (uint64_t)1 << (kh * KW + kw);
    }
  uint64_t colm[QDL_COLS];  /* taps inside the input, per output column */
  for (int32_t ow = 0; ow < OW; ow++) {
    uint64_t m = 0;
    for (int32_t kw = 0, iw = ow * c->sw - c->pw; kw < KW; kw++, iw += c->dw)
      if (iw >= 0 && iw < c->x.w) m |= colbits[kw];
    colm[ow] = m;
  }
  /* small images: padded into a stack buffer once per block, then no tap checks (their borders are a large share) */
  const int32_t es = bcast ? 1 : 16;
  const int32_t Hp = (OH - 1) * c->sh + (KH - 1) * c->dh + 1, Wp = (OW - 1) * c->sw + (KW - 1) * c->dw + 1;
  const bool padded = (int64_t)Hp * Wp * es <= QDL_PAD;
  /* too large: a band of the rows one output row reads (asm blocks only: see the loop) */
  const int32_t Hb = (KH - 1) * c->dh + 1;
  const bool band_fits = !padded && !bcast && QDL_ASM && c->dw == 1 && (int64_t)Hb * Wp * 16 <= QDL_PAD;
  int8_t pbuf[QDL_PAD] __attribute__((aligned(16)));
  ptrdiff_t ptoff[QDL_TAPS];
  for (int32_t kh = 0; padded && kh < KH; kh++)
    for (int32_t kw = 0; kw < KW; kw++) ptoff[kh * KW + kw] = ((ptrdiff_t)kh * c->dh * Wp + (ptrdiff_t)kw * c->dw) * es;
  qdl_row r;
  r.toff = toff; r.colm = colm; r.T = T; r.OW = OW; r.O = O;
  r.all = T == 64 ? ~(uint64_t)0 : ((uint64_t)1 << T) - 1u;
  r.xstep = (ptrdiff_t)c->sw * c->x.sw; r.ystep = c->y.sw;
  r.vpad = vdupq_n_s8((int8_t)-c->in_off);
  r.vlo = vdupq_n_s8((int8_t)c->amin); r.vhi = vdupq_n_s8((int8_t)c->amax);
  r.oo = (int16_t)c->out_off;
  const int8_t *wts = c->w;
  const int32_t *bia = c->bias, *mul = c->mult, *shf = c->shift, in_off = c->in_off;
  for (int32_t c0 = 0; c0 < O; c0 += 16) {
    const int32_t live = O - c0 < 16 ? O - c0 : 16;
    const bool band = band_fits;
    r.pc = vctp8q((uint32_t)live);
    /* the block's constants, lane j of group g = channel c0 + 4 j + g (absent channels: 0, a valid requant):
     * the weight sums in int16 (at most 64 taps of |w| <= 128), widened into the four groups like the
     * accumulators; bias, multipliers and shifts gathered in that order */
    qdl_block b;
    int16x8_t se = vdupq_n_s16(0), so = vdupq_n_s16(0);
    int32_t wmin = 127;
    bool pair128 = false;  /* a channel with weight -128 in both taps of a pair (0,1), (2,3), (4,5), (6,7) */
    int8x16_t wprev = vdupq_n_s8(0);
    for (int32_t t = 0; t < T; t++) {
      const int8x16_t wv = vld1q_z_s8(wts + (ptrdiff_t)t * O + c0, r.pc);
      se = vaddq_s16(se, vmovlbq_s8(wv));
      so = vaddq_s16(so, vmovltq_s8(wv));
      wmin = vminvq_s8((int8_t)wmin, wv);
      /* the rounding halving sum is -128 only for -128 twice */
      if ((t & 1) && t < 8 && vminvq_s8(127, vrhaddq_s8(wprev, wv)) == -128) pair128 = true;
      wprev = wv;
    }
    r.pairs = wmin != -128;
    /* 3x3 unit-dilation blocks: the unrolled pair row (asm paths only). A pair's int16 sum overflows only
     * at (-128 x -128) twice (no other product exceeds 16256): no channel may hold -128 in both taps of a pair */
    const bool tap3 = KH == 3 && KW == 3 && c->dh == 1 && c->dw == 1 && !pair128;
    const int32x4_t ws[4] = {vmovlbq_s16(se), vmovlbq_s16(so), vmovltq_s16(se), vmovltq_s16(so)};
    const uint32x4_t four = vmulq_n_u32(vidupq_n_u32(0, 1), 4);  /* 0, 4, 8, 12 */
    for (int32_t g = 0; g < 4; g++) {
      const uint32x4_t off = vaddq_n_u32(four, (uint32_t)g);
      const mve_pred16_t pg = vcmpgtq_s32(vdupq_n_s32(live - g), vreinterpretq_s32_u32(four));  /* 4 j + g < live */
      const int32x4_t bias = bia ? vldrwq_gather_shifted_offset_z_s32(bia + c0, off, pg) : vdupq_n_s32(0);
      b.cst[g] = vpselq_s32(vaddq_s32(bias, vmulq_n_s32(ws[g], in_off)), vdupq_n_s32(0), pg);
      b.vm[g] = vpselq_s32(vldrwq_gather_shifted_offset_z_s32(mul + c0, off, pg), vdupq_n_s32(1), pg);
      b.vs[g] = vpselq_s32(vldrwq_gather_shifted_offset_z_s32(shf + c0, off, pg), vdupq_n_s32(-1), pg);
    }
    r.w = c->w + c0;
    if (padded) {
      for (int32_t n = 0; n < c->y.n; n++) {
        qdl_pad_image(c, x + n * c->x.sn + (bcast ? 0 : c0), pbuf, 0, Hp, Wp, bcast, r.pc, r.vpad);
        qdl_row rp = r;
        rp.toff = ptoff;
        rp.x = pbuf;
        rp.xstep = (ptrdiff_t)c->sw * es;
        rp.y = y + n * c->y.sn + c0;
        const ptrdiff_t xrow = (ptrdiff_t)c->sh * Wp * es;
        if (QDL_ASM && !bcast && c->dw == 1) {
          int8_t wpk[QDL_TAPS * 16] __attribute__((aligned(16)));
          for (int32_t tp = 0; tp < T; tp++) vst1q_s8(wpk + 16 * tp, vld1q_z_s8(r.w + (ptrdiff_t)tp * O, r.pc));
          qdl_asm_blk ab;
          for (int32_t g = 0; g < 4; g++) { ab.cst[g] = b.cst[g]; ab.vm[g] = b.vm[g]; ab.vs[g] = b.vs[g]; }
          ab.vlo = r.vlo; ab.vhi = r.vhi; ab.w = wpk; ab.O = O; ab.KH = KH; ab.KW = KW;
          ab.rowadj = (int32_t)(((ptrdiff_t)c->dh * Wp - KW) * 16);
          if (tap3) ab.O = Wp * 16;
          ab.xstep = (int32_t)rp.xstep; ab.ystep = (int32_t)c->y.sw; ab.npix = OW; ab.oo = c->out_off; ab.storep = r.pc;
          for (int32_t oh = 0; oh < OH; oh++) {
            ab.x = pbuf + oh * xrow;
            ab.y = rp.y + (ptrdiff_t)oh * c->y.sh;
            (tap3 ? qdl_asm_row3 : qdl_asm_row)(&ab);
          }
          continue;
        }
        if (bcast) (live == 16 ? qdl_in_bcast : qdl_in_bcast_part)(&b, &rp, OH, xrow, c->y.sh);
        else (live == 16 ? qdl_in_full : qdl_in_part)(&b, &rp, OH, xrow, c->y.sh);
      }
      continue;
    }
    if (band) {  /* large images, whole blocks: the rows one output row reads, padded, then the asm row */
      int8_t wpk[QDL_TAPS * 16] __attribute__((aligned(16)));
      for (int32_t tp = 0; tp < T; tp++) vst1q_s8(wpk + 16 * tp, vld1q_z_s8(r.w + (ptrdiff_t)tp * O, r.pc));
      qdl_asm_blk ab;
      for (int32_t g = 0; g < 4; g++) { ab.cst[g] = b.cst[g]; ab.vm[g] = b.vm[g]; ab.vs[g] = b.vs[g]; }
      ab.vlo = r.vlo; ab.vhi = r.vhi; ab.w = wpk; ab.O = O; ab.KH = KH; ab.KW = KW;
      ab.rowadj = (int32_t)(((ptrdiff_t)c->dh * Wp - KW) * 16);
      if (tap3) ab.O = Wp * 16;
      ab.xstep = (int32_t)c->sw * 16; ab.ystep = (int32_t)c->y.sw; ab.npix = OW; ab.oo = c->out_off; ab.storep = r.pc;
      ab.x = pbuf;
      for (int32_t n = 0; n < c->y.n; n++)
        for (int32_t oh = 0; oh < OH; oh++) {
          qdl_pad_image(c, x + n * c->x.sn + c0, pbuf, oh * c->sh, Hb, Wp, false, r.pc, r.vpad);
          ab.y = y + n * c->y.sn + (ptrdiff_t)oh * c->y.sh + c0;
          (tap3 ? qdl_asm_row3 : qdl_asm_row)(&ab);
        }
      continue;
    }
    for (int32_t n = 0; n < c->y.n; n++)
      for (int32_t oh = 0; oh < OH; oh++) {
        const int32_t ih0 = oh * c->sh - c->ph;
        r.rowm = 0;
        for (int32_t kh = 0, ih = ih0; kh < KH; kh++, ih += c->dh)
          if (ih >= 0 && ih < c->x.h) r.rowm |= rowbits[kh];
        /* the window origin may lie outside the tensor: only taps inside are read */
        r.x = x + n * c->x.sn + (ptrdiff_t)ih0 * c->x.sh - (ptrdiff_t)c->pw * c->x.sw + (bcast ? 0 : c0);
        r.y = y + n * c->y.sn + (ptrdiff_t)oh * c->y.sh + c0;
        if (bcast) (live == 16 ? qdl_row_bcast : qdl_row_bcast_part)(&b, &r);
        else (live == 16 ? qdl_row_full : qdl_row_part)(&b, &r);
      }
  }
  return true;
}

/* Depthwise on Helium, for groups of four output channels that read one input channel (depth
 * multiplier a multiple of 4), up to 16 taps, NHWC-contiguous output channels: per output pixel, one
 * byte gather of the window (tap offsets in a vector), a vmladav per channel against weight vectors
 * kept in registers, the four requantised together. The input offset is folded in as
 * in_off * sum(w) per channel; taps in the padding read as -in_off (their term then cancels).
 * Returns false (nothing written) when the call is outside that case. */
CM_HOT static bool qdw_mve(const qconv *c, const int8_t *x, int8_t *y) {
  const int32_t KH = c->KH, KW = c->KW, T = KH * KW, O = c->y.c, OW = c->y.w;
  if (!c->depthwise || c->opg % 4 || T > 16 || T < 1 || c->y.sc != 1 || c->x.sh <= 0 || c->x.sw <= 0 || OW > 256)
    return false;
  if (c->in_off < -127 || c->in_off > 128) return false;  /* -in_off must be an int8 */
  uint8_t offs[16] = {0};
  for (int32_t kh = 0; kh < KH; kh++)
    for (int32_t kw = 0; kw < KW; kw++) {
      int64_t off = (int64_t)kh * c->dh * c->x.sh + (int64_t)kw * c->dw * c->x.sw;
      if (off > 255) return false;
      offs[kh * KW + kw] = (uint8_t)off;
    }
  for (int32_t oc = 0; oc < O; oc++)
    if (!cm_vec_requant_ok(c->mult[oc], c->shift[oc])) return false;
  /* taps inside the input, per output column (bit t = tap t, as the byte-lane predicate) */
  uint32_t colbits[16] = {0}, rowbits = (1u << KW) - 1u;  /* taps of kernel column kw / of kernel row 0 */
  for (int32_t kw = 0; kw < KW; kw++)
    for (int32_t kh = 0; kh < KH; kh++) colbits[kw] |= 1u << (kh * KW + kw);
  uint16_t colm[256];
  for (int32_t ow = 0; ow < OW; ow++) {
    uint32_t m = 0;
    for (int32_t kw = 0, iw = ow * c->sw - c->pw; kw < KW; kw++, iw += c->dw)
      if (iw >= 0 && iw < c->x.w) m |= colbits[kw];
    colm[ow] = (uint16_t)m;
  }
  const uint16_t full = (uint16_t)((1u << T) - 1u);
  const uint8x16_t voff = vld1q_u8(offs);
  const int8x16_t vpad = vdupq_n_s8((int8_t)-c->in_off);
  const int32_t amin = c->amin, amax = c->amax, out_off = c->out_off;
  const bool sat8 = amin == -128 && amax == 127;
  const uintptr_t xstep = (uintptr_t)((ptrdiff_t)c->sw * c->x.sw);
  const ptrdiff_t ystep = c->y.sw;
  for (int32_t oc0 = 0; oc0 < O; oc0 += 4) {
    const int32_t ic = oc0 / c->opg;
    int8_t wt[4][16] = {{0}};
    int32_t cst[4], mu[4], sh[4];
    for (int32_t i = 0; i < 4; i++) {
      uint32_t sw = 0;
      for (int32_t t = 0; t < T; t++) {
        wt[i][t] = c->w[(ptrdiff_t)t * O + oc0 + i];
        sw += (uint32_t)(int32_t)wt[i][t];
      }
      cst[i] = (int32_t)((c->bias ? (uint32_t)c->bias[oc0 + i] : 0u) + (uint32_t)c->in_off * sw);
      mu[i] = c->mult[oc0 + i];
      sh[i] = c->shift[oc0 + i];
    }
    const int8x16_t w0 = vld1q_s8(wt[0]), w1 = vld1q_s8(wt[1]), w2 = vld1q_s8(wt[2]), w3 = vld1q_s8(wt[3]);
    const int32x4_t vc = vld1q_s32(cst), vm = vld1q_s32(mu), vs = vld1q_s32(sh);
    for (int32_t n = 0; n < c->y.n; n++)
      for (int32_t oh = 0; oh < c->y.h; oh++) {
        const int32_t ih0 = oh * c->sh - c->ph;
        uint32_t rowm = 0;
        for (int32_t kh = 0, ih = ih0; kh < KH; kh++, ih += c->dh)
          if (ih >= 0 && ih < c->x.h) rowm |= rowbits << (kh * KW);
        /* window origin of column 0; it may lie before the tensor (padding): only taps inside are read */
        uintptr_t xb = (uintptr_t)(x + n * c->x.sn + ic * c->x.sc) +
                       (uintptr_t)((ptrdiff_t)ih0 * c->x.sh - (ptrdiff_t)c->pw * c->x.sw);
        int8_t *yo = y + n * c->y.sn + oh * c->y.sh + oc0;
        for (int32_t ow = 0; ow < OW; ow++, xb += xstep, yo += ystep) {
          const uint16_t m = (uint16_t)(rowm & colm[ow]);
          int8x16_t win;
          if (m == full) {
            win = vldrbq_gather_offset_s8((const int8_t *)xb, voff);
          } else {
            win = vldrbq_gather_offset_z_s8((const int8_t *)xb, voff, m);
            win = vpselq_s8(win, vpad, m);
          }
          int32x4_t acc = vdupq_n_s32(vmladavq_s8(win, w0));
          acc = vsetq_lane_s32(vmladavq_s8(win, w1), acc, 1);
          acc = vsetq_lane_s32(vmladavq_s8(win, w2), acc, 2);
          acc = vsetq_lane_s32(vmladavq_s8(win, w3), acc, 3);
          int32x4_t r = vqaddq_n_s32(cm_requant_v(vaddq_s32(acc, vc), vm, vs), out_off);
          if (sat8) {
            /* the int8 clamp as two saturating narrows: the low byte of each lane is what is stored */
            r = vreinterpretq_s32_s8(vqmovnbq_s16(vreinterpretq_s8_s32(r),
                                                  vqmovnbq_s32(vreinterpretq_s16_s32(r), r)));
          } else {
            r = vminq_s32(vmaxq_s32(r, vdupq_n_s32(amin)), vdupq_n_s32(amax));
          }
          vstrbq_s32(yo, r);
        }
      }
  }
  return true;
}
#endif

/* The portable depthwise, on its own: everything in locals (an int8 store may alias *c, so fields
 * would be reloaded per output), the tap ranges clipped once per pixel instead of tested per tap. */
__attribute__((noinline)) static void qdw_portable(const qconv *c, const int8_t *x, int8_t *y) {
  const int32_t O = c->y.c, KH = c->KH, KW = c->KW, dh = c->dh, dw = c->dw, H = c->x.h, W = c->x.w;
  const int32_t xsh = c->x.sh, xsw = c->x.sw, xsc = c->x.sc, in_off = c->in_off, opg = c->opg;
  const int32_t out_off = c->out_off, amin = c->amin, amax = c->amax, ysc = c->y.sc;
  const int32_t *mult = c->mult, *shift = c->shift, *bias = c->bias;
  const int8_t *wt = c->w;
  for (int32_t n = 0; n < c->y.n; n++)
    for (int32_t oh = 0; oh < c->y.h; oh++) {
      const int32_t ih0 = oh * c->sh - c->ph;
      int32_t kh0, kh1;  /* taps kh in [kh0, kh1) fall inside the input rows */
      tap_range(ih0, KH, dh, H, &kh0, &kh1);
      for (int32_t ow = 0; ow < c->y.w; ow++) {
        const int32_t iw0 = ow * c->sw - c->pw;
        int32_t kw0, kw1;
        tap_range(iw0, KW, dw, W, &kw0, &kw1);
        const int8_t *xp = x + n * c->x.sn;  /* the window origin may lie outside: offsets below stay inside */
        int8_t *yp = y + n * c->y.sn + oh * c->y.sh + ow * c->y.sw;
        for (int32_t oc = 0; oc < O; oc++) {
          /* Wraps like the hardware's 32-bit accumulator; a corrupted bias cannot make it UB. */
          uint32_t acc = bias ? (uint32_t)bias[oc] : 0u;
          const int8_t *xc = xp + (oc / opg) * xsc;
          for (int32_t kh = kh0; kh < kh1; kh++) {
            const int8_t *xr = xc + (ptrdiff_t)(ih0 + kh * dh) * xsh, *wr = wt + (ptrdiff_t)kh * KW * O + oc;
            for (int32_t kw = kw0; kw < kw1; kw++)
              acc += (uint32_t)(((int32_t)xr[(ptrdiff_t)(iw0 + kw * dw) * xsw] + in_off) *
                                (int32_t)wr[(ptrdiff_t)kw * O]);
          }
          int32_t r = add_sat_i32(cm_requant((int32_t)acc, mult[oc], shift[oc]), out_off);
          yp[oc * ysc] = (int8_t)clamp_i32(r, amin, amax);
        }
      }
    }
}

#ifdef CM_MVE
/* One input channel and many outputs (a first layer) is a dense convolution whose OHWI weights are the
 * depthwise 1HWO ones transposed: here into a stack buffer for the call, then the GEMM (cm_gemm.h). */
#define QDW_TW 4096
static bool qdw_as_conv(const qconv *c, const int8_t *x, int8_t *y) {
  const int32_t T = c->KH * c->KW, O = c->y.c;
  if (c->x.c != 1 || (int64_t)T * O > QDW_TW) return false;
  int8_t wt[QDW_TW] __attribute__((aligned(16)));
  for (int32_t o = 0; o < O; o++)
    for (int32_t t = 0; t < T; t++) wt[o * T + t] = c->w[(ptrdiff_t)t * O + o];
  qconv d = *c;
  d.w = wt; d.depthwise = false; d.cpg = 1; d.opg = O;
  return qconv_mve(&d, x, y);
}
#endif

/* the depthwise without the plane path */
static void qdw_run(const qconv *c, const int8_t *x, int8_t *y) {
#ifdef CM_MVE
  if (qdw_as_conv(c, x, y) || qdw_lanes(c, x, y) || qdw_mve(c, x, y)) return;
#elif defined(CM_DSP)
  if (cm_dsp_dw(c, x, y)) return;
#endif
  qdw_portable(c, x, y);
}

/* What a depthwise call keeps between executions (ET_STATE; filled at method load): the checked
 * arguments and the plane path's plan (see cm_call). */
typedef struct {
  cm_call call;
  int32_t plane;   /* qdw_plane_exec with p */
  qconv c;
#ifdef CM_MVE
  qdw_plan p;
#endif
} qconv_state;
#define QCONV_STATE 704
_Static_assert(sizeof(qconv_state) <= QCONV_STATE, "raise QCONV_STATE and the ET_STATE sizes below");

static void qdw_exec(const qconv *c, const int8_t *x, int8_t *y) {
#ifdef CM_MVE
  qdw_plan p;
  if (qdw_plane_prep(c, y, &p)) { qdw_plane_exec(c, &p, x, y); return; }
#endif
  qdw_run(c, x, y);
}

static et_status qdw_op(et_kctx *ctx, et_value *const *args, uint32_t nargs, bool nhwc) {
  ET_CHECK_ARGS(15);
  qconv_state *ks = (qconv_state *)ctx->state;
  if (ks && cm_call_same(&ks->call, args[0], args[14])) {
    if (ctx->prepare) return ET_OK;
    const int8_t *x = (const int8_t *)ks->call.x->data;
    int8_t *y = (int8_t *)ks->call.y->data;
#ifdef CM_MVE
    if (ks->plane) { qdw_plane_exec(&ks->c, &ks->p, x, y); return ET_OK; }
#endif
    qdw_run(&ks->c, x, y);
    return ET_OK;
  }
  qconv c;
  et_tensor *in, *out;
  bool constant;
  et_status st = qconv_args(ctx, args, true, nhwc, &c, &in, &out, &constant);
  if (st) return st;
  if (ks) {
    ks->c = c;
#ifdef CM_MVE
    ks->plane = qdw_plane_prep(&ks->c, (const int8_t *)out->data, &ks->p);
#endif
    cm_call_set(&ks->call, in, out, constant);
    if (ctx->prepare) return ET_OK;
#ifdef CM_MVE
    if (ks->plane) { qdw_plane_exec(&ks->c, &ks->p, (const int8_t *)in->data, (int8_t *)out->data); return ET_OK; }
#endif
    qdw_run(&ks->c, (const int8_t *)in->data, (int8_t *)out->data);
    return ET_OK;
  }
  if (ctx->prepare) return ET_OK;
  qdw_exec(&c, (const int8_t *)in->data, (int8_t *)out->data);
  return ET_OK;
}

/* quantized_depthwise_conv2d.out(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding,
 *   int[] dilation, int depth_multiplier, int input_offset, int output_offset, Tensor requantize_multipliers,
 *   Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch, *, Tensor(a!) out) */
ET_STATE("cortex_m::quantized_depthwise_conv2d.out", 704);
ET_STATE("cortex_m::quantized_depthwise_conv2d_nhwc.out", 704);
ET_OP("cortex_m::quantized_depthwise_conv2d.out", k_cm_quantized_depthwise_conv2d_out) {
  return qdw_op(ctx, args, nargs, false);
}
ET_OP("cortex_m::quantized_depthwise_conv2d_nhwc.out", k_cm_quantized_depthwise_conv2d_nhwc_out) {
  return qdw_op(ctx, args, nargs, true);
}
