"""Kernels C (index.c, reorder.c, argreduce.c, scan.c, assign.c: the operators real torchvision
and transformer models export to) on the host build of our runtime, against the real executorch
runtime (eager torch where its kernels refuse a case: mixed dim orders, roll without dims). Each
case module groups several operators (one export each, cached by content under .cache/kernels_c).
Cases marked exact hold only copied values and indices: bit for bit, NaN included; the others
follow tests/support/compare.py; topk's tied indices are checked by what they point at. Also: the
new files cross-compile warning-free for every board's CPU and need no double or libm helpers, an
out-of-range index fails with a named error instead of reading past the tensor, and every case
runs on corstone300 and xtensa-sim under QEMU."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from support import kernelcase, suite
from support.compare import assert_close

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "kernels_c"
KDIR = ROOT / "firmware" / "kernels"
F, I64, I32, B = "float32", "int64", "int32", "bool"

# name -> (flow, module source (class M), input specs [(shape, dtype, kind)], exact, edge_config)
CASES: dict[str, tuple] = {
    # ties (first index wins), negative dims, keepdim, dim=None, int64 values, NaN and +-inf
    "argreduce": ("portable", """
class M(torch.nn.Module):
    def forward(self, x, y, z):
        mx, mxi = torch.max(x, dim=-1)
        mn, mni = torch.min(x, dim=1, keepdim=True)
        ymx, ymxi = torch.max(y, 1)
        zmn, zmni = torch.min(z, -1)
        return (torch.argmax(x, dim=1), torch.argmin(x, dim=-1, keepdim=True), torch.argmax(x),
                mx, mxi, mn, mni, torch.argmax(y, 0), ymx, ymxi, torch.min(y, dim=-2)[1],
                torch.argmax(z, -1), torch.argmin(z, 1), torch.max(z, 2)[1], zmn, zmni,
                torch.argmin(y, keepdim=True))
""", [((3, 5, 4), F, "ties"), ((4, 6), I64, "ties"), ((2, 3, 5), F, "special")], True, None),
    # max()/min() of a whole tensor, kept whole (the default decomposition makes them amax/amin)
    "whole_maxmin": ("portable", """
class M(torch.nn.Module):
    def forward(self, x, k):
        return torch.max(x), torch.min(x), torch.max(k), torch.min(k[1:])
""", [((3, 4), F, "special"), ((3, 5), I64, "ties")], True, {"preserve_ops": ["aten.max.default", "aten.min.default"]}),
    # ties, smallest, k = 1 and k = the whole dim, a middle dim, int64 values
    "topk": ("portable", """
class M(torch.nn.Module):
    def forward(self, x, y, k):
        v1, i1 = torch.topk(x, 3)
        v2, i2 = torch.topk(x, 2, dim=0, largest=False)
        v3, i3 = torch.topk(y, 6, dim=1)
        v4, i4 = torch.topk(y, 1, dim=-1, largest=False)
        v5, i5 = torch.topk(k, 4)
        return v1, i1, v2, i2, v3, i3, v4, i4, v5, i5
""", [((3, 7), F, "ties"), ((2, 6, 3), F, "n"), ((9,), I64, "ties")], True, None),
    "anyall": ("portable", """
class M(torch.nn.Module):
    def forward(self, x, b, k):
        m = x > 0.5
        return (m.any(dim=1), m.any(dim=-1, keepdim=True), torch.any(m, dim=(0, 2)), m.any(), m.all(dim=0),
                m.all(), torch.all(m, dim=(-1,), keepdim=True), b.any(-1), b.all(dim=1, keepdim=True),
                k.any(0), k.all(1), (x * 0).any(), x.any(-1), torch.any(m, dim=()), torch.any(m, dim=None))
