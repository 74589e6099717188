/* The kernel interface. A kernel gets the instruction's arguments as resolved value pointers in
 * schema order (inputs, then out args, then the returned values, which for out-variants are the
 * out args again). Kernels allocate nothing: outputs are planned tensors. */
#ifndef ET_KERNEL_H
#define ET_KERNEL_H
#include "et_types.h"
#include "et_tensor.h"

typedef struct et_kctx {
  const char *op_name;     /* for error messages; may be NULL in size-optimised builds */
  uint32_t instr_index;
  uint32_t err_detail;     /* kernel may put the failing arg index here */
  uint32_t prepare;        /* 1: the load-time call (see ET_STATE): check, fill state, touch no data */
  void *state;             /* this instruction's state block (ET_STATE), or NULL */
  void *scratch;           /* this call's planned scratch (ET_SCRATCH), 16-aligned, or NULL */
  uint32_t scratch_size;   /* bytes at scratch */
  uint32_t scratch_need;   /* out, load-time call: the bytes this call needs (ET_SCRATCH) */
} et_kctx;

typedef et_status (*et_kernel_fn)(et_kctx *ctx, et_value *const *args, uint32_t nargs);

/* Per-instruction state, for work a kernel can do once (argument checks, weight layouts) instead of
 * in every inference. An operator that declares ET_STATE(opname, bytes) (a literal, scanned by bake
 * like ET_OP) gets, for each of its calls, a zeroed block of that size from the method pool (bake
 * sizes the pool for it) and one call at method load with ctx->prepare = 1: it checks its arguments
 * and fills the block, and must neither read input data nor write outputs (inputs are not set yet).
 * Execution calls then find the block in ctx->state. ctx->state is NULL when the caller has no state
 * (host harnesses): kernels must work without it. */
#define ET_STATE(opname, bytes) _Static_assert((bytes) > 0, opname)

/* Planned scratch: working memory a kernel needs for one call (im2col chunks, padded images, packed
 * weights, folded biases) is planned at bake time, never a large stack buffer. An operator that declares
 * ET_SCRATCH(opname) (scanned by bake like ET_OP) gets one call at method load with ctx->prepare = 1
 * in which it checks its arguments and sets ctx->scratch_need to the bytes it needs, from shapes and
 * int arguments only (never data); bake computes the same number in Python
 * (tools/etdeploy/kernel_scratch.py, one function per kernel family) and places it
 * (tools/etdeploy/scratch_place.py): in a gap of the planned arenas free during the call, or in a block at
 * the head of the method pool shared by the calls placed there (calls run one at a time). The load
 * fails with ET_ERR_SCRATCH, naming the instruction and both numbers, when a call's need differs from
 * bake's plan. Execution calls find their scratch in ctx->scratch (ctx->scratch_size bytes, 16-aligned); a
 * kernel takes it with et_scratch(ctx, need), which is NULL when it is too small (a host harness without a
 * plan, a dynamic-shape call needing more than its planned upper-bound shapes did): the kernel then takes
 * a path that needs none (the portable C), it never overflows. How a kernel declares it: one named buffer
 * per path with its bound as a #define, a size function next to it, ET_SCRATCH_TAKE (README.md,
 * "Kernels"). */
#define ET_SCRATCH(opname) _Static_assert(sizeof(opname) > 1, opname)
static inline void *et_scratch(et_kctx *ctx, uint32_t need) {
  if (!need) return ctx->scratch;
  return ctx->scratch && need <= ctx->scratch_size ? ctx->scratch : (void *)0;
}
/* The common tail of a kernel with scratch: at load, report the need; at run, the scratch, or NULL (the
 * kernel then takes its paths that need none). */
#define ET_SCRATCH_TAKE(ctx, need, ptr)                                            \
  do {                                                                             \
    const uint32_t need_ = (need);                                                 \
    if ((ctx)->prepare) { (ctx)->scratch_need = need_; return ET_OK; }             \
    (ptr) = et_scratch((ctx), need_);                                              \
  } while (0)

/* Registration marker, scanned by the bake step (tools/etdeploy/kernels.py) to map operator names
 * to functions and source files. Expands to a prototype so a typo in the name fails to compile. */
#define ET_OP(opname, fn) et_status fn(et_kctx *ctx, et_value *const *args, uint32_t nargs)

/* ---- value access ---- */
static inline bool et_is_tensor(const et_value *v) { return v && v->tag == ET_TAG_TENSOR; }
static inline bool et_is_none(const et_value *v) { return !v || v->tag == ET_TAG_NONE; }

/* Int list items (sizes, dims, strides, padding ...). Returns NULL if v is not an int list. */
static inline const int64_t *et_int_list(const et_value *v, uint32_t *len) {
  if (!v || v->tag != ET_TAG_INT_LIST) { *len = 0; return NULL; }
  *len = v->u.list->len;
  return (const int64_t *)v->u.list->items;
}
static inline et_tensor *const *et_tensor_list(const et_value *v, uint32_t *len) {
  if (!v || (v->tag != ET_TAG_TENSOR_LIST && v->tag != ET_TAG_OPT_TENSOR_LIST)) { *len = 0; return NULL; }
  *len = v->u.list->len;
  return (et_tensor *const *)v->u.list->items;
}

/* ---- tensors: the basics are et_tensor.h's; broadcasting is kernel_util.c's ---- */
/* Broadcast shapes a and b (PyTorch rules) into out_sizes; returns ndim or -1. */
int32_t et_broadcast_shape(const et_tensor *a, const et_tensor *b, int32_t *out_sizes);

#define ET_CHECK(cond, code) do { if (!(cond)) return (code); } while (0)
#define ET_CHECK_ARGS(n) ET_CHECK(nargs >= (n), ET_ERR_INVALID_ARGUMENT)

#endif
