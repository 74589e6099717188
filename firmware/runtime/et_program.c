/* Program header, segments and constants. */
#include "et_runtime.h"
#include "et_schema.gen.h"

void et_pool_init(et_pool *p, uint8_t *base, size_t size) {
  p->base = base; p->size = size; p->used = 0; p->failed_need = 0;
}

void *et_pool_alloc(et_pool *p, size_t n) {
  size_t a = ET_A(n);
  if (a < n || a > p->size - p->used) { if (!p->failed_need) p->failed_need = a; return 0; }
  void *r = p->base + p->used;
  p->used += a;
  return r;
}

static uint32_t rd32le(const uint8_t *q) {
  return (uint32_t)q[0] | ((uint32_t)q[1] << 8) | ((uint32_t)q[2] << 16) | ((uint32_t)q[3] << 24);
}
static uint64_t rd64le(const uint8_t *q) { return (uint64_t)rd32le(q) | ((uint64_t)rd32le(q + 4) << 32); }

et_status et_program_load(et_program *p, const uint8_t *data, uint32_t size) {
  p->data = data; p->size = size;
  p->fb.base = data; p->fb.size = size; p->fb.err = 0;
  p->segment_base = 0;
  if (!data || size < 16) return ET_ERR_BAD_PROGRAM;
  if (data[4] != 'E' || data[5] != 'T' || data[6] != '1' || data[7] != '2') return ET_ERR_BAD_PROGRAM;
  if (data[8] == 'e' && data[9] == 'h' && data[10] == '0' && data[11] == '0') {
    if (size < 32) return ET_ERR_BAD_PROGRAM;
    uint32_t hlen = rd32le(data + 12);
    uint64_t psize = rd64le(data + 16), sbase = rd64le(data + 24);
    if (hlen < 24 || psize > size || psize < 16 || sbase > size) return ET_ERR_BAD_PROGRAM;
    p->fb.size = (uint32_t)psize;
    p->segment_base = (uint32_t)sbase;
  }
  if (!et_fb_root(&p->fb, &p->root)) return ET_ERR_BAD_PROGRAM;
  p->plans = et_fb_vector(&p->root, ETFB_Program_execution_plan, 4);
  p->segments = et_fb_vector(&p->root, ETFB_Program_segments, 4);
  p->const_buffers = et_fb_vector(&p->root, ETFB_Program_constant_buffer, 4);
  p->delegate_data = et_fb_vector(&p->root, ETFB_Program_backend_delegate_data, 4);
  et_fb_table cs;
  p->has_const_segment = false;
  if (et_fb_sub(&p->root, ETFB_Program_constant_segment, &cs)) {
    p->const_segment = et_fb_u32(&cs, ETFB_SubsegmentOffsets_segment_index, 0);
    p->const_offsets = et_fb_vector(&cs, ETFB_SubsegmentOffsets_offsets, 8);
    p->has_const_segment = p->const_offsets.len > 0 && p->const_segment < p->segments.len;
  }
  if (p->fb.err) return ET_ERR_BAD_PROGRAM;
  if (p->plans.len == 0) return ET_ERR_BAD_PROGRAM;
  return ET_OK;
}

uint32_t et_program_num_methods(const et_program *p) { return p->plans.len; }

int32_t et_program_find_method(et_program *p, const char *name) {
  for (uint32_t i = 0; i < p->plans.len; i++) {
    et_fb_table plan;
    if (!et_fb_vec_table(&p->plans, i, &plan)) return -1;
    uint32_t len;
    const char *s = et_fb_string(&plan, ETFB_ExecutionPlan_name, &len);
    if (s && et_fb_str_eq(s, len, name)) return (int32_t)i;
  }
  return -1;
}

/* Segment i as [start, start+size) within the whole file. */
static et_status segment(et_program *p, uint32_t i, uint64_t *start, uint64_t *size) {
  et_fb_table seg;
  if (i >= p->segments.len || !et_fb_vec_table(&p->segments, i, &seg)) return ET_ERR_BAD_PROGRAM;
  uint64_t off = et_fb_u64(&seg, ETFB_DataSegment_offset, 0);
  uint64_t sz = et_fb_u64(&seg, ETFB_DataSegment_size, 0);
  if (p->fb.err || off > p->size || sz > p->size || p->segment_base + off + sz > p->size)
    return ET_ERR_BAD_PROGRAM;
  *start = p->segment_base + off; *size = sz;
  return ET_OK;
}

