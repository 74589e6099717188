"""Multiply-accumulates per kernel instruction of a program, from the tensor shapes in the .pte.

    layers(path_or_bytes, method="forward") -> [Layer]    one per KernelCall of chain 0
    summary(layers) -> MacSummary                         int8 / float MACs, per operator and per kind
    format_table(summary) -> str                          the table `etdeploy export` prints

A layer's kind: "pointwise" (1x1 convolution), "conv" (KxK convolution), "depthwise" (one input
channel per group), "linear" (linear / matmul forms) or "other" (no MACs counted). Its arithmetic is
"int8" when the instruction's first tensor argument is 8-bit (cortex_m::quantized_* and the
quantized_decomposed forms consume int8), else "float". A transposed convolution counts every input
pixel times every weight (what the scatter form computes; outputs cropped by padding included).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from math import prod
from pathlib import Path

from . import fbs, pte

LINEAR_OPS = ("addmm", "mm", "bmm", "linear", "quantized_linear", "quantized_bmm", "matmul")
KINDS = ("pointwise", "conv", "depthwise", "linear", "other")


@dataclass(frozen=True)
class Layer:
    index: int          # instruction id in chain 0 (the ETDump event's instruction_id)
    op: str             # ns::name.overload
    kind: str           # one of KINDS
    macs: int
    arith: str          # "int8" or "float" (what the MACs run in)
    kernel: tuple = ()  # (kh, kw) of convolutions


@dataclass
class MacSummary:
    int8: int = 0
    float: int = 0
    by_op: dict = field(default_factory=dict)     # op -> [calls, macs, arith]
    by_kind: dict = field(default_factory=dict)   # (kind, arith) -> macs

    @property
    def total(self) -> int:
        return self.int8 + self.float

    @property
    def int8_share(self) -> float:
        return self.int8 / self.total if self.total else 0.0


def _root(data: bytes) -> dict:
    psize = len(data)
    if data[8:12] == b"eh00":
        psize = struct.unpack_from("<IQQ", data, 12)[1]
    return fbs.Reader(fbs.program_schema(), data, limit=psize).root()


def _base(op: str) -> str:
    return op.split("::")[-1].split(".")[0]


def _arith(t) -> str:
    return "int8" if t is not None and t.dtype_name in ("int8", "uint8", "qint8", "quint8") else "float"


def layers(program: Path | str | bytes, method: str = "forward") -> list[Layer]:
    data = program if isinstance(program, (bytes, bytearray)) else Path(program).read_bytes()
    root = _root(bytes(data))
    plan = next((p for p in root["execution_plan"] if p.get("name") == method), None)
    if plan is None:
        return []
    vals = plan["values"]
    ops = [f"{o.get('name')}.{o.get('overload') or 'default'}" for o in plan.get("operators") or []]
    out = []
    for i, ins in enumerate(plan["chains"][0].get("instructions") or []):
        if ins.get("instr_args_type") != "KernelCall":
            continue
        body = ins["instr_args"]
        op = ops[body["op_index"]]
        args = [pte._describe(vals[a]) for a in body["args"]]
        tens = [a if isinstance(a, pte.TensorInfo) else None for a in args]
        outt = next((t for t in reversed(tens) if t is not None), None)
        base = _base(op)
        kind, macs, kernel = "other", 0, ()
        if base in LINEAR_OPS and outt is not None:
            kind = "linear"
            if base in ("addmm", "mm", "bmm", "matmul", "quantized_bmm"):
                a, b = (tens[1], tens[2]) if base == "addmm" else (tens[0], tens[1])
                if a is not None and b is not None:
                    macs = prod(a.sizes) * b.sizes[-1]                  # [.., M, K] x [.., K, N]
            elif tens[1] is not None:
                macs = prod(outt.sizes) * prod(tens[1].sizes) // outt.sizes[-1]
        elif "conv" in base and outt is not None and tens[1] is not None and len(outt.sizes) in (3, 4):   # 1-d, 2-d
            w, x = tens[1], tens[0]
            cout = outt.sizes[1]                                       # sizes are logical (NCHW)
            per_out = prod(w.sizes) // cout                              # weight elements per output
            macs = prod(outt.sizes) * per_out
            if _transposed(base, args) and x is not None and len(x.sizes) == len(outt.sizes):
                macs = prod(x.sizes[2:]) * x.sizes[0] * prod(w.sizes)   # each input pixel x every weight
            cin = x.sizes[1] if x is not None and len(x.sizes) == len(outt.sizes) else 0
            groups = next((a[1] for a in args[::-1] if isinstance(a, tuple) and a[0] == "Int"), 1) \
                if base == "convolution" else 1
            if cin > 1 and ("depthwise" in base or groups == cin):   # cin 1: a KxK conv, whatever its op
                kind = "depthwise"
            elif per_out == cin:
                kind = "pointwise"
            else:
                kind = "conv"
            kernel = _kernel(w, cout, cin, kind)
        out.append(Layer(i, op, kind, macs, _arith(tens[0]) if macs else "float", kernel))
    return out


def _transposed(base: str, args) -> bool:
    """cortex_m::quantized_transpose_conv2d*, or aten convolution's `transposed` argument (the 7th)."""
    return "transpose_conv" in base or (base == "convolution" and len(args) > 6 and args[6] == ("Bool", True))


def _kernel(w, cout: int, cin: int, kind: str) -> tuple:
    """(kh, kw) whatever the weight layout (OIHW for aten, OHWI / 1HWC for cortex_m::)."""
    s = list(w.sizes)
    if kind == "pointwise":
        return (1, 1)
    rest = [d for d in s]
    for c in (cout, cin if kind != "depthwise" else 1):
        if c in rest:
            rest.remove(c)
    rest = [d for d in rest if d != 1] or [1]
    if len(rest) == 1:
        rest = rest * 2 if kind != "conv" else rest + [1]
    return tuple(rest[:2])


def summary(ls: list[Layer]) -> MacSummary:
    s = MacSummary()
    for l in ls:
        if not l.macs:
            continue
        row = s.by_op.setdefault(l.op, [0, 0, l.arith])
        row[0] += 1
        row[1] += l.macs
        s.by_kind[(l.kind, l.arith)] = s.by_kind.get((l.kind, l.arith), 0) + l.macs
        if l.arith == "int8":
            s.int8 += l.macs
        else:
            s.float += l.macs
    return s


def format_table(s: MacSummary, kept_float: dict | None = None) -> str:
    """Operators with MACs: calls, MACs, int8 or float; then the totals and the int8 share."""
    lines = [f"{'operator':44} {'calls':>5} {'MACs':>12}  runs in"]
    for op, (calls, macs, arith) in sorted(s.by_op.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"{op:44} {calls:5d} {macs:12,d}  {arith}")
    lines.append(f"{'MACs in int8':44} {'':5} {s.int8:12,d}  {100 * s.int8_share:.1f}%")
    lines.append(f"{'MACs in float':44} {'':5} {s.float:12,d}  {100 * (1 - s.int8_share) if s.total else 0:.1f}%")
    for op, why in (kept_float or {}).items():
        lines.append(f"kept in float: {op} ({why})")
    return "\n".join(lines)
