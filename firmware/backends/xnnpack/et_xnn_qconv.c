/* XnnpackBackend's own int8 convolution / fully connected on AVX512-VNNI (see et_xnn_qconv.h).
 *
 * vpdpbusd multiplies unsigned by signed bytes: the input is made unsigned (x ^ 0x80 = x + 128) while
 * it is copied into a padded image (padding = the input zero point, so a padded tap adds nothing once
 * compensated), and the bias takes -(128 + in_zp) * sum(w). Weights are packed once at load: for each
 * step of 4 input channels, each 16-channel block holds 16 lanes of 4 consecutive K bytes. A tile is MR
 * output pixels x NB blocks of 16 channels, accumulated in registers over the whole K. */
#include <string.h>

#include "et_xnn_qconv.h"

#define BLK 16

void et_xq_shape(et_xq *q) {
  q->cin4 = (q->cin + 3) & ~3u;
  q->ph = q->ih + q->pt + q->pb;
  q->pw = q->iw + q->pl + q->pr;
  q->nblk = (q->cout + BLK - 1) / BLK;
  q->ksteps = q->kh * q->kw * q->cin4 / 4;
}

size_t et_xq_weight_bytes(const et_xq *q) {
  return (size_t)q->ksteps * q->nblk * 64 + (size_t)q->nblk * BLK * (sizeof(int32_t) + sizeof(float));
}

size_t et_xq_image_bytes(const et_xq *q) { return (size_t)q->n * q->ph * q->pw * q->cin4 + 64; }

void et_xq_pack(et_xq *q, void *mem, const int8_t *w, int taps_major, const int32_t *bias, float in_scale,
                const float *w_scale, uint32_t n_wscale, float out_scale) {
  size_t wbytes = (size_t)q->ksteps * q->nblk * 64;
  q->w = (int8_t *)mem;
  q->bias = (int32_t *)((uint8_t *)mem + wbytes);
  q->scale = (float *)(q->bias + q->nblk * BLK);
  memset(mem, 0, et_xq_weight_bytes(q));
  uint32_t taps = q->kh * q->kw;
  for (uint32_t c = 0; c < q->cout; c++) {
    int32_t sum = 0;
    for (uint32_t t = 0; t < taps; t++)
      for (uint32_t i = 0; i < q->cin; i++) {
        int8_t v = taps_major ? w[(size_t)t * q->cout + c] : w[((size_t)c * taps + t) * q->cin + i];
        uint32_t step = t * (q->cin4 / 4) + i / 4;
        q->w[((size_t)step * q->nblk + c / BLK) * 64 + (c % BLK) * 4 + i % 4] = v;
        sum += v;
      }
    /* acc over (x + 128) * w = sum (x - zp) * w + (128 + zp) * sum(w): take the second part off */
    int32_t b = 0;
    float ws;
    if (bias) memcpy(&b, bias + c, 4);                         /* named data: maybe unaligned */
    memcpy(&ws, w_scale + (n_wscale > 1 ? c : 0), 4);
    q->bias[c] = (int32_t)((uint32_t)b - (uint32_t)(128 + q->in_zp) * (uint32_t)sum);
    q->scale[c] = in_scale * ws / out_scale;                    /* XNNPACK's order, float32 */
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

int et_xq_available(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}

/* The padded unsigned image, one row (batch * ph + y) per call: borders (and the channel tail up to
 * cin4) hold in_zp ^ 0x80. Rows are spread over the pool like the tiles. */
typedef struct image_job { const et_xq *q; const int8_t *in; uint8_t *img; } image_job;

TARGET static void image_row(void *ctx, size_t r) {
  const image_job *ij = (const image_job *)ctx;
  const et_xq *q = ij->q;
  uint8_t pad = (uint8_t)((uint8_t)q->in_zp ^ 0x80);
  size_t row = (size_t)q->pw * q->cin4;
  uint32_t b = (uint32_t)(r / q->ph), y = (uint32_t)(r % q->ph);
  const __m512i flip = _mm512_set1_epi8((char)0x80);
  uint8_t *d = ij->img + r * row;
  if (y < q->pt || y >= q->pt + q->ih) { memset(d, pad, row); return; }
  const int8_t *s = ij->in + (((size_t)b * q->ih + (y - q->pt)) * q->iw) * q->cin;
  if (q->cin == q->cin4 && !q->pl && !q->pr) {               /* one contiguous row */
    size_t nb = (size_t)q->iw * q->cin, i = 0;
    for (; i + 64 <= nb; i += 64)
      _mm512_storeu_si512(d + i, _mm512_xor_si512(_mm512_loadu_si512(s + i), flip));
    if (i < nb) {
      __mmask64 m = (1ull << (nb - i)) - 1;                  /* nb - i < 64 */
      _mm512_mask_storeu_epi8(d + i, m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, s + i), flip));
    }
    return;
  }
  memset(d, pad, (size_t)q->pl * q->cin4);
  memset(d + (size_t)(q->pl + q->iw) * q->cin4, pad, (size_t)q->pr * q->cin4);
  uint8_t *dp = d + (size_t)q->pl * q->cin4;
  for (uint32_t x = 0; x < q->iw; x++, dp += q->cin4, s += q->cin) {
    uint32_t i = 0;
    for (; i + 64 <= q->cin; i += 64)
      _mm512_storeu_si512(dp + i, _mm512_xor_si512(_mm512_loadu_si512(s + i), flip));
    if (i < q->cin) {
      __mmask64 m = (1ull << (q->cin - i)) - 1;
      _mm512_mask_storeu_epi8(dp + i, m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, s + i), flip));
    }
    for (i = q->cin; i < q->cin4; i++) dp[i] = pad;
  }
}

