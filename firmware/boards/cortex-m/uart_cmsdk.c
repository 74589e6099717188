/* Arm CMSDK APB UART (MPS2/MPS3 boards, Corstone): link TX/RX. Compiled in when BSP_UART_CMSDK. */
#include "bsp.h"
#include "bsp_config.h"
#include "cortex_m.h"

#if defined(BSP_UART_CMSDK) && BSP_UART_CMSDK
#define UART_DATA  REG32(BSP_UART_BASE + 0x00u)
#define UART_STATE REG32(BSP_UART_BASE + 0x04u)
#define UART_CTRL  REG32(BSP_UART_BASE + 0x08u)
#define UART_BAUD  REG32(BSP_UART_BASE + 0x10u)
#define STATE_TXFULL 1u
#define STATE_RXFULL 2u

void bsp_uart_init(void) {
  uint32_t div = BSP_UART_CLOCK_HZ / BSP_UART_BAUD;
  UART_BAUD = div < 16u ? 16u : div;
  UART_CTRL = 3u;   /* TX and RX enabled, no interrupts */
}

void bsp_uart_flush(void) {
  while (UART_STATE & STATE_TXFULL) {}
}

void bsp_write(const uint8_t *buf, size_t len) {
  for (size_t i = 0; i < len; i++) {
    while (UART_STATE & STATE_TXFULL) {}
    UART_DATA = buf[i];
  }
}

int bsp_read(uint8_t *buf, size_t len, uint32_t timeout_ms) {
  size_t n = 0;
  uint64_t start = bsp_cycles();
  uint64_t limit = (uint64_t)timeout_ms * (BSP_CYCLES_HZ / 1000u);
  while (n < len) {
    if (UART_STATE & STATE_RXFULL) {
      buf[n++] = (uint8_t)UART_DATA;
      continue;
    }
    if (n) break;                         /* return what arrived; the caller asks again */
    if (bsp_cycles() - start >= limit) break;
  }
  return (int)n;
}
#endif
