/* Private to depthwise.c (one translation unit), included by dw_patch_mve.h: the patch path's pass tables and
 * quad planes (see dw_patch_mve.h). */
#ifndef ET_CM_DW_PATCH_PLANE_MVE_H
#define ET_CM_DW_PATCH_PLANE_MVE_H

/* The pass table of a band and chunk (the same for all of them): per pass the blocks' patch pointers (into the
 * plane), then the 8 outputs' byte offsets from the band and chunk's first output. The 16-bit lane of the pass's
 * output vector that holds position q of block b (see the asm's vmovs) is lanes[b opb + q] in every mode;
 * position q's place in its block: pos[q]. */
__attribute__((always_inline)) static inline void qdp_table_run(const qdp_geo *g, const qconv *c, const int8_t *plane,
                                                                int8_t *tab, const int32_t bh, const int32_t bw,
                                                                const int32_t bpp, const int32_t pb, const int32_t cow) {
  static const uint8_t ln[8] = {0, 4, 2, 6, 1, 5, 3, 7};
  const int32_t nb = g->nb, opb = 8 / bpp;
  const ptrdiff_t ysh = c->y.sh, ysw = c->y.sw, prow = 4 * (ptrdiff_t)g->s * g->Wp, pcol = 4 * (ptrdiff_t)g->s;
  const ptrdiff_t rowB = 12 * (ptrdiff_t)g->Wp;
  int32_t pos[4];
  for (int32_t q = 0; q < opb; q++)   /* 2x2, 1x2, 2x1, 1x1 blocks */
    pos[q] = (int32_t)((bh == 2 ? (bw == 2 ? q >> 1 : q) : 0) * ysh + (bw == 2 ? q & 1 : 0) * ysw);
  /* a pass's 8 offsets in one go: lane ln[b opb + q] = ob[b] + pos[q] (a halfword gather of the blocks' first
   * offsets by their lanes' block, plus the lanes' place in their block) */
  uint16_t lb[8] __attribute__((aligned(16))), lp[8] __attribute__((aligned(16))), ob[8];
  for (int32_t b = 0; b < bpp; b++)
    for (int32_t q = 0; q < opb; q++) { lb[ln[b * opb + q]] = (uint16_t)b; lp[ln[b * opb + q]] = (uint16_t)pos[q]; }
  const uint16x8_t vlb = vld1q_u16(lb), vlp = vld1q_u16(lp);
  const int32_t nbr = (nb + bh - 1) / bh, nbc = (cow + bw - 1) / bw, rw = pb * bpp + 4;   /* rw: words a pass */
  uint32_t *t = (uint32_t *)(void *)tab;
  int32_t b = 0;
  const int8_t *a = plane;
  int32_t o = 0;
  /* an odd last row or column of blocks: moved back (overlap); the blocks of a row by steps of bw columns */
  const int32_t lastj = cow - bw, stepo = (int32_t)(bw * ysw);
  const ptrdiff_t stepa = bw * pcol;
  for (int32_t r = 0; r < nbr; r++) {
    const int32_t ii = r * bh + bh > nb ? nb - bh : r * bh;
    const int8_t *ca = plane + ii * prow;
    int32_t co = (int32_t)(ii * ysh);
    for (int32_t jj = 0, cb = 0; cb < nbc; cb++, jj += bw, ca += stepa, co += stepo) {
      if (jj > lastj) { ca -= (jj - lastj) * pcol; co -= (int32_t)((jj - lastj) * ysw); jj = lastj; }
      a = ca;
      o = co;
      t[b * pb] = (uint32_t)(uintptr_t)a;
      if (pb == 2) t[b * pb + 1] = (uint32_t)(uintptr_t)(a + rowB);
      ob[b] = (uint16_t)o;
      if (++b == bpp) {
        vst1q_u16((uint16_t *)(void *)(t + pb * bpp), vaddq_u16(vldrhq_gather_shifted_offset_u16(ob, vlb), vlp));
        b = 0;
        t += rw;
      }
    }
  }
  if (b > 0 && g->mhalf) {   /* 3x3 stride 1, an odd block last: a half pass (its pointer, then 16-bit lanes 2m and
                             * 2m + 1 hold the block's lane m: top-left, bottom-left, top-right, bottom-right) */
    uint16_t *const off = (uint16_t *)(t + 1);
    t[0] = (uint32_t)(uintptr_t)a;
    off[0] = off[1] = (uint16_t)o;
    off[2] = off[3] = (uint16_t)(o + ysh);
    off[4] = off[5] = (uint16_t)(o + ysw);
    off[6] = off[7] = (uint16_t)(o + ysh + ysw);
  } else if (b > 0) {   /* a last pass short of blocks: the last one again */
    for (; b < bpp; b++) {
      t[b * pb] = (uint32_t)(uintptr_t)a;
      if (pb == 2) t[b * pb + 1] = (uint32_t)(uintptr_t)(a + rowB);
      ob[b] = (uint16_t)o;
    }
    vst1q_u16((uint16_t *)(void *)(t + pb * bpp), vaddq_u16(vldrhq_gather_shifted_offset_u16(ob, vlb), vlp));
  }
}
__attribute__((noinline)) static void qdp_table(const qdp_geo *g, const qconv *c, const int8_t *plane, int8_t *tab) {
  switch (g->mode) {
    case 0: qdp_table_run(g, c, plane, tab, 2, 2, 2, 1, g->passes2 || g->half ? g->cow - 1 : g->cow); break;
    case 1: qdp_table_run(g, c, plane, tab, 1, 2, 4, 1, g->cow); break;
    case 2: qdp_table_run(g, c, plane, tab, 2, 1, 4, 2, g->cow); break;
    default: qdp_table_run(g, c, plane, tab, 1, 1, 8, 2, g->cow); break;
  }
  if (!g->passes2 && !g->half) return;
  /* the last column's 2x1 blocks, four a pass (lanes as in the 1x2 / 2x1 modes), after the first loop's passes */
  const int32_t nb = g->nb, j = g->cow - 1;
  const ptrdiff_t ysh = c->y.sh, prow = 4 * (ptrdiff_t)g->Wp;
  uint32_t *t = (uint32_t *)(void *)(tab + g->passes * g->rec + 20 * g->mhalf);
  int32_t o = 0;
  const int32_t nbr = (nb + 1) / 2, nfull = g->half ? 4 * g->passes2 : nbr;   /* blocks of the 4-block passes */
  const int8_t *const a0 = plane + 4 * j;
  const int32_t o0 = (int32_t)(j * c->y.sw);
  /* blocks by steps of 2 rows but the last (moved back) and the repeats after it: the last */
  const int32_t il = 2 * nfull > nb ? nb - 2 : 2 * nfull - 2;
  const uint32_t al = (uint32_t)(uintptr_t)(a0 + il * prow);
  const int32_t ol = o0 + (int32_t)(il * ysh), d2 = (int32_t)(2 * ysh);
  uint32_t a = (uint32_t)(uintptr_t)a0, d1 = (uint32_t)(2 * prow);
  o = o0;
  for (int32_t p = 0, n = 0; p < g->passes2; p++, t += 8) {
    uint16_t *const off = (uint16_t *)(t + 4);
    for (int32_t b = 0; b < 4; b++, n++, a += d1, o += d2) {   /* lanes ln[2 b], ln[2 b + 1] of {0, 4, 2, 6, 1, 5, 3, 7} */
      const bool last = n >= nfull - 1;
      const int32_t ob = last ? ol : o;
      t[b] = last ? al : a;
      off[(b & 1) * 2 + (b >> 1)] = (uint16_t)ob;
      off[(b & 1) * 2 + (b >> 1) + 4] = (uint16_t)(ob + ysh);
    }
  }
  if (g->half) {   /* the last 1 or 2 blocks (the last again): 2 pointers, then 16-bit lanes 2m and 2m + 1 hold the
                    * half pass's lane m (m = block, block + 2: its top, bottom) */
    uint16_t *const off = (uint16_t *)(t + 2);
    for (int32_t k = 0, n = nfull; k < 2; k++, n = n + 1 < nbr ? n + 1 : n) {
      const int32_t ii = 2 * n + 2 > nb ? nb - 2 : 2 * n;
      t[k] = (uint32_t)(uintptr_t)(plane + ii * prow + 4 * j);
      o = (int32_t)(ii * ysh + j * c->y.sw);
      off[2 * k] = off[2 * k + 1] = (uint16_t)o;
      off[2 * k + 4] = off[2 * k + 5] = (uint16_t)(o + ysh);
    }
  }
}

