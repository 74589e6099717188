/* Checks firmware/backends/xnnpack/et_xnn_pool.c (the pthreadpool API XNNPACK parallelizes on): every
 * parallelize_* variant, on no pool and on pools of 1..3 threads, over ranges and tiles that do not
 * divide evenly, visits every grid cell exactly once, with each tile's size what pthreadpool
 * documents (min(tile, range - start)). Prints "ok <calls>" or the first mismatch; exit status 1. */
#include <pthreadpool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define MAXC 4096
static _Atomic unsigned hits[MAXC];
static size_t R[6], T[6];
static int bad;

static void cover(const size_t *s, const size_t *z, int nd) {
  for (int d = 0; d < nd; d++)
    if (s[d] >= R[d] || z[d] != (R[d] - s[d] < T[d] ? R[d] - s[d] : T[d]) || s[d] % T[d]) { bad = 1; return; }
  size_t n[6] = {1, 1, 1, 1, 1, 1};
  for (int d = 0; d < nd; d++) n[d] = z[d];
  for (size_t a = 0; a < n[0]; a++) for (size_t b = 0; b < n[1]; b++) for (size_t c = 0; c < n[2]; c++)
    for (size_t e = 0; e < n[3]; e++) for (size_t f = 0; f < n[4]; f++) for (size_t g = 0; g < n[5]; g++) {
      size_t at[6] = {a, b, c, e, f, g}, lin = 0;
      for (int d = 0; d < nd; d++) lin = lin * R[d] + s[d] + at[d];
      atomic_fetch_add(&hits[lin], 1);
    }
}
#define ONE(d) ((void)(d), (size_t)1)   /* an untiled dimension: tile 1 */
static void t1(void *c, size_t i) { (void)c; size_t s[] = {i}, z[] = {ONE(0)}; cover(s, z, 1); }
static void t1u(void *c, uint32_t u, size_t i) { (void)c; if (u != 7) bad = 1; t1(c, i); }
static void t1t(void *c, size_t i, size_t ti) { (void)c; size_t s[] = {i}, z[] = {ti}; cover(s, z, 1); }
static void t2(void *c, size_t i, size_t j) { (void)c; size_t s[] = {i, j}, z[] = {ONE(0), ONE(1)}; cover(s, z, 2); }
static void t2t1(void *c, size_t i, size_t j, size_t tj) { (void)c; size_t s[] = {i, j}, z[] = {ONE(0), tj}; cover(s, z, 2); }
static void t2t2(void *c, size_t i, size_t j, size_t ti, size_t tj) { (void)c; size_t s[] = {i, j}, z[] = {ti, tj}; cover(s, z, 2); }
static void t2t2u(void *c, uint32_t u, size_t i, size_t j, size_t ti, size_t tj) { if (u != 7) bad = 1; t2t2(c, i, j, ti, tj); }
static void t3(void *c, size_t i, size_t j, size_t k) { (void)c; size_t s[] = {i, j, k}, z[] = {ONE(0), ONE(1), ONE(2)}; cover(s, z, 3); }
static void t3t1(void *c, size_t i, size_t j, size_t k, size_t tk) { (void)c; size_t s[] = {i, j, k}, z[] = {ONE(0), ONE(1), tk}; cover(s, z, 3); }
static void t3t2(void *c, size_t i, size_t j, size_t k, size_t tj, size_t tk) { (void)c; size_t s[] = {i, j, k}, z[] = {ONE(0), tj, tk}; cover(s, z, 3); }
static void t3t2u(void *c, uint32_t u, size_t i, size_t j, size_t k, size_t tj, size_t tk) { if (u != 7) bad = 1; t3t2(c, i, j, k, tj, tk); }
static void t4(void *c, size_t i, size_t j, size_t k, size_t l) { (void)c; size_t s[] = {i, j, k, l}, z[] = {ONE(0), ONE(1), ONE(2), ONE(3)}; cover(s, z, 4); }
static void t4t1(void *c, size_t i, size_t j, size_t k, size_t l, size_t tl) { (void)c; size_t s[] = {i, j, k, l}, z[] = {ONE(0), ONE(1), ONE(2), tl}; cover(s, z, 4); }
static void t4t2(void *c, size_t i, size_t j, size_t k, size_t l, size_t tk, size_t tl) { (void)c; size_t s[] = {i, j, k, l}, z[] = {ONE(0), ONE(1), tk, tl}; cover(s, z, 4); }
static void t4t2u(void *c, uint32_t u, size_t i, size_t j, size_t k, size_t l, size_t tk, size_t tl) { if (u != 7) bad = 1; t4t2(c, i, j, k, l, tk, tl); }
static void t5(void *c, size_t i, size_t j, size_t k, size_t l, size_t m) { (void)c; size_t s[] = {i, j, k, l, m}, z[] = {ONE(0), ONE(1), ONE(2), ONE(3), ONE(4)}; cover(s, z, 5); }
static void t5t1(void *c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t tm) { (void)c; size_t s[] = {i, j, k, l, m}, z[] = {ONE(0), ONE(1), ONE(2), ONE(3), tm}; cover(s, z, 5); }
static void t5t2(void *c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t tl, size_t tm) { (void)c; size_t s[] = {i, j, k, l, m}, z[] = {ONE(0), ONE(1), ONE(2), tl, tm}; cover(s, z, 5); }
static void t6(void *c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t n) { (void)c; size_t s[] = {i, j, k, l, m, n}, z[] = {ONE(0), ONE(1), ONE(2), ONE(3), ONE(4), ONE(5)}; cover(s, z, 6); }
static void t6t1(void *c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t n, size_t tn) { (void)c; size_t s[] = {i, j, k, l, m, n}, z[] = {ONE(0), ONE(1), ONE(2), ONE(3), ONE(4), tn}; cover(s, z, 6); }
static void t6t2(void *c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t n, size_t tm, size_t tn) { (void)c; size_t s[] = {i, j, k, l, m, n}, z[] = {ONE(0), ONE(1), ONE(2), ONE(3), tm, tn}; cover(s, z, 6); }

