/* cortex_m:: int8 max and average pooling. */
#include "cm_util.h"

/* ---------------------------------------------------------------- pooling */

typedef struct {
  int32_t C, H, W, KH, KW, dh, dw, sh, sw, ph, pw, OH, OW, lo, hi;
  ptrdiff_t xsh, xsw, ysh, ysw;
} qpool_geo;

#ifdef CM_MVE
/* Max pool over one image whose channels are contiguous (NHWC), 16 channels per vector max, taps
 * clipped to the input once per output pixel; lo <= hi in int8. A window with no tap inside gives
 * the clamp of -129, as the scalar form (and the reference) does. */
CM_HOT static void qmaxpool_cl_mve(const qpool_geo *gp, const int8_t *x, int8_t *y) {
  const qpool_geo g = *gp;  /* a copy: int8 stores could alias *gp */
  const ptrdiff_t th = (ptrdiff_t)g.dh * g.xsh, tw = (ptrdiff_t)g.dw * g.xsw;
  const int8x16_t vlo = vdupq_n_s8((int8_t)g.lo), vhi = vdupq_n_s8((int8_t)g.hi);
  const int8_t empty = (int8_t)clamp_i32(-129, g.lo, g.hi);
  /* whole windows (the usual case): one list of tap offsets, no clipping, 16 channels a pass */
  const int32_t T = g.KH * g.KW;
  ptrdiff_t toff[16];
  const bool listed = T <= 16;
  for (int32_t t = 0; listed && t < T; t++) toff[t] = (t / g.KW) * th + (t % g.KW) * tw;
  const mve_pred16_t pall = vctp8q((uint32_t)(g.C < 16 ? g.C : 16));
  const int32_t wlast = (g.KW - 1) * g.dw;  /* offset of a window's last column */
  for (int32_t oh = 0; oh < g.OH; oh++) {
    const int32_t ih0 = oh * g.sh - g.ph;
    int32_t kh0, kh1;
    tap_range(ih0, g.KH, g.dh, g.H, &kh0, &kh1);
    const bool rows_in = listed && kh0 == 0 && kh1 == g.KH;
    int8_t *yp = y + oh * g.ysh;
    for (int32_t ow = 0, iw0 = -g.pw; ow < g.OW; ow++, iw0 += g.sw, yp += g.ysw) {
      if (rows_in && iw0 >= 0 && iw0 + wlast < g.W) {
        const int8_t *xp = x + (ptrdiff_t)ih0 * g.xsh + (ptrdiff_t)iw0 * g.xsw;
        if (T == 9) {   /* 3x3 windows: the taps unrolled, their offsets in registers, whole vectors unpredicated */
          int32_t c0 = 0;
          for (; c0 + 16 <= g.C; c0 += 16) {
            const int8_t *q = xp + c0;
            int8x16_t m = vmaxq_s8(vldrbq_s8(q), vldrbq_s8(q + toff[1]));
            m = vmaxq_s8(m, vmaxq_s8(vldrbq_s8(q + toff[2]), vldrbq_s8(q + toff[3])));
            m = vmaxq_s8(m, vmaxq_s8(vldrbq_s8(q + toff[4]), vldrbq_s8(q + toff[5])));
            m = vmaxq_s8(m, vmaxq_s8(vldrbq_s8(q + toff[6]), vldrbq_s8(q + toff[7])));
            m = vmaxq_s8(m, vldrbq_s8(q + toff[8]));
            vstrbq_s8(yp + c0, vminq_s8(vmaxq_s8(m, vlo), vhi));
          }
          if (c0 < g.C) {
            const mve_pred16_t pc = vctp8q((uint32_t)(g.C - c0));
            int8x16_t m = vldrbq_z_s8(xp + c0, pc);
            for (int32_t t = 1; t < 9; t++) m = vmaxq_s8(m, vldrbq_z_s8(xp + c0 + toff[t], pc));
            vstrbq_p_s8(yp + c0, vminq_s8(vmaxq_s8(m, vlo), vhi), pc);
          }
          continue;
        }
        for (int32_t c0 = 0; c0 < g.C; c0 += 16) {
          const mve_pred16_t pc = c0 ? vctp8q((uint32_t)(g.C - c0)) : pall;
          int8x16_t m = vldrbq_z_s8(xp + c0, pc);  /* tap 0 is at offset 0 */
          for (int32_t t = 1; t < T; t++) m = vmaxq_s8(m, vldrbq_z_s8(xp + c0 + toff[t], pc));
          vstrbq_p_s8(yp + c0, vminq_s8(vmaxq_s8(m, vlo), vhi), pc);
        }
        continue;
      }
      int32_t kw0, kw1;
      tap_range(iw0, g.KW, g.dw, g.W, &kw0, &kw1);
      /* the window origin may lie outside: the offsets below stay inside */
      const int8_t *xp = x + (ptrdiff_t)ih0 * g.xsh + (ptrdiff_t)iw0 * g.xsw;
      for (int32_t c0 = 0; c0 < g.C; c0 += 16) {
        const mve_pred16_t pc = vctp8q((uint32_t)(g.C - c0));
        if (kh0 == kh1 || kw0 == kw1) { vstrbq_p_s8(yp + c0, vdupq_n_s8(empty), pc); continue; }
        int8x16_t m = vdupq_n_s8(-128);
        for (int32_t kh = kh0; kh < kh1; kh++) {
          const int8_t *xr = xp + kh * th + c0;
          for (int32_t kw = kw0; kw < kw1; kw++) m = vmaxq_s8(m, vldrbq_z_s8(xr + kw * tw, pc));
        }
        vstrbq_p_s8(yp + c0, vminq_s8(vmaxq_s8(m, vlo), vhi), pc);
      }
    }
  }
}
#endif

