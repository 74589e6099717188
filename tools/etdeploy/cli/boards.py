"""etdeploy boards: every board, its cpu, how it runs here, and whether its toolchain is installed
(and if not, what provides it). The table itself is etdeploy.report's."""
from __future__ import annotations

import json

HELP = "list the boards: cpu, emulator, toolchain found or what to install"


def register(sub):
    p = sub.add_parser("boards", help=HELP, description=HELP)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=main)
    return p


def main(args) -> int:
    from .. import report
    if args.json:
        print(json.dumps(report.board_rows(), indent=1))
    else:
        print(report.board_table())
    return 0
