"""Work per inference on microcontrollers, deterministic: each image runs under QEMU with
instruction counting (-icount shift=0: one instruction = 1 ns of virtual time), so the board's timer
counts instructions: instructions = ticks x 1e9 / timer Hz (Cortex-M55 SysTick 32 MHz: x31.25).

Per inference: the METHOD record's exec_cycles of an image built without profiling.
Per layer: an etdump=1 image; each instruction's event (ticks) / the layer's MACs from the .pte shapes.
Boards: corstone300 (Cortex-M55, Helium/MVE: the goals), mps2-an386 (Cortex-M4, no MVE) and
xtensa-sim (lx106, soft float): the portable C path, reported without a goal.

    .venv/bin/python bench/mcu_work.py [--boards corstone300,mps2-an386,xtensa-sim] [models...]
Goals on corstone300: float32 linear/conv <= 1.5 instructions per MAC, int8 cortex_m:: <= 0.5."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from common import MODELS, WORK, Row, info, print_table, row, save, scons

MODELS_F32 = ["mlp", "cnn"]
MODELS_INT8 = ["mlp_cortex_m", "cnn_cortex_m"]
GOAL_BOARD = "corstone300"
GOALS = {"float32": 1.5, "int8": 0.5}
BOARDS = ["corstone300", "mps2-an386", "xtensa-sim"]


def _icount_everywhere():
    """The qemu-semihost runner (Xtensa) does not pass -icount yet: add it for this process only."""
    from etdeploy import runners
    from etdeploy.runners.process import QemuSemihostRunner

    class Counted(QemuSemihostRunner):
        def command(self, elf, **kw):
            argv = super().command(elf, **kw)
            return argv + (["-icount", "shift=0"] if kw.get("icount") and "-icount" not in argv else [])

        def start(self, elf, **kw):
            from etdeploy.runners.base import ProcessSession
            return ProcessSession(self.command(elf, **kw))
    runners.RUNNERS["qemu-semihost"] = Counted


def build_and_run(model: str, boards: list[str], etdump: bool) -> dict[str, Path]:
    """Builds model.pte for the boards (private build dir), runs each with icount; {board: run_dir}."""
    from etdeploy import config, session
    bdir = WORK / "mcu" / f"{model}{'-prof' if etdump else ''}"
    scons(["-j2", f"board={','.join(boards)}", f"pte={MODELS / (model + '.pte')}", "opt=2",
           f"etdump={1 if etdump else 0}"], bdir)
    out = {}
    for b in boards:
        run_dir = bdir / b / "run"
        res = session.run(config.load_board(b), bdir / b / "firmware.elf", run_dir, timeout=300, icount=True,
                          log=lambda m: None)
        if res.status != "pass":
            raise RuntimeError(f"{model} on {b}: {res.status} {res.reason}")
        out[b] = run_dir
    return out


def per_instruction_ticks(run_dir: Path) -> dict[int, int]:
    from etdeploy import profile_view
    dump = profile_view.read(run_dir / "etdump.etdp")
    ticks: dict[int, int] = {}
    for rd in dump.get("run_data") or []:
        for e in rd.get("events") or []:
            pe = e.get("profile_event")
            if pe and pe.get("chain_index") == 0:
                ticks[pe["instruction_id"]] = ticks.get(pe["instruction_id"], 0) + pe["end_time"] - pe["start_time"]
    return ticks


def exec_ticks(run_dir: Path) -> int:
    doc = json.loads((run_dir / "result.json").read_text())
    return sum(m["exec_cycles"] for m in doc["methods"])


def _kind(layer) -> str:
    """this table's kinds: linear, conv (every convolution) or other"""
    return "conv" if layer.kind in ("pointwise", "conv", "depthwise") else layer.kind


def main(argv=None) -> list[Row]:
    from etdeploy import config, program_macs
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=MODELS_F32 + MODELS_INT8)
    ap.add_argument("--boards", default=",".join(BOARDS))
    a = ap.parse_args(argv)
    boards = a.boards.split(",")
    _icount_everywhere()
    ipt = {b: 1e9 / config.load_board(b).cycles.hz for b in boards}   # instructions per tick
    rows, layers, totals = [], [], {}
    for model in a.models:
        instrs = program_macs.layers(MODELS / f"{model}.pte")
        prof = build_and_run(model, boards, etdump=True)
        plain = build_and_run(model, [GOAL_BOARD], etdump=False) if GOAL_BOARD in boards else {}
        for b in boards:
            ticks = per_instruction_ticks(prof[b])
            for ins in instrs:
                n = ticks.get(ins.index, 0) * ipt[b]
                layers.append({"model": model, "board": b, "instr": ins.index, "op": ins.op, "kind": _kind(ins),
                               "macs": ins.macs, "instructions": round(n),
                               "per_mac": (n / ins.macs) if ins.macs else None})
        if plain:
            t = exec_ticks(plain[GOAL_BOARD])
            totals[model] = {"ticks": t, "instructions": round(t * ipt[GOAL_BOARD]),
                             "macs": sum(i.macs for i in instrs)}
            rows.append(info("mcu_work", f"{model}: instructions per inference (M55)",
                             f"{t * ipt[GOAL_BOARD]:,.0f}",
                             f"{t} SysTick ticks; {sum(i.macs for i in instrs):,} MACs"))
    # goal rows: per model, per kind, all layers of that kind together
    for model in a.models:
        dtype = "int8" if model in MODELS_INT8 else "float32"
        for b in boards:
            for kind in ("linear", "conv"):
                ls = [x for x in layers if x["model"] == model and x["board"] == b and x["kind"] == kind]
                if not ls:
                    continue
                n, m = sum(x["instructions"] for x in ls), sum(x["macs"] for x in ls)
                what = f"{model} [{b}] {dtype} {kind}: instructions/MAC"
                note = ", ".join(f"{x['op'].split('::')[-1]}#{x['instr']} {x['per_mac']:.2f}" for x in ls)
                if b == GOAL_BOARD:
                    rows.append(row("mcu_work", what, n / m, GOALS[dtype], "{:.2f}", "", note=note))
                else:
                    rows.append(info("mcu_work", what, f"{n / m:.2f}", "portable C path, no goal; " + note))
    # what else costs work per inference (weight transposes, quantize...) on the goal board
    for model in a.models:
        for x in layers:
            if x["model"] == model and x["board"] == GOAL_BOARD and x["kind"] == "other" and x["instructions"] > 2000:
                rows.append(info("mcu_work", f"{model} [M55] {x['op']}#{x['instr']}", f"{x['instructions']:,}",
                                 "instructions per inference outside linear/conv"))
    print_table(rows, "Work per inference under QEMU -icount (instructions)")
    save("mcu_work", rows, {"layers": layers, "totals": totals})
    return rows


if __name__ == "__main__":
    sys.exit(0 if all(r.ok is not False for r in main()) else 1)
