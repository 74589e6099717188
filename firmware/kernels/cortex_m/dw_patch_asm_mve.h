/* Private to depthwise.c (one translation unit), included by dw_patch_mve.h: the patch path's pass loops (asm). */
#ifndef ET_CM_DW_PATCH_ASM_MVE_H
#define ET_CM_DW_PATCH_ASM_MVE_H

typedef struct {
  const int8_t *rec;  /*  0: the next channel's record (see QDP_RUNS) */
  int32_t unused[2];  /*  4 */
  int32_t nch;        /* 12: channels left */
  int8_t *y;          /* 16: the group's first output byte of the band and chunk */
  int32_t k1, k2, amin; /* 20: clamp: 127 - amax, k1 + amin + 128 (bytes), amin */
  int32_t oo;         /* 32: output offset (+128 with a clamp) */
} qdp_blk;
_Static_assert(offsetof(qdp_blk, y) == 16 && offsetof(qdp_blk, amin) == 28 && offsetof(qdp_blk, oo) == 32,
               "qdp asm offsets");

#ifdef __OPTIMIZE__  /* r7 is the frame pointer at -O0 */
#define QDP_ASM 1
/* registers: q0-q3 weights, q4 G, q5 the patch, q6 q7 the sums; r0 r2 sums, r1 r3 pointers, r4 the table,
 * r5 mult, r6 shift, r7 constant, r8 output offset (+128 with a clamp), r9 output, r10-r12 clamp, [sp] blk */
#define QDP_G(p) "vldrb.u8 q5, [" p ", q4]\n\t"
#define QDP_PTRS "ldrd r1, r3, [r4], #8\n\t"
/* 3x3 stride 1: a 2x2 block into X (lanes 0 2 = top row, 1 3 = bottom row) */
#define QDP_B33(p, X)                                                                                   \
  QDP_G(p)                                                                                              \
  "vmladav.s8 r0, q5, q0\n\t"                                                                           \
  "vmladav.s8 r2, q5, q1\n\t"                                                                           \
  "vmov " X "[2], " X "[0], r0, r2\n\t"                                                                 \
  "vmladav.s8 r0, q5, q2\n\t"                                                                           \
  "vmladav.s8 r2, q5, q3\n\t"                                                                           \
  "vmov " X "[3], " X "[1], r0, r2\n\t"
#define QDP_P33 QDP_PTRS QDP_B33("r1", "q6") QDP_B33("r3", "q7")
/* two outputs of one patch (weights q0 and W) into lanes h, h + 2, four a pass: 3x3 stride 1's last of an
 * odd number of columns as 2x1 blocks (the 4x4 patch's left column: W = q2, top / bottom), 3x3 stride 2
 * side by side (W = q1) */
#define QDP_B2(W, p, X, h, h2)                                                                          \
  QDP_G(p)                                                                                              \
  "vmladav.s8 r0, q5, q0\n\t"                                                                           \
  "vmladav.s8 r2, q5, " W "\n\t"                                                                        \
  "vmov " X "[" h2 "], " X "[" h "], r0, r2\n\t"
#define QDP_P2(W)                                                                                       \
  QDP_PTRS QDP_B2(W, "r1", "q6", "0", "2") QDP_B2(W, "r3", "q6", "1", "3")                              \
  QDP_PTRS QDP_B2(W, "r1", "q7", "0", "2") QDP_B2(W, "r3", "q7", "1", "3")
#define QDP_P33C QDP_P2("q2")
#define QDP_P32 QDP_P2("q1")
/* 5x5 stride 1: two outputs one above the other (patches at r1: rows 0-2, r3: rows 3-5) into lanes h, h + 2 */
#define QDP_B51(X, h, h2)                                                                               \
  QDP_PTRS QDP_G("r1")                                                                                  \
  "vmladav.s8 r0, q5, q0\n\t"                                                                           \
  "vmladav.s8 r2, q5, q1\n\t"                                                                           \
  QDP_G("r3")                                                                                           \
  "vmladava.s8 r0, q5, q2\n\t"                                                                          \
  "vmladava.s8 r2, q5, q3\n\t"                                                                          \
  "vmov " X "[" h2 "], " X "[" h "], r0, r2\n\t"
#define QDP_P51 QDP_B51("q6", "0", "2") QDP_B51("q6", "1", "3") QDP_B51("q7", "0", "2") QDP_B51("q7", "1", "3")
/* 5x5 stride 2: one output into acc (patches: rows 0-2, rows 3-4) */
#define QDP_O52(acc)                                                                                    \
  QDP_PTRS QDP_G("r1")                                                                                  \
  "vmladav.s8 " acc ", q5, q0\n\t"                                                                      \
  QDP_G("r3")                                                                                           \
  "vmladava.s8 " acc ", q5, q1\n\t"
