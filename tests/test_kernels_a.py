"""Portable kernels A (binary, unary, activation, softmax, reduce, shape, copy) against the real
executorch runtime: tiny torch modules exported once (cached under .cache/kernels_a, keyed by the
module source, the reference code and the package versions), bundled with their inputs into a .bpte,
run on the host build of our runtime, and compared with the oracle's outputs (etmath against numpy: test_etmath.py)."""
from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from support import kernelcase, suite
from support.compare import assert_close

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "kernels_a"
KDIR = ROOT / "firmware" / "kernels"

# name -> (forward body with inputs a, b, c..., input specs (shape, dtype, kind))
# kinds: "n" normal floats, "p" positive floats, "i" ints in [-9, 9], "b" bools, "s" small ints [1, 4]
F, I32, I64, B = "float32", "int32", "int64", "bool"
CASES: dict[str, tuple[str, list]] = {
    "arith_bcast": ("return a + b, a - b, a * b, a / b, torch.add(a, b, alpha=2), torch.sub(a, b, alpha=0.5)",
                    [((2, 3, 4), F, "n"), ((3, 1), F, "p")]),
    "arith_same": ("return a + b, a - b, a * b, a / b", [((4, 8), F, "n"), ((4, 8), F, "p")]),
    "arith_scalar": ("return a + 2.5, a - 1, a * 3, a / 3, 2 - a, 1.5 - a", [((3, 5), F, "n")]),
    "arith_int": ("return a + b, a * 2, a - b, a / 2, a * b, b + 1",
                  [((2, 6), I32, "i"), ((2, 6), I64, "i")]),
    "arith_mixed": ("return a + b, b * a, a - b", [((2, 6), I32, "i"), ((6,), F, "n")]),
    "div_modes": ("return (torch.div(a, b, rounding_mode='floor'), torch.div(a, b, rounding_mode='trunc'),"
                  " torch.div(c, d, rounding_mode='floor'), torch.div(c, d, rounding_mode='trunc'),"
                  " torch.div(c, 3, rounding_mode='floor'))",
                  [((3, 4), F, "n"), ((3, 4), F, "p"), ((3, 4), I64, "i"), ((3, 4), I64, "s")]),
    "compare": ("return a < b, a <= 0.5, a == b, a != 1, a > b, a >= b, a > 0, a == 0, a != b, a <= b, a >= 0.25, a < 0",
                [((2, 3, 4), F, "n"), ((4,), F, "n")]),
    "compare_int": ("return a < b, a == 3, a > 2.5, a >= b, b != a", [((3, 4), I32, "i"), ((3, 4), I64, "i")]),
    "logical_where": ("return torch.logical_not(a > 0), torch.where(a > 0, a, b), torch.where(c, a, 0.5 * a), torch.logical_not(c)",
                      [((2, 5), F, "n"), ((5,), F, "n"), ((2, 5), B, "b")]),
    "activations": ("return (F.relu(a), F.hardtanh(a), F.hardtanh(a, -0.5, 2.0), torch.sigmoid(a), torch.tanh(a),"
                    " F.gelu(a), F.gelu(a, approximate='tanh'), F.hardswish(a), F.hardsigmoid(a))",
                    [((4, 16), F, "w")]),
    "clamps": ("return a.clamp(-0.5, 0.5), a.clamp(min=0.1), a.clamp(max=-0.2), a.clamp(b, b + 1), c.clamp(-2, 3)",
               [((3, 4), F, "n"), ((4,), F, "n"), ((3, 4), I32, "i")]),
    "neg_abs": ("return -a, a.abs(), -c, c.abs()", [((3, 4), F, "n"), ((1,), F, "n"), ((3, 4), I64, "i")]),
    "softmax": ("return F.softmax(a, -1), F.log_softmax(a, 1), F.softmax(a, 0), F.log_softmax(a * 20, -1)",
                [((3, 5, 7), F, "n")]),
    "reduce": ("return a.mean(-1), a.mean((0, 2), keepdim=True), a.sum(1), a.amax(-1), a.sum(), a.amax((0, 1), keepdim=True), c.sum(0)",
               [((2, 3, 40), F, "n"), ((1,), F, "n"), ((4, 3), I32, "i")]),
    "permute_view": ("return a.permute(2, 0, 1) * 1.0, (a * 2).view(6, 4), (a + 1).reshape(-1, 3), a.transpose(0, 1) * 1.0",
                     [((2, 3, 4), F, "n")]),
    "squeeze": ("return a[:, :1].squeeze(1) * 2, (a * 1).unsqueeze(0) * 1, (a * 1).unsqueeze(-1) * 1, a[:1].squeeze() * 1",
                [((2, 3, 4), F, "n")]),
    "expand_slice": ("return (a[:, :, :1].expand(2, 3, 5) * 1, a[:, 1:3] * 1, a[..., ::2] * 1, a[:, -2:] * 1,"
                     " a[:, 1] * 1, a[:, :, -1] * 1, b.expand(2, 3, 4) * 1)",
                     [((2, 3, 4), F, "n"), ((3, 1), F, "n")]),
    "cat_split": ("x, y, z = a.split([1, 2, 1], 1); return torch.cat([a, b], 1), torch.cat([a, a], -1), x * 1, y * 1, z * 1, torch.cat([b, a, b], 1)",
                  [((2, 4, 3), F, "n"), ((2, 1, 3), F, "n")]),
    "pad": ("return F.pad(a, (1, 2)), F.pad(a, (0, 1, 2, 0), value=1.5)",
            [((2, 3, 4), F, "n")]),
    "copies": ("return a.clone(), a.to(torch.int32), a.permute(0, 2, 1).contiguous(), c.to(torch.float32), (a > 0).to(torch.float32)",
               [((2, 3, 4), F, "n"), ((1,), F, "n"), ((2, 3), I64, "i")]),
    "channels_last": ("x = (a * 2).to(memory_format=torch.channels_last); return x.contiguous() + 1",
                      [((1, 2, 3, 4), F, "n")]),
    "fills": ("return torch.full((3, 4), 1.5) + a, torch.zeros_like(a) + 1, torch.ones_like(a) * a, torch.full_like(a, 2.0) + a",
              [((3, 4), F, "n")]),
    "small_ints": ("return (a + b, a * 3, c * a, torch.where(a > 0, a, c), a.amax(-1), b.sum(-1), -a, a.abs(),"
                   " torch.div(a, 2, rounding_mode='floor'), a.to(torch.float32) / 4, b > a, c.clamp(-3, 3))",
                   [((3, 5), "int8", "i"), ((3, 5), "uint8", "u"), ((3, 5), "int16", "i")]),
    "bools": ("return torch.logical_and(p, q), torch.logical_or(p, q), p.sum(), p.to(torch.float32) * 2, torch.where(p, a, -a), p == q",
              [((2, 7), B, "b"), ((2, 7), B, "b"), ((2, 7), F, "n")]),
    "float_special": ("return a / b, torch.div(a, b, rounding_mode='floor'), torch.div(a, b, rounding_mode='trunc'), a * 1e30 * 1e10, torch.sigmoid(a * 1e3), torch.tanh(a * 1e3),"
                      " F.relu(a / b)",
                      [((4, 5), F, "z"), ((4, 5), F, "z")]),
    "half": ("h = a.to(torch.float16); return (h * 2 + h).to(torch.float32), h.to(torch.float32), (a.to(torch.bfloat16) * 3).to(torch.float32)",
             [((3, 4), F, "n")]),
}

