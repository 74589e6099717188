/* The thread pool XNNPACK parallelizes on: pthreadpool's C API (the library calls
 * pthreadpool_parallelize_*), implemented here. Defined in the image, these bind before Debian's
 * libpthreadpool (which libXNNPACK.so still loads; a static link then needs none of its members).
 *
 * Why not Debian's (2021) pthreadpool: every waiting thread spins 1,000,000 `pause`s (tens of ms)
 * before it sleeps, workers between operators and the caller for its workers, and the caller waits
 * until every worker has checked out. On a machine whose cores other processes also use, threads=2
 * burned 7x the CPU of one thread and ran mobilenet_v2 several times slower than one thread.
 * Here the caller works too and returns as soon as every item is done (a worker that did not wake
 * in time is not waited for); waiting threads spin briefly, then sleep on a condition variable.
 *
 * A job is a grid of items (tiles) numbered row-major. One claim word holds the job's generation, the
 * next item and the item count: a late worker can never take an item of a newer job, and reads the
 * job only while it holds one of its items (the job cannot change before all of them are done). */
#define _DEFAULT_SOURCE 1
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <pthreadpool.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define CPU_RELAX() __asm__ volatile("yield")
#else
#define CPU_RELAX() ((void)0)
#endif

#define SPIN 2000   /* pauses before sleeping: covers the gap between two operators of one run */
#define FIELD 21                       /* claim word: generation (22 bits) | next item | item count */
#define MASK ((UINT64_C(1) << FIELD) - 1)
#define GEN_MASK ((UINT32_C(1) << 22) - 1)

enum kind { K1, K1T1, K1U, K2, K2T1, K2T2, K2T2U, K3, K3T1, K3T2, K3T2U, K4, K4T1, K4T2, K4T2U,
            K5, K5T1, K5T2, K6, K6T1, K6T2 };

typedef struct job {
  enum kind kind;
  void (*fn)(void);
  void *ctx;
  uint32_t nd, flags, uarch;
  size_t range[6], tile[6], count[6];   /* count = tiles along each dimension */
  uint64_t items;
} job;

struct pthreadpool {
  size_t threads;                     /* the caller included */
  pthread_t *tid;
  pthread_mutex_t mu, call;
  pthread_cond_t wake, idle;
  _Atomic uint64_t claim;             /* generation << 42 | next item << 21 | item count */
  _Atomic uint32_t gen, done;
  uint32_t next_gen;
  int stop;
  job j;
};

/* ---- denormals off for the job (PTHREADPOOL_FLAG_DISABLE_DENORMALS), as pthreadpool does */
static uintptr_t denormals_off(uint32_t flags) {
  if (!(flags & PTHREADPOOL_FLAG_DISABLE_DENORMALS)) return 0;
#if defined(__x86_64__) || defined(__i386__)
  unsigned csr = _mm_getcsr();
  _mm_setcsr(csr | 0x8040);           /* FTZ | DAZ */
  return (uintptr_t)csr | ((uintptr_t)1 << 31);
#elif defined(__aarch64__)
  uint64_t fpcr;
  __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
  __asm__ volatile("msr fpcr, %0" ::"r"(fpcr | (1u << 24)));
  return (uintptr_t)fpcr | ((uintptr_t)1 << 63);
#else
  return 0;
#endif
}
static void denormals_restore(uintptr_t saved) {
  if (!saved) return;
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr((unsigned)(saved & 0xffffu));   /* MXCSR is 16 bits; bit 31 marked "saved" */
#elif defined(__aarch64__)
  uint64_t fpcr = (uint64_t)saved & ~((uint64_t)1 << 63);
  __asm__ volatile("msr fpcr, %0" ::"r"(fpcr));
#endif
}