/* Rows [0, Hp) of the quad plane for channels c0 .. c0 + 3 (xn: channel c0 of the image) of the band and chunk
 * whose first window is at input (ih0, iw0). Rows outside the input are filled with -in_off here when prows,
 * columns outside it when pcols (else they still hold the call's first fill). aligned: the 4 channels are a word at
 * every pixel (C % 4 == 0), rtab: the interior is one run of NHWC pixels (whole rows, no column chunks), copied
 * 4 pixels a gather and scattered by rtab's plane offsets. */
typedef struct { const qdp_geo *g; const int8_t *xn; int8_t *plane; const uint32_t *rtab; int32_t H, W, live, qstep;
                 ptrdiff_t xsh, xsw; bool aligned, pcols, prows; int8x16_t vpad; } qdp_src;
/* rows of cw pixels (4 channels a word, step bytes apart) into plane rows pitch bytes apart: a word gather of 4
 * pixels a store */
__attribute__((noinline)) static void qdp_rows4(int8_t *dst, const int8_t *src, int32_t rows, int32_t cw, ptrdiff_t xsh,
                                                int32_t pitch, uint32x4_t offw, int32_t step) {
#if QDP_ASM   /* a tail-predicated loop a row (rows, cw >= 1): 3 instructions a store, 6 a row */
  uint32x4_t o = offw;
  register int8_t *r0 __asm__("r0") = dst;
  register const int8_t *r1 __asm__("r1") = src;
  register int32_t r2 __asm__("r2") = rows, r3 __asm__("r3") = cw, r4 __asm__("r4") = (int32_t)xsh;
  register int32_t r5 __asm__("r5") = pitch, r6 __asm__("r6") = step;
  __asm__ volatile(
      "vldrw.u32 q0, [%[o]]\n"
      "1:\n\t"
      "mov r8, r1\n\t"
      "mov r9, r0\n\t"
      "dlstp.32 lr, r3\n"
      "2:\n\t"
      "vldrw.u32 q1, [r8, q0]\n\t"
      "vstrw.32 q1, [r9], #16\n\t"
      "add r8, r8, r6\n\t"
      "letp lr, 2b\n\t"
      "add r1, r1, r4\n\t"
      "add r0, r0, r5\n\t"
      "subs r2, r2, #1\n\t"
      "bne 1b"
      : "+r"(r0), "+r"(r1), "+r"(r2)
      : [o] "r"(&o), "r"(r3), "r"(r4), "r"(r5), "r"(r6), "m"(o)
      : "r8", "r9", "lr", "d0", "d1", "d2", "d3", "memory", "cc");
#else
  const int32_t n4 = cw >> 2;
  const mve_pred16_t pt = vctp32q((uint32_t)(cw & 3));
  for (; rows > 0; rows--, src += xsh, dst += pitch) {
    const int8_t *s = src;
    uint32_t *d = (uint32_t *)(void *)dst;
    for (int32_t j = n4; j > 0; j--, s += step, d += 4)
      vst1q_u32(d, vldrwq_gather_offset_u32((const uint32_t *)(const void *)s, offw));
    if (pt) vstrwq_p_u32(d, vldrwq_gather_offset_z_u32((const uint32_t *)(const void *)s, offw, pt), pt);
  }
#endif
}
/* rows of cw pixels (4 channels a word, step = 4 xsw <= 508 bytes apart) into whole plane rows (wp >= 4 words,
 * pitch bytes apart; dst: a row's column 0, src: its pixel at column ja) with the padding of an edge chunk: the
 * pad word in columns 0-3 and wp-4 .. wp-1 first, the pixels over them (ja <= 4 and wp - jb <= 4). In asm: two
 * word gathers a 8 pixels (6 instructions), a tail-predicated loop for the last cw & 7, 12 more a row */
