"""Real int8 networks for the Helium kernel work, written from their published layer tables and
exported channels_last through the cortex_m flow (cached by source under .cache/int8_nets/):

- ds_cnn: MLPerf Tiny keyword spotting DS-CNN (49x10 MFCC input, 64 channels, 4 depthwise-separable
  blocks, 12 classes): 2,656,768 MACs.
- resnet8: MLPerf Tiny image classification ResNet-8 (CIFAR-10 32x32, 16/32/64 channels): 12,501,632 MACs.
- mbv1_025: MLPerf Tiny visual wake words MobileNetV1 width 0.25 at 96x96 (2 classes): 7,489,664 MACs.
- mbv2_blocks: a mobilenet_v2-like inverted-residual stack (expansion 6, 16 to 192 channels, residual adds).

Batch norms are left out (an inference graph has them folded into the convolutions' weights and bias).

    export_all() -> {name: Path to the .pte}
"""
from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "int8_nets"

SOURCE = '''
import torch
from torch import nn


def cbr(i, o, k, s=1, p=0, g=1):
    return [nn.Conv2d(i, o, k, s, p, groups=g), nn.ReLU()]


class DsCnn(nn.Module):
    def __init__(self):
        super().__init__()
        layers = cbr(1, 64, (10, 4), 2, (5, 1))
        for _ in range(4):
            layers += cbr(64, 64, 3, 1, 1, g=64) + cbr(64, 64, 1)
        self.body = nn.Sequential(*layers)
        self.pool = nn.AvgPool2d((25, 5))
        self.fc = nn.Linear(64, 12)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.body(x)), 1))


class Basic(nn.Module):
    def __init__(self, i, o, s):
        super().__init__()
        self.a = nn.Conv2d(i, o, 3, s, 1)
        self.b = nn.Conv2d(o, o, 3, 1, 1)
        self.sc = nn.Conv2d(i, o, 1, s) if s != 1 or i != o else None
        self.r1, self.r2 = nn.ReLU(), nn.ReLU()

    def forward(self, x):
        y = self.b(self.r1(self.a(x)))
        return self.r2(y + (self.sc(x) if self.sc is not None else x))


class ResNet8(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(*cbr(3, 16, 3, 1, 1))
        self.s = nn.Sequential(Basic(16, 16, 1), Basic(16, 32, 2), Basic(32, 64, 2))
        self.pool = nn.AvgPool2d(8)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.s(self.stem(x))), 1))


class MbV1(nn.Module):
    # (out channels, stride) of the 13 depthwise-separable blocks at width 1.0
    TABLE = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 + [(1024, 2), (1024, 1)]

    def __init__(self, width=0.25, classes=2):
        super().__init__()
        c = int(32 * width)
        layers = cbr(3, c, 3, 2, 1)
        for o, s in self.TABLE:
            o = int(o * width)
            layers += cbr(c, c, 3, s, 1, g=c) + cbr(c, o, 1)
            c = o
        self.body = nn.Sequential(*layers)
        self.pool = nn.AvgPool2d(3)
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.body(x)), 1))


class InvRes(nn.Module):
    def __init__(self, i, o, s, t=6):
        super().__init__()
        h = i * t
        self.f = nn.Sequential(*cbr(i, h, 1), *cbr(h, h, 3, s, 1, g=h), nn.Conv2d(h, o, 1))
        self.res = s == 1 and i == o

    def forward(self, x):
        y = self.f(x)
        return x + y if self.res else y


class MbV2Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(*cbr(3, 16, 3, 2, 1))
        self.b = nn.Sequential(InvRes(16, 16, 1, 1), InvRes(16, 24, 2), InvRes(24, 24, 1), InvRes(24, 32, 2),
                               InvRes(32, 32, 1), InvRes(32, 32, 1))
        self.pool = nn.AvgPool2d(6)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.b(self.stem(x))), 1))
'''

# name -> (class, input shape NCHW)
NETS = {
    "ds_cnn": ("DsCnn", (1, 1, 49, 10)),
    "resnet8": ("ResNet8", (1, 3, 32, 32)),
    "mbv1_025": ("MbV1", (1, 3, 96, 96)),
    "mbv2_blocks": ("MbV2Blocks", (1, 3, 48, 48)),
}


def _key(name: str) -> str:
    h = hashlib.sha256(SOURCE.encode() + json.dumps(NETS[name]).encode())
    for pkg in ("torch", "executorch"):
        h.update(md.version(pkg).encode())
    return h.hexdigest()[:12]


def export(name: str) -> Path:
    d = CACHE / f"{name}-{_key(name)}"
    pte = d / f"{name}.pte"
    if pte.exists():
        return pte
    import torch
    from etdeploy import exporting
    ns: dict = {}
    exec(compile(SOURCE, "<int8_nets>", "exec"), ns)
    torch.manual_seed(0)
    cls, shape = NETS[name]
    module = ns[cls]().eval().to(memory_format=torch.channels_last)
    gen = torch.Generator().manual_seed(1)
    ex = (torch.randn(shape, generator=gen).contiguous(memory_format=torch.channels_last),)
    calib = [ex] + [exporting.random_like(ex, gen) for _ in range(3)]
    exporting.export_model(module, ex, d, name, flow="cortex_m", case_inputs=[ex], calibration=calib)
    return pte


def export_all(names=None) -> dict[str, Path]:
    return {n: export(n) for n in (names or NETS)}


if __name__ == "__main__":
    import sys
    sys.path.insert(0, str(ROOT / "tools"))
    for n, p in export_all(sys.argv[1:] or None).items():
        print(n, p)
