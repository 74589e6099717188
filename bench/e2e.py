"""End to end: `scons board=corstone300 pte=<mlp> run=1` after a build, wall time (build check +
QEMU run + link + result files), with the no-op part and the run itself shown apart.

    .venv/bin/python bench/e2e.py [--runs 3]
Goal: <= 3 s wall."""
from __future__ import annotations

import argparse
import json
import sys

from common import MODELS, WORK, Row, info, median, print_table, row, save, scons

BOARD = "corstone300"


def main(argv=None) -> list[Row]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="mlp")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args(argv)
    bdir = WORK / "e2e"
    args = ["-j2", f"board={BOARD}", f"pte={MODELS / (a.model + '.pte')}"]
    scons(args, bdir)                                  # the build the goal starts after
    walls, noops, inner = [], [], []
    for _ in range(a.runs):
        noops.append(scons(args, bdir)[0])
        t, _out = scons(args + ["run=1"], bdir)
        walls.append(t)
        inner.append(json.loads((bdir / BOARD / "run" / "result.json").read_text()).get("elapsed_s", 0.0))
    rows = [row("e2e", f"scons board={BOARD} pte={a.model}.pte run=1 (built)", median(walls), 3, "{:.2f}", " s",
                note=f"runs {', '.join(f'{w:.2f}' for w in walls)} s; of which no-op build {median(noops):.2f} s, "
                     f"target run (QEMU start to result) {median(inner):.2f} s")]
    print_table(rows, "End to end")
    save("e2e", rows, {"walls": walls, "noop": noops, "run_elapsed": inner})
    return rows


if __name__ == "__main__":
    sys.exit(0 if all(r.ok is not False for r in main()) else 1)
