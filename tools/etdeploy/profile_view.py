"""Summaries and pictures of an ETDump: per-operator table (count, total, mean, share), an SVG
with per-operator bars and a timeline of one execution, and a side-by-side comparison of two."""
from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

from . import fbs
from .errors import BadProgram

SKIP = {"OPERATOR_CALL", "Method::execute", "Method::init", "Program::load_method"}


@dataclass
class OpStat:
    name: str
    count: int = 0
    total: int = 0

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0


def read(path: Path) -> dict:
    data = Path(path).read_bytes()
    if len(data) < 12:
        raise BadProgram(f"{path}: too short for an ETDump")
    off = 4 if data[8:12] == b"ED00" else 0
    if data[off + 4:off + 8] != b"ED00":
        raise BadProgram(f"{path}: not an ETDump (no ED00 identifier)")
    try:
        return fbs.Reader(fbs.etdump_schema(), data[off:]).root()
    except fbs.FlatbufferError as e:
        raise BadProgram(f"{path}: malformed ETDump: {e}") from None


def op_label(name: str) -> str:
    return name[len("native_call_"):] if name.startswith("native_call_") else name


def stats(dump: dict) -> tuple[list[OpStat], int, list]:
    """Per-operator totals over all Execute runs, total method time, and the first run's timeline."""
    ops: dict[str, OpStat] = {}
    method_total, timeline = 0, []
    for rd in dump.get("run_data") or []:
        evs = [e["profile_event"] for e in rd.get("events") or [] if e.get("profile_event")]
        for pe in evs:
            name = pe.get("name") or "?"
            dur = (pe.get("end_time") or 0) - (pe.get("start_time") or 0)
            if name == "Method::execute":
                method_total += dur
                continue
            if name in SKIP:
                continue
            s = ops.setdefault(op_label(name), OpStat(op_label(name)))
            s.count += 1
            s.total += dur
        if not timeline and any(pe.get("name") == "Method::execute" for pe in evs):
            timeline = [(op_label(pe["name"]), pe.get("instruction_id"), pe["start_time"], pe["end_time"])
                        for pe in evs if pe.get("name") not in SKIP]
    return sorted(ops.values(), key=lambda s: -s.total), method_total, timeline


def table(ops: list[OpStat], method_total: int, unit: str = "cycles") -> str:
    total = sum(s.total for s in ops) or 1
    w = max([len("operator")] + [len(s.name) for s in ops])
    lines = [f"{'operator':<{w}}  {'count':>5}  {'total ' + unit:>14}  {'mean':>12}  {'share':>6}"]
    for s in ops:
        lines.append(f"{s.name:<{w}}  {s.count:>5}  {s.total:>14,}  {s.mean:>12,.0f}  {100 * s.total / total:>5.1f}%")
    lines.append(f"{'all operators':<{w}}  {sum(s.count for s in ops):>5}  {total:>14,}")
    if method_total:
        lines.append(f"{'Method::execute':<{w}}  {'':>5}  {method_total:>14,}  "
                     f"(framework overhead {100 * (method_total - total) / method_total:.1f}%)")
    return "\n".join(lines)


def compare_table(a: list[OpStat], b: list[OpStat], la: str, lb: str) -> str:
    names = list(dict.fromkeys([s.name for s in a] + [s.name for s in b]))
    da, db = {s.name: s for s in a}, {s.name: s for s in b}
    w = max([len("operator")] + [len(n) for n in names])
    lines = [f"{'operator':<{w}}  {la:>14}  {lb:>14}  {'B/A':>7}"]
    for n in names:
        ta, tb = da.get(n, OpStat(n)).total, db.get(n, OpStat(n)).total
        ratio = f"{tb / ta:.2f}x" if ta else "-"
        lines.append(f"{n:<{w}}  {ta:>14,}  {tb:>14,}  {ratio:>7}")
    sa, sb = sum(s.total for s in a), sum(s.total for s in b)
    lines.append(f"{'total':<{w}}  {sa:>14,}  {sb:>14,}  {(f'{sb / sa:.2f}x' if sa else '-'):>7}")
    return "\n".join(lines)


PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#bab0ac"]


def svg(ops: list[OpStat], timeline: list, title: str, unit: str = "cycles") -> str:
    """Per-operator bars (share of time) above a timeline of one execution."""
    W, row, left = 900, 22, 230
    color = {s.name: PALETTE[i % len(PALETTE)] for i, s in enumerate(ops)}
    total = sum(s.total for s in ops) or 1
    top = 50
    h_bars = row * len(ops)
    tl_top = top + h_bars + 60
    H = tl_top + 90
    e = html.escape
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" '
           f'font-size="12"><rect width="100%" height="100%" fill="white"/>',
           f'<text x="10" y="24" font-size="16" font-weight="bold">{e(title)}</text>',
           f'<text x="10" y="42" fill="#555">time per operator ({unit}, all executions)</text>']
    maxv = max((s.total for s in ops), default=1) or 1
    for i, s in enumerate(ops):
        y = top + i * row
        bw = (W - left - 170) * s.total / maxv
        out.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">{e(s.name)}</text>')
        out.append(f'<rect x="{left}" y="{y + 3}" width="{bw:.1f}" height="{row - 6}" fill="{color[s.name]}"/>')
        out.append(f'<text x="{left + bw + 6:.1f}" y="{y + 15}">{s.total:,} ({100 * s.total / total:.1f}%, '
                   f'{s.count}x)</text>')
    out.append(f'<text x="10" y="{tl_top - 14}" fill="#555">timeline of the first execution</text>')
    if timeline:
        t0 = min(t[2] for t in timeline)
        t1 = max(t[3] for t in timeline)
        span = max(t1 - t0, 1)
        for name, instr, s0, s1 in timeline:
            x = 10 + (W - 20) * (s0 - t0) / span
            w = max((W - 20) * (s1 - s0) / span, 0.8)
            out.append(f'<rect x="{x:.1f}" y="{tl_top}" width="{w:.1f}" height="34" fill="{color.get(name, "#999")}">'
                       f'<title>{e(name)} (instruction {instr}): {s1 - s0:,} {unit}</title></rect>')
            if w > 7 * len(name) + 8:   # label the segments wide enough to hold their name
                out.append(f'<text x="{x + 4:.1f}" y="{tl_top + 21}" fill="white">{e(name)}</text>')
        out.append(f'<text x="10" y="{tl_top + 52}">0</text>')
        out.append(f'<text x="{W - 10}" y="{tl_top + 52}" text-anchor="end">{span:,} {unit}</text>')
    out.append("</svg>")
    return "\n".join(out)
