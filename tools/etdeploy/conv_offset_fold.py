"""cortex_m export: the input offset of an unpadded int8 convolution folded into its bias.

cortex_m::quantized_conv2d computes sum((x + input_offset) * w) + bias per output channel. Without
padding every tap reads a real input pixel, so that is sum(x * w) + (bias + input_offset * sum(w)):
the same integers with input_offset 0 and the bias folded (CMSIS-NN's "kernel sum", worked out once
here instead of on every call: ~9 instructions per 64 weight bytes on the M55, a tenth of a small-map
pointwise layer's work). With padding the padded taps must add nothing, which needs the offset: those
convolutions are left as they are."""
from __future__ import annotations

def _is_conv(node) -> bool:
    """cortex_m::quantized_conv2d or its _nhwc form"""
    name = str(getattr(node.target, "__name__", node.target)) if node.op == "call_function" else ""
    return name.split(".")[:2] in (["cortex_m", "quantized_conv2d"], ["cortex_m", "quantized_conv2d_nhwc"])


def fold_conv_input_offsets(ep) -> int:
    """Folds input_offset into the bias of every quantized_conv2d(_nhwc) with zero padding whose weight
    (and bias, if any) are constants; returns how many. The folded bias wraps like the kernels' 32-bit
    accumulator."""
    import torch
    from executorch.backends.transforms.utils import (create_constant_placeholder, delete_constant_placeholder,
                                                      get_param_tensor, is_param_node)
    from torch.export.graph_signature import InputKind
    graph, done = ep.graph_module.graph, 0
    for conv in list(graph.nodes):
        if not _is_conv(conv) or len(conv.args) < 13:
            continue
        x, w, b, stride, padding, dilation, in_off = conv.args[:7]
        if not isinstance(in_off, int) or in_off == 0 or any(int(p) != 0 for p in padding):
            continue
        if not is_param_node(ep, w) or (b is not None and not is_param_node(ep, b)):
            continue
        wt, bt = get_param_tensor(ep, w), (get_param_tensor(ep, b) if b is not None else None)
        if wt is None or wt.dtype != torch.int8 or wt.dim() != 4 or (b is not None and bt is None):
            continue
        ksum = wt.to(torch.int64).sum(dim=(1, 2, 3))
        base = bt.to(torch.int64).reshape(-1) if bt is not None else torch.zeros_like(ksum)
        if base.numel() != ksum.numel():
            continue
        folded = base + int(in_off) * ksum
        folded = ((folded + 2 ** 31) % 2 ** 32 - 2 ** 31).to(torch.int32)   # the accumulator's wrap
        first = next(n for n in graph.nodes if n.op == "placeholder")
        with graph.inserting_before(first):
            nb = create_constant_placeholder(ep, graph, f"{conv.name}_bias_folded", InputKind.PARAMETER, folded)
        args = list(conv.args)
        args[2], args[6] = nb, 0
        conv.args = tuple(args)
        if b is not None and not b.users:
            delete_constant_placeholder(ep, b)
        done += 1
    if done:
        graph.lint()
        ep.graph_module.recompile()
    return done
