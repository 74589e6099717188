/* Private to depthwise.c (one translation unit): the Helium patch path for 3x3 and 5x5 depthwise layers (depth
 * multiplier 1, strides 1 and 2): one byte gather of an input patch feeds several outputs' vmladav. */
#ifndef ET_CM_DW_PATCH_MVE_H
#define ET_CM_DW_PATCH_MVE_H

/* Per group of 4 channels, band of output rows and chunk of output columns, in the call's planned scratch:
 *  1. the group's input rows, padded with -in_off (padded taps then add nothing: the input offset is folded into
 *     a per-channel constant bias + in_off sum(w)), as one "quad plane": pixel (r, j) of channel k at byte
 *     4 (r Wp + j) + k, copied from NHWC a word (4 channels) at a time;
 *  2. per channel, one asm loop over a table of passes built once per call: a pass computes 8 outputs from
 *     byte gathers of patches (`vldrb.u8 q, [ptr, G]`, G = 4 (dy Wp + dx) + k: 8-bit offsets, hence the
 *     chunks of columns) and vmladav against weight vectors held in Q registers (a tap's weight at its patch
 *     lane, 0 elsewhere):
 *       3x3 stride 1: a 4x4 patch gives a 2x2 block of outputs (4 vmladav), two blocks a pass;
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

/* per mode (3x3 s1, 3x3 s2, 5x5 s1, 5x5 s2): block rows, block columns, blocks a pass, pointers a block,
 * weight vectors, patch columns, patch rows */
static const uint8_t qdp_modes[4][7] = {{2, 2, 2, 1, 4, 4, 4}, {1, 2, 4, 1, 2, 5, 3}, {2, 1, 4, 2, 4, 5, 3},
                                        {1, 1, 8, 2, 2, 5, 3}};

typedef struct {
  int32_t mode, K, s, bh, bw, bpp, pb, nw, pw, ph;
  int32_t Wp, Hp, cow, nchunks, nb, nbands, passes, rec;  /* rec: bytes of a pass's table record */
  int32_t tab, rtab, plane;                               /* their bytes (rtab: see qdp_build) */
  int32_t Q, rsz;  /* quads (4 channels each: their own table and plane) a call; a channel record's bytes */
} qdp_geo;

static int64_t qdp_passes(const qdp_geo *g, int32_t nb, int32_t cow) {
  const int64_t blocks = (int64_t)((nb + g->bh - 1) / g->bh) * ((cow + g->bw - 1) / g->bw);
  return (blocks + g->bpp - 1) / g->bpp;
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
    const int64_t bytes = 4 * (int64_t)g->Wp * (hp + 1) + 16 + qdp_passes(g, nb, g->cow) * g->rec +
                          (g->nchunks == 1 ? 4 * (hp < c->x.h ? hp : c->x.h) * (int64_t)c->x.w + 16 : 0);
    if (bytes <= QDP_SCRATCH && (nb - 1) * ysh + (g->cow - 1) * ysw <= 65535) break;
  }
  g->nbands = (OH + nb - 1) / nb;
  g->nb = (OH + g->nbands - 1) / g->nbands;
  if (g->nb < g->bh) g->nb = g->bh;
  g->Hp = (g->nb - 1) * s + K;
  g->passes = (int32_t)qdp_passes(g, g->nb, g->cow);
  g->tab = (g->passes * g->rec + 15) & ~15;
  g->rtab = g->nchunks == 1 ? (4 * (g->Hp < c->x.h ? g->Hp : c->x.h) * c->x.w + 16 + 15) & ~15 : 0;
  g->plane = (4 * g->Wp * (g->Hp + 1) + 16 + 15) & ~15;   /* a row of slack: 5x5 stride 2 reads one row past */
  g->Q = 4;
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

typedef struct {
  const int8_t *rec;  /*  0: the next channel's record (see QDP_RUNS) */
  int32_t unused[2];  /*  4 */
  int32_t nch;        /* 12: channels left */
  int8_t *y;          /* 16: the group's first output byte of the band and chunk */
  int32_t k1, k2, amin; /* 20: clamp: 127 - amax, k1 + amin + 128 (bytes), amin */
  int32_t oo;         /* 32: output offset (+128 with a clamp) */
} qdp_blk;
_Static_assert(offsetof(qdp_blk, y) == 16 && offsetof(qdp_blk, amin) == 28 && offsetof(qdp_blk, oo) == 32,
               "qdp asm offsets");

#ifdef __OPTIMIZE__  /* r7 is the frame pointer at -O0 */
#define QDP_ASM 1
/* registers: q0-q3 weights, q4 G, q5 the patch, q6 q7 the sums; r0 r2 sums, r1 r3 pointers, r4 the table,
 * r5 mult, r6 shift, r7 constant, r8 output offset (+128 with a clamp), r9 output, r10-r12 clamp, [sp] blk */
