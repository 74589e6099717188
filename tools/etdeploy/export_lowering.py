"""Lowering per flow: an nn.Module + example inputs -> (edge program manager, extra), as
exporting.export_model drives them (the xnnpack flows: export_xnnpack.py)."""
from __future__ import annotations

import contextlib
import copy
import sys
from typing import Sequence

from .export_common import ETHOS_U_DEFAULT, ExportError, MissingArmPackages, _say, _Step


def _calibrate_quantize(module, example_inputs, quantizer, calibration: Sequence[tuple], keep=None, prep=None):
    import torch
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    gm = torch.export.export(module, example_inputs).module(check_guards=False)
    if prep is not None:          # a graph rewrite before annotation (the flow's own repairs)
        gm = prep(gm)
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
    from . import activation_ranges, conv1d_as_conv2d, conv_padding, cortex_m_export, norm_as_depthwise
    cpu_key = cpu.upper().replace("CORTEX-", "").replace("+", "PLUS")
    if cpu_key not in CortexM.__members__:
        raise ExportError(f"the cortex_m flow has no target config for cpu '{cpu}' "
                          f"(known: {', '.join(CortexM.__members__)})")
    def prep(gm):
        gm, n = conv_padding.explicit_conv_padding(gm, example_inputs)
        if n:
            _say(f"{n} convolution(s) with padding='same'/'valid' given explicit padding (int8)")
        gm, n = conv1d_as_conv2d.conv1d_as_conv2d(gm, example_inputs)
        if n:
            _say(f"{n} Conv1d(s) done as 2-d convolutions on channels_last (N, C, 1, W) (int8)")
        gm, n = norm_as_depthwise.standalone_norms_as_depthwise(gm, example_inputs)
        if n:
            _say(f"{n} BatchNorm(s) after no convolution done as 1x1 depthwise convolutions (int8)")
        return gm
    ep = _calibrate_quantize(module, example_inputs, cortex_m_export.make_quantizer(set(keep_float)), calibration,
                             prep=prep)
    config = cortex_m_edge_compile_config()
    edge = to_edge(ep, compile_config=config)
    with _Step("Cortex-M passes"):
        try:
            transformed = CortexMPassManager(edge.exported_program(), passes=activation_ranges.cortex_m_passes(),
                                             target_config=CortexMTargetConfig(cpu=CortexM[cpu_key])).transform()
        except Exception as e:   # a pass failing on one quantized operator: retry with it in float
            failed = cortex_m_export.failing_pass_operator(e)
            if failed is None:
                raise
            raise _KeepInFloat(*failed) from e
    _warn_int8_aten_convolutions(transformed)
    # The Python reference of cortex_m:: ops: run the transformed edge graph itself, as it was before the
    # program's own repairs below (they must give its outputs, which the bundled cases then check)
    reference = copy.deepcopy(transformed).module()
    pools = cortex_m_export.int8_ceil_max_pools(transformed)
    if pools:
        _say(f"{pools} ceil-mode max pool(s) kept in float by the quantizer run on the int8 codes "
             f"(padded, floor-mode pool, requantising table)")
    tables = cortex_m_export.int8_activation_tables(transformed)
    if tables:
        _say(f"{tables} x * min(x, c) product(s) (hardswish) done as one table of their int8 codes")
    from .conv_offset_fold import fold_conv_input_offsets
    folded = fold_conv_input_offsets(transformed)
    if folded:
        _say(f"{folded} unpadded convolution(s): input offset folded into the bias")
    edge = EdgeProgramManager(transformed, compile_config=config)
    etrecord = ETRecord()
    etrecord.add_exported_program(ep)
    etrecord.add_edge_dialect_program(copy.deepcopy(edge))
    from etdeploy.oracle_portable import portable_arithmetic   # outputs kept: the expected ones
    with portable_arithmetic():
        failed, outputs = cortex_m_export.failing_operator(reference, example_inputs)
    if failed is not None:
        raise _KeepInFloat(*failed)
    return edge, (etrecord, _Reference(reference, example_inputs, outputs))


def _warn_int8_aten_convolutions(ep) -> None:
    """The Cortex-M passes leave a convolution as aten::convolution on int8 codes when they cannot fuse its
    activation (executorch 1.5.1: "Cannot fuse activation ... qmin is out of range", e.g. a ReLU whose
    output shares its quantisation with a concatenation partner that has negative values): the program
    then convolves raw codes, which the reference does too, so no check notices. Say so."""
    import torch
    bad = [n.name for n in ep.graph.nodes if n.op == "call_function" and "aten.convolution" in str(n.target)
           and getattr(n.args[0].meta.get("val"), "dtype", None) == torch.int8]
    if bad:
        _say(f"WARNING: {len(bad)} convolution(s) left unlowered on int8 codes by the Cortex-M passes "
             f"({', '.join(bad[:3])}): their outputs are not the float model's; an activation that shares "
             f"a concatenation's quantisation cannot be fused (export that part in float)")


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
