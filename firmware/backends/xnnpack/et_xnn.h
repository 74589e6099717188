/* XnnpackBackend internals shared by its two files (et_backend_xnnpack.c, et_xnn_nodes.c). */
#ifndef ET_XNN_H
#define ET_XNN_H
#include <stddef.h>
#include <stdint.h>

#include <xnnpack.h>

#include "et_runtime.h"
#include "et_xnn_schema.gen.h"
#include "et_xnn_qconv.h"

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

/* Where the payload's constants are: the program's named data or the payload's constant block. */
typedef struct xconst {
  et_program *prog;
  et_fb_table *g;
  const uint8_t *cblock;
  uint64_t csize;
} xconst;
/* The constant data of constant_data[idx], or *out = NULL (idx 0: not constant). */
et_status et_xnn_constant(const xconst *c, uint32_t idx, const void **out);
/* The counted allocator (the memory report). */
void *et_xnn_alloc(size_t align, size_t n);
void et_xnn_free(void *p);

/* The value ids a node reads (in[0..*nin), at most 3) and writes (*out); 0 for an unknown node type. */
int et_xnn_node_io(const et_fb_table *xn, uint32_t *in, uint32_t *nin, uint32_t *out);

/* Our int8 global average pooling (et_xnn_gap.c): n x hw x c in, n x c out. */
typedef struct et_xg {
  size_t n, hw, c;
  int32_t in_zp, out_zp, qmin, qmax;
  float scale;               /* (in_scale / out_scale) * (1.0f / hw), float32 */
} et_xg;
void et_xg_run(const et_xg *m, const int8_t *x, int8_t *y);

/* A node run by our own int8 kernels instead of XNNPACK: a conv/FC (et_xnn_qconv.h, AVX512-VNNI only)
 * or a global average pooling (et_xnn_gap.c, every CPU). */
enum { XOWN_CONV, XOWN_GAP };
typedef struct xown {
  et_xq q;
  et_xg g;
  uint32_t kind;
  uint32_t in, out;          /* value ids */
  void *mem;                 /* packed weights (et_xnn_alloc) */
} xown;
/* *taken = 1 (o filled, weights packed) when our kernel takes node xn: an int8 convolution (groups 1,
 * no dilation) or fully connected on a CPU with AVX512-VNNI, or an int8 global average pooling; 0 when XNNPACK keeps it. */
et_status et_xnn_own_take(const et_fb_table *xn, const xval *vals, uint32_t nv, const xconst *c, xown *o,
                          int *taken);

/* The global average pooling part of et_xnn_own_take (et_xnn_gap.c). */
et_status et_xnn_own_take_gap(const et_fb_table *xn, const xval *vals, uint32_t nv, xown *o, int *taken);

/* The delegate's tensors: argument arg is external value ext, bound directly or through a permutation
 * done in C at the edge (buf). */
enum { IO_DIRECT, IO_PERMUTE_IN, IO_PERMUTE_OUT };
typedef struct xio {
  uint32_t arg, ext, kind, nd, esize;
  size_t in_dims[XMAXD];     /* dims of the source of the permutation */
  uint32_t perm[XMAXD];
  void *buf;
  size_t bytes;
} xio;

/* With our own kernels (et_xnn_split.c) the node list runs as steps: runs of nodes in one XNNPACK
 * runtime each, and nodes of our kernel, with the values between steps in one planned arena. */
typedef struct xstep {
  xnn_runtime_t rt;          /* NULL: own (the node in own) */
  xown *own;
  uint32_t first_ext, n_ext; /* its external values: split.ext_val/ext[first_ext .. +n_ext) */
  int bound;
} xstep;
typedef struct xsplit {
  uint32_t n_steps, n_own, n_fused, n_nodes, nv;
  xstep *steps;
  xown *owns;
  int32_t *val_io;           /* per value: the io[] entry of a delegate tensor, or -1 */
  size_t *val_off;           /* per value: offset in arena (SIZE_MAX: none) */
  void **vptr;               /* per value: where it is in this run */
  uint32_t *ext_val;
  struct xnn_external_value *ext;
  uint8_t *arena, *img;
  size_t arena_bytes, img_bytes;
} xsplit;

/* Defines value v in sg (external id and flags as v says). */
et_status et_xnn_define_value(xnn_subgraph_t sg, const xconst *c, const xval *v, uint32_t *id_out);
/* Plans the steps when our kernel takes at least one node (*taken = number of such nodes; 0: nothing
 * planned, build one runtime as usual). edge[k]: node k is an edge transpose done in C. */
et_status et_xnn_split_build(xsplit *s, const xconst *c, et_fb_vec *ns, xval *vals, uint32_t nv,
                             const uint8_t *edge, const xio *io, uint32_t n_io, pthreadpool_t pool, uint32_t *taken);
/* Runs the steps; io_ptr[i]: where delegate tensor io[i] is this run. */
et_status et_xnn_split_run(xsplit *s, void *const *io_ptr, pthreadpool_t pool);

/* 1 when node xn is a Clamp on o's output with the same quantisation (its only reader: the caller
 * checks): o then writes the clamp's output, its bounds tightened (XNNPACK fuses such a clamp too). */
int et_xnn_own_fuse_clamp(xown *o, const et_fb_table *xn, const xval *vals, uint32_t nv);

/* Transpose node: input value, output value, perm (nd entries); 0 when malformed. */
int et_xnn_transpose_info(const et_fb_table *n, uint32_t *in, uint32_t *out, uint32_t *perm, uint32_t *nd);
/* Defines node xn in sg with value ids remapped by map (nv values); edge: a transpose done in C. */
et_status et_xnn_define_node(xnn_subgraph_t sg, const et_fb_table *xn, const uint32_t *map, uint32_t nv,
                             const xval *vals, uint8_t edge);
#endif
