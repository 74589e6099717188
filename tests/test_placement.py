"""Placement by preference (issue 14): each blob kind goes to the first region of the board's list
with room, options override, the report says where and why, and nothing fitting shows the fit table
and the option that helps. One program larger than corstone300's 2 MB SRAM runs from DDR."""
import dataclasses
import json

import pytest

from conftest import ROOT, need_tool
from etdeploy import bake, config, ldscript, placing
from etdeploy.errors import BakeError, ConfigError, PlanDoesNotFit
from support.suite import MODELS, require_board

M = 1 << 20


def c300(**place):
    b = config.load_board("corstone300")
    return dataclasses.replace(b, placement=dataclasses.replace(b.placement, **place)) if place else b


@pytest.mark.unit
def test_first_preference_with_room():
    d = placing.decide(c300(), {"model": 100_000, "arena": 50_000, "pool": 1_000}, {})
    assert {k: v.region for k, v in d.items()} == {"model": "sram", "arena": "isram", "pool": "isram"}
    assert d["model"].why.startswith("first preference")


@pytest.mark.unit
def test_a_model_larger_than_sram_goes_to_ddr_and_says_why():
    d = placing.decide(c300(), {"model": 3 * M, "arena": 1000, "pool": 1000}, {})
    assert d["model"].region == "ddr"
    assert d["model"].tried == [("sram", 2 * M)]
    assert "sram has 2.00M free" in d["model"].why and "ddr" in d["model"].why


@pytest.mark.unit
def test_kinds_share_a_region_in_order():
    # the arena takes most of isram; the pool no longer fits there and moves on to ddr
    d = placing.decide(c300(), {"model": 1000, "arena": 4 * M - 100, "pool": 1000}, {})
    assert d["arena"].region == "isram" and d["pool"].region == "ddr"
    assert d["pool"].tried == [("isram", 100)]


@pytest.mark.unit
def test_options_override_preferences():
    d = placing.decide(c300(), {"model": 1000, "arena": 1000, "pool": 1000},
                       {"model_region": "ddr", "arena_region": "sram"})
    assert d["model"].region == "ddr" and d["model"].why == "model_region=ddr"
    assert d["arena"].region == "sram" and d["pool"].region == "sram"   # arena_region also moves pools
    d = placing.decide(c300(), {"model": 1000, "arena": 1000, "pool": 1000},
                       {"arena_region": "sram", "pool_region": "dtcm"})
    assert d["pool"].region == "dtcm" and d["pool"].why == "pool_region=dtcm"
    with pytest.raises(BakeError, match="model_region=nowhere.*regions: itcm, sram"):
        placing.decide(c300(), {"model": 1}, {"model_region": "nowhere"})
    with pytest.raises(BakeError, match="model_region=isram.*not loaded.*loaded regions: itcm, sram, ddr"):
        placing.decide(c300(), {"model": 1}, {"model_region": "isram"})


@pytest.mark.unit
def test_nothing_fits_shows_the_fit_table_and_the_option_that_helps():
    with pytest.raises(PlanDoesNotFit) as e:
        placing.decide(c300(model=("sram",)), {"model": 3 * M, "arena": 1000, "pool": 1000}, {},
                       {"model": [("model big.pte", 3 * M)]})
    err = e.value
    assert err.kind == "model" and err.region == "sram" and err.room == 2 * M and err.need == 3 * M
    assert err.option == "model_region" and err.room_in == ["ddr"]    # isram is not loaded by the image
    text = str(err).splitlines()
    assert "model needs 3145728 bytes" in text[0] and "big.pte" in text[0]
    rows = {ln.split()[0]: ln.split() for ln in text[2:-1]}
    assert set(rows) == {"itcm", "sram", "dtcm", "isram", "ddr"}
    assert rows["sram"][1:] == [str(2 * M), str(2 * M), str(3 * M), "yes", "no"]
    assert rows["ddr"][-2:] == ["no", "yes"] and rows["isram"][-1] == "no"
    assert text[-1].startswith("Pass model_region=<region>") and "(ddr)" in text[-1]


