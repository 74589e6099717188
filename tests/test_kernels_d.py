"""Kernels D (resample, stats, bitwise, seq: upsample, pixel (un)shuffle, var/var_mean, group norm,
glu, elu, baddbmm, bitwise ops, masked_fill, where forms) on the host build of our runtime.

Tiny torch modules, several operators per module, exported once (cached under .cache/kernels_d by
content) with their inputs bundled; the reference is the real executorch runtime's output for the
same program. Float: max abs err <= 1e-5 x max(1, max|ref|); ints and bools exact. Also: the new
kernel files cross-compile warning-free for every board and need no double or libm helpers."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from support import kernelcase, suite
from support.compare import assert_close

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "kernels_d"
KDIR = ROOT / "firmware" / "kernels"
F, I64, I32, U8, B = "float32", "int64", "int32", "uint8", "bool"

SEG = """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.g = torch.nn.GroupNorm(2, 8)
        self.b = torch.nn.Conv2d(8, 4, 1)
        self.c = torch.nn.Conv2d(4, 4, 3, padding=1)
    def forward(self, x):
        y = F.relu(self.g(self.a(x)))
        y = F.interpolate(F.max_pool2d(y, 2), scale_factor=2, mode="nearest")
        z = F.interpolate(self.b(y), scale_factor=2, mode="bilinear", align_corners=False)
        return self.c(F.pixel_shuffle(torch.cat([z, z, z, z], 1), 2)), F.elu(z)
"""
# cortex_m flow: a program exported from SEG computes output 0 about 1.9 away from the module and
# from the flow's own edge graph (executorch's Python interpretation of the .pte gives the same
# numbers as our runtime, bit for bit): the channels_last pixel_shuffle, the pattern of issue 14's
# shufflenet result, left to that fix
SEG_CM = SEG.replace("self.c(F.pixel_shuffle(torch.cat([z, z, z, z], 1), 2))", "self.c(z)")

# name -> (module source (class M), input specs [(shape, dtype, kind)][, edge config[, flow]])
CASES: dict[str, tuple] = {
    # sizes, integer and fractional scale factors (non-square), downsampling, exact .5 source positions
    "upsample_nearest": ("""
class M(torch.nn.Module):
    def forward(self, x, i):
        return (F.interpolate(x, scale_factor=2, mode="nearest"), F.interpolate(x, size=(7, 4), mode="nearest"),
                F.interpolate(x, scale_factor=(1.5, 3.0), mode="nearest"), F.interpolate(x, scale_factor=0.5, mode="nearest"),
                F.interpolate(x, size=(3, 10), mode="nearest"), F.interpolate(i, scale_factor=(2.0, 1.0), mode="nearest"),
                F.interpolate(x, scale_factor=(1.7, 2.3), mode="nearest"))
""", [((2, 3, 5, 6), F, "n"), ((1, 2, 3, 4), U8, "i")]),
    "upsample_bilinear": ("""
class M(torch.nn.Module):
    def forward(self, x):
        return (F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False),
                F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True),
                F.interpolate(x, size=(9, 4), mode="bilinear", align_corners=False),
                F.interpolate(x, size=(9, 4), mode="bilinear", align_corners=True),
                F.interpolate(x, scale_factor=(1.5, 2.5), mode="bilinear", align_corners=False),
                F.interpolate(x, scale_factor=0.5, mode="bilinear", align_corners=False),
                F.interpolate(x, size=(1, 1), mode="bilinear", align_corners=True),
                F.interpolate(x, scale_factor=(1.7, 2.3), mode="bilinear", align_corners=False),
                F.interpolate(x, scale_factor=(1.7, 0.7), mode="bilinear", align_corners=True))
""", [((2, 3, 5, 6), F, "n")]),
    "upsample_channels_last": ("""
class M(torch.nn.Module):
    def forward(self, x):
        return (F.interpolate(x, scale_factor=2, mode="nearest") * 1.0,
                F.interpolate(x, size=(7, 5), mode="bilinear", align_corners=False) * 1.0,
                F.interpolate(x, size=(7, 5), mode="bilinear", align_corners=True) * 1.0)
