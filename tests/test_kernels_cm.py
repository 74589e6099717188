"""cortex_m:: int8 kernels on the shapes real networks have (the Helium GEMM conv, depthwise with
channels or taps on the vector lanes, pools and elementwise ops), bit for bit against executorch's Python
reference ops (etdeploy.oracle.run_cortex_m_reference).

Each case is one module with several layers (one export each, cached under .cache/kernels_cm keyed by
the source, inputs, reference code and package versions): channel counts that are not multiples of 16 (vector tails)
or of 4 (channel-group tails), strides 1 and 2, padding, 5x5 and 10x4 kernels, pointwise layers with
many channels and short rows (K < 16), odd spatial sizes. Run on the host build (the portable C paths)
and in one image on corstone300 under QEMU (Cortex-M55: the Helium paths)."""
from __future__ import annotations

from pathlib import Path

import pytest

from support import heldout_case, kernelcase
from support.compare import assert_close

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "kernels_cm"

# name -> (module source (class M), input shapes (NCHW, given channels_last))
CASES: dict[str, tuple[str, list[tuple]]] = {
    # pointwise: many channels (96 -> 130), K < 16 (5 -> 9), K not a multiple of 16 (24 -> 37, 70 -> 33),
    # stride 2, a 1x1 with padding (the im2col path), relu ranges
    "cm_pointwise": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(24, 37, 1)
        self.b = nn.Conv2d(24, 16, 1, stride=2)
        self.c = nn.Conv2d(5, 9, 1)
        self.d = nn.Conv2d(96, 130, 1)
        self.e = nn.Conv2d(70, 33, 1, padding=1)
        self.f = nn.Conv2d(96, 70, 1)
    def forward(self, x, y, z):
        return self.a(x), F.relu(self.b(x)), self.c(y), F.relu(self.d(z)), self.e(self.f(z))
""", [(1, 24, 7, 9), (1, 5, 6, 5), (1, 96, 3, 5)]),
    # KxK through im2col: 3x3 pad 1 (16 -> 19), stride 2, 5x5 pad 2, the DS-CNN stem (10x4, stride 2,
    # padding (5, 1), one input channel), no padding on odd sizes, 3 input channels, a 1x3 kernel (the
    # reference has no int dilation)
    "cm_conv_kxk": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(16, 19, 3, padding=1)
        self.b = nn.Conv2d(16, 8, 3, stride=2, padding=1)
        self.c = nn.Conv2d(16, 6, 5, padding=2)
        self.d = nn.Conv2d(1, 12, (10, 4), stride=2, padding=(5, 1))
        self.e = nn.Conv2d(3, 10, 3, stride=2)
        self.f = nn.Conv2d(16, 5, (1, 3), padding=(0, 1))
    def forward(self, x, s, r):
        return F.relu(self.a(x)), self.b(x), self.c(x), F.relu(self.d(s)), self.e(r), self.f(x)
""", [(1, 16, 9, 7), (1, 1, 21, 10), (1, 3, 11, 13)]),
    # 1xK convs on one-row maps (1-d convs as conv2d): the GEMM reads the input itself, a padded copy only
    # for the pixels whose windows cross the border: 48 -> 48 1x9 (K 432), stride 2 with 21 outputs
    # (a partial channel group), a row longer than a GEMM run (150 pixels), padding past the whole row,
    # no padding (no copy)
    "cm_conv_row": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(48, 48, (1, 9), padding=(0, 4))
        self.b = nn.Conv2d(16, 21, (1, 9), stride=2, padding=(0, 4))
        self.c = nn.Conv2d(40, 16, (1, 3), padding=(0, 1))
        self.d = nn.Conv2d(8, 6, (1, 5), padding=(0, 6))
        self.e = nn.Conv2d(24, 10, (1, 7))
    def forward(self, x, y, z, u, v):
        return F.relu(self.a(x)), self.b(y), F.relu(self.c(z)), self.d(u), self.e(v)
