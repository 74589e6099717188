/* Private to firmware/kernels/cortex_m/ (included by gemm_tile_mve.h): the two-phase GEMM's passes over
 * several groups of four channels (qt_gemm): the sums of K <= 16-byte rows group after group in one asm
 * call (qt_sums4g, a second call adding the rest of rows of 17..32 bytes), longer rows group after group
 * (qt_sums1x4g), three pixels x two channels (qt_sums3x2g) or with the group's rows packed (qt_pack4,
 * qt_sums2x4w: two pixels a pass), and the channels' constants' weight sums (qt_ksums). */
#ifndef ET_CORTEX_M_GEMM_GROUPS_MVE_H
#define ET_CORTEX_M_GEMM_GROUPS_MVE_H

/* K > 32 bytes' weight rows of a group packed for qt_sums2x4w (scratch, K <= QT_WPK_K) */
#define QT_WPK_K 1024
#define QT_WPK_BYTES(K) (64u * (((uint32_t)(K) + 15u) >> 4))
#define QT_WPK_MIN 12   /* pixels a pass at least for the packed rows (the packing is paid per group and pass) */
/* four rows of K > 32 bytes (K apart) into wp: 16 bytes of each in turn, the last 16 zero-padded; in asm,
 * 9 instructions per 64 bytes */
#if QT_ASM
/* Several groups of four channels over the same n pixels, the sums of group g at S + 16 * n * g bytes
 * ([group][pixel][4]): the group loop in asm (about 25 instructions a group where a call per group
 * cost ~100 in C and call overhead). Rows of K <= 16 (qt_sums4g: each group's weight rows loaded into
 * q4-q7, two pixels a pass, a last odd pixel alone) and longer rows (qt_sums1x4g: qt_sums1x4's loop,
 * then the next group's constants and weight rows). g4/blk carry the group state in memory (every
 * register is taken in the loops). */
typedef struct {
  int32_t k8[8];            /*  0: the group's four constants, twice (one ldm fills eight sums) */
  const int8_t *x0, *x1;    /* 32: pixels 0 and 1 */
  int32_t pairs, odd;       /* 40 */
  int32_t gleft;            /* 48: groups left, this one included */
  const int32_t *kp;        /* 52: the next group's constants */
  const int8_t *w;          /* 56: this group's weight rows (4 x Kl bytes, K apart) */
  int32_t K;                /* 60: the rows' stride */
  int32_t Kl;               /* 64: the bytes of a row taken (1..16) */
} qt_g4;
_Static_assert(offsetof(qt_g4, x0) == 32 && offsetof(qt_g4, K) == 60 && offsetof(qt_g4, Kl) == 64,
               "qt_sums4g offsets");
/* one pass: two pixels x four channels (no flags set: the pair count's shift keeps its Z for the loop) */
#define QT_PAIR(LOADS, SRC) \
      "ldm " SRC ", {r0, r2, r4, r6, r8, r10, r12, lr}\n\t" \
      LOADS \
      "vmladava.s8 r0, q0, q4\n\t" \
      "vmladava.s8 r2, q0, q5\n\t" \
      "vmladava.s8 r4, q0, q6\n\t" \
      "vmladava.s8 r6, q0, q7\n\t" \
      "vmladava.s8 r8, q1, q4\n\t" \
      "vmladava.s8 r10, q1, q5\n\t" \
      "vmladava.s8 r12, q1, q6\n\t" \
      "vmladava.s8 lr, q1, q7\n\t" \
      "stm r5!, {r0, r2, r4, r6, r8, r10, r12, lr}\n\t"
/* SRC: r9 starts each pass's sums at the constants, r5 at the sums already in S (a second part of rows
 * of 17..32 bytes: 16 and K - 16 bytes, each the K <= 16 loop, ~20% fewer than qt_sums4x2) */
