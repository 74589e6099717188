"""Images written in Python read back: Intel HEX and UF2 round trips, per-region binaries."""
from __future__ import annotations

import struct

import pytest

from etdeploy import images
from etdeploy.config import MemoryRegion
from etdeploy.errors import ImageError

pytestmark = pytest.mark.unit

SEGS = [(0x10000000, bytes(range(256)) * 3 + b"\x01\x02\x03"), (0x1000F000, b"\xAA" * 40),
        (0x2000_0010, b"hello")]


def test_hex_round_trip(tmp_path):
    p = tmp_path / "x.hex"
    p.write_text(images.hex_text(SEGS, entry=0x10000101))
    mem = images.parse_hex(p)
    want = {a + i: b for a, d in SEGS for i, b in enumerate(d)}
    assert mem == want
    lines = p.read_text().splitlines()
    assert lines[-1] == ":00000001FF" and lines[-2].startswith(":04000005")


def test_hex_checksum_checked(tmp_path):
    p = tmp_path / "x.hex"
    text = images.hex_text(SEGS)
    p.write_text(text.replace(":10000000", ":10000001", 1))
    with pytest.raises(ImageError, match="checksum"):
        images.parse_hex(p)


def test_uf2_round_trip(tmp_path):
    p = tmp_path / "x.uf2"
    p.write_bytes(images.uf2_bytes(SEGS, 0xE48BFF59))
    raw = p.read_bytes()
    assert len(raw) % 512 == 0
    mem, blocks = images.parse_uf2(p)
    for a, d in SEGS:
        assert bytes(mem[a + i] for i in range(len(d))) == d
    assert all(b["family"] == 0xE48BFF59 and b["flags"] & 0x2000 and b["size"] == 256 and b["addr"] % 256 == 0
               for b in blocks)
    assert [b["block"] for b in blocks] == list(range(len(blocks)))
    assert {b["total"] for b in blocks} == {len(blocks)}
    m0, m1 = struct.unpack_from("<2I", raw)
    assert (m0, m1) == (0x0A324655, 0x9E5D5157) and struct.unpack_from("<I", raw, 508)[0] == 0x0AB16F30


def test_uf2_bad_magic(tmp_path):
    p = tmp_path / "x.uf2"
    data = bytearray(images.uf2_bytes(SEGS, 1))
    data[0] ^= 1
    p.write_bytes(bytes(data))
    with pytest.raises(ImageError, match="magic"):
        images.parse_uf2(p)


def test_overlapping_segments_rejected():
    with pytest.raises(ImageError, match="overlap"):
        images.hex_text([(0x100, b"abcd"), (0x102, b"xy")])
