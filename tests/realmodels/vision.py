"""torchvision's own model definitions (random weights). torchvision 0.28.0's compiled ops do not
load against this torch ("operator torchvision::nms does not exist" at import); the model definitions
are pure Python. While importing, torch.library.register_fake is a no-op decorator; the original is
put back at once, because executorch's Arm operator registration uses it too."""
from __future__ import annotations

import contextlib
import importlib
import sys


class TorchvisionMissing(ImportError):
    pass


@contextlib.contextmanager
def _fake_registration_off():
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


def torchvision_models():
    """torchvision.models, imported with the workaround above."""
    if "torchvision.models" in sys.modules:
        return sys.modules["torchvision.models"]
    try:
        with _fake_registration_off():
            return importlib.import_module("torchvision.models")
    except ImportError as e:
        raise TorchvisionMissing(
            "torchvision is not installed: pip install --no-deps torchvision==0.28.0 pillow") from e


def build(name: str, **kwargs):
    """torchvision.models.<name>(weights=None, **kwargs)."""
    return getattr(torchvision_models(), name)(weights=None, **kwargs)