#define QDP_B52(X, h, h2) QDP_O52("r0") QDP_O52("r2") "vmov " X "[" h2 "], " X "[" h "], r0, r2\n\t"
#define QDP_P52 QDP_B52("q6", "0", "2") QDP_B52("q6", "1", "3") QDP_B52("q7", "0", "2") QDP_B52("q7", "1", "3")
/* the 8 sums in q6 q7: constant, requantisation, narrows into q7's 16-bit lanes (q6's even, q7's odd) */
#define QDP_REQ                                                                                         \
  "vadd.i32 q6, q6, r7\n\t"                                                                             \
  "vadd.i32 q7, q7, r7\n\t"                                                                             \
  "vshr.s32 q5, q6, #31\n\t"                                                                            \
  "vqrdmlah.s32 q5, q6, r5\n\t"                                                                         \
  "vrshl.s32 q5, r6\n\t"                                                                                \
  "vshr.s32 q6, q7, #31\n\t"                                                                            \
  "vqrdmlah.s32 q6, q7, r5\n\t"                                                                         \
  "vrshl.s32 q6, r6\n\t"                                                                                \
  "vqmovnb.s32 q7, q5\n\t"                                                                              \
  "vqmovnt.s32 q7, q6\n\t"
#define QDP_SAT "vqadd.s16 q7, q7, r8\n\tvqmovnb.s16 q7, q7\n\t"
/* clamp in uint8 (x + 128): min by a saturating add and subtract of 127 - amax, max by a saturating subtract,
 * back to int8 by adding amin */
#define QDP_CLAMP                                                                                       \
  "vqadd.s16 q7, q7, r8\n\t"                                                                            \
  "vqmovunb.s16 q7, q7\n\t"                                                                             \
  "vqadd.u8 q7, q7, r10\n\t"                                                                            \
  "vqsub.u8 q7, q7, r11\n\t"                                                                            \
  "vadd.i8 q7, q7, r12\n\t"
#define QDP_STORE "vldrw.u32 q6, [r4], #16\n\tvstrb.16 q7, [r9, q6]\n\t"
/* every channel of the call: its record (nw weight vectors, G, then table, mult, shift, constant, k, passes, 2 words),
 * its passes. Without a clamp: r10 the record, r11 the channels left, r12 the output base; with one, those live in
 * blk (at [sp]) */
#define QDP_REC(p, loadw)                                                                               \
  loadw                                                                                                 \
  "vldrw.u32 q4, [" p "], #16\n\t"                                                                      \
  "ldm " p "!, {r4, r5, r6, r7, r9, lr}\n\t"                                                            \
  "add " p ", " p ", #8\n\t"
/* a channel's end: the count (dec: flags set, Z at the last channel), and where a mode has a second loop (record word
 * 6 = 2 passes + half, ld6: that word into r0), that loop out of line: its passes, then its half pass (two blocks
 * into q6, its requantised lanes narrowed twice: 16-bit lanes 2m and 2m + 1 hold lane m) */
#define QDP_REQH                                                                                        \
  "vadd.i32 q6, q6, r7\n\t"                                                                             \
  "vshr.s32 q5, q6, #31\n\t"                                                                            \
  "vqrdmlah.s32 q5, q6, r5\n\t"                                                                         \
  "vrshl.s32 q5, r6\n\t"                                                                                \
  "vqmovnb.s32 q7, q5\n\t"                                                                              \
  "vqmovnt.s32 q7, q5\n\t"
#define QDP_TAIL(dec, ld6, pass2, fin) QDP_TAIL_##pass2(dec, ld6, fin)
/* 3x3 stride 1 (the modes with a second loop): record word 5 = 2 passes + an odd block's half pass, after them */
#define QDP_LS(pass2) QDP_LS_##pass2
#define QDP_LS_0
#define QDP_LS_1 "lsrs lr, lr, #1\n\t"
#define QDP_MH(pass2, fin) QDP_MH_##pass2(fin)
#define QDP_MH_0(fin)
#define QDP_MH_1(fin) "bcc 11f\n\tldr r1, [r4], #4\n\t" QDP_B33("r1", "q6") QDP_REQH fin QDP_STORE "11:\n\t"
#define QDP_TAIL_0(dec, ld6, fin) dec "bne 1b\n\t"
#define QDP_TAIL_1(dec, ld6, fin)                                                                       \
  ld6 "cbnz r0, 8f\n"                                                                                   \
  "9:\n\t" dec "bne 1b\n\t"                                                                            \
  "b 10f\n"                                                                                             \
  "8:\n\t"                                                                                              \
  "lsrs lr, r0, #1\n\t"                                                                                 \
  "wls lr, lr, 5f\n"                                                                                    \
  "4:\n\t" QDP_P33C QDP_REQ fin QDP_STORE "le lr, 4b\n"                                                 \
  "5:\n\t" ld6 "lsls r0, r0, #31\n\t"                                                                   \
  "beq 9b\n\t" QDP_PTRS QDP_B2("q2", "r1", "q6", "0", "2") QDP_B2("q2", "r3", "q6", "1", "3") QDP_REQH fin  \
  QDP_STORE "b 9b\n"                                                                                    \
  "10:\n\t"
