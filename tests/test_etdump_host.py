"""Profiled host runs (etdump=1): the .etdp we rebuild from the link opens in executorch's
Inspector with the model's ETRecord, with one event per executed instruction, named for the
operator the program calls there."""
import json
from pathlib import Path

import pytest

from etdeploy import etdump
from etdeploy.pte import read_program
from support.hostrun import build, run_host
from support.suite import MODELS, cpu_fixtures


def kernel_instructions(pte, mi=0):
    prog = read_program(pte)
    table = etdump.instr_table([prog])
    m = prog.methods[mi]
    return [(i, table(0, mi, 0, i)) for i in range(m.instructions)]


def single_method(name):
    return len(read_program(MODELS / f"{name}.pte").methods) == 1


@pytest.mark.build
@pytest.mark.parametrize("name", [n for n in cpu_fixtures() if single_method(n)])
def test_profiled_run_opens_in_inspector(name):
    from executorch.devtools import Inspector
    from executorch.devtools.inspector import TimeScale
    pte = MODELS / f"{name}.pte"
    run_host(pte, opts={"etdump": 1})
    exe, _ = build(pte, {"etdump": 1})
    run_dir = exe.parent / "run"
    doc = json.loads((run_dir / "result.json").read_text())
    assert doc["status"] == "pass", doc["reason"]
    etdp = run_dir / "etdump.etdp"
    assert etdp.exists()
    ins = Inspector(etdump_path=str(etdp), etrecord=str(MODELS / f"{name}.etrecord"),
                    source_time_scale=TimeScale.NS, target_time_scale=TimeScale.NS)
    blocks = [b for b in ins.event_blocks if b.name == "Execute"]
    assert len(blocks) == 1
    events = [e for e in blocks[0].events if e.name != "Method::execute"]
    expected = [(i, op) for i, op in kernel_instructions(pte) if op is not None]
    assert [e._instruction_id for e in events] == [i for i, _ in expected]
    for e, (_, op) in zip(events, expected):
        assert e.name == "native_call_" + op.split("::", 1)[1]
        assert e.perf_data is not None and e.perf_data.raw[0] >= 0
        assert e.debug_handles is not None, f"{e.name}: not linked to the ETRecord"


@pytest.mark.build
@pytest.mark.parametrize("name", [n for n in cpu_fixtures() if not single_method(n)])
def test_profiled_multi_method_program_has_one_run_per_method(name):
    # executorch 1.5.1's Inspector cannot read a multi-method ETRecord (it expects one graph
    # module), so the dump is opened without it and checked against the program itself.
    from executorch.devtools import Inspector
    from executorch.devtools.inspector import TimeScale
    pte = MODELS / f"{name}.pte"
    run_host(pte, opts={"etdump": 1})
    exe, _ = build(pte, {"etdump": 1})
    ins = Inspector(etdump_path=str(exe.parent / "run" / "etdump.etdp"), source_time_scale=TimeScale.NS,
                    target_time_scale=TimeScale.NS)
    prog = read_program(pte)
    blocks = [b for b in ins.event_blocks if b.name == "Execute"]
    assert len(blocks) == len(prog.methods)
    for mi, b in enumerate(blocks):
        names = [e.name for e in b.events if e.name != "Method::execute"]
        want = ["native_call_" + op.split("::", 1)[1] for _, op in kernel_instructions(pte, mi) if op]
        assert names == want


@pytest.mark.build
def test_etdump_cli_table_picture_and_compare(tmp_path):
    import subprocess
    import sys
    pte = MODELS / "cnn.pte"
    run_host(pte, opts={"etdump": 1})
    exe, _ = build(pte, {"etdump": 1})
    etdp = exe.parent / "run" / "etdump.etdp"
    svg = tmp_path / "p.svg"
    p = subprocess.run([sys.executable, "-m", "etdeploy.cli.main", "etdump", str(etdp), "--svg", str(svg),
                        "--compare", str(etdp)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "convolution.out" in p.stdout and "1.00x" in p.stdout
    text = svg.read_text()
    assert text.startswith("<svg") and "convolution.out" in text and "timeline" in text
