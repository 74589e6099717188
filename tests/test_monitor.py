"""etdeploy monitor on a live target: QEMU runs a Corstone-300 image with its UART on a TCP
socket, and the monitor, given only the pyserial URL, decodes what the firmware says."""
import subprocess
import sys
import time

import pytest

from etdeploy.runners.qemu import free_port
from support.boardrun import BUILD, scons
from support.suite import MODELS, require_board

pytestmark = pytest.mark.emu


def test_monitor_decodes_a_running_qemu_target():
    require_board("corstone300")
    p = scons("corstone300", f"pte={MODELS / 'mlp.bpte'}")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    port = free_port()
    qemu = subprocess.Popen(["qemu-system-arm", "-M", "mps3-an547", "-display", "none", "-monitor", "none",
                             "-semihosting-config", "enable=on,target=native",
                             "-kernel", str(BUILD / "corstone300" / "firmware.elf"),
                             "-serial", f"tcp:127.0.0.1:{port},server=on,wait=on"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        time.sleep(0.5)   # let QEMU open its listening socket
        mon = subprocess.run([sys.executable, "-m", "etdeploy.cli.main", "monitor", "--port",
                              f"socket://127.0.0.1:{port}", "--duration", "60"],
                             capture_output=True, text=True, timeout=90)
    finally:
        qemu.kill()
        qemu.wait()
    out = mon.stdout
    assert mon.returncode == 0, out + mon.stderr
    assert "hello: link v1, 1 program(s)" in out
    assert out.count("case ") == 3 and "FAIL" not in out
    assert "result: ok" in out
    assert "0 corrupt, 0 lost" in mon.stderr
