"""cortex_m:: int8 kernels on the DSP extension (SMLAD; Cortex-M4 mps2-an386 under QEMU, the M33 of
pico2 build only): convolutions (pointwise, KxK with strides, padding, odd channel
counts and odd K), depthwise (multipliers, strides, padding) and linear, bit for bit against
executorch's Python reference ops (etdeploy.oracle.run_cortex_m_reference).

Each case is one module with many outputs, exported once through the cortex_m flow (channels_last)
and cached under .cache/kernels_dsp by its source and the package versions; all cases run in one
mps2-an386 image."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import need_tool
from support import heldout_case, kernelcase

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "kernels_dsp"
KDIR = ROOT / "firmware" / "kernels"

# name -> (module source (class M), input shape (NCHW, given channels_last) or (rows, K) for 2-d, or a
# list of such shapes: one input each)
CASES: dict[str, tuple[str, tuple]] = {
    # dense convs: odd channel counts both sides, odd K (5 x 3 x 3 = 45 bytes a pixel), strides,
    # asymmetric kernels and padding (wider than the kernel's half), an odd output width (the one-column pass)
    "dsp_conv": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(5, 7, 3, padding=1)
        self.b = torch.nn.Conv2d(5, 6, 3, stride=2, padding=1)
        self.c = torch.nn.Conv2d(5, 3, (2, 3), stride=(1, 2), padding=(1, 0))
        self.d = torch.nn.Conv2d(5, 9, 1)
        self.e = torch.nn.Conv2d(5, 4, (5, 3), padding=(2, 1), bias=False)
        self.f = torch.nn.Conv2d(5, 8, 3)
        self.g = torch.nn.Conv2d(5, 4, 3, stride=(2, 3), padding=2)
    def forward(self, x):
        return (self.a(x), F.relu(self.b(x)), self.c(x), self.d(x), self.e(x), self.f(x), self.g(x))
""", (1, 5, 9, 11)),
    # many channels: the 8-byte loop with 4- and 1..3-byte tails (13 x 3 = 39, 24, 3 x 3 x 3 = 27)
    "dsp_conv_wide": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(13, 17, 3, padding=1)
        self.b = torch.nn.Conv2d(13, 24, 1)
        self.c = torch.nn.Conv2d(24, 33, 1, stride=2)
        self.d = torch.nn.Conv2d(3, 16, 3, stride=2, padding=1)
    def forward(self, x):
        y = F.relu(self.b(x))
        return self.a(x), self.c(y), self.d(x[:, :3])
""", (2, 13, 7, 6)),
    # depthwise: multiplier 1 and 3, strides 1 and 2, padding, 5x5, odd channel counts; a one-input-
    # channel conv (exported as a depthwise conv with multiplier = output channels, as DS-CNN's first layer)
    "dsp_depthwise": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(7, 7, 3, padding=1, groups=7)
        self.b = torch.nn.Conv2d(7, 21, 3, stride=2, padding=1, groups=7)
        self.c = torch.nn.Conv2d(7, 7, 5, padding=2, groups=7, bias=False)
        self.d = torch.nn.Conv2d(7, 7, (3, 2), stride=(2, 1), groups=7)
    def forward(self, x):
        return self.a(x), self.b(x), self.c(x), self.d(x)
""", (1, 7, 10, 9)),
    # one input channel, many outputs (im2col + the SMLAD GEMM): DS-CNN's first layer, a 3x3 with an odd count
    "dsp_first": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(1, 12, (10, 4), stride=2, padding=(5, 1))
        self.b = torch.nn.Conv2d(1, 5, 3)
    def forward(self, x):
        return self.a(x), self.b(x)
