/* The EthosUBackend payload as executorch's Arm backend writes it (facts, see vela_payload.py):
 * blocks of [16-byte NUL-padded name][u32 LE length][u8 external][11 reserved][data, padded to 16],
 * starting with vela_bin_stream and ending with vela_end_stream. inputs/outputs blocks: i32 count, then
 * per tensor 9 x i32: shape[6], element size, offset, region. */
#ifndef ET_VELA_BLOCKS_H
#define ET_VELA_BLOCKS_H
#include <stdint.h>
#include "et_types.h"

#define ET_VELA_MAX_IO 8

typedef struct et_vela_io {
  int32_t shape[6];
  int32_t elem_size;
  int32_t offset;
  int32_t region;
} et_vela_io;

typedef struct et_vela_blocks {
  const uint8_t *cmd;       uint32_t cmd_len;
  const uint8_t *weights;   uint32_t weights_len;
  uint32_t scratch_size;
  uint32_t n_inputs, n_outputs;
  et_vela_io inputs[ET_VELA_MAX_IO], outputs[ET_VELA_MAX_IO];
} et_vela_blocks;

/* Bounds-checked parse; ET_ERR_BAD_PROGRAM on anything malformed, ET_ERR_UNSUPPORTED on external blocks. */
et_status et_vela_parse(const uint8_t *p, uint32_t len, et_vela_blocks *out);
uint32_t et_vela_io_bytes(const et_vela_io *io);
#endif
