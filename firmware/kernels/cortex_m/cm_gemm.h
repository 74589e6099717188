/* Private to firmware/kernels/cortex_m/: the Helium int8 GEMM convolution, shared by conv.c and by
 * depthwise.c (a depthwise call with one input channel is a dense convolution). */
#ifndef ET_CORTEX_M_CM_GEMM_H
#define ET_CORTEX_M_CM_GEMM_H
#include "cm_conv.h"

#ifdef CM_MVE
/* The Helium convolution: an int8 GEMM over output pixels x output channels. A pixel's K = KH*KW*C
 * input bytes are contiguous: the input itself for a unit-stride 1x1 conv without padding (pointwise),
 * else an im2col copy of a chunk of pixels (strided pointwise convs too), padded taps holding -in_off
 * (so they add nothing). The input offset is folded into a per-channel constant bias + in_off * sum(w)
 * (the kernel sum), worked out once per call. The GEMM is the two-phase one of gemm_tile_mve.h (sums
 * of four channels a group into a tile buffer, then requantisation with the pixels on the lanes) for
 * every call whose clamp range is int8's; the fused passes below (qc_gemm23: two pixels x three
 * channels; qc_gemm4) are kept for the others. */
#define QC_COLS 4096   /* im2col chunk bytes at most (planned scratch): K up to this; larger K takes the portable path */
#define QC_CPIX 128    /* im2col pixels a chunk at most for the two-phase GEMM */
#define QC_MAXO 512    /* output channels whose constants are worked out once per call */
#include "dot6_mve.h"
#include "gemm_tile_mve.h"
/* The Helium conv's planned scratch (ET_SCRATCH, at c->scr; kernel_scratch.py mirrors qc_parts), in
 * 16-aligned parts: the channels' constants (QC_KS_BYTES, while O <= QC_MAXO; a last partial group
 * writes four); for the two-phase GEMM (clamp range int8's: qt_range_ok) a tile's sums (QT_S_BYTES of
 * qt_cap pixels: the pixels of a GEMM call, at least QT_GPIX, a tile at most) and, for short rows and O not a multiple of 4, a last partial
 * group's weight rows (QT_WPAD); the im2col chunk of QC_COLS / K pixels (P at most) + 16 bytes of slack
 * (qc_im2col3_run's whole-vector stores) where the conv copies windows: not a pointwise, or a pointwise
 * whose pixels are not one run, packed for the two-phase GEMM; rows of 33..QT_WPK_K bytes: a group's four
 * weight rows packed (QT_WPK_BYTES, 16-aligned). */
#define QC_KS_BYTES(O) (((uint32_t)(O) * 4u + 15u) & ~15u)
#define QT_S_BYTES(np) (16u * (uint32_t)((np) + 4))   /* [pixel][4] int32 + the last vld4's three past */
#define QT_WPAD 64u
typedef struct { uint32_t sums, wpad, cols, wpk, total; int32_t cap; } qc_parts;   /* byte offsets in the scratch;
                                                                              cap: the sums' pixels (qt_cap) */

/* n bytes from src to dst (n >= 0), or the byte v when src is NULL */
static inline void qc_fill(int8_t *dst, const int8_t *src, int32_t n, int8_t v) {
  const int8x16_t pad = vdupq_n_s8(v);
  for (int32_t i = 0; i < n; i += 16) {
    const mve_pred16_t p = vctp8q((uint32_t)(n - i));
    vstrbq_p_s8(dst + i, src ? vld1q_z_s8(src + i, p) : pad, p);
  }
}

#ifdef __OPTIMIZE__
/* n >= 1 consecutive windows inside the image of a 3-row kernel whose rows are `row` <= 16 contiguous
 * bytes: window i's rows at x + i * xstep + {0, 1, 2} * xdh, copied to buf (K = 3 * row bytes a window).
 * 14 instructions a window: the loads predicated to the row, the stores whole vectors (each spills into
 * what the next store writes; the buffer has 16 bytes of slack behind it). */
