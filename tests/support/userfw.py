"""A stand-in for a product team's own firmware, used by tests/test_lib.py: an application that
drives libetmodel.a through etmodel.h only, built by CMake against the generated package, with (for
Cortex-M) its own vector table, reset handler, UART and linker script, none of them etdeploy's.

For each method's first bundled case the application sets the inputs, executes, and prints each
output as one line `OUT <case> <i> <hex bytes>` and `CYCLES <n>` through its own etmodel_port_write
(overriding the library's weak default), then `DONE <status>`."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from etdeploy import fbs
from etdeploy.pte import ProgramInfo

APP_C = r"""
#include <stddef.h>
#include <stdint.h>
#include "etmodel.h"
#include "case.h"

void user_emit(const char *s, size_t n);    /* stdout, or the user's UART */

/* The user's own log hook: replaces the library's weak default. */
void etmodel_port_write(const char *text, size_t len) { user_emit(text, len); }

static void puts_(const char *s) { size_t n = 0; while (s[n]) n++; user_emit(s, n); }

static void dec(uint64_t v) {
  char b[24]; int k = 23; b[k] = ' ';
  do { b[--k] = (char)('0' + v % 10u); v /= 10u; } while (v && k > 0);
  user_emit(b + k, (size_t)(24 - k));
}

static void hex_line(uint32_t c, uint32_t i, const uint8_t *p, size_t n) {
  static const char hx[] = "0123456789abcdef";
  char b[64];
  size_t k = 0;
  puts_("OUT "); dec(c); dec(i);
  for (size_t j = 0; j < n; j++) {
    b[k++] = hx[p[j] >> 4]; b[k++] = hx[p[j] & 15];
    if (k == sizeof b) { user_emit(b, k); k = 0; }
  }
  b[k++] = '\n';
  user_emit(b, k);
}

int app_run(void) {
  int st = etmodel_init();
  if (st != ETMODEL_OK) { puts_("DONE init-failed\n"); return 2; }
  /* a wrong byte count is refused, and reported through the weak etmodel_port_fault -> our write */
  if (etmodel_set_input(cases[0].method, 0, cases[0].in[0], 1) == ETMODEL_OK) { puts_("DONE bad-size-accepted\n"); return 3; }
  for (uint32_t c = 0; c < CASE_N; c++) {
    const app_case *k = &cases[c];
    for (uint32_t i = 0; i < k->n_in; i++) {
      st = etmodel_set_input(k->method, i, k->in[i], k->bytes[i]);
      if (st != ETMODEL_OK) { puts_("DONE set-input-failed\n"); return 2; }
    }
    st = etmodel_execute(k->method);
    if (st != ETMODEL_OK) { puts_("DONE execute-failed\n"); return 2; }
    for (uint32_t i = 0; i < k->n_out; i++) {
      size_t n = 0;
      const uint8_t *p = (const uint8_t *)etmodel_output(k->method, i, &n);
      if (!p) { puts_("DONE no-output\n"); return 2; }
      hex_line(c, i, p, n);
    }
    /* the header's per-method constants agree with what the runtime holds */
    size_t n0 = 0;
    etmodel_output(k->method, 0, &n0);
    if (n0 != k->out0_bytes) { puts_("DONE metadata-mismatch\n"); return 3; }
    size_t used = etmodel_pool_used(k->method);
    if (used == 0 || used > k->pool_bytes) { puts_("DONE pool-constant-too-small\n"); return 3; }
    puts_("CYCLES "); dec(etmodel_last_cycles(k->method)); puts_("\n");
  }
  puts_("DONE ok\n");
  return 0;
}
"""

HOST_MAIN_C = r"""
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
int app_run(void);
void user_emit(const char *s, size_t n) { fwrite(s, 1, n, stdout); }
/* The user's timer for etmodel_last_cycles (replaces the weak default, which counts nothing). */
uint64_t etmodel_port_cycles(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
int main(void) { return app_run(); }
"""

# Cortex-M55 on QEMU mps3-an547: the user's vector table, reset handler, CMSDK UART and
# semihosting exit, written here and nowhere in etdeploy.
CM_START_C = r"""
#include <stddef.h>
#include <stdint.h>
extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
int app_run(void);
void Reset_Handler(void);
static void Trap(void) { for (;;) {} }

__attribute__((section(".isr_vector"), used))
static void (*const vectors[16])(void) = {
  (void (*)(void))(&_estack), Reset_Handler, Trap, Trap, Trap, Trap, Trap, 0, 0, 0, 0, Trap, Trap, 0, Trap, Trap,
};

#define UART ((volatile uint32_t *)USER_UART_BASE)   /* CMSDK UART0: DATA, STATE, CTRL, INTSTATUS, BAUDDIV */
void user_emit(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) { while (UART[1] & 1u) {} UART[0] = (uint8_t)s[i]; }
}

