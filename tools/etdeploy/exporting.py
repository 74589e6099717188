"""Export flows: an nn.Module + example inputs -> .pte (+ .etrecord, + .bpte for CPU programs).

    export_model(module, example_inputs, out_dir, name, flow="portable") -> ExportResult
    export_methods({"forward": (module, inputs), "other": (module2, inputs2)}, out_dir, name)

Flows:
  portable  float program on portable kernels; expected outputs from the eager model.
  pt2e      XNNPACKQuantizer PT2E int8 on portable + quantized_decomposed kernels (no delegate);
            expected outputs from the real runtime (the reference for quantized arithmetic).
  cortex_m  CortexMQuantizer + CortexMPassManager: cortex_m:: kernels (not a delegate); expected
            outputs from the package's Python reference implementations of those ops (aten:: ops
            with the portable kernels' arithmetic where ATen's differs: oracle_portable.py).
  ethos_u   EthosUQuantizer + EthosUPartitioner (Vela) for the board's NPU target, system config and
            memory mode (`npu=`, default ethos-u55-128 / Ethos_U55_High_End_Embedded / Shared_Sram); a
            DelegateCall to EthosUBackend. The .bpte (only when asked: bundle=True) carries expected
            outputs of the quantized eager graph (q/dq simulation), which the NPU matches to about one
            quantum, not bit for bit.

flow_for_board(board, quantize, flow) picks the flow a board's data names; see cli/export.py.

executorch is imported lazily (about 9 s). Slow steps report progress on stderr.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from etdeploy.errors import EtdeployError

# re-exported: callers name them exporting.FLOWS, exporting.ExportError ...
from .export_common import (ARM_PACKAGES, CPU_FLOWS, ETHOS_U_DEFAULT, ETHOS_U_TARGET, FLOWS,  # noqa: F401
                            USER_FLOWS, ExportError, MissingArmPackages, _say, _Step)
from .export_lowering import (_LOWER, _calibrate_quantize, _check_arm_packages, _KeepInFloat,  # noqa: F401
                              _lower_cortex_m, _lower_ethos_u, _lower_portable)


@dataclass
class ExportResult:
    name: str
    flow: str
    pte: Path
    etrecord: Path | None = None
    bpte: Path | None = None
    cases: int = 0
    operators: dict[str, list[str]] = field(default_factory=dict)
    delegates: list[str] = field(default_factory=list)
    seconds: float = 0.0
    kept_float: dict[str, str] = field(default_factory=dict)   # operator -> why it stayed in float
    channels_last: bool = False        # the flow put the model and its 4-d inputs in channels_last
    macs: object = None                # program_macs.MacSummary of the forward method


# ---------------------------------------------------------------- test-case inputs

def random_like(example_inputs: tuple, gen, int_range: tuple[int, int] = (-8, 8)) -> tuple:
    """Random inputs with the dtype, shape and memory format of the example inputs."""
    import torch
    out = []
    for x in example_inputs:
        if not isinstance(x, torch.Tensor):
            out.append(x)
            continue
        if x.dtype.is_floating_point:
            t = torch.randn(x.shape, generator=gen).to(x.dtype)
        elif x.dtype == torch.bool:
            t = torch.randint(0, 2, x.shape, generator=gen).bool()
        else:
            t = torch.randint(int_range[0], int_range[1], x.shape, generator=gen).to(x.dtype)
        if x.dim() == 4 and x.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous():
            t = t.contiguous(memory_format=torch.channels_last)
        out.append(t)
    return tuple(out)


def _flat_outputs(out) -> list:
    import torch
    if isinstance(out, torch.Tensor):
        return [out]
    flat = []
    for o in out:
        flat.extend(_flat_outputs(o))
    return flat


# ---------------------------------------------------------------- program facts

def program_operators(pte_bytes: bytes) -> tuple[dict[str, list[str]], list[str]]:
    """(operators per method as 'ns::name.overload', delegate ids) read from serialized bytes."""
    from executorch.exir._serialize._program import deserialize_pte_binary
    prog = deserialize_pte_binary(pte_bytes)
    prog = getattr(prog, "program", prog)
    ops, delegates = {}, []
    for plan in prog.execution_plan:
        ops[plan.name] = [f"{o.name}.{o.overload}" if o.overload else o.name for o in plan.operators]
        delegates.extend(d.id for d in plan.delegates)
    return ops, sorted(set(delegates))


# ---------------------------------------------------------------- the flows

def _to_executorch(edge, flow: str):
    from executorch.exir import ExecutorchBackendConfig
    if flow == "pt2e":
        import executorch.kernels.quantized  # noqa: F401
    from .shuffle_layout import LayoutSpecs, channels_last_shuffles
    from .view_layout import contiguous_view_bases, drop_identity_clones
    options = {"extract_delegate_segments": False} if flow == "ethos_u" else {}
    k = channels_last_shuffles(edge)
    if k:   # the layouts chosen for the shuffles and what follows them, applied to the emitted specs
        options["sym_shape_eval_pass"] = LayoutSpecs()
    if k:
        _say(f"{k} channel shuffle(s) of channels_last int8 tensors done in place of their views "
             f"(the convolutions after them keep channels_last inputs)")
    drop_identity_clones(edge)
    n = contiguous_view_bases(edge)
    if n:
        _say(f"{n} view(s) of a channels_last tensor get a copy to the contiguous order first "
             f"(executorch would alias them with the wrong layout)")
    with _Step("to_executorch (memory planning, emit)"):
        return edge.to_executorch(ExecutorchBackendConfig(**options)) if options else edge.to_executorch()


def _write_bundle(et_prog, suites: dict[str, list[tuple[tuple, list]]], path: Path):
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.core import BundledProgram
    from executorch.devtools.bundled_program.serialize import (
        serialize_from_bundled_program_to_flatbuffer)
    method_suites = [MethodTestSuite(method_name=m, test_cases=[
        MethodTestCase(inputs=list(inp), expected_outputs=list(exp)) for inp, exp in cases])
        for m, cases in suites.items()]
    bundle = BundledProgram(et_prog, method_suites)
    path.write_bytes(serialize_from_bundled_program_to_flatbuffer(bundle))
    return bundle


def export_model(module, example_inputs: tuple, out_dir: Path | str, name: str, flow: str = "portable", *,
                 cases: int = 3, seed: int = 0, case_inputs: Sequence[tuple] | None = None,
                 make_inputs: Callable | None = None, calibration: Sequence[tuple] | None = None,
                 bundle: bool | None = None, edge_config: dict | None = None, npu: dict | None = None,
                 cpu: str | None = None) -> ExportResult:
    """Export `module` with `flow` into out_dir/<name>.pte, .etrecord and (CPU flows) .bpte.

    Test cases: `case_inputs` if given, else `cases` random input tuples from a torch.Generator seeded
    with `seed` (`make_inputs(gen)` if given, else random_like(example_inputs)). Calibration for the
    quantized flows: `calibration` if given, else the example inputs plus the test-case inputs.
    `edge_config`: EdgeCompileConfig fields for the portable flow (e.g. preserve_ops=[...],
    _skip_dim_order=True).
    """
    if flow not in FLOWS:
        raise ExportError(f"unknown export flow '{flow}': choose one of {', '.join(FLOWS)}")
    t0 = time.monotonic()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with _Step("importing torch/executorch"):
        import torch
        import executorch.exir  # noqa: F401
    torch.manual_seed(seed)
    module = module.eval()
    gen = torch.Generator().manual_seed(seed)
    if case_inputs is None:
        case_inputs = [make_inputs(gen) if make_inputs else random_like(example_inputs, gen)
                       for _ in range(cases)]
    case_inputs = [tuple(c) for c in case_inputs]
    if calibration is None:
        calibration = [tuple(example_inputs)] + case_inputs
    _say(f"{name}: flow {flow}")
    channels_last = False
    if flow == "cortex_m":
        from . import cortex_m_export
        if cortex_m_export.is_4d_inputs(example_inputs):
            # CortexMQuantizer lowers convolutions only in channels_last; the program's 4-d inputs
            # take dim order (0, 2, 3, 1), which the host side and the bundle lay out
            module, example_inputs, calibration, case_inputs = cortex_m_export.to_channels_last(
                module, tuple(example_inputs), calibration, case_inputs)
            channels_last = True
            _say(f"{name}: model and 4-d inputs in channels_last (int8 convolutions need it)")
    kept: dict[str, str] = {}
    while True:
        try:
            with _Step(f"{name}: export + lower"):
                if flow == "portable":
                    edge, extra = _lower_portable(module, tuple(example_inputs), calibration, edge_config)
                elif flow == "ethos_u":
                    edge, extra = _lower_ethos_u(module, tuple(example_inputs), calibration, npu)
                elif flow.startswith("xnnpack"):
                    from etdeploy import export_xnnpack
                    edge, extra = export_xnnpack.lower(flow, module, tuple(example_inputs), calibration,
                                                       _calibrate_quantize)
                elif flow == "cortex_m":
                    edge, extra = _lower_cortex_m(module, tuple(example_inputs), calibration, cpu or "M55",
                                                  frozenset(kept))
                else:
                    edge, extra = _LOWER[flow](module, tuple(example_inputs), calibration)
            et_prog = _to_executorch(edge, flow)
            break
        except EtdeployError:
            raise
        except _KeepInFloat as k:
            if k.op in kept or k.op == "?" or len(kept) >= 8:
                raise ExportError(_one_line(name, flow, f"the quantized {k.op} fails: {k.why}")) from None
            kept[k.op] = k.why
            _say(f"{name}: the quantized reference fails in {k.op} ({k.why}): keeping {k.op} in float")
        except Exception as e:  # executorch raises a zoo of types; name the model and the flow
            raise ExportError(_one_line(name, flow, f"{type(e).__name__}: {e}")) from e

    pte = out_dir / f"{name}.pte"
    pte.write_bytes(et_prog.buffer)
    ops, delegates = program_operators(et_prog.buffer)
    from . import program_macs
    res = ExportResult(name, flow, pte, operators=ops, delegates=delegates, kept_float=kept,
                       channels_last=channels_last,
                       macs=program_macs.summary(program_macs.layers(et_prog.buffer)))

    if flow == "cortex_m":
        etrecord, reference = extra
        etrecord.add_executorch_program(et_prog)
    elif flow == "ethos_u":
        etrecord, reference = et_prog.get_etrecord(), extra[1]
    else:
        etrecord, reference = et_prog.get_etrecord(), None

    if bundle is None:
        bundle = flow in CPU_FLOWS
    bp = None
    if bundle and case_inputs:
        with _Step(f"{name}: expected outputs for {len(case_inputs)} test cases"):
            expected = [_expected(flow, module, reference, pte, c) for c in case_inputs]
        res.bpte = out_dir / f"{name}.bpte"
        bp = _write_bundle(et_prog, {"forward": list(zip(case_inputs, expected))}, res.bpte)
        res.cases = len(case_inputs)
    if bp is not None:
        etrecord.update_representative_inputs(bp)
        etrecord.update_reference_outputs(bp)
    res.etrecord = out_dir / f"{name}.etrecord"
    etrecord.save(str(res.etrecord))
    res.seconds = time.monotonic() - t0
    return res


WAY_OUT = {"portable": "check the module exports with torch.export.export(module, inputs)",
           "pt2e": "export it in float (no --quantize) or with --flow cortex_m",
           "cortex_m": "export it in float (no --quantize) or with --flow pt2e",
           "ethos_u": "export it with --flow cortex_m (CPU int8) or in float (no --quantize)"}


def _one_line(name: str, flow: str, what: str) -> str:
    """One line: the module, the flow, the first line of the cause, the way out."""
    first = (what.strip().splitlines() or [""])[0]
    if len(first) > 240:
        first = first[:237] + "..."
    return f"exporting '{name}' with flow '{flow}' failed: {first}; way out: {WAY_OUT.get(flow, '')}"


def _expected(flow: str, module, reference, pte: Path, inputs: tuple) -> list:
    import torch
    if flow == "portable":
        with torch.no_grad():
            return [t.detach().clone() for t in _flat_outputs(module(*inputs))]
    if flow == "cortex_m":   # CPU kernels: aten:: ops blended as the portable kernels do
        from etdeploy.oracle_portable import portable_arithmetic
        with torch.no_grad(), portable_arithmetic():
            return [t.detach().clone() for t in _flat_outputs(reference(*inputs))]
    if flow == "ethos_u":
        with torch.no_grad():
            return [t.detach().clone() for t in _flat_outputs(reference(*inputs))]
    from etdeploy.oracle import run_reference  # pt2e: the real runtime's quantized kernels
    return [torch.from_numpy(a) for a in run_reference(pte, [x.numpy() for x in inputs])]


def export_methods(methods: dict, out_dir: Path | str, name: str, *, cases: int = 3,
                   seed: int = 0) -> ExportResult:
    """Float program with several entry points: methods = {method: (module, example_inputs)}.
    Every method gets `cases` random test cases (expected outputs from the eager modules)."""
    t0 = time.monotonic()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with _Step("importing torch/executorch"):
        import torch
        from executorch.exir import to_edge_transform_and_lower
    torch.manual_seed(seed)
    try:
        with _Step(f"{name}: export + lower {len(methods)} methods"):
            eps = {m: torch.export.export(mod.eval(), tuple(ex)) for m, (mod, ex) in methods.items()}
            edge = to_edge_transform_and_lower(eps, generate_etrecord=True)
        et_prog = _to_executorch(edge, "portable")
    except Exception as e:
        raise ExportError(f"exporting '{name}' ({', '.join(methods)}) failed: {type(e).__name__}: {e}") from e
    pte = out_dir / f"{name}.pte"
    pte.write_bytes(et_prog.buffer)
    ops, delegates = program_operators(et_prog.buffer)
    res = ExportResult(name, "portable", pte, operators=ops, delegates=delegates)
    gen = torch.Generator().manual_seed(seed)
    suites = {}
    for m, (mod, ex) in methods.items():
        ins = [random_like(tuple(ex), gen) for _ in range(cases)]
        with torch.no_grad():
            suites[m] = [(i, [t.clone() for t in _flat_outputs(mod(*i))]) for i in ins]
    res.bpte = out_dir / f"{name}.bpte"
    bp = _write_bundle(et_prog, suites, res.bpte)
    res.cases = cases
    etrecord = et_prog.get_etrecord()
    etrecord.update_representative_inputs(bp) if "forward" in methods else None
    etrecord.update_reference_outputs(bp)
    res.etrecord = out_dir / f"{name}.etrecord"
    etrecord.save(str(res.etrecord))
    res.seconds = time.monotonic() - t0
    return res
