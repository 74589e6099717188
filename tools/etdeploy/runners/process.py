"""Runners whose link is the target's stdout: native host binaries, qemu-user, and system
emulators whose firmware writes the link through semihosting."""
from __future__ import annotations

from pathlib import Path

from . import register
from .base import Capabilities, ProcessSession, Runner, need_binary

_need = need_binary   # older name, used by tools that subclass these runners


@register
class NativeRunner(Runner):
    name = "native"
    caps = Capabilities(run=True, exit_status=True, link_rx=True)

    def available(self) -> None:
        pass

    def command(self, elf: str, **kw) -> list[str]:
        return [elf]

    def start(self, elf: str, **kw) -> ProcessSession:
        argv = self.command(elf, **kw)
        self.log_command(argv)
        return ProcessSession(argv)


@register
class QemuUserRunner(Runner):
    """qemu-<arch> running a Linux binary (binfmt_misc is not assumed): static, or dynamic against the
    board's unpacked XNNPACK (etdeploy.xnnpack_sysroot: -L glibc's root, LD_LIBRARY_PATH)."""
    name = "qemu-user"
    caps = Capabilities(run=True, exit_status=True, link_rx=True)

    def command(self, elf: str, **kw) -> list[str]:
        from .. import xnnpack_sysroot
        emu = self.board.emulator
        return [emu.binary, *emu.args, *xnnpack_sysroot.qemu_args(self.board, elf), elf]

    def start(self, elf: str, **kw) -> ProcessSession:
        argv = self.command(elf, **kw)
        need_binary(argv[0], getattr(self.board.emulator, "package", "qemu-user"))
        self.log_command(argv)
        return ProcessSession(argv)


@register
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
        need_binary(argv[0], getattr(self.board.emulator, "package", "qemu-system-misc"))
        self.log_command(argv)
        return ProcessSession(argv)


@register
class AdbRunner(Runner):
    """A binary on an Android device: adb push, then `adb shell -T` (no pty, so the link on stdout stays
    binary-safe, and the exit status comes back). Flashing is the same push. A dynamic image (XNNPACK's
    glibc shared objects) gets its shared objects and glibc's loader pushed into lib/ beside it and runs
    through that loader with LD_LIBRARY_PATH=lib/ (Android has no glibc of its own)."""
    name = "adb"
    caps = Capabilities(run=True, exit_status=True, link_rx=True, flash=True)
    remote = "/data/local/tmp/etdeploy/firmware"
    remote_lib = "/data/local/tmp/etdeploy/lib"

    def available(self) -> None:
        need_binary("adb", "adb")

    def command(self, elf: str, **kw) -> list[str]:
        from .. import xnnpack_sysroot
        interp = xnnpack_sysroot.interpreter(elf)
        if interp is None:
            return ["adb", "shell", "-T", self.remote]
        loader = f"{self.remote_lib}/{Path(interp).name}"
        return ["adb", "shell", "-T", f"LD_LIBRARY_PATH={self.remote_lib} {loader} {self.remote}"]

    def flash_commands(self, image_dir, drive: str | None = None) -> list[list[str]]:
        return self._push(str(Path(image_dir) / "firmware.elf"))

    def _push(self, elf: str) -> list[list[str]]:
        from .. import xnnpack_sysroot
        cmds = [["adb", "push", elf, self.remote], ["adb", "shell", f"chmod 755 {self.remote}"]]
        interp = xnnpack_sysroot.interpreter(elf)
        if interp is not None:
            cmds += [["adb", "shell", f"mkdir -p {self.remote_lib}"]]
            cmds += [["adb", "push", str(f.resolve()), f"{self.remote_lib}/{f.name}"]   # links as files
                     for f in xnnpack_sysroot.runtime_files(self.board, elf)]
            cmds += [["adb", "shell", f"chmod 755 {self.remote_lib}/{Path(interp).name}"]]   # the loader runs it
        return cmds

    def start(self, elf: str, **kw) -> ProcessSession:
        import subprocess

        from ..errors import DeviceNotFound
        self.available()
        for argv in self._push(elf):
            self.log_command(argv)
            p = subprocess.run(argv, capture_output=True, text=True)
            if p.returncode != 0:
                msg = ((p.stdout or "") + (p.stderr or "")).strip()
                raise DeviceNotFound(f"adb: {msg.splitlines()[-1] if msg else 'failed'}")
        argv = self.command(elf)
        self.log_command(argv)
        return ProcessSession(argv)