#ifdef CM_DSP
/* Max pool on the DSP cores, channels contiguous: 4 channels a word, a byte-wise max per tap (SSUB8 sets
 * the lanes' GE flags, SEL picks), taps clipped to the input once per output pixel; lo <= hi in int8. */
static inline uint32_t qmax4(uint32_t a, uint32_t b) {   /* lane-wise max of signed bytes */
  (void)__ssub8((int8x4_t)a, (int8x4_t)b);
  return (uint32_t)__sel((uint8x4_t)a, (uint8x4_t)b);
}
__attribute__((noinline)) static void qmaxpool_dsp(const qpool_geo *gp, const int8_t *x, int8_t *y) {
  const qpool_geo g = *gp;  /* a copy: int8 stores could alias *gp */
  const ptrdiff_t th = (ptrdiff_t)g.dh * g.xsh, tw = (ptrdiff_t)g.dw * g.xsw;
  const uint32_t lo4 = (uint32_t)(uint8_t)g.lo * 0x01010101u, hi4 = (uint32_t)(uint8_t)g.hi * 0x01010101u;
  const int8_t empty = (int8_t)clamp_i32(-129, g.lo, g.hi);
  for (int32_t oh = 0; oh < g.OH; oh++) {
    const int32_t ih0 = oh * g.sh - g.ph;
    int32_t kh0, kh1;
    tap_range(ih0, g.KH, g.dh, g.H, &kh0, &kh1);
    for (int32_t ow = 0; ow < g.OW; ow++) {
      const int32_t iw0 = ow * g.sw - g.pw;
      int32_t kw0, kw1;
      tap_range(iw0, g.KW, g.dw, g.W, &kw0, &kw1);
      int8_t *yp = y + oh * g.ysh + ow * g.ysw;
      if (kh0 == kh1 || kw0 == kw1) {
        for (int32_t c = 0; c < g.C; c++) yp[c] = empty;
        continue;
      }
      /* the first tap inside the input; the window origin may lie outside */
      const int8_t *xp = x + (ptrdiff_t)(ih0 + kh0 * g.dh) * g.xsh + (ptrdiff_t)(iw0 + kw0 * g.dw) * g.xsw;
      const int32_t nkh = kh1 - kh0, nkw = kw1 - kw0;
      int32_t c = 0;
      for (; c + 4 <= g.C; c += 4) {
        uint32_t m = 0x80808080u;
        const int8_t *xr = xp + c;
        for (int32_t i = 0; i < nkh; i++, xr += th) {
          const int8_t *xt = xr;
          for (int32_t j = 0; j < nkw; j++, xt += tw) m = qmax4(cm_ld32(xt), m);
        }
        m = qmax4(m, lo4);
        (void)__ssub8((int8x4_t)m, (int8x4_t)hi4);   /* min(m, hi): hi where m >= hi */
        m = (uint32_t)__sel((uint8x4_t)hi4, (uint8x4_t)m);
        memcpy(yp + c, &m, 4);
      }
      for (; c < g.C; c++) {
        int32_t m = -128;
        for (int32_t i = 0; i < nkh; i++)
          for (int32_t j = 0; j < nkw; j++) {
            const int32_t v = xp[i * th + j * tw + c];
            if (v > m) m = v;
          }
        yp[c] = (int8_t)clamp_i32(m, g.lo, g.hi);
      }
    }
  }
}
#endif