#define QDP_G(p) "vldrb.u8 q5, [" p ", q4]\n\t"
#define QDP_PTRS "ldrd r1, r3, [r4], #8\n\t"
/* 3x3 stride 1: a 2x2 block into X (lanes 0 2 = top row, 1 3 = bottom row) */
#define QDP_B33(p, X)                                                                                   \
  QDP_G(p)                                                                                              \
  "vmladav.s8 r0, q5, q0\n\t"                                                                           \
  "vmladav.s8 r2, q5, q1\n\t"                                                                           \
  "vmov " X "[2], " X "[0], r0, r2\n\t"                                                                 \
  "vmladav.s8 r0, q5, q2\n\t"                                                                           \
  "vmladav.s8 r2, q5, q3\n\t"                                                                           \
  "vmov " X "[3], " X "[1], r0, r2\n\t"
#define QDP_P33 QDP_PTRS QDP_B33("r1", "q6") QDP_B33("r3", "q7")
/* 3x3 stride 2: two outputs side by side into lanes h, h + 2 */
#define QDP_B32(p, X, h, h2)                                                                            \
  QDP_G(p)                                                                                              \
  "vmladav.s8 r0, q5, q0\n\t"                                                                           \
  "vmladav.s8 r2, q5, q1\n\t"                                                                           \
  "vmov " X "[" h2 "], " X "[" h "], r0, r2\n\t"
#define QDP_P32                                                                                         \
  QDP_PTRS QDP_B32("r1", "q6", "0", "2") QDP_B32("r3", "q6", "1", "3")                                  \
  QDP_PTRS QDP_B32("r1", "q7", "0", "2") QDP_B32("r3", "q7", "1", "3")
/* 5x5 stride 1: two outputs one above the other (patches at r1: rows 0-2, r3: rows 3-5) into lanes h, h + 2 */
#define QDP_B51(X, h, h2)                                                                               \
  QDP_PTRS QDP_G("r1")                                                                                  \
  "vmladav.s8 r0, q5, q0\n\t"                                                                           \
  "vmladav.s8 r2, q5, q1\n\t"                                                                           \
  QDP_G("r3")                                                                                           \
  "vmladava.s8 r0, q5, q2\n\t"                                                                          \
  "vmladava.s8 r2, q5, q3\n\t"                                                                          \
  "vmov " X "[" h2 "], " X "[" h "], r0, r2\n\t"
#define QDP_P51 QDP_B51("q6", "0", "2") QDP_B51("q6", "1", "3") QDP_B51("q7", "0", "2") QDP_B51("q7", "1", "3")
/* 5x5 stride 2: one output into acc (patches: rows 0-2, rows 3-4) */
#define QDP_O52(acc)                                                                                    \
  QDP_PTRS QDP_G("r1")                                                                                  \
  "vmladav.s8 " acc ", q5, q0\n\t"                                                                      \
  QDP_G("r3")                                                                                           \
  "vmladava.s8 " acc ", q5, q1\n\t"
#define QDP_B52(X, h, h2) QDP_O52("r0") QDP_O52("r2") "vmov " X "[" h2 "], " X "[" h "], r0, r2\n\t"
#define QDP_P52 QDP_B52("q6", "0", "2") QDP_B52("q6", "1", "3") QDP_B52("q7", "0", "2") QDP_B52("q7", "1", "3")
/* the 8 sums in q6 q7: constant, requantisation, narrows into q7's 16-bit lanes (q6's even, q7's odd) */
#define QDP_REQ                                                                                         \
  "vadd.i32 q6, q6, r7\n\t"                                                                             \
  "vadd.i32 q7, q7, r7\n\t"                                                                             \
  "vshr.s32 q5, q6, #31\n\t"                                                                            \
  "vqrdmlah.s32 q5, q6, r5\n\t"                                                                         \
  "vrshl.s32 q5, r6\n\t"                                                                                \
  "vshr.s32 q6, q7, #31\n\t"                                                                            \
  "vqrdmlah.s32 q6, q7, r5\n\t"                                                                         \
  "vrshl.s32 q6, r6\n\t"                                                                                \
  "vqmovnb.s32 q7, q5\n\t"                                                                              \
  "vqmovnt.s32 q7, q6\n\t"
#define QDP_SAT "vqadd.s16 q7, q7, r8\n\tvqmovnb.s16 q7, q7\n\t"
/* clamp in uint8 (x + 128): min by a saturating add and subtract of 127 - amax, max by a saturating subtract,
 * back to int8 by adding amin */
#define QDP_CLAMP                                                                                       \
  "vqadd.s16 q7, q7, r8\n\t"                                                                            \
  "vqmovunb.s16 q7, q7\n\t"                                                                             \
  "vqadd.u8 q7, q7, r10\n\t"                                                                            \
  "vqsub.u8 q7, q7, r11\n\t"                                                                            \
  "vadd.i8 q7, q7, r12\n\t"
