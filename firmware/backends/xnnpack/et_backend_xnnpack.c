/* XnnpackBackend: runs executorch's XNNPACK delegate payloads through the system XNNPACK (Debian's
 * 2022 snapshot, libxnnpack-dev) on host and Android.
 *
 * Payload: XNNHeader (bytes 4..8 "XH00", then flatbuffer offset/size and constant block offset/size),
 * then the XNNGraph flatbuffer (slots from the wheel's runtime_schema.fbs, et_xnn_schema.gen.h).
 * Constants come from the program's named data (named_key) or the payload's constant block.
 * Load builds the subgraph once and creates the runtime; execute binds the delegate's tensors and runs.
 *
 * The 2022 library has no transpose: the NCHW<->NHWC transposes executorch puts at the delegate's edge
 * are done here in C (the transposed value becomes the subgraph's external input/output), and a
 * transpose that only moves size-1 dimensions is a reshape. Any other transpose is refused.
 * All memory (ours and the library's) goes through the allocator given to xnn_initialize, which counts
 * it: et_xnn_bytes_peak. The XNNPACK world is not the static arena: host/Android only. */
#define _DEFAULT_SOURCE 1   /* posix_memalign */
#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <pthreadpool.h>
#include <xnnpack.h>

#include "et_runtime.h"
#include "et_xnn_schema.gen.h"

#ifndef ET_XNN_THREADS
#define ET_XNN_THREADS 1
#endif
#define XMAXD 6
#define XMAXIO 16

/* ---- counted allocator */
size_t et_xnn_bytes_now, et_xnn_bytes_peak;
static void count(void *p, int sign) {
  if (!p) return;
  size_t n = malloc_usable_size(p);
  et_xnn_bytes_now = sign > 0 ? et_xnn_bytes_now + n : et_xnn_bytes_now - n;
  if (et_xnn_bytes_now > et_xnn_bytes_peak) et_xnn_bytes_peak = et_xnn_bytes_now;
}
static void *x_alloc(void *c, size_t n) { void *p = malloc(n); count(p, 1); return p; }
static void x_free(void *c, void *p) { count(p, -1); free(p); }
static void *x_realloc(void *c, void *p, size_t n) {
  count(p, -1);
  void *q = realloc(p, n);
  count(q ? q : p, 1);
  return q;
}
static void *x_aligned(void *c, size_t a, size_t n) {
  void *p = 0;
  if (posix_memalign(&p, a < sizeof(void *) ? sizeof(void *) : a, n)) return 0;
  count(p, 1);
  return p;
}
static const struct xnn_allocator x_allocator = {0, x_alloc, x_realloc, x_free, x_aligned, x_free};
static void *xcalloc(size_t n) { void *p = x_alloc(0, n); if (p) memset(p, 0, n); return p; }

static pthreadpool_t x_pool;
static int x_ready;

/* ---- the delegate */
enum { IO_DIRECT, IO_PERMUTE_IN, IO_PERMUTE_OUT };
typedef struct xio {
  uint32_t arg, ext, kind, nd, esize;
  size_t in_dims[XMAXD];     /* dims of the source of the permutation */
  uint32_t perm[XMAXD];
  void *buf;
  size_t bytes;
} xio;

typedef struct xnn_handle {
  xnn_runtime_t rt;
  uint32_t n_io;
  xio io[XMAXIO];
  struct xnn_external_value ext[XMAXIO];
} xnn_handle;

typedef struct xval {
  et_fb_table t;             /* the XNNTensorValue */
  et_fb_table q;             /* quant params (q.b == 0: none) */
  uint32_t qtype;
  uint32_t ext, flags;       /* after edge rewriting */
  uint8_t skip;              /* replaced by an edge transpose */
} xval;

static uint32_t esize(uint32_t dt) { return dt == 1 ? 4 : dt == 2 ? 2 : dt == 5 || dt == 7 ? 4 : 1; }

