"""Every board whose toolchain is installed builds with scons (into a temporary build dir); the
report matches the ELF; images parse back; the minimal image runs on its emulator."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from conftest import need_tool
from etdeploy import config, images
from support import suite

ROOT = Path(__file__).resolve().parents[1]
SCONS = [sys.executable, "-m", "SCons", "-Q"]
BOARDS = suite.all_boards()
RUNS_HERE = suite.RUN_BOARDS


def scons(*args, check=True, timeout=600, env=None):
    p = subprocess.run(SCONS + list(args), cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)
    if check and p.returncode != 0:
        raise AssertionError(f"scons {' '.join(args)} failed ({p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("etdeploy-build")


def _need_toolchain(board):
    tcs = [config.load_toolchain(t) for t in board.toolchains]
    if not any(t.locate() for t in tcs):
        need_tool(tcs[-1].compiler(), tcs[-1].package)


def _build(board_name, build_dir):
    board = config.load_board(board_name)
    _need_toolchain(board)
    scons(f"board={board_name}", f"build_dir={build_dir}")
    return board, Path(build_dir) / board_name


def _regions_from_elf(elf: Path, board):
    used = {r.name: 0 for r in board.regions}
    with open(elf, "rb") as f:
        e = ELFFile(f)
        segs = [s for s in e.iter_segments() if s["p_type"] == "PT_LOAD"]
        for sec in e.iter_sections():
            if not sec["sh_flags"] & SH_FLAGS.SHF_ALLOC or not sec["sh_size"]:
                continue
            for r in board.regions:
                if r.origin <= sec["sh_addr"] < r.end:
                    used[r.name] += sec["sh_size"]
            if sec["sh_type"] != "SHT_NOBITS":
                for s in segs:
                    if s["p_vaddr"] <= sec["sh_addr"] < s["p_vaddr"] + s["p_memsz"] and s["p_paddr"] != s["p_vaddr"]:
                        lma = s["p_paddr"] + sec["sh_addr"] - s["p_vaddr"]
                        for r in board.regions:
                            if r.origin <= lma < r.end:
                                used[r.name] += sec["sh_size"]
    return used


@pytest.mark.build
@pytest.mark.parametrize("board_name", BOARDS)
def test_board_builds(board_name, build_dir):
    board, out = _build(board_name, build_dir)
    elf = out / "firmware.elf"
    assert elf.exists() and (out / "firmware.map").exists()
    rep = json.loads((out / "report.json").read_text())
    if board.regions:
        assert (out / "firmware.gen.ld").exists()
        want = _regions_from_elf(elf, board)
        assert {n: r["used"] for n, r in rep["regions"].items()} == want
        for n, r in rep["regions"].items():
            assert r["used"] + r["free"] == board.region(n).size and r["free"] >= 0
    for kind in board.images:
        assert (out / f"firmware.{kind}").exists(), kind
    segs, entry = images.load_segments(elf)
    loaded = {a + i: b for a, d in segs for i, b in enumerate(d)}
    if "hex" in board.images:
        assert images.parse_hex(out / "firmware.hex") == loaded
    if "bin" in board.images:
        data = (out / "firmware.bin").read_bytes()
        boot = next(r for r in board.regions if r.origin <= (entry & ~1) < r.end)
        assert 0 < len(data) <= boot.size          # never one file padded across regions
    if "uf2" in board.images:
        mem, blocks = images.parse_uf2(out / "firmware.uf2")
        assert mem.items() >= loaded.items()
        assert {b["family"] for b in blocks} == {board.uf2_family}


@pytest.mark.build
def test_pico2_image_def_in_first_4k(build_dir):
    board, out = _build("pico2", build_dir)
    mem, _ = images.parse_uf2(out / "firmware.uf2")
    flash = bytes(mem.get(0x10000000 + i, 0) for i in range(4096))
    start = flash.find(struct_words(0xFFFFDED3, 0x10210142, 0x000001FF, 0, 0xAB123579))
    assert 0 < start < 4096 - 20
    sp, reset = int.from_bytes(flash[0:4], "little"), int.from_bytes(flash[4:8], "little")
    assert board.region("sram").origin < sp <= board.region("sram").end and reset & 1


def struct_words(*w):
    return b"".join(x.to_bytes(4, "little") for x in w)


@pytest.mark.build
def test_unknown_board_and_option_errors():
    p = scons("board=nope", check=False)
    assert p.returncode != 0 and "unknown board 'nope'" in p.stderr and "corstone300" in p.stderr
    p = scons("board=host", "colour=red", check=False)
    assert p.returncode != 0 and "unknown option(s): colour" in p.stderr and "arena_region" in p.stderr
    p = scons("board=corstone300", "arena_region=foo", check=False)
    assert p.returncode != 0 and "no memory region 'foo'; regions: itcm, sram" in p.stderr


@pytest.mark.unit
def test_missing_toolchain_names_package(tmp_path):
    env = dict(os.environ, PATH=str(Path(sys.executable).parent))   # no compilers on PATH
    p = scons("board=xtensa-sim", f"build_dir={tmp_path}", check=False, env=env)
    assert p.returncode == 3, p.stderr
    assert "apt-get install --no-install-recommends gcc-xtensa-lx106" in p.stderr


@pytest.mark.unit
def test_scons_help_lists_options():
    p = scons("-h")
    for opt in ("board", "pte", "model", "arena_region", "run", "timeout", "etdump", "atol", "rtol", "opt",
                "verbose"):
        assert f"\n{opt}:" in p.stdout, opt


@pytest.mark.unit
def test_scons_boards_lists_boards():
    p = scons("boards")
    for b in BOARDS:
        assert b in p.stdout


@pytest.mark.build
@pytest.mark.emu
@pytest.mark.parametrize("board_name", RUNS_HERE)
def test_minimal_image_runs(board_name, build_dir):
    board = config.load_board(board_name)
    _need_toolchain(board)
    if board.emulator.kind != "native":
        need_tool(board.emulator.binary, board.emulator.package)
    p = scons(f"board={board_name}", f"build_dir={build_dir}", "run=1", "timeout=60", check=False)
    assert f"etdeploy: {board_name} ok" in p.stdout, p.stdout[-2000:] + p.stderr[-2000:]
    assert "exit status 0" in p.stdout and p.returncode == 0


SOFTFLOAT_TEST = r"""
#include <stdio.h>
#include <string.h>
#define SF(n) t##n
#include "SOFTFLOAT"
static uint32_t B(float f){uint32_t u;memcpy(&u,&f,4);return u;}
static float F(uint32_t u){float f;memcpy(&f,&u,4);return f;}
static uint64_t s=88172645463325252ull;
static uint32_t rnd(void){s^=s<<13;s^=s>>7;s^=s<<17;return (uint32_t)s;}
static int same(float a,float b){ return (a!=a&&b!=b) || B(a)==B(b); }
int main(void){ long bad=0;
 for(long i=0;i<2000000;i++){ uint32_t x=rnd(),y=rnd();
  if(i%4==1) y=(x&0xff800000u)^(rnd()&0x80ffffffu);
  if(i%8==3) x&=0x807fffffu;
  float a=F(x),b=F(y);
  bad += !same(t__addsf3(a,b),a+b) + !same(t__subsf3(a,b),a-b) + !same(t__mulsf3(a,b),a*b);
  int32_t iv=(int32_t)rnd()>>(rnd()%32); bad += !same(t__floatsisf(iv),(float)iv);
  uint32_t uv=rnd()>>(rnd()%32); bad += !same(t__floatunsisf(uv),(float)uv);
  float fv=F(rnd()&0x4f7fffffu); if(fv==fv && fv<4294967296.0f) bad += t__fixunssfsi(fv)!=(uint32_t)fv;
 }
 printf("bad=%ld\n",bad); return bad!=0; }
