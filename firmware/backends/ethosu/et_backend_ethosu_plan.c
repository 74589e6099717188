/* EthosUBackend for builds with ethosu_driver=plan: the NPU buffers are placed (et_npu.gen.c) and
 * show in the memory report, but there is no driver. Loading checks the payload against the plan, then
 * refuses: the image is for the report, not for running (bake also refuses run=1 in this mode). */
#include "et_runtime.h"
#include "et_npu_plan.h"
#include "et_vela_blocks.h"

static et_status plan_init(const uint8_t *payload, uint32_t len, et_pool *pool, void **handle) {
  (void)pool;
  *handle = 0;
  et_vela_blocks v;
  et_status st = et_vela_parse(payload, len, &v);
  if (st != ET_OK) return st;
  const et_npu_delegate_plan *pl = et_npu_plan_for(payload);
  if (!pl || pl->scratch_size < v.scratch_size) return ET_ERR_INTERNAL;
  /* the fast scratch is the driver's (one per image): referenced here so the report shows it */
  if (et_npu_fast_scratch_size && !et_npu_fast_scratch_ptr) return ET_ERR_INTERNAL;
  return ET_ERR_UNSUPPORTED;   /* no NPU driver in this build */
}

static et_status plan_execute(void *handle, et_value *const *args, uint32_t nargs) {
  (void)handle; (void)args; (void)nargs;
  return ET_ERR_UNSUPPORTED;
}

const et_backend et_backend_ethosu = {"EthosUBackend", plan_init, plan_execute, 0};