static void semihost_exit(int ok) {
  register uint32_t r0 __asm__("r0") = 0x18u;                      /* SYS_EXIT */
  register uint32_t r1 __asm__("r1") = ok ? 0x20026u : 0x20024u;  /* ApplicationExit / InternalError */
  __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
  for (;;) {}
}

void Reset_Handler(void) {
  uint32_t *s = &_sidata, *d = &_sdata;
  while (d < &_edata) *d++ = *s++;
  for (d = &_sbss; d < &_ebss; ) *d++ = 0;
  *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;                /* CPACR: FPU/MVE on */
  __asm__ volatile("dsb\n isb");
  UART[4] = 16u;                                                   /* BAUDDIV */
  UART[2] = 1u;                                                    /* CTRL: TX enable */
  semihost_exit(app_run() == 0);
}
"""

# The user's boards as the user knows them (QEMU machine, UART0, regions: origin, length).
TARGETS = {
    "corstone300": {"machine": "mps3-an547", "uart": 0x59303000, "FLASH": (0x10000000, "512K"),
                    "RAM": (0x30000000, "512K"), "BIG": (0x31000000, "4M")},
    "mps2-an386": {"machine": "mps2-an386", "uart": 0x40004000, "FLASH": (0x00000000, "4M"),
                   "RAM": (0x20000000, "4M"), "BIG": (0x21000000, "16M")},
}

# The user's linker script: regions of the board as the user sees them, the library's sections
# placed where the user wants them (model in ITCM flash, arenas and pools in ISRAM).
CM_LD = """
MEMORY {
  FLASH (rx) : ORIGIN = @FLASH@
  RAM (rw)   : ORIGIN = @RAM@
  BIG (rw)   : ORIGIN = @BIG@
}
ENTRY(Reset_Handler)
SECTIONS {
  .isr_vector : { KEEP(*(.isr_vector)) } > FLASH
  .text : { *(.text .text.*) *(.rodata .rodata.*) } > FLASH
  .ARM.exidx : { *(.ARM.exidx*) } > FLASH
  @MODEL@
  .data : { _sdata = .; *(.data .data.*) . = ALIGN(4); _edata = .; } > RAM AT > FLASH
  _sidata = LOADADDR(.data);
  .bss (NOLOAD) : { _sbss = .; *(.bss .bss.* COMMON) . = ALIGN(4); _ebss = .; } > RAM
  @ARENAS@
  _estack = ORIGIN(RAM) + LENGTH(RAM);
}
"""
CM_USER_BIG = ".user_big (NOLOAD) : ALIGN(16) { *(.user_big .user_big.*) } > BIG"
CM_MODEL = ".et_model : ALIGN(64) { KEEP(*(.et_model .et_model.*)) } > FLASH"
CM_ARENAS = (".et_arena (NOLOAD) : ALIGN(16) { *(.et_arena .et_arena.*) } > BIG\n"
             "  .et_pool (NOLOAD) : ALIGN(16) { *(.et_pool .et_pool.*) } > BIG")

TOOLCHAIN_CMAKE = """
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_C_FLAGS_INIT "{arch}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostartfiles --specs=nano.specs -Wl,--gc-sections")
"""

CMAKELISTS = """
cmake_minimum_required(VERSION 3.20)
project(userfw C)
find_package(etmodel 1.0 REQUIRED PATHS "${{ETMODEL_PACKAGE}}" NO_DEFAULT_PATH)
add_executable(app app.c {main})
target_link_libraries(app PRIVATE etmodel::etmodel)
{extra}
"""


def bundled_cases(prog: ProgramInfo, case: int = 0) -> list[tuple[int, str, list[bytes]]]:
    """(method index, method name, raw input bytes) of test case `case` of every method of a .bpte
    that has one (inputs stored in the tensor's own dim order, as the runtime holds them)."""
    root = fbs.Reader(fbs.bundled_schema(), prog.data).root()
    names = [m.name for m in prog.methods]
    out = []
    for suite in root.get("method_test_suites") or []:
        tcs = suite.get("test_cases") or []
        if suite.get("method_name") in names and len(tcs) > case:
            out.append((names.index(suite["method_name"]), suite["method_name"],
                        [v["val"]["data"].tobytes() for v in tcs[case].get("inputs") or []]))
    return sorted(out)


def case_header(cases: list[tuple[int, str, list[bytes]]]) -> str:
    """The cases as C data; each refers to its method only through etmodel.h's constants."""
    from etdeploy.libglue import c_ident
    out = ["#include <stdint.h>", "#include <stddef.h>",
           "typedef struct { uint32_t method, n_in; const void *const *in; const size_t *bytes; uint32_t n_out; "
           "size_t out0_bytes, pool_bytes; } app_case;", f"#define CASE_N {len(cases)}u"]
    rows = []
    for c, (_mi, name, inputs) in enumerate(cases):
        for i, b in enumerate(inputs):
            out.append(f"static const uint8_t c{c}_in{i}[] __attribute__((aligned(16))) = {{{','.join(map(str, b)) or '0'}}};")
        out.append(f"static const void *const c{c}_in[] = {{{', '.join(f'c{c}_in{i}' for i in range(len(inputs))) or '0'}}};")
        out.append(f"static const size_t c{c}_bytes[] = {{{', '.join(str(len(b)) for b in inputs) or '0'}}};")
        m = "ETMODEL_" + c_ident(name)
        rows.append(f"  {{{m}, {len(inputs)}u, c{c}_in, c{c}_bytes, {m}_N_OUTPUTS, {m}_OUT0_BYTES, {m}_POOL_BYTES}},")
    out += ["static const app_case cases[] = {", *rows, "};"]
    return "\n".join(out) + "\n"


def user_memory_c(buffers: list[list[tuple[str, str]]], method_ids: list[str]) -> str:
    """The user's own definitions of the arenas and pools (a library built with arenas=user), in a
    section of the user's choosing, sized by etmodel.h's constants."""
    out = ['#include <stdint.h>', '#include "etmodel.h"']
    for mid, bufs in zip(method_ids, buffers):
        out += [f'uint8_t {sym}[ETMODEL_{mid}_{const}] __attribute__((aligned(16), section(".user_big")));'
                for sym, const in bufs]
    return "\n".join(out) + "\n"


def write_project(d: Path, cases: list, cross_arch: str | None = None, model_placed: bool = True,
                  arenas_placed: bool = True, user_memory: str | None = None, target: str = "corstone300") -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "app.c").write_text(APP_C)
    (d / "case.h").write_text(case_header(cases))
    if cross_arch is None:
        (d / "main_host.c").write_text(HOST_MAIN_C)
        (d / "CMakeLists.txt").write_text(CMAKELISTS.format(main="main_host.c", extra=""))
        return d
    t = TARGETS[target]
    (d / "start.c").write_text(f"#define USER_UART_BASE 0x{t['uart']:08x}u\n" + CM_START_C)
    arenas = CM_USER_BIG if user_memory else (CM_ARENAS if arenas_placed else "")
    ld = CM_LD.replace("@MODEL@", CM_MODEL if model_placed else "").replace("@ARENAS@", arenas)
    for region in ("FLASH", "RAM", "BIG"):
        ld = ld.replace(f"@{region}@", f"0x{t[region][0]:08x}, LENGTH = {t[region][1]}")
    (d / "user.ld").write_text(ld)
    if user_memory:
        (d / "user_mem.c").write_text(user_memory)
    (d / "toolchain.cmake").write_text(TOOLCHAIN_CMAKE.format(arch=cross_arch))
    extra = ('target_link_options(app PRIVATE "-T${CMAKE_CURRENT_SOURCE_DIR}/user.ld")\n'
             "if(NOT SKIP_CHECK)\n  etmodel_check_sections(app)\nendif()")
    main = "start.c user_mem.c" if user_memory else "start.c"
    (d / "CMakeLists.txt").write_text(CMAKELISTS.format(main=main, extra=extra))
    return d


def parse_outputs(text: str) -> tuple[dict[int, list[bytes]], str]:
    """({case: [output bytes]}, the DONE word)."""
    outs: dict[int, dict[int, bytes]] = {}
    for m in re.finditer(r"^OUT (\d+) (\d+) ([0-9a-f]*)$", text, re.M):
        outs.setdefault(int(m.group(1)), {})[int(m.group(2))] = bytes.fromhex(m.group(3))
    done = re.search(r"^DONE (\S+)$", text, re.M)
    return {c: [o[i] for i in sorted(o)] for c, o in outs.items()}, (done.group(1) if done else "")


def cycles(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"^CYCLES (\d+) $", text, re.M)]


def as_arrays(raw: list[bytes], expected: list) -> list[np.ndarray]:
    """Our output bytes shaped and typed like the expected arrays."""
    return [np.frombuffer(b, dtype=e.dtype).reshape(e.shape) for b, e in zip(raw, expected)]