""", (1, 1, 17, 10)),
    # what the SMLAD paths hand back or split: a pointwise conv with K = 300 (over the widened-row
    # buffer's 256), a 9x9 dense conv and a 9x9 depthwise (81 taps: over the 64-tap local tables)
    "dsp_limits": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(300, 5, 1)
        self.b = torch.nn.Conv2d(300, 3, 9, padding=4)
        self.c = torch.nn.Conv2d(300, 300, 9, padding=4, groups=300)
    def forward(self, x):
        return self.a(x), self.b(x), self.c(x)
""", (1, 300, 5, 4)),
    # the widened-column GEMM (dsp_gemm.h): channels a multiple of 4 (im2col straight into the widened
    # buffer), padding wider than the kernel half, a 1x3 kernel, an odd pixel count (35: the last pair overlaps), 129 output channels
    # (requantisation blocks of 64, 63 and 2), odd N, relu6 / hardtanh clamps (amax - amin < 255), K = 8
    # and 16 (4 channels a pass) with N = 37
    "dsp_gemm": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(8, 6, 3, padding=1)
        self.b = torch.nn.Conv2d(8, 7, 3, stride=2, padding=2)
        self.c = torch.nn.Conv2d(8, 129, 1)
        self.d = torch.nn.Conv2d(8, 5, (1, 3), stride=(2, 1), padding=(0, 1))
        self.e = torch.nn.Conv2d(8, 3, 3, stride=2)
        self.f = torch.nn.Conv2d(8, 16, 1)
        self.g = torch.nn.Conv2d(16, 37, 1)
    def forward(self, x):
        return (self.a(x), F.relu6(self.b(x)), self.c(x), self.d(x), F.hardtanh(self.e(x), -0.5, 0.5),
                self.g(F.relu(self.f(x))))
""", (1, 8, 7, 5)),
    # the one-column linear (4 rows a pass): K = 901 (over the two-column buffer, odd: the last row
    # padded), N = 7 and 3 (overlapping last pass, fewer rows than a pass), 130 rows in blocks
    "dsp_gemv": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(901, 7)
        self.b = torch.nn.Linear(7, 3)
        self.c = torch.nn.Linear(7, 130)
    def forward(self, x):
        y = self.a(x)
        return y, self.b(F.relu(y)), F.relu6(self.c(y))
""", (1, 901)),
    # the one-column linear widened in chunks of 128 k with the rows' partial sums (dsp_gemm.h
    # cm_dsp_gemv_chunks): K = 300 (two chunks and 44), N = 13 (a last pass of one row repeated) and 5 (relu6),
    # two input rows; N = 130 takes the whole-row widening (fewer bytes than 130 partial sums)
    "dsp_gemv_chunks": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(300, 13)
        self.b = torch.nn.Linear(300, 5)
        self.c = torch.nn.Linear(300, 130)
    def forward(self, x):
        return self.a(x), F.relu6(self.b(x)), self.c(F.relu(x))
