/* XnnpackBackend: the node list split into steps when our own int8 kernel (et_xnn_own.c) takes some
 * nodes. Each maximal run of the other nodes becomes one XNNPACK subgraph and runtime; a value that
 * crosses steps (read or written by two steps, constants excepted) is an external value of the
 * runtimes touching it, kept in the delegate's own tensor when it is one, else in one arena whose
 * offsets are planned by the steps' lifetimes (first-fit), allocated through the counted allocator. */
#include <string.h>

#include "et_xnn.h"

#define NONE UINT32_MAX

static uint32_t canon(const xval *vals, uint32_t nv, uint32_t v) {
  for (int i = 0; i < 4 && v < nv && vals[v].alias != UINT32_MAX; i++) v = vals[v].alias;
  return v;
}

static size_t value_bytes(const xval *v) {
  size_t n = v->dt == 1 || v->dt == 5 || v->dt == 7 ? 4 : v->dt == 2 ? 2 : 1;
  for (uint32_t i = 0; i < v->nd; i++) n *= v->dims[i];
  return n;
}

static int is_constant(const xval *v) { return et_fb_u32(&v->t, XNFB_XNNTensorValue_constant_buffer_idx, 0) != 0; }

typedef struct life { uint32_t first, last, producer; uint8_t cross; } life;

/* First-fit offsets for the arena values, by lifetime (steps [first, last]). */
static size_t plan_arena(const xval *vals, uint32_t nv, const life *lv, size_t *off) {
  size_t total = 0;
  for (uint32_t v = 0; v < nv; v++) {
    if (off[v] != 0) continue;                                  /* 0: to place; SIZE_MAX: not in the arena */
    size_t size = (value_bytes(&vals[v]) + XNN_EXTRA_BYTES + 63) & ~(size_t)63, at = 0;
    for (int moved = 1; moved;) {
      moved = 0;
      for (uint32_t u = 0; u < nv; u++) {
        if (u == v || off[u] == SIZE_MAX || off[u] == 0 || lv[u].last < lv[v].first || lv[v].last < lv[u].first)
          continue;
        size_t us = (value_bytes(&vals[u]) + XNN_EXTRA_BYTES + 63) & ~(size_t)63, uo = off[u] - 1;
        if (at < uo + us && uo < at + size) { at = uo + us; moved = 1; }
      }
    }
    off[v] = at + 1;                                            /* stored + 1 while planning */
    if (at + size > total) total = at + size;
  }
  for (uint32_t v = 0; v < nv; v++)
    if (off[v] != SIZE_MAX) off[v] -= 1;
  return total;
}

static et_status build_runtime(xsplit *s, const xconst *c, et_fb_vec *ns, const xval *vals, uint32_t nv,
                               const life *lv, const uint32_t *step_of, uint32_t st_i, pthreadpool_t pool,
                               uint32_t *map, uint32_t *n_ext_total) {
  xstep *stp = &s->steps[st_i];
  uint8_t *used = (uint8_t *)et_xnn_alloc(8, nv);
  if (!used) return ET_ERR_OUT_OF_MEMORY;
  memset(used, 0, nv);
  for (uint32_t k = 0; k < ns->len; k++) {
    et_fb_table xn;
    uint32_t in[3], nin, out;
    if (step_of[k] != st_i || !et_fb_vec_table(ns, k, &xn) || !et_xnn_node_io(&xn, in, &nin, &out)) continue;
    for (uint32_t i = 0; i < nin; i++) if (in[i] < nv) used[canon(vals, nv, in[i])] = 1;
    if (out < nv) used[canon(vals, nv, out)] = 1;
  }
  stp->first_ext = *n_ext_total;
  for (uint32_t v = 0; v < nv; v++)
    if (used[v] && lv[v].cross) { s->ext_val[*n_ext_total] = v; (*n_ext_total)++; }
  stp->n_ext = *n_ext_total - stp->first_ext;
  xnn_subgraph_t sg = 0;
  et_status st = xnn_create_subgraph(stp->n_ext, 0, &sg) == xnn_status_success ? ET_OK : ET_ERR_DELEGATE;
  for (uint32_t v = 0; v < nv; v++) map[v] = XNN_INVALID_VALUE_ID;
  uint32_t e = 0;
  for (uint32_t v = 0; v < nv && st == ET_OK; v++) {
    if (!used[v]) continue;
    xval t = vals[v];
    if (lv[v].cross) {
      t.ext = e++;
      t.flags = lv[v].producer == st_i ? XNN_VALUE_FLAG_EXTERNAL_OUTPUT : XNN_VALUE_FLAG_EXTERNAL_INPUT;
    } else {
      t.ext = XNN_INVALID_VALUE_ID;
      t.flags = 0;
    }
    st = et_xnn_define_value(sg, c, &t, &map[v]);
  }
  for (uint32_t v = 0; v < nv; v++)
    if (vals[v].alias != UINT32_MAX) map[v] = map[canon(vals, nv, v)];
  for (uint32_t k = 0; k < ns->len && st == ET_OK; k++) {
    et_fb_table xn;
    if (step_of[k] != st_i) continue;
    if (!et_fb_vec_table(ns, k, &xn)) { st = ET_ERR_BAD_PROGRAM; break; }
    st = et_xnn_define_node(sg, &xn, map, nv, vals, 0);
  }
  if (st == ET_OK && xnn_create_runtime_v2(sg, pool, 0, &stp->rt) != xnn_status_success) st = ET_ERR_DELEGATE;
  if (sg) xnn_delete_subgraph(sg);
  et_xnn_free(used);
  return st;
}

