/* What the bake step generates (et_model.gen.c): programs, their methods, op tables and memory. */
#ifndef ET_BAKED_H
#define ET_BAKED_H
#include "et_runtime.h"
#include "et_bundled.h"

typedef struct et_baked_method {
  const char *name;
  const et_kernel_fn *ops;
  uint32_t n_ops;
  uint8_t *const *arenas;        /* by mem_id, [0] unused */
  const uint32_t *arena_sizes;
  uint32_t n_arenas;
  uint8_t *pool;
  uint32_t pool_size;
  const uint16_t *op_state;      /* per operator: kernel state bytes, or NULL */
  et_method *state;              /* storage for the loaded method */
  const uint8_t *op_scratch;     /* per operator: declares ET_SCRATCH, or NULL */
  const uint32_t *scratch_plan;  /* per instruction: planned scratch bytes, or NULL */
  uint32_t scratch_size;         /* the method's scratch block (in the pool) */
  const uint8_t *scratch_mem;    /* per instruction: arena mem_id holding its scratch, 0 = the block, or NULL */
  const uint32_t *scratch_off;   /* per instruction: offset of its scratch in that arena */
} et_baked_method;

typedef struct et_baked_program {
  const uint8_t *blob;
  uint32_t size;
  const et_baked_method *methods;
  uint32_t n_methods;
  et_program *state;
} et_baked_program;

extern const et_baked_program et_baked_programs[];
extern const uint32_t et_baked_n_programs;
/* Per-image storage sized by bake: one bundle per program, one pool state per method. */
extern et_bundle et_baked_bundles[];
extern et_pool et_baked_pools[];
extern uint64_t et_baked_load_cycles[];
extern uint32_t et_baked_first_method[];   /* index of program p's first method in the two above */
extern const float et_baked_atol, et_baked_rtol;

#endif