#define QT_SUMS4G_ASM(LOADS, LOAD1, SRC) \
  __asm__ volatile( \
      "0:\n\t" \
      "ldr r0, [r9, #56]\n\t" \
      "ldr r2, [r9, #60]\n\t" \
      "add r4, r0, r2\n\t" \
      "add r6, r4, r2\n\t" \
      "add r8, r6, r2\n\t" \
      "add r10, r8, r2\n\t" \
      "str r10, [r9, #56]\n\t" \
      "ldr r2, [r9, #64]\n\t" \
      "vctp.8 r2\n\t" \
      "vpstttt\n\t" \
      "vldrbt.u8 q4, [r0]\n\t" \
      "vldrbt.u8 q5, [r4]\n\t" \
      "vldrbt.u8 q6, [r6]\n\t" \
      "vldrbt.u8 q7, [r8]\n\t" \
      "ldrd r1, r3, [r9, #32]\n\t" \
      "ldr r11, [r9, #40]\n\t" \
      "lsrs r11, r11, #1\n\t" \
      "bcc 2f\n\t" \
      QT_PAIR(LOADS, SRC) \
      "2:\n\t" \
      "beq 5f\n" \
      "1:\n\t" \
      QT_PAIR(LOADS, SRC) \
      QT_PAIR(LOADS, SRC) \
      "subs r11, r11, #1\n\t" \
      "bne 1b\n" \
      "5:\n\t" \
      "ldr r11, [r9, #44]\n\t" \
      "cmp r11, #0\n\t" \
      "beq 6f\n\t" \
      "ldm " SRC ", {r0, r2, r4, r6}\n\t" \
      LOAD1 \
      "vmladava.s8 r0, q0, q4\n\t" \
      "vmladava.s8 r2, q0, q5\n\t" \
      "vmladava.s8 r4, q0, q6\n\t" \
      "vmladava.s8 r6, q0, q7\n\t" \
      "stm r5!, {r0, r2, r4, r6}\n" \
      "6:\n\t" \
      "ldr r11, [r9, #48]\n\t" \
      "subs r11, r11, #1\n\t" \
      "beq 7f\n\t" \
      "str r11, [r9, #48]\n\t" \
      "ldr r11, [r9, #52]\n\t" \
      "ldm r11!, {r0, r2, r4, r6}\n\t" \
      "str r11, [r9, #52]\n\t" \
      "stm r9, {r0, r2, r4, r6}\n\t" \
      "add r11, r9, #16\n\t" \
      "stm r11, {r0, r2, r4, r6}\n\t" \
      "b 0b\n" \
      "7:" \
      : "+r"(rs), "+r"(rxs), "+r"(rg) \
      : \
      : "r0", "r1", "r2", "r3", "r4", "r6", "r8", "r10", "r11", "r12", "lr", "d0", "d1", "d2", "d3", "d8", "d9", \
        "d10", "d11", "d12", "d13", "d14", "d15", "memory", "cc")
#define QT_L_GEN "vpstt\n\tvldrbt.u8 q0, [r1]\n\tvldrbt.u8 q1, [r3]\n\tadd r1, r1, r7\n\tadd r3, r3, r7\n\t"
#define QT_L1_PRED "vpst\n\tvldrbt.u8 q0, [r1]\n\t"
#define QT_L_16X64 "vldrb.u8 q0, [r1], #64\n\tvldrb.u8 q1, [r3], #64\n\t"
/* whole 16 bytes of a row (no predicate), pixels xs apart */
#define QT_L_16GEN "vldrb.u8 q0, [r1]\n\tvldrb.u8 q1, [r3]\n\tadd r1, r1, r7\n\tadd r3, r3, r7\n\t"
#define QT_L_8X48 "vpstt\n\tvldrbt.u8 q0, [r1], #48\n\tvldrbt.u8 q1, [r3], #48\n\t"
#define QT_L_PX54 "vpstt\n\tvldrbt.u8 q0, [r1], #54\n\tvldrbt.u8 q1, [r3], #54\n\t"
/* g->k8, x0, x1, pairs, odd, gleft (>= 1), kp, w, K, Kl (1..16) set; pixels xs apart (xs2 = 2 * xs); acc:
 * add to the sums in S (same layout) instead of starting at the constants */
