/* Host harness for the program loader and executor: libFuzzer entry point plus a sweep driver
 * (every truncation, every single-byte corruption of a file). Built with ASan+UBSan by
 * tests/test_robustness.py; every input must end in a named status: no crash, hang or report.
 * Operators resolve by name through the generated all-kernels table (ops_all.gen.c). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "et_runtime.h"
#include "et_bundled.h"
#include "et_schema.gen.h"

typedef struct { const char *name; et_kernel_fn fn; uint16_t state; } op_entry;
extern const op_entry et_all_ops[];
extern const uint32_t et_all_ops_n;

#define POOL_BYTES (1u << 20)
#define ARENA_BYTES (4u << 20)
#define MAX_OPS 256
static uint8_t pool_mem[POOL_BYTES] __attribute__((aligned(16)));
static uint8_t arena_mem[ARENA_BYTES] __attribute__((aligned(16)));

static const op_entry *lookup(const char *n, uint32_t nl, const char *ov, uint32_t ol) {
  char full[256];
  if (nl + ol + 2 > sizeof(full)) return 0;
  memcpy(full, n, nl); full[nl] = '.';
  memcpy(full + nl + 1, ov, ol); full[nl + 1 + ol] = 0;
  for (uint32_t i = 0; i < et_all_ops_n; i++) if (!strcmp(et_all_ops[i].name, full)) return &et_all_ops[i];
  return 0;
}

/* Returns the first non-OK status (or ET_OK). */
static et_status run_one(const uint8_t *data, size_t size) {
  static et_program prog;
  static et_bundle bundle;
  static et_method m;
  static uint8_t *copy;
  if (size > (64u << 20)) return ET_ERR_BAD_PROGRAM;
  /* An exact-size heap copy: ASan sees any read one byte past the end of the program. */
  free(copy);
  copy = (uint8_t *)malloc(size ? size : 1);
  if (!copy) return ET_ERR_OUT_OF_MEMORY;
  memcpy(copy, data, size);
  const uint8_t *p = copy;
  uint32_t n = (uint32_t)size;
  et_status st;
  bool bundled = et_is_bundle(p, n);
  if (bundled) {
    st = et_bundle_load(&bundle, p, n);
    if (st != ET_OK) return st;
    p = bundle.program; n = bundle.program_size;
  }
  st = et_program_load(&prog, p, n);
  if (st != ET_OK) return st;
  for (uint32_t mi = 0; mi < et_program_num_methods(&prog); mi++) {
    et_fb_table plan;
    if (!et_fb_vec_table(&prog.plans, mi, &plan)) return ET_ERR_BAD_PROGRAM;
    /* Arenas from the plan, packed into one buffer; too big = out of memory. */
    et_fb_vec sizes = et_fb_vector(&plan, ETFB_ExecutionPlan_non_const_buffer_sizes, 8);
    static uint8_t *arenas[16];
    static uint32_t arena_sizes[16];
    uint64_t off = 0;
    uint32_t na = sizes.len < 16 ? sizes.len : 16;
    for (uint32_t i = 0; i < na; i++) {
      uint64_t s = et_fb_vec_u64(&sizes, i);
      if (i == 0 || s == 0) { arenas[i] = 0; arena_sizes[i] = 0; continue; }
      if (s > ARENA_BYTES - off) return ET_ERR_OUT_OF_MEMORY;
      arenas[i] = arena_mem + off; arena_sizes[i] = (uint32_t)s;
      memset(arenas[i], 0, (size_t)s);   /* no state from earlier inputs: every finding replays alone */
      off = (off + s + 15) & ~15ull;
    }
    et_fb_vec opv = et_fb_vector(&plan, ETFB_ExecutionPlan_operators, 4);
    static et_kernel_fn ops[MAX_OPS];
    static uint16_t op_state[MAX_OPS];  /* kernel state and the load-time calls, as on a board */
    if (opv.len > MAX_OPS) return ET_ERR_UNSUPPORTED;
    for (uint32_t i = 0; i < opv.len; i++) {
      et_fb_table o;
      if (!et_fb_vec_table(&opv, i, &o)) return ET_ERR_BAD_PROGRAM;
      uint32_t nl = 0, ol = 0;
      const char *nm = et_fb_string(&o, ETFB_Operator_name, &nl);
      const char *ov = et_fb_string(&o, ETFB_Operator_overload, &ol);
      const op_entry *e = nm ? lookup(nm, nl, ov ? ov : "default", ov ? ol : 7) : 0;
      ops[i] = e ? e->fn : 0;
      op_state[i] = e ? e->state : 0;
    }
    if (prog.fb.err) return ET_ERR_BAD_PROGRAM;
    et_pool pool;
    et_pool_init(&pool, pool_mem, POOL_BYTES);
    et_method_memory mem = {&pool, arenas, arena_sizes, na, op_state, 0, 0, 0u, 0, 0};  /* no scratch plan: host kernels need none */
    st = et_method_load(&m, &prog, mi, &mem, ops, opv.len);
    if (st != ET_OK) return st;
    if (bundled) {
      int32_t suite = et_bundle_find_suite(&bundle, m.name, m.name_len);
      uint32_t nc = et_bundle_num_cases(&bundle, suite);
      for (uint32_t c = 0; c < nc; c++) {
        st = et_bundle_set_inputs(&bundle, suite, c, &m);
        if (st == ET_OK) st = et_method_execute(&m);
        float err; uint32_t bad;
        if (st == ET_OK) st = et_bundle_check_outputs(&bundle, suite, c, &m, 1e-5f, 1e-5f, &err, &bad);
        if (st != ET_OK) return st;
      }
    } else {
      st = et_method_fill_inputs_ones(&m);
      if (st == ET_OK) st = et_method_execute(&m);
      if (st != ET_OK) return st;
    }
  }
  return ET_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  (void)run_one(data, size);
  return 0;
}

