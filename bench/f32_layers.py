"""Float32 real networks on the Cortex-M55 (corstone300, Helium) under QEMU -icount: instructions per
MAC per layer kind (pointwise 1x1 conv, depthwise conv, general KxK conv, linear, and every other
operator by name, with its share of the whole) and for the whole model, NCHW and channels_last.

Networks: bench/real_nets.py (MLPerf Tiny DS-CNN, ResNet-8, MobileNetV1-0.25 VWW, mobilenet_v2 0.35).
Counting as bench/mcu_work.py: per layer, an etdump=1 image's events; whole model, exec_cycles of an
image built without profiling; instructions = SysTick ticks x 31.25.

    .venv/bin/python bench/f32_layers.py [--board corstone300] [--layouts nchw,cl] [nets...]
Goal (issue 15): whole model <= 1.5 instructions per MAC on corstone300."""
from __future__ import annotations

import argparse
import json
import sys
from math import prod
from pathlib import Path

import macs as macs_mod
import mcu_work
import real_nets
from common import WORK, info, print_table, row, save, scons
from etdeploy import pte

GOAL = 1.5


def layer_kinds(path: Path) -> list[tuple[int, str, int]]:
    """(instruction index, kind, MACs) per kernel call: conv split into pointwise / depthwise / kxk."""
    root = macs_mod._root(path)
    plan = next(p for p in root["execution_plan"] if p.get("name") == "forward")
    vals = plan["values"]
    out = []
    for ins in macs_mod.instructions(path):
        kind = ins.kind
        if kind == "conv":
            body = plan["chains"][0]["instructions"][ins.index]["instr_args"]
            x, w = (pte._describe(vals[body["args"][i]]) for i in (0, 1))
            cpg, ksz = w.sizes[1], prod(w.sizes[2:])
            kind = "conv dw" if cpg == 1 and x.sizes[1] > 1 else ("conv 1x1" if ksz == 1 else "conv kxk")
        elif kind == "other":
            kind = ins.op.split("::")[-1].split(".")[0]
        out.append((ins.index, kind, ins.macs))
    return out


def run(pte_path: Path, board: str, etdump: bool, tag: str) -> Path:
    from etdeploy import config, runners
    bdir = WORK / "f32" / f"{tag}{'-prof' if etdump else ''}"
    scons(["-j2", f"board={board}", f"pte={pte_path}", "opt=2", "arena_region=ddr", f"etdump={1 if etdump else 0}"], bdir)
    res = runners.run(config.load_board(board), bdir / board / "firmware.elf", bdir / board / "run", timeout=600,
                      icount=True, log=lambda m: None)
    if res.status != "pass":
        raise RuntimeError(f"{tag} on {board}: {res.status} {res.reason}")
    return bdir / board / "run"


def main(argv=None):
    from etdeploy import config
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nets", nargs="*", default=real_nets.NETS)
    ap.add_argument("--board", default="corstone300")
    ap.add_argument("--layouts", default=",".join(real_nets.LAYOUTS))
    a = ap.parse_args(argv)
    ipt = 1e9 / config.load_board(a.board).cycles.hz
    rows, detail = [], {}
    for net in a.nets:
        for lay in a.layouts.split(","):
            d = real_nets.export(net, lay)
            tag = f"{net}-{lay}"
            kinds = layer_kinds(d / "m.pte")
            ticks = mcu_work.per_instruction_ticks(run(d / "m.bpte", a.board, True, tag))
            total = mcu_work.exec_ticks(run(d / "m.bpte", a.board, False, tag)) * ipt
            macs = sum(m for _, _, m in kinds)
            per: dict[str, list[float]] = {}
            for idx, kind, m in kinds:
                p = per.setdefault(kind, [0.0, 0])
                p[0] += ticks.get(idx, 0) * ipt
                p[1] += m
            profiled = sum(v[0] for v in per.values())
            detail[tag] = {"macs": macs, "instructions": round(total),
                           "kinds": {k: {"instructions": round(v[0]), "macs": v[1]} for k, v in per.items()}}
            parts = []
            for k, (n, m) in sorted(per.items(), key=lambda kv: -kv[1][0]):
                share = f"{100 * n / profiled:.0f}%"
                parts.append(f"{k} {n / m:.2f}/MAC {share}" if m else f"{k} {n:,.0f} {share}")
            rows.append(row("f32_layers", f"{tag} [{a.board}] f32 whole model: instructions/MAC", total / macs,
                            GOAL, "{:.2f}", note=f"{macs:,} MACs, {total:,.0f} instructions"))
            rows.append(info("f32_layers", f"{tag} per kind", "", "; ".join(parts)))
    print_table(rows, "Float32 real networks under QEMU -icount")
    save("f32_layers", rows, detail)
    return rows


if __name__ == "__main__":
    sys.exit(0 if all(r.ok is not False for r in main()) else 1)
