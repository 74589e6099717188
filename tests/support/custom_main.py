"""Test images that are the board's minimal image with another main.c: compiled and linked with the
exact commands SCons used for the minimal image (taken from a verbose=1 build), with the link
(et_link.c) compiled alongside. Used for firmware that must crash or hang on purpose."""
from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A main that says hello over the link, then crashes (TEST_CRASH) or spins forever.
CRASH_OR_HANG_MAIN = r"""
#include "bsp.h"
#include "et_link.h"
void bsp_fault_hook(uint32_t pc, uint32_t lr, uint32_t addr, uint32_t status) {
  et_link_begin(ET_REC_FAULT);
  et_link_u32(pc); et_link_u32(lr); et_link_u32(addr); et_link_u32(status);
  et_link_end();
}
__attribute__((noinline)) void et_test_crash_here(void) { __asm__ volatile("udf #0"); }
__attribute__((noinline)) void et_test_spin_here(void) { for (;;) __asm__ volatile(""); }
int main(void) {
  bsp_init();
  et_link_begin(ET_REC_HELLO);
  et_link_u8(ET_LINK_VERSION); et_link_u8(0); et_link_u16(0); et_link_u32(bsp_cycles_hz());
  et_link_end();
#ifdef TEST_CRASH
  et_test_crash_here();
#else
  et_test_spin_here();
#endif
  bsp_exit(0);
}
"""


def _run(argv):
    r = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, f"{shlex.join(argv)}\n{r.stdout[-2000:]}{r.stderr[-2000:]}"
    return r


def build(board: str, bdir: Path, source: str, variants: dict[str, list[str]]) -> dict[str, Path]:
    """{variant: elf}; each variant's defines go to both main.c and et_link.c (e.g. -DET_LINK_TEXT)."""
    bdir = Path(bdir)
    # Cleaned first: an up-to-date tree prints no commands.
    _run([sys.executable, "-m", "SCons", "-Q", f"board={board}", f"build_dir={bdir}", "-c"])
    p = _run([sys.executable, "-m", "SCons", "-Q", f"board={board}", f"build_dir={bdir}", "verbose=1"])
    cmds = [shlex.split(l) for l in p.stdout.splitlines() if "gcc" in l and " -o " in l]
    cc = next(c for c in cmds if c[-1].endswith("minimal_main.c"))
    ld = next(c for c in cmds if c[c.index("-o") + 1].endswith("firmware.elf"))
    src = bdir / "custom_main.c"
    src.write_text(source)
    out = {}
    for name, defines in variants.items():
        objs = []
        for c_file, stem in ((src, f"main_{name}"), (ROOT / "firmware" / "runtime" / "et_link.c", f"link_{name}")):
            c = list(cc)
            c[c.index("-o") + 1] = str(bdir / f"{stem}.o")
            c[-1] = str(c_file)
            c[1:1] = [f"-I{ROOT / 'firmware' / 'runtime'}", *defines]
            _run(c)
            objs.append(str(bdir / f"{stem}.o"))
        elf = bdir / f"{name}.elf"
        l = [objs[0] if a.endswith("minimal_main.o") else a for a in ld]
        l[l.index("-o") + 1] = str(elf)
        l.insert(l.index("-lc"), objs[1])
        _run(l)
        out[name] = elf
    return out
