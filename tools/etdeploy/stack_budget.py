"""Worst-case stack depth of a bare-metal image, from what GCC says about each object
(`-fcallgraph-info=su`: one .ci file per object with every function's static frame and its call
edges), checked against the board's stack ([placement] stack_size) before an image exists.

Depth of a function = its frame + the deepest of its callees. Three kinds of callee GCC cannot see:
- indirect calls: taken as the deepest function that nothing calls directly (address-taken), from
  the caller's own file when it has such functions other than kernel entries k_* (a kernel's
  row-function pointers), else from the whole image (the runtime's op table: every kernel linked in);
- library functions without a .ci (memcpy, libgcc): LIB_FRAME bytes each;
- an interrupt on top of the deepest point: the exception frame plus the SysTick handler.
A dynamically sized frame makes the depth unbounded: that is an error, not a guess. A call cycle
(et_store_f <-> et_store_i converting between dtypes: one step deep by construction) is counted once
around and listed in the result's "cycles", so a reader sees where the bound leans on the code.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import BuildError

LIB_FRAME = 64            # bytes allowed for a library callee without call-graph data
EXC_FRAME = 108           # Cortex-M extended (FP) exception frame, 26 words, + 4 alignment
ISR_NAMES = ("SysTick_Handler",)
ENTRIES = ("bsp_start_c", "main")
INDIRECT = "__indirect_call"

_NODE = re.compile(r'^node: \{ title: "([^"]+)" label: "([^"]*)"')
_EDGE = re.compile(r'^edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
_FRAME = re.compile(r'\\n(\d+) bytes \(([a-z,]+)\)')


class StackOverflow(BuildError):
    """The worst-case stack depth does not fit the board's stack."""


@dataclass
class Graph:
    frames: dict = field(default_factory=dict)     # title -> bytes (functions GCC compiled)
    dynamic: set = field(default_factory=set)      # titles with an unbounded dynamic frame
    calls: dict = field(default_factory=dict)      # title -> set of callee titles
    file: dict = field(default_factory=dict)       # title -> the .ci file that defines it


def read_graph(ci_files) -> Graph:
    g = Graph()
    for p in ci_files:
        for line in Path(p).read_text(errors="replace").splitlines():
            m = _NODE.match(line)
            if m:
                f = _FRAME.search(m.group(2))
                if f:
                    g.frames[m.group(1)] = int(f.group(1))
                    g.file[m.group(1)] = str(p)
                    if "dynamic" in f.group(2) and "bounded" not in f.group(2):
                        g.dynamic.add(m.group(1))
                continue
            m = _EDGE.match(line)
            if m:
                g.calls.setdefault(m.group(1), set()).add(m.group(2))
    return g


def _name(title: str) -> str:
    return title.rsplit(":", 1)[-1]


def _indirect_targets(g: Graph) -> dict[str, list[str]]:
    """{.ci file or "": candidate targets of an indirect call made from that file ("" = anywhere)}."""
    called = {c for cs in g.calls.values() for c in cs}
    skip = set(ENTRIES) | set(ISR_NAMES)
    roots = sorted(t for t in g.frames if t not in called and _name(t) not in skip)
    out: dict[str, list[str]] = {"": roots}
    for t in roots:
        if not _name(t).startswith("k_"):
            out.setdefault(g.file[t], []).append(t)
    return out