__attribute__((noinline)) static void qdp_rowsp(int8_t *dst, const int8_t *src, int32_t rows, int32_t cw, ptrdiff_t xsh,
                                                int32_t pitch, int32_t xsw, int32_t step, int32_t ja, int8x16_t pad) {   /* step: 4 xsw */
#if QDP_ASM
  uint32x4_t v[3];   /* the gathers' offsets of pixels 0-3 and 4-7, the pad word */
  v[0] = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)xsw);
  v[1] = vaddq_n_u32(v[0], (uint32_t)step);
  v[2] = vreinterpretq_u32_s8(pad);
  register const uint32x4_t *r8 __asm__("r8") = v;
  register int8_t *r0 __asm__("r0") = dst;
  register const int8_t *r1 __asm__("r1") = src;
  register int32_t r2 __asm__("r2") = rows, r3 __asm__("r3") = cw >> 3, r4 __asm__("r4") = (int32_t)xsh;
  register int32_t r5 __asm__("r5") = pitch, r6 __asm__("r6") = pitch - 16, r7 __asm__("r7") = 4 * ja;
  register int32_t r10 __asm__("r10") = 2 * step, r11 __asm__("r11") = cw & 7, r12 __asm__("r12") = step;
  __asm__ volatile(
      "vldrw.u32 q0, [r8]\n\t"
      "vldrw.u32 q5, [r8, #16]\n\t"
      "vldrw.u32 q2, [r8, #32]\n"
      "1:\n\t"
      "vstrw.32 q2, [r0]\n\t"
      "add r8, r0, r6\n\t"
      "vstrw.32 q2, [r8]\n\t"
      "add r9, r0, r7\n\t"
      "mov r8, r1\n\t"
      "wls lr, r3, 3f\n"
      "2:\n\t"   /* 8 pixels */
      "vldrw.u32 q3, [r8, q0]\n\t"
      "vstrw.32 q3, [r9], #16\n\t"
      "vldrw.u32 q3, [r8, q5]\n\t"
      "vstrw.32 q3, [r9], #16\n\t"
      "add r8, r8, r10\n\t"
      "le lr, 2b\n"
      "3:\n\t"   /* the last cw & 7 */
      "wlstp.32 lr, r11, 5f\n"
      "4:\n\t"
      "vldrw.u32 q3, [r8, q0]\n\t"
      "vstrw.32 q3, [r9], #16\n\t"
      "add r8, r8, r12\n\t"
      "letp lr, 4b\n"
      "5:\n\t"
      "add r1, r1, r4\n\t"
      "add r0, r0, r5\n\t"
      "subs r2, r2, #1\n\t"
      "bne 1b"
      : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r8)
      : "r"(r3), "r"(r4), "r"(r5), "r"(r6), "r"(r7), "r"(r10), "r"(r11), "r"(r12), "m"(v)
      : "r9", "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d10", "d11", "memory", "cc");
