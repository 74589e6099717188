/* Private to firmware/kernels/cortex_m/ (included by gemm_tile_mve.h): the second phase of the two-phase
 * Helium GEMM, the requantisation of a tile's sums ([pixel][4] int32) to int8 outputs: four channels
 * with the pixels on the lanes (qt_requant4, asm), or one channel at a time (qt_requant1). */
#ifndef ET_CORTEX_M_GEMM_REQUANT_MVE_H
#define ET_CORTEX_M_GEMM_REQUANT_MVE_H

/* The group's output parameters: scalars per channel, and the clamp folded into byte constants */
typedef struct {
  int32_t m[4], s[4];  /* 0, 16: a partial group's (qt_requant1) */
  uint32_t off[4];     /* 32: byte offsets of four output pixels */
  uint8_t d[16];       /* 48: amax - amin, on every byte */
  int32_t c16;         /* 64: out_off - amin */
  int32_t lo;          /* 68: amin */
  int32_t n4, rem;     /* 72: whole quads and pixels left of a run (qt_requant4) */
  const int32_t *mp, *sp;   /* 80: qt_requant4g: the group's multipliers and shifts */
  int32_t gleft;       /* 88: groups left, this one included */
  const int32_t *sg;   /* 92: the group's sums */
  int32_t sstep;       /* 96: bytes of sums a group */
  int32_t pad_[3];
  uint32_t yq[4];      /* 112: the group's first four output pixels' addresses */
} qt_out;
_Static_assert(offsetof(qt_out, off) == 32 && offsetof(qt_out, d) == 48 && offsetof(qt_out, n4) == 72 &&
               offsetof(qt_out, mp) == 80 && offsetof(qt_out, sstep) == 96 && offsetof(qt_out, yq) == 112,
               "qt_requant4 offsets");

/* np pixels' four channels from S ([pixel][4]) to y + p * ys (word-aligned, ys a multiple of 4), in asm:
 * 29 instructions per 16 outputs; a last partial quad the same with its store predicated. q6 holds the
 * four pixels' addresses. The clamp: (v + out_off - amin) saturated to uint8 (the narrows), min
 * amax - amin, + amin, mod 256. */
#if QT_ASM
#define QT_REQ4_BODY \
      "vld40.32 {q0, q1, q2, q3}, [r8]\n\t" \
      "vld41.32 {q0, q1, q2, q3}, [r8]\n\t" \
      "vld42.32 {q0, q1, q2, q3}, [r8]\n\t" \
      "vld43.32 {q0, q1, q2, q3}, [r8]!\n\t" \
      "vshr.s32 q4, q0, #31\n\t" \
      "vqrdmlah.s32 q4, q0, r0\n\t" \
      "vshr.s32 q5, q2, #31\n\t" \
      "vqrdmlah.s32 q5, q2, r2\n\t" \
      "vrshl.s32 q4, r4\n\t" \
      "vrshl.s32 q5, r6\n\t" \
      "vqmovnb.s32 q0, q4\n\t" \
      "vqmovnt.s32 q0, q5\n\t" \
      "vshr.s32 q4, q1, #31\n\t" \
      "vqrdmlah.s32 q4, q1, r1\n\t" \
      "vshr.s32 q5, q3, #31\n\t" \
      "vqrdmlah.s32 q5, q3, r3\n\t" \
      "vrshl.s32 q4, r5\n\t" \
      "vrshl.s32 q5, r7\n\t" \
      "vqmovnb.s32 q1, q4\n\t" \
      "vqmovnt.s32 q1, q5\n\t" \
      "vqadd.s16 q0, q0, r11\n\t" \
      "vqadd.s16 q1, q1, r11\n\t"
#define QT_REQ4_CLAMP \
      "vqmovunb.s16 q2, q0\n\t" \
      "vqmovunt.s16 q2, q1\n\t" \
      "vmin.u8 q2, q2, q7\n\t" \
      "vadd.i8 q2, q2, r12\n\t"
/* the clamp range all of int8: a saturating narrow (r11 holds out_off itself) */
#define QT_REQ4_FULL \
      "vqmovnb.s16 q2, q0\n\t" \
      "vqmovnt.s16 q2, q1\n\t"
__attribute__((noinline)) static void qt_requant4(const int32_t *S, int32_t np, int8_t *y, int32_t ys, qt_out *o,
                                                  const int32_t *mult, const int32_t *shift) {
  o->n4 = np >> 2;
  o->rem = np & 3;
  register qt_out *ro __asm__("r0") = o;
  register const int32_t *rm __asm__("r2") = mult;
  register const int32_t *rsh __asm__("r4") = shift;
  register const int32_t *rs __asm__("r8") = S;
  register int8_t *ry __asm__("r9") = y;
  register int32_t rys __asm__("r10") = 4 * ys;
  register int32_t rc __asm__("r11") = o->c16;
  register int32_t rlo __asm__("r12") = o->lo;
  __asm__ volatile(
      "vldrw.u32 q6, [r0, #32]\n\t"
      "vldrw.u32 q7, [r0, #48]\n\t"
      "vadd.i32 q6, q6, r9\n\t"
      "ldrd lr, r9, [r0, #72]\n\t"
      "ldm r2, {r0, r1, r2, r3}\n\t"
      "ldm r4, {r4, r5, r6, r7}\n\t"
      "wls lr, lr, 2f\n"
      "1:\n\t"
      QT_REQ4_BODY QT_REQ4_CLAMP
      "vstrw.32 q2, [q6]\n\t"
      "vadd.i32 q6, q6, r10\n\t"
      "le lr, 1b\n"
      "2:\n\t"
      "cmp r9, #0\n\t"
      "beq 3f\n\t"
      QT_REQ4_BODY QT_REQ4_CLAMP
      "vctp.32 r9\n\t"
      "vpst\n\t"
      "vstrwt.32 q2, [q6]\n"
      "3:"
      : "+r"(ro), "+r"(rs), "+r"(ry), "+r"(rm), "+r"(rsh)
      : "r"(rys), "r"(rc), "r"(rlo)
      : "r1", "r3", "r5", "r6", "r7", "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9",
        "d10", "d11", "d12", "d13", "d14", "d15", "memory", "cc");
}

