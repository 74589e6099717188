/* Cortex-M system registers the BSP uses (architectural addresses, same on every core here). */
#ifndef ET_CORTEX_M_H
#define ET_CORTEX_M_H
#include <stdint.h>

#define REG32(a) (*(volatile uint32_t *)(uintptr_t)(a))

#define SCB_CFSR   REG32(0xE000ED28u)
#define SCB_HFSR   REG32(0xE000ED2Cu)
#define SCB_MMFAR  REG32(0xE000ED34u)
#define SCB_BFAR   REG32(0xE000ED38u)
#define CFSR_MMARVALID (1u << 7)
#define CFSR_BFARVALID (1u << 15)

#define SYST_CSR   REG32(0xE000E010u)
#define SYST_RVR   REG32(0xE000E014u)
#define SYST_CVR   REG32(0xE000E018u)

#define DCB_DHCSR  REG32(0xE000EDF0u)
#define DCB_DEMCR  REG32(0xE000EDFCu)
#define DEMCR_TRCENA (1u << 24)
#define DWT_CTRL   REG32(0xE0001000u)
#define DWT_CYCCNT REG32(0xE0001004u)
#define DWT_CTRL_NOCYCCNT (1u << 25)
#define DWT_CTRL_CYCCNTENA 1u

void bsp_uart_init(void);
void bsp_uart_flush(void);
void bsp_cycles_init(void);
void bsp_soc_init(void);

#endif
