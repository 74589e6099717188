"""Kernels B, float (linalg, conv, pool, norm, embedding) on the host build of our runtime; the quantized
ones (quant, pt2e, cortex_m) are in test_kernels_bq.py.

Tiny torch modules, exported once (cached under .cache/kernels_b, keyed by the module source, the
inputs, the reference code and the package versions), bundled with their inputs into a .bpte and run
with run_host.
Reference: the real executorch runtime (etdeploy.oracle.run_reference), or eager torch where its portable
kernels refuse a layout. Float results: max abs err <= 1e-5 * max(1, max|ref|); "exact" cases bit for bit.
Also: every kernel file of both (cortex_m/ included) cross-compiles warning-free and needs no double helpers."""
from __future__ import annotations

from pathlib import Path

import pytest

from support import kernelcase, suite
from support.compare import assert_close

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "kernels_b"
KDIR = ROOT / "firmware" / "kernels"

F, I64, I32 = "float32", "int64", "int32"
# input kinds: tests/support/kernelcase.py

# name -> (flow, module source (class M), input specs [(shape, dtype, kind)], exact, edge_config)
CASES: dict[str, tuple] = {
    # ---------------- float convolution ----------------
    "conv2d_stride_pad": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(4, 6, 3, stride=2, padding=1)
        self.b = torch.nn.Conv2d(4, 5, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2))
    def forward(self, x):
        return self.a(x), self.b(x)
""", [((2, 4, 9, 8), F, "n")], False, None),
    "conv2d_dilation_nobias": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(4, 4, 3, padding=2, dilation=2, bias=False)
        self.b = torch.nn.Conv2d(4, 3, 5, stride=3, padding=2, dilation=2)
    def forward(self, x):
        return self.a(x), self.b(x)
""", [((1, 4, 11, 10), F, "n")], False, None),
    "conv2d_groups_depthwise": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.g = torch.nn.Conv2d(4, 6, 3, groups=2)
        self.dw = torch.nn.Conv2d(4, 4, 3, padding=1, groups=4)
        self.dm = torch.nn.Conv2d(4, 8, 3, stride=2, padding=1, groups=4, bias=False)
    def forward(self, x):
        return self.g(x), self.dw(x), self.dm(x)
""", [((1, 4, 8, 8), F, "n")], False, None),
    "conv1d": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv1d(4, 3, 5, stride=2, padding=2)
        self.b = torch.nn.Conv1d(4, 8, 3, padding=2, dilation=2, groups=4, bias=False)
    def forward(self, x):
        return self.a(x), self.b(x)
""", [((2, 4, 16), F, "n")], False, None),
    "conv2d_channels_last": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 4, 3, padding=1)
    def forward(self, x):
        return self.a(x) * 1.0
""", [((1, 3, 6, 5), F, "cl")], False, None),
    # the Helium conv path: unit column stride/dilation; chunks of 16 columns (widths 37, 7, 3), 3x3
    # (hand-scheduled) and other kernels, row stride and dilation, several input channels, batch 2
    "conv_mve_widths": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(2, 3, 3, padding=1)
        self.b = torch.nn.Conv2d(2, 2, (1, 3), stride=(2, 1), padding=(0, 2))
        self.c = torch.nn.Conv2d(2, 2, 5, padding=2, dilation=(2, 1))
        self.d = torch.nn.Conv2d(2, 4, 3, groups=2)
    def forward(self, x, y):
        return self.a(x), self.b(x), self.a(y), self.c(y), self.d(y[:, :, :, :5])
""", [((2, 2, 5, 37), F, "n"), ((1, 2, 9, 7), F, "n")], False, None),
    "cnn_wide": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.c2 = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.fc = torch.nn.Linear(16 * 8 * 8, 10)
    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.relu(self.c2(x))
        return self.fc(x.flatten(1))
""", [((1, 3, 16, 16), F, "n")], False, None),
    # ---------------- float linalg ----------------
    "linalg": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 5)
        self.nb = torch.nn.Linear(6, 3, bias=False)
    def forward(self, a, b, c, d):
        return (self.fc(a), self.nb(a), torch.mm(a, b), torch.addmm(c, a, b, beta=0.5, alpha=2.0),
                torch.bmm(d, d.transpose(1, 2)), torch.addmm(c[0], a, b))
""", [((3, 6), F, "n"), ((6, 4), F, "n"), ((3, 4), F, "n"), ((2, 3, 5), F, "n")], False, None),
    # every column-block shape of the Helium matmul (16-wide blocks, full and predicated vectors), odd K
    "linalg_widths": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fcs = torch.nn.ModuleList(torch.nn.Linear(7, n) for n in (45, 22, 12, 11, 8, 4, 3, 1))
    def forward(self, a, b):
        return tuple(f(a) for f in self.fcs) + (torch.mm(b, a.t()), torch.addmm(self.fcs[0].bias, a, torch.cat([a.t()] * 15, 1)))
