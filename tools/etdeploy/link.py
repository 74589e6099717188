"""The host end of the wire: decode framed records from a firmware's UART or stdout, and encode
the frames the host sends (inputs, run, end). See firmware/runtime/et_link.h for the layout.

A frame whose COBS or CRC check fails is counted and dropped; a gap in sequence numbers counts the
frames lost. Nothing from a bad frame reaches a result."""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

import numpy as np

from .dtypes import DTYPES, code_of, numpy_dtypes

HELLO, LOG, OUTPUT, CASE, ERROR, RESULT, METHOD, EVENT, FAULT = 1, 2, 3, 4, 5, 6, 7, 8, 9
INPUT, RUN, END = 16, 17, 18
MAX_FRAME = 1 << 24

NP_DTYPES = numpy_dtypes()
STATUS = {0: "ok", 1: "bad program", 2: "unsupported", 3: "out of memory", 4: "missing operator",
          5: "unknown backend", 6: "invalid argument", 7: "bad input", 8: "delegate failed",
          9: "internal error", 10: "output mismatch", 11: "kernel scratch not as planned"}
VALUE_TAGS = {0: "none", 1: "int", 2: "double", 3: "bool", 5: "tensor"}


def cobs_encode(data: bytes) -> bytes:
    out, block = bytearray(), bytearray()
    for b in data:
        if b == 0:
            out.append(len(block) + 1)
            out += block
            block.clear()
            continue
        block.append(b)
        if len(block) == 254:
            out.append(255)
            out += block
            block.clear()
    out.append(len(block) + 1)
    out += block
    return bytes(out)


def cobs_decode(data: bytes) -> bytes | None:
    out, i, n = bytearray(), 0, len(data)
    while i < n:
        code = data[i]
        end = i + code
        if code == 0 or end > n:
            return None
        chunk = data[i + 1:end]
        if 0 in chunk:
            return None
        out += chunk
        i = end
        if code < 255 and i < n:
            out.append(0)
    return bytes(out)


def encode_frame(rtype: int, seq: int, payload: bytes) -> bytes:
    body = struct.pack("<BH", rtype, seq & 0xFFFF) + payload
    return cobs_encode(body + struct.pack("<I", zlib.crc32(body))) + b"\0"


@dataclass
class Record:
    type: int
    seq: int
    payload: bytes


@dataclass
class Output:
    program: int
    method: int
    case: int | None
    index: int
    value: object               # np.ndarray for tensors, int/float/bool for scalars


@dataclass
class LinkStats:
    frames: int = 0
    bad_frames: int = 0          # failed COBS/CRC/length checks
    lost_frames: int = 0         # gaps in the sequence numbers
    stray_bytes: int = 0         # bytes before the first delimiter that were not a frame
    oversize: int = 0


TEXT_PREFIX = b"ETL:"


class Decoder:
    """Feed bytes as they arrive; completed, checked records come out of feed().

    Images built with link=text send each frame's COBS bytes in hex on an "ETL:" line instead
    (for console matchers such as LAVA's); the first bytes tell which, the checks are the same."""

    def __init__(self):
        self.buf = bytearray()
        self.stats = LinkStats()
        self.next_seq: int | None = None
        self.text: bool | None = None

    def feed(self, data: bytes) -> list[Record]:
        self.buf += data
        if self.text is None:
            head = self.buf.lstrip(b"\r\n")
            if len(head) < len(TEXT_PREFIX) and TEXT_PREFIX.startswith(bytes(head)):
                return []
            self.text = head.startswith(TEXT_PREFIX)
        if self.text:
            return self._feed_text()
        out = []
        while True:
            z = self.buf.find(0)
            if z < 0:
                if len(self.buf) > MAX_FRAME:
                    self.stats.oversize += 1
                    self.stats.bad_frames += 1
                    self.buf.clear()
                break
            raw = bytes(self.buf[:z])
            del self.buf[:z + 1]
            if not raw:
                continue
            rec = self._frame(raw)
            if rec is not None:
                out.append(rec)
        return out

    def _feed_text(self) -> list[Record]:
        out = []
        while True:
            nl = self.buf.find(b"\n")
            if nl < 0:
                if len(self.buf) > 2 * MAX_FRAME:
                    self.stats.oversize += 1
                    self.stats.bad_frames += 1
                    self.buf.clear()
                return out
            line = bytes(self.buf[:nl]).strip()
            del self.buf[:nl + 1]
            if not line.startswith(TEXT_PREFIX):
                continue            # the verdict line and ET-END are for console matchers
            try:
                raw = bytes.fromhex(line[len(TEXT_PREFIX):].decode("ascii"))
            except (ValueError, UnicodeDecodeError):
                self.stats.bad_frames += 1
                continue
            rec = self._frame(raw)
            if rec is not None:
                out.append(rec)

    def _frame(self, raw: bytes) -> Record | None:
        body = cobs_decode(raw)
        if body is None or len(body) < 7:
            self.stats.bad_frames += 1
            return None
        crc = struct.unpack_from("<I", body, len(body) - 4)[0]
        if zlib.crc32(body[:-4]) != crc:
            self.stats.bad_frames += 1
            return None
        rtype, seq = struct.unpack_from("<BH", body, 0)
        if self.next_seq is not None and seq != self.next_seq:
            self.stats.lost_frames += (seq - self.next_seq) & 0xFFFF
        self.next_seq = (seq + 1) & 0xFFFF
        self.stats.frames += 1
        return Record(rtype, seq, body[3:-4])

    def finish(self) -> None:
        """End of stream: a partial frame left over is a lost frame."""
        partial = self.buf.strip().startswith(TEXT_PREFIX) if self.text else self.buf.strip(b"\0")
        if partial:
            self.stats.bad_frames += 1
        self.buf.clear()


