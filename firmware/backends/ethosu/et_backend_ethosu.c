/* EthosUBackend: runs a Vela command stream on the Ethos-U through Arm's ethos-u-core-driver.
 *
 * UNTESTED: the driver's sources are not on the build machine and no FVP ran this. Written against
 * the driver's public API (include/ethosu_driver.h): ethosu_init, ethosu_reserve_driver,
 * ethosu_release_driver, ethosu_invoke_v3, ethosu_irq_handler. Compiled only with ethosu_driver=<path>.
 *
 * Memory (placed at bake time by npu_plan.py, see et_npu_plan.h):
 *   base 0 = weights (in the model blob or a copy), base 1 = scratch (the delegate's inputs and outputs
 *   live in it at Vela's offsets), base 2 = fast scratch (Dedicated_Sram modes; also the driver's fast
 *   memory). The command stream (Vela's cmd_data, which starts with the driver's COP1 header) is passed
 *   to ethosu_invoke_v3 as is, from flash.
 * Interrupt: the board's vector table has no NPU entry, so the first init copies it to a RAM table
 *   with ET_NPU_IRQ routed to the driver's handler and points VTOR at it (ARMv8-M SCB/NVIC registers). */
#include <string.h>

#include "et_runtime.h"
#include "et_npu_plan.h"
#include "et_vela_blocks.h"
#include "ethosu_driver.h"

#ifndef ET_NPU_BASE
#error "ET_NPU_BASE: the board's [npu] base address (bake defines it)"
#endif
#ifndef ET_NPU_IRQ
#define ET_NPU_IRQ (-1)
#endif
#define ET_NPU_SECURE 1
#define ET_NPU_PRIVILEGED 1

typedef struct ethosu_handle {
  et_vela_blocks v;
  const et_npu_delegate_plan *plan;
} ethosu_handle;

static struct ethosu_driver et_npu_driver;
static int et_npu_ready;

/* ---- interrupt routing (architecture registers, not the driver) */
#if ET_NPU_IRQ >= 0
typedef void (*vector_fn)(void);
extern const vector_fn bsp_vectors[];
#define ET_NPU_VECTORS (16 + ET_NPU_IRQ + 1)
static vector_fn et_npu_vectors[(ET_NPU_VECTORS + 127) & ~127] __attribute__((aligned(512)));
#define SCB_VTOR (*(volatile uint32_t *)0xE000ED08u)
#define NVIC_ISER(n) (*(volatile uint32_t *)(0xE000E100u + 4u * (n)))

static void et_npu_irq(void) { ethosu_irq_handler(&et_npu_driver); }

static void et_npu_route_irq(void) {
  const vector_fn *cur = (const vector_fn *)SCB_VTOR;
  uint32_t n = sizeof et_npu_vectors / sizeof et_npu_vectors[0];
  for (uint32_t i = 0; i < n; i++) et_npu_vectors[i] = i < 16 ? cur[i] : bsp_vectors[16];
  for (uint32_t i = 16; i < 16 + 48 && i < n; i++) et_npu_vectors[i] = cur[i];   /* the board's 48 IRQs */
  et_npu_vectors[16 + ET_NPU_IRQ] = et_npu_irq;
  __asm__ volatile("dsb" ::: "memory");
  SCB_VTOR = (uint32_t)(uintptr_t)et_npu_vectors;
  __asm__ volatile("dsb\n isb" ::: "memory");
  NVIC_ISER(ET_NPU_IRQ / 32) = 1u << (ET_NPU_IRQ % 32);
}
#endif

static et_status et_npu_start(void) {
  if (et_npu_ready) return ET_OK;
#if ET_NPU_IRQ >= 0
  et_npu_route_irq();
#endif
  if (ethosu_init(&et_npu_driver, (void *)(uintptr_t)ET_NPU_BASE, et_npu_fast_scratch_ptr,
                  et_npu_fast_scratch_size, ET_NPU_SECURE, ET_NPU_PRIVILEGED) != 0)
    return ET_ERR_DELEGATE;
  et_npu_ready = 1;
  return ET_OK;
}