""", [((3, 7), F, "n"), ((2, 7), F, "n")], False, None),
    "linear_preserved": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(37, 9)
        self.nb = torch.nn.Linear(37, 4, bias=False)
    def forward(self, a):
        return self.fc(a), self.nb(a)
""", [((2, 3, 37), F, "n")], False, {"preserve_ops": ["aten.linear.default"]}),
    # ---------------- float pooling ----------------
    "maxpool": ("portable", """
class M(torch.nn.Module):
    def forward(self, x):
        v, i = F.max_pool2d(x, 3, 2, 1, return_indices=True)
        return (F.max_pool2d(x, 2), v, i, F.max_pool2d(x, 3, 2, ceil_mode=True),
                F.max_pool2d(x, 2, 1, dilation=2), F.max_pool2d(x, (3, 2), (2, 3), (1, 1), ceil_mode=True))
""", [((2, 3, 9, 8), F, "n")], False, None),
    # NaN (the last one in a window wins), infinities and ties (the first max wins), whole and clipped windows.
    # Against eager torch: executorch 1.5.1's portable max_pool2d keeps a NaN only as a window's first tap.
    "maxpool_special": ("portable", """
class M(torch.nn.Module):
    def forward(self, x):
        v, i = F.max_pool2d(x, 2, return_indices=True)
        w, j = F.max_pool2d(x, 3, 2, 1, return_indices=True)
        return v, i, w, j
""", [((1, 3, 8, 10), F, "special_tenths")], True, {"eager_reference": True}),
    "avgpool": ("portable", """
class M(torch.nn.Module):
    def forward(self, x):
        return (F.avg_pool2d(x, 2), F.avg_pool2d(x, 3, 1, 1, count_include_pad=False),
                F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
                F.avg_pool2d(x, 2, divisor_override=3), F.avg_pool2d(x, (3, 2), (2, 1), (1, 0)),
                F.adaptive_avg_pool2d(x, (2, 3)), F.adaptive_avg_pool2d(x, (4, 3)))
""", [((1, 3, 9, 7), F, "n")], False, None),
    "pool_3d_input": ("portable", """
class M(torch.nn.Module):
    def forward(self, x):
        return F.max_pool2d(x, 2), F.avg_pool2d(x, 2, 1, 1), F.adaptive_avg_pool2d(x, 3)
""", [((3, 6, 6), F, "n")], False, None),
    # ---------------- float norms, embedding ----------------
    "norms": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(8)
        self.ln2 = torch.nn.LayerNorm((4, 8), elementwise_affine=False, eps=1e-3)
        self.bn = torch.nn.BatchNorm2d(3)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5); self.ln.bias.uniform_(-1, 1)
            self.bn.weight.uniform_(0.5, 1.5); self.bn.bias.uniform_(-1, 1)
            self.bn.running_mean.uniform_(-1, 1); self.bn.running_var.uniform_(0.5, 2)
    def forward(self, x):
        return self.ln(x * 3 + 1), self.ln2(x), self.bn(x)
""", [((2, 3, 4, 8), F, "n")], False, None),
    "embedding": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.e = torch.nn.Embedding(10, 6)
    def forward(self, i, j):
        return self.e(i), self.e(j) * 2
""", [((2, 5), I64, "i"), ((7,), I64, "i")], False, None),
    # linalg fast paths: addmm with a [M, N] bias, a [M, 1] bias, alpha/beta != 1 on the fused
    # shapes, batch-1 rows of 1..17 columns with K 1 and odd K, bmm with column tails
    "linalg_addmm_bias": ("portable", """
class M(torch.nn.Module):
    def forward(self, a, b, c, d, x, w):
        return (torch.addmm(c, a, b), torch.addmm(c[:, :1], a, b), torch.addmm(c[0], a, b, alpha=0.5),
                torch.addmm(c, a, b, beta=2.0), torch.addmm(c[0], a, b, beta=0.0), torch.bmm(d, d.transpose(1, 2)[:, :, :5]),
                torch.addmm(w[0, :17], x[:, :1], w[:1, :17]), torch.addmm(w[1, :5], x, w[:, :5]),
                torch.addmm(w[2], x, w), torch.mm(x, w[:, :13]))
""", [((5, 9), F, "n"), ((9, 19), F, "n"), ((5, 19), F, "n"), ((2, 7, 11), F, "n"), ((1, 31), F, "n"),
      ((31, 17), F, "n")], False, None),
    # linear.out (preserved): K below, at and past a vector (tails 1..3), N not a multiple of 4, 1-d input
    "linalg_linear_shapes": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fcs = torch.nn.ModuleList(torch.nn.Linear(k, n, bias=(k % 2 == 1)) for k, n in
                                       ((1, 3), (3, 5), (4, 4), (5, 7), (6, 9), (16, 2), (19, 13)))
    def forward(self, x, v):
        return tuple(f(x[..., :f.in_features]) for f in self.fcs[:6]) + (self.fcs[6](x), self.fcs[6](v))
