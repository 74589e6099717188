"""Reduced copies of torchvision's mobilenet_v2 and resnet18 for the test suite (same layer structure
as tests/xnnpack/torchvision_nets.py): mobilenet_v2 at width 0.35, 10 classes; resnet18 with 10
classes; both on 64x64 inputs (resnet18's 3x3 stages end at 2x2)."""
import importlib.util
from pathlib import Path

import torch


def _nets():
    spec = importlib.util.spec_from_file_location("etdeploy_xnnpack_tv_nets",
                                                  Path(__file__).resolve().parent / "torchvision_nets.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def mobilenet_v2():
    return _nets().seeded("mobilenet_v2", width_mult=0.35, num_classes=10)


def resnet18():
    return _nets().seeded("resnet18", num_classes=10)


def example_inputs():
    return (torch.randn(1, 3, 64, 64, generator=torch.Generator().manual_seed(0)),)