__attribute__((noinline)) static void qt_sums4g(qt_g4 *g, ptrdiff_t xs2, int32_t *S, bool acc, bool over) {
  register int32_t *rs __asm__("r5") = S;
  register ptrdiff_t rxs __asm__("r7") = xs2;
  register qt_g4 *rg __asm__("r9") = g;
  if (over && !acc && xs2 == 16 && g->Kl == 8) {
    /* 8-byte pixels back to back, more input after the run (over): whole-vector loads, their upper
     * halves (the next pixel) meet the weights' zeros */
    QT_SUMS4G_ASM("vldrb.u8 q0, [r1], #16\n\t"
                  "vldrb.u8 q1, [r3], #16\n\t",
                  QT_L1_PRED, "r9");
  } else if (acc) {
    if (xs2 == 64 && g->Kl == 16) QT_SUMS4G_ASM(QT_L_16X64, "vldrb.u8 q0, [r1]\n\t", "r5");
    else if (xs2 == 48 && g->Kl == 8) QT_SUMS4G_ASM(QT_L_8X48, QT_L1_PRED, "r5");   /* K = 24 back to back */
    else if (xs2 == 54) QT_SUMS4G_ASM(QT_L_PX54, QT_L1_PRED, "r5");   /* K = 27: a 3x3 RGB stem's im2col */
    else if (g->Kl == 16) QT_SUMS4G_ASM(QT_L_16GEN, "vldrb.u8 q0, [r1]\n\t", "r5");
    else QT_SUMS4G_ASM(QT_L_GEN, QT_L1_PRED, "r5");
  } else if (xs2 == 48 && g->Kl == 16) {
    QT_SUMS4G_ASM("vldrb.u8 q0, [r1], #48\n\t"
                  "vldrb.u8 q1, [r3], #48\n\t",
                  "vldrb.u8 q0, [r1]\n\t", "r9");
  } else if (xs2 == 54 && g->Kl == 16) {
    QT_SUMS4G_ASM("vldrb.u8 q0, [r1], #54\n\t"
                  "vldrb.u8 q1, [r3], #54\n\t",
                  "vldrb.u8 q0, [r1]\n\t", "r9");
  } else if (xs2 == 16 && g->Kl == 8) {
    QT_SUMS4G_ASM("vpstt\n\t"
                  "vldrbt.u8 q0, [r1], #16\n\t"
                  "vldrbt.u8 q1, [r3], #16\n\t",
                  QT_L1_PRED, "r9");
  } else if (xs2 == 32 && g->Kl == 16) {
    QT_SUMS4G_ASM("vldrb.u8 q0, [r1], #32\n\t"
                  "vldrb.u8 q1, [r3], #32\n\t",
                  "vldrb.u8 q0, [r1]\n\t", "r9");
  } else if (xs2 == 64 && g->Kl == 16) {
    QT_SUMS4G_ASM(QT_L_16X64, "vldrb.u8 q0, [r1]\n\t", "r9");
  } else if (g->Kl == 16) {
    QT_SUMS4G_ASM(QT_L_16GEN, "vldrb.u8 q0, [r1]\n\t", "r9");
  } else {
    QT_SUMS4G_ASM(QT_L_GEN, QT_L1_PRED, "r9");
  }
}
#undef QT_SUMS4G_ASM
#undef QT_PAIR
#undef QT_L_GEN
#undef QT_L1_PRED
#undef QT_L_16X64
#undef QT_L_16GEN
#undef QT_L_8X48
#undef QT_L_PX54

