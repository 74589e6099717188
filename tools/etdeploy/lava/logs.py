"""A finished LAVA job's log back into what a local run gives: result.json, the .etdp, and the same
typed error (so the same exit code).

The console lines of a link=text image carry every frame as "ETL:<hex of its COBS bytes>"; those
are turned back into the byte stream and judged by the same harness as a local run (link.Decoder's
COBS and CRC checks, harness.judge). The verdict line LAVA matched has its own CRC and must agree
with the result frame: a line that fails its CRC or contradicts the frame is refused."""
from __future__ import annotations

import re
import zlib
from pathlib import Path

from .. import errors, harness, link, results
from . import FarmJobFailed, dispatcher

VERDICT = re.compile(r"^(?P<text>ET-RESULT (?P<verdict>\S+) status=(?P<status>\d+) cases=(?P<cases>\d+) "
                     r"failed=(?P<failed>\d+) seq=(?P<seq>\d+)) crc=(?P<crc>[0-9a-fA-F]{8})\s*$")
_HEX = re.compile(r"^[0-9a-fA-F]*$")
TIMEOUT_MARKS = ("lava test monitoring has timed out", "LAVATimeoutError", "timed out after")


class ReplaySession:
    """The console bytes of a finished job, as a target session for harness.drive."""

    def __init__(self, data: bytes):
        self.data = data

    def read(self, timeout: float) -> bytes:
        data, self.data = self.data, b""
        return data

    def write(self, data: bytes) -> None:
        pass

    def poll(self):
        return 0 if not self.data else None   # "exited" once the log is consumed; the status is unknown

    def kill(self) -> None:
        pass

    def stderr_tail(self) -> str:
        return ""


def console(entries: list[dict]) -> list[str]:
    """The target's console lines. LAVA may cut a long line into several entries: a pure-hex entry
    right after an ETL: line is its continuation (the frame's CRC decides whether that was right)."""
    lines: list[str] = []
    for e in entries:
        if e.get("lvl") != "target" or not isinstance(e.get("msg"), str):
            continue
        for part in e["msg"].splitlines():
            part = part.strip()
            if lines and lines[-1].startswith("ETL:") and part and _HEX.match(part):
                lines[-1] += part
            else:
                lines.append(part)
    return lines


def link_bytes(lines: list[str]) -> bytes:
    """The binary link as the firmware would have sent it, from the ETL: lines."""
    out = bytearray()
    for line in lines:
        i = line.find("ETL:")
        if i < 0:
            continue
        body = line[i + 4:].strip()
        try:
            out += bytes.fromhex(body)
        except ValueError:
            out += body.encode("ascii", "replace")   # not hex: a corrupt frame, counted by the decoder
        out += b"\0"
    return bytes(out)


def check_verdict(lines: list[str], res: harness.RunResult) -> str | None:
    """Why the verdict lines cannot be trusted, or None. Called after the frames are decoded."""
    for line in lines:
        if not line.startswith("ET-RESULT"):
            continue
        m = VERDICT.match(line)
        if not m:
            return f"malformed verdict line {line[:80]!r}"
        if zlib.crc32(m["text"].encode()) != int(m["crc"], 16):
            return f"verdict line fails its CRC: {line[:100]!r}"
        r = res.result
        if r is None:
            return "a verdict line but no result frame"
        want = "pass" if r["code"] == 0 and not r["cases_failed"] else "fail"
        if (m["verdict"], int(m["status"]), int(m["cases"]), int(m["failed"])) != (
                want, r["code"], r["cases"], r["cases_failed"]):
            return f"verdict line {m['text']!r} contradicts the result frame"
    return None


def timed_out(entries: list[dict]) -> bool:
    for e in entries:
        msg = e.get("msg")
        text = msg if isinstance(msg, str) else (str(msg.get("error_msg", "")) if isinstance(msg, dict) else "")
        if e.get("lvl") in ("warning", "error", "results") and any(t in text for t in TIMEOUT_MARKS):
            return True
    return False


def judge_log(log: Path, run_dir: Path, board_name: str = "", programs=None, elf: Path | None = None,
              timeout: float = 60.0) -> harness.RunResult:
    """Writes run_dir/result.json (and the .etdp) from the job log; returns the passing result or
    raises the typed error a local run of the same image would have raised."""
    entries = dispatcher.read_log(log)
    if not entries:
        raise FarmJobFailed(f"{log}: not a LAVA job log (no entries)")
    lines = console(entries)
    lava = dispatcher.verdict(log)
    if not any(l.startswith(("ETL:", "ET-")) for l in lines) and lava.get("error"):
        raise FarmJobFailed(f"LAVA ended the job before the firmware said anything: {' '.join(lava['error'].split())}")
    res = harness.drive(ReplaySession(link_bytes(lines)), timeout=timeout)
    res.exit_code = None       # LAVA does not report the emulator's exit status
    res.elapsed = lava.get("test_seconds") or 0.0     # LAVA's monitor: from the first frame to the verdict
    res.timed_out = res.result is None and res.fault is None and timed_out(entries)
    res.stderr = ""
    bad = check_verdict(lines, res)
    if bad:
        res.link.bad_frames += 1
    programs = programs or []

    def op_name(p, m, op):
        try:
            return programs[p].methods[m].operators[op]
        except (IndexError, TypeError):
            return None
    symbolize = None
    if elf is not None and Path(elf).exists():
        from ..session import symbolizer
        symbolize = symbolizer(Path(elf))
    extra = {"lava": {"log": str(log), "verdict": lava}}
    try:
        if bad and res.result is not None and not res.timed_out and not res.fault and not res.errors:
            res.status, res.reason = "error", f"link errors: {bad}"
            err = errors.LinkError(res.reason)
            err.result = res
            raise err
        if not res.timed_out and res.result is None and not res.fault and not res.errors and lava.get("error"):
            res.stderr = f"LAVA: {lava['error']}"
        harness.judge(res, timeout, describe_op=op_name, symbolize=symbolize)
    finally:
        if res.events:
            from .. import etdump
            lost = res.link.bad_frames + res.link.lost_frames
            try:
                extra["etdump"] = etdump.write(res.events, programs, Path(run_dir),
                                               stem="etdump.partial" if lost else "etdump")
            except errors.RunError as e:
                extra["etdump"] = {"error": str(e)}
        results.write(res, Path(run_dir), programs, board=board_name, extra=extra)
    return res
