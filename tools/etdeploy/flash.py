"""Put an image on a device, the way the board's data says: a debug probe (pyocd, openocd), a UF2
drive (pico2), the MPS3 board's USB mass storage (Corstone), or adb (Android). Every command goes
through proc.run-style logging and honours dry_run: with no device attached, the exact command lines
are what is tested."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .errors import EtdeployError


class FlashError(EtdeployError):
    exit_code = 20


class DeviceNotFound(FlashError):
    exit_code = 21


ADB_DIR = "/data/local/tmp/etdeploy"
UF2_MARKER = "INFO_UF2.TXT"
MOUNT_ROOTS = ("/media", "/run/media", "/mnt", "/Volumes")


def _run(argv: list[str], dry_run: bool, log, what: str) -> subprocess.CompletedProcess | None:
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
    spec = board.flash
    method = spec.method
    elf = image_dir / "firmware.elf"
    if method == "pyocd":
        return [["pyocd", "flash", "-t", spec.target, str(image_dir / "firmware.hex")]]
    if method == "openocd":
        return [["openocd", "-f", spec.interface, "-f", spec.target_cfg, "-c",
                 f"program {elf} verify reset exit"]]
    if method == "uf2":
        return [["cp", str(image_dir / "firmware.uf2"), f"{drive or '<UF2 drive>'}/"]]
    if method == "mps3":
        d = drive or "<MPS3 drive>"
        return [["cp", str(image_dir / "firmware.bin"), f"{d}/SOFTWARE/etdeploy.bin"],
                ["write", f"{d}/{spec.images_txt}"]]
    if method == "adb":
        return [["adb", "push", str(image_dir / "firmware.elf"), f"{ADB_DIR}/firmware"],
                ["adb", "shell", f"chmod 755 {ADB_DIR}/firmware"]]
    raise FlashError(f"board '{board.name}' names flash method '{method}', which etdeploy does not know")


def mps3_images_txt(spec) -> str:
    # The MPS3 motherboard config reads this at power-up: load our image at the code origin.
    return ("TITLE: etdeploy image\n\n[IMAGES]\nTOTALIMAGES: 1\n\n"
            f"IMAGE0ADDRESS: 0x{spec.load_address:08x}\nIMAGE0UPDATE: AUTO\nIMAGE0FILE: \\SOFTWARE\\etdeploy.bin\n")


def flash(board, image_dir: Path, drive: str | None = None, dry_run: bool = False, log=print) -> None:
    spec = getattr(board, "flash", None)
    if spec is None:
        raise FlashError(f"board '{board.name}' has nothing to flash: run it with `etdeploy run --board {board.name}`")
    image_dir = Path(image_dir)
    method = spec.method
    if method in ("uf2", "mps3"):
        d = Path(drive) if drive else (find_drive(getattr(spec, "drive_label", None)) if method == "uf2" else None)
        if d is None and not dry_run:
            raise DeviceNotFound(f"no {method.upper()} drive found: connect the board (pico2: hold BOOTSEL) and "
                                 f"mount it, or pass --drive <mount point>")
        for argv in commands(board, image_dir, str(d) if d else None):
            log("$ " + " ".join(argv))
        if dry_run:
            return
        if method == "uf2":
            shutil.copy(image_dir / "firmware.uf2", d / "firmware.uf2")
        else:
            (d / "SOFTWARE").mkdir(exist_ok=True)
            shutil.copy(image_dir / "firmware.bin", d / "SOFTWARE" / "etdeploy.bin")
            target = d / spec.images_txt
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(mps3_images_txt(spec))
        return
    for argv in commands(board, image_dir, drive):
        _run(argv, dry_run, log, f"{method} flash")
