"""Real networks on microcontrollers, side by side in one run: MLPerf Tiny DS-CNN, ResNet-8, FC
autoencoder, MobileNetV1-0.25 VWW and torchvision mobilenet_v2 0.35 at 96x96 (tests/realmodels,
full size, random weights), exported from plain NCHW modules as a user would: float (portable) and
int8 (cortex_m flow, for the M55 and for the M4).

Per model and variant (M55 f32 and int8 on corstone300, M4 int8 on mps2-an386, QEMU -icount): MACs,
instructions per inference (METHOD record of an image without profiling) and per MAC, a per-layer-kind
breakdown (pointwise, KxK conv, depthwise, linear, other: ETDump events of an etdump=1 image), RAM
(planned arenas + method pool) and flash (every loaded section: code + model), and whether the image's
outputs (the firmware's default all-ones inputs) are the reference's: executorch's cortex_m:: reference
ops (int8) or its portable runtime (float). Goals (issue 15):
M55 int8 <= 0.5 instructions/MAC whole model, pointwise <= 0.25, 3x3 depthwise <= 0.6, int8 >= 3x
fewer instructions than f32, M55 f32 <= 1.5, M4 int8 <= 2.5.

    .venv/bin/python bench/real_models.py [--models ds_cnn,resnet8] [--variants m55_int8,m55_f32,m4_int8]
--models takes any tests/realmodels name; `--models heldout`: the networks the kernels were not tuned on
(realmodels.HELDOUT: shufflenet_v2_x0_5, mnasnet0_5, mobilenet_v3_small, googlenet, resnet18; since session 4
also efficientnet_b0, regnet_x_400mf, regnet_y_400mf, squeezenet1_1, mnasnet1_0; since session 5
mobilenet_v3_large, shufflenet_v2_x1_0, squeezenet1_0, mobilenet_v2 (width 1.0), densenet121, resnet50 and
the segmentation net lraspp_mobilenet_v3_large (at 64x64), ProxylessNAS-Mobile width 0.5 (7x7 depthwise) and
TC-ResNet8 (1-d keyword spotting), the last two written from their papers' tables). At 96x96
with 1000 classes, the int8 weights of googlenet, resnet18, efficientnet_b0, regnet_x/y_400mf, mnasnet1_0,
mobilenet_v3_large, densenet121 and resnet50 (4.3 to 25.6 M) alone exceed mps2-an386's 4 MB, so their m4_int8
rows fail with the plan's "does not fit" message.
Exports are cached by content under .cache/bench/realmodels (model sources, export code, reference code,
package versions): a re-run after kernel work only rebuilds and runs."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from common import ROOT, WORK, Row, info, print_table, row, save, scons
from mcu_work import exec_ticks, per_instruction_ticks

MODELS = ["ds_cnn", "resnet8", "fc_autoencoder", "mobilenet_v1_vww", "mobilenet_v2_035"]
# variant -> (flow, cpu for the cortex_m target config, board)
VARIANTS = {"m55_int8": ("cortex_m", "M55", "corstone300"), "m55_f32": ("portable", None, "corstone300"),
            "m4_int8": ("cortex_m", "M4", "mps2-an386")}
KINDS = ("pointwise", "conv", "depthwise", "linear", "other")
EXPORTS = ROOT / ".cache" / "bench" / "realmodels"


def _key(variant: str) -> str:
    import realmodels
    from support.export_key import flow_sources
    return realmodels.content_key(variant.encode(), flow_sources("cortex_m"))


def export(name: str, variant: str) -> Path:
    """The cached .pte of a model for a variant (exported once per content key)."""
    d = EXPORTS / f"{name}-{variant}-{_key(variant)}"
    pte = d / "m.pte"
    if pte.exists():
        return pte
    import realmodels
    from etdeploy import exporting
    flow, cpu, _ = VARIANTS[variant]
    module, ex = realmodels.build(name)
    exporting.export_model(module, ex, d, "m", flow, cases=1, cpu=cpu, bundle=False)
    return pte


def build_and_run(pte: Path, board: str, tag: str, etdump: bool) -> Path:
    """Build the program's image (etdump=1: per-instruction events) and run it under QEMU -icount;
    returns the run directory (bench/mcu_work.py reads the ticks from it)."""
    from etdeploy import config, runners
    bdir = WORK / "real" / f"{tag}{'-prof' if etdump else ''}"
    scons(["-j2", f"board={board}", f"pte={pte}", "opt=2", f"etdump={1 if etdump else 0}"], bdir, timeout=1200)
    run_dir = bdir / board / "run"
    res = runners.run(config.load_board(board), bdir / board / "firmware.elf", run_dir, timeout=1200, icount=True,
                      log=lambda m: None)
    if res.status != "pass":
        raise RuntimeError(f"{tag} on {board}: {res.status} {res.reason}")
    return run_dir


def memory(run_dir: Path) -> tuple[int, int, int]:
    """(RAM: planned arenas + method pool, flash: every loaded section, the pool's kernel scratch block: the
    scratch bake found no arena gap for) from the build's report."""
    rep = json.loads((run_dir.parent / "report.json").read_text())
    ram = sum(s["size"] for s in rep["sections"] if s["name"] in (".et_arena", ".et_pool"))
    scratch = sum((m.get("scratch") or {}).get("bytes", 0) for p in rep.get("bake", {}).get("programs", ())
                  for m in p["methods"])
    return ram, rep["totals"]["load"], scratch


