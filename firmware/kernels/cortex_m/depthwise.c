/* cortex_m:: int8 depthwise convolution. */
#include "cm_gemm.h"
#ifdef CM_DSP
#include "dsp_dw.h"
#include "dsp_conv.h"   /* a one-channel input: the dense conv (cm_dsp_dw_as_conv) */
#endif

#ifdef CM_MVE
#include "dw_plane_mve.h"   /* 4 channels over a whole image */
#include "dw_lanes_mve.h"   /* 16 channels a vector */
#include "dw_gather_mve.h"  /* depth multipliers of 4: a byte gather of the window */
#include "dw_patch_mve.h"   /* depth multiplier 1, 3x3 and 5x5: patches gathered from 4-channel planes */
#endif

/* The portable depthwise, on its own: everything in locals (an int8 store may alias *c, so fields
 * would be reloaded per output), the tap ranges clipped once per pixel instead of tested per tap. */
__attribute__((noinline)) static void qdw_portable(const qconv *c, const int8_t *x, int8_t *y) {
  const int32_t O = c->y.c, KH = c->KH, KW = c->KW, dh = c->dh, dw = c->dw, H = c->x.h, W = c->x.w;
  const int32_t xsh = c->x.sh, xsw = c->x.sw, xsc = c->x.sc, in_off = c->in_off, opg = c->opg;
  const int32_t out_off = c->out_off, amin = c->amin, amax = c->amax, ysc = c->y.sc;
  const int32_t *mult = c->mult, *shift = c->shift, *bias = c->bias;
  const int8_t *wt = c->w;
  for (int32_t n = 0; n < c->y.n; n++)
    for (int32_t oh = 0; oh < c->y.h; oh++) {
      const int32_t ih0 = oh * c->sh - c->ph;
      int32_t kh0, kh1;  /* taps kh in [kh0, kh1) fall inside the input rows */
      tap_range(ih0, KH, dh, H, &kh0, &kh1);
      for (int32_t ow = 0; ow < c->y.w; ow++) {
        const int32_t iw0 = ow * c->sw - c->pw;
        int32_t kw0, kw1;
        tap_range(iw0, KW, dw, W, &kw0, &kw1);
        const int8_t *xp = x + n * c->x.sn;  /* the window origin may lie outside: offsets below stay inside */
        int8_t *yp = y + n * c->y.sn + oh * c->y.sh + ow * c->y.sw;
        for (int32_t oc = 0; oc < O; oc++) {
          /* Wraps like the hardware's 32-bit accumulator; a corrupted bias cannot make it UB. */
          uint32_t acc = bias ? (uint32_t)bias[oc] : 0u;
          const int8_t *xc = xp + (oc / opg) * xsc;
          for (int32_t kh = kh0; kh < kh1; kh++) {
            const int8_t *xr = xc + (ptrdiff_t)(ih0 + kh * dh) * xsh, *wr = wt + (ptrdiff_t)kh * KW * O + oc;
            for (int32_t kw = kw0; kw < kw1; kw++)
              acc += (uint32_t)(((int32_t)xr[(ptrdiff_t)(iw0 + kw * dw) * xsw] + in_off) *
                                (int32_t)wr[(ptrdiff_t)kw * O]);
          }
          int32_t r = add_sat_i32(cm_requant((int32_t)acc, mult[oc], shift[oc]), out_off);
          yp[oc * ysc] = (int8_t)clamp_i32(r, amin, amax);
        }
      }
    }
}

#ifdef CM_MVE
/* One input channel and many outputs (a first layer) is a dense convolution whose OHWI weights are the
 * depthwise 1HWO ones transposed: here into the planned scratch (the first QDW_TW_BYTES), then the GEMM (cm_gemm.h)
 * with the rest of the scratch, a band of output rows at a time: the most rows whose scratch stays within QDW_ASC
 * (the GEMM's buffers grow with the pixels of a call), all of them where a band would start in the bottom padding. */
