"""Size and memory report read back from the ELF itself (pyelftools), not from what we meant to link:

- per memory region: used/free, split into loaded bytes (PROGBITS) and NOLOAD (NOBITS), with the
  sections in it by address; a section whose load address differs (.data) also counts in its load
  region;
- etdeploy's placed symbols: et_model_blob_*, et_arena_*, et_pool_* (size, address, region);
- per object file (from the linker map when there is one) and per kernel (functions named k_*).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from .errors import BuildError

PLACED = re.compile(r"^et_(model_blob_\d+|arena_\d+_\d+_\d+|pool_\d+_\d+|"
                    r"npu_(?:scratch|weights)_\d+_\d+_\d+|npu_fast_scratch)$")


def _lma_map(e: ELFFile) -> dict[str, int]:
    out = {}
    segs = [s for s in e.iter_segments() if s["p_type"] == "PT_LOAD"]
    for sec in e.iter_sections():
        if not sec["sh_flags"] & SH_FLAGS.SHF_ALLOC or sec["sh_type"] == "SHT_NOBITS":
            continue
        for s in segs:
            if s["p_vaddr"] <= sec["sh_addr"] < s["p_vaddr"] + max(s["p_memsz"], 1):
                out[sec.name] = s["p_paddr"] + (sec["sh_addr"] - s["p_vaddr"])
                break
    return out


def read_sections(elf: Path) -> list[dict]:
    """Allocated sections: name, addr (VMA), lma, size, kind LOAD|NOLOAD."""
    with open(elf, "rb") as f:
        e = ELFFile(f)
        lma = _lma_map(e)
        out = []
        for sec in e.iter_sections():
            if not sec["sh_flags"] & SH_FLAGS.SHF_ALLOC or sec["sh_size"] == 0:
                continue
            nobits = sec["sh_type"] == "SHT_NOBITS"
            out.append({"name": sec.name, "addr": sec["sh_addr"], "lma": lma.get(sec.name, sec["sh_addr"]),
                        "size": sec["sh_size"], "kind": "NOLOAD" if nobits else "LOAD"})
    return sorted(out, key=lambda s: s["addr"])


def read_symbols(elf: Path) -> list[dict]:
    with open(elf, "rb") as f:
        e = ELFFile(f)
        tab = e.get_section_by_name(".symtab")
        if tab is None:
            return []
        return [{"name": s.name, "addr": s["st_value"], "size": s["st_size"], "type": s["st_info"]["type"]}
                for s in tab.iter_symbols() if s.name and s["st_info"]["type"] in ("STT_FUNC", "STT_OBJECT")]


def _region_name(regions, addr: int) -> str | None:
    for r in regions:
        if r.origin <= addr < r.end:
            return r.name
    return None


def parse_map(map_path: Path) -> dict[str, dict]:
    """Bytes per input object from a GNU ld map: {object: {section kind: bytes}} (kept sections only)."""
    totals: dict[str, dict] = {}
    if not map_path or not Path(map_path).exists():
        return totals
    text = Path(map_path).read_text(errors="replace")
    start = text.find("Linker script and memory map")
    lines = text[start:].splitlines() if start >= 0 else []
    pending = None
    pat = re.compile(r"^\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)\s+(\S+\.(?:o|a\(.*\)|obj))\s*$")
    for line in lines:
        m = re.match(r"^ (\.[\w.$]+)\s*$", line)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^ (\.[\w.$]+)\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)\s+(\S+)\s*$", line)
        if m:
            name, addr, size, obj = m.group(1), int(m.group(2), 16), int(m.group(3), 16), m.group(4)
        else:
            m = pat.match(line)
            if not (m and pending):
                pending = None
                continue
            name, addr, size, obj = pending, int(m.group(1), 16), int(m.group(2), 16), m.group(3)
        pending = None
        if size == 0 or addr == 0 and "(NOLOAD)" not in line and name.startswith(".debug"):
            continue
        kind = next((k for k in ("text", "rodata", "data", "bss", "et_model", "et_arena", "et_pool", "et_npu", "literal")
                     if name.startswith("." + k)), None)
        if kind is None:
            continue
        kind = "text" if kind == "literal" else kind
        t = totals.setdefault(obj, {})
        t[kind] = t.get(kind, 0) + size
    return totals


def report(elf: Path, board, map_path: Path | None = None) -> dict:
    elf = Path(elf)
    if not elf.exists():
        raise BuildError(f"no ELF at {elf}")
    secs = read_sections(elf)
    syms = read_symbols(elf)
    regions = list(getattr(board, "regions", ()) or ())
    reg = {}
    for r in regions:
        inside = [s for s in secs if r.origin <= s["addr"] < r.end]
        load_images = [s for s in secs if s["kind"] == "LOAD" and s["lma"] != s["addr"]
                       and r.origin <= s["lma"] < r.end]
        used_load = sum(s["size"] for s in inside if s["kind"] == "LOAD") + sum(s["size"] for s in load_images)
        used_noload = sum(s["size"] for s in inside if s["kind"] == "NOLOAD")
        used = used_load + used_noload
        reg[r.name] = {"origin": r.origin, "size": r.size, "used": used, "free": r.size - used,
                       "load": used_load, "noload": used_noload,
                       "sections": [{"name": s["name"], "addr": s["addr"], "size": s["size"], "kind": s["kind"]}
                                    for s in inside] +
                                   [{"name": s["name"] + " (load image)", "addr": s["lma"], "size": s["size"],
                                     "kind": "LOAD"} for s in load_images]}
    placed = [{"name": s["name"], "addr": s["addr"], "size": s["size"], "region": _region_name(regions, s["addr"])}
              for s in syms if PLACED.match(s["name"])]
    kernels = sorted(({"name": s["name"], "size": s["size"]} for s in syms
                      if s["type"] == "STT_FUNC" and s["name"].startswith("k_")), key=lambda k: -k["size"])
    totals = {"load": sum(s["size"] for s in secs if s["kind"] == "LOAD"),
              "noload": sum(s["size"] for s in secs if s["kind"] == "NOLOAD")}
    objects = {}
    for obj, kinds in parse_map(map_path).items():
        objects[obj] = dict(kinds, total=sum(kinds.values()))
    return {
        "board": getattr(board, "name", ""), "elf": str(elf), "sections": secs, "regions": reg, "totals": totals,
        "placed": placed, "kernels": {"count": len(kernels), "bytes": sum(k["size"] for k in kernels),
                                      "functions": kernels},
        "objects": dict(sorted(objects.items(), key=lambda kv: -kv[1]["total"])),
        "model_bytes": sum(p["size"] for p in placed if p["name"].startswith("et_model_blob_")),
    }


def _kib(n: int) -> str:
    return f"{n / 1024:.1f}K" if n >= 1024 else f"{n}B"


def summary(rep: dict) -> str:
    lines = [f"memory report for {rep['board']} ({Path(rep['elf']).name})"]
    if rep["regions"]:
        w = max(len(n) for n in rep["regions"])
        for name, r in rep["regions"].items():
            pct = 100.0 * r["used"] / r["size"] if r["size"] else 0.0
            lines.append(f"  {name:<{w}}  0x{r['origin']:08x}  used {_kib(r['used']):>8} of {_kib(r['size']):>8} "
                         f"({pct:5.1f}%)  free {_kib(r['free']):>8}  [load {_kib(r['load'])}, noload "
                         f"{_kib(r['noload'])}]")
    else:
        lines.append(f"  loaded {_kib(rep['totals']['load'])}, zero-init {_kib(rep['totals']['noload'])}")
    for p in rep["placed"]:
        lines.append(f"  {p['name']}: {_kib(p['size'])}" + (f" in {p['region']}" if p["region"] else ""))
    placed = (rep.get("bake") or {}).get("placement") or {}
    for kind in ("model", "arena", "pool"):     # where bake put each blob kind, and why
        if kind in placed:
            d = placed[kind]
            lines.append(f"  {kind} -> {d['region']} ({_kib(d['bytes'])}): {d['why']}")
    for prog in (rep.get("bake") or {}).get("programs") or []:   # the kernels' planned scratch, in the pools
        for m in prog.get("methods") or []:
            sc = m.get("scratch") or {}
            if sc.get("calls"):
                top = sc.get("largest") or {}
                lines.append(f"  kernel scratch {Path(prog['file']).name}:{m['name']} ({sc['isa']}): {sc['calls']} call(s), "
                             f"{sc.get('in_arenas', 0)} in free arena gaps, the rest in {_kib(sc['bytes'])} of the pool "
                             f"{_kib(m['pool_bytes'])}; largest {top.get('bytes', 0)} B, {top.get('operator', '?')} at "
                             f"instruction {top.get('instruction', '?')}")
    if rep.get("stack"):
        from .stack_budget import describe
        lines.append(describe(rep))
    k = rep["kernels"]
    if k["count"]:
        lines.append(f"  kernels: {k['count']} functions, {_kib(k['bytes'])}")
    return "\n".join(lines)


def write(elf: Path, board, out_json: Path, map_path: Path | None = None) -> dict:
    rep = report(elf, board, map_path)
    Path(out_json).write_text(json.dumps(rep, indent=1) + "\n")
    return rep
