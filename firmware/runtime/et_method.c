/* Method loading (values, tensors, lists, instructions into the bake-sized pool) and execution.
 * Every allocation here is mirrored by the pool size formula in tools/etdeploy/plan.py: keep the
 * two in step (tests/test_runtime_host.py checks used == planned). */
#include "et_runtime.h"
#include "et_schema.gen.h"

#define NONE_IDX 0xFFFFFFFFu

static et_status oom(et_method *m, et_pool *pool) {
  m->err.detail = (uint32_t)pool->failed_need;
  m->err.detail2 = (uint32_t)(pool->size - pool->used);
  return ET_ERR_OUT_OF_MEMORY;
}

static size_t dtype_bytes(uint32_t dt) {
  size_t s = et_dtype_size(dt);
  return s;
}

/* Tensor value: struct + sizes in the pool; data in an arena, a constant, or unbound. */
static et_status load_tensor(et_method *m, et_pool *pool, const et_method_memory *mem,
                             et_fb_table *tt, et_value *v, uint32_t vi) {
  et_program *p = m->prog;
  et_tensor *t = (et_tensor *)et_pool_alloc(pool, sizeof(et_tensor));
  if (!t) return oom(m, pool);
  et_fb_vec sizes = et_fb_vector(tt, ETFB_Tensor_sizes, 4);
  et_fb_vec dorder = et_fb_vector(tt, ETFB_Tensor_dim_order, 1);
  if (sizes.len > ET_MAX_DIMS) return ET_ERR_UNSUPPORTED;
  t->ndim = (uint8_t)sizes.len;
  t->sizes = 0;
  if (sizes.len) {
    t->sizes = (int32_t *)et_pool_alloc(pool, 4u * sizes.len);
    if (!t->sizes) return oom(m, pool);
  }
  uint64_t numel = 1;
  for (uint32_t d = 0; d < sizes.len; d++) {
    int32_t s = et_fb_vec_i32(&sizes, d);
    if (s < 0) return ET_ERR_BAD_PROGRAM;
    t->sizes[d] = s;
    numel *= (uint64_t)s;
    if (numel > 0xFFFFFFFFull) return ET_ERR_BAD_PROGRAM;
  }
  t->dim_order = 0;
  t->constant = 0;
  if (dorder.len) {
    if (dorder.len != sizes.len) return ET_ERR_BAD_PROGRAM;
    uint32_t seen = 0;
    for (uint32_t d = 0; d < dorder.len; d++) {
      uint8_t o = et_fb_vec_u8(&dorder, d);
      if (o >= dorder.len || (seen & (1u << o))) return ET_ERR_BAD_PROGRAM;
      seen |= 1u << o;
    }
    t->dim_order = p->fb.base + dorder.pos;
  }
  t->dtype = et_fb_u8(tt, ETFB_Tensor_scalar_type, 0);
  t->dynamic = et_fb_u8(tt, ETFB_Tensor_shape_dynamism, 0);
  size_t es = dtype_bytes(t->dtype);
  if (!es) return ET_ERR_UNSUPPORTED;
  uint64_t nbytes = numel * es;
  if (nbytes > 0xFFFFFFFFull) return ET_ERR_BAD_PROGRAM;
  t->capacity = (uint32_t)nbytes;
  t->data = 0;
  et_fb_table alloc;
  uint32_t buf_idx = et_fb_u32(tt, ETFB_Tensor_data_buffer_idx, 0);
  if (et_fb_sub(tt, ETFB_Tensor_allocation_info, &alloc)) {
    uint32_t mid = et_fb_u32(&alloc, ETFB_AllocationDetails_memory_id, 0);
    uint64_t off = et_fb_u32(&alloc, ETFB_AllocationDetails_memory_offset_low, 0) |
                   ((uint64_t)et_fb_u32(&alloc, ETFB_AllocationDetails_memory_offset_high, 0) << 32);
    if (mid == 0 || mid >= mem->n_arenas || !mem->arenas[mid]) {
      m->err.value = vi; m->err.detail = mid;
      return ET_ERR_BAD_PROGRAM;
    }
    if (off > mem->arena_sizes[mid] || nbytes > mem->arena_sizes[mid] - off) {
      m->err.value = vi; m->err.detail = (uint32_t)(off + nbytes); m->err.detail2 = mem->arena_sizes[mid];
      return ET_ERR_OUT_OF_MEMORY;
    }
    t->data = mem->arenas[mid] + off;
  } else if (buf_idx > 0) {
    const void *c;
    if (et_program_constant(p, buf_idx, (size_t)nbytes, &c) != ET_OK) { m->err.value = vi; return ET_ERR_BAD_PROGRAM; }
    t->data = (void *)c;  /* constants stay in flash; kernels treat inputs as const */
    t->constant = 1;
  }
  /* Kernels access elements with their natural alignment (Cortex-M VLDR/LDRD and Xtensa fault
   * otherwise): an arena offset or constant that breaks it is a bad program. */
  if (t->data && ((uintptr_t)t->data & ((es < 8 ? es : 8) - 1))) { m->err.value = vi; return ET_ERR_BAD_PROGRAM; }
  v->tag = ET_TAG_TENSOR;
  v->u.t = t;
  return ET_OK;
}

