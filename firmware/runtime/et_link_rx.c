/* Host -> firmware frames, decoded byte by byte so that input tensors are written straight into
 * their planned memory (no frame buffer). The last 4 decoded bytes are the CRC: a 4-byte delay line
 * keeps them out of the tensor. */
#include "et_link.h"
#include "bsp.h"

#define HEAD_MAX (3 + 8 + 4 * 16)

typedef struct rx {
  et_link_frame *f;
  et_link_input_sink sink;
  void *user;
  uint8_t head[HEAD_MAX];
  uint32_t nhead, head_need;
  uint8_t *dst; uint32_t cap;
  uint8_t delay[4]; uint32_t ndelay;
  uint32_t crc;
} rx;

static uint32_t crc32_byte(uint32_t c, uint8_t b) {
  c ^= b;
  for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  return c;
}

static int32_t rd32(const uint8_t *p) {
  return (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24));
}

static void content(rx *r, uint8_t b) {
  r->crc = crc32_byte(r->crc, b);
  if (r->nhead < r->head_need) {
    r->head[r->nhead++] = b;
    if (r->nhead == 1) r->f->type = b;
    if (r->f->type == ET_REC_INPUT) {
      if (r->nhead == 3) r->head_need = 3 + 8;
      if (r->nhead == 3 + 8) {
        uint8_t nd = r->head[8];
        r->head_need = 3 + 8 + 4u * (nd > 16 ? 16 : nd);
      }
      if (r->nhead == r->head_need && r->nhead >= 11) {
        et_link_input *in = &r->f->input;
        in->program = r->head[3]; in->method = r->head[4];
        in->index = (uint16_t)(r->head[5] | (r->head[6] << 8));
        in->dtype = r->head[7]; in->ndim = r->head[8];
        for (uint32_t d = 0; d < in->ndim && d < 16; d++) in->sizes[d] = rd32(r->head + 11 + 4 * d);
        r->dst = in->ndim <= 16 ? r->sink(in, &r->cap, r->user) : 0;
      }
    } else if (r->f->type == ET_REC_RUN && r->nhead == 3) {
      r->head_need = 5;
    }
    return;
  }
  if (r->f->type == ET_REC_INPUT) {
    if (r->dst && r->f->data_bytes < r->cap) r->dst[r->f->data_bytes] = b;
    else r->f->overflow = true;
    r->f->data_bytes++;
  }
}

static void decoded(rx *r, uint8_t b) {
  if (r->ndelay == 4) {
    content(r, r->delay[0]);
    r->delay[0] = r->delay[1]; r->delay[1] = r->delay[2]; r->delay[2] = r->delay[3];
    r->delay[3] = b;
  } else {
    r->delay[r->ndelay++] = b;
  }
}

bool et_link_recv(et_link_frame *f, et_link_input_sink sink, void *user, uint32_t timeout_ms) {
  for (;;) {
    rx r = {0};
    r.f = f; r.sink = sink; r.user = user; r.head_need = 3; r.crc = 0xFFFFFFFFu;
    f->type = 0; f->data_bytes = 0; f->crc_ok = false; f->overflow = false;
    uint32_t remaining = 0, code = 0, nbytes = 0;
    for (;;) {
      uint8_t b;
      /* Wait in short slices so that a slow host is not taken for a closed link. */
      uint32_t waited = 0;
      int n;
      while ((n = bsp_read(&b, 1, 100)) == 0 && (timeout_ms == 0 || (waited += 100) < timeout_ms)) {}
      if (n <= 0) return false;
      if (b == 0) break;
      nbytes++;
      if (remaining == 0) {
        if (code && code < 255) decoded(&r, 0);
        code = b; remaining = b - 1u;
      } else {
        decoded(&r, b);
        remaining--;
      }
    }
    if (nbytes == 0) continue;  /* empty frame: a resync byte */
    uint32_t got = r.ndelay == 4 ? (uint32_t)r.delay[0] | ((uint32_t)r.delay[1] << 8) |
                                   ((uint32_t)r.delay[2] << 16) | ((uint32_t)r.delay[3] << 24) : 0;
    f->crc_ok = remaining == 0 && r.ndelay == 4 && r.nhead >= 3 && got == ~r.crc;
    if (f->type == ET_REC_RUN && r.nhead >= 5) { f->program = r.head[3]; f->method = r.head[4]; }
    return true;
  }
}
