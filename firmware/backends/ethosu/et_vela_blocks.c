/* Vela payload reader shared by the EthosUBackend and its placement-only stub. */
#include "et_vela_blocks.h"

#include <string.h>

static uint32_t rd32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int name_is(const uint8_t *hdr, const char *name) {
  size_t n = strlen(name);
  if (n >= 16 || memcmp(hdr, name, n) != 0) return 0;
  for (size_t i = n; i < 16; i++)
    if (hdr[i] != 0) return 0;
  return 1;
}

static et_status read_ios(const uint8_t *d, uint32_t len, et_vela_io *io, uint32_t *n_out) {
  if (len < 4) return ET_ERR_BAD_PROGRAM;
  int32_t n = (int32_t)rd32(d);
  if (n < 0 || n > ET_VELA_MAX_IO || 4u + 36u * (uint32_t)n > len) return n > ET_VELA_MAX_IO ? ET_ERR_UNSUPPORTED
                                                                                               : ET_ERR_BAD_PROGRAM;
  for (int32_t i = 0; i < n; i++) {
    const uint8_t *t = d + 4 + 36 * i;
    for (int k = 0; k < 6; k++) io[i].shape[k] = (int32_t)rd32(t + 4 * k);
    io[i].elem_size = (int32_t)rd32(t + 24);
    io[i].offset = (int32_t)rd32(t + 28);
    io[i].region = (int32_t)rd32(t + 32);
    if (io[i].elem_size <= 0 || io[i].offset < 0) return ET_ERR_BAD_PROGRAM;
  }
  *n_out = (uint32_t)n;
  return ET_OK;
}

et_status et_vela_parse(const uint8_t *p, uint32_t len, et_vela_blocks *out) {
  memset(out, 0, sizeof *out);
  uint32_t pos = 0;
  int first = 1;
  while (pos + 32u <= len) {
    const uint8_t *hdr = p + pos;
    uint32_t blen = rd32(hdr + 16);
    uint8_t external = hdr[20];
    uint32_t start = pos + 32u;
    if (blen > len - start) return ET_ERR_BAD_PROGRAM;
    if (first && !name_is(hdr, "vela_bin_stream")) return ET_ERR_BAD_PROGRAM;
    first = 0;
    const uint8_t *d = p + start;
    if (external) return ET_ERR_UNSUPPORTED;   /* blocks stored as named data: not supported here */
    et_status st = ET_OK;
    if (name_is(hdr, "cmd_data")) { out->cmd = d; out->cmd_len = blen; }
    else if (name_is(hdr, "weight_data")) { out->weights = d; out->weights_len = blen; }
    else if (name_is(hdr, "scratch_size")) { if (blen < 4) return ET_ERR_BAD_PROGRAM; out->scratch_size = rd32(d); }
    else if (name_is(hdr, "inputs")) st = read_ios(d, blen, out->inputs, &out->n_inputs);
    else if (name_is(hdr, "outputs")) st = read_ios(d, blen, out->outputs, &out->n_outputs);
    else if (name_is(hdr, "vela_end_stream")) return out->cmd ? ET_OK : ET_ERR_BAD_PROGRAM;
    if (st != ET_OK) return st;
    uint32_t padded = (blen + 15u) & ~15u;
    if (padded > len - start) break;
    pos = start + padded;
  }
  return ET_ERR_BAD_PROGRAM;   /* no vela_end_stream */
}

uint32_t et_vela_io_bytes(const et_vela_io *io) {
  uint32_t n = (uint32_t)io->elem_size;
  for (int k = 0; k < 6; k++) n *= (uint32_t)(io->shape[k] > 1 ? io->shape[k] : 1);
  return n;
}


#include "et_npu_plan.h"

const et_npu_delegate_plan *et_npu_plan_for(const uint8_t *payload) {
  for (uint32_t i = 0; i < et_npu_n_plans; i++)
    if (et_npu_plans[i].payload == payload) return &et_npu_plans[i];
  return 0;
}