"""


@pytest.mark.build
def test_xtensa_softfloat_matches_ieee(tmp_path):
    """The lx106 single-float helpers, compiled natively, agree bit for bit with the host FPU."""
    cc = need_tool("gcc", "gcc")
    src = tmp_path / "sf.c"
    src.write_text(SOFTFLOAT_TEST.replace("SOFTFLOAT", str(ROOT / "firmware/boards/xtensa/softfloat.c")))
    exe = tmp_path / "sf"
    subprocess.run([cc, "-O2", "-fno-builtin", str(src), "-o", str(exe)], check=True)
    p = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "bad=0" in p.stdout, p.stdout


@pytest.mark.build
@pytest.mark.emu
@pytest.mark.parametrize("board_name", RUNS_HERE)
def test_baked_program_runs(board_name, build_dir):
    """The whole path with a real program: bake (lead's bake.py) -> board build -> run -> PASS."""
    pte = ROOT / "tests" / "models" / "add.bpte"
    assert pte.exists(), "fixture tests/models/add.bpte is committed by the export step"
    board = config.load_board(board_name)
    _need_toolchain(board)
    if board.emulator.kind != "native":
        need_tool(board.emulator.binary, board.emulator.package)
    out = Path(build_dir) / "baked"
    p = scons(f"board={board_name}", f"build_dir={out}", f"pte={pte}", "run=1", "timeout=120", check=False)
    assert p.returncode == 0 and "PASS" in p.stdout, p.stdout[-3000:] + p.stderr[-3000:]
    rep = json.loads((out / board_name / "report.json").read_text())
    names = {s["name"]: s for s in rep["placed"]}
    assert names["et_model_blob_0"]["size"] == len(pte.read_bytes())
    if board.regions:
        # a small program: every blob in its kind's first preference, as the report says
        assert names["et_model_blob_0"]["region"] == board.placement.first("model")
        assert names["et_pool_0_0"]["region"] == board.placement.first("pool")
        assert rep["bake"]["placement"]["model"]["region"] == board.placement.first("model")
