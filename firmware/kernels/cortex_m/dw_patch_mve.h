/* Private to depthwise.c (one translation unit): the Helium patch path for 3x3 and 5x5 depthwise layers (depth
 * multiplier 1, strides 1 and 2): one byte gather of an input patch feeds several outputs' vmladav. */
#ifndef ET_CM_DW_PATCH_MVE_H
#define ET_CM_DW_PATCH_MVE_H

/* Per group of up to QDP_QMAX quads (4 channels each: Q, while their tables and planes stay within QDP_QUADS), band of
 * output rows and chunk of output columns, in the call's planned scratch:
 *  1. each quad's input rows, padded with -in_off (padded taps then add nothing: the input offset is folded into
 *     a per-channel constant bias + in_off sum(w)), as one "quad plane": pixel (r, j) of channel k at byte
 *     4 (r Wp + j) + k, copied from NHWC a word (4 channels) at a time (whole rows: one run of pixels, scattered
 *     by a per-call table of plane offsets);
 *  2. per channel (a record: weight vectors, G, table, constants), one asm loop over its quad's table of
 *     passes, built once per call: a pass computes 8 outputs from
 *     byte gathers of patches (`vldrb.u8 q, [ptr, G]`, G = 4 (dy Wp + dx) + k: 8-bit offsets, hence the
 *     chunks of columns) and vmladav against weight vectors held in Q registers (a tap's weight at its patch
 *     lane, 0 elsewhere):
 *       3x3 stride 1: a 4x4 patch gives a 2x2 block of outputs (4 vmladav), two blocks a pass (on an odd number
 *         of columns, where cheaper, the last column in 2x1 blocks, four a pass, by a second loop);
 *       3x3 stride 2: a 3x5 patch gives two outputs side by side, four patches a pass;
 *       5x5 stride 1: two 3x5 patches (rows 0-2, 3-5) give two outputs one above the other (4 vmladav);
 *       5x5 stride 2: two 3x5 patches (rows 0-2, 3-4) a output;
 *     the sums into two vectors (vmov two lanes at a time), the constant, the requantisation with the
 *     channel's multiplier and shift as scalars (vqrdmlah folds in the round-half-away correction, vrshl),
 *     narrows, output offset (and clamp), and a byte scatter store of the 8 outputs straight into NHWC
 *     (the pass's 16-bit offsets from the table). A pass's input pointers come from the table too, so blocks
 *     run as one stream over the band (narrow images fill the passes); an odd last row or column of blocks
 *     is moved back by one (its outputs overlap the previous block's: the same values stored twice), a last
 *     pass short of blocks repeats its last one. */
#define QDP_SCRATCH 6144   /* a band's quad plane and the pass table at most (planned scratch) */
#define QDP_QUADS 4608     /* quads' tables and planes (with the raster table) within which up to 4 quads run a call */
#define QDP_WPK 160        /* packed taps: 16 channels' 3x3 and a zero row, or a quad's 5x5 and a zero word */
#define QDP_QMAX 8         /* quads a call at most (small planes: fewer calls' worth of per-group work) */

/* per mode (3x3 s1, 3x3 s2, 5x5 s1, 5x5 s2): block rows, block columns, blocks a pass, pointers a block,
 * weight vectors, patch columns, patch rows */
static const uint8_t qdp_modes[4][7] = {{2, 2, 2, 1, 4, 4, 4}, {1, 2, 4, 1, 2, 5, 3}, {2, 1, 4, 2, 4, 5, 3},
                                        {1, 1, 8, 2, 2, 5, 3}};

typedef struct {
  int32_t mode, K, s, bh, bw, bpp, pb, nw, pw, ph;
  int32_t Wp, Hp, cow, nchunks, nb, nbands, passes, rec;  /* rec: bytes of a pass's table record */
  int32_t passes2;  /* 3x3 stride 1, odd columns: passes of 2x1 blocks down the last column (32-byte records) */
  int32_t half;     /* and then a half pass of its last 1 or 2 blocks (a 24-byte record) */
  int32_t mhalf;    /* 3x3 stride 1: an odd number of 2x2 blocks, the last in a half pass (a 20-byte record) */
  int32_t tab, rtab, plane;                               /* their bytes (rtab: see qdp_build) */
  int32_t Q, rsz;  /* quads (4 channels each: their own table and plane) a call; a channel record's bytes */
} qdp_geo;

static int64_t qdp_blocks(const qdp_geo *g, int32_t nb, int32_t cow) {
  return (int64_t)((nb + g->bh - 1) / g->bh) * ((cow + g->bw - 1) / g->bw);
}
/* the passes of a band: p1 of the mode's blocks (3x3 stride 1: mh, an odd last block in a half pass), p2 of the
 * second loop and h its half pass: 3x3 stride 1 on an odd number of columns takes 2x2 blocks on the others and 2x1
 * blocks down the last one where that costs fewer instructions (30 a pass, 18 a half pass of a 2x2 block, 33 a
 * second-loop pass, 19 its half pass of 1 or 2 blocks) than moving its last 2x2 blocks back; returns the table's
 * bytes */
