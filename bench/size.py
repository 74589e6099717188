"""Size at -Os on Cortex-M55 (corstone300) with the MNIST MLP: runtime core .text, whole flash image
against the model bytes, RAM against planned arenas + method pool + stack, and where every byte goes
(per region, per object file, per kernel), read from the ELF and the linker map of one build.

    .venv/bin/python bench/size.py [--model mlp] [--board corstone300] [--opt s]
Goals: runtime core (all but kernels, model bytes, board support) <= 12 KB .text;
flash <= model bytes + 40 KB; RAM <= arenas + pool + stack + 4 KB."""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

from common import MODELS, ROOT, WORK, Row, info, print_table, row, save, scons, tool

KB = 1024
SEC_RE = re.compile(r"^(\.\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)")
IN_RE = re.compile(r"^ (\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")


def group_of(path: str) -> str:
    p = path.replace("\\", "/")
    if "/firmware/runtime/" in p:
        return "runtime"
    if "/firmware/kernels/" in p:
        return "kernels"
    if "/firmware/boards/" in p:
        return "board support"
    if "/gen/" in p:
        return "generated (model blob, tables)"
    if ".a(" in p or p.endswith(".a"):
        return "libc/libgcc"
    return "linker/other"


def parse_map(path: Path) -> list[tuple[str, str, str, int]]:
    """(output section, input section, object, size) from a GNU ld map, placed sections only."""
    lines = path.read_text(errors="replace").splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.startswith("Linker script and memory map"))
    except StopIteration:
        return []
    out, osec, pending = [], None, None
    for l in lines[start + 1:]:
        m = SEC_RE.match(l)
        if m or (l.startswith(".") and " " not in l.strip()):
            osec = (m.group(1) if m else l.strip())
            pending = None
            continue
        if l.startswith(" ") and not l.startswith("  ") and len(l.split()) == 1 and not l.strip().startswith("*"):
            pending = l.strip()          # long input-section name: address on the next line
            continue
        m = IN_RE.match(l)
        if m and osec and not l.lstrip().startswith("0x0000000000000000") and "load address" not in l:
            name = m.group(1) or pending or "?"
            size = int(m.group(3), 16)
            obj = m.group(4).strip()
            if size and not obj.startswith("*"):
                out.append((osec, name, obj, size))
        elif l.startswith(" *fill*"):
            f = l.split()
            if osec and len(f) >= 3:
                out.append((osec, "*fill*", "*fill*", int(f[2], 16)))
        pending = None
    return out


def elf_sections(elf: Path) -> list[tuple[str, int, bool, bool]]:
    """(name, size, allocated, has file contents) per section."""
    from elftools.elf.elffile import ELFFile
    with open(elf, "rb") as f:
        e = ELFFile(f)
        return [(s.name, s["sh_size"], bool(s["sh_flags"] & 2), s["sh_type"] != "SHT_NOBITS")
                for s in e.iter_sections() if s.name]


def kernel_symbols(elf: Path, board: str) -> list[tuple[str, int]]:
    p = subprocess.run([tool(board, "nm"), "--size-sort", "-S", str(elf)], capture_output=True, text=True)
    out = []
    for l in p.stdout.splitlines():
        f = l.split()
        if len(f) == 4 and f[2] in "tT" and f[3].startswith("k_"):
            out.append((f[3], int(f[1], 16)))
    return sorted(out, key=lambda x: -x[1])


