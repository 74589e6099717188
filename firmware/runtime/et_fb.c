#include "et_fb.h"

static inline bool in_range(const et_fb_buf *b, uint32_t pos, uint32_t n) {
  return pos <= b->size && n <= b->size - pos;
}
static inline void fail(et_fb_buf *b, uint32_t pos) { if (!b->err) b->err = pos + 1; }

uint8_t et_fb_rd8(et_fb_buf *b, uint32_t pos) {
  if (!in_range(b, pos, 1)) { fail(b, pos); return 0; }
  return b->base[pos];
}
uint16_t et_fb_rd16(et_fb_buf *b, uint32_t pos) {
  if (!in_range(b, pos, 2)) { fail(b, pos); return 0; }
  const uint8_t *p = b->base + pos;
  return (uint16_t)(p[0] | (p[1] << 8));
}
uint32_t et_fb_rd32(et_fb_buf *b, uint32_t pos) {
  if (!in_range(b, pos, 4)) { fail(b, pos); return 0; }
  const uint8_t *p = b->base + pos;
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
uint64_t et_fb_rd64(et_fb_buf *b, uint32_t pos) {
  uint32_t lo = et_fb_rd32(b, pos), hi = et_fb_rd32(b, pos + 4);
  return (uint64_t)lo | ((uint64_t)hi << 32);
}

bool et_fb_table_at(et_fb_buf *b, uint32_t pos, et_fb_table *t) {
  t->b = b; t->pos = pos; t->vt = 0; t->vtsize = 0;
  if (!in_range(b, pos, 4)) { fail(b, pos); return false; }
  int32_t soff = (int32_t)et_fb_rd32(b, pos);
  int64_t vt = (int64_t)pos - soff;
  if (vt < 0 || vt > (int64_t)b->size - 4) { fail(b, pos); return false; }
  uint32_t vtsize = et_fb_rd16(b, (uint32_t)vt);
  uint32_t tsize = et_fb_rd16(b, (uint32_t)vt + 2);
  if (vtsize < 4 || (vtsize & 1) || !in_range(b, (uint32_t)vt, vtsize) || !in_range(b, pos, tsize)) {
    fail(b, pos); return false;
  }
  t->vt = (uint32_t)vt; t->vtsize = vtsize;
  return true;
}

bool et_fb_root(et_fb_buf *b, et_fb_table *t) {
  return et_fb_table_at(b, et_fb_rd32(b, 0), t) && !b->err;
}

uint32_t et_fb_field(const et_fb_table *t, uint32_t slot) {
  if (!t->vtsize || 4 + 2 * slot + 2 > t->vtsize) return 0;
  uint32_t off = et_fb_rd16(t->b, t->vt + 4 + 2 * slot);
  return off ? t->pos + off : 0;
}

static uint32_t deref(const et_fb_table *t, uint32_t slot) {
  uint32_t p = et_fb_field(t, slot);
  if (!p) return 0;
  uint32_t off = et_fb_rd32(t->b, p);
  if (off == 0 || !in_range(t->b, p, off)) { fail(t->b, p); return 0; }
  return p + off;
}

bool et_fb_sub(const et_fb_table *t, uint32_t slot, et_fb_table *out) {
  uint32_t p = deref(t, slot);
  if (!p) { out->b = t->b; out->vtsize = 0; out->pos = out->vt = 0; return false; }
  return et_fb_table_at(t->b, p, out);
}

uint32_t et_fb_u32(const et_fb_table *t, uint32_t slot, uint32_t dflt) {
  uint32_t p = et_fb_field(t, slot);
  return p ? et_fb_rd32(t->b, p) : dflt;
}
uint64_t et_fb_u64(const et_fb_table *t, uint32_t slot, uint64_t dflt) {
  uint32_t p = et_fb_field(t, slot);
  return p ? et_fb_rd64(t->b, p) : dflt;
}
uint8_t et_fb_u8(const et_fb_table *t, uint32_t slot, uint8_t dflt) {
  uint32_t p = et_fb_field(t, slot);
  return p ? et_fb_rd8(t->b, p) : dflt;
}

et_fb_vec et_fb_vector(const et_fb_table *t, uint32_t slot, uint32_t elem_size) {
  et_fb_vec v = {t->b, 0, 0};
  uint32_t p = deref(t, slot);
  if (!p) return v;
  uint32_t n = et_fb_rd32(t->b, p);
  if (elem_size && n > (t->b->size - p - 4) / elem_size) { fail(t->b, p); return v; }
  if (t->b->err) return v;
  v.pos = p + 4; v.len = n;
  return v;
}

bool et_fb_vec_table(const et_fb_vec *v, uint32_t i, et_fb_table *out) {
  out->b = v->b; out->vtsize = 0;
  if (i >= v->len) { fail(v->b, v->pos); return false; }
  uint32_t p = v->pos + 4 * i;
  uint32_t off = et_fb_rd32(v->b, p);
  if (off == 0 || !in_range(v->b, p, off)) { fail(v->b, p); return false; }
  return et_fb_table_at(v->b, p + off, out);
}

const char *et_fb_string(const et_fb_table *t, uint32_t slot, uint32_t *len) {
  et_fb_vec v = et_fb_vector(t, slot, 1);
  *len = v.len;
  return v.pos ? (const char *)t->b->base + v.pos : 0;
}

bool et_fb_str_eq(const char *s, uint32_t len, const char *z) {
  uint32_t i = 0;
  for (; i < len; i++) if (!z[i] || z[i] != s[i]) return false;
  return z[i] == 0;
}