static int64_t qdp_split(const qdp_geo *g, int32_t nb, int32_t cow, int64_t *p1, int64_t *p2, int64_t *h, int64_t *mh) {
  const int64_t B = qdp_blocks(g, nb, cow);
  const bool m0 = g->mode == 0;
  *p1 = m0 ? B / 2 : (B + g->bpp - 1) / g->bpp;
  *mh = m0 ? B & 1 : 0;
  *p2 = 0;
  *h = 0;
  if (m0 && (cow & 1)) {
    const int64_t nbr = (nb + 1) / 2, A = nbr * ((cow - 1) / 2), r = nbr & 3;
    const int64_t b = nbr / 4 + (r == 3), hh = r == 1 || r == 2;
    if (30 * (A / 2) + 18 * (A & 1) + 33 * b + 19 * hh < 30 * (B / 2) + 18 * (B & 1)) {
      *p1 = A / 2; *mh = A & 1; *p2 = b; *h = hh;
    }
  }
  return *p1 * g->rec + *mh * 20 + *p2 * 32 + *h * 24;
}

/* false where this path does not take the shapes (from shapes and int arguments only) */
static bool qdp_geo_of(const qconv *c, qdp_geo *g) {
  const int32_t K = c->KH, s = c->sh, O = c->y.c, OH = c->y.h, OW = c->y.w;
  if (!c->depthwise || c->opg != 1 || c->x.c != O || (K != 3 && K != 5) || c->KW != K || c->sw != s ||
      (s != 1 && s != 2) || c->dh != 1 || c->dw != 1 || c->ph < 0 || c->pw < 0 || c->x.sc != 1 || c->y.sc != 1 ||
      c->in_off < -127 || c->in_off > 128 || c->out_off < -255 || c->out_off > 255 || c->amin < -128 ||
      c->amax > 127 || c->amin > c->amax || O < 1 || c->x.w < 1 || c->x.h < 1)
    return false;
  const uint8_t *m = qdp_modes[(K == 5 ? 2 : 0) + (s == 2 ? 1 : 0)];
  g->mode = (K == 5 ? 2 : 0) + (s == 2 ? 1 : 0);
  g->K = K; g->s = s; g->bh = m[0]; g->bw = m[1]; g->bpp = m[2]; g->pb = m[3]; g->nw = m[4]; g->pw = m[5];
  g->ph = m[6];
  if (OH < g->bh || OW < g->bw) return false;
  g->rec = 4 * g->pb * g->bpp + 16;
  /* a patch's last byte 4 ((ph - 1) Wp + pw - 1) + 3 within the gather's 8-bit offsets */
  const int32_t wmax = (63 - (g->pw - 1)) / (g->ph - 1), cmax = (wmax - K) / s + 1;
  g->nchunks = (OW + cmax - 1) / cmax;
  g->cow = (OW + g->nchunks - 1) / g->nchunks;
  g->Wp = (g->cow - 1) * s + K;
  /* the tallest band within QDP_SCRATCH whose output offsets fit 16 bits, then bands of equal height */
  const int64_t ysh = c->y.sh, ysw = c->y.sw;
  int32_t nb = OH;
  for (;; nb--) {
    if (nb < g->bh) return false;
    const int64_t hp = (int64_t)(nb - 1) * s + K;
    int64_t p1, p2, h, mh;
    const int64_t bytes = 4 * (int64_t)g->Wp * (hp + 1) + 16 + qdp_split(g, nb, g->cow, &p1, &p2, &h, &mh) +
                          (g->nchunks == 1 ? 4 * (hp < c->x.h ? hp : c->x.h) * (int64_t)c->x.w + 16 : 0);
    if (bytes <= QDP_SCRATCH && (nb - 1) * ysh + (g->cow - 1) * ysw <= 65535) break;
  }
  g->nbands = (OH + nb - 1) / nb;
  g->nb = (OH + g->nbands - 1) / g->nbands;
  if (g->nb < g->bh) g->nb = g->bh;
  g->Hp = (g->nb - 1) * s + K;
  int64_t p1, p2, h, mh;
  g->tab = (int32_t)((qdp_split(g, g->nb, g->cow, &p1, &p2, &h, &mh) + 15) & ~15);
  g->passes = (int32_t)p1;
  g->passes2 = (int32_t)p2;
  g->half = (int32_t)h;
  g->mhalf = (int32_t)mh;
  g->rtab = g->nchunks == 1 ? (4 * (g->Hp < c->x.h ? g->Hp : c->x.h) * c->x.w + 16 + 15) & ~15 : 0;
  g->plane = (4 * g->Wp * (g->Hp + 1) + 16 + 15) & ~15;   /* a row of slack: 5x5 stride 2 reads one row past */
  g->Q = QDP_QMAX;
  while (g->Q > 1 && (4 * (g->Q - 1) >= O || g->Q * (g->tab + g->plane) + g->rtab > QDP_QUADS)) g->Q >>= 1;
  g->rsz = 16 * (g->nw + 3);
  return true;
}