static void permute(const uint8_t *src, uint8_t *dst, const size_t *dims, const uint32_t *perm, uint32_t nd,
                    uint32_t es) {
  size_t stride[XMAXD], odims[XMAXD], idx[XMAXD] = {0}, total = 1;
  for (int i = (int)nd - 1; i >= 0; i--) { stride[i] = total; total *= dims[i]; }
  for (uint32_t i = 0; i < nd; i++) odims[i] = dims[perm[i]];
  for (size_t o = 0; o < total; o++) {
    size_t off = 0;
    for (uint32_t i = 0; i < nd; i++) off += idx[i] * stride[perm[i]];
    memcpy(dst + o * es, src + off * es, es);
    for (int i = (int)nd - 1; i >= 0; i--) { if (++idx[i] < odims[i]) break; idx[i] = 0; }
  }
}

static et_status value_at(et_fb_vec *vals, uint32_t id, xval *out) {
  et_fb_table v, u;
  if (id >= vals->len || !et_fb_vec_table(vals, id, &v)) return ET_ERR_BAD_PROGRAM;
  uint8_t ty = et_fb_u8(&v, XNFB_XValue_xvalue_union_type, 0);
  if (!et_fb_sub(&v, XNFB_XValue_xvalue_union, &u)) return ET_ERR_BAD_PROGRAM;
  memset(out, 0, sizeof *out);
  if (ty == XNFB_XValueUnion_XNNTensorValue) {
    out->t = u;
  } else if (ty == XNFB_XValueUnion_XNNQuantizedTensorValue) {
    if (!et_fb_sub(&u, XNFB_XNNQuantizedTensorValue_tensor_value, &out->t)) return ET_ERR_BAD_PROGRAM;
    out->qtype = et_fb_u8(&u, XNFB_XNNQuantizedTensorValue_quant_params_type, 0);
    if (out->qtype && !et_fb_sub(&u, XNFB_XNNQuantizedTensorValue_quant_params, &out->q)) return ET_ERR_BAD_PROGRAM;
  } else {
    return ET_ERR_UNSUPPORTED;
  }
  out->ext = et_fb_u32(&out->t, XNFB_XNNTensorValue_external_id, 0);   /* schema default 0 */
  out->flags = et_fb_u32(&out->t, XNFB_XNNTensorValue_flags, 0);
  return ET_OK;
}

static uint32_t dims_of(const et_fb_table *t, size_t *d) {
  et_fb_vec v = et_fb_vector(t, XNFB_XNNTensorValue_dims, 4);
  if (v.len > XMAXD) return UINT32_MAX;
  for (uint32_t i = 0; i < v.len; i++) d[i] = (uint32_t)et_fb_vec_i32(&v, i);
  return v.len;
}

/* The constant data of a tensor value, or NULL (not constant). */
static et_status constant(et_program *prog, et_fb_table *g, const uint8_t *cblock, uint64_t csize, uint32_t idx,
                          const void **out) {
  *out = 0;
  if (!idx) return ET_OK;
  et_fb_vec cd = et_fb_vector(g, XNFB_XNNGraph_constant_data, 4);
  et_fb_table c;
  if (idx >= cd.len || !et_fb_vec_table(&cd, idx, &c)) return ET_ERR_BAD_PROGRAM;
  uint32_t klen;
  const char *key = et_fb_string(&c, XNFB_ConstantDataOffset_named_key, &klen);
  uint64_t size = et_fb_u64(&c, XNFB_ConstantDataOffset_size, 0);
  if (key && klen) {
    const uint8_t *p; uint32_t n;
    et_status st = et_program_named_data(prog, key, klen, &p, &n);
    if (st != ET_OK) return ET_ERR_BAD_PROGRAM;
    if (n < size) return ET_ERR_BAD_PROGRAM;
    *out = p;
    return ET_OK;
  }
  uint64_t off = et_fb_u64(&c, XNFB_ConstantDataOffset_offset, 0);
  if (off > csize || size > csize - off) return ET_ERR_BAD_PROGRAM;
  *out = cblock + off;
  return ET_OK;
}

