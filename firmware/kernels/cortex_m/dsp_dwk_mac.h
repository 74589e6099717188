/* Private to firmware/kernels/cortex_m/ (dsp_dwk.h): the MAC loops of the KxK plane depthwise, 4 outputs of
 * one output row a block, from one channel's int16 plane (raw inputs, padding = the input zero point).
 *
 * Along a plane row a word holds the tap pair (x[j], x[j+1]) (L_j, j even). A kernel row of K = 2m + 1
 * doubled weights is kept as the pairs A_i = (w_2i, w_2i+1), i < m, then B_i = (w_2i-1, w_2i), 1 <= i <= m
 * (K - 1 words; row r at word r (K - 1)). An output starting at an even column e and one at e + 1:
 *   out(e)     = sum_i<m SMLAD(L_e+2i, A_i) + SMLABT(L_e+2m, B_m)
 *   out(e + 1) = SMLATB(L_e, A_0) + sum_1<=i<=m SMLAD(L_e+2i, B_i)
 * so stride 1 takes outputs in pairs (e, e + 1) and stride 2 every output in the even form: m + 1 MAC
 * instructions per output and kernel row (K MACs). 3x3 and 5x5 in asm (4 outputs a block, every output row
 * of a channel in one loop), other odd K (and -O0) in C with the same arithmetic. */
#ifndef ET_CORTEX_M_DSP_DWK_MAC_H
#define ET_CORTEX_M_DSP_DWK_MAC_H

#define CM_DSP_DWK_KMAX 5   /* the largest kernel side (odd) of the plane path */
#define CM_DWK_BIAS2 "80"   /* byte offset of bias2 (twice) in cm_dwk_ch, for the asm */

typedef struct {
  uint32_t ab[CM_DSP_DWK_KMAX * (CM_DSP_DWK_KMAX - 1)];   /* the kernel rows' doubled weight pairs (above) */
  int32_t bias2, bias2b; /* 2 x (bias + offset x sum of the weights) (wrapping), twice: one LDRD per two sums */
  int32_t bias;          /* bias + offset x sum of the weights */
  int32_t mult, k, rs1;  /* requantisation: k = 2^rs + (out_off << (rs + 1)), rs1 = rs + 1 (fast form) */
  int32_t shift;         /* for the exact form */
} cm_dwk_ch;
_Static_assert(offsetof(cm_dwk_ch, bias2) == 80, "the asm reads bias2 at byte CM_DWK_BIAS2");

