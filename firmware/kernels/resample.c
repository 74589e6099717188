/* Spatial resampling: upsample_nearest2d / upsample_bilinear2d (vec overloads), pixel_shuffle,
 * pixel_unshuffle. Any dim order (channels_last included); nearest and the shuffles copy elements
 * of any dtype, bilinear computes in float32. */
#include "et_kernel.h"
#include "kernel_util.h"
#include "etmath.h"

/* floor(n * d) for a non-negative double d given as IEEE bits, without double arithmetic (the
 * output size a scale factor asks for). Returns -1 for a negative, non-finite or oversized result. */
static int64_t floor_mul_double(int64_t n, uint64_t dbits) {
  if (dbits >> 63) return (dbits << 1) == 0 ? 0 : -1;
  uint32_t ex = (uint32_t)(dbits >> 52) & 0x7ffu;
  if (ex == 0x7ffu) return -1;
  uint64_t m = dbits & ((1ull << 52) - 1);
  int32_t e;
  if (ex == 0) e = -1074;                          /* subnormal: m * 2^-1074 */
  else { m |= 1ull << 52; e = (int32_t)ex - 1075; }
  if (n == 0 || m == 0) return 0;
  if (n < 0 || n > 0x7fffffff) return -1;
  /* p = n * m as 128 bits (hi:lo), n < 2^31 and m < 2^53 */
  uint64_t lo32 = (m & 0xffffffffu) * (uint64_t)n, hi32 = (m >> 32) * (uint64_t)n;
  uint64_t lo = lo32 + (hi32 << 32);
  uint64_t hi = (hi32 >> 32) + (lo < lo32 ? 1u : 0u);
  if (e >= 0) {
    if (hi || e > 31 || (lo >> (62 - e)) != 0) return -1;
    return (int64_t)(lo << e);
  }
  uint32_t s = (uint32_t)(-e);
  if (s >= 128) return 0;
  uint64_t q = s >= 64 ? hi >> (s - 64) : (lo >> s) | (s ? hi << (64 - s) : 0);
  if ((s < 64 && (hi >> s) != 0) || q > 0x7fffffffu) return -1;
  return (int64_t)q;
}

typedef struct {
  et_tensor *in, *out;
  int32_t ih, iw, oh, ow;
  bool has_scale;
  uint64_t sh_bits, sw_bits;   /* scale factors (double bits) when has_scale */
  /* what both kernels walk: the strides of in and out, and their (n, c) planes */
  ptrdiff_t is[ET_MAX_DIMS], os[ET_MAX_DIMS];
  int32_t nc[2];
  ptrdiff_t ncst[2][ET_MAX_DIMS];  /* (n, c) strides of out [0] and in [1] */
  size_t planes;
} upsample_args;

/* upsample_*2d.vec_out(input, SymInt[]? output_size, [bool align_corners,] float[]? scale_factors, out):
 * exactly one of output_size and scale_factors. */
static et_status upsample_prep(et_kctx *ctx, et_value *const *args, uint32_t si, uint32_t oi,
                               upsample_args *u) {
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &u->in)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, oi, &u->out)) != ET_OK) return st;
  et_tensor *in = u->in;
  if (in->ndim != 4) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  if (u->out->dtype != in->dtype) { ctx->err_detail = oi; return ET_ERR_INVALID_ARGUMENT; }
  u->ih = in->sizes[2];
  u->iw = in->sizes[3];
  uint32_t n;
  const int64_t *os = et_int_list(args[1], &n);
  const et_value *sv = args[si];
  u->has_scale = false;
  if (os && n == 2 && et_is_none(sv)) {
    if (os[0] < 0 || os[1] < 0 || os[0] > 0x7fffffff || os[1] > 0x7fffffff) {
      ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT;
    }
    u->oh = (int32_t)os[0];
    u->ow = (int32_t)os[1];
  } else if (et_is_none(args[1]) && sv && sv->tag == ET_TAG_DOUBLE_LIST && sv->u.list->len == 2) {
    const uint64_t *sb = (const uint64_t *)sv->u.list->items;
    int64_t h = floor_mul_double(u->ih, sb[0]), w = floor_mul_double(u->iw, sb[1]);
    if (h < 0 || w < 0) { ctx->err_detail = si; return ET_ERR_INVALID_ARGUMENT; }
    u->oh = (int32_t)h;
    u->ow = (int32_t)w;
    u->has_scale = true;
    u->sh_bits = sb[0];
    u->sw_bits = sb[1];
  } else {
    ctx->err_detail = et_is_none(args[1]) ? si : 1;
    return ET_ERR_INVALID_ARGUMENT;
  }
  if ((u->ih == 0 || u->iw == 0) && u->oh > 0 && u->ow > 0) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  int32_t osz[4] = {in->sizes[0], in->sizes[1], u->oh, u->ow};
  if ((st = et_resize(u->out, 4, osz)) != ET_OK) { ctx->err_detail = oi; return st; }
  et_tensor_strides(in, u->is);
  et_tensor_strides(u->out, u->os);
  u->nc[0] = in->sizes[0];
  u->nc[1] = in->sizes[1];
  u->ncst[0][0] = u->os[0]; u->ncst[0][1] = u->os[1];
  u->ncst[1][0] = u->is[0]; u->ncst[1][1] = u->is[1];
  u->planes = (size_t)u->nc[0] * (size_t)u->nc[1];
  return ET_OK;
}