/* quantized_max_pool2d.out(Tensor input, int[] kernel_size, int[] stride, int[] padding, int[] dilation,
 *   bool ceil_mode, int input_zero_point, int output_zero_point, int activation_min, int activation_max,
 *   *, Tensor(a!) out) */
static et_status qmaxpool(et_kctx *ctx, et_value *const *args, uint32_t nargs, bool nhwc) {
  ET_CHECK_ARGS(11);
  et_tensor *in, *out;
  ARG_TENSOR(0, in);
  ARG_TENSOR(10, out);
  int32_t k[2], s[2], p[2], d[2], lo, hi;
  if (!pair_arg(args[1], k)) BAD(1);
  if (!pair_arg(args[2], s)) BAD(2);
  if (!pair_arg(args[3], p)) BAD(3);
  if (!pair_arg(args[4], d)) BAD(4);
  ARG_INT(8, lo); ARG_INT(9, hi);
  if (args[5]->tag == ET_TAG_BOOL && args[5]->u.b) { ctx->err_detail = 5; return ET_ERR_UNSUPPORTED; }
  if (in->ndim != 4 || in->dtype != ET_CHAR || out->dtype != ET_CHAR) BAD(0);
  if (k[0] <= 0 || k[1] <= 0 || s[0] <= 0 || s[1] <= 0 || d[0] <= 0 || d[1] <= 0 || p[0] < 0 || p[1] < 0) BAD(1);
  g4 x, y;
  geo4(in, nhwc, &x);
  int32_t OH = conv_out(x.h, p[0], d[0], k[0], s[0]), OW = conv_out(x.w, p[1], d[1], k[1], s[1]);
  if (OH <= 0 || OW <= 0) BAD(0);
  et_status st = resize4(ctx, out, nhwc, x.n, x.c, OH, OW, 10);
  if (st) return st;
  geo4(out, nhwc, &y);
  const int8_t *xd = (const int8_t *)in->data;
  int8_t *yd = (int8_t *)out->data;
  /* locals: int8 stores may alias the arrays and structs, whose values would be reloaded per tap */
  const int32_t C = x.c, H = x.h, W = x.w, KH = k[0], KW = k[1], dh = d[0], dw = d[1];
  const int32_t sh = s[0], sw = s[1], ph = p[0], pw = p[1];
  const ptrdiff_t xsc = x.sc, ysc = y.sc, xsn = x.sn, xsh = x.sh, xsw = x.sw, ysn = y.sn, ysh = y.sh, ysw = y.sw;
  const ptrdiff_t th = (ptrdiff_t)dh * xsh, tw = (ptrdiff_t)dw * xsw;  /* between taps */
#ifdef CM_MVE
  /* channels contiguous in memory on both sides and an int8 activation range: 16 channels per max */
  if (xsc == 1 && ysc == 1 && lo >= -128 && hi <= 127 && lo <= hi) {
    const qpool_geo g = {C, H, W, KH, KW, dh, dw, sh, sw, ph, pw, OH, OW, lo, hi, xsh, xsw, ysh, ysw};
    for (int32_t n = 0; n < x.n; n++) qmaxpool_cl_mve(&g, xd + n * xsn, yd + n * ysn);
    return ET_OK;
  }
#elif defined(CM_DSP)
  if (xsc == 1 && ysc == 1 && lo >= -128 && hi <= 127 && lo <= hi) {
    const qpool_geo g = {C, H, W, KH, KW, dh, dw, sh, sw, ph, pw, OH, OW, lo, hi, xsh, xsw, ysh, ysw};
    for (int32_t n = 0; n < x.n; n++) qmaxpool_dsp(&g, xd + n * xsn, yd + n * ysn);
    return ET_OK;
  }
#endif
  for (int32_t n = 0; n < x.n; n++)
    for (int32_t oh = 0; oh < OH; oh++) {
      /* taps inside the input: kh in [kh0, kh1), kw in [kw0, kw1) */
      const int32_t ih0 = oh * sh - ph;
      int32_t kh0, kh1;
      tap_range(ih0, KH, dh, H, &kh0, &kh1);
      for (int32_t ow = 0; ow < OW; ow++) {
        const int32_t iw0 = ow * sw - pw;
        int32_t kw0, kw1;
        tap_range(iw0, KW, dw, W, &kw0, &kw1);
        /* the window origin may lie outside: the offsets below stay inside */
        const int8_t *xp = xd + n * xsn + (ptrdiff_t)ih0 * xsh + (ptrdiff_t)iw0 * xsw;
        int8_t *yp = yd + n * ysn + oh * ysh + ow * ysw;
        if (kh0 == kh1 || kw0 == kw1) {  /* no tap inside: the max of nothing, as the reference keeps it */
          for (int32_t c = 0; c < C; c++) yp[c * ysc] = (int8_t)clamp_i32(-129, lo, hi);
          continue;
        }
        for (int32_t c = 0; c < C; c++) {
          int32_t m = -128;
          for (int32_t kh = kh0; kh < kh1; kh++)
            for (int32_t kw = kw0; kw < kw1; kw++) {
              int32_t v = xp[c * xsc + kh * th + kw * tw];
              if (v > m) m = v;
            }
          yp[c * ysc] = (int8_t)clamp_i32(m, lo, hi);
        }
      }
    }
  return ET_OK;
}
ET_OP("cortex_m::quantized_max_pool2d.out", k_cm_quantized_max_pool2d_out) { return qmaxpool(ctx, args, nargs, false); }
ET_OP("cortex_m::quantized_max_pool2d_nhwc.out", k_cm_quantized_max_pool2d_nhwc_out) { return qmaxpool(ctx, args, nargs, true); }

