"""Flash by copying to a USB mass-storage drive the board mounts: a UF2 bootloader drive (`[flash]
method = "uf2"`, found by its INFO_UF2.TXT) or the MPS3 board's configuration drive (`method =
"mps3"`: the image under SOFTWARE/ and an images.txt that loads it at power-up)."""
from __future__ import annotations

import shutil
from pathlib import Path

from . import register
from .base import Runner
from .probe import FLASH_ONLY


class _DriveRunner(Runner):
    caps = FLASH_ONLY
    placeholder = "<drive>"

    def available(self) -> None:
        pass

    def _drive(self, drive: str | None, dry_run: bool) -> Path | None:
        return Path(drive) if drive else None

    def flash(self, image_dir, drive: str | None = None, dry_run: bool = False) -> None:
        from ..errors import DeviceNotFound
        d = self._drive(drive, dry_run)
        if d is None and not dry_run:
            raise DeviceNotFound(f"no {self.name.upper()} drive found: connect the board (pico2: hold BOOTSEL) "
                                 f"and mount it, or pass --drive <mount point>")
        for argv in self.flash_commands(image_dir, str(d) if d else None):
            self.log("$ " + " ".join(argv))
        if not dry_run:
            self.copy(Path(image_dir), d)

    def copy(self, image_dir: Path, d: Path) -> None:
        raise NotImplementedError


@register
class Uf2Runner(_DriveRunner):
    name = "uf2"

    def _drive(self, drive, dry_run):
        from .. import flash
        return Path(drive) if drive else flash.find_drive(getattr(self.board.flash, "drive_label", None))

    def flash_commands(self, image_dir, drive: str | None = None) -> list[list[str]]:
        return [["cp", str(Path(image_dir) / "firmware.uf2"), f"{drive or '<UF2 drive>'}/"]]

    def copy(self, image_dir: Path, d: Path) -> None:
        shutil.copy(image_dir / "firmware.uf2", d / "firmware.uf2")


@register
class Mps3Runner(_DriveRunner):
    name = "mps3"

    def flash_commands(self, image_dir, drive: str | None = None) -> list[list[str]]:
        d = drive or "<MPS3 drive>"
        return [["cp", str(Path(image_dir) / "firmware.bin"), f"{d}/SOFTWARE/etdeploy.bin"],
                ["write", f"{d}/{self.board.flash.images_txt}"]]

    def copy(self, image_dir: Path, d: Path) -> None:
        from ..flash import mps3_images_txt
        (d / "SOFTWARE").mkdir(exist_ok=True)
        shutil.copy(image_dir / "firmware.bin", d / "SOFTWARE" / "etdeploy.bin")
        target = d / self.board.flash.images_txt
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(mps3_images_txt(self.board.flash))
