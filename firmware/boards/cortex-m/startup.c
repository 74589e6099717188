/* Cortex-M start-up: vector table, reset (FPU on, .data copied from its load address, .bss zeroed,
 * main, bsp_exit), and one fault handler that reports the stacked PC/LR and the fault status
 * registers through bsp_fault_hook, then exits with BSP_EXIT_FAULT.
 * Symbols come from the linker script rendered from the board's memory map (firmware/ld). */
#include <stdint.h>
#include "bsp.h"
#include "bsp_config.h"
#include "cortex_m.h"

extern uint32_t __stack_top[], __stack_bottom[];
extern uint32_t __data_start[], __data_end[], __data_load[];
extern uint32_t __bss_start[], __bss_end[];
extern int main(void);

void Reset_Handler(void);
void bsp_fault_entry(void);
void bsp_unhandled(void);
void SysTick_Handler(void);

/* 16 system exceptions + 48 interrupts: enough for the boards here; unused ones trap. */
#define N_IRQ 48
typedef void (*vector_fn)(void);
__attribute__((section(".vectors"), used, aligned(256)))
const vector_fn bsp_vectors[16 + N_IRQ] = {
  (vector_fn)(uintptr_t)__stack_top,
  Reset_Handler,
  bsp_unhandled,        /* NMI */
  bsp_fault_entry,      /* HardFault */
  bsp_fault_entry,      /* MemManage */
  bsp_fault_entry,      /* BusFault */
  bsp_fault_entry,      /* UsageFault */
  bsp_fault_entry,      /* SecureFault (v8-M) */
  0, 0, 0,
  bsp_unhandled,        /* SVC */
  bsp_unhandled,        /* DebugMon */
  0,
  bsp_unhandled,        /* PendSV */
  SysTick_Handler,
  [16 ... 16 + N_IRQ - 1] = bsp_unhandled,
};

/* Weak hooks: a board's SoC file (clocks, pads) and the runtime override them. */
__attribute__((weak)) void bsp_soc_init(void) {}
__attribute__((weak)) void bsp_fault_hook(uint32_t pc, uint32_t lr, uint32_t fault_addr, uint32_t status) {
  (void)pc; (void)lr; (void)fault_addr; (void)status;
}

#if defined(BSP_STACK_PAINT) && BSP_STACK_PAINT
/* Build option stack_paint=1 (tests): the free stack is painted before main and the bytes ever
 * used are printed through semihosting (SYS_WRITE0) by bsp_exit, to check etdeploy.stack_budget. */
#define STACK_PAINT 0x5AC3A55Cu
static void stack_paint(void) {
  uint32_t *sp;
  __asm volatile("mov %0, sp" : "=r"(sp));
  for (volatile uint32_t *p = __stack_bottom; p < sp - 16;) *p++ = STACK_PAINT;
}

void bsp_stack_report(void) {   /* from bsp_exit: main never returns */
  const uint32_t *p = __stack_bottom;
  while (p < __stack_top && *p == STACK_PAINT) p++;
  uint32_t used = (uint32_t)((const char *)__stack_top - (const char *)p);
  char line[48] = "etdeploy: stack used ", digits[12];
  int n = 0, i = 21;
  do digits[n++] = (char)('0' + used % 10u); while ((used /= 10u) != 0u);
  while (n) line[i++] = digits[--n];
  line[i++] = '\n';
  line[i] = 0;
  register uint32_t r0 __asm__("r0") = 0x04u;    /* SYS_WRITE0 */
  register const char *r1 __asm__("r1") = line;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
}
#endif

__attribute__((noreturn, used)) void bsp_start_c(void) {
  uint32_t *src = __data_load, *dst = __data_start;
  if (src != dst)
    while (dst < __data_end) *dst++ = *src++;
  for (dst = __bss_start; dst < __bss_end;) *dst++ = 0;
#if defined(BSP_STACK_PAINT) && BSP_STACK_PAINT
  stack_paint();
#endif
  int status = main();
  bsp_exit(status);
}

/* Naked so that nothing (no FP or MVE instruction the compiler might pick for a copy loop) runs
 * before the FPU is enabled. */
__attribute__((naked, noreturn)) void Reset_Handler(void) {
  __asm volatile(
#if defined(BSP_FPU) && BSP_FPU
    "ldr r0, =0xE000ED88\n"          /* CPACR: CP10/CP11 (FPU and MVE) full access */
    "ldr r1, [r0]\n"
    "orr r1, r1, #(0xF << 20)\n"
    "str r1, [r0]\n"
    "dsb\n"
    "isb\n"
#endif
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
    "ldr r0, =__stack_bottom\n"      /* v8-M: a stack overflow faults instead of corrupting data */
    "msr msplim, r0\n"
#endif
    "ldr r0, =__stack_top\n"
    "mov sp, r0\n"
    "b bsp_start_c\n"
    ".ltorg\n");
}

__attribute__((naked)) void bsp_fault_entry(void) {
  __asm volatile(
    "tst lr, #4\n"
    "ite eq\n"
    "mrseq r0, msp\n"
    "mrsne r0, psp\n"
    "mov r1, lr\n"
    "b bsp_fault_c\n");
}

__attribute__((noreturn, used)) void bsp_fault_c(const uint32_t *frame, uint32_t exc_return) {
  (void)exc_return;
  uint32_t cfsr = SCB_CFSR, hfsr = SCB_HFSR, addr = 0;
  if (cfsr & CFSR_MMARVALID) addr = SCB_MMFAR;
  else if (cfsr & CFSR_BFARVALID) addr = SCB_BFAR;
  uint32_t pc = 0, lr = 0;
  /* The frame is only trusted when it lies in the stack (a stacking fault leaves it anywhere). */
  if ((uintptr_t)frame >= (uintptr_t)__stack_bottom && (uintptr_t)(frame + 8) <= (uintptr_t)__stack_top) {
    lr = frame[5];
    pc = frame[6];
  }
  bsp_fault_hook(pc, lr, addr, cfsr ? cfsr : hfsr);
  bsp_exit(BSP_EXIT_FAULT);
}

__attribute__((noreturn)) void bsp_unhandled(void) {
  bsp_exit(BSP_EXIT_UNHANDLED);
}
