/* Kernel helpers declared in kernel_util.h (and et_kernel.h): broadcasting, pooling sizes, strides,
 * index walking, elementwise preparation and copies. The tensor basics they build on (dtype sizes,
 * numel, resize, element load/store, scalar conversion, type promotion) are the runtime's:
 * firmware/runtime/et_tensor.c. */
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

/* n bytes d <- s (no overlap): short runs inline, long ones by memcpy */
static inline void copy_run(uint8_t *d, const uint8_t *s, size_t n) {
  if (n > 128) { __builtin_memcpy(d, s, n); return; }
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
  for (size_t k = 0; k < n; k += 16) {
    const mve_pred16_t p = vctp8q((uint32_t)(n - k));
    vst1q_p_u8(d + k, vld1q_z_u8(s + k, p), p);
  }
#else
  size_t k = 0;
  if ((((uintptr_t)d | (uintptr_t)s) & 3u) == 0)
    for (; k + 4 <= n; k += 4) *(uint32_t *)(void *)(d + k) = *(const uint32_t *)(const void *)(s + k);
  for (; k < n; k++) d[k] = s[k];
#endif
}

/* ---------------- shapes ---------------- */
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
  /* the dims walked in the destination's memory order (largest stride outside): a channels_last
   * destination (NHWC cat, split, permute) then has its channels innermost, as runs */
  uint8_t ord[ET_MAX_DIMS];
  for (uint32_t d = 0; d < ndim_in; d++) {
    uint32_t j = d;
    for (; j > 0 && dst_st_in[ord[j - 1]] < dst_st_in[d]; j--) ord[j] = ord[j - 1];
    ord[j] = (uint8_t)d;
  }
  uint32_t ndim = 0;
  for (uint32_t k = 0; k < ndim_in; k++) {
    const uint32_t d = ord[k];
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
  if (row > 1 && outer_nd == 1) {   /* rows at fixed steps (a cat or split along the innermost dim) */
    uint8_t *d = (uint8_t *)dst->data + (size_t)dbase * es;
    const uint8_t *s = (const uint8_t *)src->data + (size_t)sbase * es;
    const size_t bytes = row * es, dstep = (size_t)st[0][0] * es, sstep = (size_t)st[1][0] * es;
    for (size_t r = 0; r < rows; r++, d += dstep, s += sstep) copy_run(d, s, bytes);
    return;
  }
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

/* The same sizes on both sides but for dims of size 1 (squeeze, unsqueeze): one strided copy over the
 * others, with et_strided_copy's merged dims and transpose runs (squeezing a channels_last (N, C, 1, W)
 * into a contiguous (N, C, W) is a 2-d transpose; the element walk below took ~100 instructions a byte) */
static bool copy_same_dims(et_tensor *out, const et_tensor *in) {
  ptrdiff_t so[ET_MAX_DIMS], si[ET_MAX_DIMS], ds[ET_MAX_DIMS], ss[ET_MAX_DIMS];
  int32_t sz[ET_MAX_DIMS];
  et_tensor_strides(out, so);
  et_tensor_strides(in, si);
  uint32_t a = 0, b = 0, n = 0;
  for (;;) {
    while (a < out->ndim && out->sizes[a] == 1) a++;
    while (b < in->ndim && in->sizes[b] == 1) b++;
    if (a == out->ndim || b == in->ndim) break;
    if (out->sizes[a] != in->sizes[b]) return false;
    sz[n] = out->sizes[a]; ds[n] = so[a]; ss[n] = si[b];
    n++; a++; b++;
  }
  if (a != out->ndim || b != in->ndim) return false;
  et_strided_copy(out, 0, ds, in, 0, ss, n, sz);
  return true;
}

et_status et_copy_reshape(et_tensor *out, const et_tensor *in) {
  size_t n = (size_t)et_numel(in);
  if ((size_t)et_numel(out) != n) return ET_ERR_INVALID_ARGUMENT;
  if (out->dtype == in->dtype && et_is_contiguous(out) && et_is_contiguous(in)) {
    if (out->data != in->data) __builtin_memmove(out->data, in->data, n * et_dtype_size(in->dtype));
    return ET_OK;
  }
  if (n && out->data != in->data && copy_same_dims(out, in)) return ET_OK;
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
