"""A complete runner in one file, and the template for new ones (Renode, a remote farm over ssh...).

`[emulator] kind = "wrapper"` runs the image under a command the board names: `binary` plus `args`,
where "{elf}" stands for the image (appended when absent), e.g. `binary = "ssh"`, `args = ["farm",
"run", "{elf}"]`, or `binary = "taskset"`, `args = ["-c", "0"]` to pin a host run to one core. The
command's stdout must be the target's link and its exit status the target's.

A new runner: subclass Runner, give it a name (the board key) and Capabilities, implement command()
and start() (returning a Session: ProcessSession when the link is the process's stdout), log what it
runs with log_command(), say in available() what is missing, and decorate it with @register. A
runner that can flash sets caps.flash and implements flash_commands(). Nothing else changes: the
package imports every module, board files are checked against the registry, and `etdeploy run`,
`scons run=1` and the tests find it by the board key."""
from __future__ import annotations

from . import register
from .base import Capabilities, ProcessSession, Runner, need_binary


@register
class WrapperRunner(Runner):
    name = "wrapper"
    caps = Capabilities(run=True, exit_status=True, link_rx=True)

    def command(self, elf: str, **kw) -> list[str]:
        emu = self.board.emulator
        args = [a.replace("{elf}", elf) for a in emu.args]
        return [emu.binary, *args] + ([] if any("{elf}" in a for a in emu.args) else [elf])

    def start(self, elf: str, **kw) -> ProcessSession:
        argv = self.command(elf, **kw)
        need_binary(argv[0], getattr(self.board.emulator, "package", "") or argv[0])
        self.log_command(argv)
        return ProcessSession(argv)