static et_status load_list(et_method *m, et_pool *pool, uint32_t type, et_fb_table *lt, et_value *v) {
  et_list *l = (et_list *)et_pool_alloc(pool, sizeof(et_list));
  if (!l) return oom(m, pool);
  v->u.list = l;
  switch (type) {
    case ETFB_KernelTypes_IntList: {
      et_fb_vec items = et_fb_vector(lt, ETFB_IntList_items, 8);
      int64_t *out = items.len ? (int64_t *)et_pool_alloc(pool, 8u * items.len) : 0;
      if (items.len && !out) return oom(m, pool);
      for (uint32_t i = 0; i < items.len; i++) {
        uint64_t idx = et_fb_vec_u64(&items, i);
        if (idx >= m->n_values || m->values[idx].tag != ET_TAG_INT) return ET_ERR_BAD_PROGRAM;
        out[i] = m->values[idx].u.i;
      }
      l->items = out; l->len = items.len; v->tag = ET_TAG_INT_LIST;
      return ET_OK;
    }
    case ETFB_KernelTypes_DoubleList: {
      et_fb_vec items = et_fb_vector(lt, ETFB_DoubleList_items, 8);
      uint64_t *out = items.len ? (uint64_t *)et_pool_alloc(pool, 8u * items.len) : 0;
      if (items.len && !out) return oom(m, pool);
      for (uint32_t i = 0; i < items.len; i++) out[i] = et_fb_vec_u64(&items, i);
      l->items = out; l->len = items.len; v->tag = ET_TAG_DOUBLE_LIST;
      return ET_OK;
    }
    case ETFB_KernelTypes_BoolList: {
      et_fb_vec items = et_fb_vector(lt, ETFB_BoolList_items, 1);
      uint8_t *out = items.len ? (uint8_t *)et_pool_alloc(pool, items.len) : 0;
      if (items.len && !out) return oom(m, pool);
      for (uint32_t i = 0; i < items.len; i++) out[i] = et_fb_vec_u8(&items, i) != 0;
      l->items = out; l->len = items.len; v->tag = ET_TAG_BOOL_LIST;
      return ET_OK;
    }
    default: { /* TensorList, OptionalTensorList: value indices */
      et_fb_vec items = et_fb_vector(lt, ETFB_TensorList_items, 4);
      et_tensor **out = items.len ? (et_tensor **)et_pool_alloc(pool, sizeof(void *) * items.len) : 0;
      if (items.len && !out) return oom(m, pool);
      bool opt = type == ETFB_KernelTypes_OptionalTensorList;
      for (uint32_t i = 0; i < items.len; i++) {
        int32_t idx = et_fb_vec_i32(&items, i);
        if (opt && idx < 0) { out[i] = 0; continue; }
        if (idx < 0 || (uint32_t)idx >= m->n_values || m->values[idx].tag != ET_TAG_TENSOR)
          return ET_ERR_BAD_PROGRAM;
        out[i] = m->values[idx].u.t;
      }
      l->items = out; l->len = items.len;
      v->tag = opt ? ET_TAG_OPT_TENSOR_LIST : ET_TAG_TENSOR_LIST;
      return ET_OK;
    }
  }
}