/* Calls the job's function on the tile at grid position idx. */
static void call(const job *j, const size_t *idx) {
  size_t s[6], z[6];
  for (uint32_t d = 0; d < j->nd; d++) {
    s[d] = idx[d] * j->tile[d];
    z[d] = j->range[d] - s[d] < j->tile[d] ? j->range[d] - s[d] : j->tile[d];
  }
  void *c = j->ctx;
  uint32_t u = j->uarch;
  switch (j->kind) {
    case K1: ((pthreadpool_task_1d_t)j->fn)(c, s[0]); break;
    case K1T1: ((pthreadpool_task_1d_tile_1d_t)j->fn)(c, s[0], z[0]); break;
    case K1U: ((pthreadpool_task_1d_with_id_t)j->fn)(c, u, s[0]); break;
    case K2: ((pthreadpool_task_2d_t)j->fn)(c, s[0], s[1]); break;
    case K2T1: ((pthreadpool_task_2d_tile_1d_t)j->fn)(c, s[0], s[1], z[1]); break;
    case K2T2: ((pthreadpool_task_2d_tile_2d_t)j->fn)(c, s[0], s[1], z[0], z[1]); break;
    case K2T2U: ((pthreadpool_task_2d_tile_2d_with_id_t)j->fn)(c, u, s[0], s[1], z[0], z[1]); break;
    case K3: ((pthreadpool_task_3d_t)j->fn)(c, s[0], s[1], s[2]); break;
    case K3T1: ((pthreadpool_task_3d_tile_1d_t)j->fn)(c, s[0], s[1], s[2], z[2]); break;
    case K3T2: ((pthreadpool_task_3d_tile_2d_t)j->fn)(c, s[0], s[1], s[2], z[1], z[2]); break;
    case K3T2U: ((pthreadpool_task_3d_tile_2d_with_id_t)j->fn)(c, u, s[0], s[1], s[2], z[1], z[2]); break;
    case K4: ((pthreadpool_task_4d_t)j->fn)(c, s[0], s[1], s[2], s[3]); break;
    case K4T1: ((pthreadpool_task_4d_tile_1d_t)j->fn)(c, s[0], s[1], s[2], s[3], z[3]); break;
    case K4T2: ((pthreadpool_task_4d_tile_2d_t)j->fn)(c, s[0], s[1], s[2], s[3], z[2], z[3]); break;
    case K4T2U: ((pthreadpool_task_4d_tile_2d_with_id_t)j->fn)(c, u, s[0], s[1], s[2], s[3], z[2], z[3]); break;
    case K5: ((pthreadpool_task_5d_t)j->fn)(c, s[0], s[1], s[2], s[3], s[4]); break;
    case K5T1: ((pthreadpool_task_5d_tile_1d_t)j->fn)(c, s[0], s[1], s[2], s[3], s[4], z[4]); break;
    case K5T2: ((pthreadpool_task_5d_tile_2d_t)j->fn)(c, s[0], s[1], s[2], s[3], s[4], z[3], z[4]); break;
    case K6: ((pthreadpool_task_6d_t)j->fn)(c, s[0], s[1], s[2], s[3], s[4], s[5]); break;
    case K6T1: ((pthreadpool_task_6d_tile_1d_t)j->fn)(c, s[0], s[1], s[2], s[3], s[4], s[5], z[5]); break;
    case K6T2: ((pthreadpool_task_6d_tile_2d_t)j->fn)(c, s[0], s[1], s[2], s[3], s[4], s[5], z[4], z[5]); break;
  }
}

/* Takes items of generation g until none is left, a shrinking share of what is left at a time (one
 * contended claim per item cost more than ResNet-8's small tiles). */
static void run_items(struct pthreadpool *p, uint32_t g) {
  uintptr_t saved = 0;
  int first = 1;
  for (;;) {
    uint64_t v = atomic_load_explicit(&p->claim, memory_order_acquire);
    uint32_t item = (uint32_t)((v >> FIELD) & MASK), items = (uint32_t)(v & MASK);
    if ((uint32_t)(v >> (2 * FIELD)) != g || item >= items) break;
    uint32_t take = (items - item) / (uint32_t)(2 * p->threads);
    if (!take) take = 1;
    if (!atomic_compare_exchange_weak_explicit(&p->claim, &v, v + ((uint64_t)take << FIELD), memory_order_acq_rel,
                                               memory_order_acquire))
      continue;
    /* holding items of g: the job cannot change until they are done */
    if (first) { saved = denormals_off(p->j.flags); first = 0; }
    size_t idx[6], rest = item;
    const job *j = &p->j;
    for (int d = (int)j->nd - 1; d >= 0; d--) { idx[d] = rest % j->count[d]; rest /= j->count[d]; }
    for (uint32_t k = 0; k < take; k++) {
      call(j, idx);
      for (int d = (int)j->nd - 1; d >= 0 && ++idx[d] == j->count[d]; d--) idx[d] = 0;
    }
    if (atomic_fetch_add_explicit(&p->done, take, memory_order_acq_rel) + take == items) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_signal(&p->idle);
      pthread_mutex_unlock(&p->mu);
    }
  }
  denormals_restore(saved);
}

