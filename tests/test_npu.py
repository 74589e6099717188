"""Ethos-U buffers placed by memory mode (etdeploy.npu_plan): unit tests on the real Vela payload of
the committed fixture, the build modes (no driver: refused; ethosu_driver=plan: placed, reported from
the ELF), and a compile check of the driver backend against a stand-in header (the real driver is not
on this machine: that check proves only that the C is well-formed against the documented API)."""
from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from etdeploy import bake, config, npu_plan
from etdeploy.errors import BakeError, PlanDoesNotFit
from etdeploy.pte import read_program

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "models" / "mlp_ethos_u.pte"     # ethos-u55-128, Shared_Sram
SCONS = [sys.executable, "-m", "SCons", "-Q"]


def _board(name="corstone300", **npu):
    b = config.load_board(name)
    return dataclasses.replace(b, npu=dataclasses.replace(b.npu, **npu)) if npu else b


def _program(strip_flags=False):
    p = read_program(FIXTURE)
    if strip_flags:   # let one payload stand for every memory mode in the unit tests
        for m in p.methods:
            m.delegates = [dataclasses.replace(d, compile_specs={}) for d in m.delegates]
    return p


@pytest.mark.unit
@pytest.mark.parametrize("mode,sysc,want", [
    ("Sram_Only", "Ethos_U55_High_End_Embedded", ("sram", "sram", None, 0)),
    ("Shared_Sram", "Ethos_U55_High_End_Embedded", ("flash", "sram", None, 0)),
    ("Shared_Sram", "Ethos_U65_High_End", ("dram", "sram", None, 0)),
    ("Dedicated_Sram_384KB", "Ethos_U85_SYS_DRAM_Mid", ("dram", "dram", "sram", 384 * 1024)),
])
def test_mode_areas_from_vela_ini_and_fallback(mode, sysc, want):
    a = npu_plan.mode_areas(mode, sysc)
    assert (a.weights, a.scratch, a.fast_scratch, a.arena_cache_size) == want
    b = npu_plan.mode_areas(mode, sysc, cp=configparser_empty())   # built-in table, same answers
    assert (b.scratch, b.fast_scratch, b.arena_cache_size) == want[1:]


def configparser_empty():
    import configparser
    return configparser.ConfigParser()


@pytest.mark.unit
def test_shared_sram_scratch_in_sram_weights_copied_to_flash_region():
    p = _program()
    plan = npu_plan.plan([p], _board(), {"ethosu_driver": "plan"}, model_region="sram")
    (d,) = plan.delegates
    assert d.scratch.region == "isram" and d.scratch.size == d.vela.scratch_bytes
    assert d.weights.region == "ddr" and not d.weights.in_place and d.weights.size == d.vela.weight_bytes
    assert plan.fast_scratch is None and plan.mode == "plan"


@pytest.mark.unit
def test_weights_in_place_when_the_model_already_sits_in_the_right_region():
    plan = npu_plan.plan([_program()], _board(), {"ethosu_driver": "plan"}, model_region="ddr")
    w = plan.delegates[0].weights
    assert w.in_place and w.offset % 16 == 0
    asm = npu_plan.render_model_asm(plan)
    assert f".set {w.symbol}, et_model_blob_0 + {w.offset}" in asm


@pytest.mark.unit
def test_dedicated_sram_scratch_in_dram_fast_scratch_in_sram():
    board = _board(memory_mode="Dedicated_Sram_384KB", system_config="Ethos_U65_High_End")
    plan = npu_plan.plan([_program(strip_flags=True)], board, {"ethosu_driver": "plan"}, model_region="sram")
    d = plan.delegates[0]
    assert (d.scratch.region, d.weights.region) == ("ddr", "ddr")
    assert plan.fast_scratch.region == "isram" and plan.fast_scratch.size == 384 * 1024
    c = npu_plan.render_c(plan, [Path("/x/model_0.pte")])
    assert 'section(".et_npu.isram.fast")' in c and 'section(".et_npu.ddr.0_0_0")' in c
    assert "et_npu_fast_scratch_ptr = et_npu_fast_scratch;" in c