/* Values load in two passes: scalars/tensors/strings first, then lists (which refer to them). */
static et_status load_values(et_method *m, et_pool *pool, const et_method_memory *mem) {
  et_fb_vec vals = et_fb_vector(&m->plan, ETFB_ExecutionPlan_values, 4);
  m->n_values = vals.len;
  m->values = vals.len ? (et_value *)et_pool_alloc(pool, sizeof(et_value) * vals.len) : 0;
  if (vals.len && !m->values) return oom(m, pool);
  for (uint32_t i = 0; i < vals.len; i++) { m->values[i].tag = ET_TAG_NONE; m->values[i]._pad = 0; m->values[i].u.i = 0; }
  for (int pass = 0; pass < 2; pass++) {
    for (uint32_t i = 0; i < vals.len; i++) {
      et_fb_table ev, body;
      if (!et_fb_vec_table(&vals, i, &ev)) return ET_ERR_BAD_PROGRAM;
      uint32_t type = et_fb_u8(&ev, ETFB_EValue_val_type, 0);
      bool has = et_fb_sub(&ev, ETFB_EValue_val, &body);
      if (m->prog->fb.err) return ET_ERR_BAD_PROGRAM;
      bool is_list = type >= ETFB_KernelTypes_IntList && type <= ETFB_KernelTypes_OptionalTensorList;
      if ((pass == 0) == is_list) continue;
      et_value *v = &m->values[i];
      if (type != ETFB_KernelTypes_Null && type != 0 && !has) return ET_ERR_BAD_PROGRAM;
      et_status st = ET_OK;
      switch (type) {
        case 0: case ETFB_KernelTypes_Null: break;
        case ETFB_KernelTypes_Int:
          v->tag = ET_TAG_INT; v->u.i = (int64_t)et_fb_u64(&body, ETFB_Int_int_val, 0); break;
        case ETFB_KernelTypes_Bool:
          v->tag = ET_TAG_BOOL; v->u.i = 0; v->u.b = et_fb_u8(&body, ETFB_Bool_bool_val, 0) != 0; break;
        case ETFB_KernelTypes_Double:
          v->tag = ET_TAG_DOUBLE; v->u.dbits = et_fb_u64(&body, ETFB_Double_double_val, 0); break;
        case ETFB_KernelTypes_String: {
          et_string *s = (et_string *)et_pool_alloc(pool, sizeof(et_string));
          if (!s) return oom(m, pool);
          s->ptr = et_fb_string(&body, ETFB_String_string_val, &s->len);
          if (!s->ptr) { s->ptr = ""; s->len = 0; }
          v->tag = ET_TAG_STRING; v->u.str = s; break;
        }
        case ETFB_KernelTypes_Tensor: st = load_tensor(m, pool, mem, &body, v, i); break;
        default:
          if (!is_list) return ET_ERR_BAD_PROGRAM;
          st = load_list(m, pool, type, &body, v);
      }
      if (st != ET_OK) { if (m->err.value == NONE_IDX) m->err.value = i; return st; }
      if (m->prog->fb.err) { m->err.value = i; return ET_ERR_BAD_PROGRAM; }
    }
  }
  return ET_OK;
}

static et_status resolve_args(et_method *m, et_pool *pool, et_fb_vec *args, et_instr *in) {
  in->nargs = args->len;
  in->args = 0;
  if (!args->len) return ET_OK;
  in->args = (et_value **)et_pool_alloc(pool, sizeof(void *) * args->len);
  if (!in->args) return oom(m, pool);
  for (uint32_t k = 0; k < args->len; k++) {
    int32_t idx = et_fb_vec_i32(args, k);
    if (idx < 0 || (uint32_t)idx >= m->n_values) return ET_ERR_BAD_PROGRAM;
    in->args[k] = &m->values[idx];
  }
  return ET_OK;
}

