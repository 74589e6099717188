"""Runners whose link is the target's stdout: native host binaries, qemu-user, and system
emulators whose firmware writes the link through semihosting."""
from __future__ import annotations

import shutil

from ..errors import EmulatorMissing
from .base import Capabilities, ProcessSession, Runner


def _need(binary: str, package: str) -> str:
    path = shutil.which(binary)
    if path is None:
        raise EmulatorMissing(f"'{binary}' is not installed: apt-get install --no-install-recommends {package} "
                              f"(or run tools/bootstrap.sh)")
    return path


class NativeRunner(Runner):
    name = "native"
    caps = Capabilities(run=True, exit_status=True, link_rx=True)

    def command(self, elf: str, **kw) -> list[str]:
        return [elf]

    def start(self, elf: str, **kw) -> ProcessSession:
        return ProcessSession(self.command(elf, **kw))


class QemuUserRunner(Runner):
    """qemu-<arch> running a static Linux binary (binfmt_misc is not assumed)."""
    name = "qemu-user"
    caps = Capabilities(run=True, exit_status=True, link_rx=True)

    def command(self, elf: str, **kw) -> list[str]:
        emu = self.board.emulator
        return [emu.binary, *emu.args, elf]

    def start(self, elf: str, **kw) -> ProcessSession:
        argv = self.command(elf, **kw)
        _need(argv[0], getattr(self.board.emulator, "package", "qemu-user"))
        return ProcessSession(argv)


class QemuSemihostRunner(Runner):
    """qemu-system-* where the firmware writes the link to stdout by semihosting (no UART):
    Xtensa's sim machine. No way back to the target: inputs must be baked."""
    name = "qemu-semihost"
    caps = Capabilities(run=True, exit_status=True, link_rx=False)

    def command(self, elf: str, **kw) -> list[str]:
        emu = self.board.emulator
        argv = [emu.binary, *[a.replace("{elf}", elf) for a in emu.args]]
        if kw.get("icount"):
            argv += ["-icount", "shift=0"]
        return argv

    def start(self, elf: str, **kw) -> ProcessSession:
        argv = self.command(elf, **kw)
        _need(argv[0], getattr(self.board.emulator, "package", "qemu-system-misc"))
        return ProcessSession(argv)


class AdbRunner(Runner):
    """A static binary on an Android device: adb push, then `adb shell -T` (no pty, so the link on
    stdout stays binary-safe, and the exit status comes back)."""
    name = "adb"
    caps = Capabilities(run=True, exit_status=True, link_rx=True, flash=True)
    remote = "/data/local/tmp/etdeploy/firmware"

    def command(self, elf: str, **kw) -> list[str]:
        return ["adb", "shell", "-T", self.remote]

    def start(self, elf: str, **kw) -> ProcessSession:
        import subprocess

        from ..flash import DeviceNotFound
        _need("adb", "adb")
        for argv in (["adb", "push", elf, self.remote], ["adb", "shell", f"chmod 755 {self.remote}"]):
            self.log(self.describe(argv))
            p = subprocess.run(argv, capture_output=True, text=True)
            if p.returncode != 0:
                msg = ((p.stdout or "") + (p.stderr or "")).strip()
                raise DeviceNotFound(f"adb: {msg.splitlines()[-1] if msg else 'failed'}")
        argv = self.command(elf)
        self.log(self.describe(argv))
        return ProcessSession(argv)