def profile(pte: Path, board: str, tag: str):
    """(layers of the program (etdeploy.program_macs), {instruction index: instructions}, instructions of
    the whole inference, run dir of the plain image): an etdump=1 image for the layers, one without
    profiling for the whole inference, both under QEMU -icount."""
    from etdeploy import config, program_macs
    ipt = 1e9 / config.load_board(board).cycles.hz          # instructions per timer tick under -icount
    ticks = per_instruction_ticks(build_and_run(pte, board, tag, etdump=True))
    plain = build_and_run(pte, board, tag, etdump=False)
    return (program_macs.layers(pte), {i: t * ipt for i, t in ticks.items()}, exec_ticks(plain) * ipt, plain)


def outputs_check(pte: Path, variant: str, run_dir: Path) -> str:
    """'exact', 'close (worst relative error)' or 'MISMATCH: ...': the plain run's outputs (all-ones inputs, the
    firmware's default) against the reference run on the same inputs."""
    import numpy as np
    from etdeploy import oracle
    from support.compare import assert_close
    files = sorted(run_dir.glob("output_*.npy"), key=lambda f: int(f.stem.rsplit("_", 1)[1]))
    ours = [np.load(f) for f in files]
    run = oracle.run_cortex_m_reference if VARIANTS[variant][0] == "cortex_m" else oracle.run_reference
    ref = [np.asarray(o) for o in run(pte)]
    if len(ours) == len(ref) and all(a.shape == r.shape and np.array_equal(a, r) for a, r in zip(ours, ref)):
        return "exact"
    try:
        return f"close ({assert_close(ours, ref, variant):.1e})"
    except AssertionError as e:
        return "MISMATCH: " + str(e).splitlines()[0]


def measure(name: str, variant: str) -> dict:
    from etdeploy import program_macs
    flow, cpu, board = VARIANTS[variant]
    pte = export(name, variant)
    layers, per, instr, plain = profile(pte, board, f"{name}-{variant}")
    kinds: dict = {}
    for l in layers:
        k = kinds.setdefault(l.kind, {"macs": 0, "instructions": 0})
        k["macs"] += l.macs
        k["instructions"] += per.get(l.index, 0)
    dw3 = [l for l in layers if l.kind == "depthwise" and l.kernel == (3, 3)]
    ram, flash, scratch = memory(plain)
    macs = sum(l.macs for l in layers)
    return {"model": name, "variant": variant, "board": board, "macs": macs, "instructions": round(instr),
            "per_mac": instr / macs if macs else None, "kinds": kinds, "ram": ram, "flash": flash,
            "scratch": scratch, "outputs": outputs_check(pte, variant, plain),
            "dw3": {"macs": sum(l.macs for l in dw3), "instructions": sum(per.get(l.index, 0) for l in dw3)},
            "int8_share": program_macs.summary(layers).int8_share}


def _per(d: dict) -> float | None:
    return d["instructions"] / d["macs"] if d.get("macs") else None