__attribute__((noinline)) static void qc_im2col3_run(const int8_t *x, ptrdiff_t xstep, ptrdiff_t xdh, int32_t row,
                                                     int32_t n, int8_t *buf) {
  register const int8_t *p0 __asm__("r0") = x;
  register const int8_t *p1 __asm__("r1") = x + xdh;
  register const int8_t *p2 __asm__("r2") = x + 2 * xdh;
  register int8_t *b __asm__("r3") = buf;
  register ptrdiff_t rs __asm__("r4") = xstep;
  register int32_t rr __asm__("r5") = row;
  register int32_t rn __asm__("r6") = n;
  __asm__ volatile(
      "vctp.8 r5\n\t"
      "dls lr, r6\n"
      "1:\n\t"
      "vpsttt\n\t"
      "vldrbt.u8 q0, [r0]\n\t"
      "vldrbt.u8 q1, [r1]\n\t"
      "vldrbt.u8 q2, [r2]\n\t"
      "vstrb.8 q0, [r3]\n\t"
      "add r3, r3, r5\n\t"
      "vstrb.8 q1, [r3]\n\t"
      "add r3, r3, r5\n\t"
      "vstrb.8 q2, [r3]\n\t"
      "add r3, r3, r5\n\t"
      "add r0, r0, r4\n\t"
      "add r1, r1, r4\n\t"
      "add r2, r2, r4\n\t"
      "le lr, 1b"
      : "+r"(p0), "+r"(p1), "+r"(p2), "+r"(b), "+r"(rn)
      : "r"(rs), "r"(rr)
      : "lr", "d0", "d1", "d2", "d3", "d4", "d5", "memory");
}
#define QC_IM2COL3 1
/* n >= 1 whole pixels of K <= 32 bytes, step apart, to buf (K a pixel): the loads predicated to the
 * row, the stores whole vectors spilling into what the next pixel's store writes (16 bytes of slack
 * behind the buffer); 6 (K <= 16) or 8 instructions a pixel */
__attribute__((noinline)) static void qc_copy_run(const int8_t *x, ptrdiff_t step, int32_t K, int32_t n, int8_t *buf) {
  register const int8_t *r0 __asm__("r0") = x;
  register int8_t *r1 __asm__("r1") = buf;
  register ptrdiff_t r2 __asm__("r2") = step;
  register int32_t r3 __asm__("r3") = K;
  register int32_t r4 __asm__("r4") = n;
  register int32_t r5 __asm__("r5") = K - 16;
  if (K <= 16)
    __asm__ volatile(
        "vctp.8 r3\n\t"
        "dls lr, r4\n"
        "1:\n\t"
        "vpst\n\t"
        "vldrbt.u8 q0, [r0]\n\t"
        "add r0, r0, r2\n\t"
        "vstrb.8 q0, [r1]\n\t"
        "add r1, r1, r3\n\t"
        "le lr, 1b"
        : "+r"(r0), "+r"(r1), "+r"(r4)
        : "r"(r2), "r"(r3)
        : "lr", "d0", "d1", "memory");
  else
    __asm__ volatile(
        "vctp.8 r5\n\t"
        "dls lr, r4\n"
        "1:\n\t"
        "vldrb.u8 q0, [r0]\n\t"
        "vpst\n\t"
        "vldrbt.u8 q1, [r0, #16]\n\t"
        "add r0, r0, r2\n\t"
        "vstrb.8 q0, [r1]\n\t"
        "vstrb.8 q1, [r1, #16]\n\t"
        "add r1, r1, r3\n\t"
        "le lr, 1b"
        : "+r"(r0), "+r"(r1), "+r"(r4)
        : "r"(r2), "r"(r3), "r"(r5)
        : "lr", "d0", "d1", "d2", "d3", "memory");
}
#else
#define QC_IM2COL3 0
static void qc_im2col3_run(const int8_t *x, ptrdiff_t xstep, ptrdiff_t xdh, int32_t row, int32_t n, int8_t *buf) {
  (void)x; (void)xstep; (void)xdh; (void)row; (void)n; (void)buf;
}
static void qc_copy_run(const int8_t *x, ptrdiff_t step, int32_t K, int32_t n, int8_t *buf) {
  (void)x; (void)step; (void)K; (void)n; (void)buf;
}
#endif

