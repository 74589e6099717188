"""Export-once operator/model cases for tests: a tiny torch module given as source (class M), its
input specs, a flow; exported into a directory keyed by the content (source, specs, flow, torch
and executorch versions) with the real executorch runtime's outputs as the reference.

    case_dir(cache, name, source, specs, flow="portable", edge=None) -> Path with m.pte, m.bpte,
        ref.npz (reference outputs), ops.json (operators of forward); calibrated (pt2e, cortex_m) on the
    case's own inputs
    reference(dir) -> [np.ndarray]

edge: EdgeCompileConfig fields, plus "eager_reference": True where the portable kernels and PyTorch
disagree (the reference is then PyTorch's outputs, as it is where the reference runtime refuses).

Input spec: (shape, numpy dtype, kind); kinds: n normal, u uniform [-1, 1), i ints [0, 10),
s signed ints [-60, 60), b bool (p=0.5), cl normal channels_last (4-d), t ties (multiples of 0.5).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

HEADER = "import torch\nimport torch.nn.functional as F\n"


def inputs(name: str, specs) -> list[np.ndarray]:
    rng = np.random.default_rng(int(hashlib.sha256(name.encode()).hexdigest()[:8], 16))
    out = []
    for shape, dt, kind in specs:
        if kind in ("n", "cl"):
            a = rng.standard_normal(shape)
        elif kind == "i":
            a = rng.integers(0, 10, shape)
        elif kind == "s":
            a = rng.integers(-60, 60, shape)
        elif kind == "b":
            a = rng.uniform(size=shape) < 0.5
        elif kind == "t":
            a = np.round(rng.standard_normal(shape) * 4) / 2
        else:
            a = rng.uniform(-1, 1, shape)
        out.append(np.asarray(a).astype(dt))
    return out


def _key(source: str, specs, flow: str, edge) -> str:
    import importlib.metadata as md
    h = hashlib.sha256((HEADER + source).encode())
    h.update(json.dumps([flow, [list(map(str, s)) for s in specs], edge]).encode())
    for pkg in ("torch", "executorch"):
        try:
            h.update(md.version(pkg).encode())
        except md.PackageNotFoundError:
            pass
    return h.hexdigest()[:16]


def case_dir(cache: Path, name: str, source: str, specs, flow: str = "portable", edge: dict | None = None) -> Path:
    d = Path(cache) / f"{name}-{_key(source, specs, flow, edge)}"
    if (d / "ops.json").exists():
        return d
    import torch
    from etdeploy import exporting, oracle
    ns: dict = {}
    exec(compile(HEADER + source, f"<case:{name}>", "exec"), ns)
    torch.manual_seed(0)
    module = ns["M"]().eval()
    arrays = inputs(name, specs)
    ex = []
    for a, (_, _, kind) in zip(arrays, specs):
        t = torch.from_numpy(np.ascontiguousarray(a))
        ex.append(t.contiguous(memory_format=torch.channels_last) if kind == "cl" else t)
    ex = tuple(ex)
    d.mkdir(parents=True, exist_ok=True)
    edge = dict(edge or {})
    eager = edge.pop("eager_reference", False)
    res = exporting.export_model(module, ex, d, "m", flow=flow, case_inputs=[ex], calibration=[ex],
                                 edge_config=_edge(edge))
    ref = None if eager else _runtime_reference(res.pte, ex, d, flow)
    if ref is None:  # PyTorch's own outputs (the bundled expectation)
        ref = [np.asarray(a) for a in oracle.bundled_cases(res.bpte)["forward"][0][1]]
        (d / "ref_is_eager.txt").write_text("eager_reference" if eager else "the reference runtime refused")
    np.savez(d / "ref.npz", *[np.asarray(r) for r in ref])
    (d / "ops.json").write_text(json.dumps(res.operators["forward"]))
    return d


def _runtime_reference(pte, ex, d: Path, flow: str):
    """The real executorch runtime's outputs (cortex_m programs: executorch's Python reference ops),
    or None where its portable kernels refuse the program (some layouts, channels_last for instance)"""
    from etdeploy import oracle
    feed = [np.ascontiguousarray(t.numpy()) for t in ex]
    if flow == "cortex_m":
        return oracle.run_cortex_m_reference(pte, feed)
    try:
        return oracle.run_reference(pte, feed)
    except oracle.OracleError as e:
        (d / "runtime_refused.txt").write_text(str(e))
        return None


def _edge(edge: dict | None) -> dict | None:
    """EdgeCompileConfig fields; operator lists given as "aten.name.overload" strings"""
    if not edge:
        return None
    import torch
    out = dict(edge)
    for key in ("preserve_ops", "_core_aten_ops_exception_list"):
        if key in out:
            ops = []
            for name in out[key]:
                f = torch.ops
                for part in name.split("."):
                    f = getattr(f, part)
                ops.append(f)
            out[key] = ops
    return out


def reference(d: Path) -> list[np.ndarray]:
    z = np.load(Path(d) / "ref.npz")
    return [z[f"arr_{i}"] for i in range(len(z.files))]


def operators(d: Path) -> list[str]:
    return json.loads((Path(d) / "ops.json").read_text())
