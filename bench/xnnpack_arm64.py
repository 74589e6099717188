"""XNNPACK on AArch64 under qemu-user: our runtime with XnnpackBackend (Debian's arm64 XNNPACK, the shared
objects tools/bootstrap.sh unpacks) against our runtime on its portable kernels, same network, same run.

Float: --flow xnnpack vs --flow portable; int8: --flow xnnpack --quantize (xnnpack_q8) vs --quantize on
portable kernels (pt2e). Both images are the android-arm64 board's build with bench/host_bench.c as main
(-O2, one thread), cross-compiled and run by qemu-aarch64 (the XNNPACK image with -L glibc and
LD_LIBRARY_PATH, as `scons board=android-arm64 run=1` runs it); each times et_method_execute() alone.
Blocks interleave the two images so load on the shared machine hits both; figures are medians of all
samples. qemu translates both images' code (XNNPACK's NEON micro-kernels and our C alike), so the ratio,
not the microseconds, is what carries over to a device. Networks: tests/realmodels at full size, random
weights, exported on first use into .cache/bench/xnnpack-arm64.

    .venv/bin/python bench/xnnpack_arm64.py [--iters N] [--blocks B] [networks...]
No goal: issue 21 asks for the ratio, reported beside the host table (bench/xnnpack_speed.py)."""
from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

from common import ROOT, WORK, Row, info, median, print_table, save

BOARD = "android-arm64"
NETS = ["ds_cnn", "resnet8"]
PAIRS = {"f32": ("xnnpack", "portable"), "int8": ("xnnpack_q8", "pt2e")}   # precision -> (ours+XNNPACK, ours)
EXPORTS = ROOT / ".cache" / "bench" / "xnnpack-arm64"


def export(name: str, flow: str) -> Path:
    """The cached full-size .pte of a network for a flow (exported once per content key)."""
    import realmodels
    from support.export_key import flow_sources
    d = EXPORTS / f"{name}-{flow}-{realmodels.content_key(flow.encode(), flow_sources('xnnpack'))}"
    pte = d / "m.pte"
    if not pte.exists():
        from etdeploy import exporting
        module, ex = realmodels.build(name)
        exporting.export_model(module, ex, d, "m", flow, cases=1, bundle=False)
    return pte


def build(pte: Path, tag: str) -> Path:
    """The board's image of the program with host_bench.c as main, cross-compiled at -O2."""
    from etdeploy import bake, config
    out = WORK / "xnnpack-arm64" / tag
    res = bake.bake([pte], config.load_board(BOARD), out / "gen", {"threads": 1})
    unit = res.build_unit("2").with_sources(lambda s: s.name != "et_main.c", add=[ROOT / "bench" / "host_bench.c"])
    exe = out / "bench_arm64"
    p = subprocess.run(unit.link_argv([], exe, [*unit.compile_flags(["-DNDEBUG"]), *map(str, unit.sources)]),
                       capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"build failed for {tag}:\n{p.stderr[-3000:]}")
    return exe


def run_argv(exe: Path) -> list[str]:
    """qemu-aarch64 as the board's runner calls it (etdeploy.runners.process.QemuUserRunner)."""
    from etdeploy import config, xnnpack_sysroot
    board = config.load_board(BOARD)
    emu = board.emulator
    return [emu.binary, *emu.args, *xnnpack_sysroot.qemu_args(board, exe), str(exe)]


def times(exe: Path, n: int, warmup: int) -> list[int]:
    p = subprocess.run([*run_argv(exe), str(n), str(warmup), "forward", "all"], capture_output=True, timeout=1200)
    if p.returncode:
        raise RuntimeError(f"{exe} failed: {p.stderr.decode(errors='replace')[-2000:]}")
    # stdout also carries the XNNPACK backend's binary link frame (its heap log): pick the timings out
    return [int(x) for x in re.findall(rb"(?<![a-z_])ns=(\d+)", p.stdout)]   # not median_ns= ...


def measure(name: str, precision: str, iters: int, blocks: int) -> dict:
    xnn_flow, port_flow = PAIRS[precision]
    exes = {f: build(export(name, f), f"{name}-{f}") for f in (xnn_flow, port_flow)}
    block = max(1, iters // blocks)
    samples = {f: [] for f in exes}
    for _ in range(blocks):
        for f, exe in exes.items():
            samples[f] += times(exe, block, 2)
    xnn, port = median(samples[xnn_flow]), median(samples[port_flow])
    return {"network": name, "precision": precision, "xnnpack_flow": xnn_flow, "portable_flow": port_flow,
            "xnnpack_median_ns": xnn, "portable_median_ns": port, "speedup": port / xnn,
            "samples": len(samples[xnn_flow])}


def table(results: list[dict]) -> str:
    lines = ["| network | precision | ours portable | ours + XNNPACK | portable / XNNPACK |", "|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['network']} | {r['precision']} ({r['portable_flow']} vs {r['xnnpack_flow']}) | "
                     f"{r['portable_median_ns'] / 1e3:.0f} us | {r['xnnpack_median_ns'] / 1e3:.0f} us | "
                     f"{r['speedup']:.1f}x |")
    return "\n".join(lines)


def main(argv=None) -> list[Row]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("networks", nargs="*", default=NETS)
    ap.add_argument("--precisions", default=",".join(PAIRS))
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--blocks", type=int, default=4)
    a = ap.parse_args(argv)
    results = [measure(n, p, a.iters, a.blocks) for n in a.networks for p in a.precisions.split(",")]
    rows = [info("xnnpack_arm64", f"{r['network']} {r['precision']} AArch64 qemu-user: ours portable / ours+XNNPACK",
                 f"{r['speedup']:.1f}x", note=f"portable {r['portable_median_ns'] / 1e3:.0f} us, XNNPACK "
                                              f"{r['xnnpack_median_ns'] / 1e3:.0f} us (median of {r['samples']})")
            for r in results]
    print_table(rows, "XNNPACK vs portable kernels on AArch64 under qemu-aarch64 (-O2, one thread, same run)")
    print("\n" + table(results))
    save("xnnpack_arm64", rows, {"results": results})
    return rows


if __name__ == "__main__":
    main()