""", [(1, 48, 1, 13), (1, 16, 1, 49), (1, 40, 1, 150), (1, 8, 1, 3), (1, 24, 1, 30)]),
    # depthwise, depth multiplier 1: 16, 19, 40 and 3 channels, 3x3 and 5x5, strides 1 and 2, padding,
    # relu, odd sizes, a plane wider than 16 columns; one input channel to 130 outputs with 36 taps (too
    # many weights for the transposed-GEMM route: the input tap broadcast to the lanes); 32 channels on a
    # 24x25 image (too large to pad whole: a band of rows per output row), strides 1 and 2
    "cm_dw_lanes": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(19, 19, 3, padding=1, groups=19)
        self.b = nn.Conv2d(19, 19, 3, stride=2, padding=1, groups=19)
        self.c = nn.Conv2d(19, 19, 5, padding=2, groups=19)
        self.d = nn.Conv2d(40, 40, 5, stride=2, padding=2, groups=40)
        self.e = nn.Conv2d(40, 40, 3, padding=1, groups=40)
        self.f = nn.Conv2d(16, 16, 3, groups=16)
        self.g = nn.Conv2d(3, 3, 3, stride=2, padding=1, groups=3)
        self.h = nn.Conv2d(1, 130, 6, stride=2, padding=2)
        self.i = nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.j = nn.Conv2d(32, 32, 3, stride=2, padding=1, groups=32)
    def forward(self, x, y, z, u, s, v):
        return (F.relu(self.a(x)), self.b(x), self.c(x), self.d(y), F.relu(self.e(y)), self.f(z), self.g(u),
                self.h(s), F.relu(self.i(v)), self.j(v))
""", [(1, 19, 7, 9), (1, 40, 9, 6), (1, 16, 5, 21), (1, 3, 8, 8), (1, 1, 13, 11), (1, 32, 24, 25)]),
    # the two-phase Helium GEMM (gemm_tile_mve.h): short rows (K <= 16: weights held in registers) and
    # long ones (K > 16, with a K & 15 tail), channel counts that are and are not multiples of 4 (packed
    # word stores or one channel at a time), odd pixel counts, a stride-2 pointwise (row by row), ReLU6
    # (both clamp bounds, fused) and ReLU; im2col with one and three input channels and a 24-byte kernel row;
    # a residual add with ReLU after, and an add of two equally scaled inputs (no input with shift 0)
    "cm_gemm_tile": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(8, 48, 1)
        self.b = nn.Conv2d(16, 8, 1)
        self.c = nn.Conv2d(12, 6, 1, stride=2)
        self.d = nn.Conv2d(24, 20, 1)
        self.e = nn.Conv2d(56, 10, 1)
        self.f = nn.Conv2d(1, 16, 3, padding=1)
        self.g = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.h = nn.Conv2d(8, 12, 3, padding=1)
        self.i = nn.Conv2d(8, 8, 1)
        self.r6 = nn.ReLU6()
    def forward(self, x, z, u, v, w, s, r):
        return (self.r6(self.a(x)), F.relu(self.b(z)), self.c(u), self.r6(self.d(v)), F.relu(self.e(w)),
                self.r6(self.f(s)), self.g(r), F.relu(self.h(x)), F.relu(self.i(x) + x), self.e(w) + self.e(w))
