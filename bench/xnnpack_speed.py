"""XNNPACK speed on the host: our runtime with XnnpackBackend (Debian's 2022 XNNPACK) against executorch's
pybindings runtime with its own XNNPACK, the same --flow xnnpack program, one thread and all threads.

Ours: bench/host_bench.c times et_method_execute() alone at -O2 (threads=N baked in); the backend is built
with ET_XNN_TIMING, so each execution also reports the library's own share (xnn_setup_runtime +
xnn_invoke_runtime, and the backend's own int8 kernel where it takes nodes): the rest is what our runtime adds (edge NCHW<->NHWC copies, portable operators,
the method). Upstream: a loaded method's execute() from Python (inputs set once, as ours; the Python
call is ~0.1 us) and, for reference, forward(ones) (which adds its input/output conversion). The goal
ratio is ours / upstream execute(). Blocks interleave ours and upstream so load on the shared machine
hits both; figures are medians of all samples.
Outputs: the program's bundled cases (expected outputs from executorch's runtime with XNNPACK, made at
export) run on our -O2 image first; a row whose outputs differ is reported as such.
Programs: DS-CNN, ResNet-8 and the small CNN of tests/test_xnnpack.py, torchvision's mobilenet_v2 and
resnet18 at full size (tests/xnnpack/torchvision_nets.py), float and int8, exported on first use into
.cache/xnnpack.

    .venv/bin/python bench/xnnpack_speed.py [--iters N] [--blocks B] [--threads T]... [models...]
(--iters default: as many as fit ~3 s of ours, 20 to 400; a full-size resnet18 gets 20-40.)
Goal (issue 21): ours / upstream <= 1.2 on each network."""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import time
from pathlib import Path

from common import ROOT, WORK, Row, info, median, print_table, row, save

GOAL = 1.2
TV = "tests/xnnpack/torchvision_nets.py"
MODELS = {"ds_cnn": ("tests/xnnpack/ds_cnn.py:DSCNN", False), "ds_cnn_q8": ("tests/xnnpack/ds_cnn.py:DSCNN", True),
          "resnet8": ("tests/xnnpack/resnet8.py:ResNet8", False),
          "resnet8_q8": ("tests/xnnpack/resnet8.py:ResNet8", True),
          "small_cnn": ("tests/xnnpack/small_cnn.py:SmallCNN", False),
          "tv_mbv2": (f"{TV}:mobilenet_v2", False), "tv_mbv2_q8": (f"{TV}:mobilenet_v2", True),
          "tv_resnet18": (f"{TV}:resnet18", False), "tv_resnet18_q8": (f"{TV}:resnet18", True)}


def program(name: str) -> Path:
    """The .bpte (bundled cases, expected outputs from executorch's runtime); its .pte sits beside it."""
    from etdeploy import config
    from etdeploy.export_spec import ModelSpec, export_for_board
    spec, q = MODELS[name]
    _, bpte = export_for_board(ModelSpec.parse(str(ROOT / spec)), config.load_board("host"), ROOT / ".cache" / "xnnpack",
                               quantize=q, flow="xnnpack", name=name)
    return bpte


def _build(prog: Path, out: Path, opts: dict, main_c: Path | None, defines=()) -> tuple[Path, list]:
    from etdeploy import bake, config
    res = bake.bake([prog], config.load_board("host"), out / "gen", opts)
    unit = res.build_unit("2")
    if main_c is not None:
        unit = unit.with_sources(lambda s: s.name != "et_main.c", add=[main_c])
    exe = out / ("bench_host" if main_c else "firmware")
    flags = [*unit.compile_flags(["-DNDEBUG", *defines]), *map(str, unit.sources)]
    p = subprocess.run(unit.link_argv([], exe, flags), capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"build failed for {prog.name}:\n{p.stderr[-3000:]}")
    return exe, res.programs


def build_ours(pte: Path, threads: int, own: bool = True) -> Path:
    """own=False: the backend without its own int8 kernel (all nodes in Debian's XNNPACK), for before/after."""
    exe, _ = _build(pte, WORK / "xnnpack" / f"{pte.stem}-t{threads}{'' if own else '-noown'}", {"threads": threads},
                    ROOT / "bench" / "host_bench.c", ["-DET_XNN_TIMING", *([] if own else ["-DET_XNN_OWN_KERNELS=0"])])
    return exe


def outputs_match(bpte: Path) -> tuple[bool, str]:
    """Runs the bundled cases on our -O2 image: (all passed, a short note)."""
    from etdeploy import config, session
    from etdeploy.errors import EtdeployError
    exe, progs = _build(bpte, WORK / "xnnpack" / f"{bpte.stem}-check", {}, None)
    run_dir = exe.parent / "run"
    try:
        session.run(config.load_board("host"), exe, run_dir, timeout=300, programs=progs, log=lambda m: None)
    except EtdeployError as e:
        return False, str(e).splitlines()[0][:160]
    doc = json.loads((run_dir / "result.json").read_text())
    cases = doc.get("cases") or []
    err = max((c.get("max_abs_err", 0.0) for c in cases), default=0.0)
    ok = doc["status"] == "pass" and doc["result"]["cases"] >= 1 and doc["result"]["cases_failed"] == 0
    # which nodes ran in the backend's own int8 kernel (one line per delegate)
    own = [ln.split(": ", 1)[1] for ln in doc.get("logs", []) if ln.startswith("xnnpack own int8 kernels")]
    return ok, (f"{doc['result']['cases']} bundled cases {'pass' if ok else 'FAIL'}, max abs err {err:.2g}; "
                f"own int8 kernel: {'; '.join(own) or '-'}")