""", [((3, 4, 5), F, "n"), ((3, 4), B, "b"), ((4, 5), I64, "ties")], True, None),
    # buffers and inputs as indices, negative ones, int32 ones, adjacent (middle) and split index dims
    "index_gather": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("a", torch.tensor([3, -1, 0, 2, 2]))
        self.register_buffer("b", torch.tensor([[1, 0], [4, -2]]))
        self.register_buffer("g", torch.randint(0, 6, (4, 5, 3)))
        self.register_buffer("s", torch.tensor([4, 0, 0, 2], dtype=torch.int32))
    def forward(self, x, j):
        return (x[self.a], x[:, self.b], x[self.a[:2], :, self.b[0]], x[:, self.b[1], self.a[1:3]],
                x[j % 4], x[:, :, j.to(torch.int32) % 6], x[self.a[:, None], self.b[0]],
                torch.gather(x, -1, self.g), torch.gather(x, 0, self.g[:2, :, :1] % 4),
                torch.index_select(x, 1, self.s), torch.index_select(x, -1, self.a[2:]))
""", [((4, 5, 6), F, "n"), ((2, 3), I64, "i")], True, None),
    "scan_reorder": ("portable", """
class M(torch.nn.Module):
    def forward(self, x, k):
        return (torch.cumsum(x, -1), torch.cumsum(x, 0), torch.cumsum(k, 1), torch.cumsum(k, dim=0, dtype=torch.float32),
                torch.flip(x, [0, -1]), torch.flip(k, [1]), torch.roll(x, 2, -1), torch.roll(x, (1, -3, 7), (0, 2, 2)),
                torch.roll(k, (5, -1), (1, 0)), x.repeat(2, 1, 3), k.repeat(2, 1, 1), x[:1].repeat(1, 1, 1, 2),
                torch.arange(7) + k, torch.arange(1.5, 4.0, 0.5) * x[0, 0, :5], torch.arange(6, 0, -2) * k[0, :3])
""", [((3, 4, 5), F, "n"), ((2, 7), I64, "ties")], False, {"preserve_ops": ["aten.roll.default"]}),
    # channels_last: as_strided_copy from flatten, and every reordering kernel reading NHWC memory.
    # executorch's kernels refuse mixed dim orders and roll without dims: eager torch is the reference.
    "channels_last": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4 * 6 * 5, 3)
    def forward(self, x):
        y = self.c(x)
        return (self.fc(torch.flatten(y, 1)), torch.flip(y, [1, 3]), torch.roll(y, 2, 2), torch.roll(y, -23), torch.cumsum(y, 1),
                torch.argmax(y, 1), torch.max(y, -1)[0], torch.topk(y, 2, dim=1)[1], y.repeat(1, 1, 2, 1),
                torch.as_strided(x, (2, 3), (5, 1), 4), torch.gather(y, 1, torch.zeros(1, 2, 6, 5, dtype=torch.long)),
                (y > 0).any(1))
""", [((1, 3, 6, 5), F, "cl")], False, {"preserve_ops": ["aten.roll.default"]}),
    # zero-size dims (a slice [3:3]), k = 0, length-1 lines
    "empty": ("portable", """
class M(torch.nn.Module):
    def forward(self, x, k):
        e = x[:, 3:3]
        ke = k[:, 2:2]
        return (torch.cumsum(e, 1), torch.flip(e, [1, 2]), e.any(1), (e > 0).all(1), torch.argmax(e, 2),
                torch.topk(x, 0, dim=1)[0], e.repeat(2, 1, 1), torch.max(e, -1)[1], x[:, :, :1].cumsum(2),
                torch.argmin(x[:, :1, :1], 2), torch.cumsum(ke, 1), ke.any(-1), torch.topk(x[:, :1], 1, dim=1)[1],
                torch.gather(x, 1, k[:, :0, None].expand(3, 0, 5)))
""", [((3, 4, 5), F, "n"), ((3, 4), I64, "small")], True, None),
    # in-place slice and select assignments (swin's shifted-window mask), scalar tensors
    "assign": ("portable", """
class M(torch.nn.Module):
    def forward(self, x, y):
        z = x.clone()
        z[:, 1:3] = y[:, :2]
        w = x.clone()
        w[:, -1] = y[:, 0, :1]
        m = torch.zeros(4, 6)
        for i, (a, b) in enumerate(((0, 2), (2, 4))):
            m[a:b, ::2] = float(i + 1)
        s = torch.scalar_tensor(2.5) + x[0, 0, 0]
        return (z, w, m + x[0, :, :6], torch.slice_scatter(x, y[:, :, :3], 2, -5, None, 2),
                torch.select_scatter(x, y[:, 0], 1, -2), s, torch.slice_scatter(x, y[:, :0], 1, 4, 2))