/* qt_sums1x4 over several groups: blk as qt_sums1x4's, plus the group state */
typedef struct {
  qt_blk b;                 /*  0: c, w, xadj, send (S after this group's last pixel) */
  const int8_t *x0;         /* 40: pixel 0 */
  int32_t gleft;            /* 44: groups left, this one included */
  const int32_t *kp;        /* 48: the next group's constants */
  int32_t wstep, sstep;     /* 52: 4 * K (weight rows of a group), 16 * n (S of a group) */
} qt_blkg;
_Static_assert(offsetof(qt_blkg, x0) == 40 && offsetof(qt_blkg, sstep) == 56, "qt_sums1x4g offsets");
#define QT_1X4G_HEAD \
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
#define QT_1X4G_TAIL \
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
#define QT_1X4G_REST \
      "stm r3!, {r0, r2, r4, r6}\n\t" \
      "ldrd r0, r2, [r5, #32]\n\t" \
      "add r1, r1, r0\n\t" \
      "cmp r3, r2\n\t" \
      "bne 1b\n\t" \
      "ldr r0, [r5, #44]\n\t" \
      "subs r0, r0, #1\n\t" \
      "beq 4f\n\t" \
      "str r0, [r5, #44]\n\t" \
      "ldr lr, [r5, #48]\n\t" \
      "ldm lr!, {r0, r2, r4, r6}\n\t" \
      "str lr, [r5, #48]\n\t" \
      "stm r5, {r0, r2, r4, r6}\n\t" \
      "ldr lr, [r5, #52]\n\t" \
      "ldrd r7, r9, [r5, #16]\n\t" \
      "ldrd r10, r11, [r5, #24]\n\t" \
      "add r7, r7, lr\n\t" \
      "add r9, r9, lr\n\t" \
      "add r10, r10, lr\n\t" \
      "add r11, r11, lr\n\t" \
      "strd r7, r9, [r5, #16]\n\t" \
      "strd r10, r11, [r5, #24]\n\t" \
      "ldr r0, [r5, #36]\n\t" \
      "ldr lr, [r5, #56]\n\t" \
      "add r0, r0, lr\n\t" \
      "str r0, [r5, #36]\n\t" \
      "ldr r1, [r5, #40]\n\t" \
      "b 1b\n" \
      "4:"
#define QT_1X4G_OPERANDS \
      : "+r"(rx), "+r"(rs) \
      : "r"(rb), "r"(rt), "r"(rr) \
      : "r0", "r2", "r4", "r6", "r7", "r9", "r10", "r11", "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", \
        "memory", "cc"
/* n >= 1 pixels at x + p * xs, blk->b.c / b.w of the first group, gleft >= 1, kp, wstep set */
__attribute__((noinline)) static void qt_sums1x4g(const int8_t *x, ptrdiff_t xs, int32_t n, int32_t K, qt_blkg *blk,
                                                  int32_t *S) {
  blk->b.xadj = (int32_t)(xs - 16 * (K >> 4));
  blk->b.send = S + 4 * n;
  blk->x0 = x;
  blk->sstep = 16 * n;
  register const int8_t *rx __asm__("r1") = x;
  register int32_t *rs __asm__("r3") = S;
  register qt_blkg *rb __asm__("r5") = blk;
  register int32_t rt __asm__("r8") = K >> 4;
  register int32_t rr __asm__("r12") = K & 15;
  if (K & 15) __asm__ volatile(QT_1X4G_HEAD QT_1X4G_TAIL QT_1X4G_REST QT_1X4G_OPERANDS);
  else __asm__ volatile(QT_1X4G_HEAD QT_1X4G_REST QT_1X4G_OPERANDS);
}
#undef QT_1X4G_HEAD
#undef QT_1X4G_TAIL
#undef QT_1X4G_REST
#undef QT_1X4G_OPERANDS

/* Rows longer than 32 bytes on small maps (too few pixels to pay for packing the rows): three pixels x
 * two channels a pass with the two weight rows streamed (per 16 bytes three input loads, two weight
 * loads and six vmladava: 12 instructions per 96 MACs with the loop, qt_sums1x4g's 10 per 64), the
 * K & 15 tail predicated. One call takes one triple of pixels through gleft groups, both channel pairs
 * of a group in turn; the sums go to S's [group][pixel][4] (group g at S + g * sstep bytes). f: the
 * triple's pixels (a last partial triple repeats its last pixel: the sums land in the group's padding),
 * trips (K >> 4, >= 1), the step from a pair's weight pointers after its loop to the next pair's rows
 * (2K - 16 trips), S, sstep, gleft, the tail (K & 15). r7, r9: the first pair's rows; r12: the
 * constants (two a pair, in order). */