#define QDP_RUNS(name, pass, loadw, pass2)                                                              \
  __attribute__((noinline)) static void name(qdp_blk *blk) {                                            \
    register qdp_blk *b __asm__("r0") = blk;                                                            \
    __asm__ volatile(                                                                                   \
        "ldr r8, [%[b], #32]\n\t"                                                                       \
        "ldr r10, [%[b]]\n\t"                                                                           \
        "ldr r11, [%[b], #12]\n\t"                                                                      \
        "ldr r12, [%[b], #16]\n"                                                                         \
        "1:\n\t" QDP_REC("r10", loadw)                                                                   \
        "add r9, r9, r12\n\t"                                                                           \
        QDP_LS(pass2)                                                                                   \
        "wls lr, lr, 3f\n"                                                                               \
        "2:\n\t" pass QDP_REQ QDP_SAT QDP_STORE "le lr, 2b\n"                                            \
        "3:\n\t"                                                                                        \
        QDP_MH(pass2, QDP_SAT)                                                                        \
        QDP_TAIL("subs r11, r11, #1\n\t", "ldr r0, [r10, #-8]\n\t", pass2, QDP_SAT)                     \
        : [b] "+r"(b)                                                                                   \
        :                                                                                               \
        : "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "lr", "d0", "d1", \
          "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15", "memory", \
          "cc");                                                                                        \
  }
#define QDP_RUNC(name, pass, loadw, pass2)                                                              \
  __attribute__((noinline)) static void name(qdp_blk *blk) {                                            \
    register qdp_blk *b __asm__("r0") = blk;                                                            \
    __asm__ volatile(                                                                                   \
        "push {%[b]}\n\t"                                                                               \
        "ldrd r10, r11, [%[b], #20]\n\t"                                                                \
        "ldr r12, [%[b], #28]\n\t"                                                                      \
        "ldr r8, [%[b], #32]\n"                                                                          \
        "1:\n\t"                                                                                        \
        "ldr r1, [sp]\n\t"                                                                              \
        "ldr r0, [r1, #16]\n\t"                                                                         \
        "ldr r1, [r1]\n\t" QDP_REC("r1", loadw)                                                          \
        "add r9, r9, r0\n\t"                                                                            \
        "ldr r0, [sp]\n\t"                                                                              \
        "str r1, [r0]\n\t"                                                                              \
        QDP_LS(pass2)                                                                                   \
        "wls lr, lr, 3f\n"                                                                               \
        "2:\n\t" pass QDP_REQ QDP_CLAMP QDP_STORE "le lr, 2b\n"                                          \
        "3:\n\t"                                                                                        \
        QDP_MH(pass2, QDP_CLAMP)                                                                        \
        QDP_TAIL("ldr r1, [sp]\n\tldr r0, [r1, #12]\n\tsubs r0, r0, #1\n\tstr r0, [r1, #12]\n\t",            \
                 "ldr r1, [sp]\n\tldr r1, [r1]\n\tldr r0, [r1, #-8]\n\t", pass2, QDP_CLAMP)                 \
        "pop {%[b]}"                                                                                    \
        : [b] "+r"(b)                                                                                   \
        :                                                                                               \
        : "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "lr", "d0", "d1", \
          "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15", "memory", \
          "cc");                                                                                        \
  }
/* 3x3 outputs (tiny mode, one pass a channel; r4: the quad's table, its plane, then the 8 outputs' offsets): the
 * patches that cover them exactly, 8 outputs into q6 q7, the ninth's sum and constant stored by st9 (word 7 of the
 * channel's record: qdp_ninth requantises them). Stride 1 (Wp 5): 4x4 patches at (0,0) (0,1) (1,0) (1,1); stride 2 (Wp 7): 3x5 patches
 * at rows 0 2 4, columns 0 and 2 */
#define QDP_M2(a, b, X, h, h2)                                                                          \
  "vmladav.s8 r0, q5, " a "\n\t"                                                                        \
  "vmladav.s8 r2, q5, " b "\n\t"                                                                        \
  "vmov " X "[" h2 "], " X "[" h "], r0, r2\n\t"
/* the table's first 3 words: the patches at plane + 0, 4, 20 (stride 1) or + 0, 56, 112 (stride 2); without a clamp
 * (r11 free) all three by one ldm (R = r11), with one the first (the others by adds into R = r3, used at once) */
#define QDP_T31(st9, ldp, p2, p3, R)                                                                       \
  ldp QDP_G("r1") QDP_M2("q0", "q1", "q6", "0", "2") QDP_M2("q2", "q3", "q6", "1", "3")                   \
  p2 QDP_G("r3") QDP_M2("q1", "q3", "q7", "0", "2")                                                      \
  p3 QDP_G(R) QDP_M2("q2", "q3", "q7", "1", "3")                                                     \
  "adds r3, r1, #24\n\t" QDP_G("r3") "vmladav.s8 r0, q5, q3\n\t" st9
#define QDP_T32(st9, ldp, p2, p3, R)                                                                       \
  ldp QDP_G("r1") QDP_M2("q0", "q1", "q6", "0", "2")                                                      \
  p2 QDP_G("r3") QDP_M2("q0", "q1", "q6", "1", "3")                                                      \
  p3 QDP_G(R) QDP_M2("q0", "q1", "q7", "0", "2")                                                     \
  "adds r3, r1, #8\n\t" QDP_G("r3") "vmladav.s8 r0, q5, q1\n\t"                                          \
  "adds r3, r1, #64\n\t" QDP_G("r3") "vmladav.s8 r2, q5, q1\n\t"                                         \
  "vmov q7[3], q7[1], r0, r2\n\t"                                                                       \
  "adds r3, r1, #120\n\t" QDP_G("r3") "vmladav.s8 r0, q5, q1\n\t" st9
#define QDP_TLDS "ldm r4!, {r1, r3, r11}\n\t"
#define QDP_TLDC "ldr r1, [r4], #12\n\t"
/* tiny mode's channel loop: one pass a channel, so no pass loop; the channel count in lr (dls / le); its record
 * read without the passes word */
#define QDP_TREC(p, loadw)                                                                              \
  loadw                                                                                                 \
  "vldrw.u32 q4, [" p "], #16\n\t"                                                                      \
  "ldm " p "!, {r4, r5, r6, r7, r9}\n\t"                                                                \
  "add " p ", " p ", #12\n\t"
/* setup: a clamp's constants (or nothing); count: the register the channel count goes to, loaded last (r0 is the
 * block pointer until then); clamp: the requantised lanes' clamp (or saturation only) */
#define QDP_RUNT(name, pass, loadw, setup, count, clamp)                                                \
  __attribute__((noinline)) static void name(qdp_blk *blk) {                                            \
    register qdp_blk *b __asm__("r0") = blk;                                                            \
    __asm__ volatile(                                                                                   \
        setup                                                                                           \
        "ldr r8, [%[b], #32]\n\t"                                                                       \
        "ldr r10, [%[b]]\n\t"                                                                           \
        "ldr r12, [%[b], #16]\n\t"                                                                      \
        "ldr " count ", [%[b], #12]\n\t"                                                                \
        "dls lr, " count "\n"                                                                           \
        "1:\n\t" QDP_TREC("r10", loadw)                                                                  \
        "add r9, r9, r12\n\t"                                                                           \
        pass QDP_REQ clamp QDP_STORE "le lr, 1b\n\t"                                                     \
        : [b] "+r"(b)                                                                                   \
        :                                                                                               \
        : "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "lr", "d0", "d1", \
          "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15", "memory", \
          "cc");                                                                                        \
  }
/* with a clamp: its three byte constants in r11's bytes 0-2 (127 - amax, k2, amin; the by-scalar byte ops read the
 * scalar's low byte), the record pointer stays in r10, the channel count in r0 */
#define QDP_TSETC                                                                                       \
  "ldrb r11, [%[b], #20]\n\t"                                                                           \
  "ldrb r1, [%[b], #24]\n\t"                                                                            \
  "orr r11, r11, r1, lsl #8\n\t"                                                                        \
  "ldrb r1, [%[b], #28]\n\t"                                                                            \
  "orr r11, r11, r1, lsl #16\n\t"
#define QDP_CLAMPT                                                                                      \
  "vqadd.s16 q7, q7, r8\n\t"                                                                            \
  "vqmovunb.s16 q7, q7\n\t"                                                                             \
  "vqadd.u8 q7, q7, r11\n\t"                                                                            \
  "lsrs r3, r11, #8\n\t"                                                                                \
  "vqsub.u8 q7, q7, r3\n\t"                                                                             \
  "lsrs r3, r11, #16\n\t"                                                                               \
  "vadd.i8 q7, q7, r3\n\t"
#define QDP_RUNTS(name, pass, loadw) QDP_RUNT(name, pass, loadw, , "r11", QDP_SAT)
#define QDP_RUNTC(name, pass, loadw) QDP_RUNT(name, pass, loadw, QDP_TSETC, "r0", QDP_CLAMPT)
#define QDP_ST9S "add r0, r0, r7\n\tstr r0, [r10, #-4]\n\t"
#define QDP_W2(p) "vldrw.u32 q0, [" p "], #16\n\tvldrw.u32 q1, [" p "], #16\n\t"
#define QDP_W4(p) QDP_W2(p) "vldrw.u32 q2, [" p "], #16\n\tvldrw.u32 q3, [" p "], #16\n\t"
QDP_RUNS(qdp_33s, QDP_P33, QDP_W4("r10"), 1)
QDP_RUNC(qdp_33c, QDP_P33, QDP_W4("r1"), 1)
QDP_RUNS(qdp_32s, QDP_P32, QDP_W2("r10"), 0)
QDP_RUNC(qdp_32c, QDP_P32, QDP_W2("r1"), 0)
QDP_RUNS(qdp_51s, QDP_P51, QDP_W4("r10"), 0)
QDP_RUNC(qdp_51c, QDP_P51, QDP_W4("r1"), 0)
QDP_RUNS(qdp_52s, QDP_P52, QDP_W2("r10"), 0)
QDP_RUNC(qdp_52c, QDP_P52, QDP_W2("r1"), 0)
QDP_RUNTS(qdp_t31s, QDP_T31(QDP_ST9S, QDP_TLDS, , , "r11"), QDP_W4("r10"))
QDP_RUNTC(qdp_t31c, QDP_T31(QDP_ST9S, QDP_TLDC, "adds r3, r1, #4\n\t", "adds r3, r1, #20\n\t", "r3"), QDP_W4("r10"))
QDP_RUNTS(qdp_t32s, QDP_T32(QDP_ST9S, QDP_TLDS, , , "r11"), QDP_W2("r10"))
QDP_RUNTC(qdp_t32c, QDP_T32(QDP_ST9S, QDP_TLDC, "adds r3, r1, #56\n\t", "adds r3, r1, #112\n\t", "r3"), QDP_W2("r10"))
#undef QDP_TLDS
#undef QDP_TLDC
#undef QDP_RUNTS
#undef QDP_RUNTC
#undef QDP_RUNT
#undef QDP_TSETC
#undef QDP_TREC
#undef QDP_T31
#undef QDP_T32
#undef QDP_M2
#undef QDP_ST9S
#undef QDP_CLAMPT
#undef QDP_TAIL
#undef QDP_LS
#undef QDP_LS_0
#undef QDP_LS_1
#undef QDP_MH
#undef QDP_MH_0
#undef QDP_MH_1
#undef QDP_TAIL_0
#undef QDP_TAIL_1
#undef QDP_REQH
#undef QDP_P33C
#undef QDP_P2
#undef QDP_B2
#undef QDP_RUNS
#undef QDP_RUNC
#undef QDP_REC
#undef QDP_W2
#undef QDP_W4
#undef QDP_STORE
#undef QDP_CLAMP
#undef QDP_SAT
#undef QDP_REQ
#undef QDP_P52
#undef QDP_B52
#undef QDP_O52
#undef QDP_P51
#undef QDP_B51
#undef QDP_P32
#undef QDP_P33
#undef QDP_B33
#undef QDP_PTRS
#undef QDP_G
#else
#define QDP_ASM 0
static void qdp_33s(qdp_blk *blk) { (void)blk; }
#define qdp_33c qdp_33s
#define qdp_32s qdp_33s
#define qdp_32c qdp_33s
#define qdp_51s qdp_33s
#define qdp_51c qdp_33s
#define qdp_52s qdp_33s
#define qdp_52c qdp_33s
#define qdp_t31s qdp_33s
#define qdp_t31c qdp_33s
#define qdp_t32s qdp_33s
#define qdp_t32c qdp_33s
#endif

#endif