/* an int16 pair from any halfword address */
static inline uint32_t cm_ld32h(const int16_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static inline void cm_st32h(int16_t *p, uint32_t v) { memcpy(p, &v, 4); }

#ifdef __OPTIMIZE__   /* 13 registers: r7 is the frame pointer at -O0 */
/* 3x3, one kernel row's MACs for 4 outputs, stride 1: LD loads the block's first two words and leaves p 8
 * bytes past the first (row 0 steps p there, post-indexed); FIRST starts the sums from the bias (2 x,
 * at byte CM_DWK_BIAS2 of cm_dwk_ch), the other rows accumulate. */
#define CM_DW3_S1_ROW(FIRST, KOFF, LD)                                                                     \
  FIRST("ldr %[A], [%[k]]\n\t" "ldr %[B], [%[k], #" CM_DWK_BIAS2 "]\n\t",                                  \
        "ldrd %[A], %[B], [%[k], #" KOFF "]\n\t")                                                           \
  "ldrd %[l0], %[l2], " LD "\n\t"                                                                           \
  FIRST("smlad %[a0], %[l0], %[A], %[B]\n\t" "smlatb %[a1], %[l0], %[A], %[B]\n\t"                         \
        "smlad %[a2], %[l2], %[A], %[B]\n\t" "smlatb %[a3], %[l2], %[A], %[B]\n\t"                         \
        "ldr %[B], [%[k], #4]\n\t",                                                                        \
        "smlad %[a0], %[l0], %[A], %[a0]\n\t" "smlatb %[a1], %[l0], %[A], %[a1]\n\t"                       \
        "smlad %[a2], %[l2], %[A], %[a2]\n\t" "smlatb %[a3], %[l2], %[A], %[a3]\n\t")                      \
  "ldr %[l0], [%[p]]\n\t"                                                                                   \
  "smlabt %[a0], %[l2], %[B], %[a0]\n\t" "smlad %[a1], %[l2], %[B], %[a1]\n\t"                            \
  "smlabt %[a2], %[l0], %[B], %[a2]\n\t" "smlad %[a3], %[l0], %[B], %[a3]\n\t"
/* stride 2: the block's words l0..l8 at p - 16 .. p (row 0 steps p by 16); row 0 puts the bias in a2, a3 */
#define CM_DW3_S2_ROW(FIRST, KOFF, LD)                                                                     \
  FIRST("ldr %[l2], [%[k], #" CM_DWK_BIAS2 "]\n\t" "mov %[a2], %[l2]\n\t" "mov %[a3], %[l2]\n\t", "")      \
  "ldrd %[A], %[B], [%[k], #" KOFF "]\n\t"                                                                  \
  "ldrd %[l0], %[l2], " LD "\n\t"                                                                           \
  FIRST("smlad %[a0], %[l0], %[A], %[a2]\n\t" "smlad %[a1], %[l2], %[A], %[a3]\n\t",                       \
        "smlad %[a0], %[l0], %[A], %[a0]\n\t" "smlad %[a1], %[l2], %[A], %[a1]\n\t")                       \
  "smlabt %[a0], %[l2], %[B], %[a0]\n\t"                                                                    \
  "ldrd %[l0], %[l2], [%[p], #-8]\n\t"                                                                      \
  "smlabt %[a1], %[l0], %[B], %[a1]\n\t"                                                                    \
  "smlad %[a2], %[l0], %[A], %[a2]\n\t" "smlad %[a3], %[l2], %[A], %[a3]\n\t"                              \
  "smlabt %[a2], %[l2], %[B], %[a2]\n\t"                                                                    \
  "ldr %[l0], [%[p]]\n\t"                                                                                   \
  "smlabt %[a3], %[l0], %[B], %[a3]\n\t"
#define CM_DW3_FIRST(x, y) x
#define CM_DW3_NEXT(x, y) y

/* 5x5, one kernel row for 4 outputs (17 instructions, 20 MACs): KA/KB the byte offsets of (A0, A1) and
 * (B1, B2); LD the address of the block's words (L0, L2); O4, O6 the offsets of L4, L6 from p. */
#define CM_DW5_S1_ROW(KA, KB, LD, O4, O6)                                                                  \
  "ldrd %[A], %[B], [%[k], #" KA "]\n\t"                                                                    \
  "ldrd %[l0], %[l2], " LD "\n\t"                                                                           \
  "smlad %[a0], %[l0], %[A], %[a0]\n\t" "smlatb %[a1], %[l0], %[A], %[a1]\n\t"                             \
  "smlad %[a0], %[l2], %[B], %[a0]\n\t" "smlad %[a2], %[l2], %[A], %[a2]\n\t"                              \
  "smlatb %[a3], %[l2], %[A], %[a3]\n\t"                                                                    \
  "ldr %[l0], [%[p], #" O4 "]\n\t"                                                                          \
  "smlad %[a2], %[l0], %[B], %[a2]\n\t"                                                                     \
  "ldrd %[A], %[B], [%[k], #" KB "]\n\t"                                                                    \
  "smlad %[a1], %[l2], %[A], %[a1]\n\t" "smlabt %[a0], %[l0], %[B], %[a0]\n\t"                             \
  "smlad %[a1], %[l0], %[B], %[a1]\n\t" "smlad %[a3], %[l0], %[A], %[a3]\n\t"                              \
  "ldr %[l2], [%[p], #" O6 "]\n\t"                                                                          \
  "smlabt %[a2], %[l2], %[B], %[a2]\n\t" "smlad %[a3], %[l2], %[B], %[a3]\n\t"
/* stride 2 (17 instructions, 20 MACs): KA (A0, A1), KB2 the offset of B2; O4, O8 of (L4, L6), (L8, L10) */
#define CM_DW5_S2_ROW(KA, KB2, LD, O4, O8)                                                                 \
  "ldrd %[A], %[B], [%[k], #" KA "]\n\t"                                                                    \
  "ldrd %[l0], %[l2], " LD "\n\t"                                                                           \
  "smlad %[a0], %[l0], %[A], %[a0]\n\t" "smlad %[a0], %[l2], %[B], %[a0]\n\t"                              \
  "smlad %[a1], %[l2], %[A], %[a1]\n\t"                                                                     \
  "ldrd %[l0], %[l2], [%[p], #" O4 "]\n\t"                                                                  \
  "smlad %[a1], %[l0], %[B], %[a1]\n\t" "smlad %[a2], %[l0], %[A], %[a2]\n\t"                              \
  "smlad %[a2], %[l2], %[B], %[a2]\n\t" "smlad %[a3], %[l2], %[A], %[a3]\n\t"                              \
  "ldr %[A], [%[k], #" KB2 "]\n\t"                                                                          \
  "smlabt %[a0], %[l0], %[A], %[a0]\n\t" "smlabt %[a1], %[l2], %[A], %[a1]\n\t"                            \
  "ldrd %[l0], %[l2], [%[p], #" O8 "]\n\t"                                                                  \
  "smlad %[a3], %[l0], %[B], %[a3]\n\t" "smlabt %[a2], %[l0], %[A], %[a2]\n\t"                             \
  "smlabt %[a3], %[l2], %[A], %[a3]\n\t"

#define CM_DWK_ASM_OUT                                                                                       \
  : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [A] "=&r"(A), [B] "=&r"(B),            \
    [l0] "=&r"(l0), [l2] "=&r"(l2), [p] "+r"(p), [o] "+r"(o), [e] "+r"(e)                                    \
  : [k] "r"(k), [ws] "r"(ws), [skip] "m"(skip), [rowb] "m"(rowb), [fin] "m"(fin)                             \
  : "cc", "memory")