typedef struct {
  const int8_t *x[3];       /*  0 */
  int32_t trips;            /* 12 */
  int32_t wadj;             /* 16 */
  int32_t *S;               /* 20 */
  int32_t sstep;            /* 24: bytes */
  int32_t gleft;            /* 28 */
  int32_t tail;             /* 32 */
} qt_f32;
_Static_assert(offsetof(qt_f32, trips) == 12 && offsetof(qt_f32, tail) == 32, "qt_sums3x2g offsets");
#define QT_3X2_LOOP \
      "ldrd r0, r2, [r12], #8\n\t" \
      "mov r4, r0\n\t" \
      "mov r6, r2\n\t" \
      "mov r8, r0\n\t" \
      "mov r10, r2\n\t" \
      "ldm r11, {r1, r3, r5}\n\t" \
      "ldr lr, [r11, #12]\n\t" \
      "dls lr, lr\n" \
      "1:\n\t" \
      "vldrb.u8 q0, [r7], #16\n\t" \
      "vldrb.u8 q1, [r9], #16\n\t" \
      "vldrb.u8 q2, [r1], #16\n\t" \
      "vmladava.s8 r0, q2, q0\n\t" \
      "vmladava.s8 r2, q2, q1\n\t" \
      "vldrb.u8 q3, [r3], #16\n\t" \
      "vmladava.s8 r4, q3, q0\n\t" \
      "vmladava.s8 r6, q3, q1\n\t" \
      "vldrb.u8 q2, [r5], #16\n\t" \
      "vmladava.s8 r8, q2, q0\n\t" \
      "vmladava.s8 r10, q2, q1\n\t" \
      "le lr, 1b\n\t"
#define QT_3X2_TAIL \
      "ldr lr, [r11, #32]\n\t" \
      "vctp.8 lr\n\t" \
      "vpstttt\n\t" \
      "vldrbt.u8 q0, [r7]\n\t" \
      "vldrbt.u8 q1, [r9]\n\t" \
      "vldrbt.u8 q2, [r1]\n\t" \
      "vldrbt.u8 q3, [r3]\n\t" \
      "vmladava.s8 r0, q2, q0\n\t" \
      "vmladava.s8 r2, q2, q1\n\t" \
      "vmladava.s8 r4, q3, q0\n\t" \
      "vmladava.s8 r6, q3, q1\n\t" \
      "vpst\n\t" \
      "vldrbt.u8 q2, [r5]\n\t" \
      "vmladava.s8 r8, q2, q0\n\t" \
      "vmladava.s8 r10, q2, q1\n\t"
#define QT_3X2_STORE(H0, H1, H2) \
      "ldr lr, [r11, #20]\n\t" \
      "strd r0, r2, [lr, #" H0 "]\n\t" \
      "strd r4, r6, [lr, #" H1 "]\n\t" \
      "strd r8, r10, [lr, #" H2 "]\n\t" \
      "ldr lr, [r11, #16]\n\t" \
      "add r7, r7, lr\n\t" \
      "add r9, r9, lr\n\t"
#define QT_3X2_GROUP \
      "ldr lr, [r11, #20]\n\t" \
      "ldr r0, [r11, #24]\n\t" \
      "add lr, lr, r0\n\t" \
      "str lr, [r11, #20]\n\t" \
      "ldr r0, [r11, #28]\n\t" \
      "subs r0, r0, #1\n\t" \
      "str r0, [r11, #28]\n\t" \
      "bne 0b"
#define QT_3X2_OPERANDS \
      : "+r"(rw0), "+r"(rw1), "+r"(rk) \
      : "r"(rf) \
      : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r8", "r10", "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", \
        "d7", "memory", "cc"
