"""Keep channels_last through ShuffleNet's channel shuffle (int8 programs of the cortex_m flow).

`x.view(n, g, c // g, h, w).transpose(1, 2).contiguous().view(n, c, h, w)` of a channels_last x
leaves a contiguous (NCHW) tensor: executorch then copies x to NCHW first (view_layout.py), and every
later convolution reads NCHW input, the slow generic path (pointwise 7-12 instructions per MAC instead
of 0.2). In NHWC memory the shuffle is, per pixel, the transpose of a (g, c/g) matrix, so it is
rewritten as the same values computed in the channels_last bytes:

    t1 = transpose(x, [0, 2, 3, 1])           (n, h, w, c) contiguous: the same bytes as x (a copy)
    v1 = view_copy(t1, [n, h, w, g, c/g])     an alias
    t2 = transpose(v1, [0, 1, 2, 4, 3])       the per-pixel transpose
    v2 = view_copy(t2, [n, h, w, c])          an alias
    y  = transpose(v2, [0, 3, 1, 2])          (n, c, h, w) in dim order (0, 2, 3, 1): again the same bytes

The channel splits and concatenations after it (ShuffleNetV2's units) then keep channels_last too: a
split_with_sizes_copy of a channels_last tensor gives channels_last pieces, a cat of channels_last
tensors a channels_last result. Every kernel honours its output's dim order, so these are layout
choices, not changes of what is computed. executorch re-derives each value's layout from the operators'
fake implementations when it emits (SpecPropPass: cortex_m::transpose and split_with_sizes_copy give
contiguous results), so the choice is kept as a mark on the node (`etdeploy_dim_order`) and applied to
the emitted tensor specs after that pass (`LayoutSpecs`, in the sym-shape-eval slot of the backend
config, which runs after views became aliases and before memory planning). A marked value is never a
program output (the user receives it in its traced layout) nor the base of a view (a view aliases its
base as contiguous).

    n = channels_last_shuffles(edge_program_manager)     # shuffles rewritten
    edge.to_executorch(ExecutorchBackendConfig(sym_shape_eval_pass=LayoutSpecs()))
"""
from __future__ import annotations

import operator

NHWC = (0, 2, 3, 1)
MARK = "etdeploy_dim_order"


def _name(node) -> str:
    t = node.target
    return str(getattr(t, "__name__", t)) if node.op == "call_function" else ""


def _val(node):
    return node.meta.get("val") if hasattr(node, "meta") else None


def _is_cl(v) -> bool:
    import torch
    return (v is not None and hasattr(v, "dim") and v.dim() == 4 and v.dim_order() == NHWC
            and not v.is_contiguous())


def _perm(node):
    """The permutation of a permute/transpose node, or None."""
    n = _name(node)
    if ("transpose" in n or "permute_copy" in n) and len(node.args) >= 2 and isinstance(node.args[1], (list, tuple)):
        return [int(p) for p in node.args[1]]
    return None


