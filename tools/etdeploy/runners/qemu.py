"""QEMU system emulation with the UART on a TCP socket (QEMU waits, wait=on, until we connect).
The socket is ours, not pyserial's socket:// (see SocketPort)."""
from __future__ import annotations

import socket
import time

import serial

from ..errors import EmulatorMissing, RunError
from . import register
from .base import Capabilities, ProcessSession, Runner, Session, need_binary
from .serialport import read_available


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SocketPort:
    """QEMU's TCP UART as a plain socket, with the part of pyserial's port interface sessions use.
    Not pyserial's socket://: its open() empties the input buffer, and QEMU (wait=on) starts the guest
    the moment we connect, so a small image's first frames, or all of its output, could be thrown away
    before open() returned (seen under load as a lost result record or a corrupt first frame)."""

    def __init__(self, host: str, port: int):
        self._socket = socket.create_connection((host, port), timeout=1.0)
        self._socket.setblocking(False)

    def write(self, data: bytes) -> None:
        self._socket.setblocking(True)
        try:
            self._socket.sendall(data)
        finally:
            self._socket.setblocking(False)

    def close(self) -> None:
        self._socket.close()


class QemuUartSession(Session):
    def __init__(self, proc: ProcessSession, port: int, connect_timeout: float = 10.0):
        self.proc = proc
        self.port = None
        end = time.monotonic() + connect_timeout
        last = None
        while time.monotonic() < end:
            if proc.poll() is not None:
                raise EmulatorMissing(f"QEMU exited with status {proc.poll()} before its UART opened: "
                                      f"{proc.stderr_tail().strip()[-600:]}")
            try:
                self.port = SocketPort("127.0.0.1", port)
                break
            except (serial.SerialException, OSError) as e:
                last = e
                time.sleep(0.05)
        if self.port is None:
            proc.kill()
            raise RunError(f"could not connect to QEMU's UART on port {port}: {last}")

    def read(self, timeout: float) -> bytes:
        end = time.monotonic() + timeout
        while True:
            try:
                data = read_available(self.port)
            except (serial.SerialException, OSError):
                data = b""
            if data or time.monotonic() >= end:
                self.proc._drain_stderr()
                return data
            if self.proc.poll() is not None:
                # The emulator is gone: whatever is still buffered in the socket is all there is.
                try:
                    return read_available(self.port)
                except (serial.SerialException, OSError):
                    return b""
            time.sleep(0.002)

    def write(self, data: bytes) -> None:
        try:
            self.port.write(data)
        except (serial.SerialException, OSError):
            pass

    def poll(self):
        return self.proc.poll()

    def kill(self):
        self.proc.kill()
        try:
            self.port.close()
        except Exception:
            pass

    def stderr_tail(self) -> str:
        return self.proc.stderr_tail()


@register
class QemuSystemRunner(Runner):
    name = "qemu-system"
    caps = Capabilities(run=True, exit_status=True, link_rx=True)

    def command(self, elf: str, port: int = 0, **kw) -> list[str]:
        emu = self.board.emulator
        argv = [emu.binary, *[a.replace("{elf}", elf) for a in emu.args]]
        argv += ["-serial", f"tcp:127.0.0.1:{port},server=on,wait=on"]
        if kw.get("icount"):
            argv += ["-icount", "shift=0"]
        return argv

    def start(self, elf: str, **kw) -> Session:
        port = free_port()
        argv = self.command(elf, port=port, **kw)
        need_binary(argv[0], getattr(self.board.emulator, "package", "qemu-system-arm"))
        self.log_command(argv)
        return QemuUartSession(ProcessSession(argv, link_on_stdout=False), port)
