/* Firmware entry: load every baked program and method, then either run the bundled test cases (or
 * the default all-ones inputs), or (ET_LINK_INPUTS) serve inputs and run requests from the host.
 * Outputs and a final result record go over the link; the exit status says how it went. */
#include "et_baked.h"
#include "et_bundled.h"
#include "et_link.h"
#include "bsp.h"

#ifdef ET_PROFILE
void et_profile_init(void);
#endif

#ifndef ET_LINK_RX_TIMEOUT_MS
#define ET_LINK_RX_TIMEOUT_MS 60000u
#endif

static uint32_t cases_total, cases_failed, methods_run;
#define bundles et_baked_bundles
#define pools et_baked_pools

static void send_error(et_status st, uint32_t p, uint32_t mi, const et_error_info *e) {
  et_link_begin(ET_REC_ERROR);
  et_link_u16((uint16_t)st); et_link_u8((uint8_t)p); et_link_u8((uint8_t)mi);
  et_link_u32(e ? e->instr : 0xFFFFFFFFu); et_link_u32(e ? e->op : 0xFFFFFFFFu);
  et_link_u32(e ? e->value : 0xFFFFFFFFu); et_link_u32(e ? e->detail : 0); et_link_u32(e ? e->detail2 : 0);
  et_link_end();
}

static void send_value(uint32_t p, uint32_t mi, uint32_t c, uint32_t i, const et_value *v) {
  et_link_begin(ET_REC_OUTPUT);
  et_link_u8((uint8_t)p); et_link_u8((uint8_t)mi); et_link_u16((uint16_t)c); et_link_u16((uint16_t)i);
  et_link_u8((uint8_t)v->tag);
  if (v->tag == ET_TAG_TENSOR) {
    const et_tensor *t = v->u.t;
    et_link_u8(t->dtype); et_link_u8(t->ndim); et_link_u8(0);
    for (uint32_t d = 0; d < t->ndim; d++) et_link_u32((uint32_t)t->sizes[d]);
    for (uint32_t d = 0; d < t->ndim; d++) et_link_u8(t->dim_order ? t->dim_order[d] : (uint8_t)d);
    if (t->data) et_link_put(t->data, et_nbytes(t));
  } else {
    et_link_u8(0); et_link_u8(0); et_link_u8(0);
    et_link_u64((uint64_t)v->u.i);
  }
  et_link_end();
}

static void send_outputs(uint32_t p, uint32_t mi, uint32_t c, et_method *m) {
  for (uint32_t i = 0; i < et_method_num_outputs(m); i++) send_value(p, mi, c, i, et_method_output(m, i));
}

static void send_method(uint32_t p, uint32_t mi, const et_method *m, const et_pool *pool,
                        uint64_t load, uint64_t exec) {
  et_link_begin(ET_REC_METHOD);
  et_link_u8((uint8_t)p); et_link_u8((uint8_t)mi); et_link_u16(0);
  et_link_u32((uint32_t)pool->used); et_link_u32((uint32_t)pool->size);
  et_link_u64(load); et_link_u64(exec);
  if (m->name) et_link_put(m->name, m->name_len);
  et_link_end();
}

