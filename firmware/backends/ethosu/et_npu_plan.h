/* Ethos-U buffers placed at bake time (tools/etdeploy/npu_plan.py writes et_npu.gen.c).
 * One entry per EthosUBackend delegate, found by the address of its payload in the model blob. */
#ifndef ET_NPU_PLAN_H
#define ET_NPU_PLAN_H
#include <stdint.h>

typedef struct et_npu_delegate_plan {
  const uint8_t *payload;   /* the delegate's Vela payload inside et_model_blob_<p> */
  const uint8_t *weights;   /* NPU base address 0: in the blob, or a copy in the region the mode asks for */
  uint32_t weights_size;
  uint8_t *scratch;         /* NPU base address 1 (inputs and outputs live in it at Vela's offsets) */
  uint32_t scratch_size;
} et_npu_delegate_plan;

extern const et_npu_delegate_plan et_npu_plans[];   /* et_npu_n_plans entries + a zero entry */
extern const uint32_t et_npu_n_plans;
extern uint8_t *const et_npu_fast_scratch_ptr;      /* base address 2 and the driver's fast memory, or 0 */
extern const uint32_t et_npu_fast_scratch_size;

const et_npu_delegate_plan *et_npu_plan_for(const uint8_t *payload);
#endif