HEADER = "import torch\nimport torch.nn.functional as F\n"


def _argnames(name: str) -> list[str]:
    body, specs = CASES[name]
    if name == "bools":
        return ["p", "q", "a"]
    return ["abcdefg"[i] for i in range(len(specs))]


def _source(name: str) -> str:
    body, specs = CASES[name]
    args = ", ".join(_argnames(name))
    stmts = "\n".join("        " + s.strip() for s in body.split(";"))
    return HEADER + f"class M(torch.nn.Module):\n    def forward(self, {args}):\n{stmts}\n"


def _inputs(name: str) -> list[np.ndarray]:
    _, specs = CASES[name]
    rng = np.random.default_rng(int(hashlib.sha256(name.encode()).hexdigest()[:8], 16))
    out = []
    for shape, dt, kind in specs:
        if kind == "n":
            a = rng.standard_normal(shape)
        elif kind == "w":
            a = rng.uniform(-6, 6, shape)
        elif kind == "p":
            a = rng.uniform(0.5, 2.0, shape) * rng.choice([-1, 1], shape)
        elif kind == "i":
            a = rng.integers(-9, 10, shape)
        elif kind == "u":
            a = rng.integers(0, 256, shape)
        elif kind == "z":
            a = rng.integers(-2, 3, shape).astype(np.float64)
        elif kind == "s":
            a = rng.integers(1, 5, shape) * rng.choice([-1, 1], shape)
        else:
            a = rng.integers(0, 2, shape).astype(bool)
        out.append(np.asarray(a).astype(dt))
    return out