/* input-per-output step along one dim: 1/scale when a scale factor was given, else in/out. A dim
 * whose size does not change maps each index to itself whatever the scale (as PyTorch does; the
 * executorch 1.5.1 portable kernel uses 1/scale there). */
/* (float)(1.0 / d) for a positive double d given by its bits, the division in double as the portable
 * kernel does it (1.0f / (float)d is one ulp away for some scales, 1.7 for one), in integer arithmetic
 * (no soft-double helpers): the quotient to 56+ bits and a sticky bit, rounded to double's 53 bits,
 * then to float's 24, each to nearest even. Results beyond float's normal range: infinity or 0. */
static float recip_double_as_float(uint64_t bits) {
  int32_t e = (int32_t)((bits >> 52) & 0x7ff);
  uint64_t m = bits & (((uint64_t)1 << 52) - 1);
  if (e == 0x7ff) return m ? ET_NAN : 0.0f;
  if (e == 0) return ET_INFINITY;             /* subnormal d: 1 / d overflows float */
  m |= (uint64_t)1 << 52;
  /* q = floor(2^108 / m) in (2^55, 2^56]; 1 / d = (2^108 / m) * 2^(967 - e) */
  uint64_t r = (uint64_t)1 << 52, q = 0;
  for (int i = 0; i < 57; i++) {
    q <<= 1;
    if (r >= m) { r -= m; q |= 1; }
    r <<= 1;
  }
  int32_t x = 967 - e, nb = 0;
  for (uint64_t t = q; t; t >>= 1) nb++;
  int32_t s1 = nb - 53;                        /* to double: 53 bits, sticky from the remainder */
  uint64_t d = q >> s1, rem = q & (((uint64_t)1 << s1) - 1), half = (uint64_t)1 << (s1 - 1);
  if (rem > half || (rem == half && (r != 0 || (d & 1)))) d++;
  x += s1;
  if (d >> 53) { d >>= 1; x++; }               /* carried to 2^53: exact, even */
  uint64_t f = d >> 29, rem2 = d & ((1u << 29) - 1), half2 = (uint64_t)1 << 28;   /* to float: 24 bits */
  if (rem2 > half2 || (rem2 == half2 && (f & 1))) f++;
  x += 29;
  if (f >> 24) { f >>= 1; x++; }
  int32_t be = x + 23 + 127;                   /* value f * 2^x, f in [2^23, 2^24) */
  if (be >= 255) return ET_INFINITY;
  if (be <= 0) return 0.0f;
  return et_bits_f32(((uint32_t)be << 23) | ((uint32_t)f & 0x7fffffu));
}

static float src_step(int32_t in, int32_t out, bool has_scale, uint64_t sbits) {
  if (in == out) return 1.0f;
  if (has_scale) {
    if (!(sbits >> 63) && sbits != 0 && sbits <= 0x7ff0000000000000u) return recip_double_as_float(sbits); /* > 0 */
  }
  return out > 0 ? (float)in / (float)out : 0.0f;
}

/* output columns whose sources are computed together (a stack block, no allocation) */
#define NN_COLS 32

static int32_t nearest_src(int32_t o, int32_t in, float step) {
  int32_t i = (int32_t)((float)o * step);  /* o * step >= 0: truncation is floor */
  return i < in - 1 ? i : in - 1;
}