def ours_times(exe: Path, n: int) -> tuple[list[int], list[int]]:
    p = subprocess.run([str(exe), str(n), "3", "forward", "all"], capture_output=True, timeout=600)
    if p.returncode:
        raise RuntimeError(f"{exe} failed: {p.stderr.decode(errors='replace')}")
    # stdout also carries the backend's binary link frame (its heap log): pick the timings out
    return ([int(x) for x in re.findall(rb"(?<![_a-z])ns=(\d+)", p.stdout)],
            [int(x) for x in re.findall(rb"lib_ns=(\d+)", p.stdout)])


class Upstream:
    def __init__(self, pte: Path):
        import torch
        from etdeploy import oracle
        pl = oracle._portable_lib()
        self.m = pl._load_for_executorch(str(pte))
        self.x = tuple(torch.from_numpy(a) for a in oracle.ones_inputs(oracle._input_specs(self.m, "forward")))
        self.method = pl._load_program(str(pte)).load_method("forward")
        self.method.set_inputs(self.x)

    @staticmethod
    def _time(f, n: int) -> list[int]:
        ts = []
        for _ in range(n):
            t = time.perf_counter_ns()
            f()
            ts.append(time.perf_counter_ns() - t)
        return ts

    def times(self, n: int) -> tuple[list[int], list[int]]:
        f, x = self.m.forward, self.x
        return self._time(self.method.execute, n), self._time(lambda: f(x), n)


def measure(name: str, threads: int, iters: int | None, blocks: int, before: bool = False) -> dict:
    from etdeploy import oracle
    pte = program(name).with_suffix(".pte")
    oracle._portable_lib()._unsafe_reset_threadpool(threads)
    up = Upstream(pte)                                # loaded after the reset: its delegate uses it
    exe = build_ours(pte, threads)
    old = build_ours(pte, threads, own=False) if before else None
    probe = median(ours_times(exe, 3)[0])             # also the warm-up
    if iters is None:
        iters = max(20, min(400, int(3e9 / max(probe, 1))))
    blocks = min(blocks, iters)
    block = max(1, iters // blocks)
    up.times(block)                                   # warm-up
    ours, lib, ex, fw, prev = [], [], [], [], []
    for _ in range(blocks):
        o, li = ours_times(exe, block)
        e, f = up.times(block)
        ours += o; lib += li; ex += e; fw += f
        if old is not None:
            prev += ours_times(old, block)[0]
    return {"ours_ns": median(ours), "library_ns": median(lib), "upstream_execute_ns": median(ex),
            "upstream_forward_ns": median(fw), "samples": len(ours),
            **({"before_ns": median(prev)} if prev else {})}


def main(argv=None) -> list[Row]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=list(MODELS))
    ap.add_argument("--iters", type=int, default=None)
    ap.add_argument("--blocks", type=int, default=20)
    ap.add_argument("--threads", type=int, action="append", help="repeatable; default: 1 and all cores")
    ap.add_argument("--before", action="store_true",
                    help="also time the image without the backend's own int8 kernel (-DET_XNN_OWN_KERNELS=0)")
    a = ap.parse_args(argv)
    rows, extra = [], {}
    cores = os.cpu_count() or 1
    for m in a.models:
        ok, note = outputs_match(program(m))
        extra[f"{m}/outputs"] = note
        rows.append(info("xnnpack_speed", f"{m}: outputs = executorch's runtime", "yes" if ok else "NO", note))
        for threads in sorted(set(a.threads or [1, cores])):
            d = measure(m, threads, a.iters, a.blocks, a.before)
            extra[f"{m}/t{threads}"] = d
            o, lib, e = d["ours_ns"], d["library_ns"], d["upstream_execute_ns"]
            rows.append(row("xnnpack_speed", f"{m} threads={threads}: ours/executorch+XNNPACK", o / e, GOAL,
                            "{:.2f}", "x", note=f"ours {o / 1e3:.1f} us (XNNPACK library + own kernel {lib / 1e3:.1f} us), "
                                                f"executorch execute {e / 1e3:.1f} us "
                                                f"(forward {d['upstream_forward_ns'] / 1e3:.1f} us)" +
                                                (f"; without own kernel {d['before_ns'] / 1e3:.1f} us"
                                                 if "before_ns" in d else "")))
    print_table(rows, "XNNPACK on the host (-O2, median per inference, same run)")
    save("xnnpack_speed", rows, extra)
    return rows


if __name__ == "__main__":
    main()
