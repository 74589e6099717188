"""Drives a started target through the link and judges the run.

Success only from a positive result record, an exit status of 0 and a clean link; never from the
absence of error text. A timeout kills the target. Failures become typed errors that carry the
result, so the CLI can print it and pick the exit code."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import errors, link


@dataclass
class RunResult:
    status: str = "error"             # pass | fail | error
    reason: str = ""
    exit_code: int | None = None
    hello: dict | None = None
    outputs: list = field(default_factory=list)        # link.Output
    cases: list = field(default_factory=list)
    methods: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    fault: dict | None = None
    result: dict | None = None
    logs: list = field(default_factory=list)
    events: list = field(default_factory=list)         # raw EVENT payloads, in order
    link: link.LinkStats = field(default_factory=link.LinkStats)
    elapsed: float = 0.0
    timed_out: bool = False
    stderr: str = ""


def drive(session, timeout: float, inputs: list[list[np.ndarray] | None] | None = None,
          progress=None, dim_orders=None, ends_with_record: bool = False) -> RunResult:
    """Read records until the target exits (or the timeout); send inputs when the firmware asks.
    ends_with_record: a device with no exit status; its result or fault record ends the run, and what
    it says after that (a semihosting exit with no debugger faults) is not part of it."""
    res = RunResult()
    dec = link.Decoder()
    enc = link.Encoder()
    t0 = time.monotonic()
    deadline = t0 + timeout
    grace_until = None
    ended = False

    def send_inputs():
        if inputs is None:
            raise errors.RunError("the image waits for inputs over the link: give inputs (--input)")
        for mi, arrays in enumerate(inputs):
            if arrays is None:
                continue
            for i, a in enumerate(arrays):
                order = dim_orders(mi, i) if dim_orders else None
                session.write(enc.input(0, mi, i, a, link.dtype_code(a), order))
            session.write(enc.run(0, mi))
        session.write(enc.end())

    def take(data: bytes) -> None:
        nonlocal grace_until, ended
        for rec in dec.feed(data):
            if ended:
                continue
            r = link.parse_record(rec)
            kind = r["kind"]
            if kind == "hello":
                res.hello = r
                if r["wants_inputs"]:
                    send_inputs()
            elif kind == "output":
                res.outputs.append(r["output"])
            elif kind in ("case", "method", "error"):
                {"case": res.cases, "method": res.methods, "error": res.errors}[kind].append(r)
            elif kind == "fault":
                res.fault = r
                ended = ends_with_record
            elif kind == "result":
                res.result = r
                grace_until = time.monotonic() + 5.0
                ended = ends_with_record
            elif kind == "log":
                res.logs.append(r["text"])
            elif kind == "event":
                res.events.append(r["payload"])
            elif kind == "malformed":
                res.link.bad_frames += 1
            if progress:
                progress(r)

    while True:
        if time.monotonic() >= deadline:
            res.timed_out = True
            break
        data = session.read(0.05)
        if data:
            take(data)
        if ended:
            break
        rc = session.poll()
        if rc is not None and not data:
            # The target exited: drain what is still buffered.
            tail = session.read(0.05)
            while tail:
                take(tail)
                tail = session.read(0.05)
            res.exit_code = rc
            break
        if grace_until and time.monotonic() > grace_until:
            break   # result arrived but the target did not exit: judged below
    if res.exit_code is None:
        session.kill()
        res.exit_code = session.poll()
        if not res.timed_out and res.result is not None and not ended:
            res.reason = "the target sent its result but did not exit"
    if not ended:
        dec.finish()   # a device that ended with its record may have been cut off mid-frame after it
    s = dec.stats
    res.link.frames += s.frames
    res.link.bad_frames += s.bad_frames
    res.link.lost_frames += s.lost_frames
    res.elapsed = time.monotonic() - t0
    res.stderr = session.stderr_tail()
    return res


def judge(res: RunResult, timeout: float, describe_op=None, symbolize=None, expect_runs: int = 0) -> RunResult:
    """Sets status/reason; returns res for pass and mismatch-free runs, raises typed errors otherwise."""
    lost = res.link.bad_frames + res.link.lost_frames
    if res.timed_out:
        res.status, res.reason = "error", f"timeout: no result within {timeout:g} s (target killed)"
        raise _with(errors.RunTimeout(res.reason), res)
    if res.fault:
        f = res.fault
        where = symbolize(f["pc"]) if symbolize else None
        res.status = "error"
        res.reason = (f"hard fault at pc=0x{f['pc']:08x}" + (f" in {where}" if where else "") +
                      f", lr=0x{f['lr']:08x}, fault address 0x{f['addr']:08x}, status 0x{f['status']:08x}")
        raise _with(errors.RunFault(res.reason), res)
    if res.errors:
        e = res.errors[0]
        res.status = "error"
        res.reason = describe_error(e, describe_op)
        cls = {3: errors.RunOutOfMemory, 4: errors.RunMissingOperator, 1: errors.RunBadProgram,
               11: errors.RunScratchMismatch}.get(e["code"],
                                                                                                 errors.RunError)
        raise _with(cls(res.reason), res)
    if res.result is None:
        res.status = "error"
        res.reason = (f"the target exited with status {res.exit_code} without a result record"
                      + (f" ({lost} frame(s) lost on the link)" if lost else ""))
        if res.stderr.strip():
            res.reason += f"; emulator said: {res.stderr.strip()[-400:]}"
        raise _with(errors.RunError(res.reason), res)
    if lost:
        res.status = "error"
        res.reason = f"link errors: {res.link.bad_frames} corrupt and {res.link.lost_frames} missing frame(s)"
        raise _with(errors.LinkError(res.reason), res)
    if res.result["code"] != 0:
        res.status = "error"
        res.reason = f"target reported {res.result['status']}"
        raise _with(errors.RunError(res.reason), res)
    if res.exit_code not in (0, None) and not res.result.get("cases_failed"):
        res.status = "error"
        res.reason = f"the target reported success but exited with status {res.exit_code}"
        raise _with(errors.RunError(res.reason), res)
    if expect_runs and res.result.get("methods_run", 0) < expect_runs:
        res.status = "error"
        res.reason = (f"inputs were sent for {expect_runs} execution(s) but the target ran "
                      f"{res.result.get('methods_run', 0)}")
        raise _with(errors.RunError(res.reason), res)
    if res.result.get("cases_failed"):
        res.status = "fail"
        bad = [c for c in res.cases if not c["passed"]]
        res.reason = (f"{res.result['cases_failed']} of {res.result['cases']} test case(s) differ from the expected "
                      f"outputs (first: case {bad[0]['case']}, output {bad[0]['first_bad_output']}, "
                      f"max abs err {bad[0]['max_abs_err']:.3g})" if bad else "test cases failed")
        raise _with(errors.RunMismatch(res.reason), res)
    res.status, res.reason = "pass", "ok"
    return res


def describe_error(e: dict, describe_op=None) -> str:
    where = []
    if e.get("method") is not None:
        where.append(f"method {e['method']}")
    if e.get("instruction") is not None:
        where.append(f"instruction {e['instruction']}")
    if e.get("op") is not None:
        name = describe_op(e["program"], e.get("method") or 0, e["op"]) if describe_op else None
        where.append(f"operator {name or e['op']}")
    msg = f"{e['status']}" + (f" at {', '.join(where)}" if where else "")
    if e["code"] == 3:
        what = "a planned arena" if e.get("value") is not None else "the method pool"
        msg += f": {what} needs {e['detail']} bytes, {e['detail2']} available"
    elif e["code"] == 11:   # ET_ERR_SCRATCH: at load detail = the kernel's need, detail2 = bake's plan
        msg += (f": the kernel needs {e['detail']} bytes of scratch, bake planned {e['detail2']} "
                f"(tools/etdeploy/kernel_scratch.py and the kernel's size function disagree)")
    elif e["code"] == 6 and e.get("detail") is not None:
        msg += f" (argument {e['detail']})"
    return msg


def _with(exc: errors.RunError, res: RunResult) -> errors.RunError:
    exc.result = res
    return exc