ET_OP("aten::upsample_nearest2d.vec_out", k_aten_upsample_nearest2d_vec_out) {
  ET_CHECK_ARGS(4);
  upsample_args u;
  et_status st = upsample_prep(ctx, args, 2, 3, &u);
  if (st != ET_OK) return st;
  float sh = src_step(u.ih, u.oh, u.has_scale, u.sh_bits), sw = src_step(u.iw, u.ow, u.has_scale, u.sw_bits);
  const ptrdiff_t *is = u.is, *os = u.os;
  bool f32 = u.in->dtype == ET_FLOAT;
  const float *x = (const float *)u.in->data;
  float *y = (float *)u.out->data;
  ptrdiff_t src[NN_COLS];  /* input column offsets of a block of output columns */
  for (int32_t c0 = 0; c0 < u.ow; c0 += NN_COLS) {
    int32_t nx = u.ow - c0 < NN_COLS ? u.ow - c0 : NN_COLS;
    for (int32_t k = 0; k < nx; k++) src[k] = nearest_src(c0 + k, u.iw, sw) * is[3];
    et_idx it;
    et_idx_init(&it, 2, u.nc);
    for (size_t p = 0; p < u.planes; p++) {
      for (int32_t oy = 0; oy < u.oh; oy++) {
        ptrdiff_t irow = it.off[1] + nearest_src(oy, u.ih, sh) * is[2], orow = it.off[0] + oy * os[2] + c0 * os[3];
        if (f32) for (int32_t k = 0; k < nx; k++) y[orow + k * os[3]] = x[irow + src[k]];
        else for (int32_t k = 0; k < nx; k++) et_copy_elem(u.out, orow + k * os[3], u.in, irow + src[k]);
      }
      et_idx_next(&it, 2, u.ncst);
    }
  }
  return ET_OK;
}

/* source coordinate of output index o: weights of the two taps i0 and i0 + d (d 0 at the edge) */
typedef struct { int32_t i0, d; float l0, l1; } tap;

/* input-per-output step of one dim for bilinear sampling (align_corners: the corner pixels meet) */
static float bilinear_step(int32_t in, int32_t out, bool align, bool has_scale, uint64_t sbits) {
  if (align) return out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f;
  return src_step(in, out, has_scale, sbits);
}

static tap bilinear_tap(int32_t o, int32_t in, float step, bool align) {
  float src = align ? step * (float)o : step * ((float)o + 0.5f) - 0.5f;
  if (src < 0.0f) src = 0.0f;
  tap t;
  t.i0 = (int32_t)src;
  if (t.i0 > in - 1) t.i0 = in - 1;
  t.d = t.i0 < in - 1 ? 1 : 0;
  t.l1 = src - (float)t.i0;
  if (t.l1 > 1.0f) t.l1 = 1.0f;
  t.l0 = 1.0f - t.l1;
  return t;
}

/* output columns whose taps are computed together (a stack block, no allocation) */
#define BL_COLS 32

/* upsample_bilinear2d.vec_out(input, SymInt[]? output_size, bool align_corners,
 *   float[]? scale_factors, out) */
ET_OP("aten::upsample_bilinear2d.vec_out", k_aten_upsample_bilinear2d_vec_out) {
  ET_CHECK_ARGS(5);
  if (!args[2] || args[2]->tag != ET_TAG_BOOL) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  bool align = args[2]->u.b;
  upsample_args u;
  et_status st = upsample_prep(ctx, args, 3, 4, &u);
  if (st != ET_OK) return st;
  if (!et_dtype_is_float(u.in->dtype)) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  float sy = bilinear_step(u.ih, u.oh, align, u.has_scale, u.sh_bits);
  float sx = bilinear_step(u.iw, u.ow, align, u.has_scale, u.sw_bits);
  const ptrdiff_t *is = u.is, *os = u.os;
  bool f32 = u.in->dtype == ET_FLOAT;
  const float *x = (const float *)u.in->data;
  float *y = (float *)u.out->data;
  tap tx[BL_COLS];
  for (int32_t c0 = 0; c0 < u.ow; c0 += BL_COLS) {
    int32_t nx = u.ow - c0 < BL_COLS ? u.ow - c0 : BL_COLS;
    for (int32_t k = 0; k < nx; k++) tx[k] = bilinear_tap(c0 + k, u.iw, sx, align);
    et_idx it;
    et_idx_init(&it, 2, u.nc);
    for (size_t p = 0; p < u.planes; p++) {
      for (int32_t oy = 0; oy < u.oh; oy++) {
        tap ty = bilinear_tap(oy, u.ih, sy, align);
        ptrdiff_t r0 = it.off[1] + ty.i0 * is[2], r1 = r0 + ty.d * is[2];
        ptrdiff_t ob = it.off[0] + oy * os[2] + c0 * os[3];
        for (int32_t k = 0; k < nx; k++) {
          const tap *t = &tx[k];
          ptrdiff_t a = t->i0 * is[3], b = a + t->d * is[3];
          float v00, v01, v10, v11;
          if (f32) { v00 = x[r0 + a]; v01 = x[r0 + b]; v10 = x[r1 + a]; v11 = x[r1 + b]; }
          else {
            v00 = et_load_f(u.in, r0 + a); v01 = et_load_f(u.in, r0 + b);
            v10 = et_load_f(u.in, r1 + a); v11 = et_load_f(u.in, r1 + b);
          }
          float v = ty.l0 * (t->l0 * v00 + t->l1 * v01) + ty.l1 * (t->l0 * v10 + t->l1 * v11);
          if (f32) y[ob + k * os[3]] = v;
          else et_store_f(u.out, ob + k * os[3], v);
        }
      }
      et_idx_next(&it, 2, u.ncst);
    }
  }
  return ET_OK;
}