static et_status define_value(xnn_subgraph_t sg, et_program *prog, et_fb_table *g, const uint8_t *cblock,
                              uint64_t csize, xval *v, uint32_t *id_out) {
  size_t d[XMAXD];
  uint32_t nd = dims_of(&v->t, d);
  if (nd == UINT32_MAX) return ET_ERR_UNSUPPORTED;
  uint32_t dpos = et_fb_field(&v->t, XNFB_XNNTensorValue_datatype);
  uint32_t dt = dpos ? et_fb_rd16(v->t.b, dpos) : 0;
  if (dt == 0 || dt > 7) return ET_ERR_UNSUPPORTED;          /* the 2022 library's datatypes end at qcint32 */
  const void *data;
  et_status st = constant(prog, g, cblock, csize, et_fb_u32(&v->t, XNFB_XNNTensorValue_constant_buffer_idx, 0), &data);
  if (st != ET_OK) return st;
  uint32_t ext = v->ext, fl = v->flags & (XNN_VALUE_FLAG_EXTERNAL_INPUT | XNN_VALUE_FLAG_EXTERNAL_OUTPUT);
  enum xnn_status xs;
  if (v->qtype == XNFB_XNNQuantParams_PerTensorQuant) {
    uint32_t sb = et_fb_u32(&v->q, XNFB_PerTensorQuant_scale, 0);
    float scale; memcpy(&scale, &sb, 4);
    xs = xnn_define_quantized_tensor_value(sg, (enum xnn_datatype)dt, (int32_t)et_fb_u32(&v->q, XNFB_PerTensorQuant_zero_point, 0),
                                           scale, nd, d, data, ext, fl, id_out);
  } else if (v->qtype == XNFB_XNNQuantParams_PerChannelQuant) {
    et_fb_vec sv = et_fb_vector(&v->q, XNFB_PerChannelQuant_scale, 4);
    if (!sv.len) return ET_ERR_UNSUPPORTED;                  /* scales in a buffer: newer than this backend */
    float *sc = (float *)xcalloc(sv.len * sizeof(float));    /* kept: the library may hold the pointer */
    if (!sc) return ET_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < sv.len; i++) { uint32_t b = (uint32_t)et_fb_vec_i32(&sv, i); memcpy(&sc[i], &b, 4); }
    xs = xnn_define_channelwise_quantized_tensor_value(sg, (enum xnn_datatype)dt, sc, nd,
                                                       et_fb_u32(&v->q, XNFB_PerChannelQuant_channel_dim, 0), d, data,
                                                       ext, fl, id_out);
  } else if (v->qtype) {
    return ET_ERR_UNSUPPORTED;
  } else {
    xs = xnn_define_tensor_value(sg, (enum xnn_datatype)dt, nd, d, data, ext, fl, id_out);
  }
  return xs == xnn_status_success ? ET_OK : ET_ERR_DELEGATE;
}


#define U(t, T, f) et_fb_u32(t, XNFB_##T##_##f, 0)
#define ID(t, T, f) (U(t, T, f) < nv ? map[U(t, T, f)] : XNN_INVALID_VALUE_ID)

static float fbits(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }

/* Output clamp of a node (absent: none). */
static void minmax(const et_fb_table *node, float *lo, float *hi) {
  et_fb_table mm;
  *lo = -INFINITY; *hi = INFINITY;
  if (et_fb_sub(node, XNFB_XNode_output_min_max, &mm)) {
    *lo = fbits(et_fb_u32(&mm, XNFB_OutputMinMax_output_min, 0));
    *hi = fbits(et_fb_u32(&mm, XNFB_OutputMinMax_output_max, 0));
  }
}

/* Transpose node: input value, output value, perm. */
static int tr_info(const et_fb_table *n, uint32_t *in, uint32_t *out, uint32_t *perm, uint32_t *nd) {
  et_fb_vec p = et_fb_vector(n, XNFB_XNNStaticTranspose_perm, 4);
  if (p.len > XMAXD) return 0;
  for (uint32_t i = 0; i < p.len; i++) perm[i] = (uint32_t)et_fb_vec_i32(&p, i);
  *nd = p.len; *in = U(n, XNNStaticTranspose, input_id); *out = U(n, XNNStaticTranspose, output_id);
  return 1;
}