et_status et_xnn_split_build(xsplit *s, const xconst *c, et_fb_vec *ns, xval *vals, uint32_t nv,
                             const uint8_t *edge, const xio *io, uint32_t n_io, pthreadpool_t pool,
                             uint32_t *taken) {
  *taken = 0;
  memset(s, 0, sizeof *s);
  uint32_t nn = ns->len;
  uint32_t *step_of = (uint32_t *)et_xnn_alloc(8, (nn + 1) * sizeof(uint32_t));
  uint32_t *map = (uint32_t *)et_xnn_alloc(8, (nv + 1) * sizeof(uint32_t));
  life *lv = (life *)et_xnn_alloc(8, (nv + 1) * sizeof(life));
  s->owns = (xown *)et_xnn_alloc(64, (nn + 1) * sizeof(xown));
  s->steps = (xstep *)et_xnn_alloc(8, (nn + 1) * sizeof(xstep));
  et_status st = step_of && map && lv && s->owns && s->steps ? ET_OK : ET_ERR_OUT_OF_MEMORY;
  /* how many nodes read each value (a clamp fuses into our node only when it is the one reader) */
  uint32_t *readers = (uint32_t *)et_xnn_alloc(8, (nv + 1) * sizeof(uint32_t));
  if (!readers) st = ET_ERR_OUT_OF_MEMORY;
  else memset(readers, 0, (nv + 1) * sizeof(uint32_t));
  for (uint32_t k = 0; k < nn && st == ET_OK; k++) {
    et_fb_table xn;
    uint32_t ids[3], nin, out;
    if (edge[k] || !et_fb_vec_table(ns, k, &xn) || !et_xnn_node_io(&xn, ids, &nin, &out)) continue;
    for (uint32_t i = 0; i < nin; i++) if (ids[i] < nv) readers[canon(vals, nv, ids[i])]++;
  }
  /* steps: an own node is a step; consecutive other nodes share one */
  int last_xnn = 0;
  for (uint32_t k = 0; k < nn && st == ET_OK; k++) {
    et_fb_table xn;
    step_of[k] = NONE;
    if (edge[k]) continue;
    if (!et_fb_vec_table(ns, k, &xn)) { st = ET_ERR_BAD_PROGRAM; break; }
    int own = 0;
    st = et_xnn_own_take(&xn, vals, nv, c, &s->owns[s->n_own], &own);
    if (st != ET_OK) break;
    if (own) {
      memset(&s->steps[s->n_steps], 0, sizeof(xstep));
      xown *o = &s->owns[s->n_own++];
      s->steps[s->n_steps].own = o;
      step_of[k] = s->n_steps++;
      last_xnn = 0;
      et_fb_table next;
      if (k + 1 < nn && !edge[k + 1] && readers[o->out] == 1 && et_fb_vec_table(ns, k + 1, &next) &&
          et_xnn_own_fuse_clamp(o, &next, vals, nv)) {
        step_of[++k] = s->n_steps - 1;
        s->n_fused++;
      }
    } else {
      if (!last_xnn) { memset(&s->steps[s->n_steps], 0, sizeof(xstep)); s->n_steps++; }
      step_of[k] = s->n_steps - 1;
      last_xnn = 1;
    }
  }
  if (st == ET_OK && s->n_own) {
    /* lifetimes: which steps touch each value; crossing values need a place of their own */
    for (uint32_t v = 0; v < nv; v++) lv[v] = (life){NONE, 0, NONE, 0};
    for (uint32_t k = 0; k < nn && st == ET_OK; k++) {
      et_fb_table xn;
      uint32_t ids[4], nin, out;
      if (step_of[k] == NONE) continue;
      if (!et_fb_vec_table(ns, k, &xn) || !et_xnn_node_io(&xn, ids, &nin, &out)) { st = ET_ERR_UNSUPPORTED; break; }
      ids[nin] = out;
      for (uint32_t i = 0; i <= nin; i++) {
        uint32_t v = ids[i] < nv ? canon(vals, nv, ids[i]) : NONE, sk = step_of[k];
        if (v >= nv || is_constant(&vals[v])) continue;
        if (lv[v].first != NONE && lv[v].first != sk) lv[v].cross = 1;
        if (lv[v].first == NONE || sk < lv[v].first) lv[v].first = sk;
        if (sk > lv[v].last) lv[v].last = sk;
        if (i == nin) lv[v].producer = sk;
        if (s->steps[sk].own) lv[v].cross = 1;                      /* our kernel reads/writes it in place */
      }
    }
    s->nv = nv;
    s->val_io = (int32_t *)et_xnn_alloc(8, nv * sizeof(int32_t));
    s->val_off = (size_t *)et_xnn_alloc(8, nv * sizeof(size_t));
    s->vptr = (void **)et_xnn_alloc(8, nv * sizeof(void *));
    s->ext_val = (uint32_t *)et_xnn_alloc(8, (nv + 1) * sizeof(uint32_t));
    s->ext = (struct xnn_external_value *)et_xnn_alloc(8, (nv + 1) * sizeof(struct xnn_external_value));
    if (!s->val_io || !s->val_off || !s->vptr || !s->ext_val || !s->ext) st = ET_ERR_OUT_OF_MEMORY;
    for (uint32_t v = 0; v < nv && st == ET_OK; v++) {
      s->val_io[v] = -1;
      s->vptr[v] = 0;
      s->val_off[v] = SIZE_MAX;
      if (vals[v].alias != UINT32_MAX) continue;
      if (vals[v].flags & (XNN_VALUE_FLAG_EXTERNAL_INPUT | XNN_VALUE_FLAG_EXTERNAL_OUTPUT)) {
        for (uint32_t i = 0; i < n_io; i++) if (io[i].ext == vals[v].ext) s->val_io[v] = (int32_t)i;
        if (s->val_io[v] < 0) st = ET_ERR_UNSUPPORTED;
        lv[v].cross = 1;
      } else if (lv[v].cross) {
        s->val_off[v] = 0;                                      /* to place */
      }
    }
    if (st == ET_OK) {
      s->arena_bytes = plan_arena(vals, nv, lv, s->val_off);
      s->arena = (uint8_t *)et_xnn_alloc(64, s->arena_bytes + 64);
      for (uint32_t i = 0; i < s->n_own; i++) {
        if (s->owns[i].kind != XOWN_CONV) continue;
        size_t b = et_xq_image_bytes(&s->owns[i].q);
        if (b > s->img_bytes) s->img_bytes = b;
      }
      s->img = s->img_bytes ? (uint8_t *)et_xnn_alloc(64, s->img_bytes) : 0;
      if (!s->arena || (s->img_bytes && !s->img)) st = ET_ERR_OUT_OF_MEMORY;
    }
    for (uint32_t v = 0; v < nv && st == ET_OK; v++)
      if (s->val_off[v] != SIZE_MAX) s->vptr[v] = s->arena + s->val_off[v];
    uint32_t n_ext = 0;
    for (uint32_t i = 0; i < s->n_steps && st == ET_OK; i++)
      if (!s->steps[i].own) st = build_runtime(s, c, ns, vals, nv, lv, step_of, i, pool, map, &n_ext);
    *taken = s->n_own + s->n_fused;
    s->n_nodes = nn;
  }
  if (st == ET_OK && !s->n_own) {                /* nothing taken: one runtime as before */
    et_xnn_free(s->owns); et_xnn_free(s->steps);
    s->owns = 0; s->steps = 0; s->n_steps = 0;
  }
  et_xnn_free(step_of); et_xnn_free(map); et_xnn_free(lv); et_xnn_free(readers);
  return st;
}