/* Planned scratch of the patch path (ET_SCRATCH; kernel_scratch.py mirrors it): 4 Q channel records, the packed
 * taps, the raster table (one chunk of columns: a plane offset per interior pixel), Q pass tables and quad planes */
static uint32_t qdp_scratch(const qconv *c) {
  qdp_geo g;
  return qdp_geo_of(c, &g) ? (uint32_t)(4 * g.Q * g.rsz + QDP_WPK + g.rtab + g.Q * (g.tab + g.plane)) : 0u;
}

#include "dw_patch_asm_mve.h"    /* the pass loops */
#include "dw_patch_plane_mve.h"  /* pass tables and quad planes */

/* weight vector n of a mode: lane (dy, dx) of the patch <- tap (dy + rs, dx + cs) of the packed taps (byte 4 t), or
 * the zero word after them (4 T) where there is none */
#define QO(t) (4 * (t))
#define Z3 36
#define Z5 100
static const uint8_t qdp_woff[4][4][16] = {
    {{QO(0), QO(1), QO(2), Z3, QO(3), QO(4), QO(5), Z3, QO(6), QO(7), QO(8), Z3, Z3, Z3, Z3, Z3},
     {Z3, QO(0), QO(1), QO(2), Z3, QO(3), QO(4), QO(5), Z3, QO(6), QO(7), QO(8), Z3, Z3, Z3, Z3},
     {Z3, Z3, Z3, Z3, QO(0), QO(1), QO(2), Z3, QO(3), QO(4), QO(5), Z3, QO(6), QO(7), QO(8), Z3},
     {Z3, Z3, Z3, Z3, Z3, QO(0), QO(1), QO(2), Z3, QO(3), QO(4), QO(5), Z3, QO(6), QO(7), QO(8)}},
    {{QO(0), QO(1), QO(2), Z3, Z3, QO(3), QO(4), QO(5), Z3, Z3, QO(6), QO(7), QO(8), Z3, Z3, Z3},
     {Z3, Z3, QO(0), QO(1), QO(2), Z3, Z3, QO(3), QO(4), QO(5), Z3, Z3, QO(6), QO(7), QO(8), Z3}},
    {{QO(0), QO(1), QO(2), QO(3), QO(4), QO(5), QO(6), QO(7), QO(8), QO(9), QO(10), QO(11), QO(12), QO(13), QO(14), Z5},
     {Z5, Z5, Z5, Z5, Z5, QO(0), QO(1), QO(2), QO(3), QO(4), QO(5), QO(6), QO(7), QO(8), QO(9), Z5},
     {QO(15), QO(16), QO(17), QO(18), QO(19), QO(20), QO(21), QO(22), QO(23), QO(24), Z5, Z5, Z5, Z5, Z5, Z5},
     {QO(10), QO(11), QO(12), QO(13), QO(14), QO(15), QO(16), QO(17), QO(18), QO(19), QO(20), QO(21), QO(22), QO(23),
      QO(24), Z5}},
    {{QO(0), QO(1), QO(2), QO(3), QO(4), QO(5), QO(6), QO(7), QO(8), QO(9), QO(10), QO(11), QO(12), QO(13), QO(14), Z5},
     {QO(15), QO(16), QO(17), QO(18), QO(19), QO(20), QO(21), QO(22), QO(23), QO(24), Z5, Z5, Z5, Z5, Z5, Z5}}};
#undef QO
#undef Z3
#undef Z5
/* a patch lane's column and row: 4x4 (3x3 stride 1), 3x5 (the others; lane 15 unused: offset 0) */
static const uint8_t qdp_gdx[2][16] = {{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3},
                                       {0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0}};
static const uint8_t qdp_gdy[2][16] = {{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3},
                                       {0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 0}};

/* cm_vec_requant_ok for every channel, four at a time (a kept call checks once, at method load) */
static bool qdp_requant_ok(const qconv *c) {
  const int32_t O = c->y.c;
  for (int32_t oc = 0; oc < O; oc += 4) {
    const mve_pred16_t p = vctp32q((uint32_t)(O - oc));
    const int32x4_t m = vld1q_z_s32(c->mult + oc, p), sh = vld1q_z_s32(c->shift + oc, p);
    if ((vcmpleq_n_s32(m, 0) | vcmpgtq_n_s32(sh, -1) | vcmpltq_n_s32(sh, -31)) & p) return false;
  }
  return true;
}

/* 3x3: the weight vectors of the channel records of `quads` quads (rsz bytes apart; whole quads: past the
 * live channels the packed taps are 0) from 16 channels' packed taps wk, and their taps' sums sk. v: the nw
 * offset vectors (w16); G is written once a call. In asm: 6 + 2 nw instructions a channel */