def table(results: list[dict]) -> str:
    """Side by side: one line per model x variant."""
    head = (f"{'model':18} {'variant':9} {'MACs':>10} {'instr/inf':>12} {'instr/MAC':>9} "
            + " ".join(f"{k[:9]:>9}" for k in KINDS) + f" {'RAM KB':>7} {'flash KB':>8} {'int8 MACs':>9}  outputs")
    lines = [head, "-" * len(head)]
    for r in results:
        ks = " ".join(f"{_per(r['kinds'][k]):9.2f}" if r["kinds"].get(k, {}).get("macs") else
                      (f"{r['kinds'][k]['instructions'] / 1e3:8.0f}k" if k in r["kinds"] else f"{'-':>9}")
                      for k in KINDS)
        lines.append(f"{r['model']:18} {r['variant']:9} {r['macs']:10,d} {r['instructions']:12,d} "
                     f"{r['per_mac']:9.2f} {ks} {r['ram'] / 1024:7.1f} {r['flash'] / 1024:8.1f} "
                     f"{100 * r['int8_share']:8.0f}%  {r.get('outputs', '-')[:40]}")
    lines.append("per-kind columns: instructions per MAC of that kind's layers (other: instructions, k = 1000)")
    return "\n".join(lines)


def goals(results: list[dict]) -> list[Row]:
    by = {(r["model"], r["variant"]): r for r in results}
    rows = []
    for m in dict.fromkeys(r["model"] for r in results):
        q, f, m4 = by.get((m, "m55_int8")), by.get((m, "m55_f32")), by.get((m, "m4_int8"))
        if q:
            rows.append(row("real_models", f"{m} M55 int8 whole model: instr/MAC", q["per_mac"], 0.5, "{:.2f}"))
            pw = q["kinds"].get("pointwise")
            if pw and pw["macs"]:
                rows.append(row("real_models", f"{m} M55 int8 pointwise: instr/MAC", _per(pw), 0.25, "{:.2f}"))
            if q["dw3"]["macs"]:
                rows.append(row("real_models", f"{m} M55 int8 3x3 depthwise: instr/MAC", _per(q["dw3"]), 0.6,
                                "{:.2f}"))
        if q and f:
            x = f["instructions"] / q["instructions"]
            rows.append(Row("real_models", f"{m} M55 f32/int8 instructions", f"{x:.2f}x", ">= 3.00x", 3.0 / x,
                            x >= 3.0))
        if f:
            rows.append(row("real_models", f"{m} M55 f32 whole model: instr/MAC", f["per_mac"], 1.5, "{:.2f}"))
        if m4:
            rows.append(row("real_models", f"{m} M4 int8 whole model: instr/MAC", m4["per_mac"], 2.5, "{:.2f}"))
        for v, r in (("M55 int8", q), ("M55 f32", f), ("M4 int8", m4)):
            if r and r.get("outputs", "").startswith("MISMATCH"):
                rows.append(Row("real_models", f"{m} {v} outputs = reference", r["outputs"], "equal", None, False))
        for v, r in (("M55 int8", q), ("M4 int8", m4)):   # kernel scratch: at most 10% over the plan without it
            if r and r.get("ram"):
                rows.append(row("real_models", f"{m} {v} RAM / RAM without kernel scratch",
                                r["ram"] / (r["ram"] - r.get("scratch", 0)), 1.10, "{:.3f}",
                                note=f"{r['ram']} B, pool scratch block {r.get('scratch', 0)} B"))
    return rows


def main(argv=None) -> list[Row]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--variants", default=",".join(VARIANTS))
    a = ap.parse_args(argv)
    if a.models == "heldout":
        import realmodels
        a.models = ",".join(n for n in realmodels.HELDOUT if n not in MODELS)
    results, failed = [], []
    for m in a.models.split(","):
        for v in a.variants.split(","):
            try:
                results.append(measure(m, v))
            except Exception as e:   # one model that does not build/run must not hide the others
                failed.append(f"{m}/{v}: {type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}")
                print(f"!! {failed[-1]}", file=sys.stderr)
    print("\n== Real networks: instructions under QEMU -icount, RAM and flash")
    print(table(results))
    rows = goals(results) + [info("real_models", f"failed: {f}", "-") for f in failed]
    print_table(rows, "Real networks: issue 15 goals")
    save("real_models", rows, {"results": results, "failed": failed, "table": table(results)})
    return rows


if __name__ == "__main__":
    sys.exit(0 if all(r.ok is not False for r in main()) else 1)
