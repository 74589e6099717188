"""torchvision's model definitions on a torch its compiled ops do not load against.

The package registries hold only the CUDA build of torchvision 0.28.0; beside the CPU torch 2.13.0 its
_C.so does not load, and importing torchvision fails at its first fake-op registration ("operator
torchvision::nms does not exist"). The model definitions are pure Python, so they import fine with
torch.library.register_fake made a no-op decorator for the duration; the original is put back at once
(executorch's Arm operator registration uses it). Only torchvision's compiled ops (nms, roi_align, ...)
stay unavailable, which no classification network calls."""
from __future__ import annotations

import contextlib
import importlib
import sys

BROKEN_OPS = "torchvision::"   # the start of the message torchvision's failed import raises


@contextlib.contextmanager
def fake_registration_off():
    import torch
    saved = torch.library.register_fake

    def noop(*args, **kwargs):
        if args and callable(args[0]) and not isinstance(args[0], str):
            return args[0]
        return lambda fn: fn
    torch.library.register_fake = noop
    try:
        yield
    finally:
        torch.library.register_fake = saved


def is_broken_import(e: BaseException) -> bool:
    """This exception is torchvision failing to register its compiled ops."""
    return isinstance(e, RuntimeError) and BROKEN_OPS in str(e)


def forget_partial_import() -> None:
    """Drop the half-imported torchvision modules a failed import left, so the next import starts over."""
    for name in [n for n in sys.modules if n == "torchvision" or n.startswith("torchvision.")]:
        del sys.modules[name]


def import_models():
    """torchvision.models, with the workaround when the plain import fails as above (ImportError: not installed)."""
    if "torchvision.models" in sys.modules:
        return sys.modules["torchvision.models"]
    try:
        return importlib.import_module("torchvision.models")
    except RuntimeError as e:
        if not is_broken_import(e):
            raise
    forget_partial_import()
    with fake_registration_off():
        return importlib.import_module("torchvision.models")
