"""All benchmarks in one go, one summary table (goal, measured, target, ratio, PASS/MISS), saved to
.cache/bench/summary.json. Each benchmark also runs alone: `.venv/bin/python bench/<name>.py`.

    .venv/bin/python bench/run_all.py [--only host_speed,mcu_work,...]
Exit status 0 when every goal passes, 1 when one misses (the tables still print)."""
from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
from dataclasses import asdict

from common import WORK, print_table

ORDER = ["build_speed", "size", "e2e", "link_bytes", "mcu_work", "m4_int8", "host_speed", "real_models"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    names = [n for n in ORDER if not a.only or n in a.only.split(",")]
    rows, times, failed = [], {}, []
    for n in names:
        t0 = time.perf_counter()
        try:
            rows += importlib.import_module(n).main([])
        except Exception as e:   # one broken benchmark must not hide the others
            failed.append(f"{n}: {type(e).__name__}: {e}")
            print(f"\n!! {n} failed: {type(e).__name__}: {e}", file=sys.stderr)
        times[n] = time.perf_counter() - t0
    goals = [r for r in rows if r.ok is not None]
    print_table(goals, f"Summary ({time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, "
                       f"{platform.processor() or platform.machine()})")
    print("\nbenchmark wall times: " + ", ".join(f"{k} {v:.0f} s" for k, v in times.items()))
    miss = [r for r in goals if not r.ok]
    print(f"{len(goals) - len(miss)} PASS, {len(miss)} MISS" + (f", {len(failed)} benchmark(s) failed" if failed else ""))
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / "summary.json").write_text(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M"), "cores": os.cpu_count(),
                                                   "rows": [asdict(r) for r in rows], "times_s": times,
                                                   "failed": failed}, indent=1))
    return 0 if not miss and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
