"""Runs that go wrong, builds that must repeat, memory that is one byte short, programs that cannot be
built (issue 8). Test images that hang or crash are the board's minimal image with another main,
compiled and linked with the exact commands SCons used for it."""
import dataclasses
import json
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from etdeploy import bake, config, errors, session
from support import custom_main

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "reliability"
MODELS = ROOT / "tests" / "models"
BOARD = "mps2-an386"
ETD = [sys.executable, "-m", "etdeploy.cli.main"]


def scons(*opts, timeout=600):
    return subprocess.run([sys.executable, "-m", "SCons", "-Q", *opts], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def _need_qemu():
    if not shutil.which("qemu-system-arm") or not shutil.which("arm-none-eabi-gcc"):
        pytest.skip("qemu-system-arm / arm-none-eabi-gcc not installed")


@pytest.fixture(scope="module")
def bad_images():
    """{'crash': elf, 'hang': elf} for mps2-an386."""
    _need_qemu()
    return custom_main.build(BOARD, CACHE / "images", custom_main.CRASH_OR_HANG_MAIN,
                             {"crash": ["-DTEST_CRASH"], "hang": []})


@pytest.mark.emu
def test_hang_is_a_timeout_with_exit_code_11(bad_images, tmp_path):
    board = config.load_board(BOARD)
    with pytest.raises(errors.RunTimeout) as e:
        session.run(board, bad_images["hang"], tmp_path / "lib", timeout=3, log=lambda m: None)
    assert e.value.result.status == "error" and "timeout" in e.value.result.reason
    doc = json.loads((tmp_path / "lib" / "result.json").read_text())
    assert doc["status"] == "error" and "timeout" in doc["reason"]
    p = subprocess.run([*ETD, "run", "--board", BOARD, "--elf", str(bad_images["hang"]), "--timeout", "3",
                        "--run-dir", str(tmp_path / "cli")], capture_output=True, text=True, timeout=60)
    assert p.returncode == 11, p.stdout + p.stderr


@pytest.mark.emu
def test_crash_is_a_fault_report_naming_the_function(bad_images, tmp_path):
    board = config.load_board(BOARD)
    with pytest.raises(errors.RunFault) as e:
        session.run(board, bad_images["crash"], tmp_path / "lib", timeout=20, log=lambda m: None)
    assert "et_test_crash_here" in str(e.value), str(e.value)
    doc = json.loads((tmp_path / "lib" / "result.json").read_text())
    assert doc["status"] == "error" and doc["fault"] and "et_test_crash_here" in doc["reason"]
    p = subprocess.run([*ETD, "run", "--board", BOARD, "--elf", str(bad_images["crash"]), "--timeout", "20",
                        "--run-dir", str(tmp_path / "cli")], capture_output=True, text=True, timeout=60)
    assert p.returncode == 12 and "et_test_crash_here" in p.stdout + p.stderr, p.stdout + p.stderr


@pytest.mark.emu
@pytest.mark.parametrize("binary, cls", [("qemu-system-etdeploy-absent", errors.EmulatorMissing),
                                         ("false", errors.RunError)])
def test_emulator_missing_or_failing_to_start_is_never_a_pass(bad_images, tmp_path, binary, cls):
    board = config.load_board(BOARD)
    board = dataclasses.replace(board, emulator=dataclasses.replace(board.emulator, binary=binary))
    with pytest.raises(cls) as e:
        session.run(board, bad_images["crash"], tmp_path, timeout=10, log=lambda m: None)
    msg = str(e.value)
    assert binary in msg or "exited" in msg or "not installed" in msg, msg
    doc = tmp_path / "result.json"
    assert not doc.exists() or json.loads(doc.read_text())["status"] != "pass"


@pytest.mark.emu
def test_two_boards_built_and_run_concurrently_do_not_interfere(tmp_path):
    _need_qemu()
    bdir = CACHE / "concurrent"
    shutil.rmtree(bdir, ignore_errors=True)
    res = {}

    def go(board, pte):
        res[board] = scons(f"board={board}", f"build_dir={bdir}", f"pte={MODELS / pte}", "run=1")
    ts = [threading.Thread(target=go, args=a) for a in (("mps2-an386", "add.bpte"), ("host", "mlp.bpte"))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for board, pte in (("mps2-an386", "add.bpte"), ("host", "mlp.bpte")):
        p = res[board]
        assert p.returncode == 0, f"{board}: {p.stdout[-2000:]}{p.stderr[-2000:]}"
        doc = json.loads((bdir / board / "run" / "result.json").read_text())
        assert doc["status"] == "pass" and doc["board"] == board, doc
        assert doc["result"]["cases"] >= 1 and doc["result"]["cases_failed"] == 0
        baked = json.loads((bdir / board / "gen" / "bake.json").read_text()) if (bdir / board / "gen" / "bake.json").exists() \
            else json.loads(next((bdir / board).rglob("bake.json")).read_text())
        assert all(Path(p).suffix == ".bpte" and Path(p).stat().st_size == (MODELS / pte).stat().st_size
                   for p in baked["programs"])


@pytest.mark.build
@pytest.mark.parametrize("board", ["mps2-an386", "host"])
def test_two_clean_builds_are_byte_identical(board):
    if board != "host":
        _need_qemu()
    bdir = CACHE / "repro"
    digests = []
    for _ in range(2):
        shutil.rmtree(bdir / board, ignore_errors=True)
        p = scons(f"board={board}", f"build_dir={bdir}", f"pte={MODELS / 'cnn.bpte'}")
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
        files = sorted(f for f in (bdir / board).iterdir()
                       if f.suffix in (".elf", ".bin", ".hex", ".uf2", "") and f.is_file() and f.name.startswith("firmware"))
        assert any(f.suffix == ".elf" for f in files) or files, list((bdir / board).iterdir())
        digests.append({f.name: f.read_bytes() for f in files})
    assert digests[0].keys() == digests[1].keys()
    for name in digests[0]:
        assert digests[0][name] == digests[1][name], f"{board}: {name} differs between two clean builds"


@pytest.mark.build
@pytest.mark.parametrize("fixture", ["cnn.bpte", "two_methods.bpte", "mlp_cortex_m.bpte"])
def test_pool_one_byte_too_small_fails_at_load_with_out_of_memory(fixture, monkeypatch, tmp_path):
    """The generated pool is bake's exact C expression; one byte less must fail at method load with a
    named out-of-memory error, never later during execution."""
    from support import hostrun
    exact = bake.pool_expr
    monkeypatch.setattr(bake, "pool_expr", lambda counts: f"({exact(counts)} - 1u)")
    exe, progs = hostrun.build(MODELS / fixture, {"reliability_test": "pool-minus-one"})
    assert "- 1u)" in (exe.parent / "et_model.gen.c").read_text()
    with pytest.raises(errors.RunOutOfMemory) as e:
        session.run(hostrun.host_board(), exe, tmp_path, timeout=60, programs=progs, log=lambda m: None)
    res = e.value.result
    assert "out of memory" in res.reason and "method pool" in res.reason, res.reason
    err = res.errors[0]
    assert err["detail"] > err["detail2"]
    # At load: no method ran, nothing was executed or sent (error.instruction, when set, is the one loading).
    assert not res.methods and not res.outputs and not res.cases and res.result["methods_run"] == 0
    doc = json.loads((tmp_path / "result.json").read_text())
    assert doc["status"] == "error"


# -------------------------------------------------------------------------- bad programs at build time

def _bake(tmp_path, data: bytes, name="bad.pte", board="mps2-an386", opts=None):
    f = tmp_path / name
    f.write_bytes(data)
    return bake.bake([f], config.load_board(board), tmp_path / "gen", opts or {})


def _one_line_cause_and_remedy(e: Exception, *words):
    msg = str(e)
    first = msg.splitlines()[0]
    assert first.strip(), msg
    for w in words:
        assert w.lower() in msg.lower(), msg
    assert re.search(r"re-export|export|pass |choose|add kernels|use |give|larger|smaller", msg, re.I), \
        f"no 'what to do' in: {msg}"


@pytest.mark.unit
def test_wrong_magic(tmp_path):
    data = bytearray((MODELS / "add.pte").read_bytes())
    data[4:8] = b"XXXX"
    with pytest.raises(errors.BadProgram) as e:
        _bake(tmp_path, bytes(data))
    _one_line_cause_and_remedy(e.value, "identifier")


@pytest.mark.unit
def test_unsupported_schema_version(tmp_path):
    data = bytearray((MODELS / "add.pte").read_bytes())
    data[4:8] = b"ET13"
    with pytest.raises(errors.BadProgram) as e:
        _bake(tmp_path, bytes(data))
    _one_line_cause_and_remedy(e.value, "ET13", "version")


@pytest.mark.unit
def test_missing_operator(tmp_path):
    data = (MODELS / "add.pte").read_bytes()
    assert data.count(b"aten::add") == 1
    with pytest.raises(errors.MissingOperators) as e:
        _bake(tmp_path, data.replace(b"aten::add", b"aten::zzz"))
    _one_line_cause_and_remedy(e.value, "aten::zzz")


@pytest.mark.unit
def test_unknown_delegate(tmp_path):
    data = (MODELS / "add_ethos_u.pte").read_bytes()
    assert b"EthosUBackend" in data
    with pytest.raises(errors.BakeError) as e:
        _bake(tmp_path, data.replace(b"EthosUBackend", b"MysteryBacknd"))
    _one_line_cause_and_remedy(e.value, "MysteryBacknd")


@pytest.mark.unit
def test_arena_too_big_for_every_region(tmp_path):
    board = config.load_board("mps2-an386")
    prog = bake.read_program(MODELS / "cnn.pte")
    need = max(max(m.arenas) for m in prog.methods)
    small = dataclasses.replace(board, regions=tuple(dataclasses.replace(r, size=need // 2) for r in board.regions))
    for region in [None, *[r.name for r in board.regions]]:
        with pytest.raises(errors.PlanDoesNotFit) as e:
            bake.bake([MODELS / "cnn.pte"], small, tmp_path / "gen", {"arena_region": region} if region else {})
        _one_line_cause_and_remedy(e.value, "needs", "room", e.value.region)
        assert e.value.need > e.value.room


# A program with a bounded dynamic first dim (n <= 8), bundled once with cases inside the bounds and
# once with a case beyond them. Exported with the real executorch on first use, cached.
DYN_SRC = r'''
import sys, torch
from torch.export import export, Dim
from executorch.exir import to_edge_transform_and_lower
from executorch.devtools import BundledProgram
from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer
class M(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2
m, out = M().eval(), sys.argv[1]
ep = export(m, (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("n", min=1, max=8)}})
prog = to_edge_transform_and_lower(ep).to_executorch()
open(f"{out}/dyn.pte", "wb").write(prog.buffer)
torch.manual_seed(0)
for name, rows in (("dyn", (2, 8)), ("dyn_over", (12,))):
    cases = [MethodTestCase(inputs=(x,), expected_outputs=(m(x),)) for x in (torch.randn(r, 3) for r in rows)]
    data = serialize_from_bundled_program_to_flatbuffer(BundledProgram(prog, [MethodTestSuite("forward", cases)]))
    open(f"{out}/{name}.bpte", "wb").write(data)
'''


@pytest.fixture(scope="module")
def dynamic_programs():
    import hashlib
    d = CACHE / ("dyn-" + hashlib.sha256(DYN_SRC.encode()).hexdigest()[:12])
    if not (d / "dyn_over.bpte").exists():
        d.mkdir(parents=True, exist_ok=True)
        p = subprocess.run([sys.executable, "-c", DYN_SRC, str(d)], capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-3000:]
    return d


@pytest.mark.unit
def test_bundled_case_beyond_dynamic_bounds_fails_at_build(dynamic_programs, tmp_path):
    board = config.load_board("mps2-an386")
    bake.bake([dynamic_programs / "dyn.bpte"], board, tmp_path / "ok", {})    # inside the bounds: fine
    with pytest.raises(errors.BadProgram) as e:
        bake.bake([dynamic_programs / "dyn_over.bpte"], board, tmp_path / "gen", {})
    _one_line_cause_and_remedy(e.value, "case 0 input 0", "[12, 3]", "upper bounds [8, 3]")


@pytest.mark.build
def test_dynamic_shapes_run_inside_bounds_and_inputs_beyond_are_refused(dynamic_programs):
    import numpy as np
    from support.hostrun import run_host
    x = np.arange(-9, 9, dtype=np.float32).reshape(6, 3)
    (out,) = run_host(dynamic_programs / "dyn.pte", inputs=[x])
    assert out.shape == (6, 3) and np.array_equal(out, np.maximum(x, 0) * 2)
    for bad, words in ((np.ones((9, 3), np.float32), "upper bounds [8, 3]"),
                       (np.ones((2, 3), np.float64), "float64"), (np.ones((2, 3, 1), np.float32), "rank")):
        with pytest.raises(errors.BadInputs) as e:
            run_host(dynamic_programs / "dyn.pte", inputs=[bad])
        _one_line_cause_and_remedy(e.value, words)
        assert e.value.exit_code == 19
