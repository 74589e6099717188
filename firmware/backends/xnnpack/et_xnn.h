/* XnnpackBackend internals shared by its two files (et_backend_xnnpack.c, et_xnn_nodes.c). */
#ifndef ET_XNN_H
#define ET_XNN_H
#include <stddef.h>
#include <stdint.h>

#include <xnnpack.h>

#include "et_runtime.h"
#include "et_xnn_schema.gen.h"

#define XMAXD 6
#define U(t, T, f) et_fb_u32(t, XNFB_##T##_##f, 0)

typedef struct xval {
  et_fb_table t;             /* the XNNTensorValue */
  et_fb_table q;             /* quant params (q.b == 0: none) */
  uint32_t qtype;
  uint32_t ext, flags;       /* after edge rewriting */
  uint32_t nd, dt;
  size_t dims[XMAXD];        /* after edge rewriting (permuted where a layout change moved into C) */
  uint32_t alias;            /* UINT32_MAX, or the value this one is (an edge transpose's other side) */
} xval;

/* Transpose node: input value, output value, perm (nd entries); 0 when malformed. */
int et_xnn_transpose_info(const et_fb_table *n, uint32_t *in, uint32_t *out, uint32_t *perm, uint32_t *nd);
/* Defines node xn in sg with value ids remapped by map (nv values); edge: a transpose done in C. */
et_status et_xnn_define_node(xnn_subgraph_t sg, const et_fb_table *xn, const uint32_t *map, uint32_t nv,
                             const xval *vals, uint8_t edge);
#endif