static void *worker(void *arg) {
  struct pthreadpool *p = (struct pthreadpool *)arg;
  uint32_t seen = 0;
  for (;;) {
    uint32_t g = atomic_load_explicit(&p->gen, memory_order_acquire);
    for (int i = 0; g == seen && i < SPIN; i++) {
      CPU_RELAX();
      g = atomic_load_explicit(&p->gen, memory_order_acquire);
    }
    if (g == seen) {
      pthread_mutex_lock(&p->mu);
      while ((g = atomic_load_explicit(&p->gen, memory_order_acquire)) == seen && !p->stop)
        pthread_cond_wait(&p->wake, &p->mu);
      int stop = p->stop;
      pthread_mutex_unlock(&p->mu);
      if (stop) return 0;
    }
    seen = g;
    run_items(p, g);
  }
}

pthreadpool_t pthreadpool_create(size_t threads_count) {
  if (threads_count == 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    threads_count = n > 0 ? (size_t)n : 1;
  }
  struct pthreadpool *p = (struct pthreadpool *)calloc(1, sizeof *p);
  if (!p) return 0;
  p->threads = threads_count;
  pthread_mutex_init(&p->mu, 0);
  pthread_mutex_init(&p->call, 0);
  pthread_cond_init(&p->wake, 0);
  pthread_cond_init(&p->idle, 0);
  if (threads_count > 1) {
    p->tid = (pthread_t *)calloc(threads_count - 1, sizeof(pthread_t));
    if (!p->tid) { free(p); return 0; }
    for (size_t i = 0; i + 1 < threads_count; i++)
      if (pthread_create(&p->tid[i], 0, worker, p) != 0) { p->threads = i + 1; break; }
  }
  return p;
}

size_t pthreadpool_get_threads_count(pthreadpool_t p) { return p ? p->threads : 1; }

void pthreadpool_destroy(pthreadpool_t p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stop = 1;
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  for (size_t i = 0; i + 1 < p->threads; i++) pthread_join(p->tid[i], 0);
  pthread_cond_destroy(&p->wake); pthread_cond_destroy(&p->idle);
  pthread_mutex_destroy(&p->mu); pthread_mutex_destroy(&p->call);
  free(p->tid);
  free(p);
}

/* Runs job j: on the calling thread alone (no pool, one thread, one item), else on the pool. */
static void run(struct pthreadpool *p, job *j) {
  j->items = 1;
  for (uint32_t d = 0; d < j->nd; d++) {
    if (!j->tile[d]) j->tile[d] = 1;
    j->count[d] = (j->range[d] + j->tile[d] - 1) / j->tile[d];
    j->items *= j->count[d];
  }
  if (!j->items) return;
  if (!p || p->threads <= 1 || j->items == 1 || j->items > MASK) {
    uintptr_t saved = denormals_off(j->flags);
    size_t idx[6] = {0};
    for (uint64_t n = 0; n < j->items; n++) {   /* row-major odometer */
      call(j, idx);
      for (int d = (int)j->nd - 1; d >= 0 && ++idx[d] == j->count[d]; d--) idx[d] = 0;
    }
    denormals_restore(saved);
    return;
  }
  pthread_mutex_lock(&p->call);
  p->j = *j;
  uint32_t g = p->next_gen = (p->next_gen + 1) & GEN_MASK;
  if (!g) g = p->next_gen = 1;                  /* 0 is the workers' initial "seen" */
  atomic_store_explicit(&p->done, 0, memory_order_relaxed);
  atomic_store_explicit(&p->claim, (uint64_t)g << (2 * FIELD) | j->items, memory_order_release);
  pthread_mutex_lock(&p->mu);
  atomic_store_explicit(&p->gen, g, memory_order_release);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  run_items(p, g);
  for (int i = 0; atomic_load_explicit(&p->done, memory_order_acquire) < j->items && i < SPIN; i++) CPU_RELAX();
  if (atomic_load_explicit(&p->done, memory_order_acquire) < j->items) {
    pthread_mutex_lock(&p->mu);
    while (atomic_load_explicit(&p->done, memory_order_acquire) < j->items) pthread_cond_wait(&p->idle, &p->mu);
    pthread_mutex_unlock(&p->mu);
  }
  pthread_mutex_unlock(&p->call);
}

