/* XnnpackBackend: which nodes our own int8 kernel (et_xnn_qconv.c) takes from XNNPACK, and their
 * weights packed once at load. Taken: XNNConv2d with groups 1 and no dilation, XNNDepthwiseConv2d on
 * one input channel (that is a dense convolution: DS-CNN's first layer, 10x4 taps), and
 * XNNFullyConnected (weights not transposed), with int8 input and output (per-tensor), int8 weights per channel (qcint8,
 * channel dim 0) or per tensor (zero point 0), int32 bias or none. Anything else stays in XNNPACK. */
#include <math.h>
#include <string.h>

#include "et_xnn.h"

static float fbits(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }

static int per_tensor_q8(const xval *v, float *scale, int32_t *zp) {
  if (v->dt != 3 || v->qtype != XNFB_XNNQuantParams_PerTensorQuant) return 0;
  *scale = fbits(et_fb_u32(&v->q, XNFB_PerTensorQuant_scale, 0));
  *zp = (int32_t)et_fb_u32(&v->q, XNFB_PerTensorQuant_zero_point, 0);
  return *zp >= -128 && *zp <= 127 && *scale > 0.0f && isfinite(*scale);
}

/* As XNNPACK quantises a node's float output bounds (its xnn_qs8_quantize). */
static int32_t quantize_bound(float v, float scale, int32_t zp) {
  return (int32_t)lrintf(fminf(fmaxf(v / scale + (float)zp, -128.0f), 127.0f));
}

/* Weight scales: one (per tensor, zero point 0) or cout (per channel along dim 0); NULL when neither. */
static const float *weight_scales(const xval *w, const xconst *c, uint32_t cout, uint32_t dim, uint32_t *n,
                                  float *one) {
  if (w->dt == 3 && w->qtype == XNFB_XNNQuantParams_PerTensorQuant) {
    int32_t zp;
    if (!per_tensor_q8(w, one, &zp) || zp != 0) return 0;
    *n = 1;
    return one;
  }
  if (w->dt != 6 || w->qtype != XNFB_XNNQuantParams_PerChannelQuant ||
      et_fb_u32(&w->q, XNFB_PerChannelQuant_channel_dim, 0) != dim)
    return 0;
  et_fb_vec sv = et_fb_vector(&w->q, XNFB_PerChannelQuant_scale, 4);
  if (sv.len) return 0;                       /* inline scales: not what executorch 1.5 writes; XNNPACK's */
  const void *buf = 0;
  if (et_fb_u32(&w->q, XNFB_PerChannelQuant_num_scales, 0) != cout ||
      et_xnn_constant(c, et_fb_u32(&w->q, XNFB_PerChannelQuant_scale_buffer_idx, 0), &buf) != ET_OK || !buf)
    return 0;
  *n = cout;
  return (const float *)buf;
}