static et_status define_node(xnn_subgraph_t sg, const et_fb_table *xn, const uint32_t *map, uint32_t nv,
                             xval *vals, uint8_t *edge) {
  uint8_t ty = et_fb_u8(xn, XNFB_XNode_xnode_union_type, 0);
  et_fb_table n;
  if (!et_fb_sub(xn, XNFB_XNode_xnode_union, &n)) return ET_ERR_BAD_PROGRAM;
  float lo, hi;
  minmax(xn, &lo, &hi);
  enum xnn_status s = xnn_status_unsupported_parameter;
  switch (ty) {
    case XNFB_XNodeUnion_XNNConv2d:
    case XNFB_XNodeUnion_XNNDepthwiseConv2d: {
#define C(f) U(&n, _XNNNodeConv, f)
      uint32_t in = ID(&n, _XNNNodeConv, input1_id), w = ID(&n, _XNNNodeConv, filter_id),
               bias = ID(&n, _XNNNodeConv, bias_id), o = ID(&n, _XNNNodeConv, output_id);
      if (ty == XNFB_XNodeUnion_XNNConv2d)
        s = xnn_define_convolution_2d(sg, C(padding_top), C(padding_right), C(padding_bottom), C(padding_left),
                                      C(kernel_height), C(kernel_width), C(subsampling_height), C(subsampling_width),
                                      C(dilation_height), C(dilation_width), C(groups), C(group_input_channels),
                                      C(group_output_channels), lo, hi, in, w, bias, o, 0);
      else
        s = xnn_define_depthwise_convolution_2d(sg, C(padding_top), C(padding_right), C(padding_bottom),
                                                C(padding_left), C(kernel_height), C(kernel_width),
                                                C(subsampling_height), C(subsampling_width), C(dilation_height),
                                                C(dilation_width), C(group_output_channels), C(groups), lo, hi,
                                                in, w, bias, o, 0);
#undef C
      break;
    }
    case XNFB_XNodeUnion_XNNFullyConnected:
      s = xnn_define_fully_connected(sg, lo, hi, ID(&n, XNNFullyConnected, input1_id),
                                     ID(&n, XNNFullyConnected, filter_id), ID(&n, XNNFullyConnected, bias_id),
                                     ID(&n, XNNFullyConnected, output_id), 0);
      break;
    case XNFB_XNodeUnion_XNNMaxPooling2d:
    case XNFB_XNodeUnion_XNNAvgPooling2d: {
#define P(f) U(&n, _XNNPooling2D, f)
      uint32_t in = ID(&n, _XNNPooling2D, input_id), o = ID(&n, _XNNPooling2D, output_id);
      if (ty == XNFB_XNodeUnion_XNNMaxPooling2d)
        s = xnn_define_max_pooling_2d(sg, P(padding_top), P(padding_right), P(padding_bottom), P(padding_left),
                                      P(pooling_height), P(pooling_width), P(stride_height), P(stride_width),
                                      P(dilation_height) ? P(dilation_height) : 1,
                                      P(dilation_width) ? P(dilation_width) : 1, lo, hi, in, o, 0);
      else
        s = xnn_define_average_pooling_2d(sg, P(padding_top), P(padding_right), P(padding_bottom), P(padding_left),
                                          P(pooling_height), P(pooling_width), P(stride_height), P(stride_width),
                                          lo, hi, in, o, 0);
#undef P
      break;
    }
    case XNFB_XNodeUnion_XNNAdd: case XNFB_XNodeUnion_XNNSubtract: case XNFB_XNodeUnion_XNNMultiply:
    case XNFB_XNodeUnion_XNNDiv: case XNFB_XNodeUnion_XNNMinimum: case XNFB_XNodeUnion_XNNMaximum:
    case XNFB_XNodeUnion_XNNPReLU: {
      uint32_t a = ID(&n, _XNNNode2x1, input1_id), b = ID(&n, _XNNNode2x1, input2_id), o = ID(&n, _XNNNode2x1, output_id);
      if (ty == XNFB_XNodeUnion_XNNAdd) s = xnn_define_add2(sg, lo, hi, a, b, o, 0);
      else if (ty == XNFB_XNodeUnion_XNNSubtract) s = xnn_define_subtract(sg, lo, hi, a, b, o, 0);
      else if (ty == XNFB_XNodeUnion_XNNMultiply) s = xnn_define_multiply2(sg, lo, hi, a, b, o, 0);
      else if (ty == XNFB_XNodeUnion_XNNDiv) s = xnn_define_divide(sg, lo, hi, a, b, o, 0);
      else if (ty == XNFB_XNodeUnion_XNNMinimum) s = xnn_define_minimum2(sg, a, b, o, 0);
      else if (ty == XNFB_XNodeUnion_XNNMaximum) s = xnn_define_maximum2(sg, a, b, o, 0);
      else s = xnn_define_prelu(sg, a, b, o, 0);
      break;
    }
    case XNFB_XNodeUnion_XNNClamp: case XNFB_XNodeUnion_XNNSigmoid: case XNFB_XNodeUnion_XNNSoftmax:
    case XNFB_XNodeUnion_XNNHardswish: case XNFB_XNodeUnion_XNNGlobalAvgPooling2d: case XNFB_XNodeUnion_XNNAbs:
    case XNFB_XNodeUnion_XNNNegate: case XNFB_XNodeUnion_XNNFloor: case XNFB_XNodeUnion_XNNCeiling:
    case XNFB_XNodeUnion_XNNSquareRoot: case XNFB_XNodeUnion_XNNSquare: case XNFB_XNodeUnion_XNNConvert: {
      uint32_t in = ID(&n, _XNNNode1x1, input_id), o = ID(&n, _XNNNode1x1, output_id);
      switch (ty) {
        case XNFB_XNodeUnion_XNNClamp: s = xnn_define_clamp(sg, lo, hi, in, o, 0); break;
        case XNFB_XNodeUnion_XNNSigmoid: s = xnn_define_sigmoid(sg, in, o, 0); break;
        case XNFB_XNodeUnion_XNNSoftmax: s = xnn_define_softmax(sg, in, o, 0); break;
        case XNFB_XNodeUnion_XNNHardswish: s = xnn_define_hardswish(sg, in, o, 0); break;
        case XNFB_XNodeUnion_XNNGlobalAvgPooling2d: s = xnn_define_global_average_pooling_2d(sg, lo, hi, in, o, 0); break;
        case XNFB_XNodeUnion_XNNAbs: s = xnn_define_abs(sg, in, o, 0); break;
        case XNFB_XNodeUnion_XNNNegate: s = xnn_define_negate(sg, in, o, 0); break;
        case XNFB_XNodeUnion_XNNFloor: s = xnn_define_floor(sg, in, o, 0); break;
        case XNFB_XNodeUnion_XNNCeiling: s = xnn_define_ceiling(sg, in, o, 0); break;
        case XNFB_XNodeUnion_XNNSquareRoot: s = xnn_define_square_root(sg, in, o, 0); break;
        case XNFB_XNodeUnion_XNNSquare: s = xnn_define_square(sg, in, o, 0); break;
        default: s = xnn_define_convert(sg, in, o, 0); break;
      }
      break;
    }
    case XNFB_XNodeUnion_XNNLeakyReLU:
      s = xnn_define_leaky_relu(sg, fbits(U(&n, XNNLeakyReLU, negative_slope)), ID(&n, XNNLeakyReLU, input_id),
                                ID(&n, XNNLeakyReLU, output_id), 0);
      break;
    case XNFB_XNodeUnion_XNNStaticConstantPad: {
      size_t pre[XMAXD] = {0}, post[XMAXD] = {0};
      et_fb_vec a = et_fb_vector(&n, XNFB_XNNStaticConstantPad_pre_paddings, 4);
      et_fb_vec b = et_fb_vector(&n, XNFB_XNNStaticConstantPad_post_paddings, 4);
      if (a.len > XMAXD || b.len > XMAXD) return ET_ERR_UNSUPPORTED;
      for (uint32_t i = 0; i < a.len; i++) pre[i] = (uint32_t)et_fb_vec_i32(&a, i);
      for (uint32_t i = 0; i < b.len; i++) post[i] = (uint32_t)et_fb_vec_i32(&b, i);
      s = xnn_define_static_constant_pad(sg, pre, post, fbits(U(&n, XNNStaticConstantPad, padding_value)),
                                         ID(&n, XNNStaticConstantPad, input_id), ID(&n, XNNStaticConstantPad, output_id), 0);
      break;
    }
    case XNFB_XNodeUnion_XNNStaticReshape: {
      size_t d[XMAXD];
      et_fb_vec v = et_fb_vector(&n, XNFB_XNNStaticReshape_new_shape, 4);
      if (v.len > XMAXD) return ET_ERR_UNSUPPORTED;
      for (uint32_t i = 0; i < v.len; i++) d[i] = (uint32_t)et_fb_vec_i32(&v, i);
      s = xnn_define_static_reshape(sg, v.len, d, ID(&n, XNNStaticReshape, input_id), ID(&n, XNNStaticReshape, output_id), 0);
      break;
    }
    case XNFB_XNodeUnion_XNNStaticResizeBilinear2D:
      s = xnn_define_static_resize_bilinear_2d(sg, U(&n, XNNStaticResizeBilinear2D, new_height),
                                               U(&n, XNNStaticResizeBilinear2D, new_width),
                                               ID(&n, XNNStaticResizeBilinear2D, input_id),
                                               ID(&n, XNNStaticResizeBilinear2D, output_id),
                                               U(&n, XNNStaticResizeBilinear2D, flags) & XNN_FLAG_ALIGN_CORNERS);
      break;
    case XNFB_XNodeUnion_XNNStaticTranspose: {
      uint32_t in, out, perm[XMAXD], nd;
      if (*edge) return ET_OK;                                  /* done in C at the delegate's edge */
      if (!tr_info(&n, &in, &out, perm, &nd) || in >= nv || out >= nv) return ET_ERR_BAD_PROGRAM;
      size_t d[XMAXD], od[XMAXD];
      if (dims_of(&vals[in].t, d) != nd) return ET_ERR_UNSUPPORTED;
      uint32_t last = 0;                                        /* non-1 dims must keep their order */
      for (uint32_t i = 0; i < nd; i++) {
        od[i] = d[perm[i]];
        if (d[perm[i]] == 1) continue;
        if (perm[i] < last) return ET_ERR_UNSUPPORTED;          /* a real transpose: not in this library */
        last = perm[i];
      }
      s = xnn_define_static_reshape(sg, nd, od, map[in], map[out], 0);
      break;
    }
    default:
      return ET_ERR_UNSUPPORTED;
  }
  return s == xnn_status_success ? ET_OK : ET_ERR_DELEGATE;
}

