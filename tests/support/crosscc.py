"""Kernel files compiled alone with a cross compiler, strictly: each test_kernels_* file's
test_cross_compile_clean. Without the compiler: skipped (failed on CI: need_tool).

    compile_clean(target, cc, files, out_dir, conversion=False, warn_free=False, libm=None, nm=...)

Fails on an error (and on any warning with warn_free); where the toolchain's nm is installed, on
double-precision soft-float helpers (__*df*) and on libm symbols (libm(symbol) true)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KDIR = ROOT / "firmware" / "kernels"
STRICT = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wdouble-promotion"]
CONVERSION = ["-Wconversion", "-Wno-sign-conversion"]


def _nm(cc0: str) -> str:
    return "nm" if cc0 == "gcc" else cc0.replace("gcc", "nm")


def compile_clean(target: str, cc: list[str], files: list[str], out_dir: Path, conversion: bool = False,
                  warn_free: bool = False, libm=None, nm: bool = True) -> None:
    from conftest import need_tool
    need_tool(cc[0])
    for f in files:
        obj = Path(out_dir) / (f.replace("/", "_") + ".o")
        p = subprocess.run([*cc, *STRICT, *(CONVERSION if conversion else []), "-fsingle-precision-constant",
                            f"-I{KDIR}", f"-I{ROOT / 'firmware' / 'runtime'}", "-c", str(KDIR / f), "-o", str(obj)],
                           capture_output=True, text=True)
        assert p.returncode == 0, f"{target} {f}:\n{p.stderr}"
        if warn_free:
            assert not p.stderr.strip(), f"{target} {f} warns:\n{p.stderr}"
        tool = _nm(cc[0])
        if not nm or not shutil.which(tool):
            continue
        und = subprocess.run([tool, "-u", str(obj)], capture_output=True, text=True).stdout.split()
        dbl = [s for s in und if s.startswith("__") and "df" in s]
        assert not dbl, f"{target} {f} needs double helpers {dbl}"
        if libm is not None:
            calls = sorted(s for s in und if libm(s))
            assert not calls, f"{target} {f} calls libm {calls}"