@pytest.mark.unit
def test_sram_only_puts_weights_in_sram_and_needs_a_loaded_region():
    board = _board(memory_mode="Sram_Only")          # corstone300 isram is NOLOAD-only
    plan = npu_plan.plan([_program(strip_flags=True)], board, {"ethosu_driver": "plan"}, model_region="sram")
    assert plan.delegates[0].weights.region == "isram"
    with pytest.raises(BakeError, match="does not load"):
        npu_plan.check_fit(plan, board, {})
    board = _board(memory_mode="Sram_Only", sram_region="sram")
    plan = npu_plan.plan([_program(strip_flags=True)], board, {"ethosu_driver": "plan"}, model_region="sram")
    assert plan.delegates[0].weights.in_place    # the model is in that SRAM already: zero copy


@pytest.mark.unit
def test_fit_check_counts_npu_buffers_with_the_programs_own():
    board = _board(memory_mode="Dedicated_Sram_384KB", system_config="Ethos_U65_High_End", sram_region="dtcm")
    plan = npu_plan.plan([_program(strip_flags=True)], board, {"ethosu_driver": "plan"}, model_region="sram")
    with pytest.raises(PlanDoesNotFit, match="dtcm.*et_npu_fast_scratch"):
        npu_plan.check_fit(plan, board, {"dtcm": {"size": 512 * 1024, "need": 200 * 1024}})


@pytest.mark.unit
def test_program_compiled_for_another_npu_is_refused():
    with pytest.raises(BakeError, match="accelerator-config ethos-u55-128 .board: ethos-u85-256"):
        npu_plan.plan([_program()], config.load_board("corstone320"), {"ethosu_driver": "plan"}, "ddr")


@pytest.mark.unit
def test_bake_without_driver_names_the_choices(tmp_path):
    with pytest.raises(BakeError) as e:
        bake.bake([FIXTURE], config.load_board("corstone300"), tmp_path, {})
    msg = str(e.value)
    assert "ethosu_driver=" in msg and "FVP" in msg and "--flow cortex_m" in msg


@pytest.mark.unit
def test_bake_refuses_to_run_npu_programs_without_an_npu(tmp_path):
    drv = tmp_path / "drv"
    (drv / "include").mkdir(parents=True)
    (drv / "include" / "ethosu_driver.h").write_text("")
    board = config.load_board("corstone300")
    with pytest.raises(BakeError, match="QEMU emulates the CPU only.*runner=fvp.*--flow cortex_m"):
        bake.bake([FIXTURE], board, tmp_path / "o", {"ethosu_driver": str(drv), "run": True})
    with pytest.raises(BakeError, match="memory report only"):
        bake.bake([FIXTURE], board, tmp_path / "o", {"ethosu_driver": "plan", "run": True})
    res = bake.bake([FIXTURE], board, tmp_path / "o", {"ethosu_driver": str(drv), "run": True, "runner": "fvp"})
    assert any(s.name == "et_backend_ethosu.c" for s in res.sources)
    assert res.defines["ET_NPU_BASE"] == "0x58102000u" and res.defines["ET_NPU_IRQ"] == "56"


@pytest.mark.unit
def test_bake_report_has_the_npu_plan(tmp_path):
    res = bake.bake([FIXTURE], config.load_board("corstone300"), tmp_path, {"ethosu_driver": "plan"})
    rep = res.report["npu"]
    assert rep["memory_mode"] == "Shared_Sram" and rep["build"] == "plan"
    kinds = {b["kind"]: b["region"] for b in rep["buffers"]}
    assert kinds == {"scratch": "isram", "weights": "ddr"}
    assert res.defines["ET_NPU_PLAN_ONLY"] == "1"
    assert (tmp_path / "et_npu.gen.c").exists()