static et_status build(xnn_handle *h, et_program *prog, et_fb_table *g, const uint8_t *cblock, uint64_t csize) {
  et_fb_vec vs = et_fb_vector(g, XNFB_XNNGraph_xvalues, 4), ns = et_fb_vector(g, XNFB_XNNGraph_xnodes, 4);
  uint32_t nv = vs.len, next = et_fb_u32(g, XNFB_XNNGraph_num_externs, 0);
  if (!nv || nv > (1u << 20)) return ET_ERR_BAD_PROGRAM;
  xval *vals = (xval *)xcalloc(nv * sizeof(xval));
  uint32_t *map = (uint32_t *)xcalloc(nv * sizeof(uint32_t));
  uint8_t *edge = (uint8_t *)xcalloc(ns.len + 1);
  if (!vals || !map || !edge) return ET_ERR_OUT_OF_MEMORY;
  et_status st = ET_OK;
  for (uint32_t i = 0; i < nv && st == ET_OK; i++) st = value_at(&vs, i, &vals[i]);
  /* id_out numbering: values are listed by id in executorch's serialization; check it */
  for (uint32_t i = 0; i < nv && st == ET_OK; i++)
    if (et_fb_u32(&vals[i].t, XNFB_XNNTensorValue_id_out, 0) != i) st = ET_ERR_UNSUPPORTED;
  /* edge transposes: rewrite their far value into a new external input/output, done in C */
  for (uint32_t k = 0; k < ns.len && st == ET_OK; k++) {
    et_fb_table xn, n;
    if (!et_fb_vec_table(&ns, k, &xn)) { st = ET_ERR_BAD_PROGRAM; break; }
    if (et_fb_u8(&xn, XNFB_XNode_xnode_union_type, 0) != XNFB_XNodeUnion_XNNStaticTranspose) continue;
    if (!et_fb_sub(&xn, XNFB_XNode_xnode_union, &n)) { st = ET_ERR_BAD_PROGRAM; break; }
    uint32_t in, out, perm[XMAXD], nd;
    if (!tr_info(&n, &in, &out, perm, &nd) || in >= nv || out >= nv) { st = ET_ERR_BAD_PROGRAM; break; }
    int ein = (vals[in].flags & XNN_VALUE_FLAG_EXTERNAL_INPUT) != 0, eout = (vals[out].flags & XNN_VALUE_FLAG_EXTERNAL_OUTPUT) != 0;
    if ((!ein && !eout) || ein == eout || h->n_io >= XMAXIO) continue;
    xval *src = &vals[in], *keep = ein ? &vals[out] : &vals[in], *gone = ein ? &vals[in] : &vals[out];
    xio *io = &h->io[h->n_io++];
    io->kind = ein ? IO_PERMUTE_IN : IO_PERMUTE_OUT;
    io->arg = gone->ext;
    io->ext = next++;
    io->nd = nd;
    memcpy(io->perm, perm, sizeof perm);
    if (dims_of(&src->t, io->in_dims) != nd) { st = ET_ERR_UNSUPPORTED; break; }
    uint32_t dpos = et_fb_field(&src->t, XNFB_XNNTensorValue_datatype);
    io->esize = esize(dpos ? et_fb_rd16(src->t.b, dpos) : 0);
    io->bytes = io->esize;
    for (uint32_t i = 0; i < nd; i++) io->bytes *= io->in_dims[i];
    io->buf = x_aligned(0, 64, io->bytes + XNN_EXTRA_BYTES);
    if (!io->buf) { st = ET_ERR_OUT_OF_MEMORY; break; }
    keep->ext = io->ext;
    keep->flags = ein ? XNN_VALUE_FLAG_EXTERNAL_INPUT : XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
    gone->skip = 1;
    edge[k] = 1;
  }
  xnn_subgraph_t sg = 0;
  if (st == ET_OK && xnn_create_subgraph(next, 0, &sg) != xnn_status_success) st = ET_ERR_DELEGATE;
  for (uint32_t i = 0; i < nv && st == ET_OK; i++) {
    map[i] = XNN_INVALID_VALUE_ID;
    if (vals[i].skip) continue;
    st = define_value(sg, prog, g, cblock, csize, &vals[i], &map[i]);
    if (st == ET_OK && (vals[i].flags & 3) && vals[i].ext < next && h->n_io < XMAXIO) {
      int known = 0;
      for (uint32_t j = 0; j < h->n_io; j++) known |= h->io[j].ext == vals[i].ext;
      if (!known) {
        xio *io = &h->io[h->n_io++];
        io->kind = IO_DIRECT; io->arg = vals[i].ext; io->ext = vals[i].ext;
        size_t d[XMAXD]; uint32_t nd = dims_of(&vals[i].t, d);
        uint32_t dpos = et_fb_field(&vals[i].t, XNFB_XNNTensorValue_datatype);
        io->bytes = esize(dpos ? et_fb_rd16(vals[i].t.b, dpos) : 0);
        for (uint32_t j = 0; j < nd; j++) io->bytes *= d[j];
      }
    }
  }
  for (uint32_t k = 0; k < ns.len && st == ET_OK; k++) {
    et_fb_table xn;
    if (!et_fb_vec_table(&ns, k, &xn)) { st = ET_ERR_BAD_PROGRAM; break; }
    st = define_node(sg, &xn, map, nv, vals, &edge[k]);
  }
  if (st == ET_OK && xnn_create_runtime_v2(sg, x_pool, 0, &h->rt) != xnn_status_success) st = ET_ERR_DELEGATE;
  if (sg) xnn_delete_subgraph(sg);
  x_free(0, vals); x_free(0, map); x_free(0, edge);
  return st;
}

