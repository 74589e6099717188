/* Public runtime API: load a program from flash, load a method into a bake-sized pool with
 * bake-sized arenas, set inputs, execute, read outputs. No heap, no stdio. */
#ifndef ET_RUNTIME_H
#define ET_RUNTIME_H
#include "et_types.h"
#include "et_kernel.h"
#include "et_fb.h"

#define ET_ALIGN 8u
#define ET_A(n) ((((size_t)(n)) + (ET_ALIGN - 1)) & ~(size_t)(ET_ALIGN - 1))

typedef struct et_pool {
  uint8_t *base;
  size_t size;
  size_t used;
  size_t failed_need;   /* on OOM: bytes the failing request needed */
} et_pool;

void et_pool_init(et_pool *p, uint8_t *base, size_t size);
void *et_pool_alloc(et_pool *p, size_t n);   /* ET_ALIGN-aligned; NULL when out of room */

typedef struct et_program {
  et_fb_buf fb;                /* the flatbuffer part */
  const uint8_t *data;         /* the whole file (segments follow the flatbuffer) */
  uint32_t size;
  uint32_t segment_base;
  et_fb_table root;
  et_fb_vec plans, segments, const_buffers, const_offsets, delegate_data;
  uint32_t const_segment;      /* index into segments, valid when has_const_segment */
  bool has_const_segment;
} et_program;

/* Checks magic (ET12), the optional eh00 extended header and the root table. */
et_status et_program_load(et_program *p, const uint8_t *data, uint32_t size);
uint32_t et_program_num_methods(const et_program *p);
/* Finds a method by name; returns its plan index or -1. */
int32_t et_program_find_method(et_program *p, const char *name);
/* Pointer to constant buffer idx, checked to hold nbytes. */
et_status et_program_constant(et_program *p, uint32_t idx, size_t nbytes, const void **out);
/* Delegate payload: INLINE (backend_delegate_data) or SEGMENT. */
et_status et_program_delegate_data(et_program *p, uint32_t location, uint32_t index,
                                   const uint8_t **out, uint32_t *len);

/* Named data (Program.named_data): the segment bytes stored under key. */
et_status et_program_named_data(et_program *p, const char *key, uint32_t key_len,
                                const uint8_t **out, uint32_t *len);

/* A decoded instruction. */
enum { ET_I_KERNEL = 1, ET_I_DELEGATE, ET_I_MOVE, ET_I_JUMP_FALSE, ET_I_FREE };
typedef struct et_instr {
  uint8_t kind;
  uint8_t _pad[3];
  uint32_t a;                 /* op index / delegate index / move from / cond value / value */
  uint32_t b;                 /* move to / jump destination */
  uint32_t nargs;
  et_value **args;
  et_kernel_fn fn;
  void *state;                /* kernel state block (ET_STATE), given and filled at load */
} et_instr;

typedef struct et_chain {
  et_instr *instrs;
  uint32_t n;
} et_chain;

struct et_backend;
typedef struct et_delegate {
  const struct et_backend *backend;
  void *handle;
} et_delegate;

/* Backend registry entry (firmware/runtime/et_backend.c). */
typedef struct et_backend {
  const char *id;
  et_status (*init)(const uint8_t *payload, uint32_t len, et_pool *pool, void **handle);
  et_status (*execute)(void *handle, et_value *const *args, uint32_t nargs);
  /* optional: init with the program at hand (named data); used instead of init when set */
  et_status (*load)(et_program *prog, const uint8_t *payload, uint32_t len, et_pool *pool, void **handle);
} et_backend;
const et_backend *et_backend_find(const char *id, uint32_t len);

/* Where the failure was, for the error record. */
typedef struct et_error_info {
  uint32_t instr;             /* instruction index, or UINT32_MAX */
  uint32_t op;                /* op index, or UINT32_MAX */
  uint32_t value;             /* value index involved, or UINT32_MAX */
  uint32_t detail;            /* kernel detail / bytes needed */
  uint32_t detail2;           /* bytes available */
} et_error_info;

typedef struct et_method {
  et_program *prog;
  et_fb_table plan;
  const char *name; uint32_t name_len;
  et_value *values; uint32_t n_values;
  et_chain *chains; uint32_t n_chains;
  et_delegate *delegates; uint32_t n_delegates;
  et_fb_vec inputs, outputs;
  const et_kernel_fn *ops; uint32_t n_ops;
  et_error_info err;
  uint32_t index;             /* plan index */
  uint8_t *scratch;           /* kernel scratch block (ET_SCRATCH), shared by the calls placed there, from the pool */
  uint32_t scratch_size;
  const uint32_t *scratch_plan; /* per instruction ordinal (bake's plan, or NULL: every call gets the block) */
  const uint8_t *scratch_mem;
  const uint32_t *scratch_off;
  uint8_t *const *arenas;
} et_method;

typedef struct et_method_memory {
  et_pool *pool;
  uint8_t *const *arenas;     /* indexed by mem_id; [0] unused */
  const uint32_t *arena_sizes;
  uint32_t n_arenas;
  const uint16_t *op_state;   /* per operator: bytes of kernel state (ET_STATE), or NULL: none */
  const uint8_t *op_scratch;  /* per operator: 1 if it declares ET_SCRATCH, or NULL: none does */
  const uint32_t *scratch_plan; /* per instruction (all chains, in order): bake's scratch bytes */
  uint32_t scratch_size;      /* the method's scratch block in the pool: the largest call placed there */
  const uint8_t *scratch_mem; /* per instruction: the arena (mem_id) holding its scratch in a gap bake found
                                 free during the call, 0 = the block; NULL: every call uses the block */
  const uint32_t *scratch_off; /* per instruction: its offset in that arena */
} et_method_memory;

et_status et_method_load(et_method *m, et_program *p, uint32_t plan_index, const et_method_memory *mem,
                         const et_kernel_fn *ops, uint32_t n_ops);
et_status et_method_execute(et_method *m);
uint32_t et_method_num_inputs(const et_method *m);
uint32_t et_method_num_outputs(const et_method *m);
et_value *et_method_input(et_method *m, uint32_t i);
et_value *et_method_output(et_method *m, uint32_t i);
/* Copy host bytes into input tensor i (dtype and byte size must match). */
et_status et_method_set_input(et_method *m, uint32_t i, uint32_t dtype, uint32_t ndim,
                              const int32_t *sizes, const void *data, size_t nbytes);
/* Fill every input tensor with ones of its dtype (the default input, as executorch's runner). */
et_status et_method_fill_inputs_ones(et_method *m);

const char *et_status_name(et_status s);

/* Profiling hooks (etdump=1): called around every instruction and method execution. */
#ifdef ET_PROFILE
void et_profile_begin(const et_method *m, uint32_t chain, uint32_t instr);
void et_profile_end(const et_method *m, uint32_t chain, uint32_t instr, et_status st);
void et_profile_run_begin(uint32_t prog, uint32_t method);
void et_profile_run_end(et_status st);
#endif

#endif
