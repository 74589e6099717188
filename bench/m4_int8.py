"""Cortex-M4 int8 on real networks: instructions per MAC of MLPerf Tiny DS-CNN and ResNet-8.

Full size from tests/realmodels, cortex_m flow for the M4, exported, built and run by bench/real_models.py's
helpers, on mps2-an386 under QEMU -icount (timer 25 MHz: one tick = 40 instructions). Whole model: the
METHOD record's exec_cycles of an image built without profiling (every operator included);
per layer: an etdump=1 image's event ticks / the layer's MACs.
Goal (issue 15): whole model <= 2.5 instructions per MAC.

    .venv/bin/python bench/m4_int8.py [--board mps2-an386] [ds_cnn resnet8]"""
from __future__ import annotations

import argparse
import sys

from common import info, print_table, row, save
from real_models import export, profile

GOAL = 2.5
NETS = ["ds_cnn", "resnet8"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nets", nargs="*", default=NETS)
    ap.add_argument("--board", default="mps2-an386")
    a = ap.parse_args(argv)
    rows, layers = [], []
    for net in a.nets:
        instrs, per, whole, _ = profile(export(net, "m4_int8"), a.board, f"{net}-m4_int8")
        total_macs = sum(i.macs for i in instrs)
        for ins in instrs:
            n = per.get(ins.index, 0)
            layers.append({"net": net, "instr": ins.index, "op": ins.op, "macs": ins.macs, "instructions": round(n),
                           "per_mac": n / ins.macs if ins.macs else None})
            what = f"{net} #{ins.index} {ins.op.split('::')[-1].replace('.out', '')}"
            note = f"{ins.macs:,} MACs, {n:,.0f} instructions" if ins.macs else f"{n:,.0f} instructions"
            rows.append(info("m4_int8", what, f"{n / ins.macs:.2f}" if ins.macs else "-", note))
        rows.append(row("m4_int8", f"{net} [{a.board}] int8 whole model: instructions/MAC", whole / total_macs, GOAL,
                        "{:.2f}", note=f"{whole:,.0f} instructions, {total_macs:,} MACs"))
    print_table(rows, f"Cortex-M4 int8 on real networks ({a.board}, QEMU -icount)")
    save("m4_int8", rows, {"layers": layers})
    return rows


if __name__ == "__main__":
    sys.exit(0 if all(r.ok is not False for r in main()) else 1)
