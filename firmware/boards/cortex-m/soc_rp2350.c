/* RP2350 (Pico 2): the boot ROM's IMAGE_DEF block, and the bring-up the UART needs after the ROM:
 * crystal oscillator on, clk_ref/clk_sys from it (12 MHz on the Pico 2), clk_peri enabled,
 * UART0/IO/pads out of reset, GPIO0/1 muxed to UART0 with pad isolation cleared.
 * Compiled in when BSP_SOC_RP2350 (boards/pico2.toml defines). Built here, not run here. */
#include "bsp.h"
#include "bsp_config.h"
#include "cortex_m.h"

#if defined(BSP_SOC_RP2350) && BSP_SOC_RP2350
/* Minimal IMAGE_DEF (RP2350 datasheet, boot ROM "blocks"): start marker, one IMAGE_TYPE item
 * (EXE | security S | CPU Arm | chip RP2350), the LAST item holding the items' size in words, a
 * relative link of 0 (the block loops to itself), end marker. It must sit in the first 4 KB of
 * flash; the linker script puts .picobin_block right after the vector table, and with no
 * VECTOR_TABLE item the ROM uses the table at the start of the image. */
__attribute__((section(".picobin_block"), used, aligned(4)))
const uint32_t bsp_picobin_image_def[5] = {
  0xFFFFDED3u,            /* PICOBIN_BLOCK_MARKER_START */
  0x10210142u,            /* item 0x42 IMAGE_TYPE, size 1 word, flags 0x1021 */
  0x000001FFu,            /* item 0xFF LAST, items size = 1 word */
  0x00000000u,            /* link to next block: 0 = this block only */
  0xAB123579u,            /* PICOBIN_BLOCK_MARKER_END */
};

#define XOSC_BASE     0x40048000u
#define CLOCKS_BASE   0x40010000u
#define RESETS_BASE   0x40020000u
#define IO_BANK0_BASE 0x40028000u
#define PADS_BANK0_BASE 0x40038000u
#define ATOMIC_CLR    0x3000u

#define XOSC_CTRL     REG32(XOSC_BASE + 0x00u)
#define XOSC_STATUS   REG32(XOSC_BASE + 0x04u)
#define XOSC_STARTUP  REG32(XOSC_BASE + 0x0Cu)
#define CLK_REF_CTRL  REG32(CLOCKS_BASE + 0x30u)
#define CLK_REF_SEL   REG32(CLOCKS_BASE + 0x38u)
#define CLK_SYS_CTRL  REG32(CLOCKS_BASE + 0x3Cu)
#define CLK_SYS_SEL   REG32(CLOCKS_BASE + 0x44u)
#define CLK_PERI_CTRL REG32(CLOCKS_BASE + 0x48u)
#define RESETS_RESET_CLR REG32(RESETS_BASE + ATOMIC_CLR + 0x00u)
#define RESETS_DONE   REG32(RESETS_BASE + 0x08u)

#define RESET_IO_BANK0   (1u << 6)
#define RESET_PADS_BANK0 (1u << 9)
#define RESET_UART0      (1u << 26)

void bsp_soc_init(void) {
  /* 12 MHz crystal: range 1-15 MHz, ~1 ms start-up, enable. */
  XOSC_STARTUP = 47u;
  XOSC_CTRL = (0xFABu << 12) | 0xAA0u;
  while (!(XOSC_STATUS & (1u << 31))) {}
  CLK_REF_CTRL = 2u;                           /* clk_ref <- xosc */
  while (!(CLK_REF_SEL & (1u << 2))) {}
  CLK_SYS_CTRL = 0u;                           /* clk_sys <- clk_ref */
  while (!(CLK_SYS_SEL & 1u)) {}
  CLK_PERI_CTRL = (1u << 11);                  /* enable, aux source clk_sys */

  uint32_t mask = RESET_IO_BANK0 | RESET_PADS_BANK0 | RESET_UART0;
  RESETS_RESET_CLR = mask;
  while ((RESETS_DONE & mask) != mask) {}

  /* GPIO0 = UART0 TX, GPIO1 = UART0 RX (function 2); pads: input enabled, isolation off. */
  REG32(IO_BANK0_BASE + 0x04u) = 2u;
  REG32(IO_BANK0_BASE + 0x0Cu) = 2u;
  REG32(PADS_BANK0_BASE + 0x04u) = (REG32(PADS_BANK0_BASE + 0x04u) & ~(1u << 8) & ~(1u << 7)) | (1u << 6);
  REG32(PADS_BANK0_BASE + 0x08u) = (REG32(PADS_BANK0_BASE + 0x08u) & ~(1u << 8) & ~(1u << 7)) | (1u << 6);
}
#endif
