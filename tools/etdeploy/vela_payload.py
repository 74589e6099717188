"""The EthosUBackend delegate payload as executorch's Arm backend writes it: a stream of blocks,
each a 16-byte NUL-padded name, <I length, <B external flag, 11 reserved bytes, then the data
padded to 16. Blocks: vela_bin_stream, cmd_data, weight_data, scratch_size, inputs, outputs,
vela_end_stream. (Named for what it reads, not `ethosu`, which would shadow Vela's package.)"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .errors import BadProgram

HEADER = struct.Struct("<16sIB11s")


@dataclass(frozen=True)
class VelaIO:
    shape: tuple
    elem_size: int
    offset: int
    region: int

    @property
    def nbytes(self) -> int:
        n = self.elem_size
        for s in self.shape:
            n *= max(s, 1)
        return n


@dataclass
class VelaPayload:
    blocks: dict = field(default_factory=dict)     # name -> (offset in payload, length)
    cmd_bytes: int = 0
    weight_bytes: int = 0
    scratch_bytes: int = 0
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    external: list = field(default_factory=list)   # blocks stored outside the payload (named data)


def _ios(data: bytes, what: str) -> list[VelaIO]:
    if len(data) < 4:
        raise BadProgram(f"Vela {what} block too short")
    n = struct.unpack_from("<i", data)[0]
    if n < 0 or 4 + 36 * n > len(data):
        raise BadProgram(f"Vela {what} block claims {n} tensors in {len(data)} bytes")
    out = []
    for i in range(n):
        v = struct.unpack_from("<9i", data, 4 + 36 * i)
        out.append(VelaIO(tuple(v[:6]), v[6], v[7], v[8]))
    return out


def parse(payload: bytes) -> VelaPayload:
    p = VelaPayload()
    pos = 0
    first = True
    while pos < len(payload):
        if pos + HEADER.size > len(payload):
            raise BadProgram(f"Vela payload: block header at {pos} overruns {len(payload)} bytes")
        name, length, external, _ = HEADER.unpack_from(payload, pos)
        name = name.split(b"\0", 1)[0].decode("ascii", "replace")
        start = pos + HEADER.size
        padded = (length + 15) & ~15
        if start + length > len(payload):
            raise BadProgram(f"Vela payload: block '{name}' ({length} bytes) overruns the payload")
        if first and name != "vela_bin_stream":
            raise BadProgram(f"Vela payload does not start with vela_bin_stream (found '{name}')")
        first = False
        data = payload[start:start + length]
        p.blocks[name] = (start, length)
        if external:
            p.external.append(name)
        if name == "cmd_data":
            p.cmd_bytes = length
        elif name == "weight_data":
            p.weight_bytes = length
        elif name == "scratch_size":
            p.scratch_bytes = struct.unpack_from("<I", data)[0] if length >= 4 else 0
        elif name == "inputs":
            p.inputs = _ios(data, "inputs")
        elif name == "outputs":
            p.outputs = _ios(data, "outputs")
        elif name == "vela_end_stream":
            return p
        pos = start + padded
    raise BadProgram("Vela payload has no vela_end_stream block")


def placement(memory_mode: str) -> dict:
    """Which kind of memory each NPU buffer needs under a Vela memory mode."""
    if memory_mode == "Dedicated_Sram":
        return {"scratch": "dram", "fast_scratch": "sram", "weights": "flash"}
    if memory_mode in ("Shared_Sram", "Sram_Only"):
        return {"scratch": "sram", "fast_scratch": None, "weights": "flash" if memory_mode == "Shared_Sram" else "sram"}
    raise BadProgram(f"unknown Ethos-U memory mode '{memory_mode}' (Sram_Only, Shared_Sram, Dedicated_Sram)")
