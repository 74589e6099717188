"""Profiled runs on Corstone-300 under QEMU (etdump=1, SysTick cycles): the .etdp opens in
executorch's Inspector with the model's ETRecord, one event per executed instruction, named for
its operator; etdump=debug also carries each instruction's output, equal to the final output
for the last instruction."""
from pathlib import Path

import numpy as np
import pytest

from etdeploy import etdump, fbs
from etdeploy.pte import read_program
from support.boardrun import BUILD, build_and_run
from support.suite import MODELS, require_board

pytestmark = pytest.mark.emu


def expected_ops(pte):
    prog = read_program(pte)
    table = etdump.instr_table([prog])
    return [(i, table(0, 0, 0, i)) for i in range(prog.methods[0].instructions) if table(0, 0, 0, i)]


@pytest.mark.parametrize("name", ["mlp", "cnn", "mlp_cortex_m"])
def test_corstone300_profile_opens_in_inspector(name):
    from executorch.devtools import Inspector
    from executorch.devtools.inspector import TimeScale
    require_board("corstone300")
    pte = MODELS / f"{name}.pte"
    doc = build_and_run("corstone300", pte, "etdump=1")
    assert doc.get("status") == "pass", doc.get("reason")
    etdp = BUILD / "corstone300" / "run" / "etdump.etdp"
    ins = Inspector(etdump_path=str(etdp), etrecord=str(MODELS / f"{name}.etrecord"),
                    source_time_scale=TimeScale.CYCLES, target_time_scale=TimeScale.CYCLES)
    events = [e for b in ins.event_blocks if b.name == "Execute" for e in b.events if e.name != "Method::execute"]
    want = expected_ops(pte)
    assert [e._instruction_id for e in events] == [i for i, _ in want]
    assert [e.name for e in events] == ["native_call_" + op.split("::", 1)[1] for _, op in want]
    assert all(e.debug_handles is not None for e in events)
    assert sum(e.perf_data.raw[0] for e in events) > 0


def test_corstone300_debug_intermediates():
    require_board("corstone300")
    pte = MODELS / "mlp.pte"
    doc = build_and_run("corstone300", pte, "etdump=debug")
    assert doc.get("status") == "pass", doc.get("reason")
    run = BUILD / "corstone300" / "run"
    dump = fbs.Reader(fbs.etdump_schema(), (run / "etdump.etdp").read_bytes()[4:]).root()
    dbg = [e["debug_event"] for r in dump["run_data"] for e in r["events"] if e.get("debug_event")]
    assert len(dbg) == len(expected_ops(pte))
    last = dbg[-1]["debug_entry"]["tensor"]
    buf = (run / "etdump.debug.bin").read_bytes()
    n = int(np.prod(last["sizes"]))
    vals = np.frombuffer(buf, np.float32, count=n, offset=last["offset"]).reshape(last["sizes"])
    np.testing.assert_array_equal(vals, doc["arrays"][0])
