"""etmath (firmware/kernels/etmath.c: the kernels' float math, with and without the hardware
instructions) and the number-format conversions (half, bfloat16, double bits) against numpy over many
values: special values, random bit patterns, ranges; ulp bounds per function, rounding and conversions
bit for bit. Built for the host with gcc and the sanitizers."""
from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
KDIR = ROOT / "firmware" / "kernels"

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "etmath.h"
#include "et_kernel.h"
int main(int argc, char **argv) {
  (void)argc;
  FILE *f = fopen(argv[2], "rb"); fseek(f, 0, SEEK_END); long n = ftell(f) / 4; fseek(f, 0, SEEK_SET);
  float *x = malloc(n * 4 + 16); float *y = malloc(n * 8 + 16);
  if (fread(x, 4, n, f) != (size_t)n) return 2;
  fclose(f);
  const char *fn = argv[1];
  FILE *o = fopen(argv[3], "wb");
  if (!strcmp(fn, "f2h")) { uint16_t *h = (uint16_t *)y; for (long i = 0; i < n; i++) h[i] = et_float_to_half(x[i]); fwrite(h, 2, n, o); }
  else if (!strcmp(fn, "f2bf")) { uint16_t *h = (uint16_t *)y; for (long i = 0; i < n; i++) h[i] = et_float_to_bf16(x[i]); fwrite(h, 2, n, o); }
  else if (!strcmp(fn, "f2d")) { uint64_t *d = (uint64_t *)y; for (long i = 0; i < n; i++) d[i] = et_float_to_double_bits(x[i]); fwrite(d, 8, n, o); }
  else if (!strcmp(fn, "d2f")) { uint64_t *d = (uint64_t *)x; for (long i = 0; i < n / 2; i++) y[i] = et_double_bits_to_float(d[i]); fwrite(y, 4, n / 2, o); }
  else if (!strcmp(fn, "fmod")) { for (long i = 0; i < n / 2; i++) y[i] = et_fmodf(x[2 * i], x[2 * i + 1]); fwrite(y, 4, n / 2, o); }
  else {
    for (long i = 0; i < n; i++) {
      float v = x[i];
      if (!strcmp(fn, "exp")) y[i] = et_expf(v);
      else if (!strcmp(fn, "expm1")) y[i] = et_expm1f(v);
      else if (!strcmp(fn, "log")) y[i] = et_logf(v);
      else if (!strcmp(fn, "log1p")) y[i] = et_log1pf(v);
      else if (!strcmp(fn, "tanh")) y[i] = et_tanhf(v);
      else if (!strcmp(fn, "sigmoid")) y[i] = et_sigmoidf(v);
      else if (!strcmp(fn, "erf")) y[i] = et_erff(v);
      else if (!strcmp(fn, "sqrt")) y[i] = et_sqrtf(v);
      else if (!strcmp(fn, "floor")) y[i] = et_floorf(v);
      else if (!strcmp(fn, "ceil")) y[i] = et_ceilf(v);
      else if (!strcmp(fn, "trunc")) y[i] = et_truncf(v);
      else if (!strcmp(fn, "round")) y[i] = et_roundf(v);
      else return 3;
    }
    fwrite(y, 4, n, o);
  }
  fclose(o);
  return 0;
}
"""


@pytest.fixture(scope="module", params=["hw", "soft"])
def mathexe(request, tmp_path_factory):
    d = tmp_path_factory.mktemp(f"etmath_{request.param}")
    (d / "drv.c").write_text(textwrap.dedent(DRIVER))
    exe = d / "drv"
    extra = ["-DETMATH_NO_HW"] if request.param == "soft" else []
    subprocess.run(["gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-fsanitize=address,undefined",
                    "-fno-sanitize-recover=undefined", *extra, f"-I{KDIR}", f"-I{ROOT / 'firmware' / 'runtime'}",
                    str(d / "drv.c"), str(KDIR / "etmath.c"), str(KDIR / "kernel_util.c"),
                    str(ROOT / "firmware" / "runtime" / "et_tensor.c"),
                    str(ROOT / "firmware" / "runtime" / "et_numfmt.c"), "-o", str(exe)],
                   check=True, capture_output=True)

    def run(fn, x, out_dtype=np.float32):
        np.ascontiguousarray(x).tofile(d / "in.bin")
        subprocess.run([str(exe), fn, str(d / "in.bin"), str(d / "out.bin")], check=True,
                       env={"ASAN_OPTIONS": "detect_leaks=0"})
        return np.fromfile(d / "out.bin", out_dtype)
    return run


_rng = np.random.default_rng(7)
_SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1e-45, -1e-45,
                     1.1754942e-38, 3.4028235e38, -3.4028235e38, 88.72283, 88.72284, -103.97, -103.98,
                     8388607.5, 16777215.0], np.float32)
_BITS = _rng.integers(0, 2**32, 200000, dtype=np.uint64).astype(np.uint32).view(np.float32)


def _uni(lo, hi, n=100000):
    return _rng.uniform(lo, hi, n).astype(np.float32)


def _erf(x):
    import math
    return np.array([math.erf(v) if not math.isnan(v) else v for v in x.tolist()])


MATH = {  # fn: (reference on float64, inputs, max ulp)
    "exp": (np.exp, [_SPECIAL, _BITS, _uni(-104, 89), _uni(-1, 1)], 1.5),
    "expm1": (np.expm1, [_SPECIAL, _BITS, _uni(-20, 89), _uni(-1, 1), _uni(-1e-4, 1e-4)], 2.0),
    "log": (np.log, [_SPECIAL, np.abs(_BITS), _uni(0, 10), _uni(0.5, 2)], 1.5),
    "log1p": (np.log1p, [_SPECIAL, _BITS, _uni(-1, 10), _uni(-1e-3, 1e-3)], 2.0),
    "tanh": (np.tanh, [_SPECIAL, _BITS, _uni(-10, 10), _uni(-1e-2, 1e-2)], 3.0),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), [_SPECIAL, _BITS, _uni(-100, 100)], 3.0),
    "erf": (_erf, [_SPECIAL, _BITS[:20000], _uni(-5, 5, 50000)], 3.0),
    "sqrt": (np.sqrt, [_SPECIAL, _BITS, np.abs(_BITS)], 0.5),
    "floor": (np.floor, [_SPECIAL, _BITS, _uni(-100, 100)], 0.0),
    "ceil": (np.ceil, [_SPECIAL, _BITS, _uni(-100, 100)], 0.0),
    "trunc": (np.trunc, [_SPECIAL, _BITS, _uni(-100, 100)], 0.0),
    "round": (np.round, [_SPECIAL, _BITS, _uni(-100, 100), (np.arange(-200, 200) / 2).astype(np.float32)], 0.0),
}


@pytest.mark.parametrize("fn", sorted(MATH))
def test_etmath_ulp(mathexe, fn):
    ref_fn, sets, max_ulp = MATH[fn]
    x = np.concatenate(sets).astype(np.float32)
    y = mathexe(fn, x)
    with np.errstate(all="ignore"):
        ref = ref_fn(x.astype(np.float64))
    ref32 = ref.astype(np.float32)
    both = np.isfinite(ref32) & np.isfinite(y)
    nonfin_ok = (np.isnan(y) & np.isnan(ref32)) | (y == ref32) | both
    assert nonfin_ok.all(), f"{fn}: special values differ at {x[~nonfin_ok][:5]}: {y[~nonfin_ok][:5]} vs {ref32[~nonfin_ok][:5]}"
    sp = np.maximum(np.spacing(np.abs(ref32[both])).astype(np.float64), 2.0**-149)
    ulp = np.abs(y[both].astype(np.float64) - ref[both]) / sp
    worst = int(np.argmax(ulp))
    # rounding functions are exact: compare bits (signed zeros included)
    if max_ulp == 0.0:
        assert np.array_equal(y[both], ref32[both]) and np.array_equal(np.signbit(y[both]), np.signbit(ref32[both]))
    else:
        assert ulp[worst] <= max_ulp, f"{fn}: {ulp[worst]:.2f} ulp at x={x[both][worst]!r}"


def test_etmath_fmod_exact(mathexe):
    a = np.concatenate([_SPECIAL, _BITS[:100000], _uni(-100, 100)]).astype(np.float32)
    b = np.roll(a[::-1], 7)
    y = mathexe("fmod", np.stack([a, b], 1).reshape(-1))
    with np.errstate(all="ignore"):
        r = np.fmod(a, b)
    same = (y.view(np.uint32) == r.view(np.uint32)) | (np.isnan(y) & np.isnan(r))
    assert same.all(), f"fmod differs at {a[~same][:3]}, {b[~same][:3]}"


def test_conversions_exact(mathexe):
    x = np.concatenate([_SPECIAL, _BITS, _uni(-70000, 70000), _uni(-1e-4, 1e-4), _uni(-1e-7, 1e-7)]).astype(np.float32)
    h = mathexe("f2h", x, np.uint16)
    ok = (h == x.astype(np.float16).view(np.uint16)) | np.isnan(x)
    assert ok.all(), f"float->half differs at {x[~ok][:5]}"
    bf = mathexe("f2bf", x, np.uint16)
    u = x.view(np.uint32).astype(np.uint64)
    ref_bf = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    ok = (bf == ref_bf) | np.isnan(x)
    assert ok.all(), f"float->bf16 differs at {x[~ok][:5]}"
    d = mathexe("f2d", x, np.uint64)
    ok = (d == x.astype(np.float64).view(np.uint64)) | np.isnan(x)
    assert ok.all()
    xd = np.concatenate([x.astype(np.float64), _rng.uniform(-1e39, 1e39, 50000),
                         np.exp(_rng.uniform(-110, 110, 100000)) * _rng.choice([-1, 1], 100000),
                         _rng.integers(0, 2**64, 100000, dtype=np.uint64).view(np.float64),
                         np.array([2.0**-150, 3 * 2.0**-151, 2.0**-149 * 1.5, 5e-324, 1e308, -np.inf])])
    y = mathexe("d2f", xd.view(np.float32))
    with np.errstate(all="ignore"):
        r = xd.astype(np.float32)
    ok = (y.view(np.uint32) == r.view(np.uint32)) | (np.isnan(r) & np.isnan(y))
    assert ok.all(), f"double->float differs at {xd[~ok][:5]}"
