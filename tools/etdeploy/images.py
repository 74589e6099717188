"""Images from the ELF, written in Python from its PT_LOAD segments (physical = load addresses):

- Intel HEX (.hex): every loaded byte at its load address.
- raw binary (.bin): one file per memory region that holds loaded bytes, from the lowest loaded
  address in that region to the highest (never one file spanning regions: `objcopy -O binary` of an
  image spanning ITCM and SRAM pads to 16 MB). firmware.bin is the region holding the ELF entry
  (the boot image); others are firmware-<region>.bin.
- UF2 (.uf2): 512-byte blocks with 256-byte payloads, family id present (RP2350 ARM-S 0xe48bff59).

parse_hex / parse_uf2 read them back (tests, and a check before flashing)."""
from __future__ import annotations

import struct
from pathlib import Path

from elftools.elf.elffile import ELFFile

from .errors import ImageError

UF2_MAGIC0 = 0x0A324655
UF2_MAGIC1 = 0x9E5D5157
UF2_MAGIC_END = 0x0AB16F30
UF2_FLAG_FAMILY = 0x00002000
UF2_PAYLOAD = 256
UF2_DATA_BYTES = 476


def load_segments(elf: Path) -> tuple[list[tuple[int, bytes]], int]:
    """[(load address, bytes)] of the PT_LOAD segments with file content, and the entry point."""
    try:
        with open(elf, "rb") as f:
            e = ELFFile(f)
            segs = [(s["p_paddr"], s.data()[: s["p_filesz"]]) for s in e.iter_segments()
                    if s["p_type"] == "PT_LOAD" and s["p_filesz"] > 0]
            entry = e.header["e_entry"]
    except (OSError, Exception) as ex:   # pyelftools raises its own ELFError
        raise ImageError(f"cannot read ELF {elf}: {ex}") from None
    return sorted(segs), entry


def _chunks(segs):
    """Merge segments into {address: byte} runs without overlaps."""
    out = []
    for addr, data in segs:
        if out and out[-1][0] + len(out[-1][1]) == addr:
            out[-1] = (out[-1][0], out[-1][1] + data)
        else:
            out.append((addr, bytes(data)))
    for (a0, d0), (a1, _) in zip(out, out[1:]):
        if a0 + len(d0) > a1:
            raise ImageError(f"loadable segments overlap at 0x{a1:08x}")
    return out


# ------------------------------------------------------------------ Intel HEX
def hex_text(segs, entry: int | None = None) -> str:
    lines = []

    def rec(rtype: int, addr16: int, data: bytes) -> None:
        body = bytes([len(data), (addr16 >> 8) & 0xFF, addr16 & 0xFF, rtype]) + data
        lines.append(":" + body.hex().upper() + f"{(-sum(body)) & 0xFF:02X}")

    upper = None
    for addr, data in _chunks(segs):
        pos = 0
        while pos < len(data):
            a = addr + pos
            if a >> 32:
                raise ImageError(f"address 0x{a:x} does not fit Intel HEX (32-bit)")
            if a >> 16 != upper:
                upper = a >> 16
                rec(0x04, 0, struct.pack(">H", upper))
            n = min(16, len(data) - pos, 0x10000 - (a & 0xFFFF))
            rec(0x00, a & 0xFFFF, data[pos:pos + n])
            pos += n
    if entry is not None and entry < (1 << 32):
        rec(0x05, 0, struct.pack(">I", entry))
    rec(0x01, 0, b"")
    return "\n".join(lines) + "\n"


def write_hex(elf: Path, out: Path) -> Path:
    segs, entry = load_segments(elf)
    Path(out).write_text(hex_text(segs, entry))
    return Path(out)


def parse_hex(path: Path) -> dict[int, int]:
    """{address: byte} from an Intel HEX file (checksums verified)."""
    mem: dict[int, int] = {}
    base = 0
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        if not line.startswith(":"):
            raise ImageError(f"{path}:{n}: not an Intel HEX record")
        raw = bytes.fromhex(line[1:])
        if len(raw) < 5 or len(raw) != raw[0] + 5 or sum(raw) & 0xFF:
            raise ImageError(f"{path}:{n}: bad length or checksum")
        count, addr, rtype, data = raw[0], (raw[1] << 8) | raw[2], raw[3], raw[4:4 + raw[0]]
        if rtype == 0x00:
            for i, b in enumerate(data):
                mem[base + addr + i] = b
        elif rtype == 0x04:
            base = struct.unpack(">H", data)[0] << 16
        elif rtype == 0x02:
            base = struct.unpack(">H", data)[0] << 4
        elif rtype == 0x01:
            break
        del count
    return mem