static et_status load_chains(et_method *m, et_pool *pool) {
  et_fb_vec chains = et_fb_vector(&m->plan, ETFB_ExecutionPlan_chains, 4);
  m->n_chains = chains.len;
  m->chains = chains.len ? (et_chain *)et_pool_alloc(pool, sizeof(et_chain) * chains.len) : 0;
  if (chains.len && !m->chains) return oom(m, pool);
  for (uint32_t c = 0; c < chains.len; c++) {
    et_fb_table ct;
    if (!et_fb_vec_table(&chains, c, &ct)) return ET_ERR_BAD_PROGRAM;
    et_fb_vec ins = et_fb_vector(&ct, ETFB_Chain_instructions, 4);
    et_chain *ch = &m->chains[c];
    ch->n = ins.len;
    ch->instrs = ins.len ? (et_instr *)et_pool_alloc(pool, sizeof(et_instr) * ins.len) : 0;
    if (ins.len && !ch->instrs) return oom(m, pool);
    for (uint32_t i = 0; i < ins.len; i++) {
      et_fb_table it, body;
      et_instr *in = &ch->instrs[i];
      in->kind = 0; in->a = in->b = 0; in->nargs = 0; in->args = 0; in->fn = 0; in->state = 0;
      m->err.instr = i;
      if (!et_fb_vec_table(&ins, i, &it)) return ET_ERR_BAD_PROGRAM;
      uint32_t type = et_fb_u8(&it, ETFB_Instruction_instr_args_type, 0);
      if (!et_fb_sub(&it, ETFB_Instruction_instr_args, &body)) return ET_ERR_BAD_PROGRAM;
      et_status st = ET_OK;
      switch (type) {
        case ETFB_InstructionArguments_KernelCall: {
          in->kind = ET_I_KERNEL;
          in->a = et_fb_u32(&body, ETFB_KernelCall_op_index, 0);
          if (in->a >= m->n_ops) { m->err.op = in->a; return ET_ERR_BAD_PROGRAM; }
          in->fn = m->ops[in->a];
          if (!in->fn) { m->err.op = in->a; return ET_ERR_MISSING_OPERATOR; }
          et_fb_vec args = et_fb_vector(&body, ETFB_KernelCall_args, 4);
          st = resolve_args(m, pool, &args, in);
          break;
        }
        case ETFB_InstructionArguments_DelegateCall: {
          in->kind = ET_I_DELEGATE;
          in->a = et_fb_u32(&body, ETFB_DelegateCall_delegate_index, 0);
          if (in->a >= m->n_delegates) return ET_ERR_BAD_PROGRAM;
          et_fb_vec args = et_fb_vector(&body, ETFB_DelegateCall_args, 4);
          st = resolve_args(m, pool, &args, in);
          break;
        }
        case ETFB_InstructionArguments_MoveCall:
          in->kind = ET_I_MOVE;
          in->a = et_fb_u32(&body, ETFB_MoveCall_move_from, 0);
          in->b = et_fb_u32(&body, ETFB_MoveCall_move_to, 0);
          if (in->a >= m->n_values || in->b >= m->n_values) return ET_ERR_BAD_PROGRAM;
          break;
        case ETFB_InstructionArguments_JumpFalseCall:
          in->kind = ET_I_JUMP_FALSE;
          in->a = et_fb_u32(&body, ETFB_JumpFalseCall_cond_value_index, 0);
          in->b = et_fb_u32(&body, ETFB_JumpFalseCall_destination_instruction, 0);
          if (in->a >= m->n_values || in->b >= ins.len) return ET_ERR_BAD_PROGRAM;
          break;
        case ETFB_InstructionArguments_FreeCall:
          in->kind = ET_I_FREE;
          in->a = et_fb_u32(&body, ETFB_FreeCall_value_index, 0);
          if (in->a >= m->n_values) return ET_ERR_BAD_PROGRAM;
          break;
        default:
          return ET_ERR_BAD_PROGRAM;
      }
      if (st != ET_OK) return st;
      if (m->prog->fb.err) return ET_ERR_BAD_PROGRAM;
    }
  }
  m->err.instr = NONE_IDX;
  return ET_OK;
}