et_status et_xnn_own_take(const et_fb_table *xn, const xval *vals, uint32_t nv, const xconst *c, xown *o,
                          int *taken) {
  *taken = 0;
  memset(o, 0, sizeof *o);
  uint8_t ty = et_fb_u8(xn, XNFB_XNode_xnode_union_type, 0);
  if (ty == XNFB_XNodeUnion_XNNGlobalAvgPooling2d) return et_xnn_own_take_gap(xn, vals, nv, o, taken);
  if (!et_xq_available()) return ET_OK;          /* the conv/FC kernel needs AVX512-VNNI */
  et_fb_table n;
  int dw = ty == XNFB_XNodeUnion_XNNDepthwiseConv2d;
  if ((ty != XNFB_XNodeUnion_XNNConv2d && ty != XNFB_XNodeUnion_XNNFullyConnected && !dw) ||
      !et_fb_sub(xn, XNFB_XNode_xnode_union, &n))
    return ET_OK;
  et_xq *q = &o->q;
  uint32_t in, w, bias, out;
  if (ty != XNFB_XNodeUnion_XNNFullyConnected) {
#define C(f) U(&n, _XNNNodeConv, f)
    in = C(input1_id); w = C(filter_id); bias = C(bias_id); out = C(output_id);
    if (C(groups) != 1 || C(dilation_height) > 1 || C(dilation_width) > 1 || C(flags)) return ET_OK;
    q->kh = C(kernel_height); q->kw = C(kernel_width); q->sh = C(subsampling_height); q->sw = C(subsampling_width);
    q->pt = C(padding_top); q->pl = C(padding_left); q->pb = C(padding_bottom); q->pr = C(padding_right);
#undef C
  } else {
    in = U(&n, XNNFullyConnected, input1_id); w = U(&n, XNNFullyConnected, filter_id);
    bias = U(&n, XNNFullyConnected, bias_id); out = U(&n, XNNFullyConnected, output_id);
    if (U(&n, XNNFullyConnected, flags)) return ET_OK;        /* transposed weights */
    q->kh = q->kw = q->sh = q->sw = 1;
  }
  if (in >= nv || w >= nv || out >= nv) return ET_OK;
  const xval *vi = &vals[in], *vw = &vals[w], *vo = &vals[out], *vb = bias < nv ? &vals[bias] : 0;
  while (vi->alias != UINT32_MAX && vi->alias < nv) { in = vi->alias; vi = &vals[in]; }
  while (vo->alias != UINT32_MAX && vo->alias < nv) { out = vo->alias; vo = &vals[out]; }
  float si, so, sw1;
  int32_t zi, zo;
  if (!per_tensor_q8(vi, &si, &zi) || !per_tensor_q8(vo, &so, &zo)) return ET_OK;
  const void *wdata = 0, *bdata = 0;
  et_status st = et_xnn_constant(c, et_fb_u32(&vw->t, XNFB_XNNTensorValue_constant_buffer_idx, 0), &wdata);
  if (st != ET_OK) return st;
  if (!wdata) return ET_OK;
  if (vb) {
    if ((vb->dt != 5 && vb->dt != 7) || vb->nd != 1) return ET_OK;
    st = et_xnn_constant(c, et_fb_u32(&vb->t, XNFB_XNNTensorValue_constant_buffer_idx, 0), &bdata);
    if (st != ET_OK) return st;
    if (!bdata) return ET_OK;
  }
  if (ty != XNFB_XNodeUnion_XNNFullyConnected) {
    /* a depthwise convolution of one input channel (DS-CNN's first layer) is a dense one */
    if (vi->nd != 4 || vo->nd != 4 || vw->nd != 4 || vw->dims[1] != q->kh || vw->dims[2] != q->kw ||
        (dw && (vi->dims[3] != 1 || vw->dims[0] != 1)))
      return ET_OK;
    q->n = (uint32_t)vi->dims[0]; q->ih = (uint32_t)vi->dims[1]; q->iw = (uint32_t)vi->dims[2];
    q->cin = (uint32_t)vi->dims[3]; q->cout = (uint32_t)vw->dims[dw ? 3 : 0];
    q->oh = (uint32_t)vo->dims[1]; q->ow = (uint32_t)vo->dims[2];
    if (!q->sh || !q->sw || !q->kh || !q->kw || (!dw && vw->dims[3] != q->cin) || vo->dims[0] != q->n ||
        vo->dims[3] != q->cout || q->ih + q->pt + q->pb < q->kh || q->iw + q->pl + q->pr < q->kw ||
        q->oh != (q->ih + q->pt + q->pb - q->kh) / q->sh + 1 || q->ow != (q->iw + q->pl + q->pr - q->kw) / q->sw + 1)
      return ET_OK;
  } else {
    if (!vi->nd || !vo->nd || vw->nd != 2) return ET_OK;
    size_t rows = 1, orows = 1;
    for (uint32_t i = 0; i + 1 < vi->nd; i++) rows *= vi->dims[i];
    for (uint32_t i = 0; i + 1 < vo->nd; i++) orows *= vo->dims[i];
    q->cin = (uint32_t)vw->dims[1]; q->cout = (uint32_t)vw->dims[0];
    if (vi->dims[vi->nd - 1] != q->cin || vo->dims[vo->nd - 1] != q->cout || rows != orows || rows > UINT32_MAX)
      return ET_OK;
    q->n = 1; q->ih = q->oh = (uint32_t)rows; q->iw = q->ow = 1;
  }
  if (!q->cin || !q->cout || (vb && vb->dims[0] != q->cout)) return ET_OK;
  uint32_t nws;
  const float *ws = weight_scales(vw, c, q->cout, dw ? 3 : 0, &nws, &sw1);
  if (!ws) return ET_OK;
  for (uint32_t i = 0; i < nws; i++) {                     /* XNNPACK refuses these scales: so do we */
    float wsi;
    memcpy(&wsi, ws + i, 4);
    float r = si * wsi / so;
    if (!(r > 0.0f) || r >= 256.0f) return ET_OK;
  }
  float lo = -INFINITY, hi = INFINITY;
  et_fb_table mm;
  if (et_fb_sub(xn, XNFB_XNode_output_min_max, &mm)) {
    lo = fbits(et_fb_u32(&mm, XNFB_OutputMinMax_output_min, 0));
    hi = fbits(et_fb_u32(&mm, XNFB_OutputMinMax_output_max, 0));
  }
  q->in_zp = zi; q->out_zp = zo;
  q->qmin = quantize_bound(lo, so, zo); q->qmax = quantize_bound(hi, so, zo);
  if (q->qmin > q->qmax) return ET_OK;
  et_xq_shape(q);
  o->mem = et_xnn_alloc(64, et_xq_weight_bytes(q));
  if (!o->mem) return ET_ERR_OUT_OF_MEMORY;
  et_xq_pack(q, o->mem, (const int8_t *)wdata, dw, (const int32_t *)bdata, si, ws, nws, so);
  o->in = in; o->out = out;
  *taken = 1;
  return ET_OK;
}