""", [((1, 4, 5, 6), F, "cl")]),
    # channels_last inputs (the portable kernels refuse some of these: then eager torch is the reference)
    "dim_order_cl": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.g = torch.nn.GroupNorm(2, 4)
        with torch.no_grad():
            self.g.weight.uniform_(0.5, 1.5); self.g.bias.uniform_(-1, 1)
    def forward(self, x):
        return (self.g(x) * 1.0, F.pixel_shuffle(x, 2) * 1.0, F.pixel_unshuffle(x, 2) * 1.0, F.elu(x) * 1.0,
                torch.var(x, dim=1, keepdim=True) * 1.0, F.glu(x, dim=1) * 1.0)
""", [((2, 4, 4, 6), F, "cl")], {"preserve_ops": ["aten.glu.default", "aten.pixel_shuffle.default",
                                                   "aten.pixel_unshuffle.default"]}),
    # a small segmentation-style head quantized (pt2e; cortex_m): the new kernels between int8 layers
    "seg_pt2e": (SEG, [((1, 3, 8, 8), F, "n")], None, "pt2e"),
    # (without the pixel_shuffle: its view/permute decomposition on the flow's channels_last tensors
    # makes the program itself compute another function than the module, see SEG_CM)
    "seg_cortex_m": (SEG_CM, [((1, 3, 8, 8), F, "n")], None, "cortex_m"),
    # quantize after a bilinear blend of dequantized values: z / scale sits on .5 often, so the
    # reference must blend exactly like the portable kernel (ATen's blend is one ulp off at times)
    "bilinear_requant_cortex_m": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(4, 4, 1)
        self.b = torch.nn.Conv2d(4, 4, 1)
        self.c = torch.nn.Conv2d(4, 4, 1)
    def forward(self, x):
        y = self.a(x)
        return (self.b(F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False)),
                self.c(F.interpolate(y, size=(11, 5), mode="bilinear", align_corners=True)))
""", [((1, 4, 6, 6), F, "n")], None, "cortex_m"),
    "pixel_shuffle": ("""
class M(torch.nn.Module):
    def forward(self, x, y, z):
        return (F.pixel_shuffle(x, 2), F.pixel_unshuffle(y, 2), F.pixel_shuffle(z, 3),
                F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2), F.pixel_shuffle(x.to(torch.int32), 2))
""", [((2, 8, 3, 5), F, "n"), ((1, 3, 4, 6), F, "n"), ((2, 2, 9, 2, 3), F, "n")]),
    # negative dims, several dims, keepdim, correction 0 / 1 / 2, the whole tensor
    "var_stats": ("""
class M(torch.nn.Module):
    def forward(self, x):
        return (torch.var(x, dim=1), torch.var(x, dim=(-1, -2), keepdim=True, correction=0), torch.var(x),
                torch.var(x, unbiased=False), torch.var(x * 100.0 + 1000.0, dim=-1), torch.var(x[:, :1], dim=1),
                torch.var(x, dim=0, correction=3), torch.var(x, dim=-1, correction=1.5))
