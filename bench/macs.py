"""MACs per kernel instruction of a program, from the tensor shapes in the .pte (tools/etdeploy/fbs +
pte): linear-like ops (addmm, mm, bmm, linear, cortex_m::quantized_linear) and convolutions
(aten::convolution, cortex_m::quantized_conv2d / quantized_depthwise_conv2d)."""
from __future__ import annotations

import struct
from dataclasses import dataclass
from math import prod
from pathlib import Path

import common  # noqa: F401  (sys.path)
from etdeploy import fbs, pte


@dataclass
class Instr:
    index: int           # instruction id in chain 0
    op: str
    kind: str            # "linear", "conv" or "other"
    macs: int
    dtype: str           # dtype of the output tensor


def _root(path: Path) -> dict:
    data = Path(path).read_bytes()
    psize = len(data)
    if data[8:12] == b"eh00":
        psize = struct.unpack_from("<IQQ", data, 12)[1]
    return fbs.Reader(fbs.program_schema(), data, limit=psize).root()


def kind_of(op: str) -> str:
    base = op.split("::")[-1].split(".")[0]
    if base in ("addmm", "mm", "bmm", "linear", "quantized_linear"):
        return "linear"
    if "conv" in base:
        return "conv"
    return "other"


def instructions(path: Path, method: str = "forward") -> list[Instr]:
    root = _root(path)
    plan = next(p for p in root["execution_plan"] if p.get("name") == method)
    vals = plan["values"]
    ops = [f"{o.get('name')}.{o.get('overload') or 'default'}" for o in plan.get("operators") or []]
    out = []
    for i, ins in enumerate(plan["chains"][0].get("instructions") or []):
        if ins.get("instr_args_type") != "KernelCall":
            continue
        body = ins["instr_args"]
        op = ops[body["op_index"]]
        ts = [pte._describe(vals[a]) for a in body["args"]]
        tens = [t if isinstance(t, pte.TensorInfo) else None for t in ts]
        outt = next((t for t in reversed(tens) if t is not None), None)
        k, macs = kind_of(op), 0
        base = op.split("::")[-1].split(".")[0]
        if k == "linear" and base in ("addmm", "mm", "bmm"):
            a, b = (tens[1], tens[2]) if base == "addmm" else (tens[0], tens[1])
            macs = prod(a.sizes) * b.sizes[-1]                     # [.., M, K] x [.., K, N]
        elif k in ("linear", "conv"):
            w = tens[1]
            cout = outt.sizes[-1] if k == "linear" else outt.sizes[1]   # sizes are logical (NCHW)
            macs = prod(outt.sizes) * prod(w.sizes) // cout          # per output: weight elements per channel
        out.append(Instr(i, op, k, macs, outt.dtype_name if outt else "?"))
    return out
