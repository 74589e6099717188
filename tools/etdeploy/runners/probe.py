"""Flash through a debug probe: pyOCD (board key `[flash] method = "pyocd"`, target = pyOCD's target
name) or OpenOCD (`method = "openocd"`, interface and target_cfg = its -f scripts). Flash only: the
image's link is then read from the device's UART (`etdeploy monitor`)."""
from __future__ import annotations

from pathlib import Path

from . import register
from .base import Capabilities, Runner, need_binary

FLASH_ONLY = Capabilities(run=False, exit_status=False, link_rx=False, flash=True)


@register
class PyocdRunner(Runner):
    name = "pyocd"
    caps = FLASH_ONLY

    def available(self) -> None:
        need_binary("pyocd", "pyocd (pip install pyocd)")

    def flash_commands(self, image_dir, drive: str | None = None) -> list[list[str]]:
        return [["pyocd", "flash", "-t", self.board.flash.target, str(Path(image_dir) / "firmware.hex")]]


@register
class OpenocdRunner(Runner):
    name = "openocd"
    caps = FLASH_ONLY

    def available(self) -> None:
        need_binary("openocd", "openocd")

    def flash_commands(self, image_dir, drive: str | None = None) -> list[list[str]]:
        spec = self.board.flash
        return [["openocd", "-f", spec.interface, "-f", spec.target_cfg, "-c",
                 f"program {Path(image_dir) / 'firmware.elf'} verify reset exit"]]
