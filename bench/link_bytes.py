"""Link: bytes on the wire per profile event, ours against upstream's base64 ETDump line, same model,
same inputs (all ones), one inference each.

Ours: the image built with etdump=1 runs on corstone300 (QEMU); every EVENT frame it sent is counted
as it travels: COBS-framed record with type, sequence and CRC plus the 0x00 delimiter.
Upstream: executorch's runtime (portable_lib, ETDump on, profiling only: no debug buffer) runs the
same .pte; its .etdp file is what upstream's Arm runner prints as one base64 line (+ newline).
Both carry one profile event per executed operator and the method's run; the ratio is per operator
event (the same count on both sides). The dump with intermediate outputs (oracle.run_reference_etdump,
debug buffer on) is shown too.

    .venv/bin/python bench/link_bytes.py [models...]
Goal: ours / upstream <= 1/3 bytes per event."""
from __future__ import annotations

import argparse
import base64
import struct
import sys
import tempfile
from pathlib import Path

from common import MODELS, WORK, Row, info, print_table, row, save, scons

GOAL = 1 / 3
BOARD = "corstone300"


def ours(model: str) -> tuple[int, int, int]:
    """(wire bytes of EVENT frames, operator events, frames) for one inference on the board."""
    from etdeploy import config, link, session
    bdir = WORK / "link" / model
    scons(["-j2", f"board={BOARD}", f"pte={MODELS / (model + '.pte')}", "etdump=1"], bdir)
    res = session.run(config.load_board(BOARD), bdir / BOARD / "firmware.elf", bdir / BOARD / "run", timeout=120,
                      log=lambda m: None)
    if res.status != "pass":
        raise RuntimeError(f"{model}: {res.status} {res.reason}")
    wire, events = 0, 0
    for seq, p in enumerate(res.events):
        wire += len(link.encode_frame(link.EVENT, seq, bytes(p)))
        if p[0] == 2:   # run record: u8 2, prog, method, status, u32 run, u64 start, u64 end, u32 events
            events += struct.unpack_from("<I", bytes(p), 24)[0]
    return wire, events, len(res.events)


def upstream(model: str, debug: bool) -> tuple[int, int, int]:
    """(base64 line bytes, operator events, all profile events) of the real runtime's ETDump."""
    from etdeploy import oracle, profile_view
    with tempfile.TemporaryDirectory() as d:
        etdp = Path(d) / "x.etdp"
        if debug:
            oracle.run_reference_etdump(MODELS / f"{model}.pte", None, etdp)
        else:
            pl = oracle._portable_lib()
            mod = pl._load_for_executorch(str(MODELS / f"{model}.pte"), enable_etdump=True)
            import torch
            mod.forward(tuple(torch.from_numpy(a) for a in oracle.ones_inputs(oracle._input_specs(mod, "forward"))))
            mod.write_etdump_result_to_file(str(etdp), str(etdp) + ".bin")
        raw = etdp.read_bytes()
        dump = profile_view.read(etdp)
    names = [e["profile_event"]["name"] for rd in dump.get("run_data") or [] for e in rd.get("events") or []
             if e.get("profile_event")]
    ops = sum(1 for n in names if n.startswith("native_call_") or n == "DELEGATE_CALL")
    return len(base64.b64encode(raw)) + 1, ops, len(names)


def main(argv=None) -> list[Row]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=["mlp", "cnn", "ops_arith"])
    a = ap.parse_args(argv)
    rows, extra = [], {}
    for m in a.models:
        w, ev, frames = ours(m)
        ub, uops, uall = upstream(m, debug=False)
        db, _, _ = upstream(m, debug=True)
        if ev != uops:
            rows.append(info("link", f"{m}: event counts differ", f"ours {ev}, upstream {uops}"))
        per_ours, per_up = w / max(ev, 1), ub / max(uops, 1)
        extra[m] = {"ours_wire_bytes": w, "ours_events": ev, "ours_frames": frames, "upstream_b64_bytes": ub,
                    "upstream_op_events": uops, "upstream_profile_events": uall, "upstream_debug_b64_bytes": db}
        rows.append(row("link", f"{m}: bytes per operator event, ours/upstream", per_ours / per_up, GOAL, "{:.3f}", "x",
                        note=f"ours {w} B in {frames} frames for {ev} events = {per_ours:.1f} B/event; upstream "
                             f"base64 line {ub} B / {uops} = {per_up:.1f} B/event ({ub / uall:.1f} B per profile "
                             f"event incl. OPERATOR_CALL/init); with intermediate outputs {db} B"))
    print_table(rows, "Link bytes per profile event")
    save("link_bytes", rows, extra)
    return rows


if __name__ == "__main__":
    sys.exit(0 if all(r.ok is not False for r in main()) else 1)
