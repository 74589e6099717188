"""Real networks for the float benchmarks, written from their published layer tables (batch norm
folded away, as a deployed network has it: convolutions carry a bias instead):

- ds_cnn: MLPerf Tiny keyword spotting DS-CNN (49x10 MFCC, 64 channels, 4 depthwise-separable blocks)
- resnet8: MLPerf Tiny image classification ResNet-8 (CIFAR-10 32x32, 16/32/64 channels)
- mbv1_vww: MobileNetV1 width 0.25, visual wake words 96x96 (MLPerf Tiny VWW)
- mbv2_035: a mobilenet_v2 width 0.35 block stack at 96x96 (inverted residuals, ReLU6, 1280-channel last conv, a 10-class head)

export(name, layout) exports one with the portable flow (float32) in NCHW or channels_last and caches
the .pte/.bpte under .cache/real_nets/<name>-<layout>-<key>/ (keyed by this file, the reference code and the versions: support.export_key)."""
from __future__ import annotations

from pathlib import Path

import common

CACHE = common.ROOT / ".cache" / "real_nets"
NETS = ["ds_cnn", "resnet8", "mbv1_vww", "mbv2_035"]
LAYOUTS = ["nchw", "cl"]


def _modules():
    import torch
    from torch import nn
    import torch.nn.functional as F

    class DSCNN(nn.Module):
        def __init__(self, ch=64, blocks=4, classes=12):
            super().__init__()
            self.c0 = nn.Conv2d(1, ch, (10, 4), stride=2, padding=(5, 1))
            self.dw = nn.ModuleList(nn.Conv2d(ch, ch, 3, padding=1, groups=ch) for _ in range(blocks))
            self.pw = nn.ModuleList(nn.Conv2d(ch, ch, 1) for _ in range(blocks))
            self.fc = nn.Linear(ch, classes)

        def forward(self, x):
            x = F.relu(self.c0(x))
            for d, p in zip(self.dw, self.pw):
                x = F.relu(p(F.relu(d(x))))
            x = F.avg_pool2d(x, (25, 5))
            return self.fc(torch.flatten(x, 1))

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.a = nn.Conv2d(cin, cout, 3, stride, 1)
            self.b = nn.Conv2d(cout, cout, 3, 1, 1)
            self.s = nn.Conv2d(cin, cout, 1, stride) if stride != 1 or cin != cout else None

        def forward(self, x):
            y = self.b(F.relu(self.a(x)))
            return F.relu(y + (self.s(x) if self.s is not None else x))

    class ResNet8(nn.Module):
        def __init__(self):
            super().__init__()
            self.c0 = nn.Conv2d(3, 16, 3, padding=1)
            self.blocks = nn.Sequential(Block(16, 16, 1), Block(16, 32, 2), Block(32, 64, 2))
            self.fc = nn.Linear(64, 10)

        def forward(self, x):
            x = self.blocks(F.relu(self.c0(x)))
            return self.fc(torch.flatten(F.avg_pool2d(x, 8), 1))

    class MBV1(nn.Module):
        # (stride of the depthwise, pointwise out channels) at width 0.25
        TABLE = [(1, 16), (2, 32), (1, 32), (2, 64), (1, 64), (2, 128)] + [(1, 128)] * 5 + [(2, 256), (1, 256)]

        def __init__(self, classes=2):
            super().__init__()
            self.c0 = nn.Conv2d(3, 8, 3, 2, 1)
            layers, c = [], 8
            for s, o in self.TABLE:
                layers += [nn.Conv2d(c, c, 3, s, 1, groups=c), nn.ReLU6(), nn.Conv2d(c, o, 1), nn.ReLU6()]
                c = o
            self.body = nn.Sequential(*layers)
            self.fc = nn.Linear(c, classes)

        def forward(self, x):
            x = self.body(F.relu6(self.c0(x)))
            return self.fc(torch.flatten(F.avg_pool2d(x, 3), 1))

    class InvRes(nn.Module):
        def __init__(self, cin, cout, s, t):
            super().__init__()
            h = cin * t
            self.e = nn.Conv2d(cin, h, 1) if t != 1 else None
            self.d = nn.Conv2d(h, h, 3, s, 1, groups=h)
            self.p = nn.Conv2d(h, cout, 1)
            self.res = s == 1 and cin == cout

        def forward(self, x):
            y = F.relu6(self.e(x)) if self.e is not None else x
            y = self.p(F.relu6(self.d(y)))
            return x + y if self.res else y

    class MBV2(nn.Module):
        # torchvision's (t, c, n, s) at width 0.35, channels rounded to multiples of 8
        TABLE = [(1, 8, 1, 1), (6, 8, 2, 2), (6, 16, 3, 2), (6, 24, 4, 2), (6, 32, 3, 1), (6, 56, 3, 2),
                 (6, 112, 1, 1)]

        def __init__(self, classes=10):  # a 1000-class head (5 MB of float weights) does not fit the 2 MiB SRAM
            super().__init__()
            self.c0 = nn.Conv2d(3, 16, 3, 2, 1)
            blocks, c = [], 16
            for t, o, n, s in self.TABLE:
                for i in range(n):
                    blocks.append(InvRes(c, o, s if i == 0 else 1, t))
                    c = o
            self.blocks = nn.Sequential(*blocks)
            self.last = nn.Conv2d(c, 1280, 1)
            self.fc = nn.Linear(1280, classes)

        def forward(self, x):
            x = F.relu6(self.last(self.blocks(F.relu6(self.c0(x)))))
            return self.fc(x.mean((2, 3)))

    return {"ds_cnn": (DSCNN, (1, 1, 49, 10)), "resnet8": (ResNet8, (1, 3, 32, 32)),
            "mbv1_vww": (MBV1, (1, 3, 96, 96)), "mbv2_035": (MBV2, (1, 3, 96, 96))}


def _key(name: str, layout: str) -> str:
    from support.export_key import content_key
    return content_key(Path(__file__).read_bytes(), f"{name}/{layout}", digits=12)


def export(name: str, layout: str) -> Path:
    """The directory holding m.pte and m.bpte (one bundled case) of the float net."""
    d = CACHE / f"{name}-{layout}-{_key(name, layout)}"
    if (d / "m.bpte").exists():
        return d
    import torch
    from etdeploy import exporting
    cls, shape = _modules()[name]
    torch.manual_seed(0)
    module = cls().eval()
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
    if layout == "cl":
        module = module.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    exporting.export_model(module, (x,), d, "m", flow="portable", case_inputs=[(x,)])
    return d


if __name__ == "__main__":
    import sys
    for n in sys.argv[1:] or NETS:
        for lay in LAYOUTS:
            print(export(n, lay))
