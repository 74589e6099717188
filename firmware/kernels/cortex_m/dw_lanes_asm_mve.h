/* Private to depthwise.c (one translation unit): the channels-on-lanes path's asm row loops (dw_lanes_mve.h). */
#ifndef ET_CM_DW_LANES_ASM_MVE_H
#define ET_CM_DW_LANES_ASM_MVE_H

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
/* the int16 products in q6 (even lanes) and q7 (odd lanes) widened onto the int32 accumulators q0-q3 */
#define QDL_WIDEN \
  "vmovlb.s16 q4, q6\n\t" \
  "vadd.i32 q0, q0, q4\n\t" \
  "vmovlt.s16 q4, q6\n\t" \
  "vadd.i32 q2, q2, q4\n\t" \
  "vmovlb.s16 q4, q7\n\t" \
  "vadd.i32 q1, q1, q4\n\t" \
  "vmovlt.s16 q4, q7\n\t" \
  "vadd.i32 q3, q3, q4\n\t"
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
      QDL_WIDEN
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
  QDL_WIDEN
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
      QDL_WIDEN
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

#endif
