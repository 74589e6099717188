/* Helpers declared in et_kernel.h (and kernel_util.h): scalar conversion without double
 * arithmetic, tensor shape helpers, generic element access, PyTorch type promotion. */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
/* A 2-d transpose of 32-bit elements (e.g. permute_copy of a linear layer's weight): run r of `runs`
 * is d[r*dr + 0:len) = s[r*sr + (0:len)*ss], with gather loads, four per instruction. Needs word
 * alignment and a source stride whose offsets fit 32 bits; returns false (nothing copied) otherwise. */
static bool gather_rows_u32(uint32_t *d, ptrdiff_t dr, const uint32_t *s, ptrdiff_t sr, size_t runs, int32_t len,
                            ptrdiff_t ss) {
  /* byte offsets of 16 elements must fit 32 bits */
  if (ss <= 0 || ss > 0x3FFFFFFF / 64 || ((uintptr_t)s & 3u) || ((uintptr_t)d & 3u)) return false;
  const uint32x4_t off = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)ss);
  /* offsets of elements 4..15: four gathers per step share one base */
  const uint32x4_t off1 = vaddq_n_u32(off, 4u * (uint32_t)ss), off2 = vaddq_n_u32(off, 8u * (uint32_t)ss),
                   off3 = vaddq_n_u32(off, 12u * (uint32_t)ss);
  const int32_t n16 = len & ~15, whole = len & ~3;
  const mve_pred16_t tail = vctp32q((uint32_t)(len - whole));
  /* column blocks outside, runs inside: the inner loop is only loads, stores and two pointer steps */
  for (int32_t c0 = 0; c0 < n16; c0 += 16) {
    const uint32_t *sp = s + (ptrdiff_t)c0 * ss;
    uint32_t *dp = d + c0;
    for (size_t r = 0; r < runs; r++, sp += sr, dp += dr) {
      vst1q_u32(dp, vldrwq_gather_shifted_offset_u32(sp, off));
      vst1q_u32(dp + 4, vldrwq_gather_shifted_offset_u32(sp, off1));
      vst1q_u32(dp + 8, vldrwq_gather_shifted_offset_u32(sp, off2));
      vst1q_u32(dp + 12, vldrwq_gather_shifted_offset_u32(sp, off3));
    }
  }
  for (int32_t c0 = n16; c0 < whole; c0 += 4) {
    const uint32_t *sp = s + (ptrdiff_t)c0 * ss;
    uint32_t *dp = d + c0;
    for (size_t r = 0; r < runs; r++, sp += sr, dp += dr) vst1q_u32(dp, vldrwq_gather_shifted_offset_u32(sp, off));
  }
  if (whole < len) {
    const uint32_t *sp = s + (ptrdiff_t)whole * ss;
    uint32_t *dp = d + whole;
    for (size_t r = 0; r < runs; r++, sp += sr, dp += dr)
      vst1q_p_u32(dp, vldrwq_gather_shifted_offset_z_u32(sp, off, tail), tail);
  }
  return true;
}
#endif

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

/* the bounds keep the int32 sums below from overflowing */
int32_t et_pool_out_size(int32_t in, int32_t k, int32_t pad, int32_t s, int32_t dil, bool ceil) {
  const int32_t lim = 1 << 24, klim = 1 << 12;
  if (in < 0 || in > lim || pad < 0 || pad > lim || s <= 0 || s > lim || k <= 0 || k > klim || dil <= 0 ||
      dil > klim) return -1;
  int32_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil ? s - 1 : 0);
  int32_t o = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil && (int64_t)(o - 1) * s >= (int64_t)in + pad) o--;
  return o;
}

int32_t et_broadcast_shape(const et_tensor *a, const et_tensor *b, int32_t *out_sizes) {
  return et_broadcast_sizes(a->sizes, a->ndim, b->sizes, b->ndim, out_sizes);
}

