"""Export-once kernel cases for tests: a tiny torch module given as source text (defining class M), its
input specs and a flow, exported with etdeploy.exporting, bundled with its inputs, with reference
outputs from the real executorch runtime (portable, pt2e) or executorch's cortex_m:: reference ops
(cortex_m). Cached by content (module source, specs, flow, edge options, the reference code, package
versions: support.export_key) under the caller's .cache/<dir>/, so a test run re-exports only what changed.

    case = (flow, source, [(shape, dtype, kind), ...], exact, edge)
    d = export_case(cache, name, case, calib_random=0) -> dir with m.pte, m.bpte, ref.npz, ops.json
    d = case_dir(cache, name, source, specs, flow="portable", edge=None)   (same, keyword form)
    reference(d) -> [np.ndarray, ...]       operators(d) -> [str, ...]
    inputs(name, specs) -> the case's inputs (seeded by its name)
    run_cases_on_board(board, names, export, *scons_opts, check=...): every case in one image on a board

Input kinds: n normal, cl normal channels_last (4-d; the module is made channels_last too by
export_case), u uniform [-1, 1) (any other kind), w uniform [-4, 4), i ints [0, 10), small ints [0, 4),
s ints [-60, 60), q ints [-128, 128), ties ints [-3, 3], t multiples of 0.5, b bools (p 0.3), b50 bools
(p 0.5), special (integers, 8% NaN, 4% +inf, 4% -inf), special_tenths (one decimal, 10% NaN, 5% +inf,
5% -inf).

edge: EdgeCompileConfig fields (operator lists as "aten.name.overload" strings), plus test-only
options: "eager_reference": True where the portable kernels and PyTorch disagree (the reference is
then PyTorch's outputs, as it is where the reference runtime refuses the program), "calib_scale": k
(calibrate on inputs times k: the case's own inputs then saturate).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

HEADER = "import torch\nimport torch.nn.functional as F\n"


def _special(rng, shape, decimals, nan, inf):
    a = np.round(rng.standard_normal(shape), decimals)
    u = rng.uniform(size=shape)
    a[u < nan] = np.nan
    a[(u >= nan) & (u < nan + inf)] = np.inf
    a[(u >= nan + inf) & (u < nan + 2 * inf)] = -np.inf
    return a


def inputs(name: str, specs) -> list[np.ndarray]:
    rng = np.random.default_rng(int(hashlib.sha256(name.encode()).hexdigest()[:8], 16))
    out = []
    for shape, dt, kind in specs:
        if kind in ("n", "cl"):
            a = rng.standard_normal(shape)
        elif kind == "w":
            a = rng.uniform(-4, 4, shape)
        elif kind == "i":
            a = rng.integers(0, 10, shape)
        elif kind == "small":
            a = rng.integers(0, 4, shape)
        elif kind == "s":
            a = rng.integers(-60, 60, shape)
        elif kind == "q":
            a = rng.integers(-128, 128, shape)
        elif kind == "ties":
            a = rng.integers(-3, 4, shape)
        elif kind == "t":
            a = np.round(rng.standard_normal(shape) * 4) / 2
        elif kind in ("b", "b50"):
            a = rng.uniform(size=shape) < (0.3 if kind == "b" else 0.5)
        elif kind == "special":
            a = _special(rng, shape, 0, 0.08, 0.04)
        elif kind == "special_tenths":
            a = _special(rng, shape, 1, 0.1, 0.05)
        else:
            a = rng.uniform(-1, 1, shape)
        out.append(np.asarray(a).astype(dt))
    return out


def _hash(source: str, payload, flow: str) -> str:
    from support.export_key import content_key, flow_sources
    return content_key(HEADER + source, json.dumps(payload), files=flow_sources(flow))


def export_case(cache: Path, name: str, case, calib_random: int = 0) -> Path:
    """The tuple form (test_kernels_b/_bq/_c/_cm/_dsp/_f32): 4-d "cl" inputs make the module channels_last;
    calib_random more random inputs like the case's join the calibration set."""
    flow, src, specs, exact, edge = case
    d = Path(cache) / f"{name}-{_hash(src, [flow, specs, exact, edge, calib_random], flow)}"
    return _export(d, name, src, specs, flow, edge, module_cl=True, calib_random=calib_random)


def case_dir(cache: Path, name: str, source: str, specs, flow: str = "portable", edge: dict | None = None) -> Path:
    """The keyword form (test_kernels_d, test_seq_models): the module keeps its own layout."""
    d = Path(cache) / f"{name}-{_hash(source, [flow, [list(map(str, s)) for s in specs], edge], flow)}"
    return _export(d, name, source, specs, flow, edge, module_cl=False, calib_random=0)


