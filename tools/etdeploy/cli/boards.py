"""etdeploy boards: every board, its cpu, how it runs here, and whether its toolchain is installed
(and if not, what provides it)."""
from __future__ import annotations

import json
import shutil

HELP = "list the boards: cpu, emulator, toolchain found or what to install"


def register(sub):
    p = sub.add_parser("boards", help=HELP, description=HELP)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=main)
    return p


def rows() -> list[dict]:
    from .. import config
    out = []
    for b in config.load_boards():
        tcs = [config.load_toolchain(t) for t in b.toolchains]
        found = next((t for t in tcs if t.locate() is not None), None)
        emu = b.emulator
        if emu is None:
            how, have = "build only", None
        elif emu.kind == "native":
            how, have = "native", True
        elif emu.kind == "fvp":
            how = b.fvp.binary if b.fvp else "fvp"
            have = bool(b.fvp and shutil.which(b.fvp.binary))
        else:
            how, have = f"{emu.binary} {emu.machine}".strip(), shutil.which(emu.binary) is not None
        install = [] if found else [t.package for t in tcs if t.package] + [f"${t.env}" for t in tcs if t.env]
        out.append({"board": b.name, "cpu": b.cpu, "emulator": how, "emulator_found": have,
                    "emulator_package": emu.package if emu is not None else "",
                    "toolchain": found.name if found else " | ".join(t.name for t in tcs),
                    "toolchain_found": found is not None, "install": install, "description": b.description})
    return out


def table(data: list[dict] | None = None) -> str:
    data = rows() if data is None else data
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


def print_table() -> int:
    print(table())
    return 0


def main(args) -> int:
    if args.json:
        print(json.dumps(rows(), indent=1))
    else:
        print(table())
    return 0