""", [(1, 8, 7, 9), (1, 16, 6, 5), (1, 12, 9, 7), (1, 24, 5, 5), (1, 56, 3, 3), (1, 1, 9, 11), (1, 3, 12, 10)]),
    # pointwise several groups of four channels a pass (qt_sums4g / qt_sums1x4g, qt_requant4g): 9 pixels x
    # 10 groups (passes of 7 and 3) with K = 56 (a K & 15 tail), K = 12 on 25 pixels (a last odd pixel), K = 16
    # and K = 8 flat (the post-increment loads) on odd pixel counts, 516 channels (over QC_MAXO: constants a
    # pass at a time) with a partial group, strided 1x1 with K = 16 on odd output rows and K = 32 (im2col of
    # whole pixels, relu); K = 40 (a tail) on 25 pixels and K = 64 on 16: the packed weight rows, two pixels a
    # pass (qt_sums2x4w), a last odd pixel; K = 72 (a tail) on 8 pixels: pixel triples (qt_sums3x2g), a last
    # partial one of two pixels (K = 48 on 10: pixel by pixel, a triple would waste two); K = 20 on 15 pixels
    # (rows of 17..32 bytes not 24 or 32: the whole first 16 bytes unpredicated, then the rest); one pixel
    # (qt_gemv, six rows a pass): 40 -> 30, and 16 -> 515 (blocks of 512 channels, a last one of three
    # recomputing rows before it)
    "cm_pw_groups": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(56, 40, 1)
        self.b = nn.Conv2d(12, 20, 1)
        self.c = nn.Conv2d(16, 24, 1)
        self.d = nn.Conv2d(8, 12, 1)
        self.e = nn.Conv2d(40, 518, 1)
        self.f = nn.Conv2d(16, 32, 1, stride=2)
        self.g = nn.Conv2d(32, 64, 1, stride=2)
        self.h = nn.Conv2d(40, 12, 1)
        self.i = nn.Conv2d(64, 8, 1)
        self.j = nn.Conv2d(48, 20, 1)
        self.k = nn.Conv2d(72, 12, 1)
        self.l = nn.Conv2d(20, 8, 1)
        self.m = nn.Conv2d(40, 30, 1)
        self.n = nn.Conv2d(16, 515, 1)
    def forward(self, x, y, z, u, v, w, s, r, q, t, o, p, m):
        return (self.a(x), F.relu(self.b(y)), self.c(z), self.d(u), self.e(v), self.f(z), F.relu(self.g(w)),
                self.h(s), F.relu(self.i(r)), self.j(q), F.relu(self.k(t)), self.l(o), F.relu(self.m(p)), self.n(m))
""", [(1, 56, 3, 3), (1, 12, 5, 5), (1, 16, 9, 9), (1, 8, 7, 5), (1, 40, 3, 3), (1, 32, 7, 7), (1, 40, 5, 5),
      (1, 64, 4, 4), (1, 48, 2, 5), (1, 72, 1, 8), (1, 20, 3, 5), (1, 40, 1, 1),
      (1, 16, 1, 1)]),
    # int8 linear on Helium: six weight rows a pass with a K & 15 tail (40), whole vectors (128 -> 100),
    # rows shorter than a vector (8 -> 30), several input rows; 16 columns requantised a pass with a rest
    # of 4 (100) and 3 (19), one row (19 = 3 * 6 + 1) and two (200 = 192 + 6 + 2) after the six-row passes,
    # a 192-column block and a second one (64 -> 200)
    "cm_linear": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(40, 13)
        self.b = nn.Linear(128, 100)
        self.c = nn.Linear(8, 30)
        self.d = nn.Linear(64, 200)
        self.e = nn.Linear(24, 19)
    def forward(self, x, z, u, v, w):
        return F.relu(self.a(x)), self.b(z), self.c(u), F.relu(self.d(v)), self.e(w)
