"""Where two executorch programs (.pte, or the program inside a .bpte) differ, walked field by field.

Re-exporting a calibrated model (pt2e, cortex_m, ethos_u) on another CPU gives the same program with
slightly different quantisation numbers: the observers see eager activations whose last bits depend on
the CPU's vector kernels (AVX2 vs AVX-512), so scales move by ~1e-7 relative and the fixed-point
multipliers derived from them by as much. `calibration_drift` accepts exactly that and nothing else."""
from __future__ import annotations

import struct
from dataclasses import dataclass

from etdeploy import fbs

# scales and requantisation multipliers seen to move by ~1e-7 between CPUs; 1e-5 leaves room, and a
# structural number (a size, an index, an offset) moving at all fails: those are exact below 1e5
REL = 1e-5


@dataclass(frozen=True)
class Difference:
    path: str
    kind: str      # "value", "length", "bytes", "segment"
    old: object
    new: object

    def __str__(self) -> str:
        return f"{self.path}: {self.kind} {self.old!r} -> {self.new!r}"


def _program(data: bytes):
    if data[4:8] == b"BP08":
        span = fbs.Reader(fbs.bundled_schema(), data).root()["program"]
        data = data[span.offset:span.offset + span.size]
    psize, seg_base = len(data), 0
    if data[8:12] == b"eh00":
        _, psize, seg_base = struct.unpack_from("<IQQ", data, 12)
    return fbs.Reader(fbs.program_schema(), data, limit=psize).root(), data, seg_base


def _walk(old, new, path: str, out: list[Difference]) -> None:
    if isinstance(old, dict):
        for k in old:
            if k != "_pos":
                _walk(old[k], new.get(k), f"{path}.{k}", out)
    elif isinstance(old, list):
        if not isinstance(new, list) or len(old) != len(new):
            out.append(Difference(path, "length", len(old), len(new) if isinstance(new, list) else new))
            return
        for i, (x, y) in enumerate(zip(old, new)):
            _walk(x, y, f"{path}[{i}]", out)
    elif isinstance(old, fbs.ByteSpan):
        if not isinstance(new, fbs.ByteSpan) or len(old) != len(new):
            out.append(Difference(path, "length", len(old), len(new) if new is not None else None))
        elif old.tobytes() != new.tobytes():
            out.append(Difference(path, "bytes", len(old), sum(a != b for a, b in zip(old.tobytes(), new.tobytes()))))
    elif old != new:
        out.append(Difference(path, "value", old, new))


def differences(old: bytes, new: bytes) -> list[Difference]:
    """Every field (and segment) where new differs from old."""
    (to, do, so), (tn, dn, sn) = _program(old), _program(new)
    out: list[Difference] = []
    _walk(to, tn, "", out)
    if out and any(d.kind == "length" for d in out):
        return out
    for i, s in enumerate(to.get("segments") or []):
        a = do[so + s["offset"]:so + s["offset"] + s["size"]]
        b = dn[sn + s["offset"]:sn + s["offset"] + s["size"]]
        if a != b:
            out.append(Difference(f"segment[{i}]", "segment", len(a), sum(x != y for x, y in zip(a, b))))
    return out


def calibration_drift(d: Difference) -> bool:
    """True for a difference that re-calibration on another CPU explains: a double (scale) or an int
    (fixed-point multiplier) in a method's values within REL, or the bytes of a delegate's compiled payload
    (Vela folds the scales into its command stream) at the same length."""
    if d.kind == "value" and ".values[" in d.path and d.path.endswith((".double_val", ".int_val")):
        return abs(d.new - d.old) <= REL * max(abs(d.old), abs(d.new))
    return d.kind == "bytes" and d.path.startswith(".backend_delegate_data[")
