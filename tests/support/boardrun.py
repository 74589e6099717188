"""Build and run a program on a board the way a user does: `scons board=<b> pte=<file> run=1`.
Test builds go under .cache/boardtests (not the user's build/), one tree per pytest-xdist worker so
that two workers never build the same board in the same directory."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / ".cache" / "boardtests" / os.environ.get("PYTEST_XDIST_WORKER", "main")


def scons(board: str, *opts: str, timeout: float = 600, build_dir: Path = BUILD) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "SCons", "-Q", f"board={board}", f"build_dir={build_dir}", *opts]
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def build_and_run(board: str, pte: Path | str, *opts: str, timeout: float = 600, build_dir: Path = BUILD) -> dict:
    """Returns result.json (with 'arrays': outputs as numpy) and the process for its messages. A build
    that stops before the run (no result.json) fails with the build's error: the last run's result.json
    is removed first, so it can never be read as this run's. build_dir: a tree of the test's own, when
    later tests use the image (another test may rebuild the board's)."""
    run_dir = build_dir / board / "run"
    (run_dir / "result.json").unlink(missing_ok=True)
    p = scons(board, f"pte={pte}", "run=1", *opts, timeout=timeout, build_dir=build_dir)
    if not (run_dir / "result.json").exists():
        raise AssertionError(f"{board}: no run (scons exit {p.returncode}): the build failed\n"
                             f"{p.stdout[-2000:]}{p.stderr[-3000:]}")
    doc = json.loads((run_dir / "result.json").read_text())
    doc["_stdout"], doc["_stderr"], doc["_rc"] = p.stdout, p.stderr, p.returncode
    doc["arrays"] = [np.load(run_dir / o["file"]) if "file" in o else np.asarray(o.get("values"))
                     for o in doc.get("outputs", [])]
    return doc


def outputs_per_program(board: str, bptes: list, *opts: str, timeout: float = 1200) -> list[list[np.ndarray]]:
    """One image with every bundle, run once: for each program, the forward outputs of its last
    bundled case, in output order. Fails on an image that gave no outputs or reported errors."""
    doc = build_and_run(board, ",".join(str(b) for b in bptes), *opts, timeout=timeout)
    assert doc.get("outputs"), f"no outputs: {doc.get('reason')}\n{doc['_stdout'][-2000:]}{doc['_stderr'][-2000:]}"
    assert not doc.get("errors"), f"{doc.get('errors')}\n{doc['_stdout'][-2000:]}"
    per = []
    for pi in range(len(bptes)):
        outs = [(o, a) for o, a in zip(doc["outputs"], doc["arrays"]) if o["program"] == pi and o["method"] == "forward"]
        last = max((o.get("case") or 0 for o, _ in outs), default=0)
        per.append([a for o, a in sorted(((o, a) for o, a in outs if (o.get("case") or 0) == last),
                                         key=lambda oa: oa[0]["index"])])
    return per
