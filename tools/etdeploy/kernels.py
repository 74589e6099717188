"""The kernel catalogue: which operator each firmware kernel implements, read from the
`ET_OP("ns::name.overload", symbol)` markers in firmware/kernels/**/*.c (sub-folders hold one
operator family each, e.g. cortex_m/; their private headers sit next to them). A kernel source that
includes "x.h" next to which an x.c sits gets x.c compiled with it (conv.c -> conv_direct.c ...)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KERNEL_DIR = ROOT / "firmware" / "kernels"
_MARK = re.compile(r'ET_OP\(\s*"([^"]+)"\s*,\s*(\w+)\s*\)')
_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
_STATE = re.compile(r'ET_STATE\(\s*"([^"]+)"\s*,\s*(\d+)\s*\)')
_SCRATCH = re.compile(r'ET_SCRATCH\(\s*"([^"]+)"\s*\)')
# Always compiled with any kernel: shared helpers and math.
SUPPORT = ("kernel_util.c", "etmath.c")


@dataclass(frozen=True)
class Kernel:
    op: str          # "aten::add.out"
    symbol: str
    source: Path
    state: int = 0   # bytes of per-call state (ET_STATE): bake adds them to the method pool
    scratch: bool = False   # ET_SCRATCH: planned scratch (etdeploy.kernel_scratch) and a load-time check


@lru_cache(maxsize=None)
def _scan(stamp: tuple) -> dict[str, Kernel]:
    table: dict[str, Kernel] = {}
    for path in kernel_files():
        text = path.read_text(errors="replace")
        states = {op: int(n) for op, n in _STATE.findall(text)}
        scratch = set(_SCRATCH.findall(text))
        for op, sym in _MARK.findall(text):
            table.setdefault(op, Kernel(op, sym, path, states.get(op, 0), op in scratch))
    return table


def kernel_files() -> list[Path]:
    """Every kernel source, sub-folders included."""
    return sorted(KERNEL_DIR.rglob("*.c"))


def catalogue() -> dict[str, Kernel]:
    files = kernel_files()
    return _scan(tuple((str(p), p.stat().st_mtime_ns) for p in files))


def companions(sources: set[Path]) -> set[Path]:
    """sources and the kernel sources they need: x.c for every "x.h" that they, or headers and
    companions they reach, include from the kernel folders."""
    seen: set[Path] = set()
    todo = list(sources)
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        for name in _INCLUDE.findall(f.read_text(errors="replace")):
            h = next((d / name for d in (f.parent, KERNEL_DIR) if (d / name).is_file()), None)
            if h is None or KERNEL_DIR not in h.resolve().parents:
                continue                       # runtime and system headers
            h = h.resolve()
            todo.append(h)
            if h.suffix == ".h" and h.with_suffix(".c").is_file():
                todo.append(h.with_suffix(".c"))
    return {f for f in seen if f.suffix == ".c"}


def sources_for(ops: set[str]) -> list[Path]:
    cat = catalogue()
    srcs = {cat[o].source for o in ops if o in cat}
    srcs.update(KERNEL_DIR / s for s in SUPPORT if (KERNEL_DIR / s).exists())
    return sorted(companions(srcs))


def all_ops_c() -> str:
    """C table of every kernel by name, for host harnesses that resolve operators at run time
    (the firmware itself uses bake's index table)."""
    cat = catalogue()
    lines = ['#include "et_kernel.h"', "typedef struct { const char *name; et_kernel_fn fn; uint16_t state; } op_entry;"]
    lines += [f"et_status {k.symbol}(et_kctx *, et_value *const *, uint32_t);" for k in cat.values()]
    lines.append("const op_entry et_all_ops[] = {")
    lines += [f'  {{"{k.op}", {k.symbol}, {k.state}u}},' for k in cat.values()]
    lines.append("  {0, 0, 0}};")
    lines.append(f"const uint32_t et_all_ops_n = {len(cat)}u;")
    return "\n".join(lines) + "\n"
