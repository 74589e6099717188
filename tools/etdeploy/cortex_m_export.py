"""The cortex_m flow's two user-facing repairs around executorch's CortexMQuantizer.

- Layout: the quantizer lowers convolutions to cortex_m::quantized_conv2d only when the model and
  its inputs are channels_last. `to_channels_last` puts a model with 4-d inputs and its example,
  calibration and test-case inputs in that layout, so a plain NCHW module gets int8 convolutions.
  The program's 4-d inputs then have dim order (0, 2, 3, 1): values the user gives in NCHW are laid
  out by that dim order on the host side (link.encode_tensor, the bundle's own dim order).
- Operators the quantized reference cannot run (e.g. hardswish on int8: "hardswish_cpu not
  implemented for 'Char'"; a ceil-mode max pool left on int8): `failing_operator` runs the lowered
  graph node by node and names the first operator that fails; the flow then re-exports with that
  operator left unannotated (`FloatKeepingQuantizer`), so it runs in float between a dequantize and
  a quantize, and says so.
"""
from __future__ import annotations

import copy

# the aten form an edge-dialect operator came from (the quantizer sees the former)
_EDGE_TO_ANNOTATED = {"max_pool2d_with_indices": "max_pool2d", "_native_batch_norm_legit_no_training": "batch_norm"}


def op_base(target) -> str:
    """'hardswish' for torch.ops.aten.hardswish.default, an edge op, or 'aten::hardswish.out'."""
    name = getattr(target, "__name__", None) or str(target)
    name = str(getattr(target, "_name", name))
    name = name.split("::")[-1]
    base = name.split(".")[0]
    return _EDGE_TO_ANNOTATED.get(base, base)


def is_4d_inputs(example_inputs) -> bool:
    import torch
    return any(isinstance(x, torch.Tensor) and x.dim() == 4 for x in example_inputs)


def channels_last_inputs(inputs: tuple) -> tuple:
    import torch
    return tuple(x.contiguous(memory_format=torch.channels_last)
                 if isinstance(x, torch.Tensor) and x.dim() == 4 else x for x in inputs)


def to_channels_last(module, example_inputs, calibration, case_inputs):
    """(module, example inputs, calibration, test-case inputs), all channels_last where 4-d.
    The module is copied: the caller's stays as it was."""
    import torch
    module = copy.deepcopy(module).to(memory_format=torch.channels_last)
    return (module, channels_last_inputs(example_inputs), [channels_last_inputs(c) for c in calibration],
            [channels_last_inputs(c) for c in case_inputs])


def make_quantizer(keep_float: set[str]):
    """CortexMQuantizer whose pattern quantizers' annotations are withdrawn from the operators named
    in keep_float, before the shared-qspec pass (the last one), which then treats them as float
    neighbours: those operators get a dequantize before and a quantize after."""
    from executorch.backends.arm.quantizer.arm_quantizer_utils import _mark_node_as_quantized
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer
    from executorch.backends.cortex_m.quantizer_reporter import QuantizerReporter

    if not keep_float:
        return CortexMQuantizer()

    class FloatKeeping(CortexMQuantizer):
        def annotate(self, model):
            reporter = QuantizerReporter(self.quantizers)
            for q in self.quantizers[:-1]:
                q.annotate(model)
            for node in model.graph.nodes:
                if node.op == "call_function" and op_base(node.target) in keep_float:
                    _mark_node_as_quantized(node, {}, None, False)    # annotated as "not quantized"
            self.quantizers[-1].annotate(model)
            reporter.log_quantizer_report(model)
            return model

    return FloatKeeping()


def failing_operator(graph_module, inputs: tuple):
    """(None, outputs) if graph_module(*inputs) runs; else ((operator base name, first line of the
    error), None)."""
    import torch

    class Watch(torch.fx.Interpreter):
        failed = None

        def run_node(self, n):
            try:
                return super().run_node(n)
            except Exception as e:
                if Watch.failed is None and n.op == "call_function":
                    Watch.failed = (op_base(n.target), (str(e).strip().splitlines() or [type(e).__name__])[0])
                raise

    try:
        with torch.no_grad():
            out = Watch(graph_module).run(*inputs)
    except Exception as e:
        return Watch.failed or ("?", (str(e).strip().splitlines() or [type(e).__name__])[0]), None
    return None, out


def failing_pass_operator(exc: BaseException):
    """(operator base name, first line of the error) when a Cortex-M pass failed while running one
    node (torch.fx names it: 'While executing %x : ... call_function[target=...aten.bmm.default]'),
    e.g. nn.MultiheadAttention's int8 bmm fed an int32 operand; else None."""
    import re
    seen = 0
    while exc is not None and seen < 8:
        text = str(exc)
        m = re.search(r"While executing %\S+ : .*?call_function\[target=([\w.:]+)\]", text)
        if m:
            parts = m.group(1).split(".")
            base = parts[-2] if len(parts) >= 2 and parts[-1] in ("default", "Tensor", "Scalar", "out") else parts[-1]
            return _EDGE_TO_ANNOTATED.get(base, base), (text.strip().splitlines() or [type(exc).__name__])[0]
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None
