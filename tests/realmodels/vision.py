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
