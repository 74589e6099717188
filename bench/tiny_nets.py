"""MLPerf Tiny reference networks, written from their published layer tables (mlcommons/tiny,
benchmark/training/*): DS-CNN keyword spotting (49x10 MFCC, 64 channels) and ResNet-8 for CIFAR-10.
MAC counts match the KERNEL_NOTES table: DS-CNN 2,656,768, ResNet-8 12,501,632.

export(name) -> .pte under .cache/tiny_nets/, exported channels_last through the cortex_m flow
(cached by this file's content and the package versions)."""
from __future__ import annotations

import hashlib
import importlib.metadata as md
from pathlib import Path

import common  # noqa: F401  (sys.path)

CACHE = common.ROOT / ".cache" / "tiny_nets"
NETS = ["ds_cnn", "resnet8"]
SHAPES = {"ds_cnn": (1, 1, 49, 10), "resnet8": (1, 3, 32, 32)}


def build(name: str):
    import torch
    from torch import nn

    def cbr(ci, co, k, s=1, p=0, g=1):
        return [nn.Conv2d(ci, co, k, s, p, groups=g), nn.BatchNorm2d(co), nn.ReLU()]

    if name == "ds_cnn":
        class DSCNN(nn.Module):
            def __init__(self):
                super().__init__()
                layers = cbr(1, 64, (10, 4), 2, (5, 1))
                for _ in range(4):
                    layers += cbr(64, 64, 3, 1, 1, g=64) + cbr(64, 64, 1)
                self.f = nn.Sequential(*layers)
                self.fc = nn.Linear(64, 12)

            def forward(self, x):
                x = self.f(x)
                return self.fc(torch.flatten(nn.functional.avg_pool2d(x, (25, 5)), 1))
        return DSCNN()

    class Block(nn.Module):
        def __init__(self, ci, co, s):
            super().__init__()
            self.a = nn.Sequential(*cbr(ci, co, 3, s, 1))
            self.b = nn.Sequential(nn.Conv2d(co, co, 3, 1, 1), nn.BatchNorm2d(co))
            self.sc = nn.Conv2d(ci, co, 1, s) if (s != 1 or ci != co) else None

        def forward(self, x):
            y = self.b(self.a(x))
            return torch.relu(y + (self.sc(x) if self.sc is not None else x))

    class ResNet8(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(*cbr(3, 16, 3, 1, 1))
            self.s = nn.Sequential(Block(16, 16, 1), Block(16, 32, 2), Block(32, 64, 2))
            self.fc = nn.Linear(64, 10)

        def forward(self, x):
            x = self.s(self.stem(x))
            return self.fc(torch.flatten(nn.functional.avg_pool2d(x, 8), 1))
    return ResNet8()


def _key(name: str) -> str:
    h = hashlib.sha256(Path(__file__).read_bytes())
    h.update(name.encode())
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
    torch.manual_seed(0)
    m = build(name).eval()
    # non-trivial BatchNorm statistics, so the folded weights are not just the init
    for mod in m.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.2, 0.2)
            mod.running_var.uniform_(0.5, 1.5)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.2, 0.2)
    m = m.to(memory_format=torch.channels_last)
    gen = torch.Generator().manual_seed(1)

    def inp():
        return (torch.randn(SHAPES[name], generator=gen).contiguous(memory_format=torch.channels_last),)
    calib = [inp() for _ in range(8)]
    d.mkdir(parents=True, exist_ok=True)
    exporting.export_model(m, calib[0], d, name, flow="cortex_m", case_inputs=[calib[1]], calibration=calib)
    return pte


if __name__ == "__main__":
    import sys
    for n in sys.argv[1:] or NETS:
        print(export(n))