""", [((2, 4, 7), F, "n"), ((2, 4, 7), F, "n")], False, {"preserve_ops": ["aten.select_scatter.default"]}),
    # nn.TransformerEncoderLayer as a model has it: its fast-path checks export to any.out
    "transformer_layer": ("portable", """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.t = torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, dropout=0.0)
    def forward(self, x):
        return self.t(x)
""", [((2, 5, 8), F, "n")], False, None),
    # indices straight from the inputs: test_index_out_of_range feeds bad ones
    "index_inputs": ("portable", """
class M(torch.nn.Module):
    def forward(self, x, j, g):
        return torch.index_select(x, 0, j[0]), x[j], torch.gather(x, 1, g)
""", [((5, 4), F, "n"), ((2, 3), I64, "small"), ((5, 2), I64, "small")], True, None),
}


def _run(name):
    """The case's inputs through the plain program: its bundled expected outputs come from eager
    torch, which breaks topk's ties differently from executorch (the reference here)."""
    from support.hostrun import run_host
    case = CASES[name]
    d = kernelcase.export_case(CACHE, name, case)
    return d, run_host(d / "m.pte", inputs=kernelcase.inputs(name, case[2]))


def _scalars_as_0d(ours, ref):
    """The host link delivers 0-d outputs as [1] (see tests/test_kernels_a.py)."""
    return [np.asarray(o).reshape(()) if np.asarray(r).shape == () and np.asarray(o).shape == (1,) else np.asarray(o)
            for o, r in zip(ours, ref)]


def _exact(ours, ref, what):
    assert len(ours) == len(ref), f"{what}: {len(ours)} outputs, reference has {len(ref)}"
    for k, (o, r) in enumerate(zip(ours, ref)):
        o, r = np.asarray(o), np.asarray(r)
        assert o.shape == r.shape and o.dtype == r.dtype, f"{what}[{k}]: {o.shape} {o.dtype} vs {r.shape} {r.dtype}"
        same = np.array_equal(o, r, equal_nan=o.dtype.kind == "f")
        assert same, f"{what}[{k}] differs\nours={o}\nref={r}"


# topk outputs whose ties PyTorch leaves unordered: (values output, indices output, input, dim)
TOPK_TIES = {"topk": [(0, 1, 0, -1), (2, 3, 0, 0), (8, 9, 2, -1)]}


def _check_topk_ties(name, ours, ref, ins):
    """Values bit for bit; the indices point at those values, each at most once per line (which of
    equal values comes first is unspecified). The outputs are then dropped from the exact check."""
    drop = set()
    for vi, ii, xi, dim in TOPK_TIES.get(name, []):
        v, i, x = ours[vi], ours[ii], ins[xi]
        assert i.dtype == np.int64 and i.shape == ref[ii].shape, f"{name}[{ii}]: {i.dtype} {i.shape}"
        _exact([v], [ref[vi]], f"{name}[{vi}]")
        _exact([np.take_along_axis(x, i, dim)], [ref[vi]], f"{name}[{ii}] (values at the indices)")
        srt = np.sort(i, axis=dim)
        assert not (np.diff(srt, axis=dim) == 0).any(), f"{name}[{ii}]: an index twice in one line\n{i}"
        drop.update((vi, ii))
    keep = [k for k in range(len(ref)) if k not in drop]
    return [ours[k] for k in keep], [ref[k] for k in keep]


def _check_case(name, ours, ref, what):
    """topk's tied outputs by their own rule, the rest bit for bit (exact cases) or close"""
    ours = _scalars_as_0d(ours, ref)
    ours, ref = _check_topk_ties(name, ours, ref, kernelcase.inputs(name, CASES[name][2]))
    if CASES[name][3]:
        _exact(ours, ref, what)
    else:
        assert_close(ours, ref, what)


@pytest.mark.build
@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_case(name):
    d, ours = _run(name)
    _check_case(name, ours, kernelcase.reference(d), name)


