/* Tensor basics shared by the runtime and every kernel (declared in et_tensor.h): scalar values
 * without double arithmetic, dtype sizes and kinds, numel/resize, generic element load/store, and
 * PyTorch type promotion. The runtime's loader, bundled-case checker and link use them; kernels get
 * them through et_kernel.h. Float16/bfloat16 conversions come from et_numfmt (runtime), never from kernels. */
#include "et_tensor.h"
#include "et_numfmt.h"

/* ---------------- doubles as bits ---------------- */
float et_double_bits_to_float(uint64_t bits) {
  uint32_t sign = (uint32_t)(bits >> 63) << 31;
  int e = (int)((bits >> 52) & 0x7ff);
  uint64_t m = bits & 0x000fffffffffffffull;
  if (e == 0x7ff) {
    if (m) return et_bits_f32(sign | 0x7fc00000u | (uint32_t)(m >> 29));
    return et_bits_f32(sign | 0x7f800000u);
  }
  if (e == 0) return et_bits_f32(sign);  /* zero or double denormal: far below float's range */
  int fe = e - 1023 + 127;
  if (fe >= 255) return et_bits_f32(sign | 0x7f800000u);
  uint32_t r;
  uint64_t rem, half;
  if (fe >= 1) {
    r = ((uint32_t)fe << 23) | (uint32_t)(m >> 29);
    rem = m & ((1ull << 29) - 1); half = 1ull << 28;
  } else {
    uint64_t M = m | (1ull << 52);
    int sh = 30 - fe;  /* = -(E + 97) with E = e - 1023 */
    if (sh > 63) return et_bits_f32(sign);
    r = (uint32_t)(M >> sh);
    rem = M & ((1ull << sh) - 1); half = 1ull << (sh - 1);
  }
  if (rem > half || (rem == half && (r & 1u))) r++;  /* carries into the exponent / inf */
  return et_bits_f32(sign | r);
}

uint64_t et_float_to_double_bits(float f) {
  uint32_t u = et_f32_bits(f);
  uint64_t sign = (uint64_t)(u >> 31) << 63;
  uint32_t fe = (u >> 23) & 0xff, fm = u & 0x7fffffu;
  if (fe == 0xff) return sign | (0x7ffull << 52) | ((uint64_t)fm << 29);
  if (fe == 0) {
    if (!fm) return sign;
    int p = 22;
    while (!(fm & (1u << p))) p--;
    uint64_t E = (uint64_t)(p - 149 + 1023);
    return sign | (E << 52) | (((uint64_t)fm << (52 - p)) & 0x000fffffffffffffull);
  }
  return sign | ((uint64_t)(fe - 127 + 1023) << 52) | ((uint64_t)fm << 29);
}

/* double bits -> int64, truncating toward zero, saturating, NaN -> 0 */
static int64_t double_bits_to_i64(uint64_t bits) {
  int neg = (int)(bits >> 63);
  int e = (int)((bits >> 52) & 0x7ff);
  uint64_t m = (bits & 0x000fffffffffffffull) | (1ull << 52);
  if (e == 0x7ff && (bits & 0x000fffffffffffffull)) return 0;
  int E = e - 1023;
  if (E < 0) return 0;
  if (E >= 63) return neg ? INT64_MIN : INT64_MAX;
  uint64_t mag = (E >= 52) ? (m << (E - 52)) : (m >> (52 - E));
  return neg ? -(int64_t)mag : (int64_t)mag;
}

int64_t et_value_as_int(const et_value *v) {
  if (!v) return 0;
  switch (v->tag) {
    case ET_TAG_INT: return v->u.i;
    case ET_TAG_BOOL: return v->u.b ? 1 : 0;
    case ET_TAG_DOUBLE: return double_bits_to_i64(v->u.dbits);
    default: return 0;
  }
}

float et_value_as_float(const et_value *v) {
  if (!v) return 0.0f;
  switch (v->tag) {
    case ET_TAG_INT: return (float)v->u.i;
    case ET_TAG_BOOL: return v->u.b ? 1.0f : 0.0f;
    case ET_TAG_DOUBLE: return et_double_bits_to_float(v->u.dbits);
    default: return 0.0f;
  }
}

bool et_value_is_floating(const et_value *v) { return v && v->tag == ET_TAG_DOUBLE; }

