"""What a run leaves in build/<board>/run/: result.json, one .npy per output, and the comparison
with the expected outputs of a bundled program when there are some."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from . import fbs
from .pte import ProgramInfo

INLINE_VALUES = 64


def expected_outputs(prog: ProgramInfo) -> dict:
    """{(method name, case): [np.ndarray | None]} from a .bpte's test suites."""
    if not prog.bundled:
        return {}
    from .link import NP_DTYPES
    root = fbs.Reader(fbs.bundled_schema(), prog.data).root()
    out = {}
    for suite in root.get("method_test_suites") or []:
        for ci, case in enumerate(suite.get("test_cases") or []):
            arrs = []
            for v in case.get("expected_outputs") or []:
                t = v.get("val") if v.get("val_type") == "Tensor" else None
                if t is None or t.get("scalar_type") not in NP_DTYPES:
                    arrs.append(None)
                    continue
                a = np.frombuffer(t["data"].tobytes(), dtype=NP_DTYPES[t["scalar_type"]])
                arrs.append(a.reshape(t.get("sizes") or []))
            out[(suite.get("method_name"), ci)] = arrs
    return out


def describe(arr, expected=None) -> dict:
    d = {}
    if isinstance(arr, np.ndarray):
        d = {"dtype": str(arr.dtype), "shape": list(arr.shape)}
        if arr.size <= INLINE_VALUES:
            d["values"] = arr.tolist()
        else:
            d["sha256"] = hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()
            if arr.dtype.kind in "fiub":
                f = arr.astype(np.float64)
                d["min"], d["max"], d["mean"] = float(f.min()), float(f.max()), float(f.mean())
        if expected is not None and expected.shape == arr.shape:
            err = np.abs(arr.astype(np.float64) - expected.astype(np.float64))
            d["max_abs_err"] = float(err.max()) if err.size else 0.0
    else:
        d = {"dtype": type(arr).__name__, "shape": [], "values": arr}
    return d


def write(res, run_dir: Path, programs: list[ProgramInfo] | None = None, board: str = "",
          extra: dict | None = None) -> dict:
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    for old in run_dir.glob("output_*.npy"):
        old.unlink()
    programs = programs or []
    expected = {i: expected_outputs(p) for i, p in enumerate(programs)}
    names = {(i, j): m.name for i, p in enumerate(programs) for j, m in enumerate(p.methods)}
    outs = []
    for o in res.outputs:
        mname = names.get((o.program, o.method), str(o.method))
        exp = None
        if o.case is not None:
            arrs = expected.get(o.program, {}).get((mname, o.case))
            if arrs and o.index < len(arrs):
                exp = arrs[o.index]
        entry = {"program": o.program, "method": mname, "case": o.case, "index": o.index} | describe(o.value, exp)
        stem = f"output_p{o.program}_{mname}" + (f"_case{o.case}" if o.case is not None else "") + f"_{o.index}"
        if isinstance(o.value, np.ndarray):
            np.save(run_dir / f"{stem}.npy", o.value)
            entry["file"] = f"{stem}.npy"
        outs.append(entry)
    doc = {
        "board": board,
        "status": res.status,
        "reason": res.reason,
        "exit_code": res.exit_code,
        "elapsed_s": round(res.elapsed, 3),
        "result": res.result,
        "cases": [c | {"method": names.get((c["program"], c["method"]), c["method"])} for c in res.cases],
        "methods": res.methods,
        "errors": res.errors,
        "fault": res.fault,
        "link": {"frames": res.link.frames, "bad_frames": res.link.bad_frames, "lost_frames": res.link.lost_frames},
        "outputs": outs,
        "logs": res.logs,
    } | (extra or {})
    (run_dir / "result.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
    return doc