static et_status load_delegates(et_method *m, et_pool *pool) {
  et_fb_vec ds = et_fb_vector(&m->plan, ETFB_ExecutionPlan_delegates, 4);
  m->n_delegates = ds.len;
  m->delegates = ds.len ? (et_delegate *)et_pool_alloc(pool, sizeof(et_delegate) * ds.len) : 0;
  if (ds.len && !m->delegates) return oom(m, pool);
  for (uint32_t i = 0; i < ds.len; i++) {
    et_fb_table d, ref;
    if (!et_fb_vec_table(&ds, i, &d)) return ET_ERR_BAD_PROGRAM;
    uint32_t len;
    const char *id = et_fb_string(&d, ETFB_BackendDelegate_id, &len);
    const et_backend *be = id ? et_backend_find(id, len) : 0;
    if (!be) { m->err.detail = i; return ET_ERR_UNKNOWN_BACKEND; }
    if (!et_fb_sub(&d, ETFB_BackendDelegate_processed, &ref)) return ET_ERR_BAD_PROGRAM;
    const uint8_t *payload; uint32_t plen;
    et_status st = et_program_delegate_data(m->prog, et_fb_u8(&ref, ETFB_BackendDelegateDataReference_location, 0),
                                            et_fb_u32(&ref, ETFB_BackendDelegateDataReference_index, 0), &payload, &plen);
    if (st != ET_OK) return st;
    m->delegates[i].backend = be;
    m->delegates[i].handle = 0;
    st = be->load ? be->load(m->prog, payload, plen, pool, &m->delegates[i].handle)
                  : be->init(payload, plen, pool, &m->delegates[i].handle);
    if (st != ET_OK) { m->err.detail = i; return st; }
  }
  return ET_OK;
}

/* Instruction k's planned scratch (ET_SCRATCH): its gap in a planned arena or the method's block; without a
 * plan (host harnesses) every call gets the block. *n: its bytes. */
static uint8_t *scratch_at(const et_method *m, uint32_t k, uint32_t *n) {
  if (!m->scratch_plan) { *n = m->scratch_size; return m->scratch; }
  *n = m->scratch_plan[k];
  const uint32_t mem = m->scratch_mem ? m->scratch_mem[k] : 0u;
  if (!*n) return 0;
  return mem ? m->arenas[mem] + m->scratch_off[k] : m->scratch;
}

/* bake's place for instruction k inside its arena or the block (the tables are bake's, checked all the same) */
static bool scratch_fits(const et_method *m, const et_method_memory *mem, uint32_t k) {
  const uint32_t n = m->scratch_plan ? m->scratch_plan[k] : 0u, a = m->scratch_mem ? m->scratch_mem[k] : 0u;
  if (!n) return true;
  if (!a) return n <= m->scratch_size;
  return a < mem->n_arenas && mem->arenas[a] && m->scratch_off[k] <= mem->arena_sizes[a] &&
         n <= mem->arena_sizes[a] - m->scratch_off[k];
}

/* Kernel state (ET_STATE) and scratch (ET_SCRATCH): a zeroed state block per call of an operator that
 * has one, and the load-time call that fills it and reports the call's scratch need. A need that is not
 * bake's plan for that instruction fails the load (ET_ERR_SCRATCH: detail = need, detail2 = plan): the
 * formula in tools/etdeploy/kernel_scratch.py and the kernel are out of step, and a call must never find
 * less scratch than it needs mid-inference. Other failures of the load-time call are left to execution,
 * which reports them. */
static et_status prepare_kernels(et_method *m, et_pool *pool, const et_method_memory *mem) {
  uint32_t k = 0;   /* instruction ordinal over all chains: scratch_plan's index */
  for (uint32_t c = 0; c < m->n_chains; c++)
    for (uint32_t i = 0; i < m->chains[c].n; i++, k++) {
      et_instr *in = &m->chains[c].instrs[i];
      if (in->kind != ET_I_KERNEL) continue;
      const uint32_t n = mem->op_state ? mem->op_state[in->a] : 0u;
      const bool scr = mem->op_scratch && mem->op_scratch[in->a];
      if (!n && !scr) continue;
      if (n) {
        uint32_t *b = (uint32_t *)et_pool_alloc(pool, n);
        if (!b) return oom(m, pool);
        for (uint32_t w = 0; w < (n + 3u) / 4u; w++) b[w] = 0;
        in->state = b;
      }
      const uint32_t plan = m->scratch_plan ? m->scratch_plan[k] : 0u;
      if (!scratch_fits(m, mem, k)) {
        m->err.instr = i; m->err.op = in->a; m->err.detail = plan; m->err.detail2 = 0;
        return ET_ERR_BAD_PROGRAM;
      }
      uint32_t sn;
      uint8_t *sp = scratch_at(m, k, &sn);
      et_kctx ctx = {0, i, 0, 1, in->state, sp, sn, 0};
      et_status st = in->fn(&ctx, in->args, in->nargs);
      if (scr && st == ET_OK && ctx.scratch_need != plan) {
        m->err.instr = i; m->err.op = in->a; m->err.detail = ctx.scratch_need; m->err.detail2 = plan;
        return ET_ERR_SCRATCH;
      }
    }
  return ET_OK;
}

