/* Arm PrimeCell PL011 UART (RP2350 UART0 and others): link TX/RX. Compiled in when BSP_UART_PL011. */
#include "bsp.h"
#include "bsp_config.h"
#include "cortex_m.h"

#if defined(BSP_UART_PL011) && BSP_UART_PL011
#define UART_DR   REG32(BSP_UART_BASE + 0x00u)
#define UART_FR   REG32(BSP_UART_BASE + 0x18u)
#define UART_IBRD REG32(BSP_UART_BASE + 0x24u)
#define UART_FBRD REG32(BSP_UART_BASE + 0x28u)
#define UART_LCRH REG32(BSP_UART_BASE + 0x2Cu)
#define UART_CR   REG32(BSP_UART_BASE + 0x30u)
#define FR_BUSY (1u << 3)
#define FR_RXFE (1u << 4)
#define FR_TXFF (1u << 5)

void bsp_uart_init(void) {
  UART_CR = 0;
  /* divisor = clock / (16 * baud) in 16.6 fixed point */
  uint32_t div64 = (uint32_t)(((uint64_t)BSP_UART_CLOCK_HZ * 4u + BSP_UART_BAUD / 2u) / BSP_UART_BAUD);
  UART_IBRD = div64 >> 6;
  UART_FBRD = div64 & 63u;
  UART_LCRH = (3u << 5) | (1u << 4);        /* 8N1, FIFOs on (also latches the divisors) */
  UART_CR = (1u << 0) | (1u << 8) | (1u << 9);
}

void bsp_uart_flush(void) {
  while (UART_FR & FR_BUSY) {}
}

void bsp_write(const uint8_t *buf, size_t len) {
  for (size_t i = 0; i < len; i++) {
    while (UART_FR & FR_TXFF) {}
    UART_DR = buf[i];
  }
}

int bsp_read(uint8_t *buf, size_t len, uint32_t timeout_ms) {
  size_t n = 0;
  uint64_t start = bsp_cycles();
  uint64_t limit = (uint64_t)timeout_ms * (BSP_CYCLES_HZ / 1000u);
  while (n < len) {
    if (!(UART_FR & FR_RXFE)) {
      buf[n++] = (uint8_t)UART_DR;
      continue;
    }
    if (n) break;
    if (bsp_cycles() - start >= limit) break;
  }
  return (int)n;
}
#endif
