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
import operator

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


def _target_is(node, name: str) -> bool:
    return node.op == "call_function" and str(getattr(node.target, "__name__", node.target)).startswith(name)


def int8_ceil_max_pools(ep) -> int:
    """A ceil-mode max pool the flow kept in float (`dequantize -> max_pool2d(ceil_mode) -> quantize`,
    GoogLeNet's and SqueezeNet's) done on the int8 codes instead: the input padded on the bottom and right
    with -128 (cortex_m::pad) as far as ceil mode's last windows reach, a floor-mode
    cortex_m::quantized_max_pool2d, then, where the two quantisations differ, the 256-entry table
    q2(dq1(code)) (cortex_m::quantized_activation). Exact: dequantisation is increasing, so the float max
    of dequantised codes is the dequantised max code, and -128 is no code's rival. Returns how many."""
    import torch
    from executorch.backends.transforms.utils import create_constant_placeholder
    from executorch.exir.dialects._ops import ops as exir_ops
    from torch.export.graph_signature import InputKind
    cm = exir_ops.edge.cortex_m
    graph, done = ep.graph_module.graph, 0
    for pool in list(graph.nodes):
        if not _target_is(pool, "aten.max_pool2d_with_indices") or len(pool.args) < 6 or not pool.args[5]:
            continue
        dq = pool.args[0]
        k, s = [int(v) for v in pool.args[1]], [int(v) for v in (pool.args[2] or pool.args[1])]
        p, d = [int(v) for v in pool.args[3]], [int(v) for v in pool.args[4]]
        users = list(pool.users)
        if (not _target_is(dq, "cortex_m.dequantize_per_tensor") or d != [1, 1] or len(users) != 1
                or users[0].target is not operator.getitem or users[0].args[1] != 0):
            continue
        # its users: quantizes (to int8 consumers) and float ones (another kept pool: GoogLeNet's pool after a
        # pool), which then read a dequantize of the int8 result, so the loop meets them in this pattern too
        qs = [u for u in users[0].users if _target_is(u, "cortex_m.quantize_per_tensor")]
        floats = [u for u in users[0].users if u not in qs]
        x = dq.args[0]
        xv, ov = x.meta.get("val"), users[0].meta.get("val")
        if (xv is None or ov is None or xv.dim() != 4 or xv.dtype != torch.int8 or not users[0].users
                or any(tuple(dq.args[3:6]) != tuple(q.args[3:6]) for q in qs)):
            continue
        (_, _, H, W), (_, _, OH, OW) = xv.shape, ov.shape
        extra = [max(0, (o - 1) * st + kk - (n + 2 * pp)) for o, st, kk, n, pp in zip((OH, OW), s, k, (H, W), p)]
        if [(n + e + 2 * pp - kk) // st + 1 for n, e, pp, kk, st in zip((H, W), extra, p, k, s)] != [OH, OW]:
            continue
        s1, z1 = float(dq.args[1]), int(dq.args[2])
        made = []
        with graph.inserting_after(users[0]):
            y = x
            if any(extra):
                y = graph.call_function(cm.pad.default, (x, [0, 0, 0, 0], [0, extra[0], extra[1], 0], -128))
                y.meta["val"] = torch.ops.cortex_m.pad.default(xv, [0, 0, 0, 0], [0, extra[0], extra[1], 0], -128)
                made.append(y)
        with graph.inserting_after(y):
            y = graph.call_function(cm.quantized_max_pool2d.default, (y, k, s, p, d, False, z1, z1, -128, 127))
            y.meta["val"] = ov.to(torch.int8).contiguous(memory_format=torch.channels_last) \
                if xv.dim_order() == (0, 2, 3, 1) else ov.to(torch.int8)
            made.append(y)
        pooled, yv = y, y.meta["val"]
        for q in qs:
            s2, z2 = float(q.args[1]), int(q.args[2])
            out = pooled
            if (s1, z1) != (s2, z2):
                codes = torch.arange(-128, 128, dtype=torch.int8).reshape(1, 256, 1, 1)
                deq = torch.ops.cortex_m.dequantize_per_tensor.default(codes, s1, z1, -128, 127, torch.int8)
                lut = torch.ops.cortex_m.quantize_per_tensor.default(deq, s2, z2, -128, 127, torch.int8).reshape(256)
                first = next(n for n in graph.nodes if n.op == "placeholder")
                with graph.inserting_before(first):
                    table = create_constant_placeholder(ep, graph, f"{q.name}_requant_lut", InputKind.PARAMETER,
                                                        lut.contiguous())
                with graph.inserting_before(q):
                    out = graph.call_function(cm.quantized_activation.default, (pooled, table))
                out.meta["val"] = yv
                made.append(out)
            q.replace_all_uses_with(out)
            graph.erase_node(q)
        if floats:
            with graph.inserting_after(pooled):
                back = graph.call_function(dq.target, (pooled, *dq.args[1:]), dict(dq.kwargs))
            back.meta["val"] = ov
            made.append(back)
            for u in floats:
                u.replace_input_with(users[0], back)
        for k_ in ("stack_trace", "nn_module_stack", "source_fn_stack"):
            if k_ in pool.meta:
                for n in made:
                    n.meta.setdefault(k_, pool.meta[k_])
        for dead in (users[0], pool, dq):
            if not dead.users:
                graph.erase_node(dead)
        done += 1
    if done:
        graph.lint()
        ep.graph_module.recompile()
    return done


def int8_activation_tables(ep) -> int:
    """mobilenet_v3's hardswish as the Cortex-M passes leave it, `quantized_mul(x, minimum(x, c))` (or
    maximum), is a function of x's int8 code alone: one 256-entry table (cortex_m::quantized_activation)
    whose entries are those two reference operators run on every code. Exact by construction; the two
    passes over the tensor (~0.3 and ~2.5 instructions an element on the M55) become one gather.
    Returns how many."""
    import torch
    from executorch.backends.transforms.utils import create_constant_placeholder, get_param_tensor
    from executorch.exir.dialects._ops import ops as exir_ops
    from torch.export.graph_signature import InputKind
    graph, done = ep.graph_module.graph, 0
    for mul in list(graph.nodes):
        if not _target_is(mul, "cortex_m.quantized_mul") or len(mul.args) != 7:
            continue
        a, za, b, zb, oz, om, os_ = mul.args
        x, m, swap = (a, b, False) if _target_is(b, "cortex_m.minimum") or _target_is(b, "cortex_m.maximum") \
            else (b, a, True)
        if not (_target_is(m, "cortex_m.minimum") or _target_is(m, "cortex_m.maximum")) or m.args[0] is not x:
            continue
        c = m.args[1]
        xv = x.meta.get("val")
        try:
            cv = get_param_tensor(ep, c) if getattr(c, "op", None) == "placeholder" else None
        except Exception:
            cv = None
        if cv is None or cv.numel() != 1 or cv.dtype != torch.int8 or xv is None or xv.dtype != torch.int8:
            continue
        codes = torch.arange(-128, 128, dtype=torch.int8)
        mm = (torch.ops.cortex_m.minimum if _target_is(m, "cortex_m.minimum") else torch.ops.cortex_m.maximum)(
            codes, cv.reshape(()))
        lhs, rhs = (mm, codes) if swap else (codes, mm)
        lut = torch.ops.cortex_m.quantized_mul(lhs, za, rhs, zb, oz, om, os_).reshape(256).contiguous()
        first = next(n for n in graph.nodes if n.op == "placeholder")
        with graph.inserting_before(first):
            table = create_constant_placeholder(ep, graph, f"{mul.name}_table", InputKind.PARAMETER, lut)
        with graph.inserting_before(mul):
            y = graph.call_function(exir_ops.edge.cortex_m.quantized_activation.default, (x, table))
        y.meta.update({k: v for k, v in mul.meta.items() if k != "spec"})
        mul.replace_all_uses_with(y)
        graph.erase_node(mul)
        if not m.users:
            graph.erase_node(m)
        done += 1
    if done:
        graph.lint()
        ep.graph_module.recompile()
    return done
