"""BatchNorm that no convolution precedes, as a 1x1 depthwise convolution (the cortex_m flow, before
quantisation).

The quantizer folds a BatchNorm into the convolution before it; one that follows something else
(DenseNet's and pre-activation ResNets' `cat -> BatchNorm -> ReLU -> conv`) is left unannotated: it
runs in float between a dequantize and a quantize, and executorch 1.5.1's Cortex-M passes then feed
the next quantized_conv2d the float tensor (a program that fails on the device). Inference BatchNorm is
the per-channel affine x * s_c + t_c (s = weight / sqrt(var + eps), t = bias - mean * s), which is a
depthwise 1x1 convolution with weight s and bias t: the quantizer makes it an int8
quantized_depthwise_conv2d with per-channel weights and fuses the ReLU after it. Same function in
float; in int8 the usual per-channel weight rounding.

    gm, n = standalone_norms_as_depthwise(gm, example_inputs)   # n norms rewritten (gm re-exported if n)
"""
from __future__ import annotations

from .graph_rewrite import copy_source_meta, module_attr, reexport

_NORMS = ("aten.batch_norm.default", "aten._native_batch_norm_legit_no_training.default")


def _attr(gm, node):
    """The tensor a get_attr node names, or None (an absent affine parameter)."""
    return None if node is None else module_attr(gm, node.target)


def _after_foldable_conv(x) -> bool:
    """The quantizer folds the norm into this producer itself: a convolution with no other user."""
    return (x.op == "call_function" and "conv" in str(x.target) and len(x.users) == 1)


def standalone_norms_as_depthwise(gm, example_inputs):
    """(graph module, how many norms were rewritten); re-exported (fresh shapes for the quantizer) when
    any was."""
    import torch
    graph, done = gm.graph, 0
    for node in list(graph.nodes):
        if node.op != "call_function" or str(node.target) not in _NORMS:
            continue
        x = node.args[0]
        xv = x.meta.get("val") if hasattr(x, "meta") else None
        if xv is None or xv.dim() != 4 or not xv.is_floating_point() or _after_foldable_conv(x):
            continue
        legit = "legit" in str(node.target)
        if legit:   # (x, weight, bias, mean, var, momentum, eps) -> (out, save_mean, save_var)
            users = list(node.users)
            if any(u.target.__name__ != "getitem" or u.args[1] != 0 for u in users):
                continue
            eps = float(node.args[6])
        else:       # (x, weight, bias, mean, var, training, momentum, eps, cudnn)
            if node.args[5]:
                continue
            eps = float(node.args[7])
        weight, bias, mean, var = (_attr(gm, a) for a in node.args[1:5])
        if mean is None or var is None:
            continue
        c = xv.shape[1]
        with torch.no_grad():
            s = (weight.detach().float() if weight is not None else torch.ones(c)) / torch.sqrt(var.float() + eps)
            t = (bias.detach().float() if bias is not None else torch.zeros(c)) - mean.float() * s
        wname, bname = f"_etdeploy_dw_norm_{done}_weight", f"_etdeploy_dw_norm_{done}_bias"
        gm.register_parameter(wname, torch.nn.Parameter(s.reshape(c, 1, 1, 1).contiguous(), requires_grad=False))
        gm.register_parameter(bname, torch.nn.Parameter(t.contiguous(), requires_grad=False))
        with graph.inserting_before(node):
            w_node, b_node = graph.get_attr(wname), graph.get_attr(bname)
            conv = graph.call_function(torch.ops.aten.conv2d.default,
                                       (x, w_node, b_node, [1, 1], [0, 0], [1, 1], c))
        copy_source_meta(node, conv)
        if legit:
            for u in list(node.users):
                u.replace_all_uses_with(conv)
                graph.erase_node(u)
        else:
            node.replace_all_uses_with(conv)
        graph.erase_node(node)
        done += 1
    return reexport(gm, example_inputs, done)
