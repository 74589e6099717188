"""Rebuild a real ETDump (.etdp) from the profile events a firmware streamed over the link.

One RunData ("Execute") per method execution, one ProfileEvent per executed kernel/delegate
instruction named as executorch's runtime names them (native_call_<op>.<overload>, DELEGATE_CALL),
with chain_index/instruction_id so that an ETRecord links each event to its operator, and a
Method::execute event around them. A run whose batches or events did not all arrive is left out
and reported: the file never claims data it lacks."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import fbs
from .errors import LinkError


@dataclass
class ProfiledRun:
    program: int
    method: int
    run: int
    start: int = 0
    end: int = 0
    status: int = 0
    expected_events: int | None = None
    expected_batches: int | None = None
    batches: set = field(default_factory=set)
    events: list = field(default_factory=list)     # (chain, instr, start, end)
    debug: list = field(default_factory=list)      # (chain, instr, dtype, sizes, bytes)

    @property
    def complete(self) -> bool:
        return (self.expected_events is not None and len(self.events) == self.expected_events and
                len(self.batches) == self.expected_batches)


def _varints(buf: bytes, pos: int):
    while pos < len(buf):
        v, shift = 0, 0
        while True:
            if pos >= len(buf) or shift > 63:
                raise ValueError("truncated varint")
            b = buf[pos]
            pos += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        yield v


def decode(payloads: list[bytes]) -> list[ProfiledRun]:
    runs: dict[tuple, ProfiledRun] = {}
    for p in payloads:
        if not p:
            continue
        sub = p[0]
        if sub == 1:
            prog, meth, chain, run, batch, base = struct.unpack_from("<BBBIHQ", p, 1)
            r = runs.setdefault((prog, meth, run), ProfiledRun(prog, meth, run))
            if batch in r.batches:
                continue   # a duplicated frame adds nothing
            r.batches.add(batch)
            vals = list(_varints(p, 18))
            t = base
            for i in range(0, len(vals) - 2, 3):
                instr, gap, dur = vals[i:i + 3]
                start = t + gap
                r.events.append((chain, instr, start, start + dur))
                t = start + dur
        elif sub == 2:
            prog, meth, status, run, start, end, nev, nb = struct.unpack_from("<BBBIQQIH", p, 1)
            r = runs.setdefault((prog, meth, run), ProfiledRun(prog, meth, run))
            r.start, r.end, r.status, r.expected_events, r.expected_batches = start, end, status, nev, nb
        elif sub == 3:
            prog, meth, chain, run, instr, dtype, ndim = struct.unpack_from("<BBBIIBB", p, 1)
            sizes = struct.unpack_from(f"<{ndim}i", p, 16)
            r = runs.setdefault((prog, meth, run), ProfiledRun(prog, meth, run))
            r.debug.append((chain, instr, dtype, sizes, p[16 + 4 * ndim:]))
    for r in runs.values():
        r.events.sort(key=lambda e: (e[2], e[1]))
    return sorted(runs.values(), key=lambda r: (r.program, r.run))


def event_name(op: str | None) -> str:
    if op is None:
        return "DELEGATE_CALL"
    return "native_call_" + op.split("::", 1)[-1]


def build(runs: list[ProfiledRun], instr_ops, debug_buffer: bytearray | None = None) -> bytes:
    """instr_ops(program, method, chain, instr) -> 'aten::add.out' or None for a delegate call."""
    run_data = []
    for r in runs:
        events = []
        dbg = {(c, i): (dt, sz, data) for c, i, dt, sz, data in r.debug}
        for chain, instr, start, end in r.events:
            if debug_buffer is not None and (chain, instr) in dbg:
                dt, sz, data = dbg[(chain, instr)]
                off = len(debug_buffer)
                debug_buffer += data
                debug_buffer += b"\0" * (-len(debug_buffer) % 16)
                strides = [int(np.prod(sz[k + 1:])) for k in range(len(sz))]
                events.append({"debug_event": {"chain_index": chain, "instruction_id": instr, "debug_entry": {
                    "val": "Tensor", "tensor": {"scalar_type": dt, "sizes": list(sz), "strides": strides,
                                                "offset": off}}, "delegate_debug_id_int": -1}})
            events.append({"profile_event": {"name": event_name(instr_ops(r.program, r.method, chain, instr)),
                                             "chain_index": chain, "instruction_id": instr,
                                             "delegate_debug_id_int": -1, "start_time": start, "end_time": end}})
        events.append({"profile_event": {"name": "Method::execute", "chain_index": -1, "instruction_id": 0,
                                         "delegate_debug_id_int": -1, "start_time": r.start, "end_time": r.end}})
        run_data.append({"name": "Execute", "bundled_input_index": -1, "allocators": [], "events": events})
    return fbs.build(fbs.etdump_schema(), {"version": 0, "run_data": run_data}, size_prefixed=True)


def instr_table(programs):
    """(program, method, chain, instr) -> operator name, from the baked programs."""
    from .pte import read_program  # noqa: F401  (programs are ProgramInfo already)
    table = {}
    for pi, p in enumerate(programs):
        root = fbs.Reader(fbs.program_schema(), p.data[p.program_offset:p.program_offset + p.program_size]).root()
        for mi, plan in enumerate(root.get("execution_plan") or []):
            ops = [f"{o.get('name')}.{o.get('overload') or 'default'}" for o in plan.get("operators") or []]
            for ci, ch in enumerate(plan.get("chains") or []):
                for ii, ins in enumerate(ch.get("instructions") or []):
                    if ins.get("instr_args_type") == "KernelCall":
                        k = ins["instr_args"].get("op_index", 0)
                        table[(pi, mi, ci, ii)] = ops[k] if k < len(ops) else f"op{k}"
                    else:
                        table[(pi, mi, ci, ii)] = None
    return lambda p, m, c, i: table.get((p, m, c, i))


def write(events: list[bytes], programs, run_dir: Path, stem: str = "etdump") -> dict:
    """Writes run_dir/<stem>.etdp (+ .debug.bin with intermediates). Returns a summary; raises
    LinkError when no run arrived whole."""
    runs = decode(events)
    complete = [r for r in runs if r.complete]
    dropped = [r for r in runs if not r.complete]
    summary = {"runs": len(runs), "complete": len(complete), "dropped": [
        {"program": r.program, "method": r.method, "run": r.run, "events": len(r.events),
         "expected_events": r.expected_events} for r in dropped]}
    run_dir = Path(run_dir)
    path = run_dir / f"{stem}.etdp"
    if path.exists():
        path.unlink()
    if not complete:
        if runs:
            raise LinkError(f"no profiled run arrived complete ({len(runs)} incomplete): no ETDump written")
        return summary
    dbg = bytearray() if any(r.debug for r in complete) else None
    data = build(complete, instr_table(programs), dbg)
    run_dir.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    summary["etdp"] = str(path)
    summary["events"] = sum(len(r.events) for r in complete)
    if dbg is not None:
        (run_dir / f"{stem}.debug.bin").write_bytes(bytes(dbg))
        summary["debug_buffer"] = str(run_dir / f"{stem}.debug.bin")
    return summary
