"""`etdeploy <subcommand>`: one module per subcommand in etdeploy.cli, each with register(sub)
(adds its parser and sets func) and main(args) -> exit code. This is the only place where
etdeploy's typed errors become messages and exit codes."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from .. import errors

DESCRIPTION = ("Build, run, flash and profile ExecuTorch programs on embedded targets. Builds go through "
               "SCons: `scons board=<board> pte=<model.pte> [run=1]` (see `scons -h`).")


def _subcommands() -> list[str]:
    from .. import cli
    return sorted(m.name for m in pkgutil.iter_modules(cli.__path__) if m.name not in ("main", "__init__"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="etdeploy", description=DESCRIPTION)
    parser.add_argument("-v", "--verbose", action="store_true", help="log every command etdeploy runs")
    sub = parser.add_subparsers(dest="command", metavar="<command>")
    for name in _subcommands():
        try:
            mod = importlib.import_module(f"{__package__}.{name}")
        except ImportError as e:   # a subcommand whose dependencies are missing stays out of --help
            sys.stderr.write(f"etdeploy: subcommand '{name}' unavailable: {e}\n")
            continue
        if hasattr(mod, "register"):
            mod.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    if args.verbose:
        from .. import proc
        proc.configure(log=lambda line: sys.stderr.write(f"$ {line}\n"))
    try:
        rc = args.func(args)
    except errors.EtdeployError as e:
        sys.stderr.write(f"etdeploy: error: {e}\n")
        return getattr(e, "exit_code", 1)
    except KeyboardInterrupt:
        return 130
    return int(rc or 0)


if __name__ == "__main__":
    sys.exit(main())
