/* Board support interface: one implementation per board family (firmware/boards/<family>/).
 * The runtime core calls only these; it never touches hardware or stdio itself. */
#ifndef ET_BSP_H
#define ET_BSP_H
#include <stddef.h>
#include <stdint.h>

void bsp_init(void);                               /* clocks, UART, cycle counter */
void bsp_write(const uint8_t *buf, size_t len);    /* link TX: UART, or stdout on Linux */
/* Link RX, blocking up to timeout_ms (0 = poll). Returns bytes read, 0 on timeout, <0 no RX. */
int bsp_read(uint8_t *buf, size_t len, uint32_t timeout_ms);
uint64_t bsp_cycles(void);                         /* monotonic: DWT/SysTick, CCOUNT, clock_gettime */
uint32_t bsp_cycles_hz(void);                      /* rate of bsp_cycles, for reports */
void bsp_exit(int status) __attribute__((noreturn)); /* semihosting exit / _exit: status reaches the host */

/* Called by the BSP's fault handler before exiting; the runtime implements it to send a fault
 * record over the link (a weak default in the BSP just exits). */
void bsp_fault_hook(uint32_t pc, uint32_t lr, uint32_t fault_addr, uint32_t status);

#endif