static et_status xnn_load(et_program *prog, const uint8_t *payload, uint32_t len, et_pool *pool, void **handle) {
  if (len < 30 || memcmp(payload + 4, "XH00", 4) != 0) return ET_ERR_UNSUPPORTED;
  uint32_t fb_off, fb_size, c_off; uint64_t c_size;
  memcpy(&fb_off, payload + 10, 4); memcpy(&fb_size, payload + 14, 4); memcpy(&c_off, payload + 18, 4);
  memcpy(&c_size, payload + 22, 8);
  if (fb_off > len || fb_size > len - fb_off || c_off > len || c_size > len - c_off) return ET_ERR_BAD_PROGRAM;
  if (memcmp(payload + fb_off + 4, "XN0", 3) != 0) return ET_ERR_UNSUPPORTED;   /* unknown graph version */
  if (!x_ready) {
    if (xnn_initialize(&x_allocator) != xnn_status_success) return ET_ERR_DELEGATE;
    x_pool = ET_XNN_THREADS > 1 ? pthreadpool_create(ET_XNN_THREADS) : 0;
    x_ready = 1;
  }
  et_fb_buf b = {payload + fb_off, fb_size, 0};
  et_fb_table g;
  if (!et_fb_root(&b, &g)) return ET_ERR_BAD_PROGRAM;
  xnn_handle *h = (xnn_handle *)xcalloc(sizeof *h);
  if (!h) return ET_ERR_OUT_OF_MEMORY;
  et_status st = build(h, prog, &g, payload + c_off, c_size);
  if (st == ET_OK && b.err) st = ET_ERR_BAD_PROGRAM;
  if (st != ET_OK) return st;
  *handle = h;
  return ET_OK;
}

