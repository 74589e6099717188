"""Kernels B, quantized (quantized_decomposed, pt2e, cortex_m) on the host build of our runtime and in one
image on corstone300 (Cortex-M55: the Helium paths) and on mps2-an386 (Cortex-M4: the DSP paths); the
float ones are in test_kernels_b.py (which also cross-compiles every cortex_m/ file).

Tiny torch modules, exported once (cached under .cache/kernels_b, keyed by the module source, the
inputs, the reference code and the package versions), calibrated on their inputs and 4 random ones,
bundled with their inputs into a .bpte. References: portable and pt2e programs -> the real executorch
runtime (etdeploy.oracle.run_reference); cortex_m programs -> executorch's Python reference ops
(oracle.run_cortex_m_reference). "exact" cases bit for bit; the rest max abs err <= 1e-5 * max(1, max|ref|)."""
from __future__ import annotations

from pathlib import Path

import pytest

from support import kernelcase, suite
from support.compare import assert_close

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "kernels_b"

F = "float32"
# input kinds: tests/support/kernelcase.py

# name -> (flow, module source (class M), input specs [(shape, dtype, kind)], exact, edge_config)
CASES: dict[str, tuple] = {
    # ---------------- quantized_decomposed (real runtime numerics) ----------------
    "qd_ops": ("portable", """
S = 0.029133403673768044
class M(torch.nn.Module):
    def forward(self, x, q):
        qd = torch.ops.quantized_decomposed
        s2 = torch.tensor([0.013, 0.0071, 0.0299], dtype=torch.float64)
        z2 = torch.tensor([3, -5, 0], dtype=torch.int64)
        return (qd.quantize_per_tensor(x, S, -14, -128, 127, torch.int8),
                qd.dequantize_per_tensor(q, S, -14, -128, 127, torch.int8),
                qd.quantize_per_tensor(x, 0.01627974114851379, 3, -100, 100, torch.int8),
                qd.quantize_per_channel(x, s2, z2, 1, -128, 127, torch.int8),
                qd.dequantize_per_channel(q, s2, z2, 1, -128, 127, torch.int8),
                qd.quantize_per_tensor.tensor(x, torch.tensor([0.02], dtype=torch.float64), torch.tensor([5]), -128, 127, torch.int8),
                qd.dequantize_per_tensor.tensor(q, torch.tensor([0.02], dtype=torch.float64), torch.tensor([5]), -128, 127, torch.int8),
                qd.quantize_per_tensor(x, 0.05, 128, 0, 255, torch.uint8))
""", [((64, 3), F, "w"), ((64, 3), "int8", "q")], True, {"_check_ir_validity": False}),
    "mlp_pt2e": ("pt2e", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(20, 16)
        self.b = torch.nn.Linear(16, 4)
    def forward(self, x):
        return self.b(F.relu(self.a(x)))
""", [((2, 20), F, "n")], False, None),
    # ---------------- cortex_m (Python reference numerics, exact) ----------------
    "cm_mlp": ("cortex_m", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(40, 24)
        self.b = torch.nn.Linear(24, 8)
    def forward(self, x):
        return self.b(F.relu(self.a(x)))
""", [((3, 40), F, "n")], True, None),
    "cm_cnn": ("cortex_m", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.c2 = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.c3 = torch.nn.Conv2d(8, 6, 1)
        self.c4 = torch.nn.Conv2d(6, 4, (3, 2), stride=(1, 2), padding=(1, 0))
    def forward(self, x):
        x = F.relu(self.c1(x))
        x = F.relu(self.c2(x))
        x = self.c3(x)
        return F.avg_pool2d(self.c4(x), 2)
""", [((1, 3, 12, 12), F, "cl")], True, None),
    "cm_depth_mult": ("cortex_m", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(4, 8, 3, stride=2, groups=4)
    def forward(self, x):
        return F.max_pool2d(self.c(x), 3, 2, 1)
""", [((1, 4, 10, 10), F, "cl")], True, None),
    "cm_add_mul": ("cortex_m", """
class M(torch.nn.Module):
    def forward(self, x, y):
        return x + y, x * y, F.relu(x + y)
""", [((2, 16), F, "n"), ((2, 16), F, "n")], True, None),
    "cm_softmax": ("cortex_m", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(12, 10)
    def forward(self, x):
        return F.softmax(self.a(x), -1)
""", [((4, 12), F, "n")], True, None),
    "cm_act": ("cortex_m", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 16)
        self.b = torch.nn.Linear(16, 16)
    def forward(self, x):
        return torch.sigmoid(self.a(x)), torch.tanh(self.b(x)), F.hardtanh(self.a(x), -0.5, 0.5)
""", [((4, 16), F, "n")], True, None),
    "cm_matmul": ("cortex_m", """
class M(torch.nn.Module):
    def forward(self, x, y):
        return torch.matmul(x, y)
""", [((2, 4, 8), F, "n"), ((2, 8, 5), F, "n")], True, None),
    "cm_pad_pool": ("cortex_m", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(4, 4, 1)
    def forward(self, x):
        y = self.c(x)
        return F.pad(y, (1, 2, 0, 1)), F.avg_pool2d(y, 3, 2, 1), F.max_pool2d(y, 2)
""", [((1, 4, 8, 8), F, "cl")], True, None),
    # Helium linear: column blocks past 64, rows in fives with a partial last group, K a multiple of 16
    # and K < 16 (predicated first trip), batch dims
    "cm_lin_blocks": ("cortex_m", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(32, 71)
        self.b = torch.nn.Linear(71, 3)
        self.c = torch.nn.Linear(3, 6)
    def forward(self, x):
        return self.c(self.b(F.relu(self.a(x))))
""", [((2, 3, 32), F, "n")], True, None),
    # Helium depthwise (depth multiplier a multiple of 4): padding on every side, stride (the
    # reference has no int dilation),
    # non-square kernels, two groups of four channels per input channel, odd sizes (the flow emits
    # depthwise for batch 1 only)
    "cm_dw_mult4": ("cortex_m", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.b = torch.nn.Conv2d(4, 32, (3, 2), stride=(2, 1), padding=(2, 1), groups=4)
        self.c = torch.nn.Conv2d(32, 32, (4, 4), stride=2, padding=1, groups=4)
    def forward(self, x):
        return self.c(F.relu(self.b(F.relu(self.a(x)))))
""", [((1, 1, 9, 11), F, "cl")], True, None),
    # Helium max pool: more than 16 channels (two vectors per pixel), whole and clipped windows
    "cm_pool_wide": ("cortex_m", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(3, 20, 1)
    def forward(self, x):
        y = self.c(x)
        return F.max_pool2d(y, 3, 2, 1), F.max_pool2d(y, (2, 3), (1, 2))
""", [((1, 3, 7, 9), F, "cl")], True, None),
    # quantize_per_tensor beyond its range (calibrated on inputs an eighth as large): saturation both ways
    "cm_quant_saturate": ("cortex_m", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(13, 6)
    def forward(self, x):
        return self.fc(x)
""", [((3, 13), F, "w")], True, {"calib_scale": 0.125}),
    # Helium depthwise through the padded plane: planes wider than 16 columns (two chunks), 4-row
    # kernels, row stride without padding, eight channels per input channel (two groups of four)
    "cm_dw_plane": ("cortex_m", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(1, 8, (4, 3), padding=(1, 2))
        self.b = torch.nn.Conv2d(1, 4, 3, stride=(2, 1))
    def forward(self, x):
        return self.a(x), self.b(x)
""", [((1, 1, 6, 23), F, "cl")], True, None),
    # portable depthwise (depth multipliers 2 and 3, not the Helium case): taps clipped at every border,
    # padding past a whole kernel row, non-square kernels and strides, odd sizes
    "cm_dw_portable": ("cortex_m", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 6, (3, 5), stride=(1, 2), padding=(2, 1), groups=3)
        self.b = torch.nn.Conv2d(6, 18, 2, stride=3, padding=1, groups=6)
    def forward(self, x):
        return self.b(F.relu(self.a(x)))
""", [((1, 3, 7, 10), F, "cl")], True, None),
    # int8 transposed convolution (portable C on every core): odd channel counts, 16+ input channels
    # (vector dot products and their tails), a stride past the kernel (outputs no tap reaches: the bias
    # alone), asymmetric kernels, strides and padding, padding that crops, no bias, a fused ReLU,
    # and two with dilation and output padding, which the quantizer keeps in float (aten::convolution)
    "cm_transpose_conv": ("cortex_m", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.ConvTranspose2d(5, 7, 3, stride=2, padding=1)
        self.b = torch.nn.ConvTranspose2d(5, 3, (2, 3), stride=(1, 2), padding=(0, 1), bias=False)
        self.c = torch.nn.ConvTranspose2d(5, 4, 2, stride=3)
        self.d = torch.nn.ConvTranspose2d(5, 6, 4, stride=2, padding=1)
        self.e = torch.nn.ConvTranspose2d(19, 9, 3, padding=2)
        self.f = torch.nn.ConvTranspose2d(19, 17, 1, stride=2)
        self.g = torch.nn.ConvTranspose2d(5, 3, (3, 4), stride=(2, 4), padding=(1, 2), dilation=2, output_padding=1)
        self.h = torch.nn.ConvTranspose2d(5, 2, (5, 3), stride=(3, 2), padding=(2, 0), dilation=(2, 3), output_padding=(2, 1))
    def forward(self, x, y):
        return self.a(x), F.relu(self.b(x)), self.c(x), self.d(x), self.e(y), self.f(y), self.g(x), self.h(x)
""", [((1, 5, 6, 7), F, "cl"), ((1, 19, 5, 4), F, "cl")], True, None),
    # the op called directly, as executorch's reference defines it (its Python op is the reference: eager
    # outputs): dilation and output padding, which the quantizer keeps in float (g, h above), strides
    # sharing a factor with the dilation or not, int8 NCHW input (channels strided: the scalar path); the
    # _nhwc form (explicit NHWC tensors) without bias
    "cm_transpose_conv_direct": ("portable", """
from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer  # noqa: F401  (registers cortex_m::)
G = torch.Generator().manual_seed(3)
def layer(o, kh, kw, c, shifts):
    return (torch.randint(-127, 128, (o, kh, kw, c), generator=G, dtype=torch.int8),
            torch.randint(-3000, 3000, (o,), generator=G, dtype=torch.int32),
            torch.randint(1 << 30, (1 << 31) - 1, (o,), generator=G, dtype=torch.int32),
            torch.tensor(shifts, dtype=torch.int32))
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        for k, (o, kh, kw, sh) in enumerate([(3, 3, 4, [-8, -9, -7]), (2, 5, 3, [-8, -7])]):
            for n, t in zip("wbms", layer(o, kh, kw, 5, sh)):
                self.register_buffer(f"{n}{k}", t)
        self.register_buffer("e", torch.empty(0, dtype=torch.int8))   # no scratch: the kernel needs none
    def forward(self, x):
        e = self.e
        q = torch.ops.cortex_m.quantized_transpose_conv2d
        qn = torch.ops.cortex_m.quantized_transpose_conv2d_nhwc
        return (q(x, self.w0, self.b0, [2, 4], [1, 2], [1, 1], [2, 2], 5, -3, self.m0, self.s0, -128, 127, e, e),
                q(x, self.w1, self.b1, [3, 2], [2, 0], [2, 1], [2, 3], -7, 4, self.m1, self.s1, -100, 90, e, e),
                qn(x.permute(0, 2, 3, 1).contiguous(), self.w0, None, [3, 1], [0, 1], [0, 0], [1, 1], 0, 2,
                   self.m0, self.s0, -128, 127, e, e))
""", [((1, 5, 6, 7), "int8", "q")], True, {"_check_ir_validity": False}),
}