#define QDW_TW 4096
#define QDW_ASC 6144
#define QDW_TW_BYTES(c) (((uint32_t)((c)->KH * (c)->KW * (c)->y.c) + 15u) & ~15u)
static bool qdw_conv_view(const qconv *c, qconv *d) {
  if (c->x.c != 1 || (int64_t)c->KH * c->KW * c->y.c > QDW_TW) return false;
  *d = *c;
  d->depthwise = false; d->cpg = 1; d->opg = c->y.c;
  const int32_t OH = c->y.h;
  if ((int64_t)(OH - 1) * c->sh - c->ph >= c->x.h) return true;
  for (int32_t r = OH; r >= 1; r--) {
    d->y.h = r;
    if (r == 1 || QDW_TW_BYTES(c) + qconv_mve_scratch(d) <= QDW_ASC) break;
  }
  return true;
}
/* planned scratch (ET_SCRATCH; kernel_scratch.py mirrors it): the transposed weights, then qconv_mve's of a band */
static uint32_t qdw_as_conv_scratch(const qconv *c) {
  qconv d;
  return qdw_conv_view(c, &d) ? QDW_TW_BYTES(c) + qconv_mve_scratch(&d) : 0u;
}
static bool qdw_as_conv(const qconv *c, const int8_t *x, int8_t *y) {
  const int32_t T = c->KH * c->KW, O = c->y.c, OH = c->y.h;
  qconv d;
  if (!c->scr || !qdw_conv_view(c, &d)) return false;
  int8_t *const wt = c->scr;   /* QDW_TW_BYTES(c) of scratch */
  const int8_t *const w = c->w;   /* a local: the int8 stores below may alias *c */
  for (int32_t o = 0; o < O; o++)
    for (int32_t t = 0; t < T; t++) wt[o * T + t] = w[(ptrdiff_t)t * O + o];
  d.w = wt; d.scr = c->scr + QDW_TW_BYTES(c);
  const int32_t R = d.y.h;
  for (int32_t oh0 = 0; oh0 < OH; oh0 += R) {   /* a band: its input rows from the first one it reads */
    qconv b = d;
    const int32_t ih = oh0 * c->sh - c->ph, skip = ih < 0 ? 0 : ih;
    b.y.h = OH - oh0 < R ? OH - oh0 : R;
    b.ph = ih < 0 ? -ih : 0;
    b.x.h = c->x.h - skip;
    if (!qconv_mve(&b, x + (ptrdiff_t)skip * c->x.sh, y + (ptrdiff_t)oh0 * c->y.sh)) return false;   /* only the first */
  }
  return true;
}
#endif

/* A depthwise call's planned scratch (ET_SCRATCH): the largest of the paths its shapes allow (they run
 * one at a time; a path refused for its data falls to the next). tools/etdeploy/kernel_scratch.py
 * computes the same at bake; method load fails (ET_ERR_SCRATCH) where the two differ. */
static uint32_t qdw_scratch(const qconv *c) {
#ifdef CM_MVE
  /* the patch path's shapes: its scratch only (refused for its data, the call takes the paths without) */
  const uint32_t p = qdp_scratch(c);
  if (p) return p;
  uint32_t n = qdw_plane_scratch(c), a = qdw_as_conv_scratch(c), l = qdl_scratch(c);
  n = a > n ? a : n;
  return l > n ? l : n;
#elif defined(CM_DSP)
  const uint32_t d = cm_dsp_dw_scratch(c), a = cm_dsp_dw_as_conv_scratch(c);
  return a > d ? a : d;
#else
  (void)c;
  return 0;
#endif
}

/* the depthwise without the plane path */
static void qdw_run(const qconv *c, const int8_t *x, int8_t *y) {
#ifdef CM_MVE
  qdp_geo g;
  if (qdp_geo_of(c, &g)) {
    if (qdw_patch(c, &g, x, y, false) || qdw_mve(c, x, y)) return;
  } else if (qdw_as_conv(c, x, y) || qdw_lanes(c, x, y) || qdw_mve(c, x, y)) {
    return;
  }
#elif defined(CM_DSP)
  if (cm_dsp_dw_as_conv(c, x, y) || cm_dsp_dw(c, x, y)) return;
#endif
  qdw_portable(c, x, y);
}

/* What a depthwise call keeps between executions (ET_STATE; filled at method load): the checked
 * arguments and the plane path's plan (see cm_call). */