def _export(d: Path, name: str, source: str, specs, flow: str, edge, module_cl: bool, calib_random: int) -> Path:
    if (d / "ops.json").exists():
        return d
    import torch
    from etdeploy import exporting
    ns: dict = {}
    exec(compile(HEADER + source, f"<kernel case {name}>", "exec"), ns)
    torch.manual_seed(0)
    module = ns["M"]().eval()
    ex = []
    for a, (_, _, kind) in zip(inputs(name, specs), specs):
        t = torch.from_numpy(np.ascontiguousarray(a))
        ex.append(t.contiguous(memory_format=torch.channels_last) if kind == "cl" else t)
    ex = tuple(ex)
    if module_cl and any(k == "cl" for _, _, k in specs):
        module = module.to(memory_format=torch.channels_last)
    calib = [ex]
    if calib_random:
        gen = torch.Generator().manual_seed(1)
        calib += [exporting.random_like(ex, gen) for _ in range(calib_random)]
    edge = dict(edge or {})
    k = edge.pop("calib_scale", None)
    if k is not None:
        calib = [tuple(t * k for t in c) for c in calib]
    eager = edge.pop("eager_reference", False)
    d.mkdir(parents=True, exist_ok=True)
    res = exporting.export_model(module, ex, d, "m", flow=flow, case_inputs=[ex], calibration=calib,
                                 edge_config=_edge(edge))
    ref = None if eager else _runtime_reference(res.pte, ex, d, flow)
    if ref is None:   # PyTorch's own outputs (the bundled expectation)
        from etdeploy import oracle
        ref = [np.asarray(a) for a in oracle.bundled_cases(res.bpte)["forward"][0][1]]
        if eager:
            (d / "ref_is_eager.txt").write_text("eager_reference")
    np.savez(d / "ref.npz", *[np.asarray(r) for r in ref])
    (d / "ops.json").write_text(json.dumps(res.operators["forward"]))
    return d


def _runtime_reference(pte, ex, d: Path, flow: str):
    """The real executorch runtime's outputs (cortex_m programs: executorch's Python reference ops),
    or None where its portable kernels refuse the program (some layouts, channels_last for instance)."""
    import executorch.kernels.quantized  # noqa: F401  (out variants of quantized_decomposed::)
    from etdeploy import oracle
    feed = [np.ascontiguousarray(t.numpy()) for t in ex]
    if flow == "cortex_m":
        return oracle.run_cortex_m_reference(pte, feed)
    try:
        return oracle.run_reference(pte, feed)
    except oracle.OracleError as e:
        (d / "ref_is_eager.txt").write_text(f"the reference runtime refused: {e}")
        return None


def _edge(edge: dict | None) -> dict | None:
    """EdgeCompileConfig fields; operator lists given as "aten.name.overload" strings."""
    if not edge:
        return None
    import torch
    out = dict(edge)
    for key in ("preserve_ops", "_core_aten_ops_exception_list"):
        if key in out:
            ops = []
            for op in out[key]:
                f = torch.ops
                for part in op.split("."):
                    f = getattr(f, part)
                ops.append(f)
            out[key] = ops
    return out


def reference(d: Path) -> list[np.ndarray]:
    z = np.load(Path(d) / "ref.npz")
    return [z[f"arr_{i}"] for i in range(len(z.files))]


def operators(d: Path) -> list[str]:
    return json.loads((Path(d) / "ops.json").read_text())


def run_cases_on_board(board: str, names, export, *opts: str, bpte: str = "m.bpte", check=None, **tolerance) -> None:
    """Every case's bundle in one image on a board (skipped, or failed on CI, without the board's tools),
    run once; export(name) -> the case's dir. Each case's outputs (its last bundled case) against its
    reference: check(name, ours, ref, what) where given, else compare.assert_close(ours, ref, what,
    **tolerance); what = "<board>/<name>". opts go to scons (the bundle's own rtol=/atol=: the
    comparison here is what decides)."""
    from support.boardrun import outputs_per_program
    from support.compare import assert_close
    from support.suite import require_board
    require_board(board)
    names = sorted(names)
    dirs = [Path(export(n)) for n in names]
    per = outputs_per_program(board, [d / bpte for d in dirs], *opts)
    for name, d, ours in zip(names, dirs, per):
        ref, what = reference(d), f"{board}/{name}"
        if check is not None:
            check(name, ours, ref, what)
        else:
            assert_close(ours, ref, what, **tolerance)