static et_status xnn_execute(void *handle, et_value *const *args, uint32_t nargs) {
  xnn_handle *h = (xnn_handle *)handle;
  for (uint32_t i = 0; i < h->n_io; i++) {
    xio *io = &h->io[i];
    if (io->arg >= nargs || !args[io->arg] || args[io->arg]->tag != ET_TAG_TENSOR || !args[io->arg]->u.t->data)
      return ET_ERR_INVALID_ARGUMENT;
    et_tensor *t = args[io->arg]->u.t;
    if (t->capacity < io->bytes) return ET_ERR_INVALID_ARGUMENT;
    h->ext[i].id = io->ext;
    if (io->kind == IO_DIRECT) {
      h->ext[i].data = t->data;
    } else {
      h->ext[i].data = io->buf;
      if (io->kind == IO_PERMUTE_IN) permute((const uint8_t *)t->data, (uint8_t *)io->buf, io->in_dims, io->perm, io->nd, io->esize);
    }
  }
  if (xnn_setup_runtime(h->rt, h->n_io, h->ext) != xnn_status_success) return ET_ERR_DELEGATE;
  if (xnn_invoke_runtime(h->rt) != xnn_status_success) return ET_ERR_DELEGATE;
  for (uint32_t i = 0; i < h->n_io; i++) {
    xio *io = &h->io[i];
    if (io->kind == IO_PERMUTE_OUT)
      permute((const uint8_t *)io->buf, (uint8_t *)args[io->arg]->u.t->data, io->in_dims, io->perm, io->nd, io->esize);
  }
  return ET_OK;
}

const et_backend et_backend_xnnpack = {"XnnpackBackend", 0, xnn_execute, xnn_load};