def deepest(g: Graph, root: str) -> tuple[int, list[str]]:
    """(bytes, chain of function names, call cycles met) of the deepest call chain from root."""
    indirect = _indirect_targets(g)
    memo: dict[str, tuple[int, list[str]]] = {}
    active: list[str] = []
    cycles: set[str] = set()

    def walk(t: str) -> tuple[int, list[str]]:
        if t in memo:
            return memo[t]
        if t in active:
            cycles.add(" -> ".join(_name(c) for c in active[active.index(t):] + [t]))
            return (0, [])
        if t not in g.frames:
            return (LIB_FRAME, [f"{_name(t)} (library, {LIB_FRAME} B allowed)"])
        if t in g.dynamic:
            raise BuildError(f"stack depth unbounded: {_name(t)} has a dynamically sized frame")
        active.append(t)
        best = (0, [])
        for c in sorted(g.calls.get(t, ())):
            for tgt in (indirect.get(g.file[t], indirect[""]) if c == INDIRECT else [c]):
                if tgt == t or tgt in active and c == INDIRECT:
                    continue          # an indirect call never re-enters a caller on the chain
                d = walk(tgt)
                if d[0] > best[0]:
                    best = (d[0], (["(indirect)"] if c == INDIRECT else []) + d[1])
        active.pop()
        memo[t] = (g.frames[t] + best[0], [_name(t)] + best[1])
        return memo[t]

    d = walk(root)
    return d[0], d[1], sorted(cycles)


def compute(objects, exception_frame: int = EXC_FRAME) -> dict:
    """{"bytes", "chain", "entry", "isr_bytes", "cycles", "functions"} for the linked objects (a list
    of .o paths; their .ci files sit beside them) or every object under a directory."""
    if isinstance(objects, (str, Path)):
        files = sorted(Path(objects).rglob("*.ci"))
    else:
        objs = [Path(o) for o in objects if str(o).endswith(".o")]
        files = [o.with_suffix(".ci") for o in objs if o.with_suffix(".ci").exists()]
    if not files:
        raise BuildError(f"no call-graph files (.ci) for {objects}: compile with -fcallgraph-info=su")
    g = read_graph(files)
    entry = next((t for e in ENTRIES for t in g.frames if _name(t) == e and ":" not in t), None)
    if entry is None:
        raise BuildError(f"no entry function ({' or '.join(ENTRIES)}) in the call graph under {obj_dir}")
    depth, chain, cycles = deepest(g, entry)
    isr = max((deepest(g, t)[0] for t in g.frames if _name(t) in ISR_NAMES), default=0) + exception_frame
    return {"bytes": depth + isr, "main_bytes": depth, "isr_bytes": isr, "chain": chain, "entry": _name(entry),
            "cycles": cycles,
            "functions": len(g.frames)}


def check(result: dict, board, option: str = "stack_size") -> None:
    """Raise StackOverflow when the worst case does not fit the board's stack."""
    size = board.placement.stack_size
    if result["bytes"] > size:
        raise StackOverflow(
            f"{board.name}: worst-case stack {result['bytes']} bytes > the board's stack of {size} bytes; "
            f"deepest chain ({result['main_bytes']} B + {result['isr_bytes']} B for an interrupt): "
            + " -> ".join(result["chain"]) +
            f". Way out: a larger stack_size in [placement] of {getattr(board, 'path', board.name)} "
            f"(or a board file that extends it), or {option}=<bytes> on the scons command line")


def describe(rep: dict) -> str:
    """The memory table's stack lines: the worst case against the stack, and RAM = arenas + pools + stack."""
    st = rep["stack"]
    arenas = sum(p["size"] for p in rep.get("placed", ()) if p["name"].startswith("et_arena_"))
    pools = sum(p["size"] for p in rep.get("placed", ()) if p["name"].startswith("et_pool_"))
    scratch = sum((m.get("scratch") or {}).get("bytes", 0) for p in (rep.get("bake") or {}).get("programs") or ()
                  for m in p.get("methods") or ())
    return (f"  stack: worst case {st['bytes']} B of {st['size']} B (deepest: "
            + " -> ".join(st["chain"][:6]) + (" ..." if len(st["chain"]) > 6 else "") + ")\n"
            f"  RAM = arenas {arenas} B + pools {pools} B"
            + (f" (kernel scratch {scratch} B of them)" if scratch else "") + f" + stack {st['size']} B (worst case {st['bytes']} B) "
            f"= {arenas + pools + st['size']} B")
