"""MLPerf Tiny v1.0 reference networks, from the layer tables of the benchmark's training scripts
(keyword spotting DS-CNN, image classification ResNet-8, anomaly detection FC autoencoder, visual wake
words MobileNetV1 alpha 0.25). `width` scales every channel count (tests use narrower copies)."""
from __future__ import annotations

import torch
from torch import nn


def _ch(c: int, width: float) -> int:
    return max(4, int(round(c * width)))


def _conv_bn_relu(cin, cout, k, stride=1, groups=1, padding=None):
    if padding is None:
        padding = tuple(x // 2 for x in k) if isinstance(k, tuple) else k // 2
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, padding, groups=groups, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU())


class DSCNN(nn.Module):
    """KWS DS-CNN: 49x10 MFCC -> conv 10x4 s2 (64) -> 4 x [depthwise 3x3, pointwise 1x1 (64)] -> avgpool -> FC 12."""

    def __init__(self, width: float = 1.0, classes: int = 12, blocks: int = 4):
        super().__init__()
        c = _ch(64, width)
        layers = [_conv_bn_relu(1, c, (10, 4), 2, padding=(5, 1))]
        for _ in range(blocks):
            layers += [_conv_bn_relu(c, c, 3, groups=c), _conv_bn_relu(c, c, 1)]
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


class _ResBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.a = _conv_bn_relu(cin, cout, 3, stride)
        self.b = nn.Sequential(nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.short = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                      if stride != 1 or cin != cout else nn.Identity())
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.b(self.a(x)) + self.short(x))


class ResNet8(nn.Module):
    """IC ResNet-8 (CIFAR-10, 32x32): conv 3x3 (16) -> 3 residual stacks (16 s1, 32 s2, 64 s2) -> avgpool -> FC 10."""

    def __init__(self, width: float = 1.0, classes: int = 10):
        super().__init__()
        c = [_ch(16, width), _ch(32, width), _ch(64, width)]
        self.stem = _conv_bn_relu(3, c[0], 3)
        self.stacks = nn.Sequential(_ResBlock(c[0], c[0], 1), _ResBlock(c[0], c[1], 2), _ResBlock(c[1], c[2], 2))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c[2], classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.stacks(self.stem(x))), 1))


class FCAutoencoder(nn.Module):
    """AD FC autoencoder (ToyADMOS, 5 frames x 128 mel = 640): 4 x dense 128 -> 8 -> 4 x dense 128 -> 640.
    The reference puts BatchNorm + ReLU after each hidden dense layer; BN is folded into the dense
    layers here (inference form), which is what a deployed model carries."""

    def __init__(self, width: float = 1.0, inputs: int = 640, hidden: int = 128, bottleneck: int = 8):
        super().__init__()
        h = _ch(hidden, width)
        dims = [inputs, h, h, h, h, bottleneck, h, h, h, h]
        layers = []
        for a, b in zip(dims, dims[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        layers.append(nn.Linear(h, inputs))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


# (stride, pointwise output channels at alpha 1) of the 13 depthwise-separable blocks of MobileNetV1
MOBILENET_V1_BLOCKS = [(1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512), (1, 512), (1, 512), (1, 512),
                       (1, 512), (1, 512), (2, 1024), (1, 1024)]


class MobileNetV1(nn.Module):
    """VWW MobileNetV1, alpha 0.25, 96x96 RGB: conv 3x3 s2 (32a) -> 13 depthwise-separable blocks -> avgpool -> FC 2."""

    def __init__(self, alpha: float = 0.25, classes: int = 2, blocks: int = 13):
        super().__init__()
        c = _ch(32, alpha)
        layers = [_conv_bn_relu(3, c, 3, 2)]
        for stride, cout in MOBILENET_V1_BLOCKS[:blocks]:
            cout = _ch(cout, alpha)
            layers += [_conv_bn_relu(c, c, 3, stride, groups=c), _conv_bn_relu(c, cout, 1)]
            c = cout
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


class _InvertedResidual(nn.Module):
    """mobilenet_v2's block: expand 1x1 (t x), depthwise 3x3, project 1x1 (no ReLU), residual add when
    the shape is kept."""

    def __init__(self, cin, cout, stride, t=6):
        super().__init__()
        h = cin * t
        self.f = nn.Sequential(_conv_bn_relu(cin, h, 1), _conv_bn_relu(h, h, 3, stride, groups=h),
                               nn.Conv2d(h, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.res = stride == 1 and cin == cout

    def forward(self, x):
        y = self.f(x)
        return x + y if self.res else y


# (in, out, stride, expansion) of the inverted-residual stack of MobileNetV2Blocks
MOBILENET_V2_BLOCKS = [(16, 16, 1, 1), (16, 24, 2, 6), (24, 24, 1, 6), (24, 32, 2, 6), (32, 32, 1, 6), (32, 32, 1, 6)]


class MobileNetV2Blocks(nn.Module):
    """Not an MLPerf Tiny network: a mobilenet_v2-like stack for the int8 kernel work (48x48 RGB):
    conv 3x3 s2 (16) -> 6 inverted residuals (16 to 192 channels expanded, residual adds) -> avgpool -> FC 10."""

    def __init__(self, width: float = 1.0, classes: int = 10):
        super().__init__()
        c = [(_ch(i, width), _ch(o, width), s, t) for i, o, s, t in MOBILENET_V2_BLOCKS]
        self.stem = _conv_bn_relu(3, c[0][0], 3, 2)
        self.blocks = nn.Sequential(*(_InvertedResidual(i, o, s, t) for i, o, s, t in c))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c[-1][1], classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.blocks(self.stem(x))), 1))
