"""Every CPU fixture on every board that runs here (QEMU corstone300 and mps2-an386, QEMU Xtensa,
qemu-aarch64 for android-arm64, the host), built and run with scons: bundled test cases pass
against expected outputs, outputs for the default all-ones inputs equal the real executorch
runtime's (cortex_m:: programs: the package's Python reference ops), and the method pool is used
to the byte."""

import numpy as np
import pytest

from support.boardrun import build_and_run
from support.compare import assert_close
from support.suite import MODELS, RUN_BOARDS, cpu_fixtures, require_board
# Soft-float Xtensa runs the big float models slowly; they are covered on the other boards.
SLOW_ON = {"xtensa-sim": {"mlp", "mlp_pt2e"}}


def board_param(boards):
    return [pytest.param(b, marks=pytest.mark.emu, id=b) for b in boards]


def image_of(board, suffix):
    """All CPU fixtures in one image (one build and one emulator start per board): the runtime
    carries several programs, and the result names the program that failed."""
    names = [n for n in cpu_fixtures() if (MODELS / f"{n}{suffix}").exists()
             and n not in SLOW_ON.get(board, ())]
    return names, ",".join(str(MODELS / f"{n}{suffix}") for n in names)


def why(doc, names):
    errs = doc.get("errors") or []
    who = [names[e["program"]] for e in errs if e.get("program") is not None and e["program"] < len(names)]
    return f"{doc.get('reason')} (program {who})\n{doc['_stdout'][-1500:]}{doc['_stderr'][-1500:]}"


def reference_ones(name):
    npz = MODELS / f"{name}.ones.npz"
    if npz.exists():
        z = np.load(npz)
        keys = [k for k in z.files if k.rsplit(".", 1)[0] == "forward"]   # "<method>.<output index>"
        return [z[k] for k in sorted(keys, key=lambda k: int(k.rsplit(".", 1)[1]))]
    from etdeploy import oracle
    return oracle.run_cortex_m_reference(MODELS / f"{name}.pte")


@pytest.mark.parametrize("board", board_param(RUN_BOARDS))
def test_bundled_cases_pass(board):
    require_board(board)
    names, ptes = image_of(board, ".bpte")
    doc = build_and_run(board, ptes, timeout=1200)
    assert doc.get("status") == "pass", f"{board}: {why(doc, names)}"
    assert doc["result"]["cases_failed"] == 0 and doc["result"]["cases"] >= 3 * len(names)
    assert {c["program"] for c in doc["cases"]} == set(range(len(names)))
    for m in doc["methods"]:
        assert m["pool_used"] == m["pool_size"], f"{names[m['program']]}:{m['name']}: pool not exact"


@pytest.mark.slow
@pytest.mark.parametrize("board,name", [pytest.param(b, n, marks=pytest.mark.emu, id=f"{b}-{n}")
                                        for b, ns in SLOW_ON.items() for n in sorted(ns)])
def test_bundled_cases_pass_slow(board, name):
    require_board(board)
    doc = build_and_run(board, MODELS / f"{name}.bpte", timeout=1200)
    assert doc.get("status") == "pass", f"{board}/{name}: {why(doc, [name])}"


@pytest.mark.parametrize("board", board_param(["corstone300", "host"]))
def test_ones_outputs_equal_reference(board):
    require_board(board)
    names, ptes = image_of(board, ".pte")
    doc = build_and_run(board, ptes, timeout=1200)
    assert doc.get("status") == "pass", f"{board}: {why(doc, names)}"
    for pi, name in enumerate(names):
        first = [a for a, o in zip(doc["arrays"], doc["outputs"]) if o["program"] == pi and o["method"] == "forward"]
        assert_close(first, reference_ones(name), f"{board}/{name}")


@pytest.mark.emu
def test_several_programs_and_methods_in_one_image():
    require_board("corstone300")
    ptes = ",".join(str(MODELS / f) for f in ("ops_arith.bpte", "two_methods.bpte", "add.pte"))
    doc = build_and_run("corstone300", ptes)
    assert doc.get("status") == "pass", doc.get("reason")
    assert doc["result"]["methods_run"] == 4 and doc["result"]["cases"] == 9
    assert sorted({(o["program"], o["method"]) for o in doc["outputs"]}) == \
        [(0, "forward"), (1, "combine"), (1, "forward"), (2, "forward")]
