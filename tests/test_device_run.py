"""Runs on a board (issue 20), against a stand-in board: QEMU started halted with no image, its
gdbstub standing for the probe's GDB server and its UART on a TCP socket for the USB serial port
(tests/support/standin.py). `etdeploy run --gdb ... --port socket://...` flashes through
gdb-multiarch and judges the run exactly as the emulator runner does."""
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import serial

from conftest import ROOT, need_tool
from etdeploy import config, flash, session
from etdeploy.faultproxy import FaultProxy
from etdeploy.runners.serialport import SerialDeviceRunner
from support import custom_main
from support.compare import assert_close
from support.standin import StandIn

MODELS = ROOT / "tests" / "models"
CACHE = ROOT / ".cache" / "device_run" / os.environ.get("PYTEST_XDIST_WORKER", "main")
ETD = [sys.executable, "-m", "etdeploy.cli.main"]
# mps2-an386 with profiling events and values (etdump=debug): a run long enough on the wire for the
# damaged-line test, and the .etdp a device run must write as the emulator run does.
PROGRAMS = {"corstone300": ("add.bpte",), "mps2-an386": ("cnn.bpte", "etdump=debug")}
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tools"), os.environ.get("PYTHONPATH", "")])}

pytestmark = [pytest.mark.build, pytest.mark.emu]