def _key(name: str) -> str:
    from support.export_key import content_key
    return content_key(_source(name), json.dumps(CASES[name][1]))


def _export(name: str) -> Path:
    """-> dir with model.pte, model.bpte (inputs + reference outputs), ref.npz, ops.json"""
    d = CACHE / f"{name}-{_key(name)}"
    if (d / "ops.json").exists():
        return d
    import torch
    from executorch.exir import to_edge_transform_and_lower
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.core import BundledProgram
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer
    from etdeploy import oracle
    ns: dict = {}
    exec(compile(_source(name), f"<kernels_a:{name}>", "exec"), ns)
    inputs = _inputs(name)
    ex = tuple(torch.from_numpy(a.copy()) for a in inputs)
    prog = to_edge_transform_and_lower(torch.export.export(ns["M"]().eval(), ex)).to_executorch()
    d.mkdir(parents=True, exist_ok=True)
    pte = d / "model.pte"
    pte.write_bytes(prog.buffer)
    ref = oracle.run_reference(pte, inputs)
    bp = BundledProgram(prog, [MethodTestSuite("forward", [MethodTestCase(
        inputs=list(ex), expected_outputs=[torch.from_numpy(np.ascontiguousarray(r)) for r in ref])])])
    (d / "model.bpte").write_bytes(serialize_from_bundled_program_to_flatbuffer(bp))
    np.savez(d / "ref.npz", *ref)
    ops = [f"{o.name}.{o.overload}" for o in prog.executorch_program.execution_plan[0].operators]
    (d / "ops.json").write_text(json.dumps(ops))
    return d


def _compare(ours, ref, what):
    assert_close(ours, ref, what, scale_floor=1.0)   # 1e-5 of max(1, |ref|)


def _run_ours(bpte: Path) -> list[np.ndarray]:
    """Outputs of our host build for the bundled case. The bundle's own check (atol/rtol 1e-5) may
    call a float rounding difference a mismatch: the outputs are judged here, with the tolerance above."""
    from support.hostrun import run_host
    from etdeploy import errors
    try:
        return run_host(bpte)
    except errors.RunMismatch as e:
        res = e.result
        outs = [o for o in res.outputs if o.method == 0]
        last = outs[-1].case if outs else None
        return [o.value for o in sorted((o for o in outs if o.case == last), key=lambda o: o.index)]


@pytest.mark.build
@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_case(name):
    d = _export(name)
    ref_npz = np.load(d / "ref.npz")
    ref = [ref_npz[f"arr_{i}"] for i in range(len(ref_npz.files))]
    _compare(_run_ours(d / "model.bpte"), ref, name)


REQUIRED_OPS = suite.REQUIRED_OPS["test_kernels_a"]


@pytest.mark.build
def test_cases_cover_the_ops():
    suite.assert_cover(REQUIRED_OPS, [_export(name) for name in CASES])


TARGETS = {
    "cortex-m55": ["arm-none-eabi-gcc", "-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-Os"],
    "cortex-m4": ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-Os"],
    "lx106": ["xtensa-lx106-elf-gcc", "-ffreestanding", "-Os"],
}
MY_FILES = ["kernel_util.c", "etmath.c", "binary.c", "unary.c", "activation.c", "softmax.c", "reduce.c",
            "shape.c", "copy.c"]


@pytest.mark.build
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_cross_compile_clean(target, tmp_path):
    from support.crosscc import compile_clean
    cc = TARGETS[target]
    compile_clean(target, cc, MY_FILES, tmp_path, nm=target == "lx106")


