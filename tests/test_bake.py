"""Bake: reading programs, operator and delegate checks, fit checks, and the C it renders."""
import dataclasses
from pathlib import Path

import pytest

from etdeploy import bake, config, kernels
from etdeploy.errors import BadProgram, BakeError, MissingOperators, PlanDoesNotFit
from etdeploy.pte import read_program

pytestmark = pytest.mark.unit
MODELS = Path(__file__).resolve().parent / "models"


def board(region_size=1 << 20, ptr=4):
    """The host board with one region 'ram' that holds everything."""
    r = config.MemoryRegion(name="ram", origin=0x20000000, size=region_size)
    place = config.Placement(**{k: "ram" for k in config.PLACEMENT_KINDS})
    return dataclasses.replace(config.load_board("host"), name="test", pointer_bytes=ptr, regions=(r,), placement=place)


def test_reads_program_and_bundle():
    p = read_program(MODELS / "mlp.pte")
    m = p.method("forward")
    assert not p.bundled and p.program_offset == 0
    assert "aten::addmm.out" in m.operators
    assert m.arenas[0] == 0 and m.arenas[1] > 0
    assert m.inputs[0].sizes and m.inputs[0].dtype_name == "float32"
    assert m.inputs[0].mem_id == 1          # executorch plans inputs into arena 1
    b = read_program(MODELS / "mlp.bpte")
    assert b.bundled and b.program_offset % 16 == 0
    assert b.test_cases["forward"] >= 3
    assert b.method("forward").operators == m.operators


def test_wrong_magic_is_bad_program(tmp_path):
    data = bytearray((MODELS / "add.pte").read_bytes())
    data[4:8] = b"XX99"
    with pytest.raises(BadProgram, match="ET12"):
        read_program(tmp_path / "x.pte", bytes(data))


def test_truncated_is_bad_program(tmp_path):
    data = (MODELS / "mlp.pte").read_bytes()
    for n in (0, 7, 15, 200, len(data) // 2):
        with pytest.raises(BadProgram):
            read_program(tmp_path / "x.pte", data[:n])


def test_missing_operators_are_all_listed(monkeypatch, tmp_path):
    monkeypatch.setattr(kernels, "catalogue", lambda: {})
    with pytest.raises(MissingOperators) as e:
        bake.bake([MODELS / "mlp.pte"], board(), tmp_path)
    ops = read_program(MODELS / "mlp.pte").method("forward").operators
    assert sorted(e.value.ops) == sorted(set(ops))
    for op in ops:
        assert op in str(e.value)


def test_plan_that_does_not_fit_names_region_need_and_room(monkeypatch, tmp_path):
    monkeypatch.setattr(bake, "_check_ops", lambda progs: {})
    with pytest.raises(PlanDoesNotFit) as e:
        bake.bake([MODELS / "mlp.pte"], board(region_size=4096), tmp_path)
    assert e.value.region == "ram" and e.value.room == 4096 and e.value.need > 4096
    assert "ram" in str(e.value) and "4096" in str(e.value)


def test_unknown_arena_region_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setattr(bake, "_check_ops", lambda progs: {})
    with pytest.raises(BakeError, match="regions: ram"):
        bake.bake([MODELS / "add.pte"], board(), tmp_path, {"arena_region": "nowhere"})


def test_pool_formula_counts_every_allocation():
    m = read_program(MODELS / "mlp.pte").method("forward")
    c = m.counts
    assert c.values == m.values and c.tensors > 0 and c.chains == 1
    assert sum(n * k for n, k in c.instr_arrays.items()) == m.instructions
    # 64-bit targets need more than 32-bit ones (pointers), both are 8-aligned
    assert bake.pool_bytes(c, 8) > bake.pool_bytes(c, 4)
    assert bake.pool_bytes(c, 4) % 8 == 0


def test_kernel_state_is_in_the_pool_and_the_op_table(tmp_path):
    """ET_STATE operators (cortex_m depthwise and linear) get a block per call: counted in the pool, sized per op."""
    cat = kernels.catalogue()
    dw = cat["cortex_m::quantized_depthwise_conv2d.out"]
    assert dw.state > 0 and cat["aten::addmm.out"].state == 0
    res = bake.bake([MODELS / "cnn_cortex_m.pte"], board(), tmp_path)
    m = res.programs[0].method("forward")
    ops = [m.operators[oi] for oi, _ in m.kernel_calls if cat[m.operators[oi]].state]
    assert sorted(ops) == ["cortex_m::quantized_depthwise_conv2d.out", "cortex_m::quantized_linear.out"]
    assert m.counts.kernel_state == sum((cat[op].state + 7) // 8 * 8 for op in ops)
    src = "\n".join(p.read_text() for p in res.generated if p.suffix == ".c")
    assert f"{m.counts.kernel_state}u" in src and "et_op_state_0_0" in src
    plain = bake.bake([MODELS / "mlp.pte"], board(), tmp_path / "mlp")
    assert plain.programs[0].method("forward").counts.kernel_state == 0


def test_kernel_sources_bring_their_companions():
    """conv.c calls into conv_direct.c and conv_transpose.c (it includes their headers): a program with
    a convolution gets all three compiled; every kernel source is reachable from some operator."""
    names = {p.name for p in kernels.sources_for({"aten::convolution.out"})}
    assert {"conv.c", "conv_direct.c", "conv_transpose.c", "kernel_util.c"} <= names
    assert "linalg.c" not in names
    assert set(kernels.sources_for(set(kernels.catalogue()))) == set(kernels.kernel_files())
