"""Make every view's base contiguous before emission.

executorch 1.5.1's ReplaceViewCopyWithViewPass (run by to_executorch) turns each view_copy whose
result is not a program output into a memory alias of its base, with a contiguous dim order. When
the base is laid out in another dim order (channels_last), the alias reads the base's NHWC bytes as
if they were NCHW: `x.view(n, 2, c // 2, h, w)` of ShuffleNet's channel shuffle then mixes pixels and
channels. The real runtime computes the same wrong numbers (only a program input, copied in by the
host in NCHW, hides it). Here such a view first gets an explicit `_clone_dim_order` to the contiguous
order (one copy, what the view_copy kernel would do), so the alias is exact.

    fixed = contiguous_view_bases(edge_program_manager)   # number of views given a clone
"""
from __future__ import annotations


def _is_view_copy(node) -> bool:
    return node.op == "call_function" and "view_copy" in str(getattr(node.target, "__name__", node.target))


def _needs_clone(base) -> bool:
    val = base.meta.get("val") if hasattr(base, "meta") else None
    return val is not None and hasattr(val, "is_contiguous") and val.dim() > 0 and not val.is_contiguous()


def contiguous_view_bases(edge) -> int:
    from executorch.exir.dialects._ops import ops as exir_ops
    clone = exir_ops.edge.dim_order_ops._clone_dim_order.default
    fixed = 0
    for method in edge.methods:
        gm = edge.exported_program(method).graph_module
        for mod in gm.modules():
            if not hasattr(mod, "graph"):
                continue
            changed = False
            for node in list(mod.graph.nodes):
                if not _is_view_copy(node) or not node.args or not _needs_clone(node.args[0]):
                    continue
                base = node.args[0]
                with mod.graph.inserting_before(node):
                    c = mod.graph.call_function(clone, (base,), {"dim_order": list(range(base.meta["val"].dim()))})
                c.meta = {k: v for k, v in base.meta.items() if k not in ("val", "spec", "tensor_meta")}
                c.meta.update({k: v for k, v in node.meta.items() if k in ("stack_trace", "nn_module_stack",
                                                                             "source_fn_stack")})
                c.meta["val"] = base.meta["val"].contiguous()
                node.replace_input_with(base, c)
                changed = True
                fixed += 1
            if changed:
                mod.graph.lint()
                mod.recompile()
    return fixed


def drop_identity_clones(edge) -> int:
    """A `_clone_dim_order` whose input already has the asked dim order is a copy of equal values
    (ShuffleNet's `.contiguous()` after a permute_copy, whose result is contiguous already): its users
    read the input instead. Kept where the input is a program input or either side is a program output."""
    dropped = 0
    for method in edge.methods:
        gm = edge.exported_program(method).graph_module
        outs = {a for n in gm.graph.nodes if n.op == "output" for a in _flat(n.args)}
        changed = False
        for node in list(gm.graph.nodes):
            if node.op != "call_function" or "_clone_dim_order" not in str(getattr(node.target, "__name__", node.target)):
                continue
            src = node.args[0] if node.args else None
            sv, cv = (getattr(x, "meta", {}).get("val") for x in (src, node))
            if (src is None or sv is None or cv is None or src.op != "call_function" or node in outs or src in outs
                    or tuple(sv.shape) != tuple(cv.shape) or sv.dtype != cv.dtype or sv.dim_order() != cv.dim_order()):
                continue
            node.replace_all_uses_with(src)
            gm.graph.erase_node(node)
            changed = True
            dropped += 1
        if changed:
            gm.graph.lint()
            gm.recompile()
    return dropped


def _flat(args):
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from _flat(a)
        elif hasattr(a, "op"):
            yield a
