/* Xtensa lx106 reset entry. QEMU's sim machine with -kernel resets the CPU to 0x50000000
 * (sysrom0), where the linker script puts .vectors: jump over the literals, set the stack, and
 * call0 into C (the lx106 toolchain uses the call0 ABI, no register windows). */
    .section .vectors, "ax"
    .global Reset_Handler
    .global _start
    .type Reset_Handler, @function
    .align 4
Reset_Handler:
_start:
    j 1f
    .align 4
    .literal_position
    .align 4
1:
    movi a0, 0
    movi a1, __stack_top
    call0 bsp_start_c
2:
    j 2b
    .size Reset_Handler, . - Reset_Handler
