"""Host speed: our runtime built for the host at -O2 against executorch's own runtime (portable_lib),
per CPU fixture, median time per inference, measured side by side in one run.

Ours: bench/host_bench.c (instead of et_main.c) links the runtime, the program's kernels and the
baked program at -O2 into an executable that times et_method_execute() alone (inputs refilled with ones
outside the timing), in blocks of 20 executions after 5 warm-up ones. Upstream: portable_lib loaded once, `forward(ones)` timed from Python.
Its Python overhead (binding, input copy, output wrapping) is measured in the same run: a second module
with ETDump on, each forward's wall time minus the runtime's own `Method::execute` event.
All three are interleaved in small blocks (ours, upstream, upstream+ETDump, again...),
so load from other work on the shared machine hits both sides alike; figures are medians of all samples.
Upstream net = median forward - median overhead.

    .venv/bin/python bench/host_speed.py [--iters N] [--rounds R] [models...]
Goal: ours / upstream <= 0.5 for every model."""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import CPU_FIXTURES, MODELS, ROOT, WORK, Row, info, median, print_table, row, save

GOAL = 0.5
EXTRA = ["-DNDEBUG"]


def build_ours(pte: Path) -> Path:
    """bench_host for one program: the host board's build unit at -O2 (the one SCons compiles), with
    bench/host_bench.c instead of et_main.c, compiled and linked in one gcc call."""
    from etdeploy import bake, config
    out = WORK / "host" / pte.stem
    res = bake.bake([pte], config.load_board("host"), out / "gen", {})
    unit = res.build_unit("2").with_sources(lambda s: s.name != "et_main.c", add=[ROOT / "bench" / "host_bench.c"])
    exe = out / "bench_host"
    argv = unit.link_argv([], exe, [*unit.compile_flags(EXTRA), *map(str, unit.sources)])
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"host build failed for {pte.name}:\n{p.stderr[-3000:]}")
    return exe


class Ours:
    """Our runtime for one program: the bench_host executable, run for short blocks of executions."""

    def __init__(self, exe: Path):
        self.exe = exe

    def times(self, n: int, warmup: int = 5) -> list[int]:
        p = subprocess.run([str(self.exe), str(n), str(warmup), "forward", "all"], capture_output=True, text=True,
                           timeout=300)
        if p.returncode:
            raise RuntimeError(f"{self.exe} failed: {p.stderr}")
        return [int(l[3:]) for l in p.stdout.splitlines() if l.startswith("ns=")]


class Upstream:
    """One model in executorch's portable_lib, loaded once (plain) and once with ETDump."""

    def __init__(self, pte: Path):
        import torch
        from etdeploy import oracle
        self.pl = oracle._portable_lib()
        self.plain = self.pl._load_for_executorch(str(pte))
        specs = oracle._input_specs(self.plain, "forward")
        self.inputs = tuple(torch.from_numpy(a) for a in oracle.ones_inputs(specs))
        self.pte = pte

        self.dumped = self.pl._load_for_executorch(str(pte), enable_etdump=True)
        self.dump_walls: list[int] = []

    def times(self, n: int) -> list[int]:
        f, x, ts = self.plain.forward, self.inputs, []
        for _ in range(n):
            t = time.perf_counter_ns()
            f(x)
            ts.append(time.perf_counter_ns() - t)
        return ts

    def dumped_block(self, n: int) -> None:
        f, x = self.dumped.forward, self.inputs
        for _ in range(n):
            t = time.perf_counter_ns()
            f(x)
            self.dump_walls.append(time.perf_counter_ns() - t)

    def overheads(self, skip: int) -> tuple[list[int], list[int]]:
        """Per ETDump'd call: wall - Method::execute, and Method::execute (first `skip` calls dropped)."""
        from etdeploy import profile_view
        with tempfile.TemporaryDirectory() as d:
            self.dumped.write_etdump_result_to_file(f"{d}/x.etdp", f"{d}/x.bin")
            dump = profile_view.read(Path(f"{d}/x.etdp"))
        execs = [pe["end_time"] - pe["start_time"] for rd in dump.get("run_data") or []
                 for e in rd.get("events") or [] for pe in [e.get("profile_event")]
                 if pe and pe.get("name") == "Method::execute"]
        if len(execs) != len(self.dump_walls):
            raise RuntimeError(f"{self.pte.name}: {len(execs)} Method::execute events for {len(self.dump_walls)} runs")
        pairs = list(zip(self.dump_walls, execs))[skip:]
        return [w - e for w, e in pairs], [e for _w, e in pairs]


