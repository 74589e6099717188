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
#include <stdio.h>
#include <time.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <pthreadpool.h>
#include <xnnpack.h>

#include "et_link.h"
#include "et_runtime.h"
#include "et_xnn.h"

#ifndef ET_XNN_THREADS
#define ET_XNN_THREADS 1
#endif
#ifndef ET_XNN_OWN_KERNELS
#define ET_XNN_OWN_KERNELS 1       /* our AVX512-VNNI int8 conv/FC where the CPU has it (et_xnn_own.c) */
#endif

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
void *et_xnn_alloc(size_t align, size_t n) { return x_aligned(0, align, n); }
void et_xnn_free(void *p) { x_free(0, p); }
static void *xcalloc(size_t n) { void *p = x_alloc(0, n); if (p) memset(p, 0, n); return p; }

static pthreadpool_t x_pool;
static int x_ready;

#ifdef ET_XNN_TIMING
/* bench/xnnpack_speed.py: the library's own time (xnn_setup_runtime + xnn_invoke_runtime) summed over
 * every execute, so that what our runtime adds around it (edge copies, the method) can be told apart */
uint64_t et_xnn_library_ns;
static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
#define LIB_TIMER_START uint64_t lib_t0 = now_ns();
#define LIB_TIMER_STOP et_xnn_library_ns += now_ns() - lib_t0;
#else
#define LIB_TIMER_START
#define LIB_TIMER_STOP
#endif

/* ---- the delegate */
typedef struct xnn_handle {
  xnn_runtime_t rt;          /* one runtime for the whole graph, or (own > 0) the steps of split */
  uint32_t n_io, cap, runs, own, n_nodes;  /* cap: the delegate's external values + its edge transposes */
  xio *io;
  struct xnn_external_value *ext;
  void **io_ptr;             /* io[i]'s tensor this run, for split (the ext[i].data pointers) */
  xsplit split;
} xnn_handle;


static uint32_t esize(uint32_t dt) { return dt == 1 ? 4 : dt == 2 ? 2 : dt == 5 || dt == 7 ? 4 : 1; }

/* dst[b][c][r] = src[b][r][c] for a batch of rows x cols matrices, in 16x16 tiles (the NCHW<->NHWC
 * copies at the delegate's edge: one element at a time through a generic index walk cost 13 us of
 * ResNet-8's 208 us) */
#define TILE 16
#define TRANSPOSE_AS(T)                                                                            \
  for (size_t b = 0; b < batch; b++) {                                                             \
    const T *s = (const T *)src + b * rows * cols;                                                 \
    T *d = (T *)dst + b * rows * cols;                                                             \
    for (size_t r0 = 0; r0 < rows; r0 += TILE)                                                     \
      for (size_t c0 = 0; c0 < cols; c0 += TILE) {                                                 \
        size_t r1 = r0 + TILE < rows ? r0 + TILE : rows, c1 = c0 + TILE < cols ? c0 + TILE : cols; \
        for (size_t r = r0; r < r1; r++)                                                           \
          for (size_t c = c0; c < c1; c++) d[c * rows + r] = s[r * cols + c];                     \
      }                                                                                            \
  }
static void transpose_2d(const uint8_t *src, uint8_t *dst, size_t batch, size_t rows, size_t cols, uint32_t es) {
  switch (es) {
    case 1: TRANSPOSE_AS(uint8_t) break;
    case 2: TRANSPOSE_AS(uint16_t) break;
    default: TRANSPOSE_AS(uint32_t) break;
  }
}

static void permute(const uint8_t *src, uint8_t *dst, const size_t *dims, const uint32_t *perm, uint32_t nd,
                    uint32_t es) {
  size_t stride[XMAXD], odims[XMAXD], idx[XMAXD] = {0}, total = 1;
  for (int i = (int)nd - 1; i >= 0; i--) { stride[i] = total; total *= dims[i]; }
  /* perm = identity on [0, p), then a rotation of [p, nd) by k: a batch of 2D transposes */
  uint32_t p = 0;
  while (p < nd && perm[p] == p) p++;
  if (p == nd) { memcpy(dst, src, total * es); return; }
  uint32_t k = perm[p] - p, rot = k > 0 && (es == 1 || es == 2 || es == 4);
  for (uint32_t i = p; i < nd && rot; i++) rot = perm[i] == p + (i - p + k) % (nd - p);
  if (rot) {
    size_t batch = 1, rows = 1, cols = 1;
    for (uint32_t i = 0; i < p; i++) batch *= dims[i];
    for (uint32_t i = p; i < p + k; i++) rows *= dims[i];
    for (uint32_t i = p + k; i < nd; i++) cols *= dims[i];
    transpose_2d(src, dst, batch, rows, cols, es);
    return;
  }
  for (uint32_t i = 0; i < nd; i++) odims[i] = dims[perm[i]];
  for (size_t o = 0; o < total; o++) {
    size_t off = 0;
    for (uint32_t i = 0; i < nd; i++) off += idx[i] * stride[perm[i]];
    memcpy(dst + o * es, src + off * es, es);
    for (int i = (int)nd - 1; i >= 0; i--) { if (++idx[i] < odims[i]) break; idx[i] = 0; }
  }
}