class LinkDecodeError(ValueError):
    pass


def parse_output(p: bytes) -> Output:
    prog, meth, case, idx, tag, dtype, ndim = struct.unpack_from("<BBHHBBB", p, 0)
    pos = 10
    case = None if case == 0xFFFF else case
    if tag == 5:
        sizes = struct.unpack_from(f"<{ndim}i", p, pos)
        pos += 4 * ndim
        order = tuple(p[pos:pos + ndim])
        pos += ndim
        if sorted(order) != list(range(ndim)):
            raise LinkDecodeError(f"output {idx}: bad dim order {order}")
        npdt = NP_DTYPES.get(dtype)
        if npdt is None:
            raise LinkDecodeError(f"output of unknown dtype {dtype}")
        arr = np.frombuffer(p[pos:], dtype=npdt)
        n = int(np.prod(sizes)) if sizes else 1
        if arr.size != n:
            raise LinkDecodeError(f"output {idx}: {arr.size} elements for shape {sizes}")
        # Memory follows the dim order (e.g. NHWC); present the logical (contiguous) tensor.
        arr = arr.reshape([sizes[d] for d in order]).transpose(np.argsort(order))
        return Output(prog, meth, case, idx, np.ascontiguousarray(arr))
    raw = struct.unpack_from("<q", p, pos)[0] if len(p) >= pos + 8 else 0
    if tag == 2:
        val = struct.unpack("<d", struct.pack("<q", raw))[0]
    elif tag == 3:
        val = bool(raw & 0xFF)
    else:
        val = raw
    return Output(prog, meth, case, idx, val)


def parse_record(r: Record) -> dict:
    p = r.payload
    try:
        if r.type == HELLO:
            ver, nprog, flags, hz = struct.unpack_from("<BBHI", p)
            return {"kind": "hello", "version": ver, "programs": nprog, "flags": flags, "cycles_hz": hz,
                    "wants_inputs": bool(flags & 1)}
        if r.type == LOG:
            return {"kind": "log", "text": p.decode("utf-8", "replace")}
        if r.type == OUTPUT:
            return {"kind": "output", "output": parse_output(p)}
        if r.type == CASE:
            prog, meth, case, ok, _, nout, err, bad = struct.unpack_from("<BBHBBHfI", p)
            return {"kind": "case", "program": prog, "method": meth, "case": case, "passed": bool(ok),
                    "outputs": nout, "max_abs_err": err, "first_bad_output": None if bad == 0xFFFFFFFF else bad}
        if r.type == ERROR:
            code, prog, meth, instr, op, val, d1, d2 = struct.unpack_from("<HBBIIIII", p)
            none = lambda x: None if x == 0xFFFFFFFF else x
            return {"kind": "error", "code": code, "status": STATUS.get(code, f"status {code}"), "program": prog,
                    "method": none(meth if meth != 0xFF else 0xFFFFFFFF), "instruction": none(instr),
                    "op": none(op), "value": none(val), "detail": d1, "detail2": d2}
        if r.type == RESULT:
            st, _, mrun, cases, failed, frames = struct.unpack_from("<HHIIII", p)
            return {"kind": "result", "code": st, "status": STATUS.get(st, f"status {st}"), "methods_run": mrun,
                    "cases": cases, "cases_failed": failed, "frames_before": frames}
        if r.type == METHOD:
            prog, meth, _, used, size, load, exe = struct.unpack_from("<BBHIIQQ", p)
            return {"kind": "method", "program": prog, "method": meth, "pool_used": used, "pool_size": size,
                    "load_cycles": load, "exec_cycles": exe, "name": p[28:].decode("utf-8", "replace")}
        if r.type == FAULT:
            pc, lr, addr, status = struct.unpack_from("<IIII", p)
            return {"kind": "fault", "pc": pc, "lr": lr, "addr": addr, "status": status}
        if r.type == EVENT:
            return {"kind": "event", "payload": p}
    except (struct.error, LinkDecodeError, ValueError) as e:
        return {"kind": "malformed", "type": r.type, "error": str(e)}
    return {"kind": "unknown", "type": r.type}


class Encoder:
    """Host -> firmware frames."""

    def __init__(self):
        self.seq = 0

    def frame(self, rtype: int, payload: bytes = b"") -> bytes:
        f = encode_frame(rtype, self.seq, payload)
        self.seq += 1
        return f

    def input(self, program: int, method: int, index: int, arr: np.ndarray, dtype_code: int,
              dim_order: tuple | None = None) -> bytes:
        """Sizes are the logical shape; the bytes follow the tensor's dim order (e.g. NHWC)."""
        head = struct.pack("<BBHBBH", program, method, index, dtype_code, arr.ndim, 0)
        data = arr.transpose(dim_order) if dim_order and list(dim_order) != list(range(arr.ndim)) else arr
        return self.frame(INPUT, head + struct.pack(f"<{arr.ndim}i", *arr.shape) + np.ascontiguousarray(data).tobytes())

    def run(self, program: int, method: int) -> bytes:
        return self.frame(RUN, struct.pack("<BB", program, method))

    def end(self) -> bytes:
        return self.frame(END)


def dtype_code(arr: np.ndarray) -> int:
    code = code_of(arr.dtype)
    if code is None:
        raise LinkDecodeError(f"no executorch dtype for numpy {arr.dtype}")
    return code


__all__ = ["Decoder", "Encoder", "Record", "Output", "LinkStats", "parse_record", "DTYPES"]
