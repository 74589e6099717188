/* XnnpackBackend: one serialized XNode -> the 2022 XNNPACK subgraph call that defines it. */
#include <math.h>
#include <string.h>

#include "et_xnn.h"

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
int et_xnn_transpose_info(const et_fb_table *n, uint32_t *in, uint32_t *out, uint32_t *perm, uint32_t *nd) {
  et_fb_vec p = et_fb_vector(n, XNFB_XNNStaticTranspose_perm, 4);
  if (p.len > XMAXD) return 0;
  for (uint32_t i = 0; i < p.len; i++) {
    perm[i] = (uint32_t)et_fb_vec_i32(&p, i);
    if (perm[i] >= p.len) return 0;                           /* not a permutation */
  }
  *nd = p.len; *in = U(n, XNNStaticTranspose, input_id); *out = U(n, XNNStaticTranspose, output_id);
  return 1;
}

int et_xnn_node_io(const et_fb_table *xn, uint32_t *in, uint32_t *nin, uint32_t *out) {
  uint8_t ty = et_fb_u8(xn, XNFB_XNode_xnode_union_type, 0);
  et_fb_table n;
  if (!et_fb_sub(xn, XNFB_XNode_xnode_union, &n)) return 0;
#define IO(T, ...) do { uint32_t a_[] = {__VA_ARGS__}; *nin = sizeof a_ / 4; memcpy(in, a_, sizeof a_); \
                        *out = U(&n, T, output_id); } while (0)
  switch (ty) {
    case XNFB_XNodeUnion_XNNConv2d: case XNFB_XNodeUnion_XNNDepthwiseConv2d:
      IO(_XNNNodeConv, U(&n, _XNNNodeConv, input1_id), U(&n, _XNNNodeConv, filter_id), U(&n, _XNNNodeConv, bias_id));
      return 1;
    case XNFB_XNodeUnion_XNNFullyConnected:
      IO(XNNFullyConnected, U(&n, XNNFullyConnected, input1_id), U(&n, XNNFullyConnected, filter_id),
         U(&n, XNNFullyConnected, bias_id));
      return 1;
    case XNFB_XNodeUnion_XNNMaxPooling2d: case XNFB_XNodeUnion_XNNAvgPooling2d:
      IO(_XNNPooling2D, U(&n, _XNNPooling2D, input_id)); return 1;
    case XNFB_XNodeUnion_XNNAdd: case XNFB_XNodeUnion_XNNSubtract: case XNFB_XNodeUnion_XNNMultiply:
    case XNFB_XNodeUnion_XNNDiv: case XNFB_XNodeUnion_XNNMinimum: case XNFB_XNodeUnion_XNNMaximum:
    case XNFB_XNodeUnion_XNNPReLU:
      IO(_XNNNode2x1, U(&n, _XNNNode2x1, input1_id), U(&n, _XNNNode2x1, input2_id)); return 1;
    case XNFB_XNodeUnion_XNNClamp: case XNFB_XNodeUnion_XNNSigmoid: case XNFB_XNodeUnion_XNNSoftmax:
    case XNFB_XNodeUnion_XNNHardswish: case XNFB_XNodeUnion_XNNGlobalAvgPooling2d: case XNFB_XNodeUnion_XNNAbs:
    case XNFB_XNodeUnion_XNNNegate: case XNFB_XNodeUnion_XNNFloor: case XNFB_XNodeUnion_XNNCeiling:
    case XNFB_XNodeUnion_XNNSquareRoot: case XNFB_XNodeUnion_XNNSquare: case XNFB_XNodeUnion_XNNConvert:
      IO(_XNNNode1x1, U(&n, _XNNNode1x1, input_id)); return 1;
    case XNFB_XNodeUnion_XNNLeakyReLU: IO(XNNLeakyReLU, U(&n, XNNLeakyReLU, input_id)); return 1;
    case XNFB_XNodeUnion_XNNStaticConstantPad: IO(XNNStaticConstantPad, U(&n, XNNStaticConstantPad, input_id)); return 1;
    case XNFB_XNodeUnion_XNNStaticReshape: IO(XNNStaticReshape, U(&n, XNNStaticReshape, input_id)); return 1;
    case XNFB_XNodeUnion_XNNStaticResizeBilinear2D:
      IO(XNNStaticResizeBilinear2D, U(&n, XNNStaticResizeBilinear2D, input_id)); return 1;
    case XNFB_XNodeUnion_XNNStaticTranspose: IO(XNNStaticTranspose, U(&n, XNNStaticTranspose, input_id)); return 1;
    default: return 0;
  }
#undef IO
}

et_status et_xnn_define_node(xnn_subgraph_t sg, const et_fb_table *xn, const uint32_t *map, uint32_t nv,
                             const xval *vals, uint8_t edge) {
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
      if (edge) return ET_OK;                                  /* done in C at the delegate's edge */
      if (!et_xnn_transpose_info(&n, &in, &out, perm, &nd) || in >= nv || out >= nv) return ET_ERR_BAD_PROGRAM;
      size_t od[XMAXD];
      const size_t *d = vals[in].dims;
      if (vals[in].nd != nd) return ET_ERR_UNSUPPORTED;
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