typedef struct {
  cm_call call;
  int32_t plane;   /* qdw_plane_exec with p */
  uint32_t need;   /* planned scratch bytes (qdw_scratch) */
  qconv c;
#ifdef CM_MVE
  int32_t patch;   /* 1: the patch path's shapes (g), 2: and its requantisation checked (not the plane path) */
  union {
    qdw_plan p;
    qdp_geo g;
  };
#endif
} qconv_state;
#define QCONV_STATE 704
_Static_assert(sizeof(qconv_state) <= QCONV_STATE, "raise QCONV_STATE and the ET_STATE sizes below");

static void qdw_exec(const qconv *c, const int8_t *x, int8_t *y) {
#ifdef CM_MVE
  qdw_plan p;
  if (c->scr && qdw_plane_prep(c, y, &p)) { qdw_plane_exec(c, &p, x, y); return; }
#endif
  qdw_run(c, x, y);
}

static et_status qdw_op(et_kctx *ctx, et_value *const *args, uint32_t nargs, bool nhwc) {
  ET_CHECK_ARGS(15);
  qconv_state *ks = (qconv_state *)ctx->state;
  if (ks && cm_call_same(&ks->call, args[0], args[14])) {
    if (ctx->prepare) { ctx->scratch_need = ks->need; return ET_OK; }
    ks->c.scr = (int8_t *)et_scratch(ctx, ks->need);   /* NULL: the paths without scratch */
    const int8_t *x = (const int8_t *)ks->call.x->data;
    int8_t *y = (int8_t *)ks->call.y->data;
#ifdef CM_MVE
    if (ks->plane && ks->c.scr) { qdw_plane_exec(&ks->c, &ks->p, x, y); return ET_OK; }
    if (ks->patch == 2 && qdw_patch(&ks->c, &ks->g, x, y, true)) return ET_OK;
#endif
    qdw_run(&ks->c, x, y);
    return ET_OK;
  }
  qconv c;
  et_tensor *in, *out;
  bool constant;
  et_status st = qconv_args(ctx, args, true, nhwc, &c, &in, &out, &constant);
  if (st) return st;
  const uint32_t need = qdw_scratch(&c);
  c.scr = (int8_t *)et_scratch(ctx, need);
  if (ctx->prepare) ctx->scratch_need = need;
  if (ks) {
    ks->c = c;
    ks->need = need;
#ifdef CM_MVE
    ks->plane = c.scr && qdw_plane_prep(&ks->c, (const int8_t *)out->data, &ks->p);
    ks->patch = 0;   /* the geometry kept for the executions (not the plane path's: they share the bytes) */
    if (!ks->plane && qdp_geo_of(&ks->c, &ks->g)) ks->patch = qdp_requant_ok(&ks->c) ? 2 : 1;
#endif
    cm_call_set(&ks->call, in, out, constant);
    if (ctx->prepare) return ET_OK;
#ifdef CM_MVE
    if (ks->plane) { qdw_plane_exec(&ks->c, &ks->p, (const int8_t *)in->data, (int8_t *)out->data); return ET_OK; }
#endif
    qdw_run(&ks->c, (const int8_t *)in->data, (int8_t *)out->data);
    return ET_OK;
  }
  if (ctx->prepare) return ET_OK;
  qdw_exec(&c, (const int8_t *)in->data, (int8_t *)out->data);
  return ET_OK;
}

/* quantized_depthwise_conv2d.out(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding,
 *   int[] dilation, int depth_multiplier, int input_offset, int output_offset, Tensor requantize_multipliers,
 *   Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch, *, Tensor(a!) out) */
ET_STATE("cortex_m::quantized_depthwise_conv2d.out", 704);
ET_STATE("cortex_m::quantized_depthwise_conv2d_nhwc.out", 704);
ET_SCRATCH("cortex_m::quantized_depthwise_conv2d.out");
ET_SCRATCH("cortex_m::quantized_depthwise_conv2d_nhwc.out");
ET_OP("cortex_m::quantized_depthwise_conv2d.out", k_cm_quantized_depthwise_conv2d_out) {
  return qdw_op(ctx, args, nargs, false);
}
ET_OP("cortex_m::quantized_depthwise_conv2d_nhwc.out", k_cm_quantized_depthwise_conv2d_nhwc_out) {
  return qdw_op(ctx, args, nargs, true);
}