""", (2, 300)),
    # the 3x3 plane path (multiplier 1, dsp_dwk.h): channel counts 2, 3, 5, 6, 13 (quads and 1..3-channel
    # tails), strides 1, 2, (2, 1) and (1, 2), padding 0, 1, 2 and asymmetric, odd and even sizes, outputs
    # 1 to 4 wide (blocks of 4 that store fewer), relu/relu6 ranges; 300 channels on a small image; tall
    # images (run transposed); a 140-wide row (a band of 3 rows) and a 60-wide image (bands of 8 rows);
    # 1x1 and 1x2 outputs (no pair of outputs in a row, one pair)
    "dsp_dw3": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(13, 13, 3, padding=1, groups=13)
        self.b = torch.nn.Conv2d(13, 13, 3, stride=2, padding=1, groups=13)
        self.c = torch.nn.Conv2d(13, 13, 3, groups=13, bias=False)
        self.d = torch.nn.Conv2d(13, 13, 3, stride=2, groups=13)
        self.e = torch.nn.Conv2d(13, 13, 3, stride=(2, 1), padding=1, groups=13)
        self.f = torch.nn.Conv2d(13, 13, 3, stride=(1, 2), padding=1, groups=13)
        self.g = torch.nn.Conv2d(300, 300, 3, padding=1, groups=300)
        self.h = torch.nn.Conv2d(300, 300, 3, stride=2, padding=1, groups=300)
        self.j = torch.nn.Conv2d(2, 2, 3, stride=2, padding=1, groups=2)
        self.k = torch.nn.Conv2d(5, 5, 3, padding=1, groups=5)
        self.l = torch.nn.Conv2d(6, 6, 3, stride=2, padding=1, groups=6)
        self.m = torch.nn.Conv2d(3, 3, 3, padding=1, groups=3)
        self.n = torch.nn.Conv2d(13, 13, 3, padding=(0, 2), groups=13)
        self.o = torch.nn.Conv2d(13, 13, 3, padding=(2, 1), groups=13)
        self.p = torch.nn.Conv2d(5, 5, 3, padding=1, groups=5)
        self.q = torch.nn.Conv2d(5, 5, 3, stride=2, padding=1, groups=5)
        self.r = torch.nn.Conv2d(13, 52, 3, padding=1, groups=13)   # multiplier 4: the tap-pair path
    def forward(self, x, u, v, w, t, b):
        return (self.a(x), F.relu(self.b(x)), self.c(x), self.d(x), F.relu6(self.e(x)), self.f(x),
                F.relu(self.g(u)), self.h(u), self.j(v[:, 1:3]), self.k(v[:, 1:6]),
                F.relu6(self.l(v)), self.m(w), self.n(x), self.o(x), self.a(t), self.b(t), self.n(t),
                F.relu(self.p(b)), self.q(b), self.j(v[:, :2, :3, :3]), self.k(v[:, :5, :2, :2]), self.r(x),
                self.c(x[:, :, :3, :3]), self.c(x[:, :, :3, :4]))
""", [(1, 13, 11, 10), (1, 300, 4, 5), (1, 6, 9, 8), (1, 3, 3, 140), (1, 13, 25, 5), (1, 5, 21, 60)]),
    # the 5x5 plane path (dsp_dwk.h): strides 1, 2, (2, 1) and (1, 2), padding 0, 1, 2 and asymmetric,
    # channel counts 13, 5, 6, 3, 2 (quads and 1..3-channel tails), 300 channels on a small image, relu /
    # relu6 ranges, a tall image (transposed), a 60-wide image (bands of rows); the pixel path: a 120-wide
    # image (over the planes' buffer) and inputs smaller than the kernel (3x4, 4x3: mostly padding); 1x1
    # and 2x1 outputs (transposed: one output row of 2)
    "dsp_dw5": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(13, 13, 5, padding=2, groups=13)
        self.b = torch.nn.Conv2d(13, 13, 5, stride=2, padding=2, groups=13)
        self.c = torch.nn.Conv2d(13, 13, 5, groups=13, bias=False)
        self.d = torch.nn.Conv2d(13, 13, 5, stride=2, padding=1, groups=13)
        self.e = torch.nn.Conv2d(13, 13, 5, stride=(2, 1), padding=2, groups=13)
        self.f = torch.nn.Conv2d(13, 13, 5, stride=(1, 2), padding=1, groups=13)
        self.g = torch.nn.Conv2d(300, 300, 5, padding=2, groups=300)
        self.h = torch.nn.Conv2d(300, 300, 5, stride=2, padding=2, groups=300)
        self.k = torch.nn.Conv2d(5, 5, 5, padding=2, groups=5)
        self.l = torch.nn.Conv2d(6, 6, 5, stride=2, padding=2, groups=6)
        self.m = torch.nn.Conv2d(3, 3, 5, padding=(2, 0), groups=3)
        self.n = torch.nn.Conv2d(2, 2, 5, padding=1, groups=2)
    def forward(self, x, u, v, t, b, w):
        return (self.a(x), F.relu(self.b(x)), self.c(x), F.relu6(self.d(x)), self.e(x), F.relu6(self.f(x)),
                F.relu(self.g(u)), self.h(u), self.k(v[:, :5]), F.relu6(self.l(v)), self.m(v[:, 1:4]),
                self.n(v[:, 4:6]), self.a(t), self.b(t), F.relu6(self.a(b)), self.b(b), self.k(w),
                self.g(u[:, :, :3, :4]), self.k(w[:, :, :4, :3]), self.c(x[:, :, :5, :5]), self.c(x[:, :, :6, :5]))
""", [(1, 13, 11, 10), (1, 300, 4, 5), (1, 6, 9, 8), (1, 13, 25, 5), (1, 13, 14, 60), (1, 5, 7, 120)]),
    # the other int8 ops: quantize (of every input), residual adds (45 elements: the direct form; 693
    # and 1295: the tables; with relu), mul, average pools (global, padded, strided) and max pools, on odd
    # channel counts
    "dsp_other": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(7, 7, 1)
    def forward(self, x, a, b, d):
        y = self.c(x)
        return (F.relu(y + x), a + b, a * b, F.avg_pool2d(y, (y.shape[2], y.shape[3])), F.avg_pool2d(y, 3, 2, 1),
                F.max_pool2d(y, 3, 2, 1), F.max_pool2d(y, 2), d + d * 0.5)
""", [(1, 7, 9, 11), (1, 37, 7, 5), (1, 37, 7, 5), (1, 5, 3, 3)]),
    # what held-out networks added (issue 15), as test_kernels_cm's cm_heldout: ShuffleNetV2 units kept
    # channels_last (split, cat, channel shuffles of 2 x 20 and 4 x 10 channels), grouped convolutions (4
    # groups 3x3, 2 groups 1x1, 5 groups stride 2), an SE gate (sigmoid table, per-channel mul over 40
    # channels), SiLU, a 3x3 stride-2 max pool, hardswish (its mul has a zero point past int8, as in mobilenet_v3)
    "dsp_heldout": (heldout_case.SOURCE, heldout_case.SHAPES),
    # linear: odd K and N, several rows, a vector
    "dsp_linear": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(37, 11)
        self.b = torch.nn.Linear(11, 64)
        self.c = torch.nn.Linear(64, 12)
    def forward(self, x):
        y = F.relu(self.a(x))
        return y, self.c(F.relu(self.b(y)))