__attribute__((noinline)) static void qt_sums3x2g(qt_f32 *f, const int8_t *w, int32_t K, const int32_t *k) {
  register const int8_t *rw0 __asm__("r7") = w;
  register const int8_t *rw1 __asm__("r9") = w + K;
  register const int32_t *rk __asm__("r12") = k;
  register qt_f32 *rf __asm__("r11") = f;
  if (K & 15)
    __asm__ volatile("0:\n\t" QT_3X2_LOOP QT_3X2_TAIL QT_3X2_STORE("0", "16", "32")
                     QT_3X2_LOOP QT_3X2_TAIL QT_3X2_STORE("8", "24", "40") QT_3X2_GROUP QT_3X2_OPERANDS);
  else
    __asm__ volatile("0:\n\t" QT_3X2_LOOP QT_3X2_STORE("0", "16", "32")
                     QT_3X2_LOOP QT_3X2_STORE("8", "24", "40") QT_3X2_GROUP QT_3X2_OPERANDS);
}
#undef QT_3X2_LOOP
#undef QT_3X2_TAIL
#undef QT_3X2_STORE
#undef QT_3X2_GROUP
#undef QT_3X2_OPERANDS

/* Rows longer than 32 bytes with the group's four weight rows packed (qt_pack4: 16 bytes of each row
 * in turn, the K & 15 tail zero-padded): one weight pointer frees the registers for two pixels x four
 * channels a pass (eight sums), per 16 bytes two input loads, four weight loads and eight vmladava (16
 * instructions per 128 MACs with the loop, was 10 per 64), 9 more a pass. b: the four constants twice,
 * then trips (K >> 4, >= 2), the packed rows, the step from a pass's pointers to the next pair's
 * (2 xs - 16 trips), pairs (>= 1) and the tail (K & 15). x1 == x0 makes a last odd pixel (its eight
 * sums' second four are not the run's: the caller's buffer has room). */
typedef struct {
  int32_t k8[8];           /*  0 */
  int32_t trips;           /* 32 */
  const int8_t *wp;        /* 36 */
  int32_t adj, pairs;      /* 40, 44 */
  int32_t tail;            /* 48 */
} qt_b24;
_Static_assert(offsetof(qt_b24, trips) == 32 && offsetof(qt_b24, tail) == 48, "qt_sums2x4w offsets");
/* two pixels' 16 bytes (q0, q1) against the group's four weight rows (streamed from r5): eight sums */
#define QT_2X4W_MACS \
      "vldrb.u8 q2, [r5], #16\n\t" \
      "vmladava.s8 r0, q0, q2\n\t" \
      "vmladava.s8 r8, q1, q2\n\t" \
      "vldrb.u8 q2, [r5], #16\n\t" \
      "vmladava.s8 r2, q0, q2\n\t" \
      "vmladava.s8 r10, q1, q2\n\t" \
      "vldrb.u8 q2, [r5], #16\n\t" \
      "vmladava.s8 r4, q0, q2\n\t" \
      "vmladava.s8 r12, q1, q2\n\t" \
      "vldrb.u8 q2, [r5], #16\n\t" \
      "vmladava.s8 r6, q0, q2\n\t" \
      "vmladava.s8 lr, q1, q2\n\t"
#define QT_2X4W_HEAD \
      "1:\n\t" \
      "ldm r7, {r0, r2, r4, r6, r8, r10, r12, lr}\n\t" \
      "ldrd r9, r5, [r7, #32]\n" \
      "2:\n\t" \
      "vldrb.u8 q0, [r1], #16\n\t" \
      "vldrb.u8 q1, [r3], #16\n\t" \
      QT_2X4W_MACS \
      "subs r9, r9, #1\n\t" \
      "bne 2b\n\t"
#define QT_2X4W_TAIL \
      "ldr r9, [r7, #48]\n\t" \
      "vctp.8 r9\n\t" \
      "vpstt\n\t" \
      "vldrbt.u8 q0, [r1]\n\t" \
      "vldrbt.u8 q1, [r3]\n\t" \
      QT_2X4W_MACS