def etdeploy(*args, timeout=120):
    return subprocess.run([*ETD, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=ENV)


def _tools():
    need_tool("arm-none-eabi-gcc", "gcc-arm-none-eabi")
    need_tool("qemu-system-arm", "qemu-system-arm")
    need_tool("gdb-multiarch", "gdb-multiarch")


@pytest.fixture(scope="module")
def images():
    """{board: firmware.elf} with the board's bundled program."""
    _tools()
    out = {}
    for board, (prog, *opts) in PROGRAMS.items():
        p = subprocess.run([sys.executable, "-m", "SCons", "-Q", f"board={board}", f"pte={MODELS / prog}", *opts,
                            f"build_dir={CACHE / 'img'}"], cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
        out[board] = CACHE / "img" / board / "firmware.elf"
    return out


@pytest.fixture(scope="module")
def emulator_results(images):
    """The emulator runner's result.json for each image: what a device run must equal."""
    docs = {}
    for board, elf in images.items():
        rd = CACHE / "emu" / board
        session.run(config.load_board(board), elf, rd, timeout=60, log=lambda m: None)
        docs[board] = json.loads((rd / "result.json").read_text())
    return docs


def _same_run(dev: dict, emu: dict, run_dir: Path | None = None):
    assert dev["status"] == emu["status"] == "pass", dev["reason"]
    assert ("etdump" in dev) == ("etdump" in emu)
    if "etdump" in emu:   # the same profile (cycle counts differ run to run without -icount)
        assert not dev["etdump"].get("partial") and (run_dir / "etdump.etdp").stat().st_size > 0
        keys = ("runs", "complete", "dropped", "events")
        assert [dev["etdump"].get(k) for k in keys] == [emu["etdump"].get(k) for k in keys], (dev, emu["etdump"])
    assert [(c["case"], c["passed"]) for c in dev["cases"]] == [(c["case"], c["passed"]) for c in emu["cases"]]
    assert len(dev["outputs"]) == len(emu["outputs"]) > 0
    for d, e in zip(dev["outputs"], emu["outputs"]):
        assert (d["method"], d.get("case"), d["index"]) == (e["method"], e.get("case"), e["index"])
        assert_close([np.asarray(d["values"], dtype=d["dtype"])], [np.asarray(e["values"], dtype=e["dtype"])],
                     f"{d['method']} case {d.get('case')}", exact=True)


@pytest.mark.parametrize("board", sorted(PROGRAMS))
def test_bundled_program_on_standin_board_equals_emulator_run(board, images, emulator_results, tmp_path):
    with StandIn(board) as b:
        p = etdeploy("run", "--board", board, "--elf", str(images[board]), "--gdb", b.gdb, "--port", b.port,
                     "--run-dir", str(tmp_path), "--timeout", "60")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "PASS: ok" in p.stdout
    _same_run(json.loads((tmp_path / "result.json").read_text()), emulator_results[board], tmp_path)


def test_board_key_gdb_flash_method(images, emulator_results, tmp_path):
    """`[flash] method = "gdb"` in a board file: the run's default flash step goes through it."""
    d = tmp_path / "boards"
    d.mkdir()
    (d / "corstone300.toml").write_text((ROOT / "boards" / "corstone300.toml").read_text())
    with StandIn("corstone300") as b:
        (d / "desk.toml").write_text(f'extends = "corstone300"\n[flash]\nmethod = "gdb"\ntarget = "{b.gdb}"\n')
        board = config.load_board("desk", d)
        logs = []
        r = SerialDeviceRunner(board, b.port, flash=lambda elf: flash.flash(board, Path(elf).parent, log=logs.append))
        res = session.run(board, images["corstone300"], tmp_path / "run", timeout=60, runner=r, log=logs.append)
    assert res.status == "pass"
    assert any("section(s) verified" in m for m in logs), logs
    _same_run(json.loads((tmp_path / "run" / "result.json").read_text()), emulator_results["corstone300"])


@pytest.fixture(scope="module")
def bad_images():
    _tools()
    return custom_main.build("mps2-an386", CACHE / "bad", custom_main.CRASH_OR_HANG_MAIN,
                             {"crash": ["-DTEST_CRASH"], "hang": []})


def test_fault_on_board_exits_12_naming_the_function(bad_images, tmp_path):
    with StandIn("mps2-an386") as b:
        p = etdeploy("run", "--board", "mps2-an386", "--elf", str(bad_images["crash"]), "--gdb", b.gdb,
                     "--port", b.port, "--run-dir", str(tmp_path), "--timeout", "30")
    assert p.returncode == 12, p.stdout + p.stderr
    assert "et_test_crash_here" in p.stderr
    assert json.loads((tmp_path / "result.json").read_text())["status"] == "error"


def test_hang_on_board_exits_11(bad_images, tmp_path):
    with StandIn("mps2-an386") as b:
        p = etdeploy("run", "--board", "mps2-an386", "--elf", str(bad_images["hang"]), "--gdb", b.gdb,
                     "--port", b.port, "--run-dir", str(tmp_path), "--timeout", "3")
    assert p.returncode == 11, p.stdout + p.stderr
    assert "timeout" in p.stderr and "PASS" not in p.stdout


def test_damaged_serial_line_never_passes_wrongly(images, emulator_results, tmp_path):
    """1e-3 byte errors on the board's UART: the right result or link errors (16), never a wrong pass."""
    seen = 0
    for seed in (1, 2):
        with StandIn("mps2-an386") as b:
            proxy = FaultProxy(b.uart_port, rate=1e-3, seed=seed)
            try:
                rd = tmp_path / str(seed)
                p = etdeploy("run", "--board", "mps2-an386", "--elf", str(images["mps2-an386"]), "--gdb", b.gdb,
                             "--port", f"socket://127.0.0.1:{proxy.port}", "--run-dir", str(rd), "--timeout", "60")
            finally:
                proxy.close()
        seen += proxy.stats.faults
        assert p.returncode in (0, 16), p.stdout[-1500:] + p.stderr[-1500:]
        doc = json.loads((rd / "result.json").read_text())
        if p.returncode == 0:
            _same_run(doc, emulator_results["mps2-an386"], rd)
        else:
            assert doc["status"] != "pass" and "link errors" in p.stderr
    assert seen > 0, "the proxy damaged nothing: the test proved nothing"


def test_bad_input_is_one_line_and_never_a_pass(images, tmp_path):
    elf = str(images["corstone300"])
    with StandIn("mps2-an386") as b:   # an image for another core
        p = etdeploy("run", "--board", "corstone300", "--elf", elf, "--gdb", b.gdb, "--port", b.port,
                     "--run-dir", str(tmp_path / "a"))
    assert p.returncode == 20 and "cortex-m4" in p.stderr and "nothing written" in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1
    # An image whose model lands where this board has no memory: the load "succeeds", verification does not.
    moved = tmp_path / "moved" / "firmware.elf"
    moved.parent.mkdir()
    subprocess.run(["arm-none-eabi-objcopy", "--change-section-address", ".et_model=0x90000000",
                    str(images["mps2-an386"]), str(moved)], check=True, capture_output=True)
    with StandIn("mps2-an386") as b:
        p = etdeploy("run", "--board", "mps2-an386", "--elf", str(moved), "--gdb", b.gdb, "--port", b.port,
                     "--run-dir", str(tmp_path / "a"))
    assert p.returncode == 20 and "Section .et_model" in p.stderr and "MIS-MATCHED" in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1
    cases = [
        (["--gdb", "127.0.0.1:1", "--port", "socket://127.0.0.1:1"], 21, "cannot open serial port socket://127.0.0.1:1"),
        (["--no-flash", "--port", "/dev/ttyETDEPLOY-NONE"], 21, "cannot open serial port /dev/ttyETDEPLOY-NONE"),
    ]
    for extra, code, text in cases:
        p = etdeploy("run", "--board", "corstone300", "--elf", elf, *extra, "--run-dir", str(tmp_path / "b"))
        assert (p.returncode, p.stderr.count("\n")) == (code, 1) and text in p.stderr, p.stderr
    master, slave = os.openpty()     # a busy port: another program holds it (exclusively, as we would)
    try:
        with serial.Serial(os.ttyname(slave), 115200, exclusive=True):
            p = etdeploy("run", "--board", "corstone300", "--elf", elf, "--no-flash", "--port", os.ttyname(slave),
                         "--run-dir", str(tmp_path / "b"))
    finally:
        os.close(master)
        os.close(slave)
    assert (p.returncode, p.stderr.count("\n")) == (10, 1) and "in use by another program" in p.stderr, p.stderr
    p = etdeploy("flash", "--board", "corstone300", "--image-dir", str(Path(elf).parent), "--gdb", "127.0.0.1:1")
    assert p.returncode == 21 and "no GDB server at 127.0.0.1:1" in p.stderr, p.stderr
    with socket.socket() as quiet:   # a port that opens and never says anything
        quiet.bind(("127.0.0.1", 0))
        quiet.listen(1)
        url = f"socket://127.0.0.1:{quiet.getsockname()[1]}"
        p = etdeploy("run", "--board", "corstone300", "--elf", elf, "--no-flash", "--port", url, "--baud", "9600",
                     "--run-dir", str(tmp_path / "c"), "--timeout", "1")
    assert p.returncode == 11 and f"no bytes from {url} at 9600 baud" in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1 and "PASS" not in p.stdout
    with socket.socket() as gone:    # a port that goes away mid-run (a board reset, a cable pulled)
        gone.bind(("127.0.0.1", 0))
        gone.listen(1)
        url = f"socket://127.0.0.1:{gone.getsockname()[1]}"

        def hang_up():
            c, _ = gone.accept()
            time.sleep(0.3)   # pyserial's socket:// drops what is waiting when it connects
            c.sendall(b"\x00boot\x00")
            c.close()
        t = threading.Thread(target=hang_up, daemon=True)
        t.start()
        p = etdeploy("run", "--board", "corstone300", "--elf", elf, "--no-flash", "--port", url,
                     "--run-dir", str(tmp_path / "d"), "--timeout", "20")
        t.join(5)
    assert p.returncode == 10 and f"serial port {url} closed" in p.stderr and "after 6 byte(s), before the result" in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1 and "PASS" not in p.stdout
    for d in ("a", "b", "c", "d"):
        r = tmp_path / d / "result.json"
        assert not r.exists() or json.loads(r.read_text())["status"] != "pass"


def test_debug_batch_hits_execute_breakpoint(images, tmp_path):
    cmds = tmp_path / "bt.gdb"
    cmds.write_text("break et_method_execute\ncontinue\nbacktrace\n")
    p = etdeploy("debug", "--board", "corstone300", "--elf", str(images["corstone300"]), "--batch", str(cmds))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Breakpoint 1, et_method_execute" in p.stdout
    assert "#0  et_method_execute" in p.stdout, p.stdout
    assert "main () at" in p.stdout, p.stdout   # the backtrace reaches the runtime's main


def test_example_script_builds_flashes_runs_with_an_input(tmp_path):
    """examples/device_run.py through the public API: its top class is the reference runtime's."""
    _tools()
    from etdeploy import oracle
    x = np.random.default_rng(3).standard_normal((1, 784)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    ref = oracle.run_reference(MODELS / "mlp.pte", [x])[0].reshape(-1)
    with StandIn("corstone300") as b:
        p = subprocess.run([sys.executable, str(ROOT / "examples" / "device_run.py"), "--board", "corstone300",
                            "--pte", str(MODELS / "mlp.pte"), "--input", str(tmp_path / "x.npy"), "--gdb", b.gdb,
                            "--port", b.port, "--build-dir", str(CACHE / "example")],
                           cwd=ROOT, capture_output=True, text=True, timeout=600,
                           env=ENV)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "section(s) verified" in p.stdout
    assert f"pass: top class {int(ref.argmax())} (score {ref.max():.4f})" in p.stdout, (p.stdout, ref)


def test_api_errors_are_typed(images):
    from etdeploy import api
    img = api.Image("corstone300", images["corstone300"])
    with socket.socket() as quiet:
        quiet.bind(("127.0.0.1", 0))
        quiet.listen(2)
        url = f"socket://127.0.0.1:{quiet.getsockname()[1]}"
        with pytest.raises(api.DeviceNotFound) as e:
            api.run(img, port=url, gdb="127.0.0.1:1")
        assert e.value.exit_code == 21
        with pytest.raises(api.RunTimeout) as e:
            api.run(img, port=url, flash=False, timeout=0.5)
        assert e.value.exit_code == 11 and e.value.result.status == "error" and "no bytes from" in str(e.value)
