"""Arm FVP command lines from board data (dry run), and a real run when an FVP binary is on PATH.

The parameter names are the ones Arm's Corstone FVPs take (the same set executorch's Arm test runner
uses): Corstone-300 (mps3) puts the NPU and CPU parameters at the top level (ethosu.*, cpu0.*),
Corstone-320 (mps4) under mps4_board.subsystem.*."""
from __future__ import annotations

import shutil

import pytest

from etdeploy import config
from etdeploy.errors import EmulatorMissing
from etdeploy.runners import runner_for
from etdeploy.runners.fvp import FvpRunner

pytestmark = pytest.mark.unit


def _params(argv):
    return [argv[i + 1] for i, a in enumerate(argv) if a == "-C"]


def test_corstone300_exact_command_line():
    board = config.load_board("corstone300")
    argv = FvpRunner(board).command("/tmp/fw.elf", timeout=42, uart_file="/tmp/uart.bin")
    assert argv == [
        "FVP_Corstone_SSE-300_Ethos-U55",
        "-C", "mps3_board.visualisation.disable-visualisation=1",
        "-C", "mps3_board.telnetterminal0.start_telnet=0",
        "-C", "mps3_board.uart0.out_file=/tmp/uart.bin",
        "-C", "mps3_board.uart0.unbuffered_output=1",
        "-C", "mps3_board.uart0.shutdown_on_eot=1",
        "-C", "ethosu.num_macs=128",
        "-C", "cpu0.semihosting-enable=1",
        "-a", "/tmp/fw.elf", "--timelimit", "42", "--stat"]


def test_corstone320_exact_command_line():
    board = config.load_board("corstone320")
    argv = FvpRunner(board).command("/tmp/fw.elf", timeout=90, uart_file="/tmp/uart.bin")
    assert argv == [
        "FVP_Corstone_SSE-320",
        "-C", "mps4_board.visualisation.disable-visualisation=1",
        "-C", "mps4_board.telnetterminal0.start_telnet=0",
        "-C", "mps4_board.uart0.out_file=/tmp/uart.bin",
        "-C", "mps4_board.uart0.unbuffered_output=1",
        "-C", "mps4_board.uart0.shutdown_on_eot=1",
        "-C", "mps4_board.subsystem.ethosu.num_macs=256",
        "-C", "mps4_board.subsystem.cpu0.semihosting-enable=1",
        "-a", "/tmp/fw.elf", "--timelimit", "90", "--stat"]


def test_u65_variant_takes_its_binary_and_macs_from_board_data():
    board = config.load_board("corstone300-u65")
    argv = FvpRunner(board).command("fw.elf", timeout=10)
    assert argv[0] == "FVP_Corstone_SSE-300_Ethos-U65"
    assert "ethosu.num_macs=256" in _params(argv)
    assert "mps3_board.uart0.out_file=-" in _params(argv)


@pytest.mark.parametrize("name", ["corstone300", "corstone320", "corstone300-u65"])
def test_macs_match_the_npu_target(name):
    board = config.load_board(name)
    assert board.npu.target.endswith(f"-{board.npu.macs}")
    argv = FvpRunner(board).command("fw.elf", timeout=1)
    assert any(p.endswith(f"num_macs={board.npu.macs}") for p in _params(argv))


def test_timeout_is_whole_seconds_and_at_least_one():
    board = config.load_board("corstone300")
    assert FvpRunner(board).command("fw.elf", timeout=0.2)[-2] == "1"
    assert FvpRunner(board).command("fw.elf", timeout=12.9)[-2] == "12"


def test_runner_judges_by_exit_status_and_reads_the_uart_file():
    board = config.load_board("corstone320")
    r = runner_for(board)                      # corstone320's default runner is the FVP
    assert isinstance(r, FvpRunner)
    assert r.caps.exit_status and r.caps.run
    assert isinstance(runner_for(config.load_board("corstone300"), prefer="fvp"), FvpRunner)


def test_missing_fvp_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    with pytest.raises(EmulatorMissing, match="not on PATH"):
        FvpRunner(config.load_board("corstone300")).start("fw.elf", timeout=1)


@pytest.mark.skipif(shutil.which("FVP_Corstone_SSE-300_Ethos-U55") is None,
                    reason="FVP_Corstone_SSE-300_Ethos-U55 not on PATH (Arm download, not installable here)")
def test_minimal_image_runs_on_the_corstone300_fvp(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    rc = subprocess.run([sys.executable, "-m", "SCons", "-Q", "board=corstone300", "run=1", "runner=fvp",
                         f"build_dir={tmp_path}"], cwd=root).returncode
    assert rc == 0
