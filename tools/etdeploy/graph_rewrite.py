"""What the cortex_m export's graph rewrites (conv1d_as_conv2d, conv_padding, norm_as_depthwise) share:
reading a module attribute a get_attr node names, carrying a replaced node's source location to its
replacements (export's error messages and the ETRecord name layers by it), and re-exporting the edited
module so the quantizer sees a clean ExportedProgram."""
from __future__ import annotations

_SOURCE_META = ("stack_trace", "nn_module_stack")


def module_attr(gm, target: str):
    """The tensor (or submodule) `target` ("a.b.weight") names in gm."""
    obj = gm
    for part in str(target).split("."):
        obj = getattr(obj, part)
    return obj


def copy_source_meta(src, *nodes) -> None:
    """Give each new node the replaced node's source location."""
    keep = {k: v for k, v in src.meta.items() if k in _SOURCE_META}
    for n in nodes:
        n.meta.update(keep)


def reexport(gm, example_inputs, done: int, dead_code: bool = True):
    """(module, done) after `done` rewrites of gm's graph: the module re-exported, or gm itself if none."""
    if not done:
        return gm, 0
    import torch
    if dead_code:
        gm.graph.eliminate_dead_code()
    gm.graph.lint()
    gm.recompile()
    return torch.export.export(gm, example_inputs).module(check_guards=False), done