@pytest.mark.build
def test_plan_build_places_npu_buffers_read_back_from_the_elf(tmp_path):
    from conftest import need_tool
    need_tool("arm-none-eabi-gcc", "gcc-arm-none-eabi")
    r = subprocess.run(SCONS + ["board=corstone300", f"pte={FIXTURE}", "ethosu_driver=plan",
                                f"build_dir={tmp_path}"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((tmp_path / "corstone300" / "report.json").read_text())
    placed = {p["name"]: p for p in rep["placed"]}
    sc, w = placed["et_npu_scratch_0_0_0"], placed["et_npu_weights_0_0_0"]
    assert sc["region"] == "isram" and w["region"] == "ddr"          # Shared_Sram
    vela = rep["bake"]["programs"][0]["methods"][0]["delegates"][0]["vela"]
    assert sc["size"] == vela["scratch_bytes"] and w["size"] == vela["weight_bytes"]
    assert "et_npu_scratch_0_0_0" in r.stdout and "et_npu_weights_0_0_0" in r.stdout
    # the copy in DDR holds exactly the payload's weight block
    elf = (tmp_path / "corstone300" / "firmware.elf").read_bytes()
    from elftools.elf.elffile import ELFFile
    import io
    f = ELFFile(io.BytesIO(elf))
    sec = next(s for s in f.iter_sections() if s.name == ".et_npu_data_ddr")
    p = read_program(FIXTURE)
    d = p.methods[0].delegates[0]
    from etdeploy import vela_payload
    v = vela_payload.parse(p.data[d.offset:d.offset + d.size])
    start = d.offset + v.blocks["weight_data"][0]
    assert sec.data()[:v.weight_bytes] == p.data[start:start + v.weight_bytes]


@pytest.mark.build
def test_default_build_without_driver_fails_clearly(tmp_path):
    r = subprocess.run(SCONS + ["board=corstone300", f"pte={FIXTURE}", f"build_dir={tmp_path}"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode != 0 and "ethosu_driver=" in r.stderr and "cortex_m" in r.stderr


FAKE_DRIVER_H = """
#include <stddef.h>
#include <stdint.h>
struct ethosu_driver { int dummy; };
int ethosu_init(struct ethosu_driver *drv, void *base_address, const void *fast_memory,
                const size_t fast_memory_size, uint32_t secure_enable, uint32_t privilege_enable);
struct ethosu_driver *ethosu_reserve_driver(void);
void ethosu_release_driver(struct ethosu_driver *drv);
int ethosu_invoke_v3(struct ethosu_driver *drv, const void *custom_data_ptr, const int custom_data_size,
                     uint64_t *base_addr, const size_t *base_addr_size, const int num_base_addr, void *user_arg);
void ethosu_irq_handler(struct ethosu_driver *drv);
"""


@pytest.mark.build
def test_driver_backend_compiles_against_the_documented_api(tmp_path):
    """A stand-in ethosu_driver.h with the public prototypes: the backend compiles for Cortex-M55.
    Not a test of the driver (not available here), only of the backend's C."""
    from conftest import need_tool
    gcc = need_tool("arm-none-eabi-gcc", "gcc-arm-none-eabi")
    (tmp_path / "ethosu_driver.h").write_text(FAKE_DRIVER_H)
    be = ROOT / "firmware" / "backends" / "ethosu"
    for src in ("et_backend_ethosu.c", "et_vela_blocks.c", "et_backend_ethosu_plan.c"):
        r = subprocess.run([gcc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-mcpu=cortex-m55", "-mthumb",
                            "-O2", "-c", str(be / src), "-o", str(tmp_path / (src + ".o")),
                            f"-I{tmp_path}", f"-I{be}", f"-I{ROOT / 'firmware' / 'runtime'}",
                            "-DET_NPU_BASE=0x58102000u", "-DET_NPU_IRQ=56"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
