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

#ifdef ET_LINK_TEXT
/* Text link (link=text), for consoles that carry lines, not bytes (LAVA's pattern matcher): each
 * frame's COBS bytes go out in hex on one "ETL:" line, so the host checks the same CRC; after the
 * result frame comes one readable verdict line with a CRC-32 of its own text, then "ET-END". */
static uint8_t head[23];   /* type, seq, and the result record's payload */
static uint32_t nhead;
static uint32_t text_crc;

static void text_write(const char *s) {
  size_t n = 0;
  while (s[n]) text_crc = crc32_byte(text_crc, (uint8_t)s[n++]);
  bsp_write((const uint8_t *)s, n);
}
static void text_u32(uint32_t v) {
  char b[11];
  int i = 10;
  b[i] = 0;
  do { b[--i] = (char)('0' + v % 10u); v /= 10u; } while (v);
  text_write(b + i);
}
static void text_hex(const uint8_t *p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  char b[64];
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    b[k++] = digits[p[i] >> 4];
    b[k++] = digits[p[i] & 15u];
    if (k == sizeof b) { bsp_write((const uint8_t *)b, k); k = 0; }
  }
  if (k) bsp_write((const uint8_t *)b, k);
}
static uint32_t head_u32(uint32_t at) {
  return (uint32_t)head[at] | (uint32_t)head[at + 1] << 8 | (uint32_t)head[at + 2] << 16 | (uint32_t)head[at + 3] << 24;
}
/* ET-RESULT <pass|fail> status=<n> cases=<n> failed=<n> seq=<n> crc=<crc32 of the text before " crc="> */
static void text_verdict(void) {
  uint32_t status = (uint32_t)head[3] | (uint32_t)head[4] << 8;
  uint32_t cases = head_u32(11), failed = head_u32(15), fseq = (uint32_t)head[1] | (uint32_t)head[2] << 8;
  text_crc = 0xFFFFFFFFu;
  text_write(status == 0 && failed == 0 ? "ET-RESULT pass status=" : "ET-RESULT fail status=");
  text_u32(status);
  text_write(" cases="); text_u32(cases);
  text_write(" failed="); text_u32(failed);
  text_write(" seq="); text_u32(fseq);
  uint32_t c = ~text_crc;
  uint8_t b[4] = {(uint8_t)(c >> 24), (uint8_t)(c >> 16), (uint8_t)(c >> 8), (uint8_t)c};
  bsp_write((const uint8_t *)" crc=", 5);
  text_hex(b, 4);
  bsp_write((const uint8_t *)"\nET-END\n", 8);
}
#define LINK_WRITE(p, n) text_hex((p), (n))
#else
#define LINK_WRITE(p, n) bsp_write((p), (n))
#endif

static void flush_block(void) {
  block[0] = (uint8_t)(nblock + 1);
  LINK_WRITE(block, nblock + 1);
  nblock = 0;
}

static void cobs_byte(uint8_t b) {
  if (b == 0) { flush_block(); return; }
  block[1 + nblock++] = b;
  if (nblock == 254) flush_block();
}

static void raw(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
#ifdef ET_LINK_TEXT
    if (nhead < sizeof head) head[nhead++] = p[i];
#endif
    crc = crc32_byte(crc, p[i]);
    cobs_byte(p[i]);
  }
}

void et_link_begin(uint8_t type) {
  nblock = 0;
#ifdef ET_LINK_TEXT
  nhead = 0;
  bsp_write((const uint8_t *)"ETL:", 4);
#endif
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
#ifdef ET_LINK_TEXT
  bsp_write((const uint8_t *)"\n", 1);
  if (head[0] == ET_REC_RESULT && nhead == sizeof head) text_verdict();
#else
  uint8_t z = 0;
  bsp_write(&z, 1);
#endif
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
