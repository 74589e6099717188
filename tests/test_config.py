"""Board/toolchain schema: unknown keys, sizes, addresses, overlaps, extends; the real boards."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from etdeploy import config, ldscript
from etdeploy.errors import ConfigError, ToolchainMissing, UnknownBoard

pytestmark = pytest.mark.unit

BASE = """
description = "test"
cpu = "cortex-m4"
family = "cortex-m"
toolchain = "arm-none-eabi"
pointer_bytes = 4
exit = "semihost"
images = ["bin"]

[[memory]]
name = "flash"
origin = 0x0
size = "512K"
attrs = "rx"

[[memory]]
name = "ram"
origin = 0x20000000
size = "128K"

[placement]
text = "flash"
rodata = "flash"
data = "ram"
bss = "ram"
stack = "ram"
model = "flash"
arena = "ram"
pool = "ram"

[uart]
kind = "cmsdk"
base = 0x40004000

[cycles]
kind = "systick"
hz = 25000000
"""


def write(tmp: Path, name: str, text: str) -> Path:
    (tmp / f"{name}.toml").write_text(textwrap.dedent(text))
    return tmp


def test_base_loads(tmp_path):
    b = config.load_board("t", write(tmp_path, "t", BASE))
    assert [r.name for r in b.regions] == ["flash", "ram"]
    assert b.region("flash").size == 512 * 1024 and b.region("ram").origin == 0x20000000
    assert b.placement.get("arena") == ("ram",) and b.placement.stack_size == 16 * 1024
    assert b.uart.base == 0x40004000 and b.cycles.hz == 25_000_000


@pytest.mark.parametrize("text,fragment", [
    (BASE + "\ncolour = 'red'\n", "unknown key(s) colour; valid keys:"),
    (BASE.replace('kind = "cmsdk"', 'kind = "cmsdk"\nparity = "none"'), "unknown key(s) parity"),
    (BASE.replace('pool = "ram"', 'pool = "ram"\nheap = "ram"'), "unknown key(s) heap"),
])
def test_unknown_keys_listed(tmp_path, text, fragment):
    with pytest.raises(ConfigError) as e:
        config.load_board("t", write(tmp_path, "t", text))
    assert fragment in str(e.value)
    assert "valid keys:" in str(e.value)


@pytest.mark.parametrize("size", ['"12Q"', '"-4K"', '"K"', "true", '"1.5M"'])
def test_bad_sizes(tmp_path, size):
    with pytest.raises(ConfigError, match="size"):
        config.load_board("t", write(tmp_path, "t", BASE.replace('size = "128K"', f"size = {size}")))


@pytest.mark.parametrize("v,n", [("4096", 4096), ('"0x1000"', 4096), ('"512K"', 512 << 10), ('"2M"', 2 << 20),
                                 ('"1G"', 1 << 30)])
def test_sizes(v, n):
    assert config.parse_size(eval(v) if v.startswith('"') else int(v)) == n


def test_bad_address(tmp_path):
    with pytest.raises(ConfigError, match="address"):
        config.load_board("t", write(tmp_path, "t", BASE.replace("origin = 0x20000000", 'origin = "nowhere"')))


def test_overlap(tmp_path):
    text = BASE.replace("origin = 0x20000000", "origin = 0x40000")
    with pytest.raises(ConfigError, match="'flash'.*'ram'.*overlap"):
        config.load_board("t", write(tmp_path, "t", text))


def test_placement_names_a_region(tmp_path):
    with pytest.raises(ConfigError, match="not a memory region; regions: flash, ram"):
        config.load_board("t", write(tmp_path, "t", BASE.replace('arena = "ram"', 'arena = "sdram"')))


def test_extends_merges_tables(tmp_path):
    write(tmp_path, "t", BASE)
    write(tmp_path, "t2", 'extends = "t"\ncpu = "cortex-m55"\n[uart]\nbase = 0x49303000\n[placement]\narena = "flash"\n')
    b = config.load_board("t2", tmp_path)
    assert b.extends == "t" and b.cpu == "cortex-m55"
    assert b.uart.kind == "cmsdk" and b.uart.base == 0x49303000
    assert b.placement.arena == ("flash",) and b.placement.pool == ("ram",)
    assert [r.name for r in b.regions] == ["flash", "ram"]


def test_extends_unknown_and_cycle(tmp_path):
    write(tmp_path, "a", 'extends = "nope"\n')
    with pytest.raises(ConfigError, match="extends unknown board 'nope'"):
        config.load_board("a", tmp_path)
    write(tmp_path, "a", 'extends = "b"\n')
    write(tmp_path, "b", 'extends = "a"\n')
    with pytest.raises(ConfigError, match="cycle"):
        config.load_board("a", tmp_path)


def test_unknown_board_lists_boards():
    with pytest.raises(UnknownBoard) as e:
        config.load_board("no-such-board")
    assert "corstone300" in str(e.value) and "host" in str(e.value)


def test_real_boards_load():
    boards = {b.name: b for b in config.load_boards()}
    assert {"corstone300", "corstone320", "mps2-an386", "pico2", "xtensa-sim", "android-arm64", "host"} <= set(boards)
    assert boards["corstone300"].npu.target == "ethos-u55-128"
    assert boards["corstone320"].npu.target == "ethos-u85-256"
    assert boards["corstone300-u65"].extends == "corstone300"
    assert boards["pico2"].uf2_family == 0xE48BFF59 and "uf2" in boards["pico2"].images
    for b in boards.values():
        for t in b.toolchains:
            config.load_toolchain(t)
        config.bsp_defines(b)
        if b.regions:
            text = ldscript.render(b)
            for r in b.regions:
                assert f"{r.name} (" in text
            assert ".et_model" in text and ".et_arena" in text and ".et_pool" in text


def test_arena_region_override():
    b = config.load_board("corstone300")
    text = ldscript.render(b, arena_region="ddr")
    arena = text[text.index(".et_arena"):text.index(".et_pool")]
    pool = text[text.index(".et_pool"):text.index(".stack")]
    assert "> ddr" in arena and "> ddr" in pool
    with pytest.raises(ConfigError, match="no memory region 'nowhere'"):
        ldscript.render(b, arena_region="nowhere")


def test_toolchain_missing_names_package_and_env(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    tc = config.load_toolchain("xtensa-lx106")
    with pytest.raises(ToolchainMissing, match="apt-get install --no-install-recommends gcc-xtensa-lx106"):
        tc.require()
    monkeypatch.delenv("ANDROID_NDK_HOME", raising=False)
    with pytest.raises(ToolchainMissing) as e:
        config.board_toolchain(config.load_board("android-arm64"))
    assert "gcc-aarch64-linux-gnu" in str(e.value) and "ANDROID_NDK_HOME" in str(e.value)


def test_ndk_found_through_env(tmp_path, monkeypatch):
    bindir = tmp_path / "toolchains/llvm/prebuilt/linux-x86_64/bin"
    bindir.mkdir(parents=True)
    cc = bindir / "aarch64-linux-android24-clang"
    cc.write_text("#!/bin/sh\n")
    cc.chmod(0o755)
    monkeypatch.setenv("ANDROID_NDK_HOME", str(tmp_path))
    tc = config.board_toolchain(config.load_board("android-arm64"))
    assert tc.name == "android-ndk" and tc.locate() == cc
