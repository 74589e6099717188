"""Float32 convolution paths for many channels (firmware/kernels/conv_gemm.h via conv.c) and the
Helium clamp / add paths, on the host build and on the Cortex-M55 (corstone300 under QEMU: the MVE
code runs only there). Each case is one exported module with several layers (one export, many
outputs), cached under .cache/kernels_f32 by the module source, the inputs and the package versions.
Reference: the real executorch runtime (portable kernels); where those refuse a layout (channels_last
convolutions), the eager module's outputs. Float results: max abs err <= 1e-5 x max(1, max|ref|)."""
from __future__ import annotations

from pathlib import Path

import pytest

from support import kernelcase
from support.compare import assert_close

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "kernels_f32"
F = "float32"

# name -> (module source (class M), input specs [(shape, layout)]); layout "n" NCHW, "cl" channels_last
CASES: dict[str, tuple] = {
    # pointwise NCHW GEMM: output channel pairs and a single last one, pixel blocks of 12 with every
    # tail (7x9 = 63 pixels), groups with several channels each, batch 2; 1x1 with stride or padding
    # (the patch path) beside them
    "pointwise_nchw": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(24, 41, 1)
        self.b = torch.nn.Conv2d(24, 6, 1, groups=3, bias=False)
        self.c = torch.nn.Conv2d(24, 5, 1, stride=2)
        self.d = torch.nn.Conv2d(24, 3, 1, padding=1)
    def forward(self, x, z):
        return self.a(x), self.b(x), self.c(x), self.d(x), self.a(z)
""", [((2, 24, 7, 9), "n"), ((1, 24, 1, 5), "n")]),
    # channels-last convs: 3x3 padded, stride 2, dilation with a non-square kernel, 1x1 with and
    # without stride, groups of 3 channels, output channel counts around the 8-lane blocks (5, 8, 13,
    # 20), widths not a multiple of 3 pixels
    "convs_channels_last": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(12, 20, 3, padding=1)
        self.b = torch.nn.Conv2d(12, 13, 3, stride=2, padding=1)
        self.c = torch.nn.Conv2d(12, 8, (3, 5), padding=(2, 1), dilation=(2, 1))
        self.d = torch.nn.Conv2d(12, 16, 1)
        self.e = torch.nn.Conv2d(12, 5, 1, stride=2, bias=False)
        self.f = torch.nn.Conv2d(12, 8, 3, groups=4, bias=False)
        self.g = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
    def forward(self, x, y):
        return (self.a(x) * 1.0, self.b(x) * 1.0, self.c(x) * 1.0, self.d(x) * 1.0, self.e(x) * 1.0,
                self.f(x) * 1.0, self.g(y) * 1.0)
""", [((1, 12, 11, 13), "cl"), ((2, 3, 17, 16), "cl")]),
    # channels-last depthwise: channel counts not a multiple of 4, 3x3 and 5x5, strides 1 and 2,
    # dilation, taps clipped at every border, a depth multiplier of 2 (the general channels-last path);
    # 3x3 at strides 1 and 2 take the Helium column-sharing block inside the image
    "depthwise_channels_last": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(18, 18, 3, padding=1, groups=18)
        self.b = torch.nn.Conv2d(18, 18, 5, stride=2, padding=2, groups=18)
        self.c = torch.nn.Conv2d(18, 18, 3, padding=1, dilation=2, groups=18, bias=False)
        self.d = torch.nn.Conv2d(18, 36, 3, padding=1, groups=18)
        self.e = torch.nn.Conv2d(18, 18, (3, 2), stride=(1, 2), groups=18)
        self.f = torch.nn.Conv2d(18, 18, 3, stride=2, padding=1, groups=18)
    def forward(self, x):
        return (self.a(x) * 1.0, self.b(x) * 1.0, self.c(x) * 1.0, self.d(x) * 1.0, self.e(x) * 1.0,
                self.f(x) * 1.0)
""", [((1, 18, 9, 10), "cl")]),
    # NCHW depthwise (Helium: channels gathered from the planes) and NCHW convs of 8+ output channels
    # (outputs scattered to the planes), padded taps on every border, a 3-channel first layer
    "depthwise_nchw": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(20, 20, 3, padding=1, groups=20)
        self.b = torch.nn.Conv2d(20, 20, 5, stride=2, padding=2, groups=20)
        self.c = torch.nn.Conv2d(20, 24, 3, stride=2, padding=1)
        self.d = torch.nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.e = torch.nn.Conv2d(1, 9, (5, 3), stride=2, padding=(2, 1))
        self.f = torch.nn.Conv2d(20, 20, 3, stride=2, padding=1, groups=20)
    def forward(self, x, z):
        return self.a(x), self.b(x), self.c(x), self.d(z), self.e(z[:, :1]), self.f(x)
""", [((1, 20, 13, 11), "n"), ((2, 3, 15, 17), "n")]),
    # an inverted residual block (expand, ReLU6, depthwise, project, residual add) in both layouts,
    # ReLU6 on odd element counts, clamps, global means / sums over planes and channels
    "block_nchw": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.e = torch.nn.Conv2d(8, 48, 1)
        self.d = torch.nn.Conv2d(48, 48, 3, padding=1, groups=48)
        self.p = torch.nn.Conv2d(48, 8, 1)
    def forward(self, x):
        y = self.p(F.relu6(self.d(F.relu6(self.e(x)))))
        return x + y, F.hardtanh(x, -0.5, 0.25), F.relu(y), y.mean((2, 3)), y.sum(1, keepdim=True), y.mean((1, 3))
