"""Real network architectures for tests and benchmarks (random weights, seeded).

    from realmodels import build, MODELS
    module, example_inputs = build("ds_cnn")            # full size
    module, example_inputs = build("ds_cnn", small=True) # reduced width/resolution for the test suite

MLPerf Tiny reference networks written from their published layer tables (tiny.py) and torchvision's
own classification definitions (vision.py), plus one
mobilenet_v2-like block stack for the int8 kernel work (tiny.py). Every module is a plain NCHW nn.Module in eval mode.
"""
from __future__ import annotations

from .registry import HELDOUT, MODELS, TORCHVISION, build, content_key, describe, source_files

__all__ = ["HELDOUT", "MODELS", "TORCHVISION", "build", "content_key", "describe", "source_files"]
