"""Convolutions with padding='same' / 'valid' as convolutions with explicit padding (the cortex_m flow,
before quantisation).

`nn.Conv2d(..., padding="same")` (and Conv1d) exports as aten.conv2d.padding / conv1d.padding, which
executorch 1.5.1's CortexMQuantizer does not annotate: the convolution stayed in float, silently. The
string is resolved the way torch resolves it: each dim pads dilation * (kernel - 1) in total, half of it
(rounded down) before and the rest after; where the two halves differ (an even kernel) the extra row and
column are a zero aten.pad before a convolution with the symmetric part.

    gm, n = explicit_conv_padding(gm, example_inputs)   # n convolutions rewritten (gm re-exported if n)
"""
from __future__ import annotations

from .graph_rewrite import copy_source_meta, module_attr, reexport


def _ints(v, n: int, default: int) -> list | None:
    if v is None:
        return [default] * n
    if isinstance(v, int):
        return [v] * n
    if isinstance(v, (list, tuple)) and all(isinstance(i, int) for i in v):
        return list(v) * n if len(v) == 1 else list(v)
    return None


def explicit_conv_padding(gm, example_inputs):
    import torch
    aten = torch.ops.aten
    targets = {aten.conv2d.padding: (aten.conv2d.default, 2), aten.conv1d.padding: (aten.conv1d.default, 1)}
    graph, done = gm.graph, 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in targets:
            continue
        plain, nd = targets[node.target]
        args = list(node.args) + [None] * (7 - len(node.args))
        x, w, b, stride, mode, dil, groups = args[:7]
        mode = node.kwargs.get("padding", mode) or "valid"   # the schema's default
        stride, dil = _ints(stride, nd, 1), _ints(dil, nd, 1)
        if (getattr(w, "op", None) != "get_attr" or mode not in ("same", "valid") or stride is None or dil is None
                or len(stride) != nd or len(dil) != nd):
            continue
        kernel = list(module_attr(gm, w.target).shape[2:])
        total = [d * (k - 1) if mode == "same" else 0 for d, k in zip(dil, kernel)]
        before = [t // 2 for t in total]
        extra = [t - 2 * p for t, p in zip(total, before)]   # 0 or 1 each: the after side's extra
        with graph.inserting_before(node):
            src = x
            if any(extra):
                flat = []   # aten.pad lists the last dim first: (left, right, top, bottom)
                for e in reversed(extra):
                    flat += [0, e]
                src = graph.call_function(aten.pad.default, (x, flat, "constant", 0.0))
            conv = graph.call_function(plain, (src, w, b, stride, before, dil, groups if groups is not None else 1))
        copy_source_meta(node, *(n for n in (src, conv) if n is not x))
        node.replace_all_uses_with(conv)
        graph.erase_node(node)
        done += 1
    return reexport(gm, example_inputs, done, dead_code=False)