# ---------------- kernels called directly (ops exports never emit, helpers, errors) ----------------
UNIT_DRIVER = r"""
#include <stdio.h>
#include <string.h>
#include "et_kernel.h"
#include "etmath.h"
#define K(fn) et_status fn(et_kctx *ctx, et_value *const *args, uint32_t nargs);
K(k_aten_add_scalar_out) K(k_aten_sub_scalar_out) K(k_aten_mul_scalar_out) K(k_aten_div_scalar_out)
K(k_aten_rsub_scalar_out) K(k_aten_div_scalar_mode_out) K(k_aten_eq_scalar_out) K(k_aten_add_out)
K(k_aten_relu_out) K(k_aten_minimum_out) K(k_aten_remainder_s_out) K(k_aten_pow_ts_out)
K(k_aten_ones_out) K(k_aten_zeros_like_out)

static int32_t xs_sizes[1] = {6}, os_sizes[1] = {6};
static float xf[6] = {1.0f, -2.0f, 3.5f, -0.25f, 0.0f, 7.0f};
static int64_t xi[6] = {1, -2, 3, -7, 0, 9};
static float of[6]; static int64_t oi[6]; static uint8_t ob[6];
static et_tensor X = {xf, xs_sizes, 0, 24, ET_FLOAT, 1, 0, 0};
static et_tensor XI = {xi, xs_sizes, 0, 48, ET_LONG, 1, 0, 0};
static et_tensor OF = {of, os_sizes, 0, 24, ET_FLOAT, 1, 0, 0};
static et_tensor OI = {oi, os_sizes, 0, 48, ET_LONG, 1, 0, 0};
static et_tensor OB = {ob, os_sizes, 0, 6, ET_BOOL, 1, 0, 0};

static et_value T(et_tensor *t) { et_value v; memset(&v, 0, sizeof v); v.tag = ET_TAG_TENSOR; v.u.t = t; return v; }
static et_value D(float f) { et_value v; memset(&v, 0, sizeof v); v.tag = ET_TAG_DOUBLE; v.u.dbits = et_float_to_double_bits(f); return v; }
static et_value I(int64_t i) { et_value v; memset(&v, 0, sizeof v); v.tag = ET_TAG_INT; v.u.i = i; return v; }
static et_value S(const et_string *s) { et_value v; memset(&v, 0, sizeof v); v.tag = ET_TAG_STRING; v.u.str = s; return v; }
static et_value N(void) { et_value v; memset(&v, 0, sizeof v); return v; }

static void dump(const char *name, et_status st, et_tensor *o) {
  printf("%s %d", name, (int)st);
  for (int i = 0; i < 6; i++) {
    if (o->dtype == ET_FLOAT) printf(" %.9g", (double)((float *)o->data)[i]);
    else printf(" %lld", (long long)et_load_i(o, i));
  }
  printf("\n");
}
#define CALL(name, fn, out, ...) do { et_value a_[] = {__VA_ARGS__}; et_value *p_[16]; uint32_t n_ = sizeof a_ / sizeof a_[0]; \
  for (uint32_t k = 0; k < n_; k++) p_[k] = &a_[k]; et_kctx c_ = {0, 0, 0}; dump(name, fn(&c_, p_, n_), out); } while (0)

int main(void) {
  static const et_string floor_s = {"floor", 5}, bad_s = {"round", 5};
  CALL("add_s", k_aten_add_scalar_out, &OF, T(&X), D(2.5f), I(2), T(&OF), T(&OF));
  CALL("sub_s", k_aten_sub_scalar_out, &OF, T(&X), I(3), D(0.5f), T(&OF), T(&OF));
  CALL("mul_s", k_aten_mul_scalar_out, &OF, T(&X), D(-1.5f), T(&OF), T(&OF));
  CALL("div_s", k_aten_div_scalar_out, &OF, T(&X), I(4), T(&OF), T(&OF));
  CALL("rsub_s", k_aten_rsub_scalar_out, &OF, T(&X), D(1.0f), I(3), T(&OF), T(&OF));
  CALL("divfloor_s", k_aten_div_scalar_mode_out, &OI, T(&XI), I(2), S(&floor_s), T(&OI), T(&OI));
  CALL("divbad_s", k_aten_div_scalar_mode_out, &OI, T(&XI), I(2), S(&bad_s), T(&OI), T(&OI));
  CALL("eq_s", k_aten_eq_scalar_out, &OB, T(&X), D(3.5f), T(&OB), T(&OB));
  CALL("int_add_float_s", k_aten_add_scalar_out, &OF, T(&XI), D(0.5f), I(1), T(&OF), T(&OF));
  CALL("int_mul_s", k_aten_mul_scalar_out, &OI, T(&XI), I(-3), T(&OI), T(&OI));
  CALL("rem_s", k_aten_remainder_s_out, &OI, T(&XI), I(4), T(&OI), T(&OI));
  CALL("pow_s", k_aten_pow_ts_out, &OF, T(&X), I(2), T(&OF), T(&OF));
  CALL("min", k_aten_minimum_out, &OF, T(&X), T(&OF), T(&OF), T(&OF));
  CALL("zeros_like", k_aten_zeros_like_out, &OI, T(&XI), N(), T(&OI), T(&OI));
  /* errors: too few args, wrong kinds, static out of another shape, out of capacity */
  CALL("few_args", k_aten_add_out, &OF, T(&X), T(&X));
  CALL("not_tensor", k_aten_relu_out, &OF, I(3), T(&OF), T(&OF));
  int32_t big_sizes[1] = {7}; float bigf[7] = {0};
  et_tensor BIG = {bigf, big_sizes, 0, 28, ET_FLOAT, 1, 0, 0};
  CALL("static_reshape", k_aten_relu_out, &OF, T(&BIG), T(&OF), T(&OF));
  OF.dynamic = 1;
  CALL("over_capacity", k_aten_relu_out, &OF, T(&BIG), T(&OF), T(&OF));
  /* promotion table */
  static const int codes[] = {0, 1, 2, 3, 4, 5, 6, 7, 11, 15};
  for (int i = 0; i < 10; i++) for (int j = 0; j < 10; j++)
    printf("promote %d %d %u\n", codes[i], codes[j], et_promote_types((uint32_t)codes[i], (uint32_t)codes[j]));
  return 0;
}
"""