et_status et_method_load(et_method *m, et_program *p, uint32_t plan_index, const et_method_memory *mem,
                         const et_kernel_fn *ops, uint32_t n_ops) {
  m->prog = p; m->index = plan_index; m->ops = ops;
  m->scratch = 0; m->scratch_size = 0;
  m->scratch_plan = mem->scratch_plan; m->scratch_mem = mem->scratch_mem; m->scratch_off = mem->scratch_off;
  m->arenas = mem->arenas;
  if (m->scratch_mem && !m->scratch_off) return ET_ERR_BAD_PROGRAM;
  m->values = 0; m->n_values = 0; m->chains = 0; m->n_chains = 0; m->delegates = 0; m->n_delegates = 0;
  m->err.instr = m->err.op = m->err.value = NONE_IDX; m->err.detail = m->err.detail2 = 0;
  if (plan_index >= p->plans.len || !et_fb_vec_table(&p->plans, plan_index, &m->plan)) return ET_ERR_BAD_PROGRAM;
  m->name = et_fb_string(&m->plan, ETFB_ExecutionPlan_name, &m->name_len);
  et_fb_vec opv = et_fb_vector(&m->plan, ETFB_ExecutionPlan_operators, 4);
  if (opv.len != n_ops) return ET_ERR_MISSING_OPERATOR;  /* table baked for another program */
  m->n_ops = n_ops;
  et_fb_vec bufs = et_fb_vector(&m->plan, ETFB_ExecutionPlan_non_const_buffer_sizes, 8);
  for (uint32_t i = 1; i < bufs.len; i++) {
    uint64_t need = et_fb_vec_u64(&bufs, i);
    uint64_t have = i < mem->n_arenas ? mem->arena_sizes[i] : 0;
    if (need > have) { m->err.detail = (uint32_t)need; m->err.detail2 = (uint32_t)have; return ET_ERR_OUT_OF_MEMORY; }
  }
  m->inputs = et_fb_vector(&m->plan, ETFB_ExecutionPlan_inputs, 4);
  m->outputs = et_fb_vector(&m->plan, ETFB_ExecutionPlan_outputs, 4);
  if (p->fb.err) return ET_ERR_BAD_PROGRAM;
  /* the scratch block first: at the pool's 16-aligned base */
  m->scratch = mem->scratch_size ? (uint8_t *)et_pool_alloc(mem->pool, mem->scratch_size) : 0;
  if (mem->scratch_size && !m->scratch) return oom(m, mem->pool);
  m->scratch_size = mem->scratch_size;
  et_status st = load_values(m, mem->pool, mem);
  if (st == ET_OK) st = load_delegates(m, mem->pool);
  if (st == ET_OK) st = load_chains(m, mem->pool);
  if (st == ET_OK && (mem->op_state || mem->op_scratch)) st = prepare_kernels(m, mem->pool, mem);
  if (st != ET_OK) return st;
  for (uint32_t i = 0; i < m->inputs.len; i++)
    if ((uint32_t)et_fb_vec_i32(&m->inputs, i) >= m->n_values) return ET_ERR_BAD_PROGRAM;
  for (uint32_t i = 0; i < m->outputs.len; i++)
    if ((uint32_t)et_fb_vec_i32(&m->outputs, i) >= m->n_values) return ET_ERR_BAD_PROGRAM;
  return p->fb.err ? ET_ERR_BAD_PROGRAM : ET_OK;
}

uint32_t et_method_num_inputs(const et_method *m) { return m->inputs.len; }
uint32_t et_method_num_outputs(const et_method *m) { return m->outputs.len; }
et_value *et_method_input(et_method *m, uint32_t i) {
  return i < m->inputs.len ? &m->values[et_fb_vec_i32(&m->inputs, i)] : 0;
}
et_value *et_method_output(et_method *m, uint32_t i) {
  return i < m->outputs.len ? &m->values[et_fb_vec_i32(&m->outputs, i)] : 0;
}

static void copy_bytes(uint8_t *d, const uint8_t *s, size_t n) { while (n--) *d++ = *s++; }

