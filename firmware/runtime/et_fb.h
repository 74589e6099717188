/* Bounds-checked FlatBuffers reading straight from flash. Reads never fault: an out-of-range
 * offset sets buf->err and yields zero/empty, so callers check err once per step. Alignment-safe
 * (byte loads), little-endian. Field slots come from the generated et_schema.gen.h. */
#ifndef ET_FB_H
#define ET_FB_H
#include <stdint.h>
#include <stdbool.h>

typedef struct et_fb_buf {
  const uint8_t *base;
  uint32_t size;
  uint32_t err;          /* sticky: first bad offset seen + 1, 0 = fine */
} et_fb_buf;

typedef struct et_fb_table {
  et_fb_buf *b;
  uint32_t pos;          /* table start */
  uint32_t vt;           /* vtable start */
  uint32_t vtsize;       /* bytes */
} et_fb_table;

typedef struct et_fb_vec {
  et_fb_buf *b;
  uint32_t pos;          /* first element */
  uint32_t len;
} et_fb_vec;

uint32_t et_fb_rd32(et_fb_buf *b, uint32_t pos);
uint64_t et_fb_rd64(et_fb_buf *b, uint32_t pos);
uint16_t et_fb_rd16(et_fb_buf *b, uint32_t pos);
uint8_t et_fb_rd8(et_fb_buf *b, uint32_t pos);

bool et_fb_root(et_fb_buf *b, et_fb_table *t);
bool et_fb_table_at(et_fb_buf *b, uint32_t pos, et_fb_table *t);
uint32_t et_fb_field(const et_fb_table *t, uint32_t slot);        /* abs pos or 0 if absent */
bool et_fb_sub(const et_fb_table *t, uint32_t slot, et_fb_table *out); /* false if absent/bad */
uint32_t et_fb_u32(const et_fb_table *t, uint32_t slot, uint32_t dflt);
uint64_t et_fb_u64(const et_fb_table *t, uint32_t slot, uint64_t dflt);
uint8_t et_fb_u8(const et_fb_table *t, uint32_t slot, uint8_t dflt);
/* Vector of elem_size-byte scalars or (elem_size 4) of offsets; absent = len 0. */
et_fb_vec et_fb_vector(const et_fb_table *t, uint32_t slot, uint32_t elem_size);
bool et_fb_vec_table(const et_fb_vec *v, uint32_t i, et_fb_table *out);
static inline int32_t et_fb_vec_i32(const et_fb_vec *v, uint32_t i) { return (int32_t)et_fb_rd32(v->b, v->pos + 4 * i); }
static inline uint64_t et_fb_vec_u64(const et_fb_vec *v, uint32_t i) { return et_fb_rd64(v->b, v->pos + 8 * i); }
static inline uint8_t et_fb_vec_u8(const et_fb_vec *v, uint32_t i) { return et_fb_rd8(v->b, v->pos + i); }
/* String field: pointer into the buffer (not NUL-terminated) and length; NULL if absent. */
const char *et_fb_string(const et_fb_table *t, uint32_t slot, uint32_t *len);
bool et_fb_str_eq(const char *s, uint32_t len, const char *z);

#endif