/* im2col of output pixels p0 .. p0+np-1 (row-major over the output rows) of image xn into buf, K bytes
 * a pixel in (kh, kw, c) order, the weights' OHWI order. A window inside the image with its kernel rows
 * contiguous (unit column dilation, dense pixels) is KH predicated copies of KW*C bytes (one vector
 * each up to 16); windows over the border go tap by tap, padded taps holding -in_off. */
CM_UNUSED static void qc_im2col(const qconv *c, const int8_t *xn, int32_t p0, int32_t np, int8_t *buf) {
  /* locals: the int8 stores below may alias *c, whose fields would be reloaded per store */
  const int32_t C = c->x.c, KW = c->KW, KH = c->KH, row = KW * C, K = KH * row, H = c->x.h, W = c->x.w;
  const int32_t OW = c->y.w, sh = c->sh, sw = c->sw, ph = c->ph, pw = c->pw, dh = c->dh, dw = c->dw;
  const ptrdiff_t xsh = c->x.sh, xsw = c->x.sw, xdh = (ptrdiff_t)dh * xsh;
  const int8_t pad = (int8_t)-c->in_off;
  const bool runs = dw == 1 && xsw == C;  /* a kernel row's taps are contiguous in the input */
  const int32_t hspan = (KH - 1) * dh;
  const mve_pred16_t pr = vctp8q((uint32_t)row);
  int32_t oh = p0 / OW, ow = p0 - oh * OW;
  int32_t ih0 = oh * sh - ph, iw0 = ow * sw - pw;
  /* last output column whose window ends inside the image's columns */
  const int32_t owl = W - KW + pw >= 0 ? (W - KW + pw) / sw : -1;
  /* the same with the taps dw apart */
  const int32_t owd = W - 1 - (KW - 1) * dw + pw >= 0 ? (W - 1 - (KW - 1) * dw + pw) / sw : -1;
  if (KH == 1 && KW == 1 && ph == 0 && pw == 0) {
    /* a strided pointwise: each pixel's K bytes copied as they are, a run of an output row at a time
     * (rows of up to 16 bytes: the load predicated, the store a whole vector spilling into what the
     * next pixel's store writes; the buffer has 16 bytes of slack) */
    const ptrdiff_t step = (ptrdiff_t)sw * xsw;
    for (int32_t i = 0; i < np;) {
      const int32_t n = OW - ow < np - i ? OW - ow : np - i;
      const int8_t *xp = xn + (ptrdiff_t)ih0 * xsh + (ptrdiff_t)iw0 * xsw;
      if (QC_IM2COL3 && K <= 32) {
        qc_copy_run(xp, step, K, n, buf);
        buf += (ptrdiff_t)n * K;
      } else if (K <= 16) {
        for (int32_t j = 0; j < n; j++, xp += step, buf += K) vst1q_s8(buf, vld1q_z_s8(xp, pr));
      } else if (K <= 32) {
        const mve_pred16_t p2 = vctp8q((uint32_t)(K - 16));
        for (int32_t j = 0; j < n; j++, xp += step, buf += K) {
          vst1q_s8(buf, vld1q_s8(xp));
          vst1q_s8(buf + 16, vld1q_z_s8(xp + 16, p2));
        }
      } else {
        for (int32_t j = 0; j < n; j++, xp += step, buf += K) qc_fill(buf, xp, K, 0);
      }
      i += n;
      ow = 0; iw0 = -pw; ih0 += sh;
    }
    return;
  }
  for (int32_t i = 0; i < np; i++, buf += K) {
    const int32_t ih = ih0, iw = iw0;
    if (QC_IM2COL3 && KH == 3 && row <= 16 && runs && iw >= 0 && ih >= 0 && ih + hspan < H && ow <= owl) {
      /* the windows inside the image from here to the row's last one (or the chunk's end) in one go */
      int32_t n = owl - ow + 1;
      if (n > np - i) n = np - i;
      qc_im2col3_run(xn + (ptrdiff_t)ih * xsh + (ptrdiff_t)iw * C, (ptrdiff_t)sw * C, xdh, row, n, buf);
      i += n - 1;
      buf += (ptrdiff_t)(n - 1) * K;
      ow += n;
      iw0 += n * sw;
      if (ow == OW) { ow = 0; iw0 = -pw; ih0 += sh; }
      continue;
    }
    if (!runs && C <= 16 && iw >= 0 && ih >= 0 && ih + hspan < H && ow <= owd) {
      /* the windows inside the image from here to the row's last one (or the chunk's end) whose taps are
       * apart (a group's channels of a grouped conv): one predicated load a tap, the store a whole vector
       * spilling into what the next tap's store writes (the buffer has 16 bytes of slack) */
      int32_t n = owd - ow + 1;
      if (n > np - i) n = np - i;
      const mve_pred16_t pc = vctp8q((uint32_t)C);
      const int8_t *xw = xn + (ptrdiff_t)ih * xsh + (ptrdiff_t)iw * xsw;
      const ptrdiff_t tstep = (ptrdiff_t)dw * xsw, wstep = (ptrdiff_t)sw * xsw;
      int8_t *b = buf;
      for (int32_t j = 0; j < n; j++, xw += wstep)
        for (int32_t kh = 0; kh < KH; kh++) {
          const int8_t *xt = xw + (ptrdiff_t)kh * xdh;
          for (int32_t kw = 0; kw < KW; kw++, xt += tstep, b += C) vst1q_s8(b, vld1q_z_s8(xt, pc));
        }
      i += n - 1;
      buf += (ptrdiff_t)(n - 1) * K;
      ow += n;
      iw0 += n * sw;
      if (ow == OW) { ow = 0; iw0 = -pw; ih0 += sh; }
      continue;
    }
    if (++ow == OW) { ow = 0; iw0 = -pw; ih0 += sh; } else { iw0 += sw; }
    if (!runs && C <= 16) {   /* the same over the border: padded taps hold -in_off */
      const mve_pred16_t pc = vctp8q((uint32_t)C);
      const int8x16_t vpad = vdupq_n_s8(pad);
      int8_t *b = buf;
      for (int32_t kh = 0; kh < KH; kh++) {
        const int32_t ihk = ih + kh * dh;
        const int8_t *xr = xn + (ptrdiff_t)ihk * xsh;
        for (int32_t kw = 0, iwk = iw; kw < KW; kw++, iwk += dw, b += C)
          vst1q_s8(b, ihk >= 0 && ihk < H && iwk >= 0 && iwk < W ? vld1q_z_s8(xr + (ptrdiff_t)iwk * xsw, pc) : vpad);
      }
      continue;
    }
    if (runs && ih >= 0 && ih + hspan < H && iw >= 0 && iw + KW <= W) {
      const int8_t *xr = xn + (ptrdiff_t)ih * xsh + (ptrdiff_t)iw * C;
      int8_t *b = buf;
      if (row <= 16) {
        for (int32_t kh = 0; kh < KH; kh++, xr += xdh, b += row) vst1q_p_s8(b, vld1q_z_s8(xr, pr), pr);
      } else {
        for (int32_t kh = 0; kh < KH; kh++, xr += xdh, b += row) qc_fill(b, xr, row, 0);
      }
      continue;
    }
    int8_t *b = buf;
    int32_t kw0 = 0, kw1 = KW;  /* taps inside the image's columns (dense runs only) */
    if (runs) tap_range(iw, KW, 1, W, &kw0, &kw1);
    for (int32_t kh = 0; kh < KH; kh++, b += row) {
      const int32_t ihk = ih + kh * dh;
      if (ihk < 0 || ihk >= H) { qc_fill(b, NULL, row, pad); continue; }
      const int8_t *xr = xn + (ptrdiff_t)ihk * xsh;
      if (runs) {  /* the row padded, then the run of taps inside */
        if (kw0 > 0 || kw1 < KW) qc_fill(b, NULL, row, pad);
        if (kw1 > kw0) qc_fill(b + kw0 * C, xr + (ptrdiff_t)(iw + kw0) * C, (kw1 - kw0) * C, 0);
        continue;
      }
      for (int32_t kw = 0; kw < KW; kw++) {
        const int32_t iwk = iw + kw * dw;
        qc_fill(b + kw * C, iwk >= 0 && iwk < W ? xr + (ptrdiff_t)iwk * xsw : NULL, C, pad);
      }
    }
  }
}

