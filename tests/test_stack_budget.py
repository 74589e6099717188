"""The build's worst-case stack (etdeploy.stack_budget, from GCC's -fcallgraph-info): a corstone300
build of a cortex_m program reports it between its deepest kernel frame and the board's stack; a
stack too small fails the build naming the chain, before any image; and the bound holds on QEMU,
where the image built with stack_paint=1 prints the bytes of stack it really used."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import need_tool
from etdeploy import config, stack_budget

ROOT = Path(__file__).resolve().parents[1]
PTE = ROOT / "tests" / "models" / "cnn_cortex_m.bpte"     # cortex_m:: int8 kernels, Helium depthwise


def scons(*args):
    return subprocess.run([sys.executable, "-m", "SCons", "-Q", "-j2", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


def _need_arm():
    tc = config.load_toolchain(config.load_board("corstone300").toolchains[0])
    if tc.locate() is None:
        need_tool(tc.compiler(), tc.package)


@pytest.fixture(scope="module")
def painted(tmp_path_factory):
    _need_arm()
    d = tmp_path_factory.mktemp("stack-build")
    p = scons("board=corstone300", f"pte={PTE}", f"build_dir={d}", "stack_paint=1")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return d / "corstone300", p.stdout


def _deepest_kernel_frame(out: Path) -> tuple[int, str]:
    best = (0, "")
    for su in (out / "obj" / "firmware" / "kernels").rglob("*.su"):
        for line in su.read_text().splitlines():
            where, size, _kind = line.rsplit("\t", 2)
            best = max(best, (int(size), where))
    return best


@pytest.mark.build
def test_report_has_worst_case_stack(painted):
    out, stdout = painted
    rep = json.loads((out / "report.json").read_text())
    st = rep["stack"]
    frame, where = _deepest_kernel_frame(out)
    assert frame > 1024, where            # the Helium kernels keep KBs of scratch on the stack
    assert frame < st["bytes"] < st["size"] == config.load_board("corstone300").placement.stack_size
    assert st["chain"][:2] == ["bsp_start_c", "main"]
    assert any(f.startswith("k_cm_") for f in st["chain"]), st["chain"]
    assert re.search(rf"stack: worst case {st['bytes']} B of {st['size']} B", stdout)
    assert "RAM = arenas" in stdout


@pytest.mark.build
def test_too_small_stack_fails_and_leaves_no_image(tmp_path):
    _need_arm()
    out = tmp_path / "corstone300"
    assert scons("board=corstone300", f"pte={PTE}", f"build_dir={tmp_path}").returncode == 0
    assert (out / "firmware.bin").exists()
    p = scons("board=corstone300", f"pte={PTE}", f"build_dir={tmp_path}", "stack_size=4K")
    assert p.returncode != 0
    text = p.stdout + p.stderr
    m = re.search(r"worst-case stack (\d+) bytes > the board's stack of 4096 bytes; deepest chain .*"
                  r"bsp_start_c -> main -> .*k_cm_\w+.*Way out: a larger stack_size", text)
    assert m, text[-3000:]
    assert int(m.group(1)) > 4096
    assert (out / "firmware.elf").exists() and not (out / "firmware.bin").exists()
    assert not (out / "firmware.hex").exists()


@pytest.mark.build
def test_board_file_extending_with_tiny_stack_fails_the_check(painted, tmp_path):
    out, _ = painted
    (tmp_path / "corstone300.toml").write_text((ROOT / "boards" / "corstone300.toml").read_text())
    (tmp_path / "tiny.toml").write_text('extends = "corstone300"\n[placement]\nstack_size = "2K"\n')
    tiny = config.load_board("tiny", tmp_path)
    objs = [str(o) for o in (out / "obj").rglob("*.o")]
    res = stack_budget.compute(objs)
    res["size"] = tiny.placement.stack_size
    with pytest.raises(stack_budget.StackOverflow, match=r"tiny: worst-case stack \d+ bytes > the board's stack "
                       r"of 2048 bytes.*tiny\.toml"):
        stack_budget.check(res, tiny)
    stack_budget.check(res, config.load_board("corstone300"))     # fits the real board


@pytest.mark.build
@pytest.mark.emu
def test_measured_stack_within_computed(painted):
    out, _ = painted
    board = config.load_board("corstone300")
    need_tool(board.emulator.binary, board.emulator.package)
    argv = [board.emulator.binary, *[a.replace("{elf}", str(out / "firmware.elf")) for a in board.emulator.args],
            "-serial", "null"]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr        # the baked cases pass
    m = re.search(r"etdeploy: stack used (\d+)", p.stdout + p.stderr)
    assert m, p.stdout + p.stderr
    used = int(m.group(1))
    computed = json.loads((out / "report.json").read_text())["stack"]["bytes"]
    assert 256 < used <= computed, (used, computed)


@pytest.mark.build
def test_vla_is_unbounded_and_indirect_calls_take_the_deepest(tmp_path):
    _need_arm()
    cc = config.load_toolchain("arm-none-eabi").locate()
    (tmp_path / "m.c").write_text(
        "typedef int (*fn)(int);\n"
        "__attribute__((noinline)) int big(int i) { volatile char b[3000]; b[i] = 1; return b[0]; }\n"
        "__attribute__((noinline)) int small(int i) { volatile char b[100]; b[i] = 1; return b[0]; }\n"
        "fn table[2] = {big, small};\n"
        "int main(void) { return table[1](1); }\n")
    (tmp_path / "v.c").write_text(
        "__attribute__((noinline)) int vla(int n) { volatile char b[n]; b[0] = 1; return b[0]; }\n"
        "int other(int n) { return vla(n); }\n")
    objs = []
    for name in ("m", "v"):
        objs.append(tmp_path / f"{name}.o")
        subprocess.run([str(cc), "-mcpu=cortex-m55", "-mthumb", "-O2", "-fstack-usage", "-fcallgraph-info=su",
                        "-c", str(tmp_path / f"{name}.c"), "-o", str(objs[-1])], check=True)
    res = stack_budget.compute(objs, exception_frame=0)
    assert res["chain"] == ["main", "(indirect)", "big"] and res["bytes"] >= 3000    # the table's deepest
    g = stack_budget.read_graph([o.with_suffix(".ci") for o in objs])
    with pytest.raises(stack_budget.BuildError, match="vla has a dynamically sized frame"):
        stack_budget.deepest(g, "other")
