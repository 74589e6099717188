"""Tables people read: the boards (cpu, how each runs here, toolchain found or what to install) and a
run's result. Printed by the CLI and by the SCons tools alike, so neither imports the other."""
from __future__ import annotations

import json
from pathlib import Path


def board_rows() -> list[dict]:
    from . import config, runners
    from .errors import EmulatorMissing
    out = []
    for b in config.load_boards():
        tcs = [config.load_toolchain(t) for t in b.toolchains]
        found = next((t for t in tcs if t.locate() is not None), None)
        emu = b.emulator
        if emu is None:
            how, have = "build only", None
        else:
            if emu.kind == "native":
                how = "native"
            elif emu.kind == "fvp":
                how = b.fvp.binary if b.fvp else "fvp"
            else:
                how = f"{emu.binary} {emu.machine}".strip()
            try:
                runners.runner_for(b).available()
                have = True
            except EmulatorMissing:
                have = False
        install = [] if found else [t.package for t in tcs if t.package] + [f"${t.env}" for t in tcs if t.env]
        out.append({"board": b.name, "cpu": b.cpu, "emulator": how, "emulator_found": have,
                    "emulator_package": emu.package if emu is not None else "",
                    "toolchain": found.name if found else " | ".join(t.name for t in tcs),
                    "toolchain_found": found is not None, "install": install, "description": b.description})
    return out


def board_table(data: list[dict] | None = None) -> str:
    data = board_rows() if data is None else data
    head = ["board", "cpu", "runs on", "toolchain", "found"]
    lines = []
    for r in data:
        found = "yes" if r["toolchain_found"] else "no: apt-get install " + " or ".join(r["install"])
        emu = r["emulator"] + ("" if r["emulator_found"] in (True, None) else
                               f" (missing{': ' + r['emulator_package'] if r['emulator_package'] else ''})")
        lines.append([r["board"], r["cpu"], emu, r["toolchain"], found])
    w = [max(len(str(x[i])) for x in lines + [head]) for i in range(len(head) - 1)]
    fmt = lambda row: "  ".join(str(c).ljust(w[i]) for i, c in enumerate(row[:-1])) + "  " + row[-1]
    return "\n".join([fmt(head)] + [fmt(r) for r in lines])


def print_boards() -> int:
    print(board_table())
    return 0


def _fmt(vals) -> str:
    import numpy as np
    text = np.array2string(np.asarray(vals), precision=4, separator=" ", threshold=12, edgeitems=4,
                           max_line_width=10_000, suppress_small=True)
    return " ".join(text.split())


def print_result(res, run_dir: Path) -> None:
    """A run's outputs, methods, test cases and verdict, from its result.json."""
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
    for line in doc.get("logs") or []:
        if line.startswith("xnnpack heap:"):      # XnnpackBackend's counted allocations (outside the arena)
            print(f"  {line}")
    cases = doc.get("cases") or []
    if cases:
        print(f"  test cases: {sum(c['passed'] for c in cases)}/{len(cases)} passed")
    print(f"{doc['status'].upper()}: {doc['reason']}  ({run_dir / 'result.json'})")
