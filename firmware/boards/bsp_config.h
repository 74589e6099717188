/* Board parameters arrive as -D defines rendered from boards/<board>.toml (etdeploy.config.bsp_defines).
 * Defaults here only so a file compiles on its own; a real build always passes them. */
#ifndef ET_BSP_CONFIG_H
#define ET_BSP_CONFIG_H

#ifndef BSP_BOARD_NAME
#define BSP_BOARD_NAME "unknown"
#endif
#ifndef BSP_CYCLES_HZ
#define BSP_CYCLES_HZ 1000000u
#endif
#ifndef BSP_UART_BAUD
#define BSP_UART_BAUD 115200u
#endif
#ifndef BSP_UART_CLOCK_HZ
#define BSP_UART_CLOCK_HZ 25000000u
#endif

/* Exit statuses the BSP itself uses (the runtime uses its own small codes below these). */
#define BSP_EXIT_FAULT 0x7E          /* a CPU fault: HardFault/MemManage/BusFault/UsageFault */
#define BSP_EXIT_UNHANDLED 0x7D      /* an interrupt nobody installed */

#endif