""", [(2, 40), (1, 128), (3, 8), (3, 64), (1, 24)]),
    # depthwise, depth multiplier 1, kernels up to 4x4 (3x3: the patch path, the others the channels-on-lanes one):
    # 8 channels with relu6,
    # stride 2 on even and odd sizes with and without padding, a DS-CNN-like 25x5 image (narrow rows),
    # padding 2 on a 3x3, 4x4 / 2x2 / 1x3 kernels, a row-only stride, a 60-column image (bands of rows)
    "cm_dw_taps": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.b = nn.Conv2d(24, 24, 3, stride=2, padding=1, groups=24)
        self.c = nn.Conv2d(20, 20, 3, padding=1, groups=20)
        self.d = nn.Conv2d(20, 20, 3, padding=2, groups=20)
        self.e = nn.Conv2d(8, 8, 4, stride=2, padding=1, groups=8)
        self.f = nn.Conv2d(8, 8, (1, 3), padding=(0, 1), groups=8)
        self.g = nn.Conv2d(8, 8, 2, stride=2, groups=8)
        self.h = nn.Conv2d(24, 24, 3, stride=2, groups=24)
        self.i = nn.Conv2d(17, 17, 3, padding=1, groups=17)
        self.j = nn.Conv2d(8, 8, 3, stride=(2, 1), padding=1, groups=8)
    def forward(self, x, y, z, w):
        return (F.hardtanh(self.a(x), 0.0, 6.0), self.b(y), F.relu(self.c(z)), self.d(z), self.e(x), self.f(x),
                self.g(x), self.h(y), self.i(w), self.j(x))
""", [(1, 8, 11, 13), (1, 24, 12, 10), (1, 20, 25, 5), (1, 17, 4, 60)]),
    # depthwise 3x3 / 5x5, depth multiplier 1 (the patch path, 4-channel planes): 17 channels on a 60x40 image
    # (column chunks, bands of rows, a channel group of 1) with relu6 (the clamp loops) and 5x5 stride 2 on it;
    # 13 channels (not a multiple of 4: the byte-gather planes) with stride 2 and no padding on odd sizes, 5x5
    # stride 1, padding 2 on a 3x3; 24 channels with 5x5 stride 2 padding 1 and 3x3 stride 2 on a 7x5 image;
    # 2x2 and 3x3 outputs; a 90x6 image (one chunk of columns, two bands of rows); 3x3 outputs of 3x3 kernels (the
    # tiny mode: patches covering them exactly, the ninth output requantised apart), strides 1 and 2, with and
    # without padding and clamps, 24, 20 and 13 channels; 40 channels on 6x6 and 3x3 images (8 quads a call: 32 + 8);
    # 11x7 and 9x7 images (odd widths: 2x1 blocks down the last column, then a half pass of 2 and of 1 block)
    "cm_dw_patch": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(17, 17, 3, padding=1, groups=17)
        self.b = nn.Conv2d(17, 17, 5, stride=2, padding=2, groups=17)
        self.c = nn.Conv2d(13, 13, 3, stride=2, groups=13)
        self.d = nn.Conv2d(13, 13, 5, padding=2, groups=13)
        self.e = nn.Conv2d(13, 13, 3, padding=2, groups=13)
        self.f = nn.Conv2d(24, 24, 5, stride=2, padding=1, groups=24)
        self.g = nn.Conv2d(24, 24, 3, stride=2, padding=1, groups=24)
        self.h = nn.Conv2d(24, 24, 3, stride=2, padding=1, groups=24)
        self.i = nn.Conv2d(24, 24, 5, padding=2, groups=24)
        self.j = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.k = nn.Conv2d(8, 8, 5, padding=2, groups=8)
        self.l = nn.Conv2d(24, 24, 3, padding=1, groups=24)
        self.m = nn.Conv2d(20, 20, 3, stride=2, padding=1, groups=20)
        self.n = nn.Conv2d(13, 13, 3, stride=2, groups=13)
        self.o = nn.Conv2d(20, 20, 3, padding=1, groups=20)
        self.p = nn.Conv2d(40, 40, 3, padding=1, groups=40)
        self.q = nn.Conv2d(40, 40, 3, stride=2, padding=1, groups=40)
        self.s = nn.Conv2d(40, 40, 3, padding=1, groups=40)
        self.t = nn.Conv2d(24, 24, 3, padding=1, groups=24)
    def forward(self, x, y, z, w, v, u, t, r, q, o, n):
        return (F.hardtanh(self.a(x), 0.0, 6.0), self.b(x), self.c(y), F.relu(self.d(y)), self.e(y), self.f(z),
                F.relu(self.g(z)), self.h(w), self.i(w), self.j(v), self.k(v), F.hardtanh(self.l(w), 0.0, 6.0),
                self.m(u), F.relu(self.n(t)), self.o(r), F.relu(self.p(q)), self.s(F.relu(self.q(q))),
                F.hardtanh(self.t(o), 0.0, 6.0), self.t(n))
""", [(1, 17, 60, 40), (1, 13, 11, 9), (1, 24, 7, 5), (1, 24, 3, 3), (1, 8, 90, 6), (1, 20, 6, 6), (1, 13, 7, 7),
      (1, 20, 3, 3), (1, 40, 6, 6), (1, 24, 11, 7), (1, 24, 9, 7)]),
    # pools and elementwise ops on many channels: average and max pools (stride 1 and 2, padding),
    # quantized add (and with relu, a residual) and mul
    "cm_pool_ew": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 40, 1)
    def forward(self, x, a, b):
        y = self.c(x)
        return (F.avg_pool2d(y, 3, 2, 1), F.avg_pool2d(y, (5, 3)), F.max_pool2d(y, 3, 1, 1),
                F.max_pool2d(y, 2), a + b, F.relu(a + b), a * b)
""", [(1, 3, 10, 7), (1, 37, 5, 3), (1, 37, 5, 3)]),
    # hardswish and an SE block's hardsigmoid gate after a conv (mobilenet_v3: int8 cortex_m::minimum against a
    # 0-d constant, the plain loop), and a minimum of two tensors of the output's shape
    "cm_hswish": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 24, 1)
        self.d = nn.Conv2d(3, 16, 3, padding=1)
        self.h = nn.Hardswish(inplace=True)
        nn.init.normal_(self.d.weight, std=1.5)   # outputs past 3, where hardswish's min(., 6) binds
    def forward(self, x):
        y = self.c(x)
        return self.h(self.d(x)), y * F.hardsigmoid(F.adaptive_avg_pool2d(y, 1), inplace=True), torch.minimum(y, F.relu(y) - 1.0)