/* qt_requant4 over o->gleft >= 1 groups of four channels: group g's sums at o->sg + g * o->sstep bytes,
 * its outputs at yq + 4 g, its multipliers and shifts at o->mp / o->sp + 4 g (o->n4, rem, yq, mp, sp, sg,
 * sstep set; yq is advanced). About 25 instructions a group on top of qt_requant4's; with the clamp range
 * all of int8 (full) 27 instructions per 16 outputs instead of 29. */
#define QT_REQ4G_ASM(CLAMP) \
  __asm__ volatile( \
      "vldrw.u32 q7, [r0, #48]\n\t" \
      "push {r0}\n" \
      "0:\n\t" \
      "ldr lr, [sp]\n\t" \
      "vldrw.u32 q6, [lr, #112]\n\t" \
      "movs r9, #4\n\t" \
      "vadd.i32 q5, q6, r9\n\t" \
      "vstrw.32 q5, [lr, #112]\n\t" \
      "ldrd r0, r4, [lr, #80]\n\t" \
      "add r1, r0, #16\n\t" \
      "add r5, r4, #16\n\t" \
      "strd r1, r5, [lr, #80]\n\t" \
      "ldm r0, {r0, r1, r2, r3}\n\t" \
      "ldm r4, {r4, r5, r6, r7}\n\t" \
      "ldrd r8, r9, [lr, #92]\n\t" \
      "add r9, r8, r9\n\t" \
      "str r9, [lr, #92]\n\t" \
      "ldrd lr, r9, [lr, #72]\n\t" \
      "wls lr, lr, 2f\n" \
      "1:\n\t" \
      QT_REQ4_BODY CLAMP \
      "vstrw.32 q2, [q6]\n\t" \
      "vadd.i32 q6, q6, r10\n\t" \
      "le lr, 1b\n" \
      "2:\n\t" \
      "cmp r9, #0\n\t" \
      "beq 3f\n\t" \
      QT_REQ4_BODY CLAMP \
      "vctp.32 r9\n\t" \
      "vpst\n\t" \
      "vstrwt.32 q2, [q6]\n" \
      "3:\n\t" \
      "ldr lr, [sp]\n\t" \
      "ldr r9, [lr, #88]\n\t" \
      "subs r9, r9, #1\n\t" \
      "str r9, [lr, #88]\n\t" \
      "bne 0b\n\t" \
      "add sp, sp, #4" \
      : "+r"(ro) \
      : "r"(rys), "r"(rc), "r"(rlo) \
      : "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", \
        "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15", "memory", "cc")
__attribute__((noinline)) static void qt_requant4g(qt_out *o, int32_t ys) {
  const bool full = o->lo == -128 && o->d[0] == 255;   /* amin -128, amax 127 */
  register qt_out *ro __asm__("r0") = o;
  register int32_t rys __asm__("r10") = 4 * ys;
  register int32_t rc __asm__("r11") = full ? o->c16 + o->lo : o->c16;
  register int32_t rlo __asm__("r12") = o->lo;
  if (full) QT_REQ4G_ASM(QT_REQ4_FULL);
  else QT_REQ4G_ASM(QT_REQ4_CLAMP);
}
#undef QT_REQ4G_ASM
#undef QT_REQ4_BODY
#undef QT_REQ4_CLAMP
#undef QT_REQ4_FULL
#else
static void qt_requant4(const int32_t *S, int32_t np, int8_t *y, int32_t ys, qt_out *o, const int32_t *mult,
                        const int32_t *shift) {
  (void)S; (void)np; (void)y; (void)ys; (void)o; (void)mult; (void)shift;
}
static void qt_requant4g(qt_out *o, int32_t ys) { (void)o; (void)ys; }
#endif

/* one channel (word c of S's [pixel][4]) of np pixels to y + p * ys */
CM_HOT static void qt_requant1(const int32_t *S, int32_t np, int8_t *y, int32_t ys, int32_t m, int32_t s, int32_t oo,
                               int32_t lo, int32_t hi) {
  const uint32x4_t off = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)ys), soff = vmulq_n_u32(vidupq_n_u32(0, 1), 16u);
  const int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
  for (int32_t p = 0; p < np; p += 4, S += 16, y += 4 * ys) {
    const int32x4_t v = vldrwq_gather_offset_s32(S, soff);
    const int32x4_t r = vqaddq_n_s32(vrshlq_n_s32(vqrdmlahq_n_s32(vshrq_n_s32(v, 31), v, m), s), oo);
    vstrbq_scatter_offset_p_s32(y, off, vminq_s32(vmaxq_s32(r, vlo), vhi), vctp32q((uint32_t)(np - p)));
  }
}

#endif