def ours_op_shares(model: str) -> list[tuple[str, float]]:
    """(operator, share of the method's time) from one profiled run of ours on the host (etdump=1, -O2).
    One cold inference: shows where the time goes, not a timing to compare."""
    from etdeploy import config, profile_view, session
    from common import scons
    bdir = WORK / "hostprof" / model
    scons(["-j2", "board=host", f"pte={MODELS / (model + '.pte')}", "etdump=1", "opt=2"], bdir)
    session.run(config.load_board("host"), bdir / "host" / "firmware.elf", bdir / "host" / "run", timeout=60,
                log=lambda m: None)
    stats, total, _ = profile_view.stats(profile_view.read(bdir / "host" / "run" / "etdump.etdp"))
    total = total or sum(s.total for s in stats) or 1
    return sorted(((s.name, s.total / total) for s in stats), key=lambda x: -x[1])


def main(argv=None) -> list[Row]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=CPU_FIXTURES)
    ap.add_argument("--iters", type=int, default=600, help="samples per side")
    ap.add_argument("--blocks", type=int, default=30, help="interleaved blocks")
    a = ap.parse_args(argv)
    rows, extra = [], {}
    for m in a.models:
        ours_rt, up = Ours(build_ours(MODELS / f"{m}.pte")), Upstream(MODELS / f"{m}.pte")
        block = max(1, a.iters // a.blocks)
        ours_rt.times(block)            # warm-up, not counted
        up.times(block)
        up.dumped_block(block)
        ours, plain = [], []
        for _ in range(a.blocks):
            ours += ours_rt.times(block)
            plain += up.times(block)
            up.dumped_block(block)
        over, ex = up.overheads(skip=block)
        o_ns, p_ns, ov_ns = median(ours), median(plain), median(over)
        up_ns = p_ns - ov_ns
        extra[m] = {"ours_median_ns": o_ns, "upstream_forward_median_ns": p_ns, "python_overhead_median_ns": ov_ns,
                    "upstream_execute_with_etdump_median_ns": median(ex), "upstream_net_ns": up_ns,
                    "samples": len(ours)}
        note = (f"upstream forward {p_ns / 1e3:.1f} us - python overhead {ov_ns / 1e3:.1f} us = "
                f"{up_ns / 1e3:.2f} us")
        if up_ns < max(1000.0, 0.5 * ov_ns):
            # less work than half the Python overhead: the subtraction is mostly noise, no honest ratio
            rows.append(info("host_speed", f"{m}: ours vs portable_lib (no ratio)", f"ours {o_ns / 1e3:.2f} us",
                             f"upstream's execute is within the noise of its Python overhead: {note}; its "
                             f"Method::execute with ETDump on: {median(ex) / 1e3:.2f} us"))
            continue
        r = row("host_speed", f"{m}: ours/portable_lib time per inference", o_ns / up_ns, GOAL, "{:.2f}", "x",
                note=f"ours {o_ns / 1e3:.2f} us; " + note)
        rows.append(r)
        try:
            shares = ours_op_shares(m)
            rows.append(info("host_speed", f"  {m}: where our time goes", f"{shares[0][0]} {shares[0][1]:.0%}",
                             "one profiled cold run: " + ", ".join(f"{n} {f:.0%}" for n, f in shares[:4])))
        except Exception as e:   # the breakdown is a hint; the timing above is the result
            rows.append(info("host_speed", f"  {m}: where our time goes", "n/a", f"{type(e).__name__}: {e}"))
    print_table(rows, "Host speed (-O2, median per inference, same run)")
    save("host_speed", rows, extra)
    return rows


if __name__ == "__main__":
    sys.exit(0 if all(r.ok is not False for r in main()) else 1)