#include "gemm_fused_mve.h"

/* im2col pixels a chunk: QC_COLS bytes, and at most a tile's pixels for the two-phase GEMM (it takes
 * QC_CPIX: a larger chunk takes more scratch for little) */
static inline int32_t qc_chunk(int32_t K, bool tile) {
  const int32_t n = K <= QC_COLS ? QC_COLS / K : 0;
  return tile && n > QC_CPIX ? QC_CPIX : n;
}

/* A conv on a one-row output whose kernel is one row (KH 1, no row padding, unit column dilation, dense
 * pixels): pixel ow's K = KW*C bytes are the input's contiguous bytes from column ow*sw - pw on, so the
 * GEMM reads the input itself (step sw*C) instead of an im2col copy of K bytes a pixel. Only the pixels
 * whose windows cross the border, [0, b0) and [b1, OW), read a copy of the columns they span padded with
 * -in_off (scratch: the longer of the two, (n-1)*sw + KW columns of C bytes); GEMM calls take runs of
 * QC_RUN pixels at most (the sums buffer's). false: not this path. */
#define QC_RUN 64
typedef struct { int32_t b0, b1, run, edge; } qc_row;   /* run: a call's pixels at most; edge: a border run's */
static inline bool qc_row_of(const qconv *c, bool direct, qc_row *r) {
  r->b0 = r->b1 = r->run = r->edge = 0;
  if (direct || c->KH != 1 || c->ph != 0 || c->dw != 1 || c->x.sw != c->x.c || c->y.h != 1) return false;
  const int32_t OW = c->y.w, sw = c->sw, t = c->x.w + c->pw - c->KW;
  r->b0 = (c->pw + sw - 1) / sw;
  if (r->b0 > OW) r->b0 = OW;
  r->b1 = t >= 0 ? t / sw + 1 : 0;   /* the first pixel whose window ends past the last column */
  if (r->b1 < r->b0) r->b1 = r->b0;
  if (r->b1 > OW) r->b1 = OW;
  r->edge = r->b0 > OW - r->b1 ? r->b0 : OW - r->b1;
  const int32_t mid = r->b1 - r->b0 < QC_RUN ? r->b1 - r->b0 : QC_RUN;
  r->run = mid > r->edge ? mid : r->edge;
  return r->edge <= QC_RUN;
}

