/* On-device profiling (etdump=1): one event per executed instruction, timestamped with the
 * board's cycle counter, packed into small batches that leave over the link while the method runs.
 * Encoding (EVENT record, sub-type first):
 *   1 batch : u8 1, u8 prog, u8 method, u8 chain, u32 run, u16 batch, u64 base,
 *             then per event: varint instr, varint (start - previous), varint (end - start)
 *   2 run   : u8 2, u8 prog, u8 method, u8 status, u32 run, u64 start, u64 end, u32 events, u16 batches
 *   3 debug : u8 3, u8 prog, u8 method, u8 chain, u32 run, u32 instr, u8 dtype, u8 ndim, u16 pad,
 *             i32 sizes[ndim], data   (etdump=debug: the instruction's output tensor)
 * No heap: one static batch buffer. Compiled to nothing without ET_PROFILE. */
#ifdef ET_PROFILE
#include "et_runtime.h"
#include "et_link.h"
#include "bsp.h"

#define BATCH_BYTES 240u

static struct {
  uint8_t prog, method, chain;
  uint32_t run;
  uint16_t batch;
  uint8_t buf[BATCH_BYTES + 32];
  uint32_t n;               /* bytes used in buf */
  uint64_t base, prev;      /* batch base time, end of previous event */
  uint64_t start;           /* current instruction start */
  uint64_t run_start;
  uint32_t events;
  bool active;
} P;

void et_profile_init(void) { P.run = 0; P.active = false; }

static void flush(void) {
  if (!P.n) return;
  et_link_begin(ET_REC_EVENT);
  et_link_u8(1); et_link_u8(P.prog); et_link_u8(P.method); et_link_u8(P.chain);
  et_link_u32(P.run); et_link_u16(P.batch++); et_link_u64(P.base);
  et_link_put(P.buf, P.n);
  et_link_end();
  P.n = 0;
}

static void varint(uint64_t v) {
  while (v >= 0x80) { P.buf[P.n++] = (uint8_t)(v | 0x80); v >>= 7; }
  P.buf[P.n++] = (uint8_t)v;
}

void et_profile_run_begin(uint32_t prog, uint32_t method) {
  P.prog = (uint8_t)prog; P.method = (uint8_t)method; P.chain = 0;
  P.batch = 0; P.n = 0; P.events = 0; P.active = true;
  P.run_start = bsp_cycles();
}

void et_profile_run_end(et_status st) {
  uint64_t end = bsp_cycles();
  if (!P.active) return;
  flush();
  et_link_begin(ET_REC_EVENT);
  et_link_u8(2); et_link_u8(P.prog); et_link_u8(P.method); et_link_u8((uint8_t)st);
  et_link_u32(P.run); et_link_u64(P.run_start); et_link_u64(end); et_link_u32(P.events); et_link_u16(P.batch);
  et_link_end();
  P.run++;
  P.active = false;
}

void et_profile_begin(const et_method *m, uint32_t chain, uint32_t instr) {
  (void)m; (void)instr;
  if (!P.active) return;
  if (chain != P.chain) { flush(); P.chain = (uint8_t)chain; }
  P.start = bsp_cycles();
}

#ifdef ET_PROFILE_DEBUG
static void debug_output(const et_method *m, uint32_t chain, uint32_t instr) {
  const et_instr *in = &m->chains[chain].instrs[instr];
  if (in->kind != ET_I_KERNEL || !in->nargs) return;
  const et_value *v = in->args[in->nargs - 1];
  if (v->tag != ET_TAG_TENSOR || !v->u.t->data) return;
  const et_tensor *t = v->u.t;
  et_link_begin(ET_REC_EVENT);
  et_link_u8(3); et_link_u8(P.prog); et_link_u8(P.method); et_link_u8((uint8_t)chain);
  et_link_u32(P.run); et_link_u32(instr); et_link_u8(t->dtype); et_link_u8(t->ndim); et_link_u16(0);
  for (uint32_t d = 0; d < t->ndim; d++) et_link_u32((uint32_t)t->sizes[d]);
  et_link_put(t->data, et_nbytes(t));
  et_link_end();
}
#endif

void et_profile_end(const et_method *m, uint32_t chain, uint32_t instr, et_status st) {
  uint64_t end = bsp_cycles();
  (void)st;
  if (!P.active) return;
  const et_instr *in = &m->chains[chain].instrs[instr];
  if (in->kind != ET_I_KERNEL && in->kind != ET_I_DELEGATE) return;
  if (P.n == 0) { P.base = P.start; P.prev = P.start; }
  varint(instr);
  varint(P.start - P.prev);
  varint(end - P.start);
  P.prev = end;
  P.events++;
  if (P.n >= BATCH_BYTES) flush();
#ifdef ET_PROFILE_DEBUG
  debug_output(m, chain, instr);
#endif
}
#else
typedef int et_profile_unused;  /* ISO C: no empty translation unit */
#endif