#define QDP_STORE "vldrw.u32 q6, [r4], #16\n\tvstrb.16 q7, [r9, q6]\n\t"
/* every channel of the call: its record (nw weight vectors, G, then table, mult, shift, constant, k, passes, 2 words),
 * its passes. Without a clamp: r10 the record, r11 the channels left, r12 the output base; with one, those live in
 * blk (at [sp]) */
#define QDP_REC(p, loadw)                                                                               \
  loadw                                                                                                 \
  "vldrw.u32 q4, [" p "], #16\n\t"                                                                      \
  "ldm " p "!, {r4, r5, r6, r7, r9, lr}\n\t"                                                            \
  "add " p ", " p ", #8\n\t"
#define QDP_RUNS(name, pass, loadw)                                                                     \
  __attribute__((noinline)) static void name(qdp_blk *blk) {                                            \
    register qdp_blk *b __asm__("r0") = blk;                                                            \
    __asm__ volatile(                                                                                   \
        "ldr r8, [%[b], #32]\n\t"                                                                       \
        "ldr r10, [%[b]]\n\t"                                                                           \
        "ldr r11, [%[b], #12]\n\t"                                                                      \
        "ldr r12, [%[b], #16]\n"                                                                         \
        "1:\n\t" QDP_REC("r10", loadw)                                                                   \
        "add r9, r9, r12\n\t"                                                                           \
        "wls lr, lr, 3f\n"                                                                               \
        "2:\n\t" pass QDP_REQ QDP_SAT QDP_STORE "le lr, 2b\n"                                            \
        "3:\n\t"                                                                                        \
        "subs r11, r11, #1\n\t"                                                                         \
        "bne 1b"                                                                                        \
        : [b] "+r"(b)                                                                                   \
        :                                                                                               \
        : "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "lr", "d0", "d1", \
          "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15", "memory", \
          "cc");                                                                                        \
  }
#define QDP_RUNC(name, pass, loadw)                                                                     \
  __attribute__((noinline)) static void name(qdp_blk *blk) {                                            \
    register qdp_blk *b __asm__("r0") = blk;                                                            \
    __asm__ volatile(                                                                                   \
        "push {%[b]}\n\t"                                                                               \
        "ldrd r10, r11, [%[b], #20]\n\t"                                                                \
        "ldr r12, [%[b], #28]\n\t"                                                                      \
        "ldr r8, [%[b], #32]\n"                                                                          \
        "1:\n\t"                                                                                        \
        "ldr r1, [sp]\n\t"                                                                              \
        "ldr r0, [r1, #16]\n\t"                                                                         \
        "ldr r1, [r1]\n\t" QDP_REC("r1", loadw)                                                          \
        "add r9, r9, r0\n\t"                                                                            \
        "ldr r0, [sp]\n\t"                                                                              \
        "str r1, [r0]\n\t"                                                                              \
        "wls lr, lr, 3f\n"                                                                               \
        "2:\n\t" pass QDP_REQ QDP_CLAMP QDP_STORE "le lr, 2b\n"                                          \
        "3:\n\t"                                                                                        \
        "ldr r1, [sp]\n\t"                                                                              \
        "ldr r0, [r1, #12]\n\t"                                                                         \
        "subs r0, r0, #1\n\t"                                                                           \
        "str r0, [r1, #12]\n\t"                                                                         \
        "bne 1b\n\t"                                                                                    \
        "pop {%[b]}"                                                                                    \
        : [b] "+r"(b)                                                                                   \
        :                                                                                               \
        : "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "lr", "d0", "d1", \
          "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15", "memory", \
          "cc");                                                                                        \
  }
#define QDP_W2(p) "vldrw.u32 q0, [" p "], #16\n\tvldrw.u32 q1, [" p "], #16\n\t"
#define QDP_W4(p) QDP_W2(p) "vldrw.u32 q2, [" p "], #16\n\tvldrw.u32 q3, [" p "], #16\n\t"
QDP_RUNS(qdp_33s, QDP_P33, QDP_W4("r10"))
QDP_RUNC(qdp_33c, QDP_P33, QDP_W4("r1"))
QDP_RUNS(qdp_32s, QDP_P32, QDP_W2("r10"))
QDP_RUNC(qdp_32c, QDP_P32, QDP_W2("r1"))
QDP_RUNS(qdp_51s, QDP_P51, QDP_W4("r10"))
QDP_RUNC(qdp_51c, QDP_P51, QDP_W4("r1"))
QDP_RUNS(qdp_52s, QDP_P52, QDP_W2("r10"))
QDP_RUNC(qdp_52c, QDP_P52, QDP_W2("r1"))
#undef QDP_RUNS
#undef QDP_RUNC
#undef QDP_REC
#undef QDP_W2
#undef QDP_W4
#undef QDP_STORE
#undef QDP_CLAMP
#undef QDP_SAT
#undef QDP_REQ
#undef QDP_P52
#undef QDP_B52
#undef QDP_O52
#undef QDP_P51
#undef QDP_B51
#undef QDP_P32
#undef QDP_B32
#undef QDP_P33
#undef QDP_B33
#undef QDP_PTRS
#undef QDP_G
#else
#define QDP_ASM 0
static void qdp_33s(qdp_blk *blk) { (void)blk; }
#define qdp_33c qdp_33s
#define qdp_32s qdp_33s
#define qdp_32c qdp_33s
#define qdp_51s qdp_33s
#define qdp_51c qdp_33s
#define qdp_52s qdp_33s
#define qdp_52c qdp_33s
#endif

/* The pass table of a band and chunk (the same for all of them): per pass the blocks' patch pointers (into the
 * plane), then the 8 outputs' byte offsets from the band and chunk's first output. The 16-bit lane of the pass's
 * output vector that holds position q of block b (see the asm's vmovs) is lanes[b opb + q] in every mode;
 * position q's place in its block: pos[q]. */
__attribute__((always_inline)) static inline void qdp_table_run(const qdp_geo *g, const qconv *c, const int8_t *plane,
                                                                int8_t *tab, const int32_t bh, const int32_t bw,
                                                                const int32_t bpp, const int32_t pb) {
  static const uint8_t ln[8] = {0, 4, 2, 6, 1, 5, 3, 7};
  const int32_t nb = g->nb, cow = g->cow, opb = 8 / bpp;
  const ptrdiff_t ysh = c->y.sh, ysw = c->y.sw, prow = 4 * (ptrdiff_t)g->s * g->Wp, pcol = 4 * (ptrdiff_t)g->s;
  const ptrdiff_t rowB = 12 * (ptrdiff_t)g->Wp;
  int32_t pos[4];
  for (int32_t q = 0; q < opb; q++)   /* 2x2, 1x2, 2x1, 1x1 blocks */
    pos[q] = (int32_t)((bh == 2 ? (bw == 2 ? q >> 1 : q) : 0) * ysh + (bw == 2 ? q & 1 : 0) * ysw);
  const int32_t nbr = (nb + bh - 1) / bh, nbc = (cow + bw - 1) / bw, rw = pb * bpp + 4;   /* rw: words a pass */
  uint32_t *t = (uint32_t *)(void *)tab;
  int32_t b = 0;
  const int8_t *a = plane;
  int32_t o = 0;
  for (int32_t r = 0; r < nbr; r++) {
    const int32_t ii = r * bh + bh > nb ? nb - bh : r * bh;   /* an odd last row or column: moved back (overlap) */
    const int8_t *const ra = plane + ii * prow;
    const int32_t ro = (int32_t)(ii * ysh);
    for (int32_t cb = 0; cb < nbc; cb++) {
      const int32_t jj = cb * bw + bw > cow ? cow - bw : cb * bw;
      a = ra + jj * pcol;
      o = ro + (int32_t)(jj * ysw);
      t[b * pb] = (uint32_t)(uintptr_t)a;
      if (pb == 2) t[b * pb + 1] = (uint32_t)(uintptr_t)(a + rowB);
      uint16_t *const off = (uint16_t *)(t + pb * bpp);
      const uint8_t *const l = ln + b * opb;
#pragma GCC unroll 4
      for (int32_t q = 0; q < opb; q++) off[l[q]] = (uint16_t)(o + pos[q]);
      if (++b == bpp) { b = 0; t += rw; }
    }
  }
  for (; b > 0 && b < bpp; b++) {   /* a last pass short of blocks: the last one again */
    t[b * pb] = (uint32_t)(uintptr_t)a;
    if (pb == 2) t[b * pb + 1] = (uint32_t)(uintptr_t)(a + rowB);
    uint16_t *const off = (uint16_t *)(t + pb * bpp);
    const uint8_t *const l = ln + b * opb;
    for (int32_t q = 0; q < opb; q++) off[l[q]] = (uint16_t)(o + pos[q]);
  }
}
__attribute__((noinline)) static void qdp_table(const qdp_geo *g, const qconv *c, const int8_t *plane, int8_t *tab) {
  switch (g->mode) {
    case 0: qdp_table_run(g, c, plane, tab, 2, 2, 2, 1); break;
    case 1: qdp_table_run(g, c, plane, tab, 1, 2, 4, 1); break;
    case 2: qdp_table_run(g, c, plane, tab, 2, 1, 4, 2); break;
    default: qdp_table_run(g, c, plane, tab, 1, 1, 8, 2); break;
  }
}

/* Rows [0, Hp) of the quad plane for channels c0 .. c0 + 3 (xn: channel c0 of the image) of the band and chunk
 * whose first window is at input (ih0, iw0). Rows outside the input are filled with -in_off here when prows,
 * columns outside it when pcols (else they still hold the call's first fill). aligned: the 4 channels are a word at
 * every pixel (C % 4 == 0), rtab: the interior is one run of NHWC pixels (whole rows, no column chunks), copied
 * 4 pixels a gather and scattered by rtab's plane offsets. */
typedef struct { const qdp_geo *g; const int8_t *xn; int8_t *plane; const uint32_t *rtab; int32_t H, W, live, qstep;
                 ptrdiff_t xsh, xsw; bool aligned, pcols, prows; int8x16_t vpad; } qdp_src;
/* rows of cw pixels (4 channels a word, step bytes apart) into plane rows pitch bytes apart: a word gather of 4
 * pixels a store */
__attribute__((noinline)) static void qdp_rows4(int8_t *dst, const int8_t *src, int32_t rows, int32_t cw, ptrdiff_t xsh,
                                                int32_t pitch, uint32x4_t offw, int32_t step) {
  const int32_t n4 = cw >> 2;
  const mve_pred16_t pt = vctp32q((uint32_t)(cw & 3));
  for (; rows > 0; rows--, src += xsh, dst += pitch) {
    const int8_t *s = src;
    uint32_t *d = (uint32_t *)(void *)dst;
    for (int32_t j = n4; j > 0; j--, s += step, d += 4)
      vst1q_u32(d, vldrwq_gather_offset_u32((const uint32_t *)(const void *)s, offw));
    if (pt) vstrwq_p_u32(d, vldrwq_gather_offset_z_u32((const uint32_t *)(const void *)s, offw, pt), pt);
  }
}
/* rows [ia, ib) of the 4 quads' planes (qstep bytes apart) as one run of n NHWC pixels scattered by rtab */
__attribute__((noinline)) static void qdp_raster4(int8_t *dst, const int8_t *src, const uint32_t *rt, int32_t n,
                                                  ptrdiff_t qstep, uint32x4_t offw, int32_t step) {
  const uint32x4_t o1 = vaddq_n_u32(offw, 4), o2 = vaddq_n_u32(offw, 8), o3 = vaddq_n_u32(offw, 12);
  uint32_t *const d0 = (uint32_t *)(void *)dst, *const d1 = (uint32_t *)(void *)(dst + qstep);
  uint32_t *const d2 = (uint32_t *)(void *)(dst + 2 * qstep), *const d3 = (uint32_t *)(void *)(dst + 3 * qstep);
  int32_t j = 0;
  for (; j + 4 <= n; j += 4, src += step, rt += 4) {
    const uint32x4_t o = vld1q_u32(rt);
    const uint32_t *const s = (const uint32_t *)(const void *)src;
    vstrwq_scatter_offset_u32(d0, o, vldrwq_gather_offset_u32(s, offw));
    vstrwq_scatter_offset_u32(d1, o, vldrwq_gather_offset_u32(s, o1));
    vstrwq_scatter_offset_u32(d2, o, vldrwq_gather_offset_u32(s, o2));
    vstrwq_scatter_offset_u32(d3, o, vldrwq_gather_offset_u32(s, o3));
  }
  if (j < n) {
    const mve_pred16_t p = vctp32q((uint32_t)(n - j));
    const uint32x4_t o = vld1q_u32(rt);
    const uint32_t *const s = (const uint32_t *)(const void *)src;
    vstrwq_scatter_offset_p_u32(d0, o, vldrwq_gather_offset_z_u32(s, offw, p), p);
    vstrwq_scatter_offset_p_u32(d1, o, vldrwq_gather_offset_z_u32(s, o1, p), p);
    vstrwq_scatter_offset_p_u32(d2, o, vldrwq_gather_offset_z_u32(s, o2, p), p);
    vstrwq_scatter_offset_p_u32(d3, o, vldrwq_gather_offset_z_u32(s, o3, p), p);
  }
}
/* the call's quads: quad i = channels 4 i.. of xn into the i-th plane */
__attribute__((noinline)) static void qdp_build(const qdp_src *q, int32_t quads, int32_t ih0, int32_t iw0) {
  const int32_t Wp = q->g->Wp, Hp = q->g->Hp;
  const ptrdiff_t xsh = q->xsh, xsw = q->xsw, qstep = q->qstep;
  const int32_t ja = iw0 < 0 ? -iw0 : 0, jb = q->W - iw0 < Wp ? q->W - iw0 : Wp, cw = jb - ja;
  const int32_t ia = ih0 < 0 ? (-ih0 < Hp ? -ih0 : Hp) : 0, ib0 = q->H - ih0 < Hp ? q->H - ih0 : Hp;
  const int32_t ib = cw > 0 && ib0 > ia ? ib0 : ia;   /* interior rows [ia, ib) */
  const int8x16_t vpad = q->vpad;
  for (int32_t i = 0; i < Hp && q->prows; i++) {   /* the rows outside (one band: still the call's fill) */
    if (i == ia) i = ib;
    if (i >= Hp) break;
    for (int32_t k = 0; k < quads; k++) {
      int8_t *d = q->plane + k * qstep + 4 * (ptrdiff_t)i * Wp;
      for (int32_t j = 0; j < 4 * Wp; j += 16) vstrbq_p_s8(d + j, vpad, vctp8q((uint32_t)(4 * Wp - j)));
    }
  }
  if (ib <= ia) return;
  if (q->pcols && (ja > 0 || jb < Wp)) {   /* an edge chunk: its padding columns */
    const uint32_t padw = vgetq_lane_u32(vreinterpretq_u32_s8(vpad), 0);
    for (int32_t k = 0; k < quads; k++)
      for (int32_t i = ia; i < ib; i++) {
        uint32_t *dw = (uint32_t *)(void *)(q->plane + k * qstep + 4 * (ptrdiff_t)i * Wp);
        for (int32_t j = 0; j < ja; j++) dw[j] = padw;
        for (int32_t j = jb; j < Wp; j++) dw[j] = padw;
      }
  }
  const uint32x4_t offw = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)xsw);
  const ptrdiff_t so = (ptrdiff_t)(ih0 + ia) * xsh + (ptrdiff_t)(iw0 + ja) * xsw, doff = 4 * ((ptrdiff_t)ia * Wp + ja);
  if (q->rtab && quads == 4 && q->live == 16) {
    qdp_raster4(q->plane + doff, q->xn + so, q->rtab, (ib - ia) * cw, qstep, offw, 4 * (int32_t)xsw);
    return;
  }
  for (int32_t k = 0; k < quads; k++) {
    const int32_t live = q->live - 4 * k < 4 ? q->live - 4 * k : 4;
    const int8_t *src = q->xn + 4 * k + so;
    int8_t *dst = q->plane + k * qstep + doff;
    if (q->rtab) {
      const int32_t n = (ib - ia) * cw;
      const uint32_t *rt = q->rtab;
      int32_t j = 0;
      for (; j + 4 <= n; j += 4, src += 4 * xsw, rt += 4)
        vstrwq_scatter_offset_u32((uint32_t *)(void *)dst, vld1q_u32(rt),
                                  vldrwq_gather_offset_u32((const uint32_t *)(const void *)src, offw));
      if (j < n) {
        const mve_pred16_t p = vctp32q((uint32_t)(n - j));
        vstrwq_scatter_offset_p_u32((uint32_t *)(void *)dst, vld1q_u32(rt),
                                    vldrwq_gather_offset_z_u32((const uint32_t *)(const void *)src, offw, p), p);
      }
      continue;
    }
    if (q->aligned) {
      qdp_rows4(dst, src, ib - ia, cw, xsh, 4 * Wp, offw, 4 * xsw);
      continue;
    }
    const uint16x8_t lane = vidupq_n_u16(0, 1);
    const uint16x8_t offb = vaddq_u16(vandq_u16(lane, vdupq_n_u16(3)), vmulq_n_u16(vshrq_n_u16(lane, 2), (uint16_t)xsw));
    const mve_pred16_t plive = vcmphiq_u16(vdupq_n_u16((uint16_t)live), vandq_u16(lane, vdupq_n_u16(3)));
    const mve_pred16_t pb = vctp16q((uint32_t)(4 * (cw & 1))) & plive;
    for (int32_t i = ia; i < ib; i++, src += xsh, dst += 4 * Wp) {   /* byte gathers: 2 pixels of 4 channels */
      const int8_t *s = src;
      int8_t *d = dst;
      int32_t j = 0;
      for (; j + 2 <= cw; j += 2, s += 2 * xsw, d += 8)
        vstrbq_p_u16((uint8_t *)d, vldrbq_gather_offset_z_u16((const uint8_t *)s, offb, plive), plive);
      if (j < cw) vstrbq_p_u16((uint8_t *)d, vldrbq_gather_offset_z_u16((const uint8_t *)s, offb, pb), pb);
    }
  }
}

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

/* false: not this path (nothing written) */
__attribute__((noinline)) static bool qdw_patch(const qconv *c, const qdp_geo *gp, const int8_t *x, int8_t *y) {
  if (!QDP_ASM || !c->scr) return false;
  const qdp_geo g = *gp;
  const int32_t O = c->y.c, K = g.K, T = K * K, s = g.s, nw = g.nw;
  for (int32_t oc = 0; oc < O; oc += 4) {   /* cm_vec_requant_ok, four channels at a time */
    const mve_pred16_t p = vctp32q((uint32_t)(O - oc));
    const int32x4_t m = vld1q_z_s32(c->mult + oc, p), sh = vld1q_z_s32(c->shift + oc, p);
    if ((vcmpleq_n_s32(m, 0) | vcmpgtq_n_s32(sh, -1) | vcmpltq_n_s32(sh, -31)) & p) return false;
  }
  const int32_t Q = g.Q, rsz = g.rsz, qstep = g.tab + g.plane;
  int8_t *const recs = c->scr, *const wpk = c->scr + 4 * Q * rsz;   /* qdp_scratch's layout */
  uint32_t *const rtab = (uint32_t *)(void *)(wpk + QDP_WPK);
  int8_t *const tab0 = wpk + QDP_WPK + g.rtab, *const plane = tab0 + g.tab;   /* quad i's: + i qstep */
  qdp_table(&g, c, plane, tab0);
  for (int32_t i = 1; i < Q; i++) {   /* the other quads' tables: the same with their plane's pointers */
    const uint32_t *t = (const uint32_t *)(const void *)tab0;
    uint32_t *u = (uint32_t *)(void *)(tab0 + i * qstep);
    const int32_t np = g.pb * g.bpp;
    for (int32_t p = 0; p < g.passes; p++) {
      for (int32_t w = 0; w < np; w++) *u++ = *t++ + (uint32_t)(i * qstep);
      for (int32_t w = 0; w < 4; w++) *u++ = *t++;
    }
  }
  for (int32_t k = 0; k < 4 * Q; k++) {   /* the records' table, k and passes (their other words: per channel) */
    uint32_t *r = (uint32_t *)(void *)(recs + k * rsz + 16 * (nw + 1));
    r[0] = (uint32_t)(uintptr_t)(tab0 + (k >> 2) * qstep); r[4] = (uint32_t)k; r[5] = (uint32_t)g.passes;
  }
  /* weight vector n's lanes: byte offsets of their taps in the packed taps (4 a tap), 4 T (the zero word after
   * them) where the lane holds no tap; G: a patch lane's plane offset dy Wp + dx, times 4 */
  uint8x16_t woff[4];
  for (int32_t n = 0; n < nw; n++) woff[n] = vld1q_u8(qdp_woff[g.mode][n]);
  uint8x16_t w16[4];   /* 3x3: the same lanes in the 16-channel packing (row t + 1 = tap t, row 0 = 0) */
  for (int32_t n = 0; n < nw; n++)
    w16[n] = vpselq_u8(vdupq_n_u8(0), vaddq_n_u8(vmulq_n_u8(woff[n], 4), 16), vcmpeqq_n_u8(woff[n], 36));
  const uint8x16_t goff = vmulq_n_u8(vmlaq_n_u8(vld1q_u8(qdp_gdx[g.mode == 0 ? 0 : 1]), vld1q_u8(qdp_gdy[g.mode == 0 ? 0 : 1]),
                                                (uint8_t)g.Wp), 4);
  const uint32_t io = (uint32_t)c->in_off;
  const int8x16_t vpad = vdupq_n_s8((int8_t)-c->in_off);
  const bool sat8 = c->amin == -128 && c->amax == 127;
  void (*const run)(qdp_blk *) = g.mode == 0 ? (sat8 ? qdp_33s : qdp_33c) : g.mode == 1 ? (sat8 ? qdp_32s : qdp_32c)
                                 : g.mode == 2 ? (sat8 ? qdp_51s : qdp_51c) : (sat8 ? qdp_52s : qdp_52c);
  qdp_blk blk;
  blk.oo = c->out_off + (sat8 ? 0 : 128);
  blk.k1 = 127 - c->amax; blk.k2 = 127 - c->amax + c->amin + 128; blk.amin = c->amin;
  const bool aligned = (O & 3) == 0 && c->x.sw == O && !(((uintptr_t)x | (uintptr_t)c->x.sh | (uintptr_t)c->x.sn) & 3u);
  const bool wal = (O & 3) == 0 && !((uintptr_t)c->w & 3u);
  const int8_t *const wt = c->w;
  const int32_t *const bia = c->bias, *const mul = c->mult, *const shf = c->shift;
  const int32_t OH = c->y.h, OW = c->y.w, W = c->x.w;
  qdp_src src;
  src.g = &g; src.plane = plane; src.qstep = qstep; src.H = c->x.h; src.W = W; src.xsh = c->x.sh; src.xsw = c->x.sw;
  src.aligned = aligned; src.pcols = g.nchunks > 1; src.prows = g.nbands > 1 || g.nchunks > 1; src.vpad = vpad;
  src.rtab = NULL;
  if (!src.pcols) {   /* one chunk: the padding once for the call; whole rows of NHWC pixels are one run */
    for (int32_t i = 0; i < Q; i++)
      for (int32_t j = 0; j < g.plane; j += 16) vst1q_s8(plane + i * qstep + j, vpad);
    const int32_t cw = W - (-c->pw) < g.Wp ? W + c->pw : g.Wp;
    if (aligned && cw - c->pw == W && c->x.sh == (ptrdiff_t)W * c->x.sw) {
      uint32_t *rt = rtab, o = 0;
      for (int32_t r = (g.rtab - 16) / (4 * W); r > 0; r--, o += 4u * (uint32_t)(g.Wp - W))   /* the rows it holds */
        for (int32_t j = 0; j < W; j++, o += 4) *rt++ = o;
      src.rtab = rtab;
    }
  }
  const uint32x4_t ro = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)rsz);
  for (int32_t c0 = 0; c0 < O; c0 += 4 * Q) {
    const int32_t live = O - c0 < 4 * Q ? O - c0 : 4 * Q, quads = (live + 3) / 4;
    int32_t sums[16] __attribute__((aligned(16)));
    if (K == 3) {   /* 16 channels' taps a vector: row t + 1 = tap t, row 0 = 0 */
      const mve_pred16_t pl = vctp8q((uint32_t)live);
      vst1q_s8(wpk, vdupq_n_s8(0));
      for (int32_t t = 0; t < 9; t++) vst1q_s8(wpk + 16 * (t + 1), vld1q_z_s8(wt + (ptrdiff_t)t * O + c0, pl));
      for (int32_t k = 0; k < live; k++) {
        int8_t *r = recs + k * rsz;
        const int8x16_t w0 = vldrbq_gather_offset_s8(wpk + k, w16[0]);
        vst1q_s8(r, w0);
        vst1q_s8(r + 16, vldrbq_gather_offset_s8(wpk + k, w16[1]));
        if (nw == 4) {
          vst1q_s8(r + 32, vldrbq_gather_offset_s8(wpk + k, w16[2]));
          vst1q_s8(r + 48, vldrbq_gather_offset_s8(wpk + k, w16[3]));
        }
        vst1q_u8((uint8_t *)r + 16 * nw, vaddq_n_u8(goff, (uint8_t)(k & 3)));
        sums[k] = vaddvq_s8(w0);
      }
    }
    for (int32_t qd = 0; qd < quads; qd++) {
      const int32_t q0 = c0 + 4 * qd, ql = live - 4 * qd < 4 ? live - 4 * qd : 4;
      int8_t *const rq = recs + 4 * qd * rsz;
      if (K == 5) {   /* packed taps: wpk[4 t + k] = channel q0 + k's tap t, then a zero word */
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
            vst1q_u8((uint8_t *)r + 64, vaddq_n_u8(goff, (uint8_t)k));
            sq[k] = vaddvq_s8(w0) + vaddvq_s8(w2);
          }
        else
          for (int32_t k = 0; k < ql; k++) {
            int8_t *r = rq + k * rsz;
            const int8x16_t w0 = vldrbq_gather_offset_s8(wpk + k, woff[0]), w1 = vldrbq_gather_offset_s8(wpk + k, woff[1]);
            vst1q_s8(r, w0); vst1q_s8(r + 16, w1);
            vst1q_u8((uint8_t *)r + 32, vaddq_n_u8(goff, (uint8_t)k));
            sq[k] = vaddvq_s8(w0) + vaddvq_s8(w1);
          }
      }
      /* then mult, shift, constant, four channels a scatter store */
      const mve_pred16_t p = vctp32q((uint32_t)ql);
      uint32_t *const r0 = (uint32_t *)(void *)(rq + 16 * (nw + 1));
      const uint32x4_t bias = bia ? vld1q_z_u32((const uint32_t *)bia + q0, p) : vdupq_n_u32(0);
      vstrwq_scatter_offset_p_u32(r0 + 1, ro, vld1q_z_u32((const uint32_t *)mul + q0, p), p);
      vstrwq_scatter_offset_p_u32(r0 + 2, ro, vld1q_z_u32((const uint32_t *)shf + q0, p), p);
      vstrwq_scatter_offset_p_u32(r0 + 3, ro, vmlaq_n_u32(bias, vld1q_z_u32((const uint32_t *)sums + 4 * qd, p), io), p);
    }
    src.live = live;
    for (int32_t n = 0; n < c->y.n; n++) {
      src.xn = x + n * c->x.sn + c0;
      for (int32_t bi = 0; bi < g.nbands; bi++) {
        const int32_t oh0 = bi + 1 == g.nbands ? OH - g.nb : bi * g.nb;
        for (int32_t ci = 0; ci < g.nchunks; ci++) {
          const int32_t ow0 = ci + 1 == g.nchunks ? OW - g.cow : ci * g.cow;
          qdp_build(&src, quads, oh0 * s - c->ph, ow0 * s - c->pw);
          blk.rec = recs; blk.nch = live;
          blk.y = y + n * c->y.sn + (ptrdiff_t)oh0 * c->y.sh + (ptrdiff_t)ow0 * c->y.sw + c0;
          run(&blk);
        }
      }
    }
  }
  return true;
}

#endif