#ifndef ET_FUZZER
/* Which case is running, printed when a sanitizer or the watchdog stops the sweep. */
static const char *cur_file, *cur_mode;
static size_t cur_k;
static int cur_v = -1;
static void report_case(void) {
  char line[512];
  int n = snprintf(line, sizeof(line), "FAILING CASE: %s %s %zu%s", cur_file, cur_mode, cur_k,
                   cur_v >= 0 ? "" : "\n");
  if (cur_v >= 0 && n > 0 && (size_t)n < sizeof(line)) snprintf(line + n, sizeof(line) - n, " 0x%02x\n", cur_v);
  ssize_t w = write(2, line, strlen(line));
  (void)w;
}
static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "HANG: a case ran longer than the watchdog\n";
  ssize_t w = write(2, msg, sizeof(msg) - 1);
  (void)w;
  report_case();
  _exit(3);
}
static void on_fatal(int sig) {   /* sanitizers abort (abort_on_error=1): name the case, then die */
  report_case();
  signal(sig, SIG_DFL);
  raise(sig);
}

static unsigned watchdog_s = 20;
static et_status run_case(const uint8_t *data, size_t size) {
  alarm(watchdog_s);
  et_status st = run_one(data, size);
  alarm(0);
  return st;
}

/* sweep <file> truncate|corrupt [stride]   every prefix / a changed byte at every offset
 *       <file> once                        the file as it is
 *       <file> at <offset> <value>         one corruption (to replay a failing case)
 * Prints a histogram of statuses; exit 0 = every case ended in a named status. */
int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s file truncate|corrupt|once|at [stride|offset value]\n", argv[0]); return 2; }
  FILE *f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 2; }
  static uint8_t buf[64u << 20];
  size_t n = fread(buf, 1, sizeof(buf), f);
  fclose(f);
  static uint8_t work[64u << 20];
  unsigned long hist[16] = {0};
  size_t stride = argc > 3 ? (size_t)atol(argv[3]) : 1;
  if (!stride) stride = 1;
  if (getenv("ET_SWEEP_WATCHDOG_S")) watchdog_s = (unsigned)atoi(getenv("ET_SWEEP_WATCHDOG_S"));
  cur_file = argv[1]; cur_mode = argv[2];
  signal(SIGALRM, on_alarm);
  signal(SIGABRT, on_fatal);
  signal(SIGSEGV, on_fatal);
  signal(SIGBUS, on_fatal);
  if (!strcmp(argv[2], "once")) {
    et_status st = run_case(buf, n);
    printf("status %d %s\n", st, et_status_name(st));
    return st == ET_OK ? 0 : 1;
  } else if (!strcmp(argv[2], "at")) {
    if (argc < 5) return 2;
    cur_k = (size_t)atol(argv[3]); cur_v = (int)strtol(argv[4], 0, 0);
    if (cur_k >= n) return 2;
    memcpy(work, buf, n);
    work[cur_k] = (uint8_t)cur_v;
    et_status st = run_case(work, n);
    printf("status %d %s\n", st, et_status_name(st));
    return 0;
  } else if (!strcmp(argv[2], "truncate")) {
    for (size_t k = 0; k < n; k += stride) { cur_k = k; hist[run_case(buf, k) & 15]++; }
  } else if (!strcmp(argv[2], "corrupt")) {
    const uint8_t vals[] = {0x00, 0xFF, 0x80, 0x7F, 0x01};
    for (size_t k = 0; k < n; k += stride) {
      memcpy(work, buf, n);
      uint8_t v = vals[k % sizeof(vals)];
      work[k] = work[k] == v ? (uint8_t)(v ^ 0x55) : v;
      cur_k = k; cur_v = work[k];
      hist[run_case(work, n) & 15]++;
    }
    cur_v = -1;
  } else {
    fprintf(stderr, "unknown mode %s\n", argv[2]);
    return 2;
  }
  for (int s = 0; s < 16; s++) if (hist[s]) printf("%s: %lu\n", et_status_name((et_status)s), hist[s]);
  return 0;
}
#endif