@pytest.mark.build
@pytest.mark.parametrize("which,bad", [("index", 5), ("index", -6), ("gather", 4), ("index_select", 7)])
def test_index_out_of_range(which, bad):
    """A bad index stops the method with the kernel's named error, before any read past the tensor
    (the host build runs under AddressSanitizer, which would also catch such a read)."""
    from etdeploy import errors
    from support.hostrun import run_host
    name = "index_inputs"
    d = kernelcase.export_case(CACHE, name, CASES[name])
    x, j, g = kernelcase.inputs(name, CASES[name][2])
    _exact(run_host(d / "m.pte", inputs=[x, j, g]), kernelcase.reference(d), "valid indices")
    if which == "index":
        j = j.copy(); j[1, 2] = bad
    elif which == "gather":
        g = g.copy(); g[3, 1] = bad
    else:
        j = j.copy(); j[0, 1] = bad
    with pytest.raises(errors.RunError) as e:
        run_host(d / "m.pte", inputs=[x, j, g])
    op = {"index": "aten::index.Tensor_out", "gather": "aten::gather.out", "index_select": "aten::index_select.out"}[which]
    assert "invalid argument at method 0" in str(e.value) and f"operator {op} " in str(e.value), str(e.value)


REQUIRED_OPS = {
    "aten::as_strided_copy.out", "aten::any.out", "aten::any.dims_out", "aten::any.all_out",
    "aten::index.Tensor_out", "aten::gather.out", "aten::index_select.out", "aten::argmax.out", "aten::argmin.out",
    "aten::topk.values", "aten::cumsum.out", "aten::max.dim_max", "aten::min.dim_min", "aten::flip.out",
    "aten::roll.out", "aten::repeat.out", "aten::arange.start_out", "aten::max.unary_out", "aten::min.unary_out",
    "aten::slice_scatter.out", "aten::select_scatter.out", "aten::copy.out", "aten::scalar_tensor.out",
}


@pytest.mark.build
def test_cases_cover_the_ops():
    suite.assert_cover(REQUIRED_OPS, [kernelcase.export_case(CACHE, name, CASES[name]) for name in CASES])


# every CPU a board builds for (boards/*.toml), with the flags that make float promotion an error
TARGETS = {
    "cortex-m55": ["arm-none-eabi-gcc", "-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-O2"],
    "cortex-m85": ["arm-none-eabi-gcc", "-march=armv8.1-m.main+mve.fp+fp.dp", "-mtune=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-O2"],
    "cortex-m4": ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-O2"],
    "cortex-m33": ["arm-none-eabi-gcc", "-mcpu=cortex-m33", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16", "-O2"],
    "lx106": ["xtensa-lx106-elf-gcc", "-ffreestanding", "-Os"],
    "aarch64": ["aarch64-linux-gnu-gcc", "-O2"],
    "host": ["gcc", "-O2"],
}
MY_FILES = ["argreduce.c", "index.c", "reorder.c", "scan.c", "assign.c"]


@pytest.mark.build
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_cross_compile_clean(target, tmp_path):
    from support.crosscc import compile_clean
    cc = TARGETS[target]
    libm = ("exp", "sqrt", "log", "floor", "ceil", "round", "lrint")
    compile_clean(target, cc, MY_FILES, tmp_path, conversion=True, libm=lambda s: s.rstrip("f") in libm)


@pytest.mark.emu
@pytest.mark.parametrize("board", ["corstone300", "xtensa-sim"])
def test_cases_on_boards(board):
    """Every case in one image on the Cortex-M55 and on the Xtensa lx106 (soft float) under QEMU,
    each program's bundled case, against the same references as on the host. These kernels have no
    CPU-specific code: one 32-bit Arm and the Xtensa keep the suite cheap (about a minute each)."""
    # topk's ties may differ from eager torch's expected outputs: the comparison on the board is
    # loose, the checks here are not
    kernelcase.run_cases_on_board(board, CASES, lambda n: kernelcase.export_case(CACHE, n, CASES[n]),
                                  "rtol=1e3", "atol=1e3", check=_check_case)
