/* The public C API of libetmodel.a (etdeploy lib): the baked program and the runtime behind four
 * calls, for firmware that has its own startup, main and linker script. One program per library;
 * methods by index (ETMODEL_<NAME> in etmodel.h). Memory is bake's static arenas and pools, placed by
 * the user's linker script through their sections (.et_model*, .et_arena*, .et_pool*). */
#include "etmodel.h"
#include "et_baked.h"
#include "et_bundled.h"

static int loaded;            /* 1 after a successful etmodel_init */
static uint64_t last_cycles[ETMODEL_N_METHODS];

static int fail(int st, uint32_t method, const char *what) {
  etmodel_port_fault(st, method, what);
  return st;
}

static et_method *method_of(uint32_t method) {
  const et_baked_program *bp = &et_baked_programs[0];
  return (loaded && method < bp->n_methods) ? bp->methods[method].state : 0;
}

int etmodel_init(void) {
  const et_baked_program *bp = &et_baked_programs[0];
  const uint8_t *data = bp->blob;
  uint32_t size = bp->size;
  et_status st;
  loaded = 0;
  if (et_is_bundle(data, size)) {      /* a .bpte: the program sits inside the bundle */
    st = et_bundle_load(&et_baked_bundles[0], data, size);
    if (st != ET_OK) return fail(st, ETMODEL_NO_METHOD, "bundle");
    data = et_baked_bundles[0].program;
    size = et_baked_bundles[0].program_size;
  }
  st = et_program_load(bp->state, data, size);
  if (st != ET_OK) return fail(st, ETMODEL_NO_METHOD, "program");
  for (uint32_t mi = 0; mi < bp->n_methods; mi++) {
    const et_baked_method *bm = &bp->methods[mi];
    et_pool *pool = &et_baked_pools[mi];
    et_pool_init(pool, bm->pool, bm->pool_size);
    et_method_memory mem = {pool, bm->arenas, bm->arena_sizes, bm->n_arenas, bm->op_state,
                            bm->op_scratch, bm->scratch_plan, bm->scratch_size, bm->scratch_mem, bm->scratch_off};
    int32_t plan = et_program_find_method(bp->state, bm->name);
    if (plan < 0) return fail(ET_ERR_BAD_PROGRAM, mi, "method not in program");
    st = et_method_load(bm->state, bp->state, (uint32_t)plan, &mem, bm->ops, bm->n_ops);
    if (st != ET_OK) return fail(st, mi, "method load");
  }
  loaded = 1;
  return ETMODEL_OK;
}

int etmodel_set_input(uint32_t method, uint32_t index, const void *data, size_t nbytes) {
  et_method *m = method_of(method);
  if (!m) return fail(ET_ERR_BAD_INPUT, method, "set_input: not loaded or no such method");
  et_value *v = et_method_input(m, index);
  if (!v || v->tag != ET_TAG_TENSOR) return fail(ET_ERR_BAD_INPUT, method, "set_input: no tensor input");
  const et_tensor *t = v->u.t;
  et_status st = et_method_set_input(m, index, t->dtype, 0, 0, data, nbytes);
  return st == ET_OK ? ETMODEL_OK : fail(st, method, "set_input: dtype or byte size differs");
}

int etmodel_execute(uint32_t method) {
  et_method *m = method_of(method);
  if (!m) return fail(ET_ERR_BAD_INPUT, method, "execute: not loaded or no such method");
  uint64_t t0 = etmodel_port_cycles();
  et_status st = et_method_execute(m);
  last_cycles[method] = etmodel_port_cycles() - t0;
  return st == ET_OK ? ETMODEL_OK : fail(st, method, "execute");
}

const void *etmodel_output(uint32_t method, uint32_t index, size_t *nbytes) {
  et_method *m = method_of(method);
  et_value *v = m ? et_method_output(m, index) : 0;
  if (!v || v->tag != ET_TAG_TENSOR || !v->u.t->data) {
    if (nbytes) *nbytes = 0;
    return 0;
  }
  if (nbytes) *nbytes = et_nbytes(v->u.t);
  return v->u.t->data;
}

void *etmodel_input_buffer(uint32_t method, uint32_t index, size_t *nbytes) {
  et_method *m = method_of(method);
  et_value *v = m ? et_method_input(m, index) : 0;
  if (!v || v->tag != ET_TAG_TENSOR || !v->u.t->data) {
    if (nbytes) *nbytes = 0;
    return 0;
  }
  if (nbytes) *nbytes = et_nbytes(v->u.t);
  return v->u.t->data;
}

uint64_t etmodel_last_cycles(uint32_t method) {
  return method < ETMODEL_N_METHODS ? last_cycles[method] : 0;
}

size_t etmodel_pool_used(uint32_t method) {
  return method < ETMODEL_N_METHODS && loaded ? et_baked_pools[method].used : 0;
}

const char *etmodel_status_name(int status) {
  return et_status_name((et_status)status);
}
