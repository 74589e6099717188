"""A real board as a runner: its link is a serial port (any pyserial URL: /dev/ttyACM0, socket://,
rfc2217://), the image gets there by a flash step (gdb through a GDB server, the board's own flash
method, or none), and the run is judged by etdeploy.session exactly as an emulator run.

The port is opened before the image is flashed and started, so nothing the firmware says early is
lost. A device has no exit status: the run ends with its result (or fault) record, and whatever the
board does after that (a semihosting exit with no debugger attached faults) is not part of the run."""
from __future__ import annotations

import select
import time

import serial

from ..errors import DeviceNotFound, RunError
from .base import Capabilities, Runner, Session


class SerialSession(Session):
    def __init__(self, port, url: str, baud: int):
        self.port, self.url, self.baud = port, url, baud
        self.received = 0
        self.gone: str | None = None

    def read(self, timeout: float) -> bytes:
        if self.gone:
            time.sleep(min(timeout, 0.01))
            return b""
        end = time.monotonic() + timeout
        while True:
            try:
                data = self._read()
            except (serial.SerialException, OSError) as e:
                self.gone = f"serial port {self.url} closed ({e})"
                return b""
            if data or time.monotonic() >= end:
                self.received += len(data)
                return data
            time.sleep(0.002)

    def _read(self) -> bytes:
        return read_available(self.port)

    def write(self, data: bytes) -> None:
        try:
            self.port.write(data)
        except (serial.SerialException, OSError) as e:
            self.gone = f"serial port {self.url} closed while writing ({e})"

    def poll(self):
        return -1 if self.gone else None

    def kill(self) -> None:
        try:
            self.port.close()
        except Exception:
            pass

    def stderr_tail(self) -> str:
        return self.gone or ""


def read_available(port) -> bytes:
    """What the port holds now (b"" if nothing); SerialException once the other end has hung up.
    socket:// ports are read from their socket: pyserial's read() drops the bytes it got when the peer
    hangs up in the same call, and a board that faults and resets, or an emulator that exits, hangs up
    right after its last record."""
    sock = getattr(port, "_socket", None)
    if sock is None:
        return port.read(65536)
    if not select.select([sock], [], [], 0)[0]:
        return b""
    data = sock.recv(65536)
    if not data:
        raise serial.SerialException("the other end hung up")
    return data


def open_port(url: str, baud: int):
    """The opened port, or one line naming port and baud (DeviceNotFound: missing, RunError: busy)."""
    try:
        return serial.serial_for_url(url, baudrate=baud, timeout=0, exclusive=True) if url.startswith("/") \
            else serial.serial_for_url(url, baudrate=baud, timeout=0)
    except ValueError as e:
        raise RunError(f"cannot open serial port {url} at {baud} baud: {e}") from None
    except (serial.SerialException, OSError) as e:
        msg = str(e)
        busy = "busy" in msg.lower() or "lock" in msg.lower() or "Errno 16" in msg
        cls = RunError if busy else DeviceNotFound
        raise cls(f"cannot open serial port {url} at {baud} baud: "
                  f"{'in use by another program' if busy else msg.splitlines()[0] if msg else 'not found'}") from None


class SerialDeviceRunner(Runner):
    """Not in the registry: built from command-line options (etdeploy run --port), not board data."""
    name = "serial"
    caps = Capabilities(run=True, exit_status=False, link_rx=True)

    def __init__(self, board, url: str, baud: int | None = None, flash=None, log=None):
        """flash: callable(elf) that puts the image on the board and starts it (None: it is already there)."""
        super().__init__(board, log)
        uart = getattr(board, "uart", None)
        self.url = url
        self.baud = int(baud or getattr(uart, "baud", 0) or 115200)
        self.flash_fn = flash
        self.flashed = None   # what the flash step returned (gdb: a FlashReport)

    def available(self) -> None:
        pass

    def command(self, elf: str, **kw) -> list[str]:
        return [f"serial:{self.url}@{self.baud}", elf]

    def describe(self, argv: list[str]) -> str:
        how = "flash, then read" if self.flash_fn else "read"
        return f"{how} {self.url} at {self.baud} baud ({argv[1]})"

    def start(self, elf: str, **kw) -> SerialSession:
        port = open_port(self.url, self.baud)
        if self.flash_fn is not None:
            try:   # what the old image said before this flash is not part of the run
                port.reset_input_buffer()
            except (serial.SerialException, OSError, AttributeError):
                pass
        sess = SerialSession(port, self.url, self.baud)
        self.log(self.describe(self.command(elf)))
        if self.flash_fn is not None:
            try:
                self.flashed = self.flash_fn(elf)
            except BaseException:
                sess.kill()
                raise
        return sess

    def explain(self, res, sess: SerialSession, timeout: float):
        """(error class, one line) for what only a serial port shows: it said nothing, or it went away."""
        from ..errors import RunTimeout
        if res.result is not None or res.fault is not None:
            return None
        if res.timed_out and not sess.received:
            return RunTimeout, (f"no bytes from {self.url} at {self.baud} baud in {timeout:g} s: check the port, the "
                                f"baud rate, and that the board runs the image (with --no-flash, reset it by hand)")
        if sess.gone:
            return RunError, (f"{sess.gone} after {sess.received} byte(s), before the result record "
                              f"(the board reset, lost power or was unplugged?)")
        return None
