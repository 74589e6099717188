"""1-d convolutions as 2-d ones on a channels_last (N, C, 1, W) tensor (the cortex_m flow, before
quantisation).

executorch 1.5.1's CortexMQuantizer (its default, legacy-layout mode) annotates 2-d convolutions on
channels_last inputs only: a Conv1d network (TC-ResNet and other keyword spotters over MFCC channels)
kept every convolution in float, silently. Each `conv1d(x, w, b, s, p, d, g)` becomes

    conv2d(unsqueeze(x, 2) in channels_last, w[:, :, None, :], b, (1, s), (0, p), (1, d), g).squeeze(2)

the same function; the quantizer then makes it a cortex_m::quantized_conv2d (or depthwise). The
layout change costs one copy of the input per convolution (C x W bytes against C x W x K x O MACs).

    gm, n = conv1d_as_conv2d(gm, example_inputs)   # n convolutions rewritten (gm re-exported if n)
"""
from __future__ import annotations

from .graph_rewrite import copy_source_meta, module_attr, reexport


def _one(v, default: int) -> int | None:
    """The single int of a 1-d conv argument ([s], (s,), s), or None."""
    if v is None:
        return default
    if isinstance(v, int):
        return v
    if isinstance(v, (list, tuple)) and len(v) == 1 and isinstance(v[0], int):
        return v[0]
    return None


def _followers():
    import torch
    aten = torch.ops.aten
    return {aten.batch_norm.default, aten.relu.default, aten.relu_.default, aten.hardtanh.default,
            aten.hardtanh_.default, aten.clamp.default}


def conv1d_as_conv2d(gm, example_inputs):
    """(graph module, how many conv1d were rewritten); re-exported (fresh shapes for the quantizer) when any
    was."""
    import torch
    followers = _followers()
    graph, done = gm.graph, 0
    aten = torch.ops.aten
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not aten.conv1d.default:
            continue
        args = list(node.args) + [None] * (7 - len(node.args))
        x, w, b = args[0], args[1], args[2]
        s, p, d = _one(args[3], 1), _one(args[4], 0), _one(args[5], 1)
        g = args[6] if args[6] is not None else 1
        yv = node.meta.get("val")   # (x may be an earlier rewrite's squeeze, which has no value yet)
        if (None in (s, p, d) or not isinstance(g, int) or getattr(w, "op", None) != "get_attr" or yv is None
                or yv.dim() != 3):
            continue
        w4 = module_attr(gm, w.target).detach().unsqueeze(2).contiguous()
        name = f"_etdeploy_conv1d_{done}_weight"
        gm.register_parameter(name, torch.nn.Parameter(w4, requires_grad=False))
        with graph.inserting_before(node):
            u = graph.call_function(aten.unsqueeze.default, (x, 2))
            cl = graph.call_function(aten.clone.default, (u,), {"memory_format": torch.channels_last})
            wn = graph.get_attr(name)
            conv = graph.call_function(aten.conv2d.default, (cl, wn, b, [1, s], [0, p], [1, d], g))
        new = [u, cl, conv]
        # the BatchNorm and activation right after it move to the 4-d side too: the quantizer folds the norm
        # and fuses the activation only when they follow the conv directly
        tail, last = conv, node
        while len(last.users) == 1 and next(iter(last.users)).target in followers:
            nxt = next(iter(last.users))
            with graph.inserting_before(nxt):
                tail = graph.call_function(nxt.target, (tail, *nxt.args[1:]), dict(nxt.kwargs))
            new.append(tail)
            last = nxt
        with graph.inserting_after(tail):
            y = graph.call_function(aten.squeeze.dims, (tail, [2]))
        copy_source_meta(node, *new, y)
        last.replace_all_uses_with(y)
        done += 1
    return reexport(gm, example_inputs, done)
