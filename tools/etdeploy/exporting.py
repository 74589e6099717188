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

import contextlib
import copy
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from etdeploy.errors import EtdeployError

FLOWS = ("portable", "pt2e", "cortex_m", "ethos_u", "xnnpack", "xnnpack_q8")    # xnnpack*: export_xnnpack
CPU_FLOWS = ("portable", "pt2e", "cortex_m", "xnnpack", "xnnpack_q8")
USER_FLOWS = ("portable", "pt2e", "cortex_m", "ethos_u", "xnnpack")   # what --flow / flow= take (xnnpack_q8 = xnnpack + quantize)
ARM_PACKAGES = ("ethos-u-vela==5.1.0", "tosa-tools==2026.5.0", "ml_dtypes==0.5.1")
ETHOS_U_TARGET = "ethos-u55-128"
ETHOS_U_DEFAULT = {"target": ETHOS_U_TARGET, "system_config": "Ethos_U55_High_End_Embedded",
                   "memory_mode": "Shared_Sram"}


class ExportError(EtdeployError):
    """A model could not be exported with the requested flow."""


class MissingArmPackages(ExportError):
    def __init__(self, missing: Sequence[str]):
        self.missing = list(missing)
        super().__init__(
            f"the ethos_u flow needs the Arm packages ({', '.join(self.missing)} not importable). "
            f"Install them: pip install {' '.join(ARM_PACKAGES)}  (or pip install -r requirements-arm.txt)")


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


def _say(msg: str) -> None:
    print(f"[export] {msg}", file=sys.stderr, flush=True)


class _Step:
    """Progress message around a slow step: '... ' then 'done in N s'."""

    def __init__(self, what: str):
        self.what = what

    def __enter__(self):
        self.t0 = time.monotonic()
        _say(self.what + " ...")
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            _say(f"{self.what}: {time.monotonic() - self.t0:.1f} s")
        return False


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


# ---------------------------------------------------------------- lowering per flow

def _calibrate_quantize(module, example_inputs, quantizer, calibration: Sequence[tuple], keep=None):
    import torch
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    gm = torch.export.export(module, example_inputs).module(check_guards=False)
    prepared = prepare_pt2e(gm, quantizer)
    with _Step(f"calibrating on {len(calibration)} samples"):
        for sample in calibration:
            prepared(*sample)
    converted = convert_pt2e(prepared)
    if keep is not None:          # the quantized eager graph (q/dq simulation): a reference for the NPU
        keep.append(copy.deepcopy(converted))
    return torch.export.export(converted, example_inputs)


def _lower_portable(module, example_inputs, calibration, edge_config=None):
    import torch
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower
    ep = _fold_batch_norm(torch.export.export(module, example_inputs), example_inputs)
    config = EdgeCompileConfig(**edge_config) if edge_config else None
    edge = to_edge_transform_and_lower(ep, compile_config=config, generate_etrecord=True)
    return _fold_constants(edge), None


def _fold_constants(edge):
    """Operators whose inputs are all constants (a Linear's weight transpose above all) computed once
    here: left in, the runtime transposes every Linear's weight on every inference (95% of an MLP's
    time; 60% of the FC autoencoder's instructions on the M55)."""
    from executorch.exir.passes.constant_prop_pass import constant_prop_pass
    for method in edge.methods:
        ep = edge.exported_program(method)
        # only layout ops: folding arithmetic on constants would change what a program computes
        # at run time (and what a test program means to exercise)
        skip = {n.target for n in ep.graph.nodes
                if n.op == "call_function" and getattr(n.target, "name", lambda: "")() not in _FOLDABLE}
        edge._edge_programs[method] = constant_prop_pass(ep, custom_skip_targets=skip)
    return edge


_FOLDABLE = {"aten::permute_copy", "aten::t_copy", "aten::transpose_copy"}


def _fold_batch_norm(ep, example_inputs):
    """Conv -> BatchNorm (inference) folded into the conv's weights and bias, as the quantized flows do:
    without it a float program runs every BatchNorm as its own pass over the tensor (a quarter of
    DS-CNN's float instructions on the M55). Programs without such a pair are left exactly as exported."""
    import torch

    def norms(graph):
        return sum(1 for n in graph.nodes if "batch_norm" in str(n.target))
    if not norms(ep.graph):
        return ep
    try:
        from torchao.quantization.pt2e.utils import _fuse_conv_bn_
    except ImportError:     # torchao comes with executorch; without it the program keeps its norms
        return ep
    gm = ep.module()
    before = norms(gm.graph)
    _fuse_conv_bn_(gm)
    if norms(gm.graph) == before:
        return ep
    _say(f"folded {before - norms(gm.graph)} BatchNorm(s) into their convolutions")
    return torch.export.export(gm, example_inputs)


def _lower_pt2e(module, example_inputs, calibration):
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower
    import executorch.kernels.quantized  # noqa: F401  (out variants of quantized_decomposed::)
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=False))
    ep = _calibrate_quantize(module, example_inputs, quantizer, calibration)
    edge = to_edge_transform_and_lower(ep, compile_config=EdgeCompileConfig(_check_ir_validity=False),
                                       generate_etrecord=True)
    return edge, None