""", [((3, 4, 5), F, "n")]),
    "group_norm": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.GroupNorm(2, 6)
        self.b = torch.nn.GroupNorm(3, 6, affine=False, eps=1e-3)
        self.c = torch.nn.GroupNorm(1, 6)
        with torch.no_grad():
            self.a.weight.uniform_(0.5, 1.5); self.a.bias.uniform_(-1, 1)
    def forward(self, x, y):
        return self.a(x), self.b(x * 3 + 1), self.c(x), self.a(y), F.group_norm(y, 6)
""", [((2, 6, 4, 5), F, "n"), ((2, 6, 7), F, "n")]),
    "glu_elu_baddbmm": ("""
class M(torch.nn.Module):
    def forward(self, x, a, b, c):
        return (F.glu(x), F.glu(x, dim=1), F.glu(x, dim=-3), F.elu(x), F.elu(x, alpha=0.5), F.selu(x),
                F.celu(x, alpha=2.0), torch.baddbmm(c, a, b), torch.baddbmm(c[0], a, b, beta=0.5, alpha=2.0),
                torch.baddbmm(c[:, :1], a, b, beta=0.0), torch.log10(x), torch.log10(x.abs() * 1e3),
                torch.log10(x * 0.0), torch.log10((x > 0).to(torch.int32) * 100))
""", [((2, 4, 6), F, "n"), ((2, 3, 5), F, "n"), ((2, 5, 4), F, "n"), ((2, 3, 4), F, "n")]),
    # bool and integer tensors, Tensor and Scalar forms, broadcasting
    "bitwise": ("""
class M(torch.nn.Module):
    def forward(self, p, q, i, j, k, u, c):
        return (p & q, p | q, p ^ q, ~p, i & j, i | j, i ^ j, ~i, i & 12, i | 3, i ^ -1, p & True, p ^ True,
                k & 5, ~k, j[0] | i, k ^ 7, ~u, u ^ 200, u | 129, ~c, c & -3,
                c ^ k[:1].to(torch.int8), p & i, k | p[0, :4])
""", [((3, 5), B, "b50"), ((3, 5), B, "b50"), ((3, 5), I64, "s"), ((3, 5), I64, "s"), ((4,), I32, "s"),
      ((6,), U8, "i"), ((4,), "int8", "s")]),
    # masks broadcasting to self, float / int / bool self, where with scalar self / other
    "masked_where": ("""
class M(torch.nn.Module):
    def forward(self, x, m, r, i, u):
        return (x.masked_fill(m, -1.5), x.masked_fill(r, float("-inf")), i.masked_fill(m, 7),
                m.masked_fill(r, True), torch.where(m, x, 0.0), torch.where(m, 2.5, x), torch.where(r, x, x * 2),
                torch.where(m, i, -3), torch.where(x > 0, x, torch.zeros_like(x)), u.masked_fill(r[0], 255),
                torch.where(r, u, 7), torch.where(m[0], 1, 0), torch.where(x < 0, -x, x.to(torch.int32)))
""", [((3, 5), F, "n"), ((3, 5), B, "b50"), ((1, 5), B, "b50"), ((3, 5), I64, "s"), ((5,), U8, "i")]),
    # the default export decomposes glu, pixel_(un)shuffle and masked_fill (cases above); a program
    # that keeps them (preserve_ops) calls the kernels themselves
    # (var_mean is not core ATen: it reaches a program only when the export keeps it, as here)
    "preserved": ("""
class M(torch.nn.Module):
    def forward(self, x, m, i, y, z):
        v, mu = torch.var_mean(z, dim=-1, correction=2)
        v2, mu2 = torch.var_mean(z, dim=(0, 2), keepdim=True)
        v3, mu3 = torch.var_mean(z)
        return (F.glu(x), F.glu(x, dim=-2), F.pixel_shuffle(y, 2), F.pixel_unshuffle(y, 2),
                F.pixel_shuffle(y.to(torch.int64), 2), x.masked_fill(m, -2.5), i.masked_fill(m[0], 9),
                m.masked_fill(m[:, :1], False), v, mu, v2, mu2, v3, mu3)
""", [((4, 6), F, "n"), ((4, 6), B, "b50"), ((2, 4, 6), I64, "s"), ((1, 4, 4, 6), F, "n"), ((3, 4, 5), F, "n")],
        {"preserve_ops": ["aten.glu.default", "aten.pixel_shuffle.default", "aten.pixel_unshuffle.default",
                          "aten.masked_fill.Scalar"],
         "_core_aten_ops_exception_list": ["aten.var_mean.correction"]}),
    # transposed convolutions (decoders, UNets; found by a torchvision/real-network sweep): stride,
    # padding, output padding, groups, dilation, no bias, 1-d
    "conv_transposed": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a = torch.nn.ConvTranspose2d(4, 6, 2, 2)
        self.b = torch.nn.ConvTranspose2d(4, 6, 3, 2, padding=1, output_padding=1, groups=2, bias=False)
        self.c = torch.nn.ConvTranspose2d(4, 2, (3, 2), (1, 2), padding=(2, 0), dilation=(2, 1))
        self.d = torch.nn.ConvTranspose1d(4, 3, 4, 3, padding=1)
    def forward(self, x):
        return self.a(x), self.b(x), self.c(x), self.d(x[:, :, 0])
""", [((2, 4, 5, 6), F, "n")]),
    # where PyTorch and executorch 1.5.1's portable kernels disagree or the latter have no kernel, the
    # reference is eager torch: a scale factor that leaves a dim's size unchanged maps that dim's
    # indices to themselves in PyTorch (the portable kernels apply 1/scale there); baddbmm (kept)
    "eager_reference": ("""
