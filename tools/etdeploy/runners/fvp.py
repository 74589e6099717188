"""Arm Fixed Virtual Platforms (Corstone-300/320), run when the FVP binary is on PATH.

The command line comes from the board's data: binary, the parameter prefix of its board model
(mps3_board / mps4_board), NPU MACs, and extra -C parameters. The UART goes to a file that we
follow as it grows (the FVP's own messages stay on its stdout, apart from the link), and the FVP
stops at the end of the firmware (shutdown_on_eot + semihosting exit)."""
from __future__ import annotations

import os
import shutil
import tempfile
import time

from ..errors import EmulatorMissing
from . import register
from .base import Capabilities, ProcessSession, Runner


@register
class FvpRunner(Runner):
    name = "fvp"
    caps = Capabilities(run=True, exit_status=True, link_rx=False)

    def available(self) -> None:
        binary = self._spec().binary
        if shutil.which(binary) is None:
            raise EmulatorMissing(f"{binary} is not on PATH: install Arm's Corstone FVP (not available from "
                                  f"Debian) or run on QEMU with the board's default runner")

    def _spec(self):
        spec = getattr(self.board, "fvp", None)
        if spec is None:
            raise EmulatorMissing(f"board '{self.board.name}' names no FVP")
        return spec

    def command(self, elf: str, timeout: float = 60, **kw) -> list[str]:
        s = self._spec()
        prefix = s.board_prefix            # "mps3_board" (SSE-300) or "mps4_board" (SSE-320)
        argv = [s.binary]
        params = [f"{prefix}.visualisation.disable-visualisation=1",
                  f"{prefix}.telnetterminal0.start_telnet=0",
                  f"{prefix}.uart0.out_file={kw.get('uart_file', '-')}",
                  f"{prefix}.uart0.unbuffered_output=1",
                  f"{prefix}.uart0.shutdown_on_eot=1"]
        if getattr(s, "macs_param", None) and getattr(self.board, "npu", None) is not None:
            params.append(f"{s.macs_param}={self.board.npu.macs}")
        params += list(getattr(s, "params", []) or [])
        for p in params:
            argv += ["-C", p]
        argv += ["-a", elf, "--timelimit", str(int(max(1, timeout))), "--stat"]
        return argv

    def start(self, elf: str, **kw) -> ProcessSession:
        self.available()
        fd, uart = tempfile.mkstemp(prefix="fvp-uart0-", suffix=".bin")
        os.close(fd)
        argv = self.command(elf, uart_file=uart, **kw)
        self.log_command(argv)
        return FileTailSession(ProcessSession(argv, link_on_stdout=False), uart)


class FileTailSession(ProcessSession):
    """The link is a file the target appends to."""

    def __init__(self, proc: ProcessSession, path: str):
        self.proc, self.path, self.pos = proc, path, 0

    def read(self, timeout: float) -> bytes:
        end = time.monotonic() + timeout
        while True:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                data = f.read()
            self.pos += len(data)
            if data or time.monotonic() >= end:
                return data
            time.sleep(0.01)

    def write(self, data: bytes) -> None:
        pass

    def poll(self):
        return self.proc.poll()

    def kill(self):
        self.proc.kill()

    def stderr_tail(self) -> str:
        return self.proc.stderr_tail()

    def close(self):
        self.proc.kill()
        try:
            os.unlink(self.path)
        except OSError:
            pass