static et_status ethosu_init_delegate(const uint8_t *payload, uint32_t len, et_pool *pool, void **handle) {
  ethosu_handle *h = (ethosu_handle *)et_pool_alloc(pool, sizeof *h);
  if (!h) return ET_ERR_OUT_OF_MEMORY;
  et_status st = et_vela_parse(payload, len, &h->v);
  if (st != ET_OK) return st;
  h->plan = et_npu_plan_for(payload);
  if (!h->plan) return ET_ERR_INTERNAL;                       /* bake planned every delegate it saw */
  if (h->plan->scratch_size < h->v.scratch_size) return ET_ERR_OUT_OF_MEMORY;
  for (uint32_t i = 0; i < h->v.n_inputs + h->v.n_outputs; i++) {
    const et_vela_io *io = i < h->v.n_inputs ? &h->v.inputs[i] : &h->v.outputs[i - h->v.n_inputs];
    if (io->region != 1 || (uint32_t)io->offset + et_vela_io_bytes(io) > h->plan->scratch_size)
      return ET_ERR_UNSUPPORTED;                              /* IO outside the scratch: not handled */
  }
  st = et_npu_start();
  if (st != ET_OK) return st;
  *handle = h;
  return ET_OK;
}

static et_status io_tensor(et_value *const *args, uint32_t nargs, uint32_t i, et_tensor **t) {
  if (i >= nargs || !args[i] || args[i]->tag != ET_TAG_TENSOR || !args[i]->u.t || !args[i]->u.t->data)
    return ET_ERR_INVALID_ARGUMENT;
  *t = args[i]->u.t;
  return ET_OK;
}

static et_status tensor_bytes_ok(const et_tensor *t, uint32_t n) {
  return t->capacity >= n ? ET_OK : ET_ERR_INVALID_ARGUMENT;
}

/* args: the delegate's inputs, then its outputs (executorch's DelegateCall convention). */
static et_status ethosu_execute(void *handle, et_value *const *args, uint32_t nargs) {
  ethosu_handle *h = (ethosu_handle *)handle;
  const et_npu_delegate_plan *pl = h->plan;
  if (nargs < h->v.n_inputs + h->v.n_outputs) return ET_ERR_INVALID_ARGUMENT;
  for (uint32_t i = 0; i < h->v.n_inputs; i++) {
    et_tensor *t;
    uint32_t n = et_vela_io_bytes(&h->v.inputs[i]);
    et_status st = io_tensor(args, nargs, i, &t);
    if (st == ET_OK) st = tensor_bytes_ok(t, n);
    if (st != ET_OK) return st;
    memcpy(pl->scratch + h->v.inputs[i].offset, t->data, n);
  }
  uint64_t base[3] = {(uint64_t)(uintptr_t)pl->weights, (uint64_t)(uintptr_t)pl->scratch,
                      (uint64_t)(uintptr_t)et_npu_fast_scratch_ptr};
  size_t base_size[3] = {pl->weights_size, pl->scratch_size, et_npu_fast_scratch_size};
  int nbase = et_npu_fast_scratch_ptr ? 3 : 2;
  struct ethosu_driver *drv = ethosu_reserve_driver();
  if (!drv) return ET_ERR_DELEGATE;
  int rc = ethosu_invoke_v3(drv, h->v.cmd, (int)h->v.cmd_len, base, base_size, nbase, 0);
  ethosu_release_driver(drv);
  if (rc != 0) return ET_ERR_DELEGATE;
  for (uint32_t o = 0; o < h->v.n_outputs; o++) {
    et_tensor *t;
    uint32_t n = et_vela_io_bytes(&h->v.outputs[o]);
    et_status st = io_tensor(args, nargs, h->v.n_inputs + o, &t);
    if (st == ET_OK) st = tensor_bytes_ok(t, n);
    if (st != ET_OK) return st;
    memcpy(t->data, pl->scratch + h->v.outputs[o].offset, n);
  }
  return ET_OK;
}

const et_backend et_backend_ethosu = {"EthosUBackend", ethosu_init_delegate, ethosu_execute, 0};
