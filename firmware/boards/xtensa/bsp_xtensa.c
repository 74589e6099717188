/* Xtensa (QEMU sim) board support: the link leaves by semihosting (simcall write to fd 1, no RX),
 * cycles are CCOUNT widened to 64 bits, exit is the simcall exit (status reaches the shell). */
#include "bsp.h"
#include "bsp_config.h"

extern uint32_t __data_start[], __data_end[], __data_load[];
extern uint32_t __bss_start[], __bss_end[];
extern int main(void);

#define SIMCALL_EXIT 1
#define SIMCALL_READ 3
#define SIMCALL_WRITE 4

static int simcall(int nr, int a, int b, int c) {
  register int a2 __asm__("a2") = nr;
  register int a3 __asm__("a3") = a;
  register int a4 __asm__("a4") = b;
  register int a5 __asm__("a5") = c;
  __asm__ volatile("simcall" : "+r"(a2), "+r"(a3) : "r"(a4), "r"(a5) : "memory");
  return a2;
}

__attribute__((weak)) void bsp_fault_hook(uint32_t pc, uint32_t lr, uint32_t fault_addr, uint32_t status) {
  (void)pc; (void)lr; (void)fault_addr; (void)status;
}

__attribute__((noreturn, used)) void bsp_start_c(void) {
  uint32_t *src = __data_load, *dst = __data_start;
  if (src != dst)
    while (dst < __data_end) *dst++ = *src++;
  for (dst = __bss_start; dst < __bss_end;) *dst++ = 0;
  bsp_exit(main());
}

void bsp_init(void) {}

void bsp_write(const uint8_t *buf, size_t len) {
  while (len) {
    int n = simcall(SIMCALL_WRITE, 1, (int)(uintptr_t)buf, (int)len);
    if (n <= 0) return;
    buf += n;
    len -= (size_t)n;
  }
}

int bsp_read(uint8_t *buf, size_t len, uint32_t timeout_ms) {
  (void)buf; (void)len; (void)timeout_ms;
  return -1;   /* no RX: a blocking simcall read would stall the machine; inputs are baked */
}

static uint32_t cc_last, cc_hi;

uint64_t bsp_cycles(void) {
  uint32_t now;
  __asm__ volatile("rsr %0, ccount" : "=r"(now));
  if (now < cc_last) cc_hi++;   /* widened: needs one call per 2^32 cycles (107 s at 40 MHz) */
  cc_last = now;
  return ((uint64_t)cc_hi << 32) | now;
}

uint32_t bsp_cycles_hz(void) { return BSP_CYCLES_HZ; }

void bsp_exit(int status) {
  for (;;) simcall(SIMCALL_EXIT, status, 0, 0);
}