def _export(name: str) -> Path:
    """-> dir with m.pte, m.bpte (the inputs + reference outputs), ref.npz, ops.json; calibrated on the
    case's inputs and 4 random ones"""
    return kernelcase.export_case(CACHE, name, CASES[name], calib_random=4)


def _compare(ours, ref, what, exact):
    return assert_close(ours, ref, what, scale_floor=1.0, exact=exact)   # 1e-5 of max(1, |ref|)


@pytest.mark.build
@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_case(name):
    from support.hostrun import run_host
    d = _export(name)
    worst = _compare(run_host(d / "m.bpte"), kernelcase.reference(d), name, CASES[name][3])
    print(f"{name}: max relative err {worst:.3g}")


@pytest.mark.build
def test_cases_cover_the_ops():
    suite.assert_cover(suite.REQUIRED_OPS["test_kernels_bq"], [_export(name) for name in CASES])



@pytest.mark.build
def test_transpose_conv_macs_in_the_int8_share():
    """The export's MAC report: the quantized transposed convolutions in int8, the two the quantizer keeps
    in float (dilation, output padding) in float; each input pixel x every weight of its layer."""
    from etdeploy import program_macs
    ls = [l for l in program_macs.layers(_export("cm_transpose_conv") / "m.pte") if l.macs]
    by = lambda prefix: sorted(l.macs for l in ls if l.op.startswith(prefix))
    assert {l.arith for l in ls if "transpose_conv" in l.op} == {"int8"}, ls
    assert {l.arith for l in ls if l.op.startswith("aten::convolution")} == {"float"}, ls
    x, y = 6 * 7, 5 * 4   # input pixels of x (5 channels) and y (19 channels)
    assert by("cortex_m::quantized_transpose_conv2d") == sorted(
        [x * 5 * 7 * 9, x * 5 * 3 * 6, x * 5 * 4 * 4, x * 5 * 6 * 16, y * 19 * 9 * 9, y * 19 * 17])
    assert by("aten::convolution") == sorted([x * 5 * 3 * 12, x * 5 * 2 * 15])
    s = program_macs.summary(ls)
    assert s.float == x * 5 * (3 * 12 + 2 * 15) and s.int8 == s.total - s.float


@pytest.mark.emu
@pytest.mark.parametrize("board", ["corstone300", "mps2-an386"])
def test_cases_on_boards(board):
    """All cases in one image on the Cortex-M55 and on the Cortex-M4 (QEMU mps3-an547, mps2-an386): the
    Helium and the DSP paths only run there. Each program's bundled case against the host's references."""
    kernelcase.run_cases_on_board(board, CASES, _export, "rtol=1e-4", "atol=1e-4",
                                  check=lambda name, ours, ref, what: _compare(ours, ref, what, CASES[name][3]))
