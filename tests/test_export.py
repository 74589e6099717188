"""etdeploy export: model specs, the flow a board's data names, calibration files, the re-export
stamp (unit); and, slow, the real executorch flows for a board, baked and (CPU flows) run on QEMU."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from etdeploy import config
from etdeploy.cli.main import build_parser
from etdeploy.errors import EtdeployError
from etdeploy.export_spec import (ModelSpec, calibration_samples, flow_for_board, needs_export, npu_options,
                                  stamp)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = "examples/mnist_mlp.py:MnistMLP"


@pytest.mark.unit
def test_model_spec_parse(tmp_path):
    s = ModelSpec.parse(EXAMPLE, ROOT)
    assert s.file == ROOT / "examples" / "mnist_mlp.py" and s.name == "MnistMLP"
    for bad in ("examples/mnist_mlp.py", "model.pte:x", ":x"):
        with pytest.raises(EtdeployError, match="expected <file.py>:<name>"):
            ModelSpec.parse(bad, ROOT)
    with pytest.raises(EtdeployError, match="not found"):
        ModelSpec.parse("nope.py:M", tmp_path)


@pytest.mark.unit
@pytest.mark.parametrize("board,quantize,flow", [
    ("corstone300", False, "portable"), ("corstone300", True, "ethos_u"), ("corstone320", True, "ethos_u"),
    ("mps2-an386", True, "cortex_m"), ("pico2", True, "cortex_m"), ("host", True, "xnnpack_q8"), ("host", False, "xnnpack"),
    ("android-arm64", True, "xnnpack_q8"), ("android-arm64", False, "xnnpack"), ("xtensa-sim", False, "portable"), ("xtensa-sim", True, "pt2e"),
])
def test_flow_from_board_data(board, quantize, flow):
    assert flow_for_board(config.load_board(board), quantize) == flow


@pytest.mark.unit
def test_flow_override_and_npu_options():
    b = config.load_board("corstone300")
    assert flow_for_board(b, True, "cortex_m") == "cortex_m"
    with pytest.raises(EtdeployError, match="needs a board with an Ethos-U NPU"):
        flow_for_board(config.load_board("host"), True, "ethos_u")
    assert npu_options(config.load_board("corstone320")) == {
        "target": "ethos-u85-256", "system_config": "Ethos_U85_SYS_DRAM_Mid", "memory_mode": "Dedicated_Sram_384KB"}


@pytest.mark.unit
def test_calibration_file_shapes(tmp_path):
    import torch
    ex = (torch.zeros(1, 784),)
    np.save(tmp_path / "c.npy", np.random.rand(5, 1, 784).astype(np.float32))
    assert len(calibration_samples(tmp_path / "c.npy", ex)) == 5
    np.save(tmp_path / "d.npy", np.random.rand(7, 784).astype(np.float32))   # N x 784 for a 1 x 784 input
    s = calibration_samples(tmp_path / "d.npy", ex)
    assert len(s) == 7 and tuple(s[0][0].shape) == (1, 784)
    np.save(tmp_path / "e.npy", np.random.rand(3, 10).astype(np.float32))
    with pytest.raises(EtdeployError, match="shape"):
        calibration_samples(tmp_path / "e.npy", ex)
    np.savez(tmp_path / "f.npz", np.zeros((2, 1, 784), np.float32), np.zeros((2, 1, 3), np.float32))
    with pytest.raises(EtdeployError, match="2 array"):
        calibration_samples(tmp_path / "f.npz", ex)


@pytest.mark.unit
def test_reexport_stamp(tmp_path):
    model = tmp_path / "m.py"
    model.write_text("X = 1\n")
    spec = ModelSpec.parse("m.py:X", tmp_path)
    b = config.load_board("corstone300")
    want = stamp(spec, b, "cortex_m", [], None, 2)
    assert needs_export(tmp_path, "X", want)
    for ext in ("pte", "bpte", "etrecord"):
        (tmp_path / f"X.{ext}").write_bytes(b"x")
    (tmp_path / "X.export.json").write_text(json.dumps(want))
    assert not needs_export(tmp_path, "X", want)
    assert needs_export(tmp_path, "X", stamp(spec, b, "pt2e", [], None, 2))          # option changed
    model.write_text("X = 2\n")
    assert needs_export(tmp_path, "X", stamp(spec, b, "cortex_m", [], None, 2))      # model changed


@pytest.mark.unit
def test_cli_registers_export():
    args = build_parser().parse_args(["export", EXAMPLE, "--board", "corstone300", "--quantize",
                                      "--calibration", "c.npy", "-o", "out"])
    assert args.command == "export" and args.quantize and args.calibration == "c.npy" and args.out_dir == "out"


@pytest.mark.unit
def test_run_and_build_hint_take_paths_from_where_the_user_is(tmp_path, monkeypatch):
    """scons runs in the project root; `etdeploy run --pte out/m.bpte` from elsewhere means the user's out/."""
    from etdeploy.cli import export as export_cli, run as run_cli
    calls = []
    monkeypatch.setattr(subprocess, "call", lambda cmd, cwd=None: calls.append((cmd, cwd)) or 7)
    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(["run", "--board", "host", "--pte", "out/a.bpte,b.pte"])
    assert run_cli.main(args) == 7
    (cmd, cwd), = calls
    assert f"pte={tmp_path / 'out' / 'a.bpte'},{tmp_path / 'b.pte'}" in cmd and Path(cwd) == ROOT
    hint = export_cli._scons_hint("host", Path("out/a.bpte"))
    assert hint == f"scons -C {ROOT} board=host pte={tmp_path / 'out' / 'a.bpte'}"