#define JOB(K, F, N, ...) job j = {K, (void (*)(void))(F), ctx, N, flags, 0, __VA_ARGS__, R(0), 0}; run(p, &j)
#define R(...) {__VA_ARGS__}

void pthreadpool_parallelize_1d(pthreadpool_t p, pthreadpool_task_1d_t f, void *ctx, size_t r0, uint32_t flags) {
  JOB(K1, f, 1, R(r0), R(1));
}
void pthreadpool_parallelize_1d_with_uarch(pthreadpool_t p, pthreadpool_task_1d_with_id_t f, void *ctx,
                                           uint32_t du, uint32_t mu, size_t r0, uint32_t flags) {
  (void)mu;
  job j = {K1U, (void (*)(void))f, ctx, 1, flags, du, R(r0), R(1), R(0), 0};
  run(p, &j);
}
void pthreadpool_parallelize_1d_tile_1d(pthreadpool_t p, pthreadpool_task_1d_tile_1d_t f, void *ctx, size_t r0,
                                        size_t t0, uint32_t flags) {
  JOB(K1T1, f, 1, R(r0), R(t0));
}
void pthreadpool_parallelize_2d(pthreadpool_t p, pthreadpool_task_2d_t f, void *ctx, size_t r0, size_t r1,
                                uint32_t flags) {
  JOB(K2, f, 2, R(r0, r1), R(1, 1));
}
void pthreadpool_parallelize_2d_tile_1d(pthreadpool_t p, pthreadpool_task_2d_tile_1d_t f, void *ctx, size_t r0,
                                        size_t r1, size_t t1, uint32_t flags) {
  JOB(K2T1, f, 2, R(r0, r1), R(1, t1));
}
void pthreadpool_parallelize_2d_tile_2d(pthreadpool_t p, pthreadpool_task_2d_tile_2d_t f, void *ctx, size_t r0,
                                        size_t r1, size_t t0, size_t t1, uint32_t flags) {
  JOB(K2T2, f, 2, R(r0, r1), R(t0, t1));
}
void pthreadpool_parallelize_2d_tile_2d_with_uarch(pthreadpool_t p, pthreadpool_task_2d_tile_2d_with_id_t f,
                                                   void *ctx, uint32_t du, uint32_t mu, size_t r0, size_t r1,
                                                   size_t t0, size_t t1, uint32_t flags) {
  (void)mu;
  job j = {K2T2U, (void (*)(void))f, ctx, 2, flags, du, R(r0, r1), R(t0, t1), R(0), 0};
  run(p, &j);
}
void pthreadpool_parallelize_3d(pthreadpool_t p, pthreadpool_task_3d_t f, void *ctx, size_t r0, size_t r1,
                                size_t r2, uint32_t flags) {
  JOB(K3, f, 3, R(r0, r1, r2), R(1, 1, 1));
}
void pthreadpool_parallelize_3d_tile_1d(pthreadpool_t p, pthreadpool_task_3d_tile_1d_t f, void *ctx, size_t r0,
                                        size_t r1, size_t r2, size_t t2, uint32_t flags) {
  JOB(K3T1, f, 3, R(r0, r1, r2), R(1, 1, t2));
}
void pthreadpool_parallelize_3d_tile_2d(pthreadpool_t p, pthreadpool_task_3d_tile_2d_t f, void *ctx, size_t r0,
                                        size_t r1, size_t r2, size_t t1, size_t t2, uint32_t flags) {
  JOB(K3T2, f, 3, R(r0, r1, r2), R(1, t1, t2));
}
void pthreadpool_parallelize_3d_tile_2d_with_uarch(pthreadpool_t p, pthreadpool_task_3d_tile_2d_with_id_t f,
                                                   void *ctx, uint32_t du, uint32_t mu, size_t r0, size_t r1,
                                                   size_t r2, size_t t1, size_t t2, uint32_t flags) {
  (void)mu;
  job j = {K3T2U, (void (*)(void))f, ctx, 3, flags, du, R(r0, r1, r2), R(1, t1, t2), R(0), 0};
  run(p, &j);
}
void pthreadpool_parallelize_4d(pthreadpool_t p, pthreadpool_task_4d_t f, void *ctx, size_t r0, size_t r1,
                                size_t r2, size_t r3, uint32_t flags) {
  JOB(K4, f, 4, R(r0, r1, r2, r3), R(1, 1, 1, 1));
}
void pthreadpool_parallelize_4d_tile_1d(pthreadpool_t p, pthreadpool_task_4d_tile_1d_t f, void *ctx, size_t r0,
                                        size_t r1, size_t r2, size_t r3, size_t t3, uint32_t flags) {
  JOB(K4T1, f, 4, R(r0, r1, r2, r3), R(1, 1, 1, t3));
}
void pthreadpool_parallelize_4d_tile_2d(pthreadpool_t p, pthreadpool_task_4d_tile_2d_t f, void *ctx, size_t r0,
                                        size_t r1, size_t r2, size_t r3, size_t t2, size_t t3, uint32_t flags) {
  JOB(K4T2, f, 4, R(r0, r1, r2, r3), R(1, 1, t2, t3));
}
void pthreadpool_parallelize_4d_tile_2d_with_uarch(pthreadpool_t p, pthreadpool_task_4d_tile_2d_with_id_t f,
                                                   void *ctx, uint32_t du, uint32_t mu, size_t r0, size_t r1,
                                                   size_t r2, size_t r3, size_t t2, size_t t3, uint32_t flags) {
  (void)mu;
  job j = {K4T2U, (void (*)(void))f, ctx, 4, flags, du, R(r0, r1, r2, r3), R(1, 1, t2, t3), R(0), 0};
  run(p, &j);
}
void pthreadpool_parallelize_5d(pthreadpool_t p, pthreadpool_task_5d_t f, void *ctx, size_t r0, size_t r1,
                                size_t r2, size_t r3, size_t r4, uint32_t flags) {
  JOB(K5, f, 5, R(r0, r1, r2, r3, r4), R(1, 1, 1, 1, 1));
}
void pthreadpool_parallelize_5d_tile_1d(pthreadpool_t p, pthreadpool_task_5d_tile_1d_t f, void *ctx, size_t r0,
                                        size_t r1, size_t r2, size_t r3, size_t r4, size_t t4, uint32_t flags) {
  JOB(K5T1, f, 5, R(r0, r1, r2, r3, r4), R(1, 1, 1, 1, t4));
}
void pthreadpool_parallelize_5d_tile_2d(pthreadpool_t p, pthreadpool_task_5d_tile_2d_t f, void *ctx, size_t r0,
                                        size_t r1, size_t r2, size_t r3, size_t r4, size_t t3, size_t t4,
                                        uint32_t flags) {
  JOB(K5T2, f, 5, R(r0, r1, r2, r3, r4), R(1, 1, 1, t3, t4));
}
void pthreadpool_parallelize_6d(pthreadpool_t p, pthreadpool_task_6d_t f, void *ctx, size_t r0, size_t r1,
                                size_t r2, size_t r3, size_t r4, size_t r5, uint32_t flags) {
  JOB(K6, f, 6, R(r0, r1, r2, r3, r4, r5), R(1, 1, 1, 1, 1, 1));
}
void pthreadpool_parallelize_6d_tile_1d(pthreadpool_t p, pthreadpool_task_6d_tile_1d_t f, void *ctx, size_t r0,
                                        size_t r1, size_t r2, size_t r3, size_t r4, size_t r5, size_t t5,
                                        uint32_t flags) {
  JOB(K6T1, f, 6, R(r0, r1, r2, r3, r4, r5), R(1, 1, 1, 1, 1, t5));
}
void pthreadpool_parallelize_6d_tile_2d(pthreadpool_t p, pthreadpool_task_6d_tile_2d_t f, void *ctx, size_t r0,
                                        size_t r1, size_t r2, size_t r3, size_t r4, size_t r5, size_t t4,
                                        size_t t5, uint32_t flags) {
  JOB(K6T2, f, 6, R(r0, r1, r2, r3, r4, r5), R(1, 1, 1, 1, t4, t5));
}