typedef struct job {
  const et_xq *q;
  const uint8_t *img;
  int8_t *out;
  uint32_t npix;
} job;

/* MR pixels from p0 (np valid; the rest repeat the last one and are not stored) x NB blocks from b0.
 * FL: the pixels are read from the int8 input itself (a 1x1 convolution without padding on a multiple
 * of 4 channels needs no image) and made unsigned here. */
#define TILE(MR, NB, FL)                                                                                  \
  TARGET static void tile_##MR##x##NB##_##FL(const job *j, uint32_t p0, uint32_t np, uint32_t b0) {      \
    const et_xq *q = j->q;                                                                              \
    const uint8_t *a[MR];                                                                               \
    uint32_t hw = q->oh * q->ow, b = p0 / hw, r = p0 % hw, oy = r / q->ow, ox = r % q->ow;            \
    for (uint32_t i = 0; i < MR; i++) {   /* one division per tile: the pixels follow in row order */  \
      a[i] = j->img + (((size_t)b * q->ph + oy * q->sh) * q->pw + (size_t)ox * q->sw) * q->cin4;        \
      if (i + 1 < np && ++ox == q->ow) { ox = 0; if (++oy == q->oh) { oy = 0; b++; } }                 \
    }                                                                                                   \
    __m512i acc[MR][NB];                                                                                \
    _Pragma("GCC unroll 4") for (int jb = 0; jb < NB; jb++) {                                           \
      __m512i bias = _mm512_load_si512(q->bias + (b0 + jb) * BLK);                                      \
      _Pragma("GCC unroll 32") for (int i = 0; i < MR; i++) acc[i][jb] = bias;                          \
    }                                                                                                   \
    const int8_t *wp = q->w + (size_t)b0 * 64;                                                          \
    size_t wstride = (size_t)q->nblk * 64, row = (size_t)q->pw * q->cin4;                               \
    for (uint32_t ky = 0; ky < q->kh; ky++)                                                             \
      for (uint32_t kx = 0; kx < q->kw; kx++) {                                                         \
        size_t off = ky * row + (size_t)kx * q->cin4;                                                   \
        for (uint32_t c = 0; c < q->cin4; c += 4, wp += wstride) {                                      \
          __m512i w[NB];                                                                                \
          _Pragma("GCC unroll 4") for (int jb = 0; jb < NB; jb++) w[jb] = _mm512_load_si512(wp + jb * 64); \
          _Pragma("GCC unroll 32") for (int i = 0; i < MR; i++) {                                       \
            int32_t v;                                                                                  \
            memcpy(&v, a[i] + off + c, 4);                                                              \
            __m512i x = _mm512_set1_epi32(v);                                                           \
            if (FL) x = _mm512_xor_si512(x, _mm512_set1_epi32((int)0x80808080u));                       \
            _Pragma("GCC unroll 4") for (int jb = 0; jb < NB; jb++)                                     \
              acc[i][jb] = _mm512_dpbusd_epi32(acc[i][jb], x, w[jb]);                                   \
          }                                                                                             \
        }                                                                                               \
      }                                                                                                 \
    const __m512 lo = _mm512_set1_ps((float)(q->qmin - q->out_zp));                                     \
    const __m512 hi = _mm512_set1_ps((float)(q->qmax - q->out_zp));                                     \
    const __m512i zp = _mm512_set1_epi32(q->out_zp);                                                    \
    _Pragma("GCC unroll 4") for (int jb = 0; jb < NB; jb++) {                                           \
      uint32_t c0 = (b0 + jb) * BLK, left = q->cout - c0;                                               \
      __mmask16 m = left >= BLK ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);                   \
      __m512 s = _mm512_load_ps(q->scale + c0);                                                         \
      _Pragma("GCC unroll 32") for (int i = 0; i < MR; i++) {                                           \
        if ((uint32_t)i >= np) break;                                                                   \
        __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[i][jb]), s);                                    \
        f = _mm512_min_ps(_mm512_max_ps(f, lo), hi);                                                    \
        __m512i y = _mm512_add_epi32(_mm512_cvtps_epi32(f), zp);                                        \
        __m128i y8 = _mm512_cvtepi32_epi8(y);   /* in range: the narrowing store to memory is slower */ \
        if (m == 0xffff) _mm_storeu_si128((__m128i *)(j->out + (size_t)(p0 + i) * q->cout + c0), y8);   \
        else _mm_mask_storeu_epi8(j->out + (size_t)(p0 + i) * q->cout + c0, m, y8);                     \
      }                                                                                                 \
    }                                                                                                   \
  }

