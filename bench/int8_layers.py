"""Int8 work per layer kind on real networks (bench/int8_nets.py), Cortex-M55 under QEMU -icount,
counted as bench/mcu_work.py counts: instructions = SysTick ticks x 1e9 / timer Hz; per layer from an
etdump=1 image, the whole inference from an image without profiling.

Kinds: pointwise (1x1 quantized_conv2d), conv (other quantized_conv2d), dw3x3 / dw5x5 (depthwise),
linear, other (quantize, pools, adds, ...). MACs from the .pte shapes (bench/macs.py).
Goals (issue 15): whole model <= 0.5 instructions per MAC, pointwise <= 0.25, 3x3 depthwise <= 0.6.

    .venv/bin/python bench/int8_layers.py [nets...]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import int8_nets
import macs as macs_mod
from common import WORK, info, print_table, row, save, scons
from mcu_work import exec_ticks, per_instruction_ticks

from etdeploy import pte

BOARD = "corstone300"
GOALS = {"whole": 0.5, "pointwise": 0.25, "dw3x3": 0.6}


def kinds(path: Path) -> dict[int, str]:
    """instruction index -> layer kind, from the weight shapes"""
    root = macs_mod._root(path)
    plan = next(p for p in root["execution_plan"] if p.get("name") == "forward")
    vals = plan["values"]
    ops = [o.get("name") for o in plan.get("operators") or []]
    out = {}
    for i, ins in enumerate(plan["chains"][0].get("instructions") or []):
        if ins.get("instr_args_type") != "KernelCall":
            continue
        body = ins["instr_args"]
        op = ops[body["op_index"]].split("::")[-1]
        if op in ("quantized_conv2d", "quantized_depthwise_conv2d"):
            w = pte._describe(vals[body["args"][1]])
            kh, kw = w.sizes[1], w.sizes[2]
            if op == "quantized_conv2d":
                out[i] = "pointwise" if kh == kw == 1 else "conv"
            else:
                out[i] = f"dw{kh}x{kw}"
        elif op == "quantized_linear":
            out[i] = "linear"
        else:
            out[i] = "other"
    return out


def run(path: Path, etdump: bool) -> Path:
    from etdeploy import config, runners
    bdir = WORK / "int8_layers" / f"{path.stem}{'-prof' if etdump else ''}"
    scons(["-j2", f"board={BOARD}", f"pte={path}", "opt=2", f"etdump={1 if etdump else 0}"], bdir)
    run_dir = bdir / BOARD / "run"
    res = runners.run(config.load_board(BOARD), bdir / BOARD / "firmware.elf", run_dir, timeout=600, icount=True,
                      log=lambda m: None)
    if res.status != "pass":
        raise RuntimeError(f"{path.name} on {BOARD}: {res.status} {res.reason}")
    return run_dir


def main(argv=None):
    from etdeploy import config
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nets", nargs="*", default=list(int8_nets.NETS))
    a = ap.parse_args(argv)
    ipt = 1e9 / config.load_board(BOARD).cycles.hz
    rows, layers, totals = [], [], {}
    for name in a.nets:
        path = int8_nets.export(name)
        instrs = macs_mod.instructions(path)
        kind = kinds(path)
        ticks = per_instruction_ticks(run(path, True))
        for ins in instrs:
            n = ticks.get(ins.index, 0) * ipt
            layers.append({"net": name, "instr": ins.index, "op": ins.op, "kind": kind.get(ins.index, "other"),
                           "macs": ins.macs, "instructions": round(n)})
        t = exec_ticks(run(path, False)) * ipt
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