/* false: not qconv_mve's shapes (no scratch); else where its scratch parts are (from shapes and int
 * arguments only: a path refused for its data plans them too) */
CM_UNUSED static bool qc_parts_of(const qconv *c, qc_parts *pt) {
  const int32_t O = c->y.c, C = c->x.c, K = c->KH * c->KW * C, P = c->y.h * c->y.w, OW = c->y.w;
  if (c->depthwise || c->cpg != C || (c->x.sc != 1 && C != 1) || c->y.sc != 1 || K <= 0 || c->in_off < -127 ||
      c->in_off > 128)
    return false;
  const bool direct = c->KH == 1 && c->KW == 1 && c->ph == 0 && c->pw == 0;
  if (!direct && K > QC_COLS) return false;
  const bool tile = qt_range_ok(c, K), rows = c->y.sh == (ptrdiff_t)OW * c->y.sw;
  const bool flat = direct && c->sh == 1 && c->sw == 1 && c->x.sh == (ptrdiff_t)c->x.w * c->x.sw && rows &&
                    c->x.w == OW;
  const int32_t chunk = qc_chunk(K, tile), np = P < chunk ? P : chunk;
  qc_row rw;
  const bool seg = qc_row_of(c, direct, &rw);   /* a one-row 1xKW conv: no im2col */
  const bool cols = !seg && (!direct || (tile && chunk > 0 && rows && !flat));
  /* a GEMM call takes an im2col chunk's pixels (one group a pass), else a row's or the image's (several
   * groups a pass where they are few: qt_cap) */
  pt->cap = seg ? rw.run : cols ? qt_cap_cols(chunk < P ? chunk : P) : qt_cap(P);
  pt->sums = O <= QC_MAXO ? QC_KS_BYTES(O) : 0u;
  pt->wpad = pt->sums + (tile ? QT_S_BYTES(pt->cap) : 0u);
  pt->cols = pt->wpad + (tile && (O & 3) && K <= 16 ? QT_WPAD : 0u);
  pt->wpk = pt->cols + (cols ? (uint32_t)K * (uint32_t)np + 16u
                             : seg && rw.edge > 0 ? (uint32_t)((rw.edge - 1) * c->sw + c->KW) * (uint32_t)C + 16u : 0u);
  pt->total = pt->wpk;
  if (tile && K > 32 && K <= QT_WPK_K && (!seg || rw.run >= QT_WPK_MIN)) {   /* a group's rows packed (qt_sums2x4w), 16-aligned */
    pt->wpk = (pt->wpk + 15u) & ~15u;
    pt->total = pt->wpk + QT_WPK_BYTES(K);
  }
  return true;
}