TILE(6, 4, 0)
TILE(8, 3, 0)
TILE(12, 2, 0)
TILE(24, 1, 0)
TILE(6, 4, 1)
TILE(8, 3, 1)
TILE(12, 2, 1)
TILE(24, 1, 1)

static const uint32_t MR_OF[5] = {0, 24, 12, 8, 6};
typedef void (*tile_fn)(const job *, uint32_t, uint32_t, uint32_t);
static const tile_fn TILES[2][5] = {{0, tile_24x1_0, tile_12x2_0, tile_8x3_0, tile_6x4_0},
                                    {0, tile_24x1_1, tile_12x2_1, tile_8x3_1, tile_6x4_1}};

/* Items are numbered with the tile size of the group they fall in: the full groups (MR 6) and, when
 * nblk % 4 != 0, one last group with its own MR; both walk all pixels. */
typedef struct split {
  job j;
  uint32_t full_groups, full_tiles, rest_tiles, direct;
} split;

TARGET static void item_split(void *ctx, size_t k) {
  const split *s = (const split *)ctx;
  size_t nfull = (size_t)s->full_groups * s->full_tiles;
  const job *jp = &s->j;
  if (k < nfull) {   /* consecutive items share a pixel tile (its input stays in L1) */
    uint32_t p0 = (uint32_t)(k / s->full_groups) * 6, np = jp->npix - p0 < 6 ? jp->npix - p0 : 6;
    TILES[s->direct][4](jp, p0, np, (uint32_t)(k % s->full_groups) * 4);
    return;
  }
  k -= nfull;
  uint32_t b0 = s->full_groups * 4, nb = jp->q->nblk - b0, mr = MR_OF[nb], p0 = (uint32_t)k * mr;
  uint32_t np = jp->npix - p0 < mr ? jp->npix - p0 : mr;
  TILES[s->direct][nb](jp, p0, np, b0);
}

void et_xq_run(const et_xq *q, const int8_t *in, int8_t *out, uint8_t *img, pthreadpool_t pool) {
  /* a job shared with the pool's thread costs a wake-up and, on a busy machine, the risk of waiting
   * for a preempted worker: small ones (a ~64 KB copy, ~16K vpdpbusd: a few microseconds) stay here */
  uint32_t direct = q->kh == 1 && q->kw == 1 && q->cin == q->cin4 && !q->pt && !q->pl && !q->pb && !q->pr;
  if (!direct) {
    image_job ij = {q, in, img};
    pthreadpool_parallelize_1d(et_xq_image_bytes(q) < (64u << 10) ? 0 : pool, image_row, &ij, (size_t)q->n * q->ph, 0);
  }
  split s = {{q, direct ? (const uint8_t *)in : img, out, q->n * q->oh * q->ow}, q->nblk / 4, 0, 0, direct};
  s.full_tiles = (s.j.npix + 5) / 6;
  uint32_t rest = q->nblk % 4;
  s.rest_tiles = rest ? (s.j.npix + MR_OF[rest] - 1) / MR_OF[rest] : 0;
  size_t items = (size_t)s.full_groups * s.full_tiles + s.rest_tiles;
  uint64_t work = (uint64_t)s.j.npix * q->ksteps * q->nblk;
  pthreadpool_parallelize_1d(work < 16384 ? 0 : pool, item_split, &s, items, 0);
}
#else
int et_xq_available(void) { return 0; }
void et_xq_run(const et_xq *q, const int8_t *in, int8_t *out, uint8_t *img, pthreadpool_t pool) {
  (void)q; (void)in; (void)out; (void)img; (void)pool;
}
#endif