_TORCH_CODES = {0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32",
                7: "float64", 11: "bool", 15: "bfloat16"}


def test_kernels_direct(tmp_path):
    import torch
    (tmp_path / "drv.c").write_text(UNIT_DRIVER)
    exe = tmp_path / "drv"
    srcs = [str(KDIR / f) for f in MY_FILES] + [str(ROOT / "firmware" / "runtime" / f) for f in ("et_tensor.c", "et_numfmt.c")]
    p = subprocess.run(["gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-fsanitize=address,undefined",
                        "-fno-sanitize-recover=undefined", f"-I{KDIR}", f"-I{ROOT / 'firmware' / 'runtime'}",
                        str(tmp_path / "drv.c"), *srcs, "-o", str(exe)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()
    got = {}
    promote = {}
    for line in out:
        w = line.split()
        if w[0] == "promote":
            promote[(int(w[1]), int(w[2]))] = int(w[3])
        else:
            got[w[0]] = (int(w[1]), [float(v) for v in w[2:]])
    x = torch.tensor([1.0, -2.0, 3.5, -0.25, 0.0, 7.0])
    xi = torch.tensor([1, -2, 3, -7, 0, 9])
    expect = {
        "add_s": torch.add(x, 2.5, alpha=2), "sub_s": torch.sub(x, 3, alpha=0.5), "mul_s": x * -1.5,
        "div_s": x / 4, "rsub_s": torch.rsub(x, 1.0, alpha=3), "divfloor_s": torch.div(xi, 2, rounding_mode="floor"),
        "eq_s": x == 3.5, "int_add_float_s": xi + 0.5, "int_mul_s": xi * -3, "rem_s": torch.remainder(xi, 4),
        "pow_s": x ** 2, "min": x, "zeros_like": torch.zeros_like(xi),
    }
    for k, v in expect.items():
        st, vals = got[k]
        assert st == 0, f"{k}: status {st}"
        np.testing.assert_allclose(vals, v.double().numpy(), rtol=1e-6, err_msg=k)
    assert got["divbad_s"][0] == 6
    assert got["few_args"][0] == 6 and got["not_tensor"][0] == 6
    assert got["static_reshape"][0] == 6, "a static out must not change shape"
    assert got["over_capacity"][0] == 3, "a dynamic out beyond its capacity is out of memory"
    for (a, b), r in promote.items():
        want = torch.promote_types(getattr(torch, _TORCH_CODES[a]), getattr(torch, _TORCH_CODES[b]))
        assert _TORCH_CODES.get(r) and getattr(torch, _TORCH_CODES[r]) == want, f"promote({a}, {b}) = {r}, torch: {want}"


@pytest.mark.emu
def test_cases_on_corstone300():
    """All cases in one image on the Cortex-M55 (QEMU mps3-an547), where the Helium paths (strided
    copies with gather loads, ...) run: each program's outputs against the same references."""
    kernelcase.run_cases_on_board("corstone300", CASES, _export, "rtol=1e-4", "atol=1e-4", bpte="model.bpte",
                                  scale_floor=1.0)   # as _compare