/* Planned scratch of qconv_mve (ET_SCRATCH): qc_parts' total */
CM_UNUSED static uint32_t qconv_mve_scratch(const qconv *c) {
  qc_parts pt;
  return qc_parts_of(c, &pt) ? pt.total : 0u;
}

/* np pixels (K bytes each, xstep apart) into the output row at yr, four channels a pass (qc_gemm4): the path
 * when neither the two-phase tile nor the asm rows take the call */
CM_UNUSED static void qc_gemm4_all(const qconv *c, int32_t K, const int8_t *xs, ptrdiff_t xstep, int8_t *yr,
                                   int32_t np, qc_group *g) {
  const int32_t O = c->y.c;
  for (int32_t oc = 0; oc < O; oc += 4) {
    const int32_t live = O - oc < 4 ? O - oc : 4;
    const int8_t *wr[4];
    int32_t cs[4], mu[4], sh[4];
    for (int32_t i = 0; i < 4; i++) {
      const int32_t o = oc + (i < live ? i : live - 1);
      wr[i] = c->w + (ptrdiff_t)o * K;
      /* the kernel sum, wrapping like the 32-bit accumulator */
      cs[i] = (int32_t)((c->bias ? (uint32_t)c->bias[o] : 0u) + (uint32_t)c->in_off * (uint32_t)sum_s8(wr[i], K));
      mu[i] = c->mult[o];
      sh[i] = c->shift[o];
    }
    g->cst = vld1q_s32(cs); g->vm = vld1q_s32(mu); g->vs = vld1q_s32(sh); g->live = live;
    qc_gemm4(xs, xstep, yr + oc, c->y.sw, np, wr[0], wr[1], wr[2], wr[3], g);
  }
}