/* ---------------- dtypes ---------------- */
size_t et_dtype_size(uint32_t dtype) {
  switch (dtype) {
    case ET_BYTE: case ET_CHAR: case ET_BOOL: case ET_QINT8: case ET_QUINT8: return 1;
    case ET_SHORT: case ET_HALF: case ET_BFLOAT16: case ET_UINT16: return 2;
    case ET_INT: case ET_FLOAT: case ET_QINT32: case ET_UINT32: return 4;
    case ET_LONG: case ET_DOUBLE: case ET_UINT64: return 8;
    default: return 0;
  }
}

bool et_dtype_is_float(uint32_t dtype) {
  return dtype == ET_HALF || dtype == ET_FLOAT || dtype == ET_DOUBLE || dtype == ET_BFLOAT16;
}

bool et_dtype_is_int(uint32_t dtype) {
  switch (dtype) {
    case ET_BYTE: case ET_CHAR: case ET_SHORT: case ET_INT: case ET_LONG:
    case ET_QINT8: case ET_QUINT8: case ET_QINT32: case ET_UINT16: case ET_UINT32: case ET_UINT64:
      return true;
    default: return false;
  }
}

/* ---------------- shapes ---------------- */
int64_t et_numel(const et_tensor *t) {
  uint32_t n = 1;  /* the loader guarantees numel < 2^32 */
  for (uint32_t d = 0; d < t->ndim; d++) n *= (uint32_t)t->sizes[d];
  return (int64_t)n;
}

size_t et_nbytes(const et_tensor *t) { return (size_t)et_numel(t) * et_dtype_size(t->dtype); }

bool et_is_contiguous(const et_tensor *t) {
  if (!t->dim_order) return true;
  for (uint32_t d = 0; d < t->ndim; d++)
    if (t->dim_order[d] != d) return false;
  return true;
}

et_status et_resize(et_tensor *out, uint32_t ndim, const int32_t *sizes) {
  if (!out || ndim != out->ndim) return ET_ERR_INVALID_ARGUMENT;
  bool same = true;
  uint64_t numel = 1;
  for (uint32_t d = 0; d < ndim; d++) {
    if (sizes[d] < 0) return ET_ERR_INVALID_ARGUMENT;
    if (sizes[d] != out->sizes[d]) same = false;
    numel *= (uint64_t)sizes[d];
    if (numel > 0xFFFFFFFFull) return ET_ERR_OUT_OF_MEMORY;
  }
  if (same) return ET_OK;
  if (out->dynamic == 0) return ET_ERR_INVALID_ARGUMENT;
  if (numel * et_dtype_size(out->dtype) > out->capacity) return ET_ERR_OUT_OF_MEMORY;
  for (uint32_t d = 0; d < ndim; d++) out->sizes[d] = sizes[d];
  return ET_OK;
}

et_status et_resize_like(et_tensor *out, const et_tensor *like) {
  return et_resize(out, like->ndim, like->sizes);
}

int32_t et_wrap_dim(int64_t dim, uint32_t ndim) {
  int64_t n = ndim ? (int64_t)ndim : 1;  /* a 0-d tensor accepts dim 0 and -1 */
  if (dim < 0) dim += n;
  if (dim < 0 || dim >= n) return -1;
  return (int32_t)dim;
}

/* ---------------- element access ---------------- */
float et_load_f(const et_tensor *t, int64_t i) {
  const void *p = t->data;
  switch (t->dtype) {
    case ET_FLOAT: return ((const float *)p)[i];
    case ET_HALF: return et_half_to_float(((const uint16_t *)p)[i]);
    case ET_BFLOAT16: return et_bf16_to_float(((const uint16_t *)p)[i]);
    case ET_DOUBLE: return et_double_bits_to_float(((const uint64_t *)p)[i]);
    case ET_BOOL: return ((const uint8_t *)p)[i] ? 1.0f : 0.0f;
    case ET_BYTE: case ET_QUINT8: return (float)((const uint8_t *)p)[i];
    case ET_CHAR: case ET_QINT8: return (float)((const int8_t *)p)[i];
    case ET_SHORT: return (float)((const int16_t *)p)[i];
    case ET_UINT16: return (float)((const uint16_t *)p)[i];
    case ET_INT: case ET_QINT32: return (float)((const int32_t *)p)[i];
    case ET_UINT32: return (float)((const uint32_t *)p)[i];
    case ET_LONG: return (float)((const int64_t *)p)[i];
    case ET_UINT64: return (float)((const uint64_t *)p)[i];
    default: return 0.0f;
  }
}