#ifdef CM_VCVTR
/* The average pool on the FPU cores, channels contiguous: 4 channels a pass, each channel's float
 * operations those of the scalar form in its order (convert, subtract, multiply, add; no fused
 * multiply-add), and the quantisation with VCVTR: rint(avg / scale) + zp (saturating) then the int8
 * clamp gives what the float add, et_f32_to_i64 and the clamp give for a finite positive scale (a value
 * beyond 2^24 clamps to the same side either way). */
typedef struct {
  const int8_t *x;
  int8_t *y;
  int32_t C, OH, OW, H, W, kh, kw, sh, sw, ph, pw, zp;
  ptrdiff_t xsh, xsw, ysh, ysw;
  float scale, zf;
} qavg_dsp_args;

__attribute__((noinline)) static void qavgpool_dsp(const qavg_dsp_args *ap) {
  const qavg_dsp_args a = *ap;   /* a copy: int8 stores could alias *ap */
  const float scale = a.scale, zf = a.zf;
  for (int32_t oh = 0; oh < a.OH; oh++)
    for (int32_t ow = 0; ow < a.OW; ow++) {
      int32_t h0 = oh * a.sh - a.ph, w0 = ow * a.sw - a.pw, h1 = h0 + a.kh, w1 = w0 + a.kw;
      if (h0 < 0) h0 = 0;
      if (w0 < 0) w0 = 0;
      if (h1 > a.H) h1 = a.H;
      if (w1 > a.W) w1 = a.W;
      const int32_t cnt = (h1 - h0) * (w1 - w0);
      const float fc = (float)cnt;
      const int8_t *xw = a.x + (ptrdiff_t)h0 * a.xsh + (ptrdiff_t)w0 * a.xsw;
      int8_t *yp = a.y + oh * a.ysh + ow * a.ysw;
      int32_t c = 0;
      for (; c + 4 <= a.C; c += 4) {
        float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
        for (int32_t ih = h0; ih < h1; ih++) {
          const int8_t *p = xw + (ptrdiff_t)(ih - h0) * a.xsh + c;
          for (int32_t iw = w0; iw < w1; iw++, p += a.xsw) {
            s0 += ((float)p[0] - zf) * scale; s1 += ((float)p[1] - zf) * scale;
            s2 += ((float)p[2] - zf) * scale; s3 += ((float)p[3] - zf) * scale;
          }
        }
        const float sv[4] = {s0, s1, s2, s3};
        for (int32_t l = 0; l < 4; l++) {
          const float avg = cnt > 0 ? sv[l] / fc : 0.0f;
          yp[c + l] = (int8_t)__ssat(__qadd(cm_rint_s32(avg / scale), a.zp), 8);
        }
      }
      for (; c < a.C; c++) {
        float s = 0.0f;
        for (int32_t ih = h0; ih < h1; ih++) {
          const int8_t *p = xw + (ptrdiff_t)(ih - h0) * a.xsh + c;
          for (int32_t iw = w0; iw < w1; iw++, p += a.xsw) s += ((float)p[0] - zf) * scale;
        }
        const float avg = cnt > 0 ? s / fc : 0.0f;
        yp[c] = (int8_t)__ssat(__qadd(cm_rint_s32(avg / scale), a.zp), 8);
      }
    }
}
#endif