#define QT_2X4W_REST \
      "stm r11!, {r0, r2, r4, r6, r8, r10, r12, lr}\n\t" \
      "ldrd r9, r5, [r7, #40]\n\t" \
      "add r1, r1, r9\n\t" \
      "add r3, r3, r9\n\t" \
      "subs r5, r5, #1\n\t" \
      "str r5, [r7, #44]\n\t" \
      "bne 1b"
#define QT_2X4W_OPERANDS \
      : "+r"(rx0), "+r"(rx1), "+r"(rs) \
      : "r"(rb) \
      : "r0", "r2", "r4", "r5", "r6", "r8", "r9", "r10", "r12", "lr", "d0", "d1", "d2", "d3", "d4", "d5", "memory", "cc"
__attribute__((noinline)) static void qt_sums2x4w(const int8_t *x0, const int8_t *x1, qt_b24 *b, int32_t *S) {
  register const int8_t *rx0 __asm__("r1") = x0;
  register const int8_t *rx1 __asm__("r3") = x1;
  register qt_b24 *rb __asm__("r7") = b;
  register int32_t *rs __asm__("r11") = S;
  if (b->tail) __asm__ volatile(QT_2X4W_HEAD QT_2X4W_TAIL QT_2X4W_REST QT_2X4W_OPERANDS);
  else __asm__ volatile(QT_2X4W_HEAD QT_2X4W_REST QT_2X4W_OPERANDS);
}
#undef QT_2X4W_MACS
#undef QT_2X4W_HEAD
#undef QT_2X4W_TAIL
#undef QT_2X4W_REST
#undef QT_2X4W_OPERANDS
__attribute__((noinline)) static void qt_pack4(const int8_t *w, int32_t K, int8_t *wp) {
  register const int8_t *r0 __asm__("r0") = w;
  register const int8_t *r1 __asm__("r1") = w + K;
  register const int8_t *r2 __asm__("r2") = w + 2 * K;
  register const int8_t *r3 __asm__("r3") = w + 3 * K;
  register int8_t *r4 __asm__("r4") = wp;
  register int32_t r5 __asm__("r5") = K >> 4;
  register int32_t r6 __asm__("r6") = K & 15;
  __asm__ volatile(
      "dls lr, r5\n"
      "1:\n\t"
      "vldrb.u8 q0, [r0], #16\n\t"
      "vldrb.u8 q1, [r1], #16\n\t"
      "vldrb.u8 q2, [r2], #16\n\t"
      "vldrb.u8 q3, [r3], #16\n\t"
      "vstrb.8 q0, [r4], #16\n\t"
      "vstrb.8 q1, [r4], #16\n\t"
      "vstrb.8 q2, [r4], #16\n\t"
      "vstrb.8 q3, [r4], #16\n\t"
      "le lr, 1b\n\t"
      "cbz r6, 2f\n\t"
      "vctp.8 r6\n\t"
      "vpstttt\n\t"
      "vldrbt.u8 q0, [r0]\n\t"
      "vldrbt.u8 q1, [r1]\n\t"
      "vldrbt.u8 q2, [r2]\n\t"
      "vldrbt.u8 q3, [r3]\n\t"
      "vmov.i32 q4, #0\n\t"
      "vpsel q0, q0, q4\n\t"
      "vpsel q1, q1, q4\n\t"
      "vpsel q2, q2, q4\n\t"
      "vpsel q3, q3, q4\n\t"
      "vstrb.8 q0, [r4], #16\n\t"
      "vstrb.8 q1, [r4], #16\n\t"
      "vstrb.8 q2, [r4], #16\n\t"
      "vstrb.8 q3, [r4], #16\n"
      "2:"
      : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3), "+r"(r4), "+r"(r5)
      : "r"(r6)
      : "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "memory", "cc");
}
__attribute__((noinline)) static void qt_ksums(const int8_t *w, int32_t K, int32_t groups, int32_t *k) {
  register const int8_t *r5 __asm__("r5") = w;
  register int32_t r7 __asm__("r7") = K;
  register int32_t r9 __asm__("r9") = K >> 4;
  register int32_t *r11 __asm__("r11") = k;
  register int32_t r12 __asm__("r12") = groups;
  register int32_t r0 __asm__("r0") = K & 15;
  __asm__ volatile(
      "push {r0}\n"
      "0:\n\t"
      "mov r0, r5\n\t"
      "add r1, r0, r7\n\t"
      "add r2, r1, r7\n\t"
      "add r3, r2, r7\n\t"
      "add r5, r3, r7\n\t"
      "movs r4, #0\n\t"
      "movs r6, #0\n\t"
      "mov r8, #0\n\t"
      "mov r10, #0\n\t"
      "wls lr, r9, 2f\n"
      "1:\n\t"
      "vldrb.u8 q0, [r0], #16\n\t"
      "vaddva.s8 r4, q0\n\t"
      "vldrb.u8 q0, [r1], #16\n\t"
      "vaddva.s8 r6, q0\n\t"
      "vldrb.u8 q0, [r2], #16\n\t"
      "vaddva.s8 r8, q0\n\t"
      "vldrb.u8 q0, [r3], #16\n\t"
      "vaddva.s8 r10, q0\n\t"
      "le lr, 1b\n"
      "2:\n\t"
      "ldr lr, [sp]\n\t"
      "cmp lr, #0\n\t"
      "beq 3f\n\t"
      "vctp.8 lr\n\t"
      "vpstttt\n\t"
      "vldrbt.u8 q0, [r0]\n\t"
      "vldrbt.u8 q1, [r1]\n\t"
      "vldrbt.u8 q2, [r2]\n\t"
      "vldrbt.u8 q3, [r3]\n\t"
      "vpstttt\n\t"
      "vaddvat.s8 r4, q0\n\t"
      "vaddvat.s8 r6, q1\n\t"
      "vaddvat.s8 r8, q2\n\t"
      "vaddvat.s8 r10, q3\n"
      "3:\n\t"
      "stm r11!, {r4, r6, r8, r10}\n\t"
      "subs r12, r12, #1\n\t"
      "bne 0b\n\t"
      "add sp, sp, #4"
      : "+r"(r5), "+r"(r11), "+r"(r12), "+r"(r0)
      : "r"(r7), "r"(r9)
      : "r1", "r2", "r3", "r4", "r6", "r8", "r10", "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "memory",
        "cc");
}
#else
typedef struct { int32_t k8[8]; const int8_t *x0, *x1; int32_t pairs, odd, gleft; const int32_t *kp;
                 const int8_t *w; int32_t K, Kl; } qt_g4;