""", [((2, 3, 19), F, "n"), ((19,), F, "n")], False, {"preserve_ops": ["aten.linear.default"]}),
    # ---------------- conv main path (patch + register chunks): every chunk width, tap loop, band,
    # window and in-channel block shape
    "conv_widths": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 5, 3, padding=1)
        self.b = torch.nn.Conv2d(2, 3, 3)
        self.p = torch.nn.Conv2d(2, 4, 1)
        self.q = torch.nn.Conv2d(2, 3, 1, padding=2, bias=False)
        self.r = torch.nn.Conv2d(2, 3, 3, padding=3)
    def forward(self, x, z, u):
        return self.a(x), self.a(z), self.b(u), self.p(u), self.q(u), self.r(u), self.a(x[:, :, :, :1])
""", [((2, 3, 7, 5), F, "n"), ((1, 3, 4, 13), F, "n"), ((1, 2, 6, 23), F, "n")], False, None),
    "conv_bands": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(6, 5, 3, padding=1)
        self.s = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.g = torch.nn.Conv2d(4, 8, 3, padding=(2, 1), dilation=(2, 1), groups=2)
        self.d = torch.nn.Conv2d(3, 2, (2, 3), stride=(3, 1), padding=1, dilation=(1, 2))
    def forward(self, x, y, v):
        return self.a(x), self.s(y), self.g(v), self.d(y)
""", [((1, 6, 9, 200), F, "n"), ((2, 3, 30, 30), F, "n"), ((1, 4, 30, 12), F, "n")], False, None),
    "conv_cl_blocks": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(4, 3, 3, padding=1)
        self.s = torch.nn.Conv2d(4, 2, 3, stride=(1, 2), padding=(0, 1), bias=False)
    def forward(self, x):
        return self.a(x) * 1.0, self.s(x) * 1.0
""", [((2, 4, 5, 140), F, "cl")], False, None),
    "conv_1d_paths": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv1d(3, 4, 3, padding=1)
        self.p = torch.nn.Conv1d(3, 5, 1)
        self.s = torch.nn.Conv1d(3, 6, 4, stride=3, padding=2, groups=3)
    def forward(self, x):
        return self.a(x), self.p(x), self.s(x)
""", [((2, 3, 41), F, "n")], False, None),
}


def _export(name: str) -> Path:
    """-> dir with m.pte, m.bpte (the inputs + reference outputs), ref.npz, ops.json"""
    return kernelcase.export_case(CACHE, name, CASES[name])


def _compare(ours, ref, what, exact):
    return assert_close(ours, ref, what, scale_floor=1.0, exact=exact)   # 1e-5 of max(1, |ref|)


@pytest.mark.build
@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_case(name):
    from support.hostrun import run_host
    d = _export(name)
    ref = kernelcase.reference(d)
    ours = run_host(d / "m.bpte")
    worst = _compare(ours, ref, name, CASES[name][3])
    print(f"{name}: max relative err {worst:.3g}")


REQUIRED_OPS = suite.REQUIRED_OPS["test_kernels_b"]


@pytest.mark.build
def test_cases_cover_the_ops():
    suite.assert_cover(REQUIRED_OPS, [_export(name) for name in CASES])


TARGETS = {
    "cortex-m55": ["arm-none-eabi-gcc", "-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-O2"],
    "cortex-m55-O3": ["arm-none-eabi-gcc", "-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-O3"],
    # opt=s images (bench/size.py): GCC 12 at -Os once emitted a conditional vcvt the M55 assembler rejects
    "cortex-m55-Os": ["arm-none-eabi-gcc", "-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-Os"],
    "cortex-m4": ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-O2"],
    "lx106": ["xtensa-lx106-elf-gcc", "-ffreestanding", "-Os"],
    "aarch64": ["aarch64-linux-gnu-gcc", "-O2"],
}
MY_FILES = ["linalg.c", "linear.c", "conv.c", "conv_direct.c", "conv_transpose.c", "pool.c", "norm.c", "embedding.c", "quant.c",
            *sorted(str(p.relative_to(KDIR)) for p in (KDIR / "cortex_m").glob("*.c"))]


@pytest.mark.build
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_cross_compile_clean(target, tmp_path):
    from support.crosscc import compile_clean
    cc = TARGETS[target]
    libm = ("expf", "sqrtf", "logf", "exp", "sqrt", "floorf", "roundf", "lrintf")
    compile_clean(target, cc, MY_FILES, tmp_path, libm=lambda s: s in libm)


@pytest.mark.emu
def test_cases_on_corstone300():
    """All cases in one image on the Cortex-M55 (QEMU mps3-an547): the Helium paths only run there.
    Outputs of each program's bundled case against the same references as on the host."""
    kernelcase.run_cases_on_board("corstone300", CASES, _export, "rtol=1e-4", "atol=1e-4",
                                  check=lambda name, ours, ref, what: _compare(ours, ref, what, CASES[name][3]))