static uint32_t dims_of(const et_fb_table *t, size_t *d) {
  et_fb_vec v = et_fb_vector(t, XNFB_XNNTensorValue_dims, 4);
  if (v.len > XMAXD) return UINT32_MAX;
  for (uint32_t i = 0; i < v.len; i++) d[i] = (uint32_t)et_fb_vec_i32(&v, i);
  return v.len;
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
  out->nd = dims_of(&out->t, out->dims);
  uint32_t dpos = et_fb_field(&out->t, XNFB_XNNTensorValue_datatype);
  out->dt = dpos ? et_fb_rd16(out->t.b, dpos) : 0;
  out->alias = UINT32_MAX;
  return out->nd == UINT32_MAX ? ET_ERR_UNSUPPORTED : ET_OK;
}

et_status et_xnn_constant(const xconst *cx, uint32_t idx, const void **out) {
  et_program *prog = cx->prog;
  et_fb_table *g = cx->g;
  const uint8_t *cblock = cx->cblock;
  uint64_t csize = cx->csize;
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

et_status et_xnn_define_value(xnn_subgraph_t sg, const xconst *cx, const xval *v, uint32_t *id_out) {
  const size_t *d = v->dims;
  uint32_t nd = v->nd, dt = v->dt;
  if (dt == 0 || dt > 7) return ET_ERR_UNSUPPORTED;          /* the 2022 library's datatypes end at qcint32 */
  const void *data;
  et_status st = et_xnn_constant(cx, et_fb_u32(&v->t, XNFB_XNNTensorValue_constant_buffer_idx, 0), &data);
  if (st != ET_OK) return st;
  uint32_t ext = v->ext, fl = v->flags & (XNN_VALUE_FLAG_EXTERNAL_INPUT | XNN_VALUE_FLAG_EXTERNAL_OUTPUT);
  enum xnn_status xs;
  if (v->qtype == XNFB_XNNQuantParams_PerTensorQuant) {
    uint32_t sb = et_fb_u32(&v->q, XNFB_PerTensorQuant_scale, 0);
    float scale; memcpy(&scale, &sb, 4);
    xs = xnn_define_quantized_tensor_value(sg, (enum xnn_datatype)dt, (int32_t)et_fb_u32(&v->q, XNFB_PerTensorQuant_zero_point, 0),
                                           scale, nd, d, data, ext, fl, id_out);
  } else if (v->qtype == XNFB_XNNQuantParams_PerChannelQuant) {
    /* scales inline ([float]) or in a constant (scale_buffer_idx, num_scales floats) */
    et_fb_vec sv = et_fb_vector(&v->q, XNFB_PerChannelQuant_scale, 4);
    uint32_t ns = sv.len ? sv.len : et_fb_u32(&v->q, XNFB_PerChannelQuant_num_scales, 0);
    const void *sbuf = 0;
    if (!sv.len) {
      st = et_xnn_constant(cx, et_fb_u32(&v->q, XNFB_PerChannelQuant_scale_buffer_idx, 0), &sbuf);
      if (st != ET_OK || !sbuf) return st != ET_OK ? st : ET_ERR_BAD_PROGRAM;
    }
    if (!ns) return ET_ERR_BAD_PROGRAM;
    float *sc = (float *)xcalloc(ns * sizeof(float));        /* kept: the library may hold the pointer */
    if (!sc) return ET_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < ns; i++) {
      uint32_t b = sv.len ? (uint32_t)et_fb_vec_i32(&sv, i) : 0;
      if (sv.len) memcpy(&sc[i], &b, 4); else memcpy(&sc[i], (const uint8_t *)sbuf + 4 * i, 4);
    }
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



/* The value on the other side of a Convert node touching value v: its input when v is its output
 * (want_input), its output when v is its input; UINT32_MAX when there is none. */
static uint32_t convert_peer(et_fb_vec *ns, uint32_t v, int want_input) {
  for (uint32_t k = 0; k < ns->len; k++) {
    et_fb_table xn, n;
    if (!et_fb_vec_table(ns, k, &xn) || et_fb_u8(&xn, XNFB_XNode_xnode_union_type, 0) != XNFB_XNodeUnion_XNNConvert ||
        !et_fb_sub(&xn, XNFB_XNode_xnode_union, &n)) continue;
    uint32_t in = U(&n, _XNNNode1x1, input_id), out = U(&n, _XNNNode1x1, output_id);
    if (want_input && out == v) return in;
    if (!want_input && in == v) return out;
  }
  return UINT32_MAX;
}

/* The output of an earlier transpose node (before node k) of value a by the same perm, or UINT32_MAX. The
 * int8 flow's layout pass gives each consumer its own copy: shufflenet_v2's downsampling unit reads its
 * input through two equal NCHW->NHWC transposes, which are one value. */
static uint32_t same_transpose(et_fb_vec *ns, uint32_t k, uint32_t a, const uint32_t *perm, uint32_t nd) {
  for (uint32_t j = 0; j < k; j++) {
    et_fb_table xn, n;
    uint32_t a2, b2, p2[XMAXD], nd2;
    if (!et_fb_vec_table(ns, j, &xn) || et_fb_u8(&xn, XNFB_XNode_xnode_union_type, 0) != XNFB_XNodeUnion_XNNStaticTranspose ||
        !et_fb_sub(&xn, XNFB_XNode_xnode_union, &n) || !et_xnn_transpose_info(&n, &a2, &b2, p2, &nd2)) continue;
    if (a2 == a && nd2 == nd && !memcmp(p2, perm, nd * sizeof *perm)) return b2;
  }
  return UINT32_MAX;
}

static et_status build(xnn_handle *h, et_program *prog, et_fb_table *g, const uint8_t *cblock, uint64_t csize) {
  xconst cx = {prog, g, cblock, csize};
  et_fb_vec vs = et_fb_vector(g, XNFB_XNNGraph_xvalues, 4), ns = et_fb_vector(g, XNFB_XNNGraph_xnodes, 4);
  uint32_t nv = vs.len, next = et_fb_u32(g, XNFB_XNNGraph_num_externs, 0);
  if (!nv || nv > (1u << 20)) return ET_ERR_BAD_PROGRAM;
  xval *vals = (xval *)xcalloc(nv * sizeof(xval));
  uint32_t *map = (uint32_t *)xcalloc(nv * sizeof(uint32_t));
  uint8_t *edge = (uint8_t *)xcalloc(ns.len + 1);
  /* every external value is bound at execute (one left out has no data: the library's setup asserts),
   * and each edge transpose adds one; mobilenet_v3's delegate has 20 (19 inputs: hardsigmoid's constants) */
  h->cap = next + ns.len;
  h->io = (xio *)xcalloc(h->cap * sizeof(xio));
  h->ext = (struct xnn_external_value *)xcalloc(h->cap * sizeof(struct xnn_external_value));
  h->io_ptr = (void **)xcalloc(h->cap * sizeof(void *));
  et_status st = vals && map && edge && h->io && h->ext && h->io_ptr ? ET_OK : ET_ERR_OUT_OF_MEMORY;
  for (uint32_t i = 0; i < nv && st == ET_OK; i++) st = value_at(&vs, i, &vals[i]);
  /* id_out numbering: values are listed by id in executorch's serialization; check it */
  for (uint32_t i = 0; i < nv && st == ET_OK; i++)
    if (et_fb_u32(&vals[i].t, XNFB_XNNTensorValue_id_out, 0) != i) st = ET_ERR_UNSUPPORTED;
  /* edge transposes (possibly behind a Convert at the edge) move into C: the permutation runs on the
   * external tensor, the values between it and the transpose take the permuted dims, and the
   * transpose's far side becomes an alias of its near side */
  for (uint32_t k = 0; k < ns.len && st == ET_OK; k++) {
    et_fb_table xn, n;
    if (!et_fb_vec_table(&ns, k, &xn)) { st = ET_ERR_BAD_PROGRAM; break; }
    if (et_fb_u8(&xn, XNFB_XNode_xnode_union_type, 0) != XNFB_XNodeUnion_XNNStaticTranspose) continue;
    if (!et_fb_sub(&xn, XNFB_XNode_xnode_union, &n)) { st = ET_ERR_BAD_PROGRAM; break; }
    uint32_t a, b, perm[XMAXD], nd;
    if (!et_xnn_transpose_info(&n, &a, &b, perm, &nd) || a >= nv || b >= nv || vals[a].nd != nd) { st = ET_ERR_BAD_PROGRAM; break; }
    uint32_t cin = convert_peer(&ns, a, 1), cout = convert_peer(&ns, b, 0);
    uint32_t twin = same_transpose(&ns, k, a, perm, nd);
    if (twin < nv && !(vals[b].flags & 3) && !(cout < nv && (vals[cout].flags & 3))) {
      vals[b].alias = vals[twin].alias != UINT32_MAX ? vals[twin].alias : twin;   /* one value */
      edge[k] = 1;
      continue;
    }
    uint32_t src = (vals[a].flags & XNN_VALUE_FLAG_EXTERNAL_INPUT) ? a
                 : cin < nv && (vals[cin].flags & XNN_VALUE_FLAG_EXTERNAL_INPUT) ? cin : UINT32_MAX;
    uint32_t dst = (vals[b].flags & XNN_VALUE_FLAG_EXTERNAL_OUTPUT) ? b
                 : cout < nv && (vals[cout].flags & XNN_VALUE_FLAG_EXTERNAL_OUTPUT) ? cout : UINT32_MAX;
    if ((src == UINT32_MAX) == (dst == UINT32_MAX)) continue;
    xio *io = &h->io[h->n_io++];
    io->nd = nd;
    memcpy(io->perm, perm, sizeof perm);
    io->ext = next++;
    if (src != UINT32_MAX) {                        /* NCHW input: permute in, subgraph sees NHWC */
      if (vals[src].nd != nd) { st = ET_ERR_UNSUPPORTED; break; }
      io->kind = IO_PERMUTE_IN; io->arg = vals[src].ext;
      memcpy(io->in_dims, vals[src].dims, sizeof io->in_dims);
      io->esize = esize(vals[src].dt);
      size_t pd[XMAXD];
      for (uint32_t i = 0; i < nd; i++) pd[i] = vals[a].dims[perm[i]];
      memcpy(vals[src].dims, pd, sizeof pd);
      memcpy(vals[a].dims, pd, sizeof pd);
      vals[src].ext = io->ext; vals[src].flags = XNN_VALUE_FLAG_EXTERNAL_INPUT;
      vals[b].alias = a;
    } else {                                        /* NHWC result: the subgraph writes it, permute out */
      io->kind = IO_PERMUTE_OUT; io->arg = vals[dst].ext;
      memcpy(io->in_dims, vals[a].dims, sizeof io->in_dims);
      io->esize = esize(vals[dst].dt);
      if (dst == b) {
        vals[a].ext = io->ext; vals[a].flags = XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
      } else {
        memcpy(vals[dst].dims, vals[a].dims, sizeof vals[a].dims);
        vals[dst].ext = io->ext; vals[dst].flags = XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
      }
      vals[b].alias = a;
    }
    io->bytes = io->esize;
    for (uint32_t i = 0; i < nd; i++) io->bytes *= io->in_dims[i];
    io->buf = x_aligned(0, 64, io->bytes + XNN_EXTRA_BYTES);
    if (!io->buf) { st = ET_ERR_OUT_OF_MEMORY; break; }
    edge[k] = 1;
  }
  /* the delegate's tensors bound as they are */
  for (uint32_t i = 0; i < nv && st == ET_OK; i++) {
    if (vals[i].alias != UINT32_MAX || !(vals[i].flags & 3)) continue;
    if (vals[i].ext >= next) { st = ET_ERR_BAD_PROGRAM; break; }
    int known = 0;
    for (uint32_t j = 0; j < h->n_io; j++) known |= h->io[j].ext == vals[i].ext;
    if (!known && h->n_io >= h->cap) { st = ET_ERR_BAD_PROGRAM; break; }
    if (!known) {
      xio *io = &h->io[h->n_io++];
      io->kind = IO_DIRECT; io->arg = vals[i].ext; io->ext = vals[i].ext;
      io->bytes = esize(vals[i].dt);
      for (uint32_t j = 0; j < vals[i].nd; j++) io->bytes *= vals[i].dims[j];
    }
  }
  h->n_nodes = ns.len;
  if (ET_XNN_OWN_KERNELS && st == ET_OK)
    st = et_xnn_split_build(&h->split, &cx, &ns, vals, nv, edge, h->io, h->n_io, x_pool, &h->own);
  if (h->own || st != ET_OK) {
    x_free(0, vals); x_free(0, map); x_free(0, edge);
    return st;
  }
  xnn_subgraph_t sg = 0;
  if (st == ET_OK && xnn_create_subgraph(next, 0, &sg) != xnn_status_success) st = ET_ERR_DELEGATE;
  for (uint32_t i = 0; i < nv && st == ET_OK; i++) {
    map[i] = XNN_INVALID_VALUE_ID;
    if (vals[i].alias != UINT32_MAX) continue;
    st = et_xnn_define_value(sg, &cx, &vals[i], &map[i]);
  }
  for (uint32_t i = 0; i < nv && st == ET_OK; i++)
    if (vals[i].alias != UINT32_MAX) map[i] = vals[i].alias < nv ? map[vals[i].alias] : XNN_INVALID_VALUE_ID;
  for (uint32_t k = 0; k < ns.len && st == ET_OK; k++) {
    et_fb_table xn;
    if (!et_fb_vec_table(&ns, k, &xn)) { st = ET_ERR_BAD_PROGRAM; break; }
    st = et_xnn_define_node(sg, &xn, map, nv, vals, edge[k]);
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
  if (fb_off > len || fb_size > len - fb_off || fb_size < 8 || c_off > len || c_size > len - c_off)
    return ET_ERR_BAD_PROGRAM;
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
  int same = h->runs > 0;   /* setup (indirection buffers) again only when a tensor moved */
  for (uint32_t i = 0; i < h->n_io; i++) {
    xio *io = &h->io[i];
    if (io->arg >= nargs || !args[io->arg] || args[io->arg]->tag != ET_TAG_TENSOR || !args[io->arg]->u.t->data)
      return ET_ERR_INVALID_ARGUMENT;
    et_tensor *t = args[io->arg]->u.t;
    if (t->capacity < io->bytes) return ET_ERR_INVALID_ARGUMENT;
    h->ext[i].id = io->ext;
    if (io->kind == IO_DIRECT) {
      same &= h->ext[i].data == t->data;
      h->ext[i].data = t->data;
    } else {
      h->ext[i].data = io->buf;
      if (io->kind == IO_PERMUTE_IN) permute((const uint8_t *)t->data, (uint8_t *)io->buf, io->in_dims, io->perm, io->nd, io->esize);
    }
    h->io_ptr[i] = h->ext[i].data;
  }
  LIB_TIMER_START
  if (h->own) {
    et_status st = et_xnn_split_run(&h->split, h->io_ptr, x_pool);
    if (st != ET_OK) return st;
  } else {
    if (!same && xnn_setup_runtime(h->rt, h->n_io, h->ext) != xnn_status_success) return ET_ERR_DELEGATE;
    if (xnn_invoke_runtime(h->rt) != xnn_status_success) return ET_ERR_DELEGATE;
  }
  LIB_TIMER_STOP
  for (uint32_t i = 0; i < h->n_io; i++) {
    xio *io = &h->io[i];
    if (io->kind == IO_PERMUTE_OUT)
      permute((const uint8_t *)io->buf, (uint8_t *)args[io->arg]->u.t->data, io->in_dims, io->perm, io->nd, io->esize);
  }
  if (h->runs++ == 0) {   /* the memory report: everything XNNPACK and this backend took, after a run */
    char line[96];
    snprintf(line, sizeof line, "xnnpack heap: peak %zu bytes, in use %zu bytes", et_xnn_bytes_peak, et_xnn_bytes_now);
    et_link_log(line);
    /* which nodes ran in our own int8 kernel (bench/xnnpack_speed.py and tests read this line) */
    if (!ET_XNN_OWN_KERNELS || (!et_xq_available() && !h->own))
      snprintf(line, sizeof line, "xnnpack own int8 kernels: off (%s)", ET_XNN_OWN_KERNELS ? "no avx512vnni" : "disabled");
    else   /* without VNNI only the int8 global average pooling is ours */
      snprintf(line, sizeof line, "xnnpack own int8 kernels (%s): %u of %u nodes, %u XNNPACK runtimes",
               et_xq_available() ? "avx512vnni" : "avgpool only", h->own, h->n_nodes,
               h->own ? h->split.n_steps - h->split.n_own : 1);
    et_link_log(line);
  }
  return ET_OK;
}

const et_backend et_backend_xnnpack = {"XnnpackBackend", 0, xnn_execute, xnn_load};