#if QDP_ASM
#define QDP_RW(n, o) "vldrb.u8 q6, [r1, q" #n "]\n\tvstrb.8 q6, [r0, #" #o "]\n\t"
/* the first vector stored last, its post-increment the record size (16 (nw + 3): 112 or 80, within vstrb's 7 bits) */
#define QDP_RC(wv, rs)                                                                                  \
  "vldrb.u8 q5, [r1, q0]\n\t"                                                                          \
  "vaddv.s8 r2, q5\n\t"                                                                                \
  "str r2, [r3], #4\n\t" wv                                                                            \
  "adds r1, r1, #1\n\t"                                                                                \
  "vstrb.8 q5, [r0], #" rs "\n\t"
#define QDP_RQ(wv, rs) QDP_RC(wv, rs) QDP_RC(wv, rs) QDP_RC(wv, rs) QDP_RC(wv, rs)
#endif
__attribute__((noinline)) static void qdp_recs3(int8_t *r, const int8_t *wk, const uint8x16_t *v, int32_t *sk,
                                                int32_t quads, int32_t rsz, int32_t nw) {
#if QDP_ASM
  register int8_t *r0 __asm__("r0") = r;
  register const int8_t *r1 __asm__("r1") = wk;
  register int32_t *r3 __asm__("r3") = sk;
  register int32_t r4 __asm__("r4") = quads, r5 __asm__("r5") = rsz;
  if (nw == 4)
    __asm__ volatile(
        "vldrw.u32 q0, [%[v]]\n\tvldrw.u32 q1, [%[v], #16]\n\tvldrw.u32 q2, [%[v], #32]\n\t"
        "vldrw.u32 q3, [%[v], #48]\n"
        "1:\n\t" QDP_RQ(QDP_RW(1, 16) QDP_RW(2, 32) QDP_RW(3, 48), "112") "subs r4, r4, #1\n\tbne 1b"
        : "+r"(r0), "+r"(r1), "+r"(r3), "+r"(r4)
        : [v] "r"(v), "r"(r5)
        : "r2", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d12", "d13", "d14",
          "d15", "memory", "cc");
  else
    __asm__ volatile(
        "vldrw.u32 q0, [%[v]]\n\tvldrw.u32 q1, [%[v], #16]\n"
        "1:\n\t" QDP_RQ(QDP_RW(1, 16), "80") "subs r4, r4, #1\n\tbne 1b"
        : "+r"(r0), "+r"(r1), "+r"(r3), "+r"(r4)
        : [v] "r"(v), "r"(r5)
        : "r2", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d12", "d13", "d14",
          "d15", "memory", "cc");
#else
  for (int32_t k = 0; k < 4 * quads; k++, r += rsz) {
    const int8x16_t w0 = vldrbq_gather_offset_s8(wk + k, v[0]);
    for (int32_t n = 0; n < nw; n++) vst1q_s8(r + 16 * n, vldrbq_gather_offset_s8(wk + k, v[n]));
    sk[k] = vaddvq_s8(w0);
  }
#endif
}
#ifdef QDP_RW
#undef QDP_RW
#undef QDP_RC
#undef QDP_RQ
#endif

/* the records' mult, shift and constant bias + io sum(w) (words 1-3 from r), n channels (records rsz bytes apart,
 * four a scatter store; bia NULL: no bias). In asm a tail-predicated loop: 10 instructions per 4 channels */
static const int32_t qdp_zero[4 * QDP_QMAX] __attribute__((aligned(16)));
__attribute__((noinline)) static void qdp_consts(uint32_t *r, int32_t rsz, const int32_t *mul, const int32_t *shf,
                                                 const int32_t *bia, const int32_t *sums, uint32_t io, int32_t n) {
  if (!bia) bia = qdp_zero;   /* n <= 4 QDP_QMAX */
  const uint32x4_t ra = vaddq_n_u32(vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)rsz), (uint32_t)(uintptr_t)r);
#if QDP_ASM
  register const int32_t *r0 __asm__("r0") = sums;
  register const int32_t *r1 __asm__("r1") = bia;
  register const int32_t *r2 __asm__("r2") = mul;
  register const int32_t *r3 __asm__("r3") = shf;
  register int32_t r4 __asm__("r4") = n, r5 __asm__("r5") = 4 * rsz;
  register uint32_t r6 __asm__("r6") = io;
  __asm__ volatile(
      "vldrw.u32 q4, [%[ra]]\n\t"
      "dlstp.32 lr, r4\n"
      "1:\n\t"
      "vldrw.u32 q0, [r0], #16\n\t"
      "vldrw.u32 q1, [r1], #16\n\t"
      "vmla.u32 q1, q0, r6\n\t"
      "vldrw.u32 q2, [r2], #16\n\t"
      "vldrw.u32 q3, [r3], #16\n\t"
      "vstrw.32 q2, [q4, #4]\n\t"
      "vstrw.32 q3, [q4, #8]\n\t"
      "vstrw.32 q1, [q4, #12]\n\t"
      "vadd.i32 q4, q4, r5\n\t"
      "letp lr, 1b"
      : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3)
      : "r"(r4), "r"(r5), "r"(r6), [ra] "r"(&ra), "m"(ra)
      : "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "memory");