""", [(1, 3, 9, 7)]),
    # what held-out networks added (issue 15): ShuffleNetV2 units (split, branch ending in a ReLU as the
    # network's: the cat shares its input's quantisation, a range with negatives would leave the first conv
    # unlowered; cat, channel shuffle of 2
    # groups of 20 channels: the vector interleave with an overlapping tail; of 4 groups of 10: the plain
    # loop) kept channels_last by export; grouped convolutions (RegNet/ResNeXt: 4 groups of 10 channels
    # 3x3, 2 groups 1x1 with 12 outputs each, 5 groups with stride 2); SE gates (sigmoid as a table, a
    # (1, C, 1, 1) per-channel mul over 40 channels); SiLU (a table); hardswish (a mul zero point past int8:
    # the eight-lane mul); a 3x3 stride-2 max pool over 40
    # channels
    "cm_heldout": (heldout_case.SOURCE, heldout_case.SHAPES),
}


def _export(name: str) -> Path:
    """-> dir with m.pte, m.bpte (inputs + expected outputs), ref.npz (the reference ops' outputs) and
    ops.json; normal channels_last inputs, calibrated on them and 4 random ones"""
    src, shapes = CASES[name]
    case = ("cortex_m", "from torch import nn\n" + src,
            [(list(s), "float32", "cl" if len(s) == 4 else "n") for s in shapes], True, None)
    return kernelcase.export_case(CACHE, name, case, calib_random=4)


EXPECTED_OPS = {
    "cm_pointwise": {"cortex_m::quantized_conv2d.out"},
    "cm_conv_kxk": {"cortex_m::quantized_conv2d.out"},
    "cm_conv_row": {"cortex_m::quantized_conv2d.out"},
    "cm_linear": {"cortex_m::quantized_linear.out"},
    "cm_pw_groups": {"cortex_m::quantized_conv2d.out"},
    "cm_gemm_tile": {"cortex_m::quantized_conv2d.out", "cortex_m::quantized_add.out"},
    "cm_dw_lanes": {"cortex_m::quantized_depthwise_conv2d.out"},
    "cm_dw_taps": {"cortex_m::quantized_depthwise_conv2d.out"},
    "cm_dw_patch": {"cortex_m::quantized_depthwise_conv2d.out"},
    "cm_pool_ew": {"cortex_m::quantized_avg_pool2d.out", "cortex_m::quantized_max_pool2d.out",
                   "cortex_m::quantized_add.out", "cortex_m::quantized_mul.out"},
    "cm_hswish": {"cortex_m::minimum.out"},
    "cm_heldout": {"cortex_m::quantized_conv2d.out", "cortex_m::transpose.out", "aten::split_with_sizes_copy.out",
                   "aten::cat.out", "cortex_m::quantized_mul.out", "cortex_m::quantized_activation.out",
                   "cortex_m::quantized_max_pool2d.out"},
}


@pytest.mark.build
@pytest.mark.parametrize("name", sorted(CASES))
def test_case_on_host(name):
    """The host build (portable C paths) against the reference ops, bit for bit; the case really
    exercises the int8 operators it is there for."""
    from support.hostrun import run_host
    d = _export(name)
    ops = set(kernelcase.operators(d))
    assert EXPECTED_OPS[name] <= ops, f"{name}: the export has {sorted(ops)}"
    assert_close(run_host(d / "m.bpte"), kernelcase.reference(d), f"host/{name}", exact=True)


@pytest.mark.emu
def test_cases_on_corstone300():
    """Every case in one image on the Cortex-M55 (QEMU mps3-an547, Helium paths), bit for bit."""
    kernelcase.run_cases_on_board("corstone300", CASES, _export, "rtol=0", "atol=0", exact=True)
