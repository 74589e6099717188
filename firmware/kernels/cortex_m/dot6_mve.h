/* Private to firmware/kernels/cortex_m/ (included by linear.c and cm_gemm.h, with CM_MVE): the Helium dot
 * products of one input row against six weight rows a pass (the linear's, and a one-pixel pointwise
 * convolution's). */
#ifndef ET_CORTEX_M_DOT6_MVE_H
#define ET_CORTEX_M_DOT6_MVE_H

/* d[n] = x . w_n for 6 * groups rows (K apart, K > 0), in asm: six weight rows a pass over the input
 * (one input load feeds six vmladava: 14 instructions per 96 MACs), the K & 15 tail predicated (no
 * read past a row); the pass bookkeeping lives in a frame the asm pushes (d, groups left, the step
 * from a row pointer after its row to the next group's, x, trips, tail). */
#ifdef __OPTIMIZE__  /* the asm needs r7 (the frame pointer at -O0) */
#define QL_ASM 1
#define QL_DOT6_HEAD \
      "ldm r0, {r0, r2, r4, r6, r8, r10}\n\t" \
      "push {r0, r2, r4, r6, r8, r10}\n" \
      "1:\n\t" \
      "movs r0, #0\n\t" \
      "movs r2, #0\n\t" \
      "movs r4, #0\n\t" \
      "movs r6, #0\n\t" \
      "mov r8, #0\n\t" \
      "mov r10, #0\n\t" \
      "ldr r1, [sp, #12]\n\t" \
      "ldr lr, [sp, #16]\n\t" \
      "wls lr, lr, 3f\n" \
      "2:\n\t" \
      "vldrb.u8 q0, [r1], #16\n\t" \
      "vldrb.u8 q1, [r3], #16\n\t" \
      "vmladava.s8 r0, q0, q1\n\t" \
      "vldrb.u8 q1, [r5], #16\n\t" \
      "vmladava.s8 r2, q0, q1\n\t" \
      "vldrb.u8 q1, [r7], #16\n\t" \
      "vmladava.s8 r4, q0, q1\n\t" \
      "vldrb.u8 q1, [r9], #16\n\t" \
      "vmladava.s8 r6, q0, q1\n\t" \
      "vldrb.u8 q1, [r11], #16\n\t" \
      "vmladava.s8 r8, q0, q1\n\t" \
      "vldrb.u8 q1, [r12], #16\n\t" \
      "vmladava.s8 r10, q0, q1\n\t" \
      "le lr, 2b\n" \
      "3:\n\t"
#define QL_DOT6_TAIL \
      "ldr lr, [sp, #20]\n\t" \
      "vctp.8 lr\n\t" \
      "vpstttt\n\t" \
      "vldrbt.u8 q0, [r1]\n\t" \
      "vldrbt.u8 q1, [r3]\n\t" \
      "vldrbt.u8 q2, [r5]\n\t" \
      "vldrbt.u8 q3, [r7]\n\t" \
      "vmladava.s8 r0, q0, q1\n\t" \
      "vmladava.s8 r2, q0, q2\n\t" \
      "vmladava.s8 r4, q0, q3\n\t" \
      "vpsttt\n\t" \
      "vldrbt.u8 q1, [r9]\n\t" \
      "vldrbt.u8 q2, [r11]\n\t" \
      "vldrbt.u8 q3, [r12]\n\t" \
      "vmladava.s8 r6, q0, q1\n\t" \
      "vmladava.s8 r8, q0, q2\n\t" \
      "vmladava.s8 r10, q0, q3\n\t"
#define QL_DOT6_REST \
      "ldr lr, [sp, #0]\n\t" \
      "stm lr!, {r0, r2, r4, r6, r8, r10}\n\t" \
      "str lr, [sp, #0]\n\t" \
      "ldr lr, [sp, #8]\n\t" \
      "add r3, r3, lr\n\t" \
      "add r5, r5, lr\n\t" \
      "add r7, r7, lr\n\t" \
      "add r9, r9, lr\n\t" \
      "add r11, r11, lr\n\t" \
      "add r12, r12, lr\n\t" \
      "ldr lr, [sp, #4]\n\t" \
      "subs lr, lr, #1\n\t" \
      "str lr, [sp, #4]\n\t" \
      "bne 1b\n\t" \
      "add sp, sp, #24"
#define QL_DOT6_OPERANDS \
      : "+r"(r0), "+r"(w0), "+r"(w1), "+r"(w2), "+r"(w3), "+r"(w4), "+r"(w5) \
      : \
      : "r1", "r2", "r4", "r6", "r8", "r10", "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "memory", "cc"
CM_UNUSED __attribute__((noinline)) static void qlin_dot6(const int8_t *x, const int8_t *w, int32_t K, int32_t groups,
                                                          int32_t *d) {
  const int32_t fr[6] = {(int32_t)(uintptr_t)d, groups, 6 * K - 16 * (K >> 4), (int32_t)(uintptr_t)x, K >> 4, K & 15};
  register const int32_t *r0 __asm__("r0") = fr;
  register const int8_t *w0 __asm__("r3") = w;
  register const int8_t *w1 __asm__("r5") = w + K;
  register const int8_t *w2 __asm__("r7") = w + 2 * K;
  register const int8_t *w3 __asm__("r9") = w + 3 * K;
  register const int8_t *w4 __asm__("r11") = w + 4 * K;
  register const int8_t *w5 __asm__("r12") = w + 5 * K;
  if (K & 15) __asm__ volatile(QL_DOT6_HEAD QL_DOT6_TAIL QL_DOT6_REST QL_DOT6_OPERANDS);
  else __asm__ volatile(QL_DOT6_HEAD QL_DOT6_REST QL_DOT6_OPERANDS);
}
#undef QL_DOT6_HEAD
#undef QL_DOT6_TAIL
#undef QL_DOT6_REST
#undef QL_DOT6_OPERANDS
#else
#define QL_ASM 0
CM_UNUSED static void qlin_dot6(const int8_t *x, const int8_t *w, int32_t K, int32_t groups, int32_t *d) {
  (void)x; (void)w; (void)K; (void)groups; (void)d;
}
#endif

#endif
