"""manifest.json of the fixture corpus: what each file is, read from the files themselves.

Layout: {"executorch": ver, "torch": ver, "byte_stable": {ext: bool}, "files": {file: {sha256, size}},
         "models": {name: {flow, files: [...], delegates, cases, methods: {m: {operators,
         non_const_buffer_sizes, inputs: [{dtype, shape}], outputs: [...]}}}}}
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

DTYPES = {0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32",
          7: "float64", 11: "bool"}

# Which kinds of file are byte-for-byte reproducible across export runs (measured: see NOTES.md).
# The tests compare sha256 for these and the structural facts (operators, arenas, specs) for all.
BYTE_STABLE = {".pte": True, ".bpte": True, ".ones.npz": True, ".etrecord": False}


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def kind(path) -> str:
    name = Path(path).name
    return ".ones.npz" if name.endswith(".ones.npz") else Path(name).suffix


def program_facts(pte_path: Path) -> dict:
    """methods -> operators, arena sizes, input/output specs; delegates. From the serialized program."""
    from executorch.exir import schema as s
    from executorch.exir._serialize._program import deserialize_pte_binary
    f = deserialize_pte_binary(Path(pte_path).read_bytes())
    prog = getattr(f, "program", f)
    methods, delegates = {}, set()

    def spec(i, plan):
        v = plan.values[i].val
        if isinstance(v, s.Tensor):
            return {"dtype": DTYPES.get(int(v.scalar_type), str(int(v.scalar_type))), "shape": list(v.sizes)}
        return {"dtype": type(v).__name__}

    for plan in prog.execution_plan:
        methods[plan.name] = {
            "operators": [f"{o.name}.{o.overload}" if o.overload else o.name for o in plan.operators],
            "non_const_buffer_sizes": list(plan.non_const_buffer_sizes),
            "inputs": [spec(i, plan) for i in plan.inputs],
            "outputs": [spec(i, plan) for i in plan.outputs],
        }
        delegates.update(d.id for d in plan.delegates)
    return {"methods": methods, "delegates": sorted(delegates)}


def entry_for(res, ones_path: Path | None) -> dict:
    """{name: model entry} with file list; file hashes are added by write_manifest."""
    files = [p for p in (res.pte, res.bpte, res.etrecord, ones_path) if p is not None]
    facts = program_facts(res.pte)
    return {res.name: {"flow": res.flow, "files": [p.name for p in files], "cases": res.cases, **facts}}


def file_facts(directory: Path, entries: dict) -> dict:
    out = {}
    for e in entries.values():
        for name in e["files"]:
            p = Path(directory) / name
            out[name] = {"sha256": sha256(p), "size": p.stat().st_size}
    return out


def write_manifest(path: Path, entries: dict) -> dict:
    import executorch.version
    import torch
    doc = {"executorch": executorch.version.__version__, "torch": torch.__version__.split("+")[0],
           "byte_stable": BYTE_STABLE, "files": file_facts(path.parent, entries),
           "models": dict(sorted(entries.items()))}
    path.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
    return doc


def load(path: Path) -> dict:
    return json.loads(Path(path).read_text())
