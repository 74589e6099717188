/* Cortex-M board support: init order, cycle counter (DWT CYCCNT when it counts, else a 64-bit
 * counter built on SysTick), and exit (semihosting SYS_EXIT_EXTENDED so the status reaches the
 * host, or halt on boards without a debugger). */
#include "bsp.h"
#include "bsp_config.h"
#include "cortex_m.h"

void bsp_init(void) {
  bsp_soc_init();
  bsp_uart_init();
  bsp_cycles_init();
}

uint32_t bsp_cycles_hz(void) { return BSP_CYCLES_HZ; }

/* ---- cycles ---- */
static int use_dwt;
static uint32_t dwt_last, dwt_hi;
static volatile uint32_t systick_wraps;

void SysTick_Handler(void) { systick_wraps++; }

void bsp_cycles_init(void) {
#if defined(BSP_CYCLES_DWT) && BSP_CYCLES_DWT
  DCB_DEMCR |= DEMCR_TRCENA;
  if (!(DWT_CTRL & DWT_CTRL_NOCYCCNT)) {
    DWT_CYCCNT = 0;
    DWT_CTRL |= DWT_CTRL_CYCCNTENA;
    uint32_t a = DWT_CYCCNT;
    for (volatile int i = 0; i < 8; i++) {}
    /* QEMU has no DWT: CYCCNT stays 0 there, so SysTick is used instead. */
    use_dwt = DWT_CYCCNT != a;
  }
#endif
#if defined(BSP_CYCLES_SYSTICK) && BSP_CYCLES_SYSTICK
  if (!use_dwt) {
    SYST_RVR = 0x00FFFFFFu;
    SYST_CVR = 0;
    SYST_CSR = 7u;   /* enable, interrupt on wrap, processor clock */
    /* VAL reads 0 until the first reload: wait for it so the count starts from the top. */
    for (int i = 0; i < 100000 && SYST_CVR == 0; i++) {}
  }
#endif
}

uint64_t bsp_cycles(void) {
  if (use_dwt) {
    uint32_t now = DWT_CYCCNT;   /* widened to 64 bits: needs one call per 2^32 cycles */
    if (now < dwt_last) dwt_hi++;
    dwt_last = now;
    return ((uint64_t)dwt_hi << 32) | now;
  }
#if defined(BSP_CYCLES_SYSTICK) && BSP_CYCLES_SYSTICK
  uint32_t hi, v;
  do {
    hi = systick_wraps;
    v = SYST_CVR;
  } while (hi != systick_wraps);
  return ((uint64_t)hi << 24) | (0x00FFFFFFu - (v & 0x00FFFFFFu));
#else
  return 0;
#endif
}

/* ---- exit ---- */
#define SEMI_SYS_EXIT 0x18u
#define SEMI_SYS_EXIT_EXTENDED 0x20u
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u
#define ADP_STOPPED_RUNTIME_ERROR 0x20023u

#if defined(BSP_EXIT_SEMIHOST) && BSP_EXIT_SEMIHOST
static uint32_t semihost(uint32_t op, const void *arg) {
  register uint32_t r0 __asm__("r0") = op;
  register const void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}
#endif

volatile int bsp_exit_status;   /* for a debugger on boards that halt */

#if defined(BSP_STACK_PAINT) && BSP_STACK_PAINT
void bsp_stack_report(void);   /* startup.c */
#endif

void bsp_exit(int status) {
  bsp_uart_flush();
#if defined(BSP_STACK_PAINT) && BSP_STACK_PAINT
  bsp_stack_report();
#endif
  bsp_exit_status = status;
#if defined(BSP_EXIT_SEMIHOST) && BSP_EXIT_SEMIHOST
  uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)status};
  semihost(SEMI_SYS_EXIT_EXTENDED, block);
  /* Hosts without the extended call: only success/failure gets through. */
  semihost(SEMI_SYS_EXIT, (const void *)(uintptr_t)(status == 0 ? ADP_STOPPED_APPLICATION_EXIT
                                                                   : ADP_STOPPED_RUNTIME_ERROR));
#endif
  __asm__ volatile("cpsid i");
  for (;;) __asm__ volatile("wfi");
}