/* Loads program p (unwrapping a bundle) and all its baked methods. */
static et_status load_program(uint32_t p, uint32_t *pool_index, uint64_t *load_cycles) {
  const et_baked_program *bp = &et_baked_programs[p];
  const uint8_t *data = bp->blob;
  uint32_t size = bp->size;
  et_status st;
  if (et_is_bundle(data, size)) {
    st = et_bundle_load(&bundles[p], data, size);
    if (st != ET_OK) { send_error(st, p, 0xFF, 0); return st; }
    data = bundles[p].program; size = bundles[p].program_size;
  }
  st = et_program_load(bp->state, data, size);
  if (st != ET_OK) { send_error(st, p, 0xFF, 0); return st; }
  for (uint32_t mi = 0; mi < bp->n_methods; mi++) {
    const et_baked_method *bm = &bp->methods[mi];
    et_pool *pool = &pools[(*pool_index)++];
    et_pool_init(pool, bm->pool, bm->pool_size);
    et_method_memory mem = {pool, bm->arenas, bm->arena_sizes, bm->n_arenas, bm->op_state,
                            bm->op_scratch, bm->scratch_plan, bm->scratch_size, bm->scratch_mem, bm->scratch_off};
    int32_t plan = et_program_find_method(bp->state, bm->name);
    if (plan < 0) { send_error(ET_ERR_BAD_PROGRAM, p, mi, 0); return ET_ERR_BAD_PROGRAM; }
    uint64_t t0 = bsp_cycles();
    st = et_method_load(bm->state, bp->state, (uint32_t)plan, &mem, bm->ops, bm->n_ops);
    load_cycles[mi] = bsp_cycles() - t0;
    if (st != ET_OK) { send_error(st, p, mi, &bm->state->err); return st; }
  }
  return ET_OK;
}

static et_status execute(uint32_t p, uint32_t mi, et_method *m, uint64_t *cycles) {
#ifdef ET_PROFILE
  et_profile_run_begin(p, mi);
#else
  (void)p; (void)mi;
#endif
  uint64_t a = bsp_cycles();
  et_status st = et_method_execute(m);
  *cycles += bsp_cycles() - a;
#ifdef ET_PROFILE
  et_profile_run_end(st);
#endif
  return st;
}

#ifndef ET_LINK_INPUTS
static et_status run_method(uint32_t p, uint32_t mi, et_pool *pool, uint64_t load) {
  const et_baked_program *bp = &et_baked_programs[p];
  et_method *m = bp->methods[mi].state;
  et_bundle *bundle = et_is_bundle(bp->blob, bp->size) ? &bundles[p] : 0;
  int32_t suite = bundle ? et_bundle_find_suite(bundle, m->name, m->name_len) : -1;
  uint32_t ncases = suite >= 0 ? et_bundle_num_cases(bundle, suite) : 0;
  uint64_t exec = 0;
  et_status st;
  if (ncases == 0) {
    st = et_method_fill_inputs_ones(m);
    if (st == ET_OK) st = execute(p, mi, m, &exec);
    if (st != ET_OK) { send_error(st, p, mi, &m->err); return st; }
    send_outputs(p, mi, 0xFFFF, m);
  }
  for (uint32_t c = 0; c < ncases; c++) {
    st = et_bundle_set_inputs(bundle, suite, c, m);
    if (st == ET_OK) st = execute(p, mi, m, &exec);
    if (st != ET_OK) { send_error(st, p, mi, &m->err); return st; }
    send_outputs(p, mi, c, m);
    float err; uint32_t bad;
    et_status cs = et_bundle_check_outputs(bundle, suite, c, m, et_baked_atol, et_baked_rtol, &err, &bad);
    if (cs != ET_OK && cs != ET_ERR_MISMATCH) { send_error(cs, p, mi, 0); return cs; }
    cases_total++;
    if (cs != ET_OK) cases_failed++;
    union { float f; uint32_t u; } eb = {err};
    et_link_begin(ET_REC_CASE);
    et_link_u8((uint8_t)p); et_link_u8((uint8_t)mi); et_link_u16((uint16_t)c);
    et_link_u8(cs == ET_OK); et_link_u8(0); et_link_u16((uint16_t)et_method_num_outputs(m));
    et_link_u32(eb.u); et_link_u32(bad);
    et_link_end();
  }
  methods_run++;
  send_method(p, mi, m, pool, load, exec);
  return ET_OK;
}

#endif