# ------------------------------------------------------------------ raw binaries
def _region_of(regions, addr: int):
    for r in regions:
        if r.origin <= addr < r.end:
            return r
    return None


def write_bins(elf: Path, out: Path, regions, fill: int = 0xFF) -> list[Path]:
    """One .bin per region holding loaded bytes; `out` (firmware.bin) is the entry's region."""
    segs, entry = load_segments(elf)
    out = Path(out)
    groups: dict[str, list] = {}
    order = []
    for addr, data in _chunks(segs):
        r = _region_of(regions, addr)
        if r is None or addr + len(data) > r.end:
            raise ImageError(f"loaded bytes at 0x{addr:08x}+{len(data)} lie outside the board's memory regions")
        if r.name not in groups:
            order.append(r)
        groups.setdefault(r.name, []).append((addr, data))
    boot = _region_of(regions, entry & ~1) or (order[0] if order else None)
    written = []
    for r in order:
        parts = groups[r.name]
        lo, hi = parts[0][0], parts[-1][0] + len(parts[-1][1])
        buf = bytearray([fill]) * (hi - lo)
        for a, d in parts:
            buf[a - lo:a - lo + len(d)] = d
        path = out if boot is not None and r.name == boot.name else out.with_name(f"{out.stem}-{r.name}{out.suffix}")
        path.write_bytes(bytes(buf))
        written.append(path)
    return written


# ------------------------------------------------------------------ UF2
def uf2_bytes(segs, family_id: int) -> bytes:
    pages: dict[int, bytearray] = {}
    for addr, data in _chunks(segs):
        for i, b in enumerate(data):
            a = addr + i
            page = a & ~(UF2_PAYLOAD - 1)
            pages.setdefault(page, bytearray(UF2_PAYLOAD))[a - page] = b
    addrs = sorted(pages)
    out = bytearray()
    for n, a in enumerate(addrs):
        head = struct.pack("<8I", UF2_MAGIC0, UF2_MAGIC1, UF2_FLAG_FAMILY, a, UF2_PAYLOAD, n, len(addrs),
                           family_id)
        out += head + bytes(pages[a]) + bytes(UF2_DATA_BYTES - UF2_PAYLOAD) + struct.pack("<I", UF2_MAGIC_END)
    return bytes(out)


def write_uf2(elf: Path, out: Path, family_id: int) -> Path:
    segs, _ = load_segments(elf)
    if not segs:
        raise ImageError(f"{elf} has nothing to load")
    Path(out).write_bytes(uf2_bytes(segs, family_id))
    return Path(out)


def parse_uf2(path: Path) -> tuple[dict[int, int], list[dict]]:
    """({address: byte}, [block headers]) from a UF2 file; raises ImageError on a bad block."""
    raw = Path(path).read_bytes()
    if len(raw) % 512:
        raise ImageError(f"{path}: size {len(raw)} is not a multiple of 512")
    mem, blocks = {}, []
    for off in range(0, len(raw), 512):
        blk = raw[off:off + 512]
        m0, m1, flags, addr, size, no, total, fam = struct.unpack_from("<8I", blk)
        (mend,) = struct.unpack_from("<I", blk, 508)
        if (m0, m1, mend) != (UF2_MAGIC0, UF2_MAGIC1, UF2_MAGIC_END):
            raise ImageError(f"{path}: block {off // 512} has bad magic numbers")
        if size > UF2_DATA_BYTES:
            raise ImageError(f"{path}: block {off // 512} payload size {size}")
        blocks.append({"flags": flags, "addr": addr, "size": size, "block": no, "total": total, "family": fam})
        for i in range(size):
            mem[addr + i] = blk[32 + i]
    return mem, blocks


def write_images(elf: Path, board, out_dir: Path) -> list[Path]:
    """Every image the board names (board.images), as firmware.<ext> next to the ELF."""
    out_dir = Path(out_dir)
    written = []
    for kind in board.images:
        if kind == "hex":
            written.append(write_hex(elf, out_dir / "firmware.hex"))
        elif kind == "bin":
            written += write_bins(elf, out_dir / "firmware.bin", board.regions)
        elif kind == "uf2":
            written.append(write_uf2(elf, out_dir / "firmware.uf2", board.uf2_family))
    return written
