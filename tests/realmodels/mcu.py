"""Microcontroller networks from the NAS papers, written from their published block tables (not their code).

ProxylessNAS-Mobile (Cai et al., ICLR 2019, figure of the searched mobile architecture; the MCUNet family
uses the same MBConv space): inverted residuals with expansion 3 or 6 and depthwise kernels 3x3, 5x5 and
7x7, ReLU6, no squeeze-excitation. `width` scales every channel count, the 1280-channel head included
(rounded to multiples of 8), as MCUNet's small models are narrower."""
from __future__ import annotations

from torch import nn

# (expansion, kernel, output channels at width 1, stride) of ProxylessNAS-Mobile's MBConv blocks after the
# 3x3 stride-2 stem (32) and the first MBConv1 3x3 (16)
PROXYLESS_MOBILE = [
    (3, 5, 32, 2), (3, 3, 32, 1),
    (3, 7, 40, 2), (3, 3, 40, 1), (3, 5, 40, 1), (3, 5, 40, 1),
    (6, 7, 80, 2), (3, 5, 80, 1), (3, 5, 80, 1), (3, 5, 80, 1),
    (6, 5, 96, 1), (3, 5, 96, 1), (3, 5, 96, 1), (3, 5, 96, 1),
    (6, 7, 192, 2), (6, 7, 192, 1), (3, 7, 192, 1), (3, 7, 192, 1),
    (6, 7, 320, 1),
]


def _ch(c: float) -> int:
    return max(8, int(c + 4) // 8 * 8)


def _cbr(cin, cout, k, stride=1, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, nn.ReLU6()) if act else nn.Sequential(*layers)


class MBConv(nn.Module):
    def __init__(self, cin, cout, k, stride, t):
        super().__init__()
        h = cin * t
        layers = [_cbr(cin, h, 1)] if t != 1 else []
        layers += [_cbr(h, h, k, stride, groups=h), _cbr(h, cout, 1, act=False)]
        self.f = nn.Sequential(*layers)
        self.res = stride == 1 and cin == cout

    def forward(self, x):
        y = self.f(x)
        return x + y if self.res else y


class ProxylessMobile(nn.Module):
    def __init__(self, width: float = 1.0, classes: int = 1000, blocks: int = len(PROXYLESS_MOBILE)):
        super().__init__()
        c0, c1 = _ch(32 * width), _ch(16 * width)
        layers = [_cbr(3, c0, 3, 2), MBConv(c0, c1, 3, 1, 1)]
        c = c1
        for t, k, cout, s in PROXYLESS_MOBILE[:blocks]:
            layers.append(MBConv(c, _ch(cout * width), k, s, t))
            c = _ch(cout * width)
        head = _ch(1280 * width)
        layers.append(_cbr(c, head, 1))
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(head, classes)

    def forward(self, x):
        return self.fc(self.pool(self.features(x)).flatten(1))


class _TCBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.a = nn.Sequential(nn.Conv1d(cin, cout, 9, stride, 4, bias=False), nn.BatchNorm1d(cout), nn.ReLU())
        self.b = nn.Sequential(nn.Conv1d(cout, cout, 9, 1, 4, bias=False), nn.BatchNorm1d(cout))
        self.short = (nn.Sequential(nn.Conv1d(cin, cout, 1, stride, bias=False), nn.BatchNorm1d(cout), nn.ReLU())
                      if stride != 1 or cin != cout else nn.Identity())
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.b(self.a(x)) + self.short(x))


class TCResNet8(nn.Module):
    """TC-ResNet8 keyword spotting (Choi et al., Interspeech 2019, table of TC-ResNet8): the 40 MFCC
    coefficients of 98 frames as 40 channels of a 1-d temporal signal; conv 3 (16k), three residual blocks
    of 9-tap temporal convs with stride 2 (24k, 32k, 48k), average pool, FC 12. `width` is the paper's k."""

    def __init__(self, width: float = 1.0, classes: int = 12, mfcc: int = 40):
        super().__init__()
        c = [max(4, int(round(n * width))) for n in (16, 24, 32, 48)]
        self.stem = nn.Conv1d(mfcc, c[0], 3, 1, 1, bias=False)
        self.blocks = nn.Sequential(*(_TCBlock(a, b, 2) for a, b in zip(c, c[1:])))
        self.fc = nn.Linear(c[-1], classes)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).mean(-1))
