"""XNNPACK speed on the host: our runtime with XnnpackBackend (Debian's 2022 XNNPACK) against executorch's
pybindings runtime with its own XNNPACK, the same --flow xnnpack program, one thread and all threads.

Ours: bench/host_bench.c times et_method_execute() alone at -O2 (threads=N baked in). Upstream:
portable_lib's forward(ones) timed from Python, its Python overhead not subtracted (so the ratio
flatters us slightly at small sizes; it is reported beside the ratio). Blocks interleave ours and
upstream so load on the shared machine hits both; figures are medians of all samples.
Programs: the DS-CNN, ResNet-8 and small CNN of tests/test_xnnpack.py (float and int8), exported on first use
into .cache/xnnpack.

    .venv/bin/python bench/xnnpack_speed.py [--iters N] [--blocks B] [models...]
Goal (issue 21): ours / upstream <= 1.2 on each network."""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import time
from pathlib import Path

from common import ROOT, WORK, Row, median, print_table, row, save

GOAL = 1.2
MODELS = {"ds_cnn": ("tests/xnnpack/ds_cnn.py:DSCNN", False), "ds_cnn_q8": ("tests/xnnpack/ds_cnn.py:DSCNN", True),
          "resnet8": ("tests/xnnpack/resnet8.py:ResNet8", False),
          "resnet8_q8": ("tests/xnnpack/resnet8.py:ResNet8", True),
          "small_cnn": ("tests/xnnpack/small_cnn.py:SmallCNN", False)}


def program(name: str) -> Path:
    from etdeploy import config
    from etdeploy.export_spec import ModelSpec, export_for_board
    spec, q = MODELS[name]
    _, bpte = export_for_board(ModelSpec.parse(str(ROOT / spec)), config.load_board("host"), ROOT / ".cache" / "xnnpack",
                               quantize=q, flow="xnnpack", name=name)
    return bpte.with_suffix(".pte")


def build_ours(pte: Path, threads: int) -> Path:
    from etdeploy import bake, config
    out = WORK / "xnnpack" / f"{pte.stem}-t{threads}"
    res = bake.bake([pte], config.load_board("host"), out / "gen", {"threads": threads})
    unit = res.build_unit("2").with_sources(lambda s: s.name != "et_main.c", add=[ROOT / "bench" / "host_bench.c"])
    exe = out / "bench_host"
    p = subprocess.run(unit.link_argv([], exe, [*unit.compile_flags(["-DNDEBUG"]), *map(str, unit.sources)]),
                       capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"build failed for {pte.name}:\n{p.stderr[-3000:]}")
    return exe


def ours_times(exe: Path, n: int) -> list[int]:
    p = subprocess.run([str(exe), str(n), "3", "forward", "all"], capture_output=True, timeout=300)
    if p.returncode:
        raise RuntimeError(f"{exe} failed: {p.stderr.decode(errors='replace')}")
    # stdout also carries the backend's binary link frame (its heap log): pick the timings out
    return [int(x) for x in re.findall(rb"ns=(\d+)", p.stdout)]


class Upstream:
    def __init__(self, pte: Path):
        import torch
        from etdeploy import oracle
        self.pl = oracle._portable_lib()
        self.m = self.pl._load_for_executorch(str(pte))
        self.x = tuple(torch.from_numpy(a) for a in oracle.ones_inputs(oracle._input_specs(self.m, "forward")))

    def times(self, n: int) -> list[int]:
        f, x, ts = self.m.forward, self.x, []
        for _ in range(n):
            t = time.perf_counter_ns()
            f(x)
            ts.append(time.perf_counter_ns() - t)
        return ts


def main(argv=None) -> list[Row]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=list(MODELS))
    ap.add_argument("--iters", type=int, default=400)
    ap.add_argument("--blocks", type=int, default=20)
    a = ap.parse_args(argv)
    rows, extra = [], {}
    cores = os.cpu_count() or 1
    for m in a.models:
        pte = program(m)
        for threads in sorted({1, cores}):
            from etdeploy import oracle
            oracle._portable_lib()._unsafe_reset_threadpool(threads)
            up = Upstream(pte)                                # loaded after the reset: its delegate uses it
            exe = build_ours(pte, threads)
            block = max(1, a.iters // a.blocks)
            ours_times(exe, block), up.times(block)          # warm-up
            ours, theirs = [], []
            for _ in range(a.blocks):
                ours += ours_times(exe, block)
                theirs += up.times(block)
            o, t = median(ours), median(theirs)
            extra[f"{m}/t{threads}"] = {"ours_median_ns": o, "upstream_forward_median_ns": t, "samples": len(ours)}
            rows.append(row("xnnpack_speed", f"{m} threads={threads}: ours/executorch+XNNPACK", o / t, GOAL,
                            "{:.2f}", "x", note=f"ours {o / 1e3:.1f} us, executorch forward {t / 1e3:.1f} us "
                                                f"(incl. its Python call)"))
    print_table(rows, "XNNPACK on the host (-O2, median per inference, same run)")
    save("xnnpack_speed", rows, extra)
    return rows


if __name__ == "__main__":
    main()