int et_xnn_own_fuse_clamp(xown *o, const et_fb_table *xn, const xval *vals, uint32_t nv) {
  et_fb_table n, mm;
  if (et_fb_u8(xn, XNFB_XNode_xnode_union_type, 0) != XNFB_XNodeUnion_XNNClamp ||
      !et_fb_sub(xn, XNFB_XNode_xnode_union, &n) || !et_fb_sub(xn, XNFB_XNode_output_min_max, &mm))
    return 0;
  uint32_t in = U(&n, _XNNNode1x1, input_id), out = U(&n, _XNNNode1x1, output_id);
  if (o->kind != XOWN_CONV || in >= nv || out >= nv || vals[out].alias != UINT32_MAX || vals[in].alias != UINT32_MAX || in != o->out ||
      (vals[in].flags & 3))
    return 0;
  float si, so;
  int32_t zi, zo;
  if (!per_tensor_q8(&vals[in], &si, &zi) || !per_tensor_q8(&vals[out], &so, &zo) || si != so || zi != zo ||
      vals[out].nd != vals[in].nd)
    return 0;
  for (uint32_t i = 0; i < vals[in].nd; i++) if (vals[in].dims[i] != vals[out].dims[i]) return 0;
  /* the library's qs8 clamp bounds, quantised as for a fused activation: tighten ours */
  int32_t lo = quantize_bound(fbits(et_fb_u32(&mm, XNFB_OutputMinMax_output_min, 0)), so, zo);
  int32_t hi = quantize_bound(fbits(et_fb_u32(&mm, XNFB_OutputMinMax_output_max, 0)), so, zo);
  if (lo > o->q.qmin) o->q.qmin = lo;
  if (hi < o->q.qmax) o->q.qmax = hi;
  if (o->q.qmin > o->q.qmax) o->q.qmin = o->q.qmax;   /* empty range: every output is qmax, as min(max(x, lo), hi) */
  o->out = out;
  return 1;
}
