"""torchvision's own model definitions (random weights), imported as etdeploy's model loader does
(etdeploy.torchvision_compat: its compiled ops do not load against this torch, its models do)."""
from __future__ import annotations

from etdeploy import torchvision_compat


class TorchvisionMissing(ImportError):
    pass


def torchvision_models():
    """torchvision.models, imported with the workaround torchvision_compat describes."""
    try:
        return torchvision_compat.import_models()
    except ImportError as e:
        raise TorchvisionMissing(
            "torchvision is not installed: pip install --no-deps torchvision==0.28.0 pillow") from e


def build(name: str, **kwargs):
    """torchvision.models.<name>(weights=None, **kwargs)."""
    return getattr(torchvision_models(), name)(weights=None, **kwargs)


class _SegmentationOut:
    """torchvision's segmentation models return {"out": ...}: the tensor alone (a program output)."""

    def __new__(cls, model):
        import torch

        class Out(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, x):
                return self.m(x)["out"]

        return Out(model)


def build_segmentation(name: str, **kwargs):
    """torchvision.models.segmentation.<name>(weights=None, weights_backbone=None, **kwargs), returning the
    "out" tensor."""
    seg = torchvision_models().segmentation
    return _SegmentationOut(getattr(seg, name)(weights=None, weights_backbone=None, **kwargs))
