/* Private to depthwise.c (one translation unit): the Helium 4-channel plane path (padded plane, row-interleaved windows, one asm loop per image). */
#ifndef ET_CM_DW_PLANE_MVE_H
#define ET_CM_DW_PLANE_MVE_H

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

/* Planned scratch of the plane path at c->scr (ET_SCRATCH; kernel_scratch.py mirrors it): the plane
 * (Hn x Wp, 16-aligned) then the interleaved rows (OH x 4 Wp + 16), when qdw_plane_prep's shapes fit. */
static uint32_t qdw_plane_scratch(const qconv *c) {
  const int32_t KH = c->KH, KW = c->KW, O = c->y.c, OH = c->y.h, OW = c->y.w;
  if (!c->depthwise || c->opg % 4 || KH > 4 || KW > 4 || c->sw != 1 || c->dw != 1 || c->y.sc != 1 ||
      c->amin != -128 || c->amax != 127 || c->in_off < -127 || c->in_off > 128 || c->out_off < -255 ||
      c->out_off > 255 || OH <= 0 || OW <= 0 || O > 255 / 15)
    return 0;
  const int64_t Hn = (int64_t)(OH - 1) * c->sh + (int64_t)(KH - 1) * c->dh + 1, Wp = (OW + KW - 1 + 15) & ~15;
  if (Hn * Wp > QDW_PLANE || (int64_t)OH * 4 * Wp + 16 > QDW_IB || Wp > 16 * QDW_NCH) return 0;
  return (uint32_t)(((Hn * Wp + 15) & ~15) + (int64_t)OH * 4 * Wp + 16);
}

CM_HOT static void qdw_plane_exec(const qconv *c, qdw_plan *p, const int8_t *x, int8_t *y) {
  const int32_t O = c->y.c, OH = c->y.h, OW = c->y.w, Wp = p->Wp, Hn = p->Hn, nch = p->nch, R = p->R;
  const int32_t top = p->top, bot = p->bot, cols = p->cols, ph = c->ph, pw = c->pw;
  int8_t *const plane = c->scr, *const ib = c->scr + ((Hn * Wp + 15) & ~15);   /* qdw_plane_scratch(c) bytes */
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

#endif
