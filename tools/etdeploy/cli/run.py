"""etdeploy run: run a built image (or build one from a .pte) on the board's emulator or host."""
from __future__ import annotations

import json
from pathlib import Path

HELP = "run a firmware image on its emulator, the host or an FVP, and judge the result"
EXIT_CODES = """exit codes: 0 pass; 2 bad option or board; 3 toolchain missing; 4 program refused at bake; 5 build
failed; 10 run error; 11 timeout; 12 fault; 13 out of memory; 14 missing operator;
15 bad program; 16 link errors (frames lost or corrupted); 17 outputs differ from the expected ones;
18 emulator missing or failing to start; 19 inputs do not fit the program's planned inputs"""


def register(sub):
    import argparse
    p = sub.add_parser("run", help=HELP, description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog=EXIT_CODES)
    p.add_argument("--board", required=True)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--pte", help="build this .pte/.bpte for the board first (comma-separated for several)")
    g.add_argument("--elf", help="run this already built image")
    p.add_argument("--input", action="append", default=[], metavar="FILE",
                   help="input tensor (.npy, or raw bytes as dtype/shape of the method's input); repeat per input")
    p.add_argument("--method", default="forward")
    p.add_argument("--timeout", type=float, default=None, help="seconds (default 60)")
    p.add_argument("--run-dir", help="where result.json and outputs go (default build/<board>/run)")
    p.add_argument("--runner", help="override the board's runner (e.g. fvp)")
    p.add_argument("--icount", action="store_true", help="deterministic instruction counting (QEMU)")
    p.add_argument("--dry-run", action="store_true", help="print the command that would run, do nothing")
    p.set_defaults(func=main)
    return p


def load_inputs(files: list[str], method_info) -> list:
    import numpy as np
    arrays = []
    for i, f in enumerate(files):
        path = Path(f)
        if path.suffix == ".npy":
            arrays.append(np.load(path))
            continue
        spec = method_info.inputs[i] if method_info and i < len(method_info.inputs) else None
        if spec is None or not hasattr(spec, "sizes"):
            raise SystemExit(f"etdeploy: cannot interpret raw input {f}: the method's input {i} is not a tensor")
        from ..link import NP_DTYPES
        arr = np.fromfile(path, dtype=NP_DTYPES[spec.dtype])
        arrays.append(arr.reshape(spec.sizes))
    return arrays


def main(args) -> int:
    from .. import config, runners
    from ..pte import read_program
    board = config.load_board(args.board)
    root = Path(__file__).resolve().parents[3]
    if args.elf:
        elf = Path(args.elf)
    else:
        elf = root / "build" / board.name / "firmware.elf"
        if args.pte:
            import subprocess
            import sys
            cmd = [sys.executable, "-m", "SCons", f"board={board.name}", f"pte={args.pte}"]
            if args.input:
                cmd.append("inputs=link")
            if not args.dry_run:
                rc = subprocess.call(cmd, cwd=root)
                if rc:
                    return rc
    run_dir = Path(args.run_dir) if args.run_dir else elf.parent / "run"
    inputs = None
    if args.input:
        progs = runners._baked_programs(elf)
        minfo = progs[0].method(args.method) if progs else None
        mi = [m.name for m in progs[0].methods].index(args.method) if progs else 0
        inputs = [None] * (mi + 1)
        inputs[mi] = load_inputs(args.input, minfo)
    res = runners.run(board, elf, run_dir, timeout=args.timeout, inputs=inputs, dry_run=args.dry_run,
                      runner=args.runner, icount=args.icount)
    if args.dry_run:
        return 0
    print_result(res, run_dir)
    return 0


def _fmt(vals) -> str:
    import numpy as np
    text = np.array2string(np.asarray(vals), precision=4, separator=" ", threshold=12, edgeitems=4,
                           max_line_width=10_000, suppress_small=True)
    return " ".join(text.split())


def print_result(res, run_dir: Path) -> None:
    doc = json.loads((Path(run_dir) / "result.json").read_text())
    several = len({o["program"] for o in doc["outputs"]}) > 1
    for o in doc["outputs"]:
        where = f"case {o['case']} " if o.get("case") is not None else ""
        if several:
            where = f"(program {o['program']}) " + where
        vals = o.get("values")
        shown = _fmt(vals) if vals is not None else f"sha256 {o.get('sha256', '')[:16]}"
        err = f"  max abs err {o['max_abs_err']:.3g}" if "max_abs_err" in o else ""
        print(f"  {o['method']} {where}output {o['index']}: {o['dtype']}{o['shape']} {shown}{err}")
    for m in doc["methods"]:
        print(f"  {m['name']}: pool {m['pool_used']}/{m['pool_size']} B, exec {m['exec_cycles']:,} cycles")
    cases = doc.get("cases") or []
    if cases:
        print(f"  test cases: {sum(c['passed'] for c in cases)}/{len(cases)} passed")
    print(f"{doc['status'].upper()}: {doc['reason']}  ({run_dir / 'result.json'})")
