/* Private to depthwise.c (one translation unit): the Helium byte-gather path for depth multipliers of 4 and more. */
#ifndef ET_CM_DW_GATHER_MVE_H
#define ET_CM_DW_GATHER_MVE_H

/* Depthwise on Helium, for groups of four output channels that read one input channel (depth
 * multiplier a multiple of 4), up to 16 taps, NHWC-contiguous output channels: per output pixel, one
 * byte gather of the window (tap offsets in a vector), a vmladav per channel against weight vectors
 * kept in registers, the four requantised together. The input offset is folded in as
 * in_off * sum(w) per channel; taps in the padding read as -in_off (their term then cancels).
 * Returns false (nothing written) when the call is outside that case. */
CM_HOT static bool qdw_mve(const qconv *c, const int8_t *x, int8_t *y) {
  const int32_t KH = c->KH, KW = c->KW, T = KH * KW, O = c->y.c, OW = c->y.w;
  if (!c->depthwise || c->opg % 4 || T > 16 || T < 1 || c->y.sc != 1 || c->x.sh <= 0 || c->x.sw <= 0 || OW > 256)
    return false;
  if (c->in_off < -127 || c->in_off > 128) return false;  /* -in_off must be an int8 */
  uint8_t offs[16] = {0};
  for (int32_t kh = 0; kh < KH; kh++)
    for (int32_t kw = 0; kw < KW; kw++) {
      int64_t off = (int64_t)kh * c->dh * c->x.sh + (int64_t)kw * c->dw * c->x.sw;
      if (off > 255) return false;
      offs[kh * KW + kw] = (uint8_t)off;
    }
  for (int32_t oc = 0; oc < O; oc++)
    if (!cm_vec_requant_ok(c->mult[oc], c->shift[oc])) return false;
  /* taps inside the input, per output column (bit t = tap t, as the byte-lane predicate) */
  uint32_t colbits[16] = {0}, rowbits = (1u << KW) - 1u;  /* taps of kernel column kw / of kernel row 0 */
  for (int32_t kw = 0; kw < KW; kw++)
    for (int32_t kh = 0; kh < KH; kh++) colbits[kw] |= 1u << (kh * KW + kw);
  uint16_t colm[256];
  for (int32_t ow = 0; ow < OW; ow++) {
    uint32_t m = 0;
    for (int32_t kw = 0, iw = ow * c->sw - c->pw; kw < KW; kw++, iw += c->dw)
      if (iw >= 0 && iw < c->x.w) m |= colbits[kw];
    colm[ow] = (uint16_t)m;
  }
  const uint16_t full = (uint16_t)((1u << T) - 1u);
  const uint8x16_t voff = vld1q_u8(offs);
  const int8x16_t vpad = vdupq_n_s8((int8_t)-c->in_off);
  const int32_t amin = c->amin, amax = c->amax, out_off = c->out_off;
  const bool sat8 = amin == -128 && amax == 127;
  const uintptr_t xstep = (uintptr_t)((ptrdiff_t)c->sw * c->x.sw);
  const ptrdiff_t ystep = c->y.sw;
  for (int32_t oc0 = 0; oc0 < O; oc0 += 4) {
    const int32_t ic = oc0 / c->opg;
    int8_t wt[4][16] = {{0}};
    int32_t cst[4], mu[4], sh[4];
    for (int32_t i = 0; i < 4; i++) {
      uint32_t sw = 0;
      for (int32_t t = 0; t < T; t++) {
        wt[i][t] = c->w[(ptrdiff_t)t * O + oc0 + i];
        sw += (uint32_t)(int32_t)wt[i][t];
      }
      cst[i] = (int32_t)((c->bias ? (uint32_t)c->bias[oc0 + i] : 0u) + (uint32_t)c->in_off * sw);
      mu[i] = c->mult[oc0 + i];
      sh[i] = c->shift[oc0 + i];
    }
    const int8x16_t w0 = vld1q_s8(wt[0]), w1 = vld1q_s8(wt[1]), w2 = vld1q_s8(wt[2]), w3 = vld1q_s8(wt[3]);
    const int32x4_t vc = vld1q_s32(cst), vm = vld1q_s32(mu), vs = vld1q_s32(sh);
    for (int32_t n = 0; n < c->y.n; n++)
      for (int32_t oh = 0; oh < c->y.h; oh++) {
        const int32_t ih0 = oh * c->sh - c->ph;
        uint32_t rowm = 0;
        for (int32_t kh = 0, ih = ih0; kh < KH; kh++, ih += c->dh)
          if (ih >= 0 && ih < c->x.h) rowm |= rowbits << (kh * KW);
        /* window origin of column 0; it may lie before the tensor (padding): only taps inside are read */
        uintptr_t xb = (uintptr_t)(x + n * c->x.sn + ic * c->x.sc) +
                       (uintptr_t)((ptrdiff_t)ih0 * c->x.sh - (ptrdiff_t)c->pw * c->x.sw);
        int8_t *yo = y + n * c->y.sn + oh * c->y.sh + oc0;
        for (int32_t ow = 0; ow < OW; ow++, xb += xstep, yo += ystep) {
          const uint16_t m = (uint16_t)(rowm & colm[ow]);
          int8x16_t win;
          if (m == full) {
            win = vldrbq_gather_offset_s8((const int8_t *)xb, voff);
          } else {
            win = vldrbq_gather_offset_z_s8((const int8_t *)xb, voff, m);
            win = vpselq_s8(win, vpad, m);
          }
          int32x4_t acc = vdupq_n_s32(vmladavq_s8(win, w0));
          acc = vsetq_lane_s32(vmladavq_s8(win, w1), acc, 1);
          acc = vsetq_lane_s32(vmladavq_s8(win, w2), acc, 2);
          acc = vsetq_lane_s32(vmladavq_s8(win, w3), acc, 3);
          int32x4_t r = vqaddq_n_s32(cm_requant_v(vaddq_s32(acc, vc), vm, vs), out_off);
          if (sat8) {
            /* the int8 clamp as two saturating narrows: the low byte of each lane is what is stored */
            r = vreinterpretq_s32_s8(vqmovnbq_s16(vreinterpretq_s8_s32(r),
                                                  vqmovnbq_s32(vreinterpretq_s16_s32(r), r)));
          } else {
            r = vminq_s32(vmaxq_s32(r, vdupq_n_s32(amin)), vdupq_n_s32(amax));
          }
          vstrbq_s32(yo, r);
        }
      }
  }
  return true;
}

#endif
