/* Private to depthwise.c (one translation unit): the Helium channels-on-lanes path (16 channels a vector, padded blocks; the asm row loops: dw_lanes_asm_mve.h). */
#ifndef ET_CM_DW_LANES_MVE_H
#define ET_CM_DW_LANES_MVE_H

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

#include "dw_lanes_asm_mve.h"  /* qdl_asm_row, qdl_asm_row3 */

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

/* Planned scratch of qdw_lanes at c->scr (ET_SCRATCH; tools/etdeploy/kernel_scratch.py mirrors it): the
 * padded block image (Hp x Wp pixels of es bytes) or else the band (Hb rows x Wp x 16), each while it fits
 * QDL_PAD (the band planned even where QDL_ASM is off: the size does not depend on -O), 16-aligned; then the
 * block's packed weights (16 bytes a tap) with an image of 16-byte pixels and unit column dilation; then the
 * per-column tap masks (8 bytes an output column). */
static uint32_t qdl_img_bytes(const qconv *c) {
  const int32_t KH = c->KH, KW = c->KW, T = KH * KW, C = c->x.c, OH = c->y.h, OW = c->y.w;
  const bool bcast = C == 1;
  if (!c->depthwise || (!bcast && c->opg != 1) || T > QDL_TAPS || T < 1 || OW > QDL_COLS || (!bcast && c->x.sc != 1) ||
      c->y.sc != 1 || c->in_off < -127 || c->in_off > 128 || c->out_off < -255 || c->out_off > 255 ||
      c->amin < -128 || c->amax > 127 || c->amin > c->amax)
    return 0;
  const int64_t es = bcast ? 1 : 16, Wp = (int64_t)(OW - 1) * c->sw + (int64_t)(KW - 1) * c->dw + 1;
  const int64_t Hp = (int64_t)(OH - 1) * c->sh + (int64_t)(KH - 1) * c->dh + 1, Hb = (int64_t)(KH - 1) * c->dh + 1;
  if (Hp * Wp * es <= QDL_PAD) return (uint32_t)(Hp * Wp * es);
  return !bcast && c->dw == 1 && Hb * Wp * 16 <= QDL_PAD ? (uint32_t)(Hb * Wp * 16) : 0u;
}
#define QDL_WPK_AT(c) ((qdl_img_bytes(c) + 15u) & ~15u)
#define QDL_COLM_AT(c) (QDL_WPK_AT(c) + (qdl_img_bytes(c) && (c)->x.c != 1 && (c)->dw == 1 ? 16u * (uint32_t)((c)->KH * (c)->KW) : 0u))
static uint32_t qdl_scratch(const qconv *c) {
  const int32_t T = c->KH * c->KW, C = c->x.c, OW = c->y.w;
  if (!c->depthwise || (C != 1 && c->opg != 1) || T > QDL_TAPS || T < 1 || OW > QDL_COLS || (C != 1 && c->x.sc != 1) ||
      c->y.sc != 1 || c->in_off < -127 || c->in_off > 128 || c->out_off < -255 || c->out_off > 255 ||
      c->amin < -128 || c->amax > 127 || c->amin > c->amax)
    return 0;
  return QDL_COLM_AT(c) + 8u * (uint32_t)OW;
}

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
  if (!c->scr) return false;
  const uint32_t wpk_at = QDL_WPK_AT(c);   /* qdl_scratch's layout, once a call */
  uint64_t *const colm = (uint64_t *)(void *)(c->scr + QDL_COLM_AT(c));  /* taps inside the input, per output column */
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
  int8_t *const pbuf = c->scr;   /* qdl_scratch(c) bytes, 16-aligned */
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
          int8_t *const wpk = c->scr + wpk_at;   /* 16 T bytes of scratch */
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
      int8_t *const wpk = c->scr + wpk_at;   /* 16 T bytes of scratch */
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

#endif