class M(torch.nn.Module):
    def forward(self, x, a, b, c):
        return (F.interpolate(x, scale_factor=(0.7, 1.1), mode="nearest"),
                F.interpolate(x, scale_factor=(1.5, 1.1), mode="bilinear", align_corners=False),
                F.interpolate(x, scale_factor=(1.5, 1.1), mode="bilinear", align_corners=True),
                torch.baddbmm(c, a, b), torch.baddbmm(c[0], a, b, beta=0.5, alpha=2.0),
                torch.baddbmm(c[:, :1], a, b, beta=0.0), torch.baddbmm(c[0, 0], a, b, alpha=-1))
""", [((1, 2, 5, 6), F, "n"), ((2, 3, 5), F, "n"), ((2, 5, 4), F, "n"), ((2, 3, 4), F, "n")],
        {"preserve_ops": ["aten.baddbmm.default"], "eager_reference": True}),
}


def _dir(name: str) -> Path:
    src, specs, *rest = CASES[name]
    edge = rest[0] if rest else None
    flow = rest[1] if len(rest) > 1 else "portable"
    return kernelcase.case_dir(CACHE, name, src, specs, flow=flow, edge=edge)


@pytest.mark.build
@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_case(name):
    from support.hostrun import run_host
    d = _dir(name)
    ours, ref = run_host(d / "m.bpte"), kernelcase.reference(d)
    _check(ours, ref, name)
    if name in BIT_EXACT:
        for k, (o, r) in enumerate(zip(ours, ref)):
            bad = int((np.asarray(o).reshape(r.shape) != r).sum())
            assert bad == 0, f"{name}[{k}]: {bad} values differ from the reference (bit-exact expected)"


# the same arithmetic as the reference, step for step (the portable kernel's bilinear blend and
# source step (float)(1.0 / scale); cortex_m int8 after a blend, where one ulp flips a quantum)
BIT_EXACT = {"upsample_bilinear", "seg_cortex_m", "bilinear_requant_cortex_m"}


def _check(ours, ref, name):
    """assert_close, with NaN and infinities required exactly where the reference has them"""
    assert len(ours) == len(ref), f"{name}: {len(ours)} outputs, reference has {len(ref)}"
    finite_o, finite_r = [], []
    for k, (o, r) in enumerate(zip(ours, ref)):
        o = np.asarray(o)
        if r.shape == () and o.shape == (1,):  # 0-d outputs: the host link may deliver them as [1]
            o = o.reshape(())
        assert o.dtype == r.dtype and o.shape == r.shape, f"{name}[{k}]: {o.dtype}{o.shape} != {r.dtype}{r.shape}"
        if r.dtype.kind == "f":  # NaN and infinities exactly where the reference has them
            special = ~np.isfinite(r)
            assert np.array_equal(special, ~np.isfinite(o)), f"{name}[{k}]: non-finite positions differ"
            assert np.array_equal(np.nan_to_num(o[special]), np.nan_to_num(r[special])), f"{name}[{k}]: infinities differ"
            o, r = np.where(special, 0, o), np.where(special, 0, r)
        finite_o.append(o)
        finite_r.append(r)
    assert_close(finite_o, finite_r, name)


REQUIRED_OPS = {
    "aten::upsample_nearest2d.vec_out", "aten::upsample_bilinear2d.vec_out", "aten::pixel_shuffle.out",
    "aten::pixel_unshuffle.out", "aten::var.correction_out", "aten::var_mean.correction_out",
    "aten::native_group_norm.out", "aten::glu.out", "aten::elu.out", "aten::bitwise_and.Tensor_out",
    "aten::bitwise_or.Tensor_out", "aten::bitwise_xor.Tensor_out", "aten::bitwise_not.out",
    "aten::bitwise_and.Scalar_out", "aten::bitwise_or.Scalar_out", "aten::bitwise_xor.Scalar_out",
    "aten::masked_fill.Scalar_out", "aten::where.self_out", "aten::scalar_tensor.out", "aten::baddbmm.out",
    "aten::log10.out",
}


@pytest.mark.build
def test_cases_cover_the_ops():
    suite.assert_cover(REQUIRED_OPS, [_dir(name) for name in CASES])


TARGETS = {
    "host": ["gcc", "-O2"],
    "cortex-m55": ["arm-none-eabi-gcc", "-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-O2"],
    "cortex-m4": ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-O2"],
    "cortex-m33": ["arm-none-eabi-gcc", "-mcpu=cortex-m33", "-mthumb", "-mfloat-abi=hard", "-Os"],
    "lx106": ["xtensa-lx106-elf-gcc", "-ffreestanding", "-Os"],
    "aarch64": ["aarch64-linux-gnu-gcc", "-O2"],
}
MY_FILES = ["resample.c", "stats.c", "bitwise.c", "seq.c"]
LIBM = {"expf", "sqrtf", "logf", "exp", "sqrt", "floorf", "roundf", "lrintf", "expm1f", "floor", "fmodf"}


@pytest.mark.build
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_cross_compile_clean(target, tmp_path):
    from support.crosscc import compile_clean
    cc = TARGETS[target]
    compile_clean(target, cc, MY_FILES, tmp_path, conversion=True, warn_free=True, libm=LIBM.__contains__)


# kernels called directly with bad arguments: name -> (status, err_detail); 0 ok, 3 out of memory,
# 6 invalid argument; err_detail names the offending argument
BAD_ARGS = {
    "nearest_ok": (0, 0), "nearest_scale_ok": (0, 0), "nearest_neither": (6, 2), "nearest_both": (6, 1),
    "nearest_rank3": (6, 0), "nearest_neg_size": (6, 1), "nearest_huge_scale": (6, 2), "nearest_neg_scale": (6, 2),
    "nearest_dtype": (6, 3), "bilinear_ok": (0, 0), "bilinear_align_int": (6, 2), "bilinear_int": (6, 0),
    "nearest_over_capacity": (3, 3), "nearest_static_shape": (6, 3),
    "shuffle_ok": (0, 0), "shuffle_indivisible": (6, 1), "shuffle_zero": (6, 1), "shuffle_rank2": (6, 0),
    "unshuffle_indivisible": (6, 1),
    "var_ok": (0, 0), "var_dup_dims": (6, 1), "var_bad_dim": (6, 1), "var_int_input": (6, 0),
    "var_string_correction": (6, 2),
    "group_norm_ok": (0, 0), "group_norm_groups": (6, 6), "group_norm_hw": (6, 5), "group_norm_channels": (6, 3),
    "group_norm_weight": (6, 1),
    "glu_ok": (0, 0), "glu_odd": (6, 1), "glu_bad_dim": (6, 1), "elu_string_alpha": (6, 1),
    "bitwise_ok": (0, 0), "bitwise_float": (6, 0), "bitwise_scalar_double": (6, 1), "bitwise_float_out": (6, 2),
    "masked_fill_ok": (0, 0), "masked_fill_float_mask": (6, 1), "masked_fill_mask_grows": (6, 1),
    "masked_fill_tensor_value": (6, 2),
    "baddbmm_ok": (0, 0), "baddbmm_inner": (6, 2), "baddbmm_self": (6, 0), "baddbmm_rank": (6, 1),
    "scalar_tensor_ok": (0, 0), "scalar_tensor_string": (6, 0), "scalar_tensor_double_to_long": (0, 0),
    "few_args": (6, 0),
}


@pytest.mark.build
def test_bad_arguments(tmp_path):
    """Under ASan/UBSan: every bad argument is refused with its status and argument index, nothing
    read or written out of bounds."""
    need = shutil.which("gcc") or pytest.skip("gcc not installed")
    exe = tmp_path / "drv"
    srcs = [str(KDIR / f) for f in MY_FILES + ["assign.c", "kernel_util.c", "etmath.c"]] + \
           [str(ROOT / "firmware" / "runtime" / f) for f in ("et_tensor.c", "et_numfmt.c")]   # scalar_tensor lives in assign.c (opsa)
    p = subprocess.run([need, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-fsanitize=address,undefined",
                        "-fno-sanitize-recover=undefined", f"-I{KDIR}", f"-I{ROOT / 'firmware' / 'runtime'}",
                        str(ROOT / "tests" / "support" / "kernels_d_errors.c"), *srcs, "-o", str(exe)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    got = {w[0]: (int(w[1]), int(w[2])) for w in (line.split() for line in run.stdout.splitlines())}
    assert got == BAD_ARGS


@pytest.mark.emu
def test_cases_on_corstone300():
    """All cases in one image on the Cortex-M55 (QEMU mps3-an547): the cross-compiled kernels'
    outputs against the same references as on the host."""
    kernelcase.run_cases_on_board("corstone300", CASES, _dir, "rtol=1e-4", "atol=1e-4",
                                  check=lambda name, ours, ref, what: _check(ours, ref, what))
