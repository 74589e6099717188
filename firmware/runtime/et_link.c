#include "et_link.h"
#include "bsp.h"

/* Streaming COBS: up to 254 data bytes are held before their block is written. */
static uint8_t block[255];
static uint32_t nblock;
static uint32_t crc;
static uint16_t seq;
static uint32_t frames;

static uint32_t crc32_byte(uint32_t c, uint8_t b) {
  c ^= b;
  for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  return c;
}

static void flush_block(void) {
  block[0] = (uint8_t)(nblock + 1);
  bsp_write(block, nblock + 1);
  nblock = 0;
}

static void cobs_byte(uint8_t b) {
  if (b == 0) { flush_block(); return; }
  block[1 + nblock++] = b;
  if (nblock == 254) flush_block();
}

static void raw(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) { crc = crc32_byte(crc, p[i]); cobs_byte(p[i]); }
}

void et_link_begin(uint8_t type) {
  nblock = 0;
  crc = 0xFFFFFFFFu;
  uint8_t h[3] = {type, (uint8_t)seq, (uint8_t)(seq >> 8)};
  raw(h, 3);
}
void et_link_put(const void *data, size_t n) { raw((const uint8_t *)data, n); }
void et_link_u8(uint8_t v) { raw(&v, 1); }
void et_link_u16(uint16_t v) { uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)}; raw(b, 2); }
void et_link_u32(uint32_t v) {
  uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  raw(b, 4);
}
void et_link_u64(uint64_t v) { et_link_u32((uint32_t)v); et_link_u32((uint32_t)(v >> 32)); }

void et_link_end(void) {
  uint32_t c = ~crc;
  uint8_t b[4] = {(uint8_t)c, (uint8_t)(c >> 8), (uint8_t)(c >> 16), (uint8_t)(c >> 24)};
  for (int i = 0; i < 4; i++) cobs_byte(b[i]);
  flush_block();
  uint8_t z = 0;
  bsp_write(&z, 1);
  seq++;
  frames++;
}

uint32_t et_link_frames(void) { return frames; }

void et_link_log(const char *text) {
  size_t n = 0;
  while (text[n]) n++;
  et_link_begin(ET_REC_LOG);
  et_link_put(text, n);
  et_link_end();
}
