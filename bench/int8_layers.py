"""Int8 work per layer kind on real networks, Cortex-M55 under QEMU -icount.

Networks: full size from tests/realmodels, exported, built and run by bench/real_models.py's helpers
(variant m55_int8). Counted as bench/mcu_work.py counts: instructions = SysTick ticks x 1e9 / timer Hz; per layer from an
etdump=1 image, the whole inference from an image without profiling.

Kinds: pointwise (1x1 quantized_conv2d), conv (other quantized_conv2d), dw3x3 / dw5x5 (depthwise),
linear, other (quantize, pools, adds, ...). MACs from the .pte shapes (etdeploy.program_macs).
Goals (issue 15): whole model <= 0.5 instructions per MAC, pointwise <= 0.25, 3x3 depthwise <= 0.6.

    .venv/bin/python bench/int8_layers.py [nets...]
"""
from __future__ import annotations

import argparse
import sys

from common import info, print_table, row, save
from real_models import export, profile

BOARD = "corstone300"
GOALS = {"whole": 0.5, "pointwise": 0.25, "dw3x3": 0.6}
# the names this table has always used -> tests/realmodels names (those are accepted too)
NETS = {"ds_cnn": "ds_cnn", "resnet8": "resnet8", "mbv1_025": "mobilenet_v1_vww", "mbv2_blocks": "mbv2_blocks"}


def kind(layer) -> str:
    """pointwise, conv, dwKxK, linear or other (no MACs)"""
    if layer.kind == "depthwise":
        return "dw{}x{}".format(*layer.kernel)
    return layer.kind if layer.macs else "other"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nets", nargs="*", default=list(NETS))
    a = ap.parse_args(argv)
    rows, layers, totals = [], [], {}
    for name in a.nets:
        model = NETS.get(name, name)
        instrs, per, t, _ = profile(export(model, "m55_int8"), BOARD, f"{model}-m55_int8")
        for ins in instrs:
            layers.append({"net": name, "instr": ins.index, "op": ins.op, "kind": kind(ins),
                           "macs": ins.macs, "instructions": round(per.get(ins.index, 0))})
        m = sum(i.macs for i in instrs)
        totals[name] = {"instructions": round(t), "macs": m}
        rows.append(row("int8_layers", f"{name}: whole model instructions/MAC (M55)", t / m, GOALS["whole"],
                        "{:.2f}", note=f"{t:,.0f} instructions, {m:,} MACs"))
        order = ["pointwise", "conv", "dw3x3", "dw5x5", "linear"]
        for k in order + sorted({x["kind"] for x in layers if x["net"] == name} - set(order) - {"other"}) + ["other"]:
            ls = [x for x in layers if x["net"] == name and x["kind"] == k]
            if not ls:
                continue
            n, mk = sum(x["instructions"] for x in ls), sum(x["macs"] for x in ls)
            what = f"{name}: {k} ({len(ls)} layers)"
            if k in GOALS and mk:
                rows.append(row("int8_layers", what + " instructions/MAC", n / mk, GOALS[k], "{:.2f}",
                                note=f"{n:,} instructions, {mk:,} MACs"))
            elif mk:
                rows.append(info("int8_layers", what + " instructions/MAC", f"{n / mk:.2f}", f"{n:,} instructions"))
            else:
                rows.append(info("int8_layers", what + " instructions", f"{n:,}"))
    print_table(rows, "Int8 real networks on the Cortex-M55 under QEMU -icount")
    save("int8_layers", rows, {"layers": layers, "totals": totals})
    return rows


if __name__ == "__main__":
    sys.exit(0 if all(r.ok is not False for r in main()) else 1)