""", [((1, 8, 7, 5), "n")]),
    "block_channels_last": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.e = torch.nn.Conv2d(8, 48, 1)
        self.d = torch.nn.Conv2d(48, 48, 3, stride=2, padding=1, groups=48)
        self.p = torch.nn.Conv2d(48, 8, 1)
        self.q = torch.nn.Conv2d(48, 8, 1, stride=2)
    def forward(self, x):
        h = F.relu6(self.e(x))
        y = self.p(F.relu6(self.d(h)))
        return (y + self.q(h)) * 1.0, F.hardtanh(x, -0.5, 0.25) * 1.0, h.mean((2, 3)), h.mean((2, 3), keepdim=True)
""", [((1, 8, 7, 5), "cl")]),
    # held-out networks' float ops (issue 15): SE gates ((1, C, 1, 1) times, plus and divided into a plane
    # each, either side), hardswish, a 3x3 stride-2 max pool with indices (whole windows four at a time,
    # clipped ones alone) on 20 channels of 11x13, sigmoid (four lanes; groups with |x| > 87 alone) and silu
    "held_other_nchw": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.e = torch.nn.Conv2d(6, 20, 1)
    def forward(self, x):
        h = self.e(x)
        s = torch.sigmoid(F.adaptive_avg_pool2d(h, 1))
        v, i = F.max_pool2d(h, 3, 2, 1, return_indices=True)
        return h * s, s * h, h + s, h / (s + 1.0), F.hardswish(h), v, i, torch.sigmoid(h * 60.0), F.silu(h)
""", [((1, 6, 11, 13), "n")]),
    # small planes and broadcasts of the held-out networks (issue 15, f32 round 2): pointwise convs on one-pixel
    # planes (the matrix-vector path: input channels and output rows not multiples of 4), on 3x3 and 2x5 planes
    # (output channels on the lanes, the last pixel alone), 3-channel strided first convs (rows of im2col and the
    # pointwise GEMM: 5x5 with 8-column passes, 3x3, a dilated one with stride 1 along H); binary ops broadcast
    # over a row, a plane and per channel, alpha and min/max
    "held_small_nchw": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(23, 42, 1)
        self.b = torch.nn.Conv2d(16, 13, 1)
        self.c = torch.nn.Conv2d(3, 12, 5, stride=2, padding=2)
        self.d = torch.nn.Conv2d(3, 10, 3, stride=2, padding=1)
        self.e = torch.nn.Conv2d(3, 9, 3, stride=(1, 2), padding=1, dilation=(1, 2), bias=False)
    def forward(self, s, p, q, x):
        r = x[0, 0, 0]
        return (self.a(s), self.b(p), self.b(q), self.c(x), self.d(x), self.e(x), x + r, x * x[:, :1], torch.sub(x, x.mean((2, 3), keepdim=True),
                alpha=0.5), torch.maximum(x, x[:, 1:2, :1]), x / (s[:, :3] + 2.0), 1.0 - x[:, :, :1])
""", [((1, 23, 1, 1), "n"), ((1, 16, 3, 3), "n"), ((1, 16, 2, 5), "n"), ((1, 3, 11, 26), "n")]),
}


def _export(name: str) -> Path:
    """-> dir with m.pte, m.bpte (the inputs, normal floats), ref.npz; "cl" inputs make the module
    channels_last"""
    src, specs = CASES[name]
    return kernelcase.export_case(CACHE, name, ("portable", src, [(list(s), F, lay) for s, lay in specs], False, None))


@pytest.mark.build
@pytest.mark.parametrize("name", sorted(CASES))
def test_f32_case_host(name):
    from support.hostrun import run_host
    d = _export(name)
    assert_close(run_host(d / "m.bpte"), kernelcase.reference(d), f"host/{name}")


@pytest.mark.emu
def test_f32_cases_on_corstone300():
    """Every case in one image on the Cortex-M55 (Helium paths), against the same references."""
    kernelcase.run_cases_on_board("corstone300", CASES, _export, "rtol=1e-4", "atol=1e-4")