int64_t et_load_i(const et_tensor *t, int64_t i) {
  const void *p = t->data;
  switch (t->dtype) {
    case ET_BOOL: return ((const uint8_t *)p)[i] ? 1 : 0;
    case ET_BYTE: case ET_QUINT8: return ((const uint8_t *)p)[i];
    case ET_CHAR: case ET_QINT8: return ((const int8_t *)p)[i];
    case ET_SHORT: return ((const int16_t *)p)[i];
    case ET_UINT16: return ((const uint16_t *)p)[i];
    case ET_INT: case ET_QINT32: return ((const int32_t *)p)[i];
    case ET_UINT32: return ((const uint32_t *)p)[i];
    case ET_LONG: case ET_UINT64: return ((const int64_t *)p)[i];
    case ET_DOUBLE: return double_bits_to_i64(((const uint64_t *)p)[i]);
    case ET_FLOAT: case ET_HALF: case ET_BFLOAT16: return et_f32_to_i64(et_load_f(t, i));
    default: return 0;
  }
}

void et_store_f(et_tensor *t, int64_t i, float v) {
  void *p = t->data;
  switch (t->dtype) {
    case ET_FLOAT: ((float *)p)[i] = v; break;
    case ET_HALF: ((uint16_t *)p)[i] = et_float_to_half(v); break;
    case ET_BFLOAT16: ((uint16_t *)p)[i] = et_float_to_bf16(v); break;
    case ET_DOUBLE: ((uint64_t *)p)[i] = et_float_to_double_bits(v); break;
    case ET_BOOL: ((uint8_t *)p)[i] = (v != 0.0f); break;
    default: et_store_i(t, i, et_f32_to_i64(v)); break;
  }
}

void et_store_i(et_tensor *t, int64_t i, int64_t v) {
  void *p = t->data;
  switch (t->dtype) {
    case ET_BOOL: ((uint8_t *)p)[i] = (v != 0); break;
    case ET_BYTE: case ET_QUINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case ET_CHAR: case ET_QINT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case ET_SHORT: ((int16_t *)p)[i] = (int16_t)v; break;
    case ET_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case ET_INT: case ET_QINT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case ET_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case ET_LONG: case ET_UINT64: ((int64_t *)p)[i] = v; break;
    case ET_FLOAT: case ET_HALF: case ET_BFLOAT16: case ET_DOUBLE: et_store_f(t, i, (float)v); break;
    default: break;
  }
}

/* ---------------- type promotion (torch.promote_types) ---------------- */
/* rank within a category; -1 = not a plain numeric dtype */
static int int_rank(uint32_t d) {
  switch (d) {
    case ET_CHAR: return 0; case ET_SHORT: return 1; case ET_INT: return 2; case ET_LONG: return 3;
    default: return -1;
  }
}

uint32_t et_promote_types(uint32_t a, uint32_t b) {
  if (a == b) return a;
  if (a == ET_BOOL) return b;
  if (b == ET_BOOL) return a;
  bool fa = et_dtype_is_float(a), fb = et_dtype_is_float(b);
  if (fa && fb) {
    if (a == ET_DOUBLE || b == ET_DOUBLE) return ET_DOUBLE;
    return ET_FLOAT;  /* f32 with half/bf16, or half with bf16 */
  }
  if (fa) return a;
  if (fb) return b;
  /* both integers */
  if (a == ET_BYTE || b == ET_BYTE) {
    uint32_t o = (a == ET_BYTE) ? b : a;
    int r = int_rank(o);
    if (r == 0) return ET_SHORT;           /* uint8 + int8 -> int16 */
    if (r > 0) return o;
  }
  int ra = int_rank(a), rb = int_rank(b);
  if (ra >= 0 && rb >= 0) return ra > rb ? a : b;
  /* unsigned 16/32/64 and quantized types: torch refuses most of these; take the wider one */
  return et_dtype_size(a) >= et_dtype_size(b) ? a : b;
}