def _match(view1, need_nhwc=True):
    """(base, transpose node, last view node, g) when view1 starts a channel shuffle of an int8
    channels_last tensor (need_nhwc False: of an int8 tensor in any layout), else None."""
    import torch
    if "view_copy" not in _name(view1) or not view1.args:
        return None
    base = view1.args[0]
    bv, v5 = _val(base), _val(view1)
    if not (need_nhwc is False or _nhwc(base)) or bv is None or bv.dim() != 4 or bv.dtype != torch.int8 \
            or v5 is None or v5.dim() != 5:
        return None
    n, c, h, w = bv.shape
    g = v5.shape[1]
    if tuple(v5.shape) != (n, g, c // g, h, w) or g * (c // g) != c or len(view1.users) != 1:
        return None
    tr = next(iter(view1.users))
    if _perm(tr) != [0, 2, 1, 3, 4] or len(tr.users) != 1:
        return None
    last = next(iter(tr.users))
    if "clone" in _name(last) and len(last.users) == 1:
        last = next(iter(last.users))
    lv = _val(last)
    if ("view_copy" not in _name(last) or lv is None or tuple(lv.shape) != (n, c, h, w)
            or not _markable(last, _outputs(view1.graph))):
        return None
    return base, tr, last, g


def _rewrite(gm, view1, match) -> None:
    import torch
    base, tr, last, g = match
    graph = gm.graph
    bv = _val(base)
    n, c, h, w = bv.shape
    vt, tt = view1.target, tr.target
    keep = {k: v for k, v in last.meta.items() if k in ("stack_trace", "nn_module_stack", "source_fn_stack")}

    def node(target, args, val):
        x = graph.call_function(target, args)
        x.meta.update(keep)
        x.meta["val"] = val
        return x

    with graph.inserting_before(last):
        f1 = bv.permute(0, 2, 3, 1).contiguous()
        t1 = node(tt, (base, [0, 2, 3, 1]), f1)
        f2 = f1.view(n, h, w, g, c // g)
        v1 = node(vt, (t1, [n, h, w, g, c // g]), f2)
        f3 = f2.permute(0, 1, 2, 4, 3).contiguous()
        t2 = node(tt, (v1, [0, 1, 2, 4, 3]), f3)
        f4 = f3.view(n, h, w, c)
        v2 = node(vt, (t2, [n, h, w, c]), f4)
        t3 = node(tt, (v2, [0, 3, 1, 2]), f4.permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last))
        t3.meta[MARK] = NHWC
    last.replace_all_uses_with(t3)
    for dead in (last, *([last.args[0]] if last.args[0] is not tr else []), tr, view1):
        if not dead.users:
            graph.erase_node(dead)


def _outputs(graph) -> set:
    out = [n for n in graph.nodes if n.op == "output"]
    found = set()
    for o in out:
        stack = list(o.args)
        while stack:
            a = stack.pop()
            if isinstance(a, (list, tuple)):
                stack.extend(a)
            elif hasattr(a, "op"):
                found.add(a)
    return found


def _nhwc(node) -> bool:
    """The value is laid out channels_last: traced so, or marked (4-d int8)."""
    return hasattr(node, "meta") and (node.meta.get(MARK) == NHWC or _is_cl(_val(node)))


def _markable(node, outs) -> bool:
    """Not a program output, not fed to one, and no view of it but the head of a shuffle (rewritten)."""
    return node not in outs and not any(u in outs or ("view_copy" in _name(u) and _match(u, False) is None)
                                        for u in node.users)


def _follow_channels_last(graph) -> None:
    """Mark split_with_sizes_copy / cat results of channels_last int8 inputs channels_last too."""
    import torch
    outs = _outputs(graph)
    for node in graph.nodes:
        name = _name(node)
        if node.meta.get(MARK) or not node.args:
            continue
        if "split_with_sizes_copy" in name and _nhwc(node.args[0]):
            getters = [u for u in node.users if u.target is operator.getitem]
            vals = _val(node)
            if (not isinstance(vals, (list, tuple)) or any(v.dim() != 4 or v.dtype != torch.int8 for v in vals)
                    or len(getters) != len(node.users) or not all(_markable(u, outs) for u in getters)):
                continue
            node.meta[MARK] = NHWC
            for u in getters:
                u.meta[MARK] = NHWC
        elif name.startswith("aten.cat") and isinstance(node.args[0], (list, tuple)):
            v = _val(node)
            dim = node.args[1] if len(node.args) > 1 else 0
            if (v is None or v.dim() != 4 or v.dtype != torch.int8 or _is_cl(v) or dim not in (1, -3)
                    or not all(_nhwc(a) for a in node.args[0]) or not _markable(node, outs)):
                continue
            node.meta[MARK] = NHWC


class LayoutSpecs:
    """Applies the marks to the tensor specs (see the module doc), then runs the pass whose slot it
    takes (executorch's default sym-shape evaluation unless given)."""

    def __new__(cls, inner=None):
        from torch.fx.passes.infra.pass_base import PassBase

        class _Pass(PassBase):
            def call(self, gm):
                from executorch.exir.tensor import stride_from_dim_order
                for mod in gm.modules():
                    for node in getattr(mod, "graph", None).nodes if hasattr(mod, "graph") else ():
                        order = node.meta.get(MARK)
                        specs = node.meta.get("spec")
                        if order is None or specs is None:
                            continue
                        for spec in specs if isinstance(specs, (list, tuple)) else [specs]:
                            if spec is None or len(spec.shape) != len(order) or type(spec).__name__ == "_ViewSpec":
                                continue
                            spec.dim_order = tuple(order)
                            spec.stride = tuple(stride_from_dim_order(list(spec.shape), list(order)))
                return self.inner(gm)

        if inner is None:
            from executorch.exir.passes.sym_shape_eval_pass import ConstraintBasedSymShapeEvalPass
            inner = ConstraintBasedSymShapeEvalPass()
        p = _Pass()
        p.inner = inner
        return p


def channels_last_shuffles(edge) -> int:
    rewritten = 0
    for method in edge.methods:
        gm = edge.exported_program(method).graph_module
        count = 0
        while True:   # a rewrite marks what follows it, which can make the next shuffle's base channels_last
            _follow_channels_last(gm.graph)
            heads = [(v, m) for v in gm.graph.nodes if (m := _match(v)) is not None]
            if not heads:
                break
            view1, m = heads[0]
            _rewrite(gm, view1, m)
            count += 1
        if count:
            gm.graph.lint()
            gm.recompile()
        rewritten += count
    return rewritten