class _KeepInFloat(Exception):
    """The quantized reference failed in one operator: re-export with it in float."""

    def __init__(self, op: str, why: str):
        super().__init__(f"{op}: {why}")
        self.op, self.why = op, why


def _lower_cortex_m(module, example_inputs, calibration, cpu: str = "M55", keep_float=frozenset()):
    # import order matters: the passes package registers the cortex_m:: ops (and their Python
    # reference implementations) before its own modules look them up
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.backends.cortex_m.target_config import CortexM, CortexMTargetConfig
    from executorch.devtools.etrecord import ETRecord
    from executorch.exir import EdgeProgramManager, to_edge
    from . import cortex_m_export
    cpu_key = cpu.upper().replace("CORTEX-", "").replace("+", "PLUS")
    if cpu_key not in CortexM.__members__:
        raise ExportError(f"the cortex_m flow has no target config for cpu '{cpu}' "
                          f"(known: {', '.join(CortexM.__members__)})")
    ep = _calibrate_quantize(module, example_inputs, cortex_m_export.make_quantizer(set(keep_float)), calibration)
    config = cortex_m_edge_compile_config()
    edge = to_edge(ep, compile_config=config)
    with _Step("Cortex-M passes"):
        try:
            transformed = CortexMPassManager(edge.exported_program(),
                                             target_config=CortexMTargetConfig(cpu=CortexM[cpu_key])).transform()
        except Exception as e:   # a pass failing on one quantized operator: retry with it in float
            failed = cortex_m_export.failing_pass_operator(e)
            if failed is None:
                raise
            raise _KeepInFloat(*failed) from e
    edge = EdgeProgramManager(transformed, compile_config=config)
    etrecord = ETRecord()
    etrecord.add_exported_program(ep)
    etrecord.add_edge_dialect_program(copy.deepcopy(edge))
    # The Python reference of cortex_m:: ops: run the transformed edge graph itself.
    reference = copy.deepcopy(edge.exported_program()).module()
    from etdeploy.oracle_portable import portable_arithmetic   # outputs kept: the expected ones
    with portable_arithmetic():
        failed, outputs = cortex_m_export.failing_operator(reference, example_inputs)
    if failed is not None:
        raise _KeepInFloat(*failed)
    return edge, (etrecord, _Reference(reference, example_inputs, outputs))


class _Reference:
    """The reference graph, remembering its outputs for the example inputs (the check run above):
    the reference ops are slow in Python, and the first test case is usually the example."""

    def __init__(self, graph, example_inputs, outputs):
        self.graph, self.example, self.outputs = graph, example_inputs, outputs

    def __call__(self, *inputs):
        import torch
        if len(inputs) == len(self.example) and all(
                type(a) is type(b) and (not isinstance(a, torch.Tensor) or (
                    a.shape == b.shape and a.dtype == b.dtype and a.stride() == b.stride() and torch.equal(a, b)))
                for a, b in zip(inputs, self.example)):
            return self.outputs
        return self.graph(*inputs)


def _check_arm_packages() -> None:
    import importlib.util
    missing = [pkg for mod, pkg in (("ethosu.vela", "ethos-u-vela"), ("tosa", "tosa-tools"),
                                    ("ml_dtypes", "ml_dtypes"))
               if importlib.util.find_spec(mod.split(".")[0]) is None]
    if missing:
        raise MissingArmPackages(missing)


def _lower_ethos_u(module, example_inputs, calibration, npu: dict | None = None):
    _check_arm_packages()
    npu = {**ETHOS_U_DEFAULT, **{k: v for k, v in (npu or {}).items() if v}}
    from executorch.backends.arm.ethosu import EthosUCompileSpec, EthosUPartitioner
    from executorch.backends.arm.quantizer import EthosUQuantizer, get_symmetric_quantization_config
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower
    spec = EthosUCompileSpec(npu["target"], system_config=npu["system_config"],
                             memory_mode=npu["memory_mode"], extra_flags=["--output-format=raw"])
    quantizer = EthosUQuantizer(spec).set_global(get_symmetric_quantization_config())
    keep: list = []
    ep = _calibrate_quantize(module, example_inputs, quantizer, calibration, keep)
    with _Step(f"partitioning + Vela compile for {npu['target']} ({npu['system_config']}, "
               f"{npu['memory_mode']})"), contextlib.redirect_stdout(sys.stderr):
        # Vela prints its performance summary on stdout: keep stdout for etdeploy's own results
        edge = to_edge_transform_and_lower(ep, partitioner=[EthosUPartitioner(spec)],
                                           compile_config=EdgeCompileConfig(_check_ir_validity=False),
                                           generate_etrecord=True)
    return edge, (None, keep[0])


_LOWER = {"portable": _lower_portable, "pt2e": _lower_pt2e, "cortex_m": _lower_cortex_m,
          "ethos_u": _lower_ethos_u}


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
    config = ExecutorchBackendConfig(extract_delegate_segments=False) if flow == "ethos_u" else None
    from .view_layout import contiguous_view_bases
    n = contiguous_view_bases(edge)
    if n:
        _say(f"{n} view(s) of a channels_last tensor get a copy to the contiguous order first "
             f"(executorch would alias them with the wrong layout)")
    with _Step("to_executorch (memory planning, emit)"):
        return edge.to_executorch(config) if config else edge.to_executorch()


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
