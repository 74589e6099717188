"""etdeploy monitor: a live, decoded view of a running device's link (logs, outputs, results,
profile events), from any pyserial URL: /dev/ttyACM0, socket://host:port, a pty."""
from __future__ import annotations

import sys
import time

HELP = "show what a running device says over its link, decoded, live"


def register(sub):
    p = sub.add_parser("monitor", help=HELP, description=HELP)
    p.add_argument("--port", required=True, help="pyserial URL: /dev/ttyUSB0, socket://127.0.0.1:5555, ...")
    p.add_argument("--baud", type=int, default=115200)
    p.add_argument("--duration", type=float, default=0, help="stop after N seconds (0 = until a result record)")
    p.set_defaults(func=main)
    return p


def describe(r: dict) -> str:
    k = r["kind"]
    if k == "hello":
        return f"hello: link v{r['version']}, {r['programs']} program(s), cycles at {r['cycles_hz']:,} Hz"
    if k == "log":
        return f"log: {r['text']}"
    if k == "output":
        o = r["output"]
        v = o.value
        shape = list(getattr(v, "shape", []))
        return f"output p{o.program} m{o.method} #{o.index}: {getattr(v, 'dtype', type(v).__name__)}{shape}"
    if k == "case":
        return f"case {r['case']}: {'pass' if r['passed'] else 'FAIL'} (max abs err {r['max_abs_err']:.3g})"
    if k == "method":
        return f"method {r['name']}: pool {r['pool_used']}/{r['pool_size']} B, {r['exec_cycles']:,} cycles"
    if k == "error":
        from ..harness import describe_error
        return f"ERROR: {describe_error(r)}"
    if k == "fault":
        return f"FAULT: pc=0x{r['pc']:08x} lr=0x{r['lr']:08x} addr=0x{r['addr']:08x}"
    if k == "result":
        return f"result: {r['status']}, {r['methods_run']} method run(s), {r['cases']} case(s), {r['cases_failed']} failed"
    if k == "event":
        return f"events: {len(r['payload'])} bytes"
    return f"{k}"


def main(args) -> int:
    import serial

    from .. import link
    try:
        # timeout=0: one recv per read, so bytes that arrive just before a disconnect are not lost
        port = serial.serial_for_url(args.port, baudrate=args.baud, timeout=0)
    except (serial.SerialException, ValueError) as e:
        print(f"etdeploy monitor: cannot open {args.port}: {e}", file=sys.stderr)
        return 2
    dec = link.Decoder()
    end = time.monotonic() + args.duration if args.duration else None
    status = 0
    try:
        while end is None or time.monotonic() < end:
            try:
                data = port.read(4096)
            except serial.SerialException:
                print("device disconnected", file=sys.stderr)
                break
            if not data:
                time.sleep(0.01)
                continue
            for rec in dec.feed(data):
                r = link.parse_record(rec)
                print(describe(r), flush=True)
                if r["kind"] == "result":
                    status = 0 if r["code"] == 0 and not r["cases_failed"] else 1
                    end = time.monotonic()
    except KeyboardInterrupt:
        pass
    finally:
        port.close()
    s = dec.stats
    print(f"link: {s.frames} frame(s), {s.bad_frames} corrupt, {s.lost_frames} lost", file=sys.stderr)
    return status
