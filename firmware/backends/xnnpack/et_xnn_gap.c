/* XnnpackBackend's own int8 global average pooling (plain C, on every CPU the backend runs on): the
 * rounding of executorch's bundled XNNPACK, where Debian's 2022 library differs by one step at ties
 * (mobilenet_v3/efficientnet's squeeze-excite: AdaptiveAvgPool2d, input and output sharing one
 * quantisation). qmin/qmax: the node's output_min/max quantised as XNNPACK does (et_xnn_own.c). */
#include <math.h>
#include <string.h>

#include "et_xnn.h"

static float fbits(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }

static int q8(const xval *v, float *scale, int32_t *zp) {
  if (v->dt != 3 || v->qtype != XNFB_XNNQuantParams_PerTensorQuant) return 0;
  *scale = fbits(et_fb_u32(&v->q, XNFB_PerTensorQuant_scale, 0));
  *zp = (int32_t)et_fb_u32(&v->q, XNFB_PerTensorQuant_zero_point, 0);
  return *zp >= -128 && *zp <= 127 && *scale > 0.0f && isfinite(*scale);
}

static int32_t qbound(float v, float scale, int32_t zp) {
  return (int32_t)lrintf(fminf(fmaxf(v / scale + (float)zp, -128.0f), 127.0f));
}

static uint32_t follow(const xval *vals, uint32_t nv, uint32_t v) {
  for (int i = 0; i < 8 && v < nv && vals[v].alias != UINT32_MAX && vals[v].alias < nv; i++) v = vals[v].alias;
  return v;
}

/* Global average pooling, qs8 (n x h x w x c -> n x 1 x 1 x c), as executorch's XNNPACK (its qs8 mean) gives it:
 *   scale = (in_scale / out_scale) * (1.0f / (float)(h * w))        (float32, in that order)
 *   y = clamp(rint((float)(sum - h * w * in_zp) * scale + out_zp), qmin, qmax)
 * The output zero point is added before rounding: at an exact tie (a sum of h * w values, mean k + 0.5) the
 * result rounds to the even raw int8 value, where Debian's 2022 gavgpool rounds the mean to even and then
 * adds the zero point (an odd zero point: one step apart; measured on mobilenet_v3's SE, 9 of 240). */
et_status et_xnn_own_take_gap(const et_fb_table *xn, const xval *vals, uint32_t nv, xown *o, int *taken) {
  et_fb_table n;
  if (!et_fb_sub(xn, XNFB_XNode_xnode_union, &n)) return ET_OK;
  uint32_t in = follow(vals, nv, U(&n, _XNNNode1x1, input_id)), out = follow(vals, nv, U(&n, _XNNNode1x1, output_id));
  if (in >= nv || out >= nv) return ET_OK;
  const xval *vi = &vals[in], *vo = &vals[out];
  float si, so;
  int32_t zi, zo;
  if (!q8(vi, &si, &zi) || !q8(vo, &so, &zo) || vi->nd != 4) return ET_OK;
  size_t oe = 1;
  for (uint32_t i = 0; i < vo->nd; i++) oe *= vo->dims[i];
  if (oe != vi->dims[0] * vi->dims[3] || vo->dims[vo->nd - 1] != vi->dims[3] || !vi->dims[1] || !vi->dims[2])
    return ET_OK;
  et_xg *m = &o->g;
  size_t hw = vi->dims[1] * vi->dims[2];
  if (hw > (1u << 23)) return ET_OK;
  const float io_scale = si / so;
  m->scale = io_scale * (1.0f / (float)hw);
  float lo = -INFINITY, hi = INFINITY;
  et_fb_table mm;
  if (et_fb_sub(xn, XNFB_XNode_output_min_max, &mm)) {
    lo = fbits(et_fb_u32(&mm, XNFB_OutputMinMax_output_min, 0));
    hi = fbits(et_fb_u32(&mm, XNFB_OutputMinMax_output_max, 0));
  }
  m->qmin = qbound(lo, so, zo); m->qmax = qbound(hi, so, zo);
  if (m->qmin > m->qmax) return ET_OK;
  m->in_zp = zi; m->out_zp = zo;
  m->n = vi->dims[0]; m->hw = hw; m->c = vi->dims[3];
  o->kind = XOWN_GAP;
  o->in = in; o->out = out;
  *taken = 1;
  return ET_OK;
}

void et_xg_run(const et_xg *m, const int8_t *x, int8_t *y) {
  size_t hw = m->hw, c = m->c;
  for (size_t b = 0; b < m->n; b++, x += hw * c, y += c)
    for (size_t ch = 0; ch < c; ch++) {
      int32_t acc = -(int32_t)hw * m->in_zp;
      for (size_t p = 0; p < hw; p++) acc += x[p * c + ch];
      long q = lrintf((float)acc * m->scale + (float)m->out_zp);   /* zero point added before rounding */
      y[ch] = (int8_t)(q < m->qmin ? m->qmin : q > m->qmax ? m->qmax : q);
    }
}