et_status et_xnn_split_run(xsplit *s, void *const *io_ptr, pthreadpool_t pool) {
  for (uint32_t v = 0; v < s->nv; v++)
    if (s->val_io[v] >= 0) s->vptr[v] = io_ptr[s->val_io[v]];
  for (uint32_t i = 0; i < s->n_steps; i++) {
    xstep *t = &s->steps[i];
    if (t->own && t->own->kind == XOWN_GAP) {
      et_xg_run(&t->own->g, (const int8_t *)s->vptr[t->own->in], (int8_t *)s->vptr[t->own->out]);
      continue;
    }
    if (t->own) {
      et_xq_run(&t->own->q, (const int8_t *)s->vptr[t->own->in], (int8_t *)s->vptr[t->own->out], s->img, pool);
      continue;
    }
    int same = t->bound;                 /* setup again only when a bound tensor moved */
    for (uint32_t e = 0; e < t->n_ext; e++) {
      struct xnn_external_value *x = &s->ext[t->first_ext + e];
      void *d = s->vptr[s->ext_val[t->first_ext + e]];
      same &= x->data == d;
      x->id = e;
      x->data = d;
    }
    if (!same && xnn_setup_runtime(t->rt, t->n_ext, &s->ext[t->first_ext]) != xnn_status_success)
      return ET_ERR_DELEGATE;
    t->bound = 1;
    if (xnn_invoke_runtime(t->rt) != xnn_status_success) return ET_ERR_DELEGATE;
  }
  return ET_OK;
}