""", (3, 37)),
}


def _export(name: str) -> Path:
    """-> dir with m.pte, m.bpte (one case: the inputs), ref.npz (the reference outputs), ops.json;
    normal inputs (channels_last when 4-d), calibrated on them and 4 random ones"""
    src, shape = CASES[name]
    shapes = shape if isinstance(shape, list) else [shape]
    cl = len(shapes[0]) == 4
    specs = [(list(sh), "float32", "cl" if len(sh) == 4 else "n") for sh in shapes]
    d = kernelcase.export_case(CACHE, name, ("cortex_m", src, specs, True, None), calib_random=4)
    ops = set(kernelcase.operators(d))
    want = "cortex_m::quantized_linear.out" if not cl else "cortex_m::quantized_"
    assert any(o.startswith(want) for o in ops), f"{name}: no {want}* in {sorted(ops)}"
    return d


@pytest.mark.emu
def test_cases_on_mps2_an386():
    """Every case in one Cortex-M4 image (QEMU mps2-an386): the SMLAD paths, bit for bit."""
    # dequantized int8: equal floats are equal int8 codes
    kernelcase.run_cases_on_board("mps2-an386", CASES, _export, exact=True)


# cores with the DSP extension and without MVE: the SMLAD paths compile warning-free for each
DSP_CPUS = {
    "cortex-m4": ["-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
    "cortex-m33": ["-mcpu=cortex-m33", "-mfloat-abi=hard"],
    "cortex-m7": ["-mcpu=cortex-m7", "-mfloat-abi=hard", "-mfpu=fpv5-d16"],
}


@pytest.mark.build
@pytest.mark.parametrize("cpu", sorted(DSP_CPUS))
@pytest.mark.parametrize("opt", ["-O0", "-O2", "-Os"])
def test_dsp_kernels_compile_clean(cpu, opt, tmp_path):
    cc = need_tool("arm-none-eabi-gcc", "gcc-arm-none-eabi")
    srcs = sorted(KDIR.glob("cortex_m*.c")) + sorted(KDIR.glob("cortex_m/*.c"))
    assert srcs
    for src in srcs:
        p = subprocess.run([cc, *DSP_CPUS[cpu], "-mthumb", opt, "-std=c11", "-Wall", "-Wextra", "-Werror",
                            "-Wdouble-promotion", "-fsingle-precision-constant", f"-I{KDIR}",
                            f"-I{KDIR / 'cortex_m'}", f"-I{ROOT / 'firmware' / 'runtime'}", "-c", str(src),
                            "-o", str(tmp_path / "k.o")], capture_output=True, text=True)
        assert p.returncode == 0, f"{cpu} {opt} {src.name}:\n{p.stderr}"
        # the SMLAD path is what gets compiled for these cores
        dis = subprocess.run([shutil.which("arm-none-eabi-objdump") or "arm-none-eabi-objdump", "-d",
                              str(tmp_path / "k.o")], capture_output=True, text=True).stdout
        if src.name in ("cortex_m.c", "dsp_gemm.c"):
            assert "smlad" in dis, f"{cpu} {opt} {src.name}: no SMLAD in the object code"


@pytest.mark.build
def test_pico2_builds(tmp_path):
    """A program with every DSP case's ops builds for pico2 (Cortex-M33) warning-free."""
    from support.boardrun import scons
    need_tool("arm-none-eabi-gcc", "gcc-arm-none-eabi")
    d = _export("dsp_conv")
    p = scons("pico2", f"pte={d / 'm.pte'}")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "warning:" not in p.stdout + p.stderr, (p.stdout + p.stderr)[-3000:]