def main(argv=None) -> list[Row]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="mlp")
    ap.add_argument("--board", default="corstone300")
    ap.add_argument("--opt", default="s")
    a = ap.parse_args(argv)
    pte = MODELS / f"{a.model}.pte"
    bdir = WORK / "size"
    scons(["-j2", f"board={a.board}", f"pte={pte}", f"opt={a.opt}"], bdir)
    out = bdir / a.board
    elf, mp = out / "firmware.elf", out / "firmware.map"
    entries = parse_map(mp)
    secs = elf_sections(elf)
    model_bytes = pte.stat().st_size

    by_group: dict[tuple[str, str], int] = {}
    by_obj: dict[tuple[str, str], int] = {}
    for osec, _isec, obj, size in entries:
        kind = "text" if osec == ".text" else "rodata" if osec == ".rodata" else osec.lstrip(".")
        g = group_of(obj)
        by_group[(g, kind)] = by_group.get((g, kind), 0) + size
        by_obj[(Path(obj.split("(")[0]).name + (("(" + obj.split("(")[1]) if "(" in obj else ""), kind)] = \
            by_obj.get((Path(obj.split("(")[0]).name + (("(" + obj.split("(")[1]) if "(" in obj else ""), kind), 0) + size
    # runtime core = everything but kernels, model bytes and board support: the runtime objects, the
    # libc/libgcc code the image pulls in, generated tables and linker padding (.text + .rodata)
    core_groups = ("runtime", "libc/libgcc", "generated (model blob, tables)", "linker/other")
    core_parts = {g: by_group.get((g, "text"), 0) + by_group.get((g, "rodata"), 0) for g in core_groups}
    core_text = sum(core_parts.values())

    flash = sum(s for n, s, alloc, load in secs if alloc and load)
    sec = {n: s for n, s, _a, _l in secs}
    arenas = sec.get(".et_arena", 0)
    pool = sec.get(".et_pool", 0)
    stack = sec.get(".stack", 0)
    ram = sum(s for n, s, alloc, load in secs if alloc and (not load or n == ".data"))
    ram_other = ram - arenas - pool - stack

    rows = [
        row("size", f"runtime core .text+.rodata (-O{a.opt}, {a.board})", core_text / KB, 12, "{:.2f}", " KB",
            note="all but kernels, model bytes, board support: " +
                 ", ".join(f"{g.split(' ')[0]} {v:,} B" for g, v in core_parts.items())),
        row("size", f"flash image - model bytes ({a.model})", (flash - model_bytes) / KB, 40, "{:.2f}", " KB",
            note=f"flash {flash:,} B = model {model_bytes:,} B + {flash - model_bytes:,} B"),
        row("size", "RAM beyond arenas + pool + stack", ram_other / KB, 4, "{:.2f}", " KB",
            note=f"RAM {ram:,} B = arenas {arenas:,} + pool {pool:,} + stack {stack:,} + {ram_other:,} B"),
    ]
    import json
    rep = json.loads((out / "report.json").read_text())
    for name, r in (rep.get("regions") or {}).items():
        if r.get("used"):
            rows.append(info("size", f"  region {name}", f"{r['used']:,} B",
                             f"of {r['size']:,} B: " + ", ".join(f"{x['name']} {x['size']:,}" for x in r.get("sections") or [])))
    groups = sorted({g for g, _k in by_group})
    for g in groups:
        parts = {k: v for (gg, k), v in by_group.items() if gg == g and not k.startswith(("debug", "ARM.attr", "comment"))}
        if not parts:
            continue
        rows.append(info("size", f"  {g}", f"{sum(parts.values()):,} B",
                         ", ".join(f"{k} {v:,}" for k, v in sorted(parts.items(), key=lambda x: -x[1]))))
    objs = sorted(((o, k, v) for (o, k), v in by_obj.items() if k in ("text", "rodata")), key=lambda x: -x[2])
    for o, k, v in objs[:14]:
        rows.append(info("size", f"    {o} .{k}", f"{v:,} B"))
    for name, size in kernel_symbols(elf, a.board):
        rows.append(info("size", f"    kernel {name}", f"{size:,} B"))
    print_table(rows, f"Size ({a.model} on {a.board}, -O{a.opt})")
    save("size", rows, {"sections": secs, "by_group": {f"{g}/{k}": v for (g, k), v in by_group.items()},
                        "by_object": {f"{o}/{k}": v for (o, k), v in by_obj.items()}})
    return rows


if __name__ == "__main__":
    sys.exit(0 if all(r.ok is not False for r in main()) else 1)