#else
  const uint32x4_t offw = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)xsw);
  const int32_t wp = pitch / 4;
  for (; rows > 0; rows--, src += xsh, dst += pitch) {
    vst1q_s8(dst, pad);
    vst1q_s8(dst + 4 * (wp - 4), pad);
    const int8_t *sp = src;
    uint32_t *d = (uint32_t *)(void *)(dst + 4 * ja);
    for (int32_t j = 0; j < cw; j += 4, sp += step, d += 4) {
      const mve_pred16_t pt = vctp32q((uint32_t)(cw - j));
      vstrwq_p_u32(d, vldrwq_gather_offset_z_u32((const uint32_t *)(const void *)sp, offw, pt), pt);
    }
  }
#endif
}
/* rows [ia, ib) of the 4 quads' planes (qstep bytes apart) as one run of n NHWC pixels scattered by rtab */
__attribute__((noinline)) static void qdp_raster4(int8_t *dst, const int8_t *src, const uint32_t *rt, int32_t n,
                                                  ptrdiff_t qstep, uint32x4_t offw, int32_t step) {
  const uint32x4_t o1 = vaddq_n_u32(offw, 4), o2 = vaddq_n_u32(offw, 8), o3 = vaddq_n_u32(offw, 12);
  uint32_t *const d0 = (uint32_t *)(void *)dst, *const d1 = (uint32_t *)(void *)(dst + qstep);
  uint32_t *const d2 = (uint32_t *)(void *)(dst + 2 * qstep), *const d3 = (uint32_t *)(void *)(dst + 3 * qstep);
  int32_t j = 0;
  for (; j + 4 <= n; j += 4, src += step, rt += 4) {
    const uint32x4_t o = vld1q_u32(rt);
    const uint32_t *const s = (const uint32_t *)(const void *)src;
    vstrwq_scatter_offset_u32(d0, o, vldrwq_gather_offset_u32(s, offw));
    vstrwq_scatter_offset_u32(d1, o, vldrwq_gather_offset_u32(s, o1));
    vstrwq_scatter_offset_u32(d2, o, vldrwq_gather_offset_u32(s, o2));
    vstrwq_scatter_offset_u32(d3, o, vldrwq_gather_offset_u32(s, o3));
  }
  if (j < n) {
    const mve_pred16_t p = vctp32q((uint32_t)(n - j));
    const uint32x4_t o = vld1q_u32(rt);
    const uint32_t *const s = (const uint32_t *)(const void *)src;
    vstrwq_scatter_offset_p_u32(d0, o, vldrwq_gather_offset_z_u32(s, offw, p), p);
    vstrwq_scatter_offset_p_u32(d1, o, vldrwq_gather_offset_z_u32(s, o1, p), p);
    vstrwq_scatter_offset_p_u32(d2, o, vldrwq_gather_offset_z_u32(s, o2, p), p);
    vstrwq_scatter_offset_p_u32(d3, o, vldrwq_gather_offset_z_u32(s, o3, p), p);
  }
}
/* the same for 1 quad (n >= 1). In asm: 8 instructions a 8 pixels, a tail-predicated loop for the last n & 7 */
__attribute__((noinline)) static void qdp_raster1(int8_t *dst, const int8_t *src, const uint32_t *rt, int32_t n,
                                                  uint32x4_t offw, int32_t step) {
#if QDP_ASM
  uint32x4_t v[2];   /* the gathers' offsets of pixels 0-3 and 4-7 */
  v[0] = offw;
  v[1] = vaddq_n_u32(offw, (uint32_t)step);
  register int8_t *r0 __asm__("r0") = dst;
  register const int8_t *r1 __asm__("r1") = src;
  register const uint32_t *r2 __asm__("r2") = rt;
  register int32_t r3 __asm__("r3") = n >> 3, r4 __asm__("r4") = n & 7, r5 __asm__("r5") = step;
  register int32_t r6 __asm__("r6") = 2 * step;
  __asm__ volatile(
      "vldrw.u32 q0, [%[v]]\n\t"
      "vldrw.u32 q3, [%[v], #16]\n\t"
      "wls lr, r3, 2f\n"
      "1:\n\t"
      "vldrw.u32 q1, [r2], #16\n\t"
      "vldrw.u32 q2, [r1, q0]\n\t"
      "vstrw.32 q2, [r0, q1]\n\t"
      "vldrw.u32 q1, [r2], #16\n\t"
      "vldrw.u32 q2, [r1, q3]\n\t"
      "vstrw.32 q2, [r0, q1]\n\t"
      "add r1, r1, r6\n\t"
      "le lr, 1b\n"
      "2:\n\t"
      "wlstp.32 lr, r4, 4f\n"
      "3:\n\t"
      "vldrw.u32 q1, [r2], #16\n\t"
      "vldrw.u32 q2, [r1, q0]\n\t"
      "vstrw.32 q2, [r0, q1]\n\t"
      "add r1, r1, r5\n\t"
      "letp lr, 3b\n"
      "4:"
      : "+r"(r1), "+r"(r2)
      : [v] "r"(v), "r"(r0), "r"(r3), "r"(r4), "r"(r5), "r"(r6), "m"(v)
      : "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "memory");
#else
  uint32_t *const d0 = (uint32_t *)(void *)dst;
  int32_t j = 0;
  for (; j + 4 <= n; j += 4, src += step, rt += 4)
    vstrwq_scatter_offset_u32(d0, vld1q_u32(rt), vldrwq_gather_offset_u32((const uint32_t *)(const void *)src, offw));
  if (j < n) {
    const mve_pred16_t p = vctp32q((uint32_t)(n - j));
    vstrwq_scatter_offset_p_u32(d0, vld1q_u32(rt), vldrwq_gather_offset_z_u32((const uint32_t *)(const void *)src, offw, p), p);
  }
#endif
}
/* the same for 2 quads */
__attribute__((noinline)) static void qdp_raster2(int8_t *dst, const int8_t *src, const uint32_t *rt, int32_t n,
                                                  ptrdiff_t qstep, uint32x4_t offw, int32_t step) {
  const uint32x4_t o1 = vaddq_n_u32(offw, 4);
  uint32_t *const d0 = (uint32_t *)(void *)dst, *const d1 = (uint32_t *)(void *)(dst + qstep);
  int32_t j = 0;
  for (; j + 4 <= n; j += 4, src += step, rt += 4) {
    const uint32x4_t o = vld1q_u32(rt);
    const uint32_t *const s = (const uint32_t *)(const void *)src;
    vstrwq_scatter_offset_u32(d0, o, vldrwq_gather_offset_u32(s, offw));
    vstrwq_scatter_offset_u32(d1, o, vldrwq_gather_offset_u32(s, o1));
  }
  if (j < n) {
    const mve_pred16_t p = vctp32q((uint32_t)(n - j));
    const uint32x4_t o = vld1q_u32(rt);
    const uint32_t *const s = (const uint32_t *)(const void *)src;
    vstrwq_scatter_offset_p_u32(d0, o, vldrwq_gather_offset_z_u32(s, offw, p), p);
    vstrwq_scatter_offset_p_u32(d1, o, vldrwq_gather_offset_z_u32(s, o1, p), p);
  }
}
/* qdp_build's usual small-image case on its own (no bookkeeping of the others): one band and chunk, whole quads, the
 * raster table; ih0 = -ph, iw0 = -pw */
__attribute__((noinline)) static void qdp_build_r(const qdp_src *q, int32_t quads, int32_t ih0, int32_t iw0) {
  const int32_t Wp = q->g->Wp, Hp = q->g->Hp, xsw = (int32_t)q->xsw;
  const int32_t ja = iw0 < 0 ? -iw0 : 0, jb = q->W - iw0 < Wp ? q->W - iw0 : Wp, cw = jb - ja;
  const int32_t ia = ih0 < 0 ? (-ih0 < Hp ? -ih0 : Hp) : 0, ib0 = q->H - ih0 < Hp ? q->H - ih0 : Hp;
  if (cw <= 0 || ib0 <= ia) return;
  const uint32x4_t offw = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)xsw);
  int8_t *dst = q->plane + 4 * ((ptrdiff_t)ia * Wp + ja);
  const int8_t *src = q->xn + (ptrdiff_t)(ih0 + ia) * q->xsh + (ptrdiff_t)(iw0 + ja) * xsw;
  const int32_t n = (ib0 - ia) * cw;
  for (; quads >= 4; quads -= 4, dst += 4 * q->qstep, src += 16) qdp_raster4(dst, src, q->rtab, n, q->qstep, offw, 4 * xsw);
  for (; quads >= 2; quads -= 2, dst += 2 * q->qstep, src += 8) qdp_raster2(dst, src, q->rtab, n, q->qstep, offw, 4 * xsw);
}
/* the call's quads: quad i = channels 4 i.. of xn into the i-th plane */
__attribute__((noinline)) static void qdp_build(const qdp_src *q, int32_t quads, int32_t ih0, int32_t iw0) {
  const int32_t Wp = q->g->Wp, Hp = q->g->Hp;
  const ptrdiff_t xsh = q->xsh, xsw = q->xsw, qstep = q->qstep;
  const int32_t ja = iw0 < 0 ? -iw0 : 0, jb = q->W - iw0 < Wp ? q->W - iw0 : Wp, cw = jb - ja;
  const int32_t ia = ih0 < 0 ? (-ih0 < Hp ? -ih0 : Hp) : 0, ib0 = q->H - ih0 < Hp ? q->H - ih0 : Hp;
  const int32_t ib = cw > 0 && ib0 > ia ? ib0 : ia;   /* interior rows [ia, ib) */
  const int8x16_t vpad = q->vpad;
  for (int32_t i = 0; i < Hp && q->prows; i++) {   /* the rows outside (one band: still the call's fill) */
    if (i == ia) i = ib;
    if (i >= Hp) break;
    for (int32_t k = 0; k < quads; k++) {
      int8_t *d = q->plane + k * qstep + 4 * (ptrdiff_t)i * Wp;
      for (int32_t j = 0; j < 4 * Wp; j += 16) vstrbq_p_s8(d + j, vpad, vctp8q((uint32_t)(4 * Wp - j)));
    }
  }
  if (ib <= ia) return;
  /* whole rows by qdp_rowsp, the padding columns with them */
  const bool r4 = q->rtab && quads >= 2 && q->live == 4 * quads;   /* by qdp_raster4 and qdp_raster2 (whole quads) */
  const bool rowsp = q->aligned && !r4 && ja <= 4 && Wp - jb <= 4 && Wp >= 4;
  if (q->pcols && (ja > 0 || jb < Wp) && !rowsp) {   /* an edge chunk: its padding columns */
    const uint32x4_t vp = vreinterpretq_u32_s8(vpad);
    if (ja <= 4 && Wp - jb <= 4) {   /* the usual: a predicated store each side of a row */
      const mve_pred16_t pl = vctp32q((uint32_t)ja), pr = vctp32q((uint32_t)(Wp - jb));
      for (int32_t k = 0; k < quads; k++) {
        uint32_t *dw = (uint32_t *)(void *)(q->plane + k * qstep + 4 * (ptrdiff_t)ia * Wp);
        for (int32_t i = ia; i < ib; i++, dw += Wp) {
          vstrwq_p_u32(dw, vp, pl);
          vstrwq_p_u32(dw + jb, vp, pr);
        }
      }
    } else {
      const uint32_t padw = vgetq_lane_u32(vp, 0);
      for (int32_t k = 0; k < quads; k++)
        for (int32_t i = ia; i < ib; i++) {
          uint32_t *dw = (uint32_t *)(void *)(q->plane + k * qstep + 4 * (ptrdiff_t)i * Wp);
          for (int32_t j = 0; j < ja; j++) dw[j] = padw;
          for (int32_t j = jb; j < Wp; j++) dw[j] = padw;
        }
    }
  }
  const uint32x4_t offw = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)xsw);
  const ptrdiff_t so = (ptrdiff_t)(ih0 + ia) * xsh + (ptrdiff_t)(iw0 + ja) * xsw, doff = 4 * ((ptrdiff_t)ia * Wp + ja);
  int32_t k0 = 0;
  for (; r4 && k0 + 4 <= quads; k0 += 4)
    qdp_raster4(q->plane + k0 * qstep + doff, q->xn + 4 * k0 + so, q->rtab, (ib - ia) * cw, qstep, offw, 4 * (int32_t)xsw);
  for (; r4 && k0 + 2 <= quads; k0 += 2)
    qdp_raster2(q->plane + k0 * qstep + doff, q->xn + 4 * k0 + so, q->rtab, (ib - ia) * cw, qstep, offw, 4 * (int32_t)xsw);
  for (int32_t k = k0; k < quads; k++) {
    const int32_t live = q->live - 4 * k < 4 ? q->live - 4 * k : 4;
    const int8_t *src = q->xn + 4 * k + so;
    int8_t *dst = q->plane + k * qstep + doff;
    if (q->rtab) {
      qdp_raster1(dst, src, q->rtab, (ib - ia) * cw, offw, 4 * (int32_t)xsw);
      continue;
    }
    if (rowsp) {
      qdp_rowsp(dst - 4 * ja, src, ib - ia, cw, xsh, 4 * Wp, (int32_t)xsw, 4 * (int32_t)xsw, ja, vpad);
      continue;
    }
    if (q->aligned) {
      qdp_rows4(dst, src, ib - ia, cw, xsh, 4 * Wp, offw, 4 * xsw);
      continue;
    }
    const uint16x8_t lane = vidupq_n_u16(0, 1);
    const uint16x8_t offb = vaddq_u16(vandq_u16(lane, vdupq_n_u16(3)), vmulq_n_u16(vshrq_n_u16(lane, 2), (uint16_t)xsw));
    const mve_pred16_t plive = vcmphiq_u16(vdupq_n_u16((uint16_t)live), vandq_u16(lane, vdupq_n_u16(3)));
    const mve_pred16_t pb = vctp16q((uint32_t)(4 * (cw & 1))) & plive;
    for (int32_t i = ia; i < ib; i++, src += xsh, dst += 4 * Wp) {   /* byte gathers: 2 pixels of 4 channels */
      const int8_t *s = src;
      int8_t *d = dst;
      int32_t j = 0;
      for (; j + 2 <= cw; j += 2, s += 2 * xsw, d += 8)
        vstrbq_p_u16((uint8_t *)d, vldrbq_gather_offset_z_u16((const uint8_t *)s, offb, plive), plive);
      if (j < cw) vstrbq_p_u16((uint8_t *)d, vldrbq_gather_offset_z_u16((const uint8_t *)s, offb, pb), pb);
    }
  }
}

#endif