#else
  for (uint32x4_t a = ra; n > 0; n -= 4, mul += 4, shf += 4, sums += 4, bia += 4) {
    const mve_pred16_t p = vctp32q((uint32_t)n);
    const uint32x4_t cst = vmlaq_n_u32(vld1q_z_u32((const uint32_t *)bia, p), vld1q_z_u32((const uint32_t *)sums, p), io);
    vstrwq_scatter_base_p_u32(a, 4, vld1q_z_u32((const uint32_t *)mul, p), p);
    vstrwq_scatter_base_p_u32(a, 8, vld1q_z_u32((const uint32_t *)shf, p), p);
    vstrwq_scatter_base_p_u32(a, 12, cst, p);
    a = vaddq_n_u32(a, (uint32_t)(4 * rsz));
  }
#endif
}

/* tiny mode's ninth output of n channels: sum + constant at w (records rsz bytes apart), requantised four channels
 * at a time with their (checked) multipliers and shifts as in cm_requant_v, offset, clamped, stored at y. In asm:
 * a tail-predicated loop of 14 instructions */
__attribute__((noinline)) static void qdp_ninth(const int8_t *w, int32_t rsz, int32_t n, const int32_t *mul,
                                                const int32_t *shf, const qconv *c, int8_t *y) {
  const uint32x4_t ro = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)rsz);
  const int32x4_t lo = vdupq_n_s32(c->amin), hi = vdupq_n_s32(c->amax);
#if QDP_ASM
  register const int8_t *r0 __asm__("r0") = w;
  register const int32_t *r1 __asm__("r1") = mul, *r2 __asm__("r2") = shf;
  register int8_t *r3 __asm__("r3") = y;
  register int32_t r4 __asm__("r4") = n, r5 __asm__("r5") = 4 * rsz, r6 __asm__("r6") = c->out_off;
  __asm__ volatile(
      "vldrw.u32 q4, [%[ro]]\n\t"
      "vldrw.u32 q5, [%[lo]]\n\t"
      "vldrw.u32 q6, [%[hi]]\n\t"
      "dlstp.32 lr, r4\n"
      "1:\n\t"
      "vldrw.u32 q0, [r0, q4]\n\t"
      "vldrw.u32 q1, [r1], #16\n\t"
      "vldrw.u32 q2, [r2], #16\n\t"
      "vshr.s32 q3, q0, #31\n\t"
      "vqrdmulh.s32 q0, q0, q1\n\t"
      "vadd.i32 q0, q0, q3\n\t"
      "vrshl.s32 q0, q0, q2\n\t"
      "vqadd.s32 q0, q0, r6\n\t"
      "vmax.s32 q0, q0, q5\n\t"
      "vmin.s32 q0, q0, q6\n\t"
      "vstrb.32 q0, [r3], #4\n\t"
      "add r0, r0, r5\n\t"
      "letp lr, 1b"
      : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3)
      : "r"(r4), "r"(r5), "r"(r6), [ro] "r"(&ro), [lo] "r"(&lo), [hi] "r"(&hi), "m"(ro), "m"(lo), "m"(hi)
      : "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d12", "d13", "memory");
#else
  for (int32_t k = 0; k < n; k += 4, w += 4 * rsz) {
    const mve_pred16_t p = vctp32q((uint32_t)(n - k));
    const int32x4_t acc = vldrwq_gather_offset_z_s32((const int32_t *)(const void *)w, ro, p);
    int32x4_t v = cm_requant_v(acc, vld1q_z_s32(mul + k, p), vld1q_z_s32(shf + k, p));
    v = vminq_s32(vmaxq_s32(vqaddq_n_s32(v, c->out_off), lo), hi);
    vstrbq_p_s32(y + k, v, p);
  }
#endif
}

/* false: not this path (nothing written). checked: qdp_requant_ok(c) is known true. At O2 at most: GCC 12's
 * -O3 loop peeling meets an internal compiler error here (trunc_int_for_mode, fwprop1) */