et_status et_method_set_input(et_method *m, uint32_t i, uint32_t dtype, uint32_t ndim,
                              const int32_t *sizes, const void *data, size_t nbytes) {
  et_value *v = et_method_input(m, i);
  if (!v) return ET_ERR_BAD_INPUT;
  if (v->tag != ET_TAG_TENSOR) return ET_ERR_BAD_INPUT;  /* scalar inputs are baked */
  et_tensor *t = v->u.t;
  if (dtype != t->dtype || !t->data) return ET_ERR_BAD_INPUT;
  if (sizes && ndim != t->ndim) return ET_ERR_BAD_INPUT;
  if (sizes) {
    et_status st = et_resize(t, ndim, sizes);
    if (st != ET_OK) return ET_ERR_BAD_INPUT;
  }
  if (nbytes != et_nbytes(t)) return ET_ERR_BAD_INPUT;
  copy_bytes((uint8_t *)t->data, (const uint8_t *)data, nbytes);
  return ET_OK;
}

et_status et_method_fill_inputs_ones(et_method *m) {
  for (uint32_t i = 0; i < m->inputs.len; i++) {
    et_value *v = et_method_input(m, i);
    if (v->tag != ET_TAG_TENSOR) continue;
    et_tensor *t = v->u.t;
    if (!t->data) return ET_ERR_BAD_INPUT;
    int64_t n = et_numel(t);
    for (int64_t k = 0; k < n; k++) {
      if (et_dtype_is_float(t->dtype)) et_store_f(t, k, 1.0f); else et_store_i(t, k, 1);
    }
  }
  return ET_OK;
}

/* Instructions one chain may execute per call: executorch emits backward jumps only for bounded loops
 * (map over a tensor dim), far below this; the fuzz build sets a small value. */
#ifndef ET_MAX_STEPS
#define ET_MAX_STEPS (1u << 24)
#endif

et_status et_method_execute(et_method *m) {
  m->err.instr = m->err.op = m->err.value = NONE_IDX;
  uint32_t base = 0;   /* ordinal of the chain's first instruction: scratch_at's index */
  for (uint32_t c = 0; c < m->n_chains; base += m->chains[c].n, c++) {
    et_chain *ch = &m->chains[c];
    uint32_t pc = 0, steps = 0;
    while (pc < ch->n) {
      et_instr *in = &ch->instrs[pc];
      uint32_t next = pc + 1;
      et_status st = ET_OK;
#ifdef ET_PROFILE
      et_profile_begin(m, c, pc);
#endif
      switch (in->kind) {
        case ET_I_KERNEL: {
          uint32_t sn;
          uint8_t *sp = scratch_at(m, base + pc, &sn);
          et_kctx ctx = {0, pc, 0, 0, in->state, sp, sn, 0};
          st = in->fn(&ctx, in->args, in->nargs);
          if (st != ET_OK) { m->err.op = in->a; m->err.detail = ctx.err_detail; }
          break;
        }
        case ET_I_DELEGATE: {
          et_delegate *d = &m->delegates[in->a];
          st = d->backend->execute(d->handle, in->args, in->nargs);
          break;
        }
        case ET_I_MOVE: m->values[in->b] = m->values[in->a]; break;
        case ET_I_JUMP_FALSE: {
          et_value *cv = &m->values[in->a];
          if (cv->tag == ET_TAG_BOOL) { if (!cv->u.b) next = in->b; }
          else if (cv->tag == ET_TAG_TENSOR && cv->u.t->dtype == ET_BOOL && cv->u.t->data) {
            if (!*(const uint8_t *)cv->u.t->data) next = in->b;
          } else st = ET_ERR_INVALID_ARGUMENT;
          break;
        }
        case ET_I_FREE: break;  /* static memory: nothing to release */
        default: st = ET_ERR_INTERNAL;
      }
#ifdef ET_PROFILE
      et_profile_end(m, c, pc, st);
#endif
      if (st != ET_OK) { m->err.instr = pc; return st; }
      pc = next;
      /* only a backward jump can loop; a program that does not stop (a corrupted one) ends here */
      if (++steps > ET_MAX_STEPS) { m->err.instr = pc; return ET_ERR_BAD_PROGRAM; }
    }
  }
  return ET_OK;
}