#ifdef ET_LINK_INPUTS
static uint8_t *input_sink(const et_link_input *in, uint32_t *cap, void *user) {
  (void)user;
  if (in->program >= et_baked_n_programs || in->method >= et_baked_programs[in->program].n_methods) return 0;
  et_method *m = et_baked_programs[in->program].methods[in->method].state;
  et_value *v = et_method_input(m, in->index);
  if (!v || v->tag != ET_TAG_TENSOR || v->u.t->dtype != in->dtype || v->u.t->ndim != in->ndim) return 0;
  if (et_resize(v->u.t, in->ndim, in->sizes) != ET_OK) return 0;
  *cap = (uint32_t)et_nbytes(v->u.t);
  return (uint8_t *)v->u.t->data;
}

/* Serve the host: INPUT frames fill input tensors, RUN executes, END finishes. */
static et_status serve(uint32_t *pool_of, uint64_t *loads) {
  et_link_frame f;
  uint32_t runs = 0;
  while (et_link_recv(&f, input_sink, 0, ET_LINK_RX_TIMEOUT_MS)) {
    if (!f.crc_ok) { send_error(ET_ERR_BAD_INPUT, 0xFF, 0xFF, 0); continue; }
    if (f.type == ET_REC_END) return ET_OK;
    if (f.type == ET_REC_INPUT) {
      if (f.overflow || f.data_bytes == 0) send_error(ET_ERR_BAD_INPUT, f.input.program, f.input.method, 0);
      continue;
    }
    if (f.type != ET_REC_RUN) continue;
    if (f.program >= et_baked_n_programs || f.method >= et_baked_programs[f.program].n_methods) {
      send_error(ET_ERR_BAD_INPUT, f.program, f.method, 0);
      continue;
    }
    et_method *m = et_baked_programs[f.program].methods[f.method].state;
    uint64_t exec = 0;
    et_status st = execute(f.program, f.method, m, &exec);
    if (st != ET_OK) { send_error(st, f.program, f.method, &m->err); return st; }
    send_outputs(f.program, f.method, runs++ % 0xFFFFu, m);
    methods_run++;
    uint32_t idx = pool_of[f.program] + f.method;
    send_method(f.program, f.method, m, &pools[idx], loads[idx], exec);
  }
  return ET_ERR_BAD_INPUT;   /* the host went away or silent without END */
}
#endif

int main(void) {
  bsp_init();
#ifdef ET_PROFILE
  et_profile_init();
#endif
  et_link_begin(ET_REC_HELLO);
  et_link_u8(ET_LINK_VERSION); et_link_u8((uint8_t)et_baked_n_programs);
#ifdef ET_LINK_INPUTS
  et_link_u16(1);
#else
  et_link_u16(0);
#endif
  et_link_u32(bsp_cycles_hz());
  et_link_end();
  et_status st = ET_OK;
  uint32_t npool = 0, *pool_of = et_baked_first_method;
  uint64_t *loads = et_baked_load_cycles;
  for (uint32_t p = 0; p < et_baked_n_programs && st == ET_OK; p++) {
    pool_of[p] = npool;
    st = load_program(p, &npool, loads + npool);
  }
#ifdef ET_LINK_INPUTS
  if (st == ET_OK) st = serve(pool_of, loads);
#else
  for (uint32_t p = 0; p < et_baked_n_programs && st == ET_OK; p++)
    for (uint32_t mi = 0; mi < et_baked_programs[p].n_methods && st == ET_OK; mi++)
      st = run_method(p, mi, &pools[pool_of[p] + mi], loads[pool_of[p] + mi]);
#endif
  uint32_t frames = et_link_frames();
  et_link_begin(ET_REC_RESULT);
  et_link_u16((uint16_t)st); et_link_u16(0);
  et_link_u32(methods_run); et_link_u32(cases_total); et_link_u32(cases_failed); et_link_u32(frames);
  et_link_end();
  bsp_exit(st != ET_OK ? 2 : (cases_failed ? 1 : 0));
}

void bsp_fault_hook(uint32_t pc, uint32_t lr, uint32_t addr, uint32_t status) {
  et_link_begin(ET_REC_FAULT);
  et_link_u32(pc); et_link_u32(lr); et_link_u32(addr); et_link_u32(status);
  et_link_end();
}
