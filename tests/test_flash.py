"""Flashing and device runs: exact command lines per board in dry-run (no device is attached here),
and the real adb binary's behaviour when no device is there: a typed error, never a pass."""
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import need_tool
from etdeploy import config, flash, session
from etdeploy.errors import EtdeployError

pytestmark = pytest.mark.unit
IMG = Path("/img")


def test_dry_run_command_lines():
    c = flash.commands(config.load_board("android-arm64"), IMG)
    assert c == [["adb", "push", "/img/firmware.elf", "/data/local/tmp/etdeploy/firmware"],
                 ["adb", "shell", "chmod 755 /data/local/tmp/etdeploy/firmware"]]
    assert flash.commands(config.load_board("pico2"), IMG, drive="/media/u/RP2350") == \
        [["cp", "/img/firmware.uf2", "/media/u/RP2350/"]]
    c = flash.commands(config.load_board("corstone300"), IMG, drive="/media/u/V2M-MPS3")
    assert c[0] == ["cp", "/img/firmware.bin", "/media/u/V2M-MPS3/SOFTWARE/etdeploy.bin"]
    assert "IMAGE0FILE: \\SOFTWARE\\etdeploy.bin" in flash.mps3_images_txt(config.load_board("corstone300").flash)


def test_uf2_copy_to_a_mounted_drive(tmp_path):
    drive = tmp_path / "media" / "RP2350"
    drive.mkdir(parents=True)
    (drive / "INFO_UF2.TXT").write_text("UF2 Bootloader v1.0\nBoard-ID: RP2350\n")
    img = tmp_path / "img"
    img.mkdir()
    (img / "firmware.uf2").write_bytes(b"\x55" * 512)
    assert flash.find_drive(roots=[str(tmp_path / "media"), str(tmp_path)]) == drive
    flash.flash(config.load_board("pico2"), img, drive=str(drive), log=lambda m: None)
    assert (drive / "firmware.uf2").read_bytes() == b"\x55" * 512


def test_uf2_without_a_drive_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(flash, "find_drive", lambda *a, **k: None)
    with pytest.raises(flash.DeviceNotFound, match="BOOTSEL"):
        flash.flash(config.load_board("pico2"), tmp_path, log=lambda m: None)


@pytest.fixture
def adb():
    path = need_tool("adb", "adb")
    yield path
    subprocess.run([path, "kill-server"], capture_output=True)   # adb leaves a daemon behind


def test_adb_flash_without_a_device_is_device_not_found(adb, tmp_path):
    (tmp_path / "firmware.elf").write_bytes(b"\x7fELF")
    with pytest.raises(flash.DeviceNotFound, match="no device"):
        flash.flash(config.load_board("android-arm64"), tmp_path, log=lambda m: None)


def test_adb_run_without_a_device_never_passes(adb, tmp_path):
    elf = tmp_path / "firmware.elf"
    elf.write_bytes(b"\x7fELF")
    with pytest.raises(EtdeployError):
        session.run(config.load_board("android-arm64"), elf, tmp_path / "run", runner="adb", log=lambda m: None)