__attribute__((noinline, optimize("O2"))) static bool qdw_patch(const qconv *c, const qdp_geo *gp, const int8_t *x, int8_t *y,
                                                bool checked) {
  if (!QDP_ASM || !c->scr || (!checked && !qdp_requant_ok(c))) return false;
  const qdp_geo *const g = gp;   /* not a copy (a memcpy a call) */
  const int32_t O = c->y.c, K = g->K, T = K * K, s = g->s, nw = g->nw;
  const int32_t Q = g->Q, rsz = g->rsz, qstep = g->tab + g->plane;
  int8_t *const recs = c->scr, *const wpk = c->scr + 4 * Q * rsz;   /* qdp_scratch's layout */
  uint32_t *const rtab = (uint32_t *)(void *)(wpk + QDP_WPK);
  int8_t *const tab0 = wpk + QDP_WPK + g->rtab, *const plane = tab0 + g->tab;   /* quad i's: + i qstep */
  if (g->nchunks == 1) {   /* one chunk: the planes' padding once for the call */
    const int8x16_t vp = vdupq_n_s8((int8_t)-c->in_off);
    for (int8_t *p = plane, *const e = plane + Q * qstep; p < e; p += qstep)
      for (int8_t *d = p, *const de = p + g->plane; d < de; d += 16) vst1q_s8(d, vp);
  }
  /* 3x3 outputs of a 3x3 kernel: the tiny mode (one pass a channel, patches covering the outputs exactly) */
  const bool tiny = K == 3 && c->y.h == 3 && c->y.w == 3 && g->nbands == 1 && g->nchunks == 1 && g->Wp == (s == 1 ? 5 : 7);
  if (tiny) {   /* a quad's table: its patches' 3 pointers (see QDP_T31), then the 8 outputs' offsets in the lanes
                  of the pass's store (28 bytes, within g->tab: 48 or 64) */
    static const uint8_t at[2][8] = {{0, 2, 3, 6, 1, 5, 4, 7}, {0, 6, 3, 2, 1, 7, 4, 5}};   /* 3 i + j */
    const uint32_t d2 = s == 1 ? 4u : 56u, d3 = s == 1 ? 20u : 112u;
    for (int32_t i = 0; i < Q; i++) {
      uint32_t *t = (uint32_t *)(void *)(tab0 + i * qstep);
      t[0] = (uint32_t)(uintptr_t)(plane + i * qstep);
      t[1] = t[0] + d2;
      t[2] = t[0] + d3;
      uint16_t *o = (uint16_t *)(void *)(t + 3);
      for (int32_t l = 0; l < 8; l++) {
        const int32_t ij = at[s - 1][l];
        o[l] = (uint16_t)((ij / 3) * c->y.sh + (ij % 3) * c->y.sw);
      }
    }
  } else {
    qdp_table(g, c, plane, tab0);
  }
  if (!tiny && Q > 1) {   /* the other quads' tables: the same with their plane's pointers (+ i qstep) */
    const int32_t np = g->pb * g->bpp, rw = np + 4, P = rw == 6 ? 12 : rw;   /* P: words a period of the pattern */
    const int32_t w1 = g->passes * rw, w1m = w1 + 5 * g->mhalf;   /* then the mode's half pass: 1 + 4 words */
    const int32_t w2 = w1m + 8 * g->passes2, w3 = w2 + 6 * g->half;   /* the second loop's records: 4 + 4, its half: 2 + 4 */
    const uint32x4_t lane = vidupq_n_u32(0, 1);
    uint32x4_t m1[5], m2[2];   /* 1 in the pointer words of the pattern (rw: 6, 8, 12 or 20 words) */
    for (int32_t j = 0; j < P / 4; j++) {
      const uint32x4_t wi = vaddq_n_u32(lane, (uint32_t)(4 * j));
      const uint32x4_t r = vpselq_u32(vsubq_n_u32(wi, (uint32_t)rw), wi, vcmpcsq_n_u32(wi, (uint32_t)rw));
      m1[j] = vpselq_u32(vdupq_n_u32(1), vdupq_n_u32(0), vcmphiq_u32(vdupq_n_u32((uint32_t)np), r));
    }
    m2[0] = vdupq_n_u32(1); m2[1] = vdupq_n_u32(0);
    for (int32_t i = 1; i < Q; i++) {
      const uint32_t d = (uint32_t)(i * qstep);
      const uint32_t *t = (const uint32_t *)(const void *)tab0;
      uint32_t *u = (uint32_t *)(void *)(tab0 + i * qstep);
      /* whole vectors: past w1 (at most 3 words, within the 16-byte rounded table) the loops below rewrite */
      for (int32_t w = 0, j = 0; w < w1; w += 4, j = j + 1 == P / 4 ? 0 : j + 1)
        vst1q_u32(u + w, vmlaq_n_u32(vld1q_u32(t + w), m1[j], d));
      for (int32_t w = w1; w < w1m; w++) u[w] = t[w] + (w == w1 ? d : 0u);
      for (int32_t w = w1m, j = 0; w < w2; w += 4, j ^= 1) vst1q_u32(u + w, vmlaq_n_u32(vld1q_u32(t + w), m2[j], d));
      for (int32_t w = w2; w < w3; w++) u[w] = t[w] + (w < w2 + 2 ? d : 0u);
    }
  }
  /* weight vector n's lanes: byte offsets of their taps in the packed taps (4 a tap), 4 T (the zero word after
   * them) where the lane holds no tap; G: a patch lane's plane offset dy Wp + dx, times 4 */
  uint8x16_t woff[4];
  for (int32_t n = 0; n < nw; n++) woff[n] = vld1q_u8(qdp_woff[g->mode][n]);
  uint8x16_t w16[5];   /* 3x3: the same lanes in the 16-channel packing (row t + 1 = tap t, row 0 = 0) */
  for (int32_t n = 0; n < nw; n++)
    w16[n] = vpselq_u8(vdupq_n_u8(0), vaddq_n_u8(vmulq_n_u8(woff[n], 4), 16), vcmpeqq_n_u8(woff[n], 36));
  const uint8x16_t goff = vmulq_n_u8(vmlaq_n_u8(vld1q_u8(qdp_gdx[g->mode == 0 ? 0 : 1]), vld1q_u8(qdp_gdy[g->mode == 0 ? 0 : 1]),
                                                (uint8_t)g->Wp), 4);
  w16[4] = goff;
  {   /* the records' G (goff + the channel's place in its quad), table, k and passes (the other words: per channel) */
    const uint32x4_t e0 = vsetq_lane_u32(1u, vdupq_n_u32(0), 0);
    uint32x4_t kv = vsetq_lane_u32(tiny ? 1u : g->mode == 0 ? (uint32_t)(2 * g->passes + g->mhalf) : (uint32_t)g->passes,
                                   vsetq_lane_u32(tiny ? 0u : (uint32_t)(2 * g->passes2 + g->half),
                                   vdupq_n_u32(0), 2), 1);
    int8_t *r = recs + 16 * nw;
    for (int32_t i = 0; i < Q; i++) {
      const uint32_t tq = (uint32_t)(uintptr_t)(tab0 + i * qstep);
      for (int32_t k = 0; k < 4; k++, r += rsz, kv = vaddq_u32(kv, e0)) {
        vst1q_u8((uint8_t *)r, vaddq_n_u8(goff, (uint8_t)k));
        ((uint32_t *)(void *)r)[4] = tq;
        vst1q_u32((uint32_t *)(void *)r + 8, kv);
      }
    }
  }
  const uint32_t io = (uint32_t)c->in_off;
  const int8x16_t vpad = vdupq_n_s8((int8_t)-c->in_off);
  const bool sat8 = c->amin == -128 && c->amax == 127;
  void (*const run)(qdp_blk *) = tiny ? (s == 1 ? (sat8 ? qdp_t31s : qdp_t31c) : (sat8 ? qdp_t32s : qdp_t32c))
                                 : g->mode == 0 ? (sat8 ? qdp_33s : qdp_33c) : g->mode == 1 ? (sat8 ? qdp_32s : qdp_32c)
                                 : g->mode == 2 ? (sat8 ? qdp_51s : qdp_51c) : (sat8 ? qdp_52s : qdp_52c);
  qdp_blk blk;
  blk.oo = c->out_off + (sat8 ? 0 : 128);
  blk.k1 = 127 - c->amax; blk.k2 = 127 - c->amax + c->amin + 128; blk.amin = c->amin;
  const bool aligned = (O & 3) == 0 && c->x.sw == O && !(((uintptr_t)x | (uintptr_t)c->x.sh | (uintptr_t)c->x.sn) & 3u);
  const bool wal = (O & 3) == 0 && !((uintptr_t)c->w & 3u);
  const int8_t *const wt = c->w;
  const int32_t *const bia = c->bias, *const mul = c->mult, *const shf = c->shift;
  const int32_t OH = c->y.h, OW = c->y.w, W = c->x.w;
  qdp_src src;
  src.g = g; src.plane = plane; src.qstep = qstep; src.H = c->x.h; src.W = W; src.xsh = c->x.sh; src.xsw = c->x.sw;
  src.aligned = aligned; src.pcols = g->nchunks > 1; src.prows = g->nbands > 1 || g->nchunks > 1; src.vpad = vpad;
  src.rtab = NULL;
  if (!src.pcols) {   /* one chunk (padding filled above): whole rows of NHWC pixels are one run */
    const int32_t cw = W - (-c->pw) < g->Wp ? W + c->pw : g->Wp;
    if (aligned && cw - c->pw == W && c->x.sh == (ptrdiff_t)W * c->x.sw) {
      /* its rows by whole vectors (the next row's overwrite the excess, the last's go into the slack) */
      uint32_t *rt = rtab, o = 0;
      const uint32_t po = 4u * (uint32_t)g->Wp;
      const uint32x4_t base = vidupq_n_u32(0, 4);
      int32_t r = (g->rtab - 16) / (4 * W);
      if (W <= 4)
        for (; r > 0; r--, rt += W, o += po) vst1q_u32(rt, vaddq_n_u32(base, o));
      else if (W <= 8)
        for (; r > 0; r--, rt += W, o += po) {
          vst1q_u32(rt, vaddq_n_u32(base, o));
          vst1q_u32(rt + 4, vaddq_n_u32(base, o + 16));
        }
      else
        for (; r > 0; r--, rt += W, o += po)
          for (int32_t j = 0; j < W; j += 4) vst1q_u32(rt + j, vaddq_n_u32(base, o + 4u * (uint32_t)j));
      src.rtab = rtab;
    }
  }
  for (int32_t c0 = 0; c0 < O; c0 += 4 * Q) {
    const int32_t live = O - c0 < 4 * Q ? O - c0 : 4 * Q, quads = (live + 3) / 4;
    int32_t sums[4 * QDP_QMAX] __attribute__((aligned(16)));
    for (int32_t h = 0; K == 3 && h < live; h += 16) {   /* 16 channels' taps a vector: row t + 1 = tap t, row 0 = 0 */
      vst1q_s8(wpk, vdupq_n_s8(0));
      const int8_t *w = wt + c0 + h;
      if (c0 + h + 16 <= O) {   /* 16 channels within the weights: unpredicated loads (lanes past live unused) */
        for (int32_t t = 0; t < 9; t++, w += O) vst1q_s8(wpk + 16 * (t + 1), vld1q_s8(w));
      } else {
        const mve_pred16_t pl = vctp8q((uint32_t)(live - h));
        for (int32_t t = 0; t < 9; t++, w += O) vst1q_s8(wpk + 16 * (t + 1), vld1q_z_s8(w, pl));
      }
      qdp_recs3(recs + h * rsz, wpk, w16, sums + h, (live - h + 3) / 4 < 4 ? (live - h + 3) / 4 : 4, rsz, nw);
    }
    for (int32_t qd = 0; K == 5 && qd < quads; qd++) {
      const int32_t q0 = c0 + 4 * qd, ql = live - 4 * qd < 4 ? live - 4 * qd : 4;
      int8_t *const rq = recs + 4 * qd * rsz;
      {   /* packed taps: wpk[4 t + k] = channel q0 + k's tap t, then a zero word */
        if (wal)
          for (int32_t t = 0; t < T; t++)
            ((uint32_t *)(void *)wpk)[t] = *(const uint32_t *)(const void *)(wt + (ptrdiff_t)t * O + q0);
        else
          for (int32_t t = 0; t < T; t++)
            for (int32_t k = 0; k < 4; k++) wpk[4 * t + k] = k < ql ? wt[(ptrdiff_t)t * O + q0 + k] : 0;
        ((uint32_t *)(void *)wpk)[T] = 0;
        /* weight vectors and G per channel */
        int32_t *const sq = sums + 4 * qd;
        if (nw == 4)
          for (int32_t k = 0; k < ql; k++) {
            int8_t *r = rq + k * rsz;
            const int8x16_t w0 = vldrbq_gather_offset_s8(wpk + k, woff[0]), w2 = vldrbq_gather_offset_s8(wpk + k, woff[2]);
            vst1q_s8(r, w0); vst1q_s8(r + 16, vldrbq_gather_offset_s8(wpk + k, woff[1]));
            vst1q_s8(r + 32, w2); vst1q_s8(r + 48, vldrbq_gather_offset_s8(wpk + k, woff[3]));
            sq[k] = vaddvq_s8(w0) + vaddvq_s8(w2);
          }
        else
          for (int32_t k = 0; k < ql; k++) {
            int8_t *r = rq + k * rsz;
            const int8x16_t w0 = vldrbq_gather_offset_s8(wpk + k, woff[0]), w1 = vldrbq_gather_offset_s8(wpk + k, woff[1]);
            vst1q_s8(r, w0); vst1q_s8(r + 16, w1);
            sq[k] = vaddvq_s8(w0) + vaddvq_s8(w1);
          }
      }
    }
    qdp_consts((uint32_t *)(void *)(recs + 16 * (nw + 1)), rsz, mul + c0, shf + c0, bia ? bia + c0 : NULL, sums, io,
               live);
    src.live = live;
    void (*const bld)(const qdp_src *, int32_t, int32_t, int32_t) =
        src.rtab && !src.prows && quads >= 2 && (quads & 1) == 0 && live == 4 * quads ? qdp_build_r : qdp_build;
    for (int32_t n = 0; n < c->y.n; n++) {
      src.xn = x + n * c->x.sn + c0;
      for (int32_t bi = 0; bi < g->nbands; bi++) {
        const int32_t oh0 = bi + 1 == g->nbands ? OH - g->nb : bi * g->nb;
        for (int32_t ci = 0; ci < g->nchunks; ci++) {
          const int32_t ow0 = ci + 1 == g->nchunks ? OW - g->cow : ci * g->cow;
          bld(&src, quads, oh0 * s - c->ph, ow0 * s - c->pw);
          blk.rec = recs; blk.nch = live;
          blk.y = y + n * c->y.sn + (ptrdiff_t)oh0 * c->y.sh + (ptrdiff_t)ow0 * c->y.sw + c0;
          run(&blk);
          if (tiny)   /* the ninth output, (2, 2): its sums and constants in the records' word 7 */
            qdp_ninth(recs + 16 * (nw + 1) + 28, rsz, live, mul + c0, shf + c0, c, blk.y + 2 * c->y.sh + 2 * c->y.sw);
        }
      }
    }
  }
  return true;
}

#endif