typedef struct { qt_blk b; const int8_t *x0; int32_t gleft; const int32_t *kp; int32_t wstep, sstep; } qt_blkg;
static void qt_sums4g(qt_g4 *g, ptrdiff_t xs2, int32_t *S, bool acc, bool over) {
  (void)g; (void)xs2; (void)S; (void)acc; (void)over;
}
typedef struct { int32_t k8[8]; int32_t trips; const int8_t *wp; int32_t adj, pairs, tail; } qt_b24;
static void qt_sums2x4w(const int8_t *x0, const int8_t *x1, qt_b24 *b, int32_t *S) {
  (void)x0; (void)x1; (void)b; (void)S;
}
static void qt_sums1x4g(const int8_t *x, ptrdiff_t xs, int32_t n, int32_t K, qt_blkg *blk, int32_t *S) {
  (void)x; (void)xs; (void)n; (void)K; (void)blk; (void)S;
}
static void qt_pack4(const int8_t *w, int32_t K, int8_t *wp) { (void)w; (void)K; (void)wp; }
typedef struct { const int8_t *x[3]; int32_t trips, wadj; int32_t *S; int32_t sstep, gleft, tail; } qt_f32;
static void qt_sums3x2g(qt_f32 *f, const int8_t *w, int32_t K, const int32_t *k) {
  (void)f; (void)w; (void)K; (void)k;
}
#endif

#endif