/* false: not this path (nothing written) */
CM_UNUSED static bool qconv_mve(const qconv *c, const int8_t *x, int8_t *y) {
  const int32_t O = c->y.c, C = c->x.c, K = c->KH * c->KW * C;
  if (c->depthwise || c->cpg != C || (c->x.sc != 1 && C != 1) || c->y.sc != 1 || K <= 0 || c->in_off < -127 ||
      c->in_off > 128)
    return false;
  {   /* cm_vec_requant_ok of every channel: the least multiplier, the least and greatest shift on the lanes
       * (a last partial vector overlaps the one before; fewer than four channels repeat the last) */
    int32x4_t mn = vdupq_n_s32(1), sn = vdupq_n_s32(-1), sx = vdupq_n_s32(-1);
    for (int32_t oc = 0; oc < O; oc += 4) {
      const int32_t o = O < 4 ? 0 : oc + 4 <= O ? oc : O - 4;
      const int32x4_t vm = O < 4 ? vdupq_n_s32(c->mult[O - 1]) : vld1q_s32(c->mult + o);
      const int32x4_t vs = O < 4 ? vdupq_n_s32(c->shift[O - 1]) : vld1q_s32(c->shift + o);
      mn = vminq_s32(mn, vm); sn = vminq_s32(sn, vs); sx = vmaxq_s32(sx, vs);
    }
    for (int32_t oc = 0; O < 4 && oc < O - 1; oc++)
      if (!cm_vec_requant_ok(c->mult[oc], c->shift[oc])) return false;
    if (vminvq_s32(INT32_MAX, mn) <= 0 || vmaxvq_s32(INT32_MIN, sx) > -1 || vminvq_s32(INT32_MAX, sn) < -31) return false;
  }
  const bool direct = c->KH == 1 && c->KW == 1 && c->ph == 0 && c->pw == 0;  /* pointwise: no copy */
  qc_parts pt;
  if (!qc_parts_of(c, &pt) || (!c->scr && pt.total)) return false;   /* no scratch (a harness without a plan) */
  int8_t *const buf = c->scr + pt.cols;
  int32_t *const ks = (int32_t *)(void *)c->scr, *const sums = (int32_t *)(void *)(c->scr + pt.sums);
  int8_t *const wpad = c->scr + pt.wpad, *const wpk = pt.total > pt.wpk ? c->scr + pt.wpk : NULL;
  const int32_t chunk = qc_chunk(K, qt_range_ok(c, K));   /* as qc_parts_of planned it */
  const int32_t OH = c->y.h, OW = c->y.w, cap = pt.cap;
  qc_row rw;
  const bool seg = qc_row_of(c, direct, &rw);
  /* the whole image as one run of pixels: unit stride, rows back to back on both sides */
  const bool flat = direct && c->sh == 1 && c->sw == 1 && c->x.sh == (ptrdiff_t)c->x.w * c->x.sw &&
                    c->y.sh == (ptrdiff_t)OW * c->y.sw && c->x.w == OW;
  qc_group g;
  g.out_off = c->out_off; g.amin = c->amin; g.amax = c->amax; g.K = K;
  /* the channels' constants once per call: bias + in_off * sum(w), wrapping like the 32-bit accumulator */
  const bool asm_path = QC_ASM && O <= QC_MAXO, tile = qt_ok(c, K);  /* tile: gemm_tile_mve.h */
  const int32_t *tks = tile && O <= QC_MAXO ? ks : NULL;
  if (tks && O >= 4) qt_consts_groups(c, 0, O >> 2, K, ks);
  if (tks && (O & 3)) qt_consts4(c, O & ~3, O & 3, K, ks + (O & ~3));
  for (int32_t o = 0; asm_path && !tile && o < O; o++)
    ks[o] = (int32_t)((c->bias ? (uint32_t)c->bias[o] : 0u) +
                      (c->in_off ? (uint32_t)c->in_off * (uint32_t)sum_s8(c->w + (ptrdiff_t)o * K, K) : 0u));
  for (int32_t n = 0; n < c->y.n; n++) {
    const int8_t *xn = x + n * c->x.sn;
    int8_t *yn = y + n * c->y.sn;
    if (seg) {   /* a one-row 1xKW conv: runs read the input, or a padded copy at the border */
      const int32_t W = c->x.w, sw = c->sw;
      for (int32_t ow0 = 0, np; ow0 < OW; ow0 += np) {
        const int32_t end = ow0 < rw.b0 ? rw.b0 : ow0 < rw.b1 ? rw.b1 : OW;   /* the left border, the middle, the right */
        np = end - ow0 < QC_RUN ? end - ow0 : QC_RUN;
        const int32_t c0 = ow0 * sw - c->pw, nc = (np - 1) * sw + c->KW;   /* the columns the run spans */
        const int8_t *xs;
        if (c0 >= 0 && c0 + nc <= W) {
          xs = xn + (ptrdiff_t)c0 * C;
        } else {
          const int32_t l = c0 < 0 ? -c0 : 0, e = c0 + nc < W ? c0 + nc : W, in = e - (c0 + l) > 0 ? e - (c0 + l) : 0;
          const int8_t pad = (int8_t)-c->in_off;
          qc_fill(buf, NULL, l * C, pad);
          if (in) qc_fill(buf + (ptrdiff_t)l * C, xn + (ptrdiff_t)(c0 + l) * C, in * C, 0);
          qc_fill(buf + (ptrdiff_t)(l + in) * C, NULL, (nc - l - in) * C, pad);
          xs = buf;
        }
        const ptrdiff_t xstep = (ptrdiff_t)sw * C;
        int8_t *yr = yn + (ptrdiff_t)ow0 * c->y.sw;
        if (tile) {
          qt_gemm(c, K, xs, xstep, yr, c->y.sw, np, tks, sums, wpad, cap, wpk);
        } else if (asm_path) {
          qc_gemm_rows(c, K, xs, xstep, 0, yr, 0, np, 1, ks);
        } else {
          qc_gemm4_all(c, K, xs, xstep, yr, np, &g);
        }
      }
      continue;
    }
    if (tile && direct && (flat || chunk == 0 || c->y.sh != (ptrdiff_t)OW * c->y.sw)) {
      for (int32_t oh = 0; oh < (flat ? 1 : OH); oh++)
        qt_gemm(c, K, xn + (ptrdiff_t)oh * c->sh * c->x.sh, (ptrdiff_t)c->sw * c->x.sw, yn + (ptrdiff_t)oh * c->y.sh,
                c->y.sw, flat ? OH * OW : OW, tks, sums, wpad, cap, wpk);
      continue;
    }
    /* output rows back to back: chunks span rows (a strided pointwise too: its pixels packed, one GEMM
     * over many rows instead of one a row) */
    if (tile && c->y.sh == (ptrdiff_t)OW * c->y.sw) {
      for (int32_t p0 = 0; p0 < OH * OW; p0 += chunk) {
        const int32_t np = OH * OW - p0 < chunk ? OH * OW - p0 : chunk;
        qc_im2col(c, xn, p0, np, buf);
        qt_gemm(c, K, buf, K, yn + (ptrdiff_t)p0 * c->y.sw, c->y.sw, np, tks, sums, wpad, cap, wpk);
      }
      continue;
    }
    if (asm_path && direct) {  /* every row in one call */
      qc_gemm_rows(c, K, xn, (ptrdiff_t)c->sw * c->x.sw, (ptrdiff_t)c->sh * c->x.sh, yn, c->y.sh, flat ? OH * OW : OW,
                   flat ? 1 : OH, ks);
      continue;
    }
    if (asm_path && c->y.sh == (ptrdiff_t)OW * c->y.sw) {  /* output rows back to back: chunks span rows */
      for (int32_t p0 = 0; p0 < OH * OW; p0 += chunk) {
        const int32_t np = OH * OW - p0 < chunk ? OH * OW - p0 : chunk;
        qc_im2col(c, xn, p0, np, buf);
        qc_gemm_rows(c, K, buf, K, 0, yn + (ptrdiff_t)p0 * c->y.sw, 0, np, 1, ks);
      }
      continue;
    }
    for (int32_t oh = 0; oh < (flat ? 1 : OH); oh++)
      for (int32_t ow0 = 0; ow0 < OW; ow0 += direct ? OW : chunk) {
        const int32_t np = direct ? (flat ? OH * OW : OW) : (OW - ow0 < chunk ? OW - ow0 : chunk);
        const int8_t *xs = buf;
        ptrdiff_t xstep = K;
        if (direct) {
          xs = xn + (ptrdiff_t)oh * c->sh * c->x.sh;
          xstep = (ptrdiff_t)c->sw * c->x.sw;
        } else {
          qc_im2col(c, xn, oh * OW + ow0, np, buf);
        }
        int8_t *yr = yn + (ptrdiff_t)oh * c->y.sh + (ptrdiff_t)ow0 * c->y.sw;
        if (tile && np > 0) {
          qt_gemm(c, K, xs, xstep, yr, c->y.sw, np, tks, sums, wpad, cap, wpk);
          continue;
        }
        if (asm_path && np > 0) {
          qc_gemm_rows(c, K, xs, xstep, 0, yr, 0, np, 1, ks);
          continue;
        }
        qc_gemm4_all(c, K, xs, xstep, yr, np, &g);
      }
  }
  return true;
}
#endif

#endif