def _export(tmp_path, board, *extra):
    r = subprocess.run([sys.executable, "-m", "etdeploy.cli.main", "export", EXAMPLE, "--board", board,
                        "-o", str(tmp_path), *extra], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


@pytest.mark.unit
def test_model_file_importing_torchvision_loads(tmp_path):
    """A user's model file built from torchvision's definitions loads although torchvision's compiled ops do
    not load against this torch (etdeploy.torchvision_compat); a fresh interpreter, so nothing is imported."""
    f = tmp_path / "tvnet.py"
    f.write_text("import torchvision.models as tv\n\n\ndef net():\n"
                 "    return tv.squeezenet1_1(weights=None, num_classes=3)\n")
    code = ("import sys, torch; from etdeploy.export_spec import ModelSpec, load_model; "
            f"m = load_model(ModelSpec.parse({str(f) + ':net'!r}))[0]; "
            "print(tuple(m(torch.randn(1, 3, 64, 64)).shape))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    if "No module named 'torchvision'" in r.stderr:
        pytest.skip("torchvision not installed (requirements-vision.txt)")
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().endswith("(1, 3)")


@pytest.mark.slow
@pytest.mark.emu
@pytest.mark.parametrize("flow", ["portable", "pt2e", "cortex_m"])
def test_cpu_flow_exports_bakes_and_runs_on_corstone300_qemu(tmp_path, flow):
    from conftest import need_tool
    need_tool("arm-none-eabi-gcc", "gcc-arm-none-eabi")
    need_tool("qemu-system-arm", "qemu-system-arm")
    out = _export(tmp_path, "corstone300", "--flow", flow, *(["--quantize"] if flow != "portable" else []))
    assert f"flow      {flow}" in out
    # the MAC table: the MLP's linears run in int8 only in the cortex_m flow (pt2e dequantizes around them)
    assert ("MACs in int8" in out) and (("100.0% in int8" in out) == (flow == "cortex_m")), out
    bpte = tmp_path / "MnistMLP.bpte"
    assert bpte.exists() and (tmp_path / "MnistMLP.etrecord").exists()
    r = subprocess.run([sys.executable, "-m", "SCons", "-Q", "board=corstone300", f"pte={bpte}", "run=1",
                        f"build_dir={tmp_path / 'build'}"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    res = json.loads((tmp_path / "build" / "corstone300" / "run" / "result.json").read_text())
    assert "test cases: 2/2 passed" in r.stdout, res


@pytest.mark.slow
@pytest.mark.build
@pytest.mark.parametrize("board,scratch,fast", [("corstone300", "isram", None), ("corstone320", "ddr", "isram")])
def test_ethos_u_flow_exports_for_the_board_npu_and_places_buffers(tmp_path, board, scratch, fast):
    from conftest import need_tool
    need_tool("arm-none-eabi-gcc", "gcc-arm-none-eabi")
    out = _export(tmp_path, board, "--quantize")
    assert "delegates EthosUBackend" in out and "vela      forward" in out
    r = subprocess.run([sys.executable, "-m", "SCons", "-Q", f"board={board}", f"pte={tmp_path / 'MnistMLP.bpte'}",
                        "ethosu_driver=plan", f"build_dir={tmp_path / 'build'}"], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    rep = json.loads((tmp_path / "build" / board / "report.json").read_text())
    placed = {p["name"]: p["region"] for p in rep["placed"]}
    assert placed["et_npu_scratch_0_0_0"] == scratch
    assert placed.get("et_npu_fast_scratch") == fast
