"""etdeploy etdump: what an ETDump says, as a table and a picture."""
from __future__ import annotations

from pathlib import Path

HELP = "summarise an .etdp: per-operator table and an SVG of time per operator and a timeline"


def register(sub):
    p = sub.add_parser("etdump", help=HELP, description=HELP)
    p.add_argument("etdp")
    p.add_argument("--etrecord", help="ETRecord of the model: also checks the dump with executorch's Inspector")
    p.add_argument("--compare", metavar="ETDP", help="a second run to compare against (B/A ratios)")
    p.add_argument("--svg", help="write the picture here (default: <etdp>.svg)")
    p.add_argument("--unit", default="cycles")
    p.set_defaults(func=main)
    return p


def main(args) -> int:
    from .. import profile_view as pv
    a = pv.read(Path(args.etdp))
    ops, total, timeline = pv.stats(a)
    if args.compare:
        ops_b, _, _ = pv.stats(pv.read(Path(args.compare)))
        print(pv.compare_table(ops, ops_b, Path(args.etdp).stem, Path(args.compare).stem))
    else:
        print(pv.table(ops, total, args.unit))
    out = Path(args.svg) if args.svg else Path(args.etdp).with_suffix(".svg")
    out.write_text(pv.svg(ops, timeline, f"{Path(args.etdp).name}", args.unit))
    print(f"picture: {out}")
    if args.etrecord:
        from executorch.devtools import Inspector
        from executorch.devtools.inspector import TimeScale
        ins = Inspector(etdump_path=args.etdp, etrecord=args.etrecord, source_time_scale=TimeScale.CYCLES,
                        target_time_scale=TimeScale.CYCLES)
        n = sum(len(b.events) for b in ins.event_blocks)
        print(f"Inspector: {len(ins.event_blocks)} run(s), {n} event(s) linked to the ETRecord")
    return 0