int32_t et_broadcast_sizes(const int32_t *as, uint32_t an, const int32_t *bs, uint32_t bn, int32_t *out) {
  uint32_t n = an > bn ? an : bn;
  if (n > ET_MAX_DIMS) return -1;
  for (uint32_t i = 0; i < n; i++) {
    int32_t x = (i < an) ? as[an - 1 - i] : 1;
    int32_t y = (i < bn) ? bs[bn - 1 - i] : 1;
    int32_t o;
    if (x == y || y == 1) o = x;
    else if (x == 1) o = y;
    else return -1;
    out[n - 1 - i] = o;
  }
  return (int32_t)n;
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

/* ---------------- kernel_util.h extras ---------------- */
void et_contig_strides(const int32_t *sizes, uint32_t ndim, ptrdiff_t *strides) {
  ptrdiff_t s = 1;
  for (uint32_t d = ndim; d-- > 0;) { strides[d] = s; s *= sizes[d]; }
}

void et_tensor_strides(const et_tensor *t, ptrdiff_t *strides) {
  if (et_is_contiguous(t)) { et_contig_strides(t->sizes, t->ndim, strides); return; }
  /* dim_order lists dims from outermost to innermost in memory */
  ptrdiff_t s = 1;
  for (uint32_t k = t->ndim; k-- > 0;) {
    uint32_t d = t->dim_order[k];
    strides[d] = s;
    s *= t->sizes[d];
  }
}

bool et_same_shape(const et_tensor *a, const et_tensor *b) {
  if (a->ndim != b->ndim) return false;
  for (uint32_t d = 0; d < a->ndim; d++)
    if (a->sizes[d] != b->sizes[d]) return false;
  return true;
}

void et_bcast_strides(const et_tensor *t, uint32_t ondim, const int32_t *osizes, ptrdiff_t *strides) {
  ptrdiff_t ts[ET_MAX_DIMS];
  et_tensor_strides(t, ts);
  uint32_t off = ondim - t->ndim;
  for (uint32_t d = 0; d < ondim; d++) {
    if (d < off) strides[d] = 0;
    else {
      uint32_t td = d - off;
      strides[d] = (t->sizes[td] == 1 && osizes[d] != 1) ? 0 : ts[td];
    }
  }
}

void et_idx_init(et_idx *it, uint32_t ndim, const int32_t *sizes) {
  it->ndim = ndim;
  it->sizes = sizes;
  for (uint32_t d = 0; d < ndim; d++) it->pos[d] = 0;
  for (uint32_t k = 0; k < ET_IDX_MAX_OPS; k++) it->off[k] = 0;
}

void et_idx_next(et_idx *it, uint32_t nops, ptrdiff_t (*strides)[ET_MAX_DIMS]) {
  for (uint32_t d = it->ndim; d-- > 0;) {
    if (++it->pos[d] < it->sizes[d]) {
      for (uint32_t k = 0; k < nops; k++) it->off[k] += strides[k][d];
      return;
    }
    it->pos[d] = 0;
    for (uint32_t k = 0; k < nops; k++) it->off[k] -= strides[k][d] * (it->sizes[d] - 1);
  }
}

bool et_scalar_is_float(const et_value *v) { return v && v->tag == ET_TAG_DOUBLE; }

/* ---------------- elementwise walking and copying ---------------- */
et_status et_ew_prepare(et_ew *w, et_tensor *out, et_tensor *const *ins, uint32_t nin, bool resize) {
  int32_t shape[ET_MAX_DIMS];
  uint32_t nd = 0;
  if (nin == 0 || nin + 1 > ET_IDX_MAX_OPS) return ET_ERR_INVALID_ARGUMENT;
  nd = ins[0]->ndim;
  for (uint32_t d = 0; d < nd; d++) shape[d] = ins[0]->sizes[d];
  for (uint32_t k = 1; k < nin; k++) {
    int32_t tmp[ET_MAX_DIMS];
    int32_t r = et_broadcast_sizes(shape, nd, ins[k]->sizes, ins[k]->ndim, tmp);
    if (r < 0) return ET_ERR_INVALID_ARGUMENT;
    nd = (uint32_t)r;
    for (uint32_t d = 0; d < nd; d++) shape[d] = tmp[d];
  }
  if (resize) {
    et_status st = et_resize(out, nd, shape);
    if (st != ET_OK) return st;
  } else if (out->ndim != nd) {
    return ET_ERR_INVALID_ARGUMENT;
  }
  w->nops = nin + 1;
  w->n = (size_t)et_numel(out);
  et_tensor_strides(out, w->st[0]);
  for (uint32_t k = 0; k < nin; k++) et_bcast_strides(ins[k], nd, out->sizes, w->st[k + 1]);
  et_idx_init(&w->it, nd, out->sizes);
  return ET_OK;
}

void et_copy_elem(et_tensor *dst, ptrdiff_t di, const et_tensor *src, ptrdiff_t si) {
  if (dst->dtype == src->dtype) {
    size_t es = et_dtype_size(dst->dtype);
    const uint8_t *s = (const uint8_t *)src->data + (size_t)si * es;
    uint8_t *d = (uint8_t *)dst->data + (size_t)di * es;
    for (size_t b = 0; b < es; b++) d[b] = s[b];
    return;
  }
  if (et_dtype_is_float(dst->dtype) || et_dtype_is_float(src->dtype)) et_store_f(dst, di, et_load_f(src, si));
  else et_store_i(dst, di, et_load_i(src, si));
}

void et_strided_copy(et_tensor *dst, ptrdiff_t dbase, const ptrdiff_t *dst_st_in,
                     const et_tensor *src, ptrdiff_t sbase, const ptrdiff_t *src_st_in,
                     uint32_t ndim_in, const int32_t *sizes_in) {
  size_t n = 1;
  for (uint32_t d = 0; d < ndim_in; d++) n *= (size_t)sizes_in[d];
  if (n == 0) return;
  /* the same copy over fewer dims: size-1 dims dropped, and a dim merged into the next (inner) one
   * when both sides step over it as over the inner dim's whole extent (an NHWC -> NCHW transpose of
   * one image becomes 2-d, a contiguous tail one row) */
  int32_t sizes[ET_MAX_DIMS];
  ptrdiff_t dst_st[ET_MAX_DIMS], src_st[ET_MAX_DIMS];
  uint32_t ndim = 0;
  for (uint32_t d = 0; d < ndim_in; d++) {
    if (sizes_in[d] == 1) continue;
    if (ndim > 0 && (int64_t)dst_st[ndim - 1] == (int64_t)dst_st_in[d] * sizes_in[d] &&
        (int64_t)src_st[ndim - 1] == (int64_t)src_st_in[d] * sizes_in[d]) {
      sizes[ndim - 1] *= sizes_in[d];
      dst_st[ndim - 1] = dst_st_in[d];
      src_st[ndim - 1] = src_st_in[d];
      continue;
    }
    sizes[ndim] = sizes_in[d];
    dst_st[ndim] = dst_st_in[d];
    src_st[ndim] = src_st_in[d];
    ndim++;
  }
  if (ndim == 0) { sizes[0] = 1; dst_st[0] = src_st[0] = 1; ndim = 1; }  /* one element */
  size_t es = et_dtype_size(dst->dtype);
  bool same = dst->dtype == src->dtype;
  /* rows: the innermost dim when both sides are unit-stride there */
  uint32_t outer_nd = ndim;
  size_t row = 1;
  if (same && ndim > 0 && dst_st[ndim - 1] == 1 && src_st[ndim - 1] == 1) {
    row = (size_t)sizes[ndim - 1];
    outer_nd = ndim - 1;
  }
  if (same && row == 1 && ndim > 0 && (es == 4 || es == 2 || es == 1)) {
    /* same dtype, strided innermost dim: walk the outer dims, copy the innermost run with its strides */
    uint32_t od = ndim - 1;
    int32_t len = sizes[od];
    ptrdiff_t ds = dst_st[od], ss = src_st[od];
    et_idx it2;
    ptrdiff_t st2[2][ET_MAX_DIMS];
    for (uint32_t d = 0; d < od; d++) { st2[0][d] = dst_st[d]; st2[1][d] = src_st[d]; }
    et_idx_init(&it2, od, sizes);
    size_t runs = n / (size_t)len;
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
    if (es == 4 && od == 1 && ds == 1 && len >= 4 &&
        gather_rows_u32((uint32_t *)dst->data + dbase, st2[0][0], (const uint32_t *)src->data + sbase, st2[1][0],
                        runs, len, ss))
      return;
#endif
    for (size_t r = 0; r < runs; r++) {
      /* one outer dim (a 2-d transpose): plain strides, without the general index walk */
      ptrdiff_t di = od == 1 ? dbase + (ptrdiff_t)r * st2[0][0] : dbase + it2.off[0];
      ptrdiff_t si = od == 1 ? sbase + (ptrdiff_t)r * st2[1][0] : sbase + it2.off[1];
      if (es == 4) {
        uint32_t *d = (uint32_t *)dst->data + di;
        const uint32_t *s = (const uint32_t *)src->data + si;
        int32_t i = 0;
        if (ds == 1) {  /* a transpose's run: four loads with register offsets, then four plain stores */
          const ptrdiff_t s2 = 2 * ss, s3 = 3 * ss;
          for (; i + 4 <= len; i += 4, s += 4 * ss) {
            const uint32_t a = s[0], b = s[ss], c = s[s2], e = s[s3];
            d[i] = a; d[i + 1] = b; d[i + 2] = c; d[i + 3] = e;
          }
          for (; i < len; i++, s += ss) d[i] = *s;
        } else {
          for (; i < len; i++) d[i * ds] = s[i * ss];
        }
      } else if (es == 2) {
        uint16_t *d = (uint16_t *)dst->data + di;
        const uint16_t *s = (const uint16_t *)src->data + si;
        for (int32_t i = 0; i < len; i++) d[i * ds] = s[i * ss];
      } else {
        uint8_t *d = (uint8_t *)dst->data + di;
        const uint8_t *s = (const uint8_t *)src->data + si;
        for (int32_t i = 0; i < len; i++) d[i * ds] = s[i * ss];
      }
      if (od != 1) et_idx_next(&it2, 2, st2);
    }
    return;
  }
  et_idx it;
  ptrdiff_t st[2][ET_MAX_DIMS];
  for (uint32_t d = 0; d < outer_nd; d++) { st[0][d] = dst_st[d]; st[1][d] = src_st[d]; }
  et_idx_init(&it, outer_nd, sizes);
  size_t rows = n / row;
  for (size_t r = 0; r < rows; r++) {
    ptrdiff_t di = dbase + it.off[0], si = sbase + it.off[1];
    if (row > 1) {
      __builtin_memcpy((uint8_t *)dst->data + (size_t)di * es, (const uint8_t *)src->data + (size_t)si * es, row * es);
    } else {
      et_copy_elem(dst, di, src, si);
    }
    et_idx_next(&it, 2, st);
  }
}

et_status et_copy_same_shape(et_tensor *out, const et_tensor *in) {
  if (!et_same_shape(out, in)) return ET_ERR_INVALID_ARGUMENT;
  size_t n = (size_t)et_numel(in);
  if (out->dtype == in->dtype && et_is_contiguous(out) == et_is_contiguous(in) &&
      (et_is_contiguous(in) || __builtin_memcmp(out->dim_order, in->dim_order, in->ndim) == 0)) {
    if (out->data != in->data) __builtin_memmove(out->data, in->data, n * et_dtype_size(in->dtype));
    return ET_OK;
  }
  ptrdiff_t so[ET_MAX_DIMS], si[ET_MAX_DIMS];
  et_tensor_strides(out, so);
  et_tensor_strides(in, si);
  et_strided_copy(out, 0, so, in, 0, si, in->ndim, in->sizes);
  return ET_OK;
}

et_status et_copy_reshape(et_tensor *out, const et_tensor *in) {
  size_t n = (size_t)et_numel(in);
  if ((size_t)et_numel(out) != n) return ET_ERR_INVALID_ARGUMENT;
  if (out->dtype == in->dtype && et_is_contiguous(out) && et_is_contiguous(in)) {
    if (out->data != in->data) __builtin_memmove(out->data, in->data, n * et_dtype_size(in->dtype));
    return ET_OK;
  }
  et_idx a, b;
  ptrdiff_t sa[1][ET_MAX_DIMS], sb[1][ET_MAX_DIMS];
  et_tensor_strides(out, sa[0]);
  et_tensor_strides(in, sb[0]);
  et_idx_init(&a, out->ndim, out->sizes);
  et_idx_init(&b, in->ndim, in->sizes);
  for (size_t i = 0; i < n; i++) {
    et_copy_elem(out, a.off[0], in, b.off[0]);
    et_idx_next(&a, 1, sa);
    et_idx_next(&b, 1, sb);
  }
  return ET_OK;
}

et_status et_arg_tensor(et_kctx *ctx, et_value *const *args, uint32_t i, et_tensor **t) {
  if (!et_is_tensor(args[i]) || !args[i]->u.t) { ctx->err_detail = i; return ET_ERR_INVALID_ARGUMENT; }
  *t = args[i]->u.t;
  if (!(*t)->data && et_numel(*t) > 0) { ctx->err_detail = i; return ET_ERR_INVALID_ARGUMENT; }
  if (!et_dtype_size((*t)->dtype)) { ctx->err_detail = i; return ET_ERR_INVALID_ARGUMENT; }
  return ET_OK;
}

bool et_string_is(const et_value *v, const char *s) {
  if (!v || v->tag != ET_TAG_STRING) return false;
  uint32_t n = v->u.str->len, i = 0;
  for (; i < n; i++) if (s[i] == 0 || s[i] != v->u.str->ptr[i]) return false;
  return s[i] == 0;
}

bool et_same_layout(const et_tensor *a, const et_tensor *b) {
  if (a->ndim != b->ndim) return false;
  bool ca = et_is_contiguous(a), cb = et_is_contiguous(b);
  if (ca || cb) return ca == cb;
  return __builtin_memcmp(a->dim_order, b->dim_order, a->ndim) == 0;
}

et_status et_unary_prep(et_kctx *ctx, et_value *const *args, uint32_t nargs, uint32_t oi,
                        et_tensor **in, et_tensor **out) {
  if (nargs <= oi) return ET_ERR_INVALID_ARGUMENT;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, in)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, oi, out)) != ET_OK) return st;
  if ((st = et_resize_like(*out, *in)) != ET_OK) { ctx->err_detail = oi; return st; }
  return ET_OK;
}
