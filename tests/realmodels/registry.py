"""Name -> (builder, input shape) for the real-model set, full size and the reduced copies the test
suite exports (small=True: narrower and/or lower resolution, same layer structure)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import mcu, tiny, vision


@dataclass(frozen=True)
class Entry:
    make: Callable[[bool], object]      # small -> nn.Module
    shape: tuple                        # full-size input shape
    small_shape: tuple                  # reduced input shape
    about: str
    source: str                         # "mlperf-tiny", "synthetic", "torchvision" or "paper"


MODELS: dict[str, Entry] = {
    "ds_cnn": Entry(lambda s: tiny.DSCNN(width=0.25 if s else 1.0, blocks=2 if s else 4),
                    (1, 1, 49, 10), (1, 1, 49, 10), "MLPerf Tiny KWS DS-CNN (49x10 MFCC, 12 classes)", "mlperf-tiny"),
    "resnet8": Entry(lambda s: tiny.ResNet8(width=0.5 if s else 1.0), (1, 3, 32, 32), (1, 3, 16, 16),
                     "MLPerf Tiny IC ResNet-8 (CIFAR-10 32x32)", "mlperf-tiny"),
    "fc_autoencoder": Entry(lambda s: tiny.FCAutoencoder(width=0.25 if s else 1.0, inputs=160 if s else 640),
                            (1, 640), (1, 160), "MLPerf Tiny AD FC autoencoder (640 in, 8 bottleneck)",
                            "mlperf-tiny"),
    "mobilenet_v1_vww": Entry(lambda s: tiny.MobileNetV1(alpha=0.25, blocks=6 if s else 13), (1, 3, 96, 96),
                              (1, 3, 32, 32), "MLPerf Tiny VWW MobileNetV1 alpha 0.25 (96x96)", "mlperf-tiny"),
    "mbv2_blocks": Entry(lambda s: tiny.MobileNetV2Blocks(width=0.5 if s else 1.0), (1, 3, 48, 48), (1, 3, 24, 24),
                         "mobilenet_v2-like inverted-residual stack (48x48, 6 blocks, 10 classes)", "synthetic"),
    # two classes, as the person-detection use of 0.35/96 (1000 classes would add a 1.3 M-weight classifier)
    "mobilenet_v2_035": Entry(lambda s: vision.build("mobilenet_v2", width_mult=0.35, num_classes=2),
                              (1, 3, 96, 96), (1, 3, 32, 32), "torchvision mobilenet_v2 width 0.35, 2 classes",
                              "torchvision"),
    "shufflenet_v2_x0_5": Entry(lambda s: vision.build("shufflenet_v2_x0_5", num_classes=10 if s else 1000),
                                (1, 3, 96, 96), (1, 3, 32, 32), "torchvision shufflenet_v2_x0_5", "torchvision"),
    "mnasnet0_5": Entry(lambda s: vision.build("mnasnet0_5", num_classes=10 if s else 1000),
                        (1, 3, 96, 96), (1, 3, 32, 32), "torchvision mnasnet0_5", "torchvision"),
    "mobilenet_v3_small": Entry(lambda s: vision.build("mobilenet_v3_small", num_classes=10 if s else 1000),
                                (1, 3, 96, 96), (1, 3, 32, 32), "torchvision mobilenet_v3_small", "torchvision"),
    "googlenet": Entry(lambda s: vision.build("googlenet", num_classes=10 if s else 1000, aux_logits=False,
                                              init_weights=True), (1, 3, 96, 96), (1, 3, 32, 32),
                       "torchvision googlenet (no auxiliary heads)", "torchvision"),
    "resnet18": Entry(lambda s: vision.build("resnet18", num_classes=10 if s else 1000),
                      (1, 3, 96, 96), (1, 3, 32, 32), "torchvision resnet18", "torchvision"),
    # held out from the kernel work (issue 15, session 4): SiLU + SE + 5x5 depthwise, grouped convs (+ SE),
    # fire modules (cat, ceil-mode max pools), a wider mnasnet
    "efficientnet_b0": Entry(lambda s: vision.build("efficientnet_b0", num_classes=10 if s else 1000),
                             (1, 3, 96, 96), (1, 3, 32, 32), "torchvision efficientnet_b0 (SiLU, SE, 5x5 depthwise)",
                             "torchvision"),
    "regnet_x_400mf": Entry(lambda s: vision.build("regnet_x_400mf", num_classes=10 if s else 1000),
                            (1, 3, 96, 96), (1, 3, 32, 32), "torchvision regnet_x_400mf (grouped 3x3 convs)",
                            "torchvision"),
    "regnet_y_400mf": Entry(lambda s: vision.build("regnet_y_400mf", num_classes=10 if s else 1000),
                            (1, 3, 96, 96), (1, 3, 32, 32), "torchvision regnet_y_400mf (grouped 3x3 convs, SE)",
                            "torchvision"),
    "squeezenet1_1": Entry(lambda s: vision.build("squeezenet1_1", num_classes=10 if s else 1000),
                           (1, 3, 96, 96), (1, 3, 32, 32), "torchvision squeezenet1_1 (fire modules, ceil-mode pools)",
                           "torchvision"),
    "mnasnet1_0": Entry(lambda s: vision.build("mnasnet1_0", num_classes=10 if s else 1000),
                        (1, 3, 96, 96), (1, 3, 32, 32), "torchvision mnasnet1_0", "torchvision"),
    # held out from the kernel work (issue 15, session 5): hardswish + SE at width 960, odd channel counts
    # (116/232/464), a 7x7 stride-2 stem with fire modules, mobilenet_v2 at full width, pre-activation BN
    # after every concatenation (densenet), bottleneck residuals; densenet121 and resnet50 at 64x64 to keep
    # their QEMU runs short
    "mobilenet_v3_large": Entry(lambda s: vision.build("mobilenet_v3_large", num_classes=10 if s else 1000),
                                (1, 3, 96, 96), (1, 3, 32, 32), "torchvision mobilenet_v3_large", "torchvision"),
    "shufflenet_v2_x1_0": Entry(lambda s: vision.build("shufflenet_v2_x1_0", num_classes=10 if s else 1000),
                                (1, 3, 96, 96), (1, 3, 32, 32), "torchvision shufflenet_v2_x1_0 (116/232/464 channels)",
                                "torchvision"),
    "squeezenet1_0": Entry(lambda s: vision.build("squeezenet1_0", num_classes=10 if s else 1000),
                           (1, 3, 96, 96), (1, 3, 48, 48), "torchvision squeezenet1_0 (7x7 stride-2 stem, fire modules)",
                           "torchvision"),
    "mobilenet_v2": Entry(lambda s: vision.build("mobilenet_v2", num_classes=10 if s else 1000),
                          (1, 3, 96, 96), (1, 3, 32, 32), "torchvision mobilenet_v2 width 1.0", "torchvision"),
    "densenet121": Entry(lambda s: vision.build("densenet121", num_classes=10 if s else 1000),
                         (1, 3, 64, 64), (1, 3, 32, 32), "torchvision densenet121 at 64x64 (BN-ReLU after each cat)",
                         "torchvision"),
    "resnet50": Entry(lambda s: vision.build("resnet50", num_classes=10 if s else 1000),
                      (1, 3, 64, 64), (1, 3, 32, 32), "torchvision resnet50 at 64x64 (bottleneck residuals)",
                      "torchvision"),
    # segmentation: dilated 5x5 depthwise convs in the backbone, SE gating of the head, bilinear upsampling
    "lraspp_mobilenet_v3_large": Entry(lambda s: vision.build_segmentation("lraspp_mobilenet_v3_large",
                                                                           num_classes=2),
                                       (1, 3, 64, 64), (1, 3, 32, 32),
                                       "torchvision lraspp_mobilenet_v3_large at 64x64 (2 classes)", "torchvision"),
    # 7x7 depthwise, ReLU6, no SE; width 0.5 and two classes (person / no person) as an MCU detector would be
    "proxyless_mobile_050": Entry(lambda s: mcu.ProxylessMobile(width=0.25 if s else 0.5, classes=2,
                                                                blocks=10 if s else len(mcu.PROXYLESS_MOBILE)),
                                  (1, 3, 96, 96), (1, 3, 32, 32),
                                  "ProxylessNAS-Mobile width 0.5 (MBConv 3x3/5x5/7x7, 96x96, 2 classes)", "paper"),
    # 1-d temporal convolutions over 40 MFCC channels (3-d input)
    "tc_resnet8": Entry(lambda s: mcu.TCResNet8(width=0.5 if s else 1.0), (1, 40, 98), (1, 40, 98),
                        "TC-ResNet8 keyword spotting (1-d convs, 40 MFCC x 98 frames, 12 classes)", "paper"),
}
TORCHVISION = sorted(n for n, e in MODELS.items() if e.source == "torchvision")
# networks the kernel work was not tuned on: torchvision's and those written from NAS papers' tables
HELDOUT = sorted(n for n, e in MODELS.items() if e.source in ("torchvision", "paper"))


def _randomize(module, gen, weights: bool) -> None:
    """Random BatchNorm statistics, so folded scales differ per channel as in a trained network, and
    (weights=True) He-normal conv/linear weights, so activations keep their spread through the depth
    and the outputs depend on the inputs (PyTorch's default init shrinks them layer by layer)."""
    import math
    import torch
    for m in module.modules():
        if weights and isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)):
            fan_in = m.weight[0].numel()
            with torch.no_grad():
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * math.sqrt(2.0 / fan_in))
                if m.bias is not None:
                    m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.05)
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=gen) * 0.1)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=gen) * 0.5 + 0.75)
                m.weight.copy_(torch.rand(m.weight.shape, generator=gen) * 0.5 + 0.75)
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)


def build(name: str, small: bool = False, seed: int = 0):
    """(plain NCHW nn.Module in eval mode with seeded random weights, example inputs tuple)."""
    import torch
    if name not in MODELS:
        raise KeyError(f"unknown real model '{name}' (known: {', '.join(MODELS)})")
    e = MODELS[name]
    torch.manual_seed(seed)
    module = e.make(small).eval()
    gen = torch.Generator().manual_seed(seed)
    _randomize(module, gen, weights=e.source != "torchvision")
    shape = e.small_shape if small else e.shape
    return module, (torch.randn(shape, generator=gen),)


def source_files() -> list[Path]:
    """The package's own sources (what its models are made of), for export cache keys."""
    return sorted(Path(__file__).parent.glob("*.py"))


def content_key(prefix: bytes, extra_files=()) -> str:
    """Export cache key (support.export_key): prefix, the package's sources, extra files (the export
    code), the reference code and the package versions; 16 hex digits."""
    from support.export_key import content_key as key
    return key(prefix, files=[*source_files(), *extra_files])


def describe(name: str) -> str:
    return MODELS[name].about
