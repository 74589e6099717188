"""A runner starts a target and gives back a byte stream to its link; it judges nothing.

Every runner declares what it can do (capabilities), says whether it can work here (available()),
and logs the exact command it runs (log_command); with dry_run it only returns that command. A
runner that can flash (caps.flash) gives its command lines (flash_commands) and runs them (flash)."""
from __future__ import annotations

import os
import select
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass, field

from ..errors import EmulatorMissing, FlashError, RunError


def need_binary(binary: str, package: str) -> str:
    """The binary's path, or EmulatorMissing naming the package that provides it."""
    path = shutil.which(binary)
    if path is None:
        raise EmulatorMissing(f"'{binary}' is not installed: apt-get install --no-install-recommends {package} "
                              f"(or run tools/bootstrap.sh)")
    return path


@dataclass(frozen=True)
class Capabilities:
    run: bool = True           # can start the image here
    exit_status: bool = True   # the target's exit status reaches us
    link_rx: bool = True       # the host can send frames to the target (inputs)
    flash: bool = False        # writes an image to a device


class Session:
    """A started target: read/write its link, wait for its exit."""

    def read(self, timeout: float) -> bytes:
        raise NotImplementedError

    def write(self, data: bytes) -> None:
        raise NotImplementedError

    def poll(self) -> int | None:
        raise NotImplementedError

    def wait(self, timeout: float) -> int | None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            rc = self.poll()
            if rc is not None:
                return rc
            time.sleep(0.01)
        return self.poll()

    def kill(self) -> None:
        raise NotImplementedError

    def stderr_tail(self) -> str:
        return ""

    def close(self) -> None:
        self.kill()


class ProcessSession(Session):
    """A subprocess whose stdout is the link (and stdin the way back)."""

    def __init__(self, argv: list[str], cwd: str | None = None, link_on_stdout: bool = True):
        self.argv = argv
        try:
            self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      cwd=cwd, start_new_session=True)
        except FileNotFoundError:
            raise EmulatorMissing(f"cannot start '{argv[0]}': not found on PATH") from None
        except PermissionError as e:
            raise RunError(f"cannot start '{argv[0]}': {e.strerror}") from None
        self.link_on_stdout = link_on_stdout
        self._err = bytearray()
        os.set_blocking(self.p.stdout.fileno(), False)
        os.set_blocking(self.p.stderr.fileno(), False)

    def _drain_stderr(self) -> None:
        try:
            chunk = self.p.stderr.read()
            if chunk:
                self._err += chunk[-65536:]
        except (BlockingIOError, ValueError):
            pass

    def read(self, timeout: float) -> bytes:
        self._drain_stderr()
        if not self.link_on_stdout:
            time.sleep(timeout)
            return b""
        try:
            r, _, _ = select.select([self.p.stdout], [], [], timeout)
        except (ValueError, OSError):
            return b""
        if not r:
            return b""
        try:
            return self.p.stdout.read() or b""
        except (BlockingIOError, ValueError):
            return b""

    def write(self, data: bytes) -> None:
        try:
            self.p.stdin.write(data)
            self.p.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass

    def close_input(self) -> None:
        try:
            self.p.stdin.close()
        except OSError:
            pass

    def poll(self) -> int | None:
        return self.p.poll()

    def kill(self) -> None:
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, 9)
            except ProcessLookupError:
                pass
            self.p.wait()
        self._drain_stderr()

    def stderr_tail(self) -> str:
        self._drain_stderr()
        return bytes(self._err[-4000:]).decode("utf-8", "replace")


class Runner:
    """Register a subclass with runners.register under the name a board's data uses."""
    name = "runner"
    caps = Capabilities()

    def __init__(self, board, log=None):
        self.board = board
        self.log = log or (lambda msg: None)

    def available(self) -> None:
        """Raises EmulatorMissing (naming what to install) when this runner cannot work here."""
        emu = getattr(self.board, "emulator", None)
        if emu is not None and getattr(emu, "binary", ""):
            need_binary(emu.binary, getattr(emu, "package", "") or emu.binary)

    def command(self, elf: str, **kw) -> list[str]:
        raise NotImplementedError

    def start(self, elf: str, **kw) -> Session:
        raise NotImplementedError

    def describe(self, argv: list[str]) -> str:
        return " ".join(shlex.quote(a) for a in argv)

    def log_command(self, argv: list[str], note: str = "") -> None:
        self.log(self.describe(argv) + note)

    def flash_commands(self, image_dir, drive: str | None = None) -> list[list[str]]:
        raise FlashError(f"runner '{self.name}' cannot flash")

    def flash(self, image_dir, drive: str | None = None, dry_run: bool = False) -> None:
        """Runs flash_commands through flash.run_command (logged; typed errors on failure)."""
        from ..flash import run_command
        for argv in self.flash_commands(image_dir, drive):
            run_command(argv, dry_run, self.log, f"{self.name} flash")
