/* Linux board support (host gcc, static AArch64 under qemu-aarch64 or on Android): the link is
 * stdout/stdin, cycles are CLOCK_MONOTONIC nanoseconds, exit is _exit(status). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "bsp.h"
#include "bsp_config.h"

__attribute__((weak)) void bsp_fault_hook(uint32_t pc, uint32_t lr, uint32_t fault_addr, uint32_t status) {
  (void)pc; (void)lr; (void)fault_addr; (void)status;
}

static void on_fault(int sig, siginfo_t *si, void *ctx) {
  (void)ctx;
  bsp_fault_hook(0, 0, (uint32_t)(uintptr_t)si->si_addr, (uint32_t)sig);
  _exit(BSP_EXIT_FAULT);
}

void bsp_init(void) {
  struct sigaction sa = {0};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigaction(SIGSEGV, &sa, 0);
  sigaction(SIGBUS, &sa, 0);
  sigaction(SIGILL, &sa, 0);
  sigaction(SIGFPE, &sa, 0);
  signal(SIGPIPE, SIG_IGN);
}

void bsp_write(const uint8_t *buf, size_t len) {
  while (len) {
    ssize_t n = write(1, buf, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    buf += n;
    len -= (size_t)n;
  }
}

int bsp_read(uint8_t *buf, size_t len, uint32_t timeout_ms) {
  struct pollfd p = {.fd = 0, .events = POLLIN};
  int r;
  do {
    r = poll(&p, 1, (int)timeout_ms);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return -1;
  if (r == 0) return 0;
  ssize_t n = read(0, buf, len);
  if (n < 0) return errno == EAGAIN ? 0 : -1;
  return n == 0 ? -1 : (int)n;   /* end of input: no more RX */
}

uint64_t bsp_cycles(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint32_t bsp_cycles_hz(void) { return 1000000000u; }

void bsp_exit(int status) { _exit(status); }
