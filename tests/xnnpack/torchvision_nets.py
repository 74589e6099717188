"""torchvision's mobilenet_v2 and resnet18 (their own definitions, random weights) at full size:
224x224 RGB, 1000 classes, as an Android app would ship them. The torchvision import goes through
tests/realmodels/vision.py (its compiled ops do not load against this torch; the model code is pure
Python). Batch-norm statistics are seeded random, so folding them gives per-channel scales that differ
as in a trained network. tests/xnnpack/torchvision_small.py: the reduced copies the test suite runs."""
import importlib.util
from pathlib import Path

import torch

SIZE = 224


def _vision():
    spec = importlib.util.spec_from_file_location(
        "etdeploy_realmodels_vision", Path(__file__).resolve().parents[1] / "realmodels" / "vision.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def seeded(name: str, seed: int = 0, **kwargs) -> torch.nn.Module:
    """torchvision.models.<name>(weights=None, **kwargs) with seeded weights and batch-norm statistics."""
    torch.manual_seed(seed)
    m = _vision().build(name, **kwargs).eval()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for b in m.modules():
            if isinstance(b, torch.nn.BatchNorm2d):
                b.running_mean.copy_(torch.randn(b.num_features, generator=g) * 0.1)
                b.running_var.copy_(torch.rand(b.num_features, generator=g) * 0.5 + 0.75)
                b.weight.copy_(torch.rand(b.num_features, generator=g) * 0.5 + 0.75)
                b.bias.copy_(torch.randn(b.num_features, generator=g) * 0.1)
    return m


def mobilenet_v2():
    return seeded("mobilenet_v2")


def resnet18():
    return seeded("resnet18")


def example_inputs():
    return (torch.randn(1, 3, SIZE, SIZE, generator=torch.Generator().manual_seed(0)),)
