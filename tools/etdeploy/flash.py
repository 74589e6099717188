"""Put an image on a device, the way the board's data says: `[flash] method` names a runner that can
flash (etdeploy.runners: pyocd, openocd, uf2, mps3, adb). Every command is logged and honours
dry_run: with no device attached, the exact command lines are what is tested."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .errors import DeviceNotFound, FlashError  # noqa: F401  (flash.DeviceNotFound stays importable)

ADB_DIR = "/data/local/tmp/etdeploy"
UF2_MARKER = "INFO_UF2.TXT"
MOUNT_ROOTS = ("/media", "/run/media", "/mnt", "/Volumes")


def run_command(argv: list[str], dry_run: bool, log, what: str) -> subprocess.CompletedProcess | None:
    log("$ " + " ".join(argv))
    if dry_run:
        return None
    if shutil.which(argv[0]) is None:
        raise FlashError(f"{argv[0]} is not installed ({what})")
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        msg = ((p.stdout or "") + (p.stderr or "")).strip()
        if "no devices" in msg or "device not found" in msg or "No connected debug probes" in msg \
                or "unable to find" in msg.lower() and "device" in msg.lower():
            raise DeviceNotFound(f"{what}: no device attached ({msg.splitlines()[-1] if msg else argv[0]})")
        raise FlashError(f"{what} failed (exit {p.returncode}): {msg[-800:]}")
    return p


def find_drive(label_hint: str | None = None, roots=MOUNT_ROOTS) -> Path | None:
    """A mounted UF2 bootloader drive (it holds INFO_UF2.TXT)."""
    for root in roots:
        base = Path(root)
        if not base.is_dir():
            continue
        for cand in list(base.glob("*")) + list(base.glob("*/*")):
            if (cand / UF2_MARKER).is_file():
                if label_hint and label_hint.lower() not in (cand / UF2_MARKER).read_text(errors="ignore").lower():
                    continue
                return cand
    return None


def commands(board, image_dir: Path, drive: str | None = None) -> list[list[str]]:
    """The command lines a flash would run (for dry runs and tests)."""
    from .runners import flasher_for
    return flasher_for(board).flash_commands(Path(image_dir), drive)


def mps3_images_txt(spec) -> str:
    # The MPS3 motherboard config reads this at power-up: load our image at the code origin.
    return ("TITLE: etdeploy image\n\n[IMAGES]\nTOTALIMAGES: 1\n\n"
            f"IMAGE0ADDRESS: 0x{spec.load_address:08x}\nIMAGE0UPDATE: AUTO\nIMAGE0FILE: \\SOFTWARE\\etdeploy.bin\n")


def flash(board, image_dir: Path, drive: str | None = None, dry_run: bool = False, log=print) -> None:
    from .runners import flasher_for
    flasher_for(board, log=log).flash(Path(image_dir), drive, dry_run)
