"""Shared pieces of the benchmarks: paths, the goal table, scons and timing helpers.

Every benchmark returns a list of Row(goal, measured, target, ratio, ok, note) and prints it with
print_table(); run_all.py collects them into one table (and bench/results.json)."""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))    # tests/realmodels (the real networks), support.export_key
PY = ROOT / ".venv" / "bin" / "python"
SCONS = ROOT / ".venv" / "bin" / "scons"
MODELS = ROOT / "tests" / "models"
WORK = ROOT / ".cache" / "bench"          # private build dirs: never the shared build/
CPU_FIXTURES = ["add", "mlp", "cnn", "mlp_pt2e"]


@dataclass
class Row:
    bench: str
    goal: str
    measured: str
    target: str
    ratio: float | None = None       # measured / target (<= 1 meets the goal)
    ok: bool | None = None           # None: informative row, no goal
    note: str = ""

    @property
    def verdict(self) -> str:
        return "" if self.ok is None else ("PASS" if self.ok else "MISS")


def row(bench, goal, value, limit, fmt, unit="", note="", lower_is_better=True) -> Row:
    """A goal row: value against limit (value <= limit passes)."""
    ratio = value / limit if limit else None
    ok = value <= limit if lower_is_better else value >= limit
    return Row(bench, goal, f"{fmt.format(value)}{unit}", f"<= {fmt.format(limit)}{unit}", ratio, ok, note)


def info(bench, what, measured, note="") -> Row:
    return Row(bench, what, measured, "", None, None, note)


def print_table(rows: list[Row], title: str = "") -> None:
    if title:
        print(f"\n== {title}")
    heads = ("goal", "measured", "target", "ratio", "")
    cells = [(r.goal, r.measured, r.target, "" if r.ratio is None else f"{r.ratio:.2f}", r.verdict) for r in rows]
    w = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(heads)]
    line = "  ".join(h.ljust(w[i]) for i, h in enumerate(heads))
    print(line)
    print("-" * len(line))
    for r, c in zip(rows, cells):
        print("  ".join(x.ljust(w[i]) for i, x in enumerate(c)).rstrip() + (f"   # {r.note}" if r.note else ""))


def save(name: str, rows: list[Row], extra: dict | None = None) -> Path:
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / f"{name}.json"
    path.write_text(json.dumps({"rows": [asdict(r) for r in rows], "extra": extra or {},
                                "date": time.strftime("%Y-%m-%d %H:%M"), "cores": os.cpu_count()},
                               indent=1, default=str))
    return path


def scons(args: list[str], build_dir: Path, check: bool = True, timeout: float = 600) -> tuple[float, str]:
    """Run scons with build_dir=<private dir>; returns (wall seconds, stdout+stderr)."""
    argv = [str(SCONS), *args, f"build_dir={build_dir}"]
    t0 = time.perf_counter()
    p = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    dt = time.perf_counter() - t0
    out = p.stdout + p.stderr
    if check and p.returncode != 0:
        raise RuntimeError(f"scons failed ({p.returncode}): {' '.join(argv)}\n{out[-3000:]}")
    return dt, out


def fresh(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def median(xs):
    return statistics.median(xs)


def tool(board_name: str, name: str) -> str:
    """A binutils tool of the board's toolchain (e.g. 'size', 'objdump'), from the board data."""
    from etdeploy import config
    tc = config.board_toolchain(config.load_board(board_name))
    return f"{tc.prefix}{name}"