/* quantized_avg_pool2d.out(Tensor input, int[] kernel_size, int[] stride, int[] padding, bool ceil_mode,
 *   int zero_point, int multiplier, int shift, Tensor scratch, *, Tensor(a!) out): the reference
 * dequantizes with scale = multiplier * 2^shift / 2^31, average-pools in float32
 * (count_include_pad=False) and quantizes back with round-half-even. */
static et_status qavgpool(et_kctx *ctx, et_value *const *args, uint32_t nargs, bool nhwc) {
  ET_CHECK_ARGS(10);
  et_tensor *in, *out;
  ARG_TENSOR(0, in);
  ARG_TENSOR(9, out);
  int32_t k[2], s[2], p[2], zp, mult, shift;
  if (!pair_arg(args[1], k)) BAD(1);
  if (!pair_arg(args[2], s)) BAD(2);
  if (!pair_arg(args[3], p)) BAD(3);
  bool ceil = args[4]->tag == ET_TAG_BOOL && args[4]->u.b;
  ARG_INT(5, zp); ARG_INT(6, mult); ARG_INT(7, shift);
  if (in->ndim != 4 || in->dtype != ET_CHAR || out->dtype != ET_CHAR) BAD(0);
  if (k[0] <= 0 || k[1] <= 0 || s[0] <= 0 || s[1] <= 0 || p[0] < 0 || p[1] < 0) BAD(1);
  g4 x, y;
  geo4(in, nhwc, &x);
  int32_t OH = et_pool_out_size(x.h, k[0], p[0], s[0], 1, ceil);
  int32_t OW = et_pool_out_size(x.w, k[1], p[1], s[1], 1, ceil);
  if (OH <= 0 || OW <= 0) BAD(0);
  et_status st = resize4(ctx, out, nhwc, x.n, x.c, OH, OW, 9);
  if (st) return st;
  geo4(out, nhwc, &y);
  const float scale = ldexp_f((float)mult, shift - 31);
  const float zf = (float)zp;
  const int8_t *xd = (const int8_t *)in->data;
  int8_t *yd = (int8_t *)out->data;
#ifdef CM_VCVTR
  /* a finite positive scale (no NaN quotient) and the FPSCR rounding to nearest even */
  if (x.sc == 1 && y.sc == 1 && scale > 0.0f && scale < ET_INFINITY && cm_fpscr_nearest()) {
    for (int32_t n = 0; n < x.n; n++) {
      const qavg_dsp_args a = {xd + n * x.sn, yd + n * y.sn, x.c, OH, OW, x.h, x.w, k[0], k[1], s[0], s[1], p[0], p[1],
                               zp, x.sh, x.sw, y.sh, y.sw, scale, zf};
      qavgpool_dsp(&a);
    }
    return ET_OK;
  }
#endif
  for (int32_t n = 0; n < x.n; n++)
    for (int32_t oh = 0; oh < OH; oh++)
      for (int32_t ow = 0; ow < OW; ow++) {
        int32_t h0 = oh * s[0] - p[0], w0 = ow * s[1] - p[1];
        int32_t h1 = h0 + k[0], w1 = w0 + k[1];
        if (h0 < 0) h0 = 0;
        if (w0 < 0) w0 = 0;
        if (h1 > x.h) h1 = x.h;
        if (w1 > x.w) w1 = x.w;
        int32_t cnt = (h1 - h0) * (w1 - w0);
#ifdef CM_MVE
        const float cntf = (float)cnt;
        /* channels contiguous: four channels a vector, each lane the scalar form's float operations in the
         * same order (convert, subtract, multiply, add: no fused multiply-add), so the same sums */
        if (x.sc == 1 && y.sc == 1) {
          const float32x4_t vz = vdupq_n_f32(zf), vsc = vdupq_n_f32(scale);
          const int8_t *xw = xd + n * x.sn + (ptrdiff_t)h0 * x.sh + (ptrdiff_t)w0 * x.sw;
          for (int32_t c0 = 0; c0 < x.c; c0 += 4) {
            const mve_pred16_t pc = vctp32q((uint32_t)(x.c - c0));
            float32x4_t sv = vdupq_n_f32(0.0f);
            const int8_t *xr = xw + c0;
            for (int32_t ih = h0; ih < h1; ih++, xr += x.sh) {
              const int8_t *xp = xr;
              for (int32_t iw = w0; iw < w1; iw++, xp += x.sw) {
                const float32x4_t v = vcvtq_f32_s32(vldrbq_z_s32(xp, pc));
                sv = vaddq_f32(sv, vmulq_f32(vsubq_f32(v, vz), vsc));
              }
            }
            /* the divisions per lane (IEEE, as the scalar form), the rest on four lanes: vrintn rounds half to
             * even like et_roundf, and the conversion saturates where the int64 form clamps alike */
            float32x4_t av = vdupq_n_f32(0.0f);
            if (cnt > 0) {
              av = vsetq_lane_f32(vgetq_lane_f32(sv, 0) / cntf / scale, av, 0);
              av = vsetq_lane_f32(vgetq_lane_f32(sv, 1) / cntf / scale, av, 1);
              av = vsetq_lane_f32(vgetq_lane_f32(sv, 2) / cntf / scale, av, 2);
              av = vsetq_lane_f32(vgetq_lane_f32(sv, 3) / cntf / scale, av, 3);
            } else {
              av = vdupq_n_f32(0.0f / scale);
            }
            const int32x4_t q = vcvtq_s32_f32(vaddq_n_f32(vrndnq_f32(av), zf));
            vstrbq_p_s32(yd + n * y.sn + c0 + oh * y.sh + ow * y.sw,
                         vminq_s32(vmaxq_s32(q, vdupq_n_s32(-128)), vdupq_n_s32(127)), pc);
          }
          continue;
        }
#endif
        for (int32_t c = 0; c < x.c; c++) {
          float sum = 0.0f;
          for (int32_t ih = h0; ih < h1; ih++)
            for (int32_t iw = w0; iw < w1; iw++)
              sum += ((float)xd[n * x.sn + c * x.sc + ih * x.sh + iw * x.sw] - zf) * scale;
          float avg = cnt > 0 ? sum / (float)cnt : 0.0f;
          float q = et_roundf(avg / scale) + zf;
          int64_t v = et_f32_to_i64(q);
          yd[n * y.sn + c * y.sc + oh * y.sh + ow * y.sw] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
        }
      }
  return ET_OK;
}
ET_OP("cortex_m::quantized_avg_pool2d.out", k_cm_quantized_avg_pool2d_out) { return qavgpool(ctx, args, nargs, false); }
ET_OP("cortex_m::quantized_avg_pool2d_nhwc.out", k_cm_quantized_avg_pool2d_nhwc_out) { return qavgpool(ctx, args, nargs, true); }
