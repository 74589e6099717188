"""Build speed of `scons board=corstone300 pte=<mlp>` on this machine (-j2): a clean build, a no-op
build, and a build after changing only the .pte (one weight changed), which must recompile only the
model blob and relink. Each build runs in a private build dir on a private copy of the .pte.

    .venv/bin/python bench/build_speed.py [--board corstone300] [--model mlp]
Goals: clean <= 30 s; no-op <= 2 s; .pte change -> only the model blob compiles (+ link)."""
from __future__ import annotations

import argparse
import re
import shutil
import struct
import sys

from common import MODELS, WORK, Row, fresh, info, median, print_table, row, save, scons

ACTION = re.compile(r"^(CC|CXX|AS|LD|GEN|IMG|REPORT|AR|BAKE)\s+(.*)$")


def actions(out: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2).strip()) for l in out.splitlines() if (m := ACTION.match(l.strip()))]


def change_one_weight(path) -> None:
    """Nudges one float in the program's constant segment: same program, different bytes."""
    from etdeploy.pte import read_program
    info_ = read_program(path)
    off, size = info_.segments[0]
    data = bytearray(path.read_bytes())
    pos = off + (size // 2 & ~3)
    (v,) = struct.unpack_from("<f", data, pos)
    struct.pack_into("<f", data, pos, v * 0.5 + 0.125)
    path.write_bytes(bytes(data))


def main(argv=None) -> list[Row]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="corstone300")
    ap.add_argument("--model", default="mlp")
    ap.add_argument("--noop-runs", type=int, default=3)
    a = ap.parse_args(argv)
    root = fresh(WORK / "build_speed")
    pte = root / f"{a.model}.pte"
    shutil.copyfile(MODELS / f"{a.model}.pte", pte)
    bdir = root / "build"
    args = ["-j2", f"board={a.board}", f"pte={pte}"]

    t_clean, out = scons(args, bdir)
    n_cc = sum(1 for k, _ in actions(out) if k in ("CC", "CXX", "AS"))
    noop = []
    noop_acts = []
    for _ in range(a.noop_runs):
        t, out = scons(args, bdir)
        noop.append(t)
        noop_acts = actions(out)
    change_one_weight(pte)
    t_change, out = scons(args, bdir)
    acts = actions(out)
    compiled = [w for k, w in acts if k in ("CC", "CXX", "AS")]
    linked = any(k == "LD" for k, _ in acts)
    only_blob = linked and len(compiled) == 1 and "et_model.gen.c" in compiled[0]

    rows = [
        row("build", f"clean build {a.board} + {a.model} (-j2)", t_clean, 30, "{:.1f}", " s",
            note=f"{n_cc} files compiled"),
        row("build", "no-op scons", median(noop), 2, "{:.2f}", " s",
            note=f"runs {', '.join(f'{t:.2f}' for t in noop)} s; actions still run: "
                 f"{', '.join(f'{k} {w}' for k, w in noop_acts) or 'none'}"),
        Row("build", "only .pte changed: files recompiled", f"{len(compiled)} ({t_change:.1f} s)",
            "1 (et_model.gen.c) + link", len(compiled) / 1, only_blob,
            note="compiled: " + ", ".join(c.split('/')[-1] for c in compiled) +
                 f"; other actions: {', '.join(k + ' ' + w.split('/')[-1] for k, w in acts if k not in ('CC', 'CXX', 'AS'))}"),
    ]
    if noop_acts:
        rows.append(info("build", "no-op rebuilds something", "yes", "a no-op build should run no action"))
    print_table(rows, "Build speed")
    save("build_speed", rows, {"clean_s": t_clean, "noop_s": noop, "change_s": t_change, "change_actions": acts})
    return rows


if __name__ == "__main__":
    sys.exit(0 if all(r.ok is not False for r in main()) else 1)