@pytest.mark.unit
def test_nothing_fits_anywhere_says_so():
    with pytest.raises(PlanDoesNotFit) as e:
        placing.decide(c300(), {"model": 300 * M}, {})
    assert e.value.room_in == [] and "No region of the board has room" in str(e.value)
    assert e.value.region == "ddr"        # the last one tried


@pytest.mark.unit
def test_bake_reports_placement_and_renders_it(tmp_path):
    small = dataclasses.replace(c300(), regions=tuple(
        dataclasses.replace(r, size=64 * 1024) if r.name == "sram" else r for r in c300().regions))
    res = bake.bake([MODELS / "mlp.bpte"], small, tmp_path)      # 111 KB program: sram is too small
    p = res.report["placement"]
    assert p["model"]["region"] == "ddr" and p["model"]["tried"] == [{"region": "sram", "free": 64 * 1024}]
    assert p["arena"]["region"] == "isram" and p["pool"]["region"] == "isram"
    assert res.build_unit().placement == {"model": "ddr", "arena": "isram", "pool": "isram"}
    text = ldscript.render(small, placement=res.build_unit().placement)
    model = text[text.index(".et_model :"):text.index(".data :")]
    assert "> ddr" in model


@pytest.mark.unit
def test_placement_lists_in_board_files(tmp_path):
    base = (ROOT / "boards" / "corstone300.toml").read_text()
    (tmp_path / "t.toml").write_text(base.replace('model = ["sram", "ddr"]', 'model = "ddr"'))
    assert config.load_board("t", tmp_path).placement.model == ("ddr",)
    (tmp_path / "t.toml").write_text(base.replace('model = ["sram", "ddr"]', 'model = ["sram", "flash"]'))
    with pytest.raises(ConfigError, match="model = 'flash' is not a memory region"):
        config.load_board("t", tmp_path)
    (tmp_path / "t.toml").write_text(base.replace('model = ["sram", "ddr"]', "model = []"))
    with pytest.raises(ConfigError, match="at least one memory region"):
        config.load_board("t", tmp_path)


BIG = '''
import torch
from torch import nn
class M(nn.Module):
    """3.1 MB of float weights: larger than corstone300's 2 MB SRAM."""
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(1024, 768)
    def forward(self, x):
        return torch.relu(self.fc(x))
'''


def big_program():
    """Exported once, cached under .cache/placement by the source and the package versions."""
    from support.export_key import content_key
    key = content_key(BIG)
    d = ROOT / ".cache" / "placement" / key
    if not (d / "big.bpte").exists():
        import torch
        from etdeploy import exporting
        ns: dict = {}
        exec(compile(BIG, "<big>", "exec"), ns)
        torch.manual_seed(0)
        ex = (torch.randn(1, 1024),)
        exporting.export_model(ns["M"]().eval(), ex, d, "big", flow="portable", case_inputs=[ex])
    return d / "big.bpte"


@pytest.mark.build
@pytest.mark.emu
def test_a_program_larger_than_sram_runs_from_ddr_on_corstone300():
    require_board("corstone300")
    need_tool("qemu-system-arm", "qemu-system-arm")
    from support.boardrun import BUILD, build_and_run
    pte = big_program()
    assert pte.stat().st_size > 2 * M
    doc = build_and_run("corstone300", pte)
    assert doc["status"] == "pass", doc["_stdout"][-3000:] + doc["_stderr"][-2000:]
    assert doc["cases"] and all(c["passed"] for c in doc["cases"])
    rep = json.loads((BUILD / "corstone300" / "report.json").read_text())
    assert rep["bake"]["placement"]["model"]["region"] == "ddr"
    assert {p["name"]: p["region"] for p in rep["placed"]}["et_model_blob_0"] == "ddr"
    assert "sram has 2.00M free" in rep["bake"]["placement"]["model"]["why"]
    from etdeploy import elfreport
    assert "model -> ddr" in elfreport.summary(rep)      # the table the build prints