/* pixel_shuffle: [.., C*r*r, H, W] -> [.., C, H*r, W*r]; unshuffle the inverse. Both walk the
 * shuffled side as [.., C, H, r, W, r] against the packed side as [.., C, r, r, H, W]. */
static et_status shuffle(et_kctx *ctx, et_value *const *args, uint32_t nargs, bool up) {
  ET_CHECK_ARGS(3);
  et_tensor *in, *out;
  et_status st;
  if ((st = et_arg_tensor(ctx, args, 0, &in)) != ET_OK) return st;
  if ((st = et_arg_tensor(ctx, args, 2, &out)) != ET_OK) return st;
  if (!args[1] || args[1]->tag != ET_TAG_INT) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  int64_t r = args[1]->u.i;
  uint32_t nd = in->ndim;
  if (nd < 3 || nd + 3 > ET_MAX_DIMS) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  if (r <= 0 || r > 0xffff) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
  if (out->dtype != in->dtype) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  int32_t R = (int32_t)r, c = in->sizes[nd - 3], h = in->sizes[nd - 2], w = in->sizes[nd - 1];
  int32_t osz[ET_MAX_DIMS];
  for (uint32_t d = 0; d < nd - 3; d++) osz[d] = in->sizes[d];
  if (up) {
    if (c % (R * R)) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
    if ((int64_t)h * R > 0x7fffffff || (int64_t)w * R > 0x7fffffff) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
    osz[nd - 3] = c / (R * R); osz[nd - 2] = h * R; osz[nd - 1] = w * R;
  } else {
    if (h % R || w % R || (int64_t)c * R * R > 0x7fffffff) { ctx->err_detail = 1; return ET_ERR_INVALID_ARGUMENT; }
    osz[nd - 3] = c * R * R; osz[nd - 2] = h / R; osz[nd - 1] = w / R;
  }
  if ((st = et_resize(out, nd, osz)) != ET_OK) { ctx->err_detail = 2; return st; }
  et_tensor *big = up ? out : in, *packed = up ? in : out;  /* big: spatially larger side */
  ptrdiff_t bs[ET_MAX_DIMS], ps[ET_MAX_DIMS];
  et_tensor_strides(big, bs);
  et_tensor_strides(packed, ps);
  /* walk [lead..., C, H, r, W, r] (H, W the packed spatial sizes, C the small channel count) */
  uint32_t wd = nd + 2, L = nd - 3;
  int32_t ws[ET_MAX_DIMS];
  ptrdiff_t wst[2][ET_MAX_DIMS];
  for (uint32_t d = 0; d < L; d++) { ws[d] = osz[d]; wst[0][d] = bs[d]; wst[1][d] = ps[d]; }
  int32_t C = up ? osz[L] : c, H = packed->sizes[L + 1], W = packed->sizes[L + 2];
  ws[L] = C;     wst[0][L] = bs[L];              wst[1][L] = ps[L] * R * R;
  ws[L + 1] = H; wst[0][L + 1] = bs[L + 1] * R;  wst[1][L + 1] = ps[L + 1];
  ws[L + 2] = R; wst[0][L + 2] = bs[L + 1];      wst[1][L + 2] = ps[L] * R;
  ws[L + 3] = W; wst[0][L + 3] = bs[L + 2] * R;  wst[1][L + 3] = ps[L + 2];
  ws[L + 4] = R; wst[0][L + 4] = bs[L + 2];      wst[1][L + 4] = ps[L];
  size_t n = (size_t)et_numel(in);
  et_idx it;
  et_idx_init(&it, wd, ws);
  for (size_t i = 0; i < n; i++) {
    if (up) et_copy_elem(out, it.off[0], in, it.off[1]);
    else et_copy_elem(out, it.off[1], in, it.off[0]);
    et_idx_next(&it, 2, wst);
  }
  return ET_OK;
}

ET_OP("aten::pixel_shuffle.out", k_aten_pixel_shuffle_out) { return shuffle(ctx, args, nargs, true); }
ET_OP("aten::pixel_unshuffle.out", k_aten_pixel_unshuffle_out) { return shuffle(ctx, args, nargs, false); }
