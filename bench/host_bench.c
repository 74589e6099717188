/* Benchmark entry for the host (replaces et_main.c): loads baked program 0, fills every input of the
 * named method with ones, runs it `warmup` times, then times `iters` executions one by one with
 * CLOCK_MONOTONIC and prints the median, min and mean in nanoseconds on one line.
 *   usage: bench_host [iters] [warmup] [method] [all]  (defaults: 200, 20, forward; `all` also prints
 *   every sample, in order, as `ns=<n>` lines: bench/host_speed.py runs short blocks and interleaves them
 *   with executorch's own runs) */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "et_baked.h"

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static et_method *bench_m;

/* Loads program 0 and its method `want`. */
static int etb_load(const char *want) {
  const et_baked_program *bp = &et_baked_programs[0];
  et_status st = et_program_load(bp->state, bp->blob, bp->size);
  if (st != ET_OK) { fprintf(stderr, "program load: %s\n", et_status_name(st)); return -1; }
  for (uint32_t mi = 0; mi < bp->n_methods; mi++) {
    const et_baked_method *bm = &bp->methods[mi];
    if (strcmp(bm->name, want) != 0) continue;
    static et_pool pool;
    et_pool_init(&pool, bm->pool, bm->pool_size);
    et_method_memory mem = {&pool, bm->arenas, bm->arena_sizes, bm->n_arenas, bm->op_state,
                            bm->op_scratch, bm->scratch_plan, bm->scratch_size, bm->scratch_mem, bm->scratch_off};
    int32_t plan = et_program_find_method(bp->state, bm->name);
    st = plan < 0 ? ET_ERR_BAD_PROGRAM : et_method_load(bm->state, bp->state, (uint32_t)plan, &mem, bm->ops, bm->n_ops);
    if (st != ET_OK) { fprintf(stderr, "method load: %s\n", et_status_name(st)); return -1; }
    bench_m = bm->state;
    return 0;
  }
  fprintf(stderr, "no method '%s'\n", want);
  return -1;
}

/* Runs the loaded method n times; t[i] = nanoseconds of execution i (inputs refilled outside the timing). */
static int etb_time(int n, uint64_t *t) {
  if (!bench_m) return -1;
  for (int i = 0; i < n; i++) {
    et_status st = et_method_fill_inputs_ones(bench_m);   /* as the reference run: fresh ones every call */
    uint64_t a = now_ns();
    if (st == ET_OK) st = et_method_execute(bench_m);
    uint64_t b = now_ns();
    if (st != ET_OK) { fprintf(stderr, "execute: %s\n", et_status_name(st)); return -1; }
    t[i] = b - a;
  }
  return 0;
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 200;
  int warmup = argc > 2 ? atoi(argv[2]) : 20;
  if (iters < 1) iters = 1;
  if (warmup < 0) warmup = 0;
  if (etb_load(argc > 3 ? argv[3] : "forward") != 0) return 2;
  uint64_t *t = calloc((size_t)(iters + warmup), sizeof(uint64_t));
  if (!t || etb_time(warmup + iters, t) != 0) return 2;
  uint64_t *m = t + warmup, sum = 0;
  if (argc > 4 && strcmp(argv[4], "all") == 0)
    for (int i = 0; i < iters; i++) printf("ns=%llu\n", (unsigned long long)m[i]);
  for (int i = 0; i < iters; i++) sum += m[i];
  qsort(m, (size_t)iters, sizeof(uint64_t), cmp_u64);
  printf("median_ns=%llu min_ns=%llu mean_ns=%llu iters=%d\n", (unsigned long long)m[iters / 2],
         (unsigned long long)m[0], (unsigned long long)(sum / (uint64_t)iters), iters);
  free(t);
  return 0;
}