et_status et_program_constant(et_program *p, uint32_t idx, size_t nbytes, const void **out) {
  if (p->has_const_segment) {
    uint64_t s0, ssz;
    if (segment(p, p->const_segment, &s0, &ssz) != ET_OK) return ET_ERR_BAD_PROGRAM;
    if (idx >= p->const_offsets.len) return ET_ERR_BAD_PROGRAM;
    uint64_t off = et_fb_vec_u64(&p->const_offsets, idx);
    if (off > ssz || nbytes > ssz - off) return ET_ERR_BAD_PROGRAM;
    *out = p->data + s0 + off;
    return ET_OK;
  }
  et_fb_table buf;
  if (idx >= p->const_buffers.len || !et_fb_vec_table(&p->const_buffers, idx, &buf)) return ET_ERR_BAD_PROGRAM;
  et_fb_vec st = et_fb_vector(&buf, ETFB_Buffer_storage, 1);
  if (p->fb.err || st.len < nbytes) return ET_ERR_BAD_PROGRAM;
  *out = p->data + st.pos;
  return ET_OK;
}

et_status et_program_delegate_data(et_program *p, uint32_t location, uint32_t index,
                                   const uint8_t **out, uint32_t *len) {
  if (location == ETFB_DataLocation_SEGMENT) {
    uint64_t s0, sz;
    if (segment(p, index, &s0, &sz) != ET_OK) return ET_ERR_BAD_PROGRAM;
    *out = p->data + s0; *len = (uint32_t)sz;
    return ET_OK;
  }
  et_fb_table d;
  if (index >= p->delegate_data.len || !et_fb_vec_table(&p->delegate_data, index, &d)) return ET_ERR_BAD_PROGRAM;
  et_fb_vec v = et_fb_vector(&d, ETFB_BackendDelegateInlineData_data, 1);
  if (p->fb.err) return ET_ERR_BAD_PROGRAM;
  *out = p->data + v.pos; *len = v.len;
  return ET_OK;
}

et_status et_program_named_data(et_program *p, const char *key, uint32_t key_len,
                                const uint8_t **out, uint32_t *len) {
  et_fb_vec nd = et_fb_vector(&p->root, ETFB_Program_named_data, 4);
  for (uint32_t i = 0; i < nd.len; i++) {
    et_fb_table e;
    uint32_t klen;
    if (!et_fb_vec_table(&nd, i, &e)) return ET_ERR_BAD_PROGRAM;
    const char *k = et_fb_string(&e, ETFB_NamedData_key, &klen);
    if (!k || klen != key_len) continue;
    uint32_t j = 0;
    while (j < klen && k[j] == key[j]) j++;          /* no libc on every board */
    if (j != klen) continue;
    uint64_t s0, sz;
    if (segment(p, et_fb_u32(&e, ETFB_NamedData_segment_index, 0), &s0, &sz) != ET_OK) return ET_ERR_BAD_PROGRAM;
    *out = p->data + s0; *len = (uint32_t)sz;
    return ET_OK;
  }
  return p->fb.err ? ET_ERR_BAD_PROGRAM : ET_ERR_INVALID_ARGUMENT;
}

const char *et_status_name(et_status s) {
  switch (s) {
    case ET_OK: return "ok";
    case ET_ERR_BAD_PROGRAM: return "bad program";
    case ET_ERR_UNSUPPORTED: return "unsupported";
    case ET_ERR_OUT_OF_MEMORY: return "out of memory";
    case ET_ERR_MISSING_OPERATOR: return "missing operator";
    case ET_ERR_UNKNOWN_BACKEND: return "unknown backend";
    case ET_ERR_INVALID_ARGUMENT: return "invalid argument";
    case ET_ERR_BAD_INPUT: return "bad input";
    case ET_ERR_DELEGATE: return "delegate failed";
    case ET_ERR_INTERNAL: return "internal error";
    case ET_ERR_MISMATCH: return "output mismatch";
    case ET_ERR_SCRATCH: return "kernel scratch not as planned";
  }
  return "unknown";
}
