"""etdeploy kernels: the operator catalogue (each operator, the kernel file that implements it, the
flows that emit it and the boards those flows target), and with programs (.pte/.bpte) which of
their operators have no kernel (exit code of MissingOperators when any).

Which boards: bake compiles a kernel file into any board's build whose program uses one of its
operators, for every CPU (the fast paths are chosen by the compiler's feature macros). What differs
per board is which flow produces the operator: aten:: and dim_order_ops:: operators come from every
flow (portable, pt2e, and the float parts of cortex_m programs), quantized_decomposed:: from pt2e
(any board), cortex_m:: only from the cortex_m flow, which targets the Cortex-M CPUs (boards of
family cortex-m: etdeploy.export_spec.flow_for_board and cpu_name)."""
from __future__ import annotations

import json
from pathlib import Path

HELP = "list the operators etdeploy has kernels for; with a .pte/.bpte, which of its operators are missing"

# namespace -> flows whose programs contain its operators
FLOWS_BY_NAMESPACE = {
    "aten": ("portable", "pt2e", "cortex_m"),
    "dim_order_ops": ("portable", "pt2e", "cortex_m"),
    "quantized_decomposed": ("pt2e", "cortex_m"),
    "cortex_m": ("cortex_m",),
}


def _rel(source: Path) -> str:
    """A kernel file as named under firmware/kernels (cortex_m/quant.c is not quant.c)."""
    from ..kernels import KERNEL_DIR
    return source.relative_to(KERNEL_DIR).as_posix()


def register(sub):
    p = sub.add_parser("kernels", help=HELP, description=HELP + ". " + __doc__.split("\n\n")[1].replace("\n", " "))
    p.add_argument("programs", nargs="*", metavar="PROGRAM", help=".pte/.bpte files to check against the catalogue")
    p.add_argument("--board", help="list only the operators whose flows target this board (`etdeploy boards`); programs are checked against the whole catalogue, as bake does")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=main)
    return p


def _flow_boards(boards) -> dict[str, list[str]]:
    """flow -> the boards it can target"""
    cortex = [b.name for b in boards if b.family == "cortex-m"]
    every = [b.name for b in boards]
    return {"portable": every, "pt2e": every, "cortex_m": cortex}


def catalogue_rows(boards=None) -> list[dict]:
    from .. import config, kernels
    boards = config.load_boards() if boards is None else boards
    by_flow = _flow_boards(boards)
    rows = []
    for op, k in sorted(kernels.catalogue().items()):
        flows = FLOWS_BY_NAMESPACE.get(op.split("::", 1)[0], ("portable",))
        names = sorted({b for f in flows for b in by_flow.get(f, [])})
        rows.append({"op": op, "file": _rel(k.source), "symbol": k.symbol, "flows": list(flows), "boards": names})
    return rows


def program_rows(paths: list[Path]) -> tuple[list[dict], dict[str, list[str]]]:
    """Each operator of the programs with its kernel file (None when missing), and missing op -> users."""
    from .. import kernels
    from ..pte import read_program
    cat = kernels.catalogue()
    rows: dict[str, dict] = {}
    missing: dict[str, list[str]] = {}
    for path in paths:
        prog = read_program(Path(path))
        for m in prog.methods:
            for op in m.operators:
                where = f"{Path(path).name}:{m.name}"
                k = cat.get(op)
                r = rows.setdefault(op, {"op": op, "file": _rel(k.source) if k else None, "used_by": []})
                if where not in r["used_by"]:
                    r["used_by"].append(where)
                if k is None:
                    missing.setdefault(op, []).append(where)
    return sorted(rows.values(), key=lambda r: (r["file"] is not None, r["op"])), missing


def _table(head: list[str], lines: list[list[str]]) -> str:
    w = [max(len(x[i]) for x in lines + [head]) for i in range(len(head) - 1)]
    fmt = lambda row: "  ".join(c.ljust(w[i]) for i, c in enumerate(row[:-1])) + "  " + row[-1]
    return "\n".join(fmt(r).rstrip() for r in [head] + lines)


def catalogue_table(rows: list[dict], n_boards: int) -> str:
    lines = [[r["op"], r["file"], ", ".join(r["flows"]),
              "all" if len(r["boards"]) == n_boards else ", ".join(r["boards"])] for r in rows]
    return _table(["operator", "kernel file", "flows", "boards"], lines)


def main(args) -> int:
    from .. import config, errors
    boards = config.load_boards()
    if args.board:
        if args.board not in {b.name for b in boards}:
            raise errors.UnknownBoard(args.board, sorted(b.name for b in boards))
    if args.programs:
        rows, missing = program_rows(args.programs)
        if args.json:
            print(json.dumps({"operators": rows, "missing": sorted(missing)}, indent=1))
        else:
            lines = [[r["op"], r["file"] or "MISSING", ", ".join(r["used_by"])] for r in rows]
            print(_table(["operator", "kernel file", "used by"], lines))
            print(f"{len(rows)} operator(s), {len(missing)} without a kernel")
        if missing:
            raise errors.MissingOperators(sorted(missing), where=missing)
        return 0
    rows = catalogue_rows(boards)
    if args.board:
        rows = [r for r in rows if args.board in r["boards"]]
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print(catalogue_table(rows, len(boards)))
        print(f"{len(rows)} operators. Every kernel file compiles for every board; a build includes the files "
              f"its programs' operators need.")
    return 0