static int check(const char *what, int nd) {
  size_t cells = 1;
  for (int d = 0; d < nd; d++) cells *= R[d];
  for (size_t i = 0; i < cells; i++)
    if (atomic_load(&hits[i]) != 1) { printf("%s: cell %zu visited %u times\n", what, i, atomic_load(&hits[i])); return 1; }
  if (bad) { printf("%s: a tile's start, size or uarch index is wrong\n", what); return 1; }
  return 0;
}
static void set(int nd, const size_t *r, const size_t *t) {
  memset(hits, 0, sizeof hits);
  for (int d = 0; d < 6; d++) { R[d] = d < nd ? r[d] : 1; T[d] = d < nd ? t[d] : 1; }
}

int main(void) {
  static const size_t r[6] = {5, 3, 4, 7, 2, 3}, t[6] = {2, 1, 3, 3, 1, 2};
  const size_t one[6] = {1, 1, 1, 1, 1, 1};
  int calls = 0;
  for (int threads = 0; threads <= 3; threads++) {
    pthreadpool_t p = threads ? pthreadpool_create((size_t)threads) : 0;
    if (threads && pthreadpool_get_threads_count(p) != (size_t)threads) { printf("threads count\n"); return 1; }
    for (int rep = 0; rep < 50; rep++) {
      const size_t F = PTHREADPOOL_FLAG_DISABLE_DENORMALS;
#define RUN(name, nd, tiles, call) do { set(nd, r, tiles); call; calls++; if (check(name, nd)) return 1; } while (0)
      RUN("1d", 1, one, pthreadpool_parallelize_1d(p, t1, 0, r[0], 0));
      RUN("1d_with_uarch", 1, one, pthreadpool_parallelize_1d_with_uarch(p, t1u, 0, 7, 9, r[0], F));
      RUN("1d_tile_1d", 1, t, pthreadpool_parallelize_1d_tile_1d(p, t1t, 0, r[0], t[0], 0));
      RUN("2d", 2, one, pthreadpool_parallelize_2d(p, t2, 0, r[0], r[1], 0));
      { size_t tt[] = {1, t[1]}; RUN("2d_tile_1d", 2, tt, pthreadpool_parallelize_2d_tile_1d(p, t2t1, 0, r[0], r[1], t[1], 0)); }
      RUN("2d_tile_2d", 2, t, pthreadpool_parallelize_2d_tile_2d(p, t2t2, 0, r[0], r[1], t[0], t[1], F));
      RUN("2d_tile_2d_with_uarch", 2, t, pthreadpool_parallelize_2d_tile_2d_with_uarch(p, t2t2u, 0, 7, 9, r[0], r[1], t[0], t[1], 0));
      RUN("3d", 3, one, pthreadpool_parallelize_3d(p, t3, 0, r[0], r[1], r[2], 0));
      { size_t tt[] = {1, 1, t[2]}; RUN("3d_tile_1d", 3, tt, pthreadpool_parallelize_3d_tile_1d(p, t3t1, 0, r[0], r[1], r[2], t[2], 0)); }
      { size_t tt[] = {1, t[1], t[2]}; RUN("3d_tile_2d", 3, tt, pthreadpool_parallelize_3d_tile_2d(p, t3t2, 0, r[0], r[1], r[2], t[1], t[2], 0));
        RUN("3d_tile_2d_with_uarch", 3, tt, pthreadpool_parallelize_3d_tile_2d_with_uarch(p, t3t2u, 0, 7, 9, r[0], r[1], r[2], t[1], t[2], 0)); }
      RUN("4d", 4, one, pthreadpool_parallelize_4d(p, t4, 0, r[0], r[1], r[2], r[3], 0));
      { size_t tt[] = {1, 1, 1, t[3]}; RUN("4d_tile_1d", 4, tt, pthreadpool_parallelize_4d_tile_1d(p, t4t1, 0, r[0], r[1], r[2], r[3], t[3], 0)); }
      { size_t tt[] = {1, 1, t[2], t[3]}; RUN("4d_tile_2d", 4, tt, pthreadpool_parallelize_4d_tile_2d(p, t4t2, 0, r[0], r[1], r[2], r[3], t[2], t[3], 0));
        RUN("4d_tile_2d_with_uarch", 4, tt, pthreadpool_parallelize_4d_tile_2d_with_uarch(p, t4t2u, 0, 7, 9, r[0], r[1], r[2], r[3], t[2], t[3], 0)); }
      RUN("5d", 5, one, pthreadpool_parallelize_5d(p, t5, 0, r[0], r[1], r[2], r[3], r[4], 0));
      { size_t tt[] = {1, 1, 1, 1, t[4]}; RUN("5d_tile_1d", 5, tt, pthreadpool_parallelize_5d_tile_1d(p, t5t1, 0, r[0], r[1], r[2], r[3], r[4], t[4], 0)); }
      { size_t tt[] = {1, 1, 1, t[3], t[4]}; RUN("5d_tile_2d", 5, tt, pthreadpool_parallelize_5d_tile_2d(p, t5t2, 0, r[0], r[1], r[2], r[3], r[4], t[3], t[4], 0)); }
      RUN("6d", 6, one, pthreadpool_parallelize_6d(p, t6, 0, r[0], r[1], r[2], r[3], r[4], r[5], 0));
      { size_t tt[] = {1, 1, 1, 1, 1, t[5]}; RUN("6d_tile_1d", 6, tt, pthreadpool_parallelize_6d_tile_1d(p, t6t1, 0, r[0], r[1], r[2], r[3], r[4], r[5], t[5], 0)); }
      { size_t tt[] = {1, 1, 1, 1, t[4], t[5]}; RUN("6d_tile_2d", 6, tt, pthreadpool_parallelize_6d_tile_2d(p, t6t2, 0, r[0], r[1], r[2], r[3], r[4], r[5], t[4], t[5], 0)); }
    }
    pthreadpool_destroy(p);
  }
  printf("ok %d\n", calls);
  return 0;
}