/* the tail of a block: the four sums stored, acc[4 b .. 4 b + 3]; at a row's end (o = e) p moves on to the
 * next output row's plane row (skip bytes) and e to the end of its sums, until o reaches fin */
#define CM_DWK_STORE "strd %[a2], %[a3], [%[o], #8]\n\t" "strd %[a0], %[a1], [%[o]], #16\n\t" \
                     "cmp %[o], %[e]\n\t" "bne 1b\n\t"                                              \
                     "ldr %[l0], %[skip]\n\t" "add %[p], %[p], %[l0]\n\t"                            \
                     "ldr %[l0], %[rowb]\n\t" "add %[e], %[e], %[l0]\n\t"                            \
                     "ldr %[l0], %[fin]\n\t" "cmp %[o], %[l0]\n\t" "bne 1b\n\t"
/* 3x3: ROW (CM_DW3_S1_ROW or _S2_ROW) for the three kernel rows, STEP the bytes row 0 moves p by */
#define CM_DW3_LOOP(ROW, STEP)                                                                               \
  __asm__ volatile("1:\n\t"                                                                                  \
                   ROW(CM_DW3_FIRST, "0", "[%[p]], #" STEP) "add %[p], %[p], %[ws]\n\t"                       \
                   ROW(CM_DW3_NEXT, "8", "[%[p], #-" STEP "]") "add %[p], %[p], %[ws]\n\t"                    \
                   ROW(CM_DW3_NEXT, "16", "[%[p], #-" STEP "]") "sub %[p], %[p], %[ws], lsl #1\n\t"           \
                   CM_DWK_STORE CM_DWK_ASM_OUT
#endif

/* the MACs of nr output rows, 4 outputs a block (nblk >= 1 a row), into acc (a row's sums 4 nblk apart):
 * 2 x (bias + the taps' sum), i.e. bias2 + the doubled weights' sum; r: the first row's first plane row
 * (word-aligned), ws: the plane row pitch in bytes, rstep: the bytes between output rows' first plane rows */
__attribute__((always_inline)) static inline void cm_dwk_macs(const int16_t *r, int32_t ws, int32_t rstep,
                                                              const cm_dwk_ch *kc, int32_t nblk, int32_t nr, int32_t K,
                                                              int32_t sw, int32_t *acc) {
#ifdef __OPTIMIZE__
  if (K == 3 || K == 5) {
    const uint32_t *k = &kc->ab[0];
    const char *p = (const char *)r;
    int32_t *o = acc, *e = acc + 4 * nblk;
    const int32_t skip = rstep - nblk * 8 * sw, rowb = 16 * nblk;   /* p moves 8 sw bytes a block */
    const int32_t *const fin = acc + 4 * nblk * nr;
    int32_t a0, a1, a2, a3;
    uint32_t A, B, l0, l2;
    if (K == 3 && sw == 1)
      CM_DW3_LOOP(CM_DW3_S1_ROW, "8");
    else if (K == 3)
      CM_DW3_LOOP(CM_DW3_S2_ROW, "16");
    else if (sw == 1)   /* row 0 steps p by 8 (post-indexed), the others read from p - 8 */
      __asm__ volatile("1:\n\t"
                       "ldrd %[a0], %[a1], [%[k], #" CM_DWK_BIAS2 "]\n\t" "ldrd %[a2], %[a3], [%[k], #" CM_DWK_BIAS2 "]\n\t"
                       CM_DW5_S1_ROW("0", "8", "[%[p]], #8", "0", "4") "add %[p], %[p], %[ws]\n\t"
                       CM_DW5_S1_ROW("16", "24", "[%[p], #-8]", "0", "4") "add %[p], %[p], %[ws]\n\t"
                       CM_DW5_S1_ROW("32", "40", "[%[p], #-8]", "0", "4") "add %[p], %[p], %[ws]\n\t"
                       CM_DW5_S1_ROW("48", "56", "[%[p], #-8]", "0", "4") "add %[p], %[p], %[ws]\n\t"
                       CM_DW5_S1_ROW("64", "72", "[%[p], #-8]", "0", "4") "sub %[p], %[p], %[ws], lsl #2\n\t"
                       CM_DWK_STORE CM_DWK_ASM_OUT;
    else                /* row 0 steps p by 16, the others read from p - 16 */
      __asm__ volatile("1:\n\t"
                       "ldrd %[a0], %[a1], [%[k], #" CM_DWK_BIAS2 "]\n\t" "ldrd %[a2], %[a3], [%[k], #" CM_DWK_BIAS2 "]\n\t"
                       CM_DW5_S2_ROW("0", "12", "[%[p]], #16", "-8", "0") "add %[p], %[p], %[ws]\n\t"
                       CM_DW5_S2_ROW("16", "28", "[%[p], #-16]", "-8", "0") "add %[p], %[p], %[ws]\n\t"
                       CM_DW5_S2_ROW("32", "44", "[%[p], #-16]", "-8", "0") "add %[p], %[p], %[ws]\n\t"
                       CM_DW5_S2_ROW("48", "60", "[%[p], #-16]", "-8", "0") "add %[p], %[p], %[ws]\n\t"
                       CM_DW5_S2_ROW("64", "76", "[%[p], #-16]", "-8", "0") "sub %[p], %[p], %[ws], lsl #2\n\t"
                       CM_DWK_STORE CM_DWK_ASM_OUT;
    return;
  }
#endif
  const int32_t WP = ws / 2, m = K / 2, nw = K - 1;
  for (int32_t b = 0; b < nblk * nr; b++, r += 4 * sw) {
    if (b && b % nblk == 0) r += rstep / 2 - nblk * 4 * sw;   /* the next output row */
    int32_t a[4] = {kc->bias2, kc->bias2, kc->bias2, kc->bias2};
    for (int32_t kr = 0; kr < K; kr++) {
      const int16_t *p = r + kr * WP;
      const uint32_t *A = &kc->ab[kr * nw], *B = A + m - 1;   /* B[i] = B_i, 1 <= i <= m */
      for (int32_t j = 0; j < 4; j++) {
        const int32_t e = sw == 1 ? j & ~1 : 2 * j;   /* the output's even start column */
        int32_t v = a[j];
        if (sw == 2 || !(j & 1)) {
          for (int32_t i = 0; i < m; i++) v = __smlad((int16x2_t)cm_ld32h(p + e + 2 * i), (int16x2_t)A[i], v);
          v = __smlabt((int16x2_t)cm_ld32h(p + e + 2 * m), (int16x2_t)B[m], v);
        } else {
          v = __smlatb((int16x2_t)cm_ld32h(p + e), (int16x2_t)A[0], v);
          for (int32_t i = 1; i <= m; i++) v = __smlad((int16x2_t)cm_ld32h(p + e + 2 * i), (int16x2_t)B[i], v);
        }
        a[j] = v;
      }
    }
    acc[4 * b] = a[0]; acc[4 * b + 1] = a[1]; acc[4 * b + 2] = a[2]; acc[4 * b + 3] = a[3];
  }
}

#endif
