"""Export-once kernel cases: a tiny torch module (source text defining class M) plus input specs,
exported with etdeploy.exporting, bundled with its inputs, and its reference outputs taken from the
real executorch runtime (portable flow). Cached by content (module source, specs, package versions)
under .cache/<cache>/, so a test run re-exports only what changed.

    case = (flow, source, [(shape, dtype, kind), ...], exact, edge_config)
    d = export_case(cache_dir, name, case) -> dir with m.pte, m.bpte, ref.npz, ops.json
    reference(d) -> [np.ndarray, ...]

Input kinds: n normal, u uniform [-1, 1), i ints in [0, 10), small ints in [0, 4), ties small integers (-3..3) as the
dtype, b bools, special (ties, NaN, +-inf), cl normal channels_last (4-d)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

HEADER = "import torch\nimport torch.nn.functional as F\n"


def source(case) -> str:
    return HEADER + case[1]


def inputs(name: str, case) -> list[np.ndarray]:
    rng = np.random.default_rng(int(hashlib.sha256(name.encode()).hexdigest()[:8], 16))
    out = []
    for shape, dt, kind in case[2]:
        if kind in ("n", "cl"):
            a = rng.standard_normal(shape)
        elif kind == "i":
            a = rng.integers(0, 10, shape)
        elif kind == "small":
            a = rng.integers(0, 4, shape)
        elif kind == "ties":
            a = rng.integers(-3, 4, shape)
        elif kind == "b":
            a = rng.uniform(size=shape) < 0.3
        elif kind == "special":
            a = np.round(rng.standard_normal(shape), 0)
            u = rng.uniform(size=shape)
            a[u < 0.08] = np.nan
            a[(u >= 0.08) & (u < 0.12)] = np.inf
            a[(u >= 0.12) & (u < 0.16)] = -np.inf
        else:
            a = rng.uniform(-1, 1, shape)
        out.append(np.asarray(a).astype(dt))
    return out


def _torch_inputs(case, arrays):
    import torch
    ts = []
    for a, (_, _, kind) in zip(arrays, case[2]):
        t = torch.from_numpy(np.ascontiguousarray(a))
        if kind == "cl":
            t = t.contiguous(memory_format=torch.channels_last)
        ts.append(t)
    return tuple(ts)


def _key(case) -> str:
    import importlib.metadata as md
    h = hashlib.sha256(source(case).encode())
    flow, _, specs, exact, edge = case
    h.update(json.dumps([flow, specs, exact, edge]).encode())
    for pkg in ("torch", "executorch"):
        try:
            h.update(md.version(pkg).encode())
        except md.PackageNotFoundError:
            pass
    return h.hexdigest()[:16]


def export_case(cache: Path, name: str, case) -> Path:
    d = Path(cache) / f"{name}-{_key(case)}"
    if (d / "ops.json").exists():
        return d
    import torch
    from etdeploy import exporting, oracle
    flow, _, specs, _, edge = case
    ns: dict = {}
    exec(compile(source(case), f"<kernel case {name}>", "exec"), ns)
    torch.manual_seed(0)
    module = ns["M"]().eval()
    ex = _torch_inputs(case, inputs(name, case))
    if any(k == "cl" for _, _, k in specs):
        module = module.to(memory_format=torch.channels_last)
    edge = dict(edge or {})
    if "preserve_ops" in edge:   # "aten.roll.default" -> the op object: kept whole, not decomposed
        ops = []
        for o in edge["preserve_ops"]:
            f = torch.ops
            for part in o.split("."):
                f = getattr(f, part)
            ops.append(f)
        edge["preserve_ops"] = ops
    d.mkdir(parents=True, exist_ok=True)
    res = exporting.export_model(module, ex, d, "m", flow=flow, case_inputs=[ex], calibration=[ex],
                                 edge_config=edge or None)
    try:
        ref = oracle.run_reference(res.pte, [np.ascontiguousarray(t.numpy()) for t in ex])
    except oracle.OracleError as e:   # its portable kernels refuse some layouts (mixed dim orders): eager torch
        (d / "ref_is_eager.txt").write_text(str(e))
        ref = [np.asarray(a) for a in oracle.bundled_cases(res.bpte)["forward"][0][1]]
    np.savez(d / "ref.npz", *[np.asarray(r) for r in ref])
    (d / "ops.json").write_text(json.dumps(res.operators["forward"]))
    return d


def reference(d: Path) -> list[np.ndarray]:
    z = np.load(Path(d) / "ref.npz")
    return [z[f"arr_{i}"] for i in range(len(z.files))]


def operators(d: Path) -> list[str]:
    return json.loads((Path(d) / "ops.json").read_text())
