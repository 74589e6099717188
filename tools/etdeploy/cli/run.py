"""etdeploy run: run a built image (or build one from a .pte) on the board's emulator or host, or on a device
through its serial port (--port; flashed with --gdb or the board's method first)."""
from __future__ import annotations

from pathlib import Path

from .. import errors

HELP = "run a firmware image on its emulator, the host, an FVP or a board (--port), and judge the result"
EXIT_CODES = "exit codes: " + errors.exit_codes_text()


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
    for kind in ("model", "arena", "pool"):
        p.add_argument(f"--{kind}-region", metavar="REGION",
                       help=f"with --pte: the memory region for the {kind} (scons {kind}_region=)")
    d = p.add_argument_group("on a real board", "run on a device: flash it, read its link from a serial port")
    d.add_argument("--port", help="the board's serial port as a pyserial URL: /dev/ttyACM0, socket://HOST:PORT, "
                                  "rfc2217://HOST:PORT")
    d.add_argument("--baud", type=int, help="serial baud rate (default: the board's [uart] baud)")
    f = d.add_mutually_exclusive_group()
    f.add_argument("--gdb", metavar="HOST:PORT", help="flash through this GDB server (pyocd gdbserver, openocd, "
                                                      "JLinkGDBServer, a Black Magic Probe's /dev/tty...)")
    f.add_argument("--no-flash", action="store_true", help="the image is on the board already: only listen")
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
    from .. import config, session
    from ..report import print_result
    board = config.load_board(args.board)
    root = config.ROOT
    if args.elf:
        elf = Path(args.elf)
    else:
        elf = root / "build" / board.name / "firmware.elf"
        if args.pte:
            import subprocess
            import sys
            # scons runs in the project root: the user's paths are relative to where they are
            ptes = ",".join(str(Path(p.strip()).resolve()) for p in args.pte.split(",") if p.strip())
            cmd = [sys.executable, "-m", "SCons", f"board={board.name}", f"pte={ptes}"]
            if args.input:
                cmd.append("inputs=link")
            cmd += [f"{k}_region={getattr(args, k + '_region')}" for k in ("model", "arena", "pool")
                    if getattr(args, k + "_region", None)]
            if not args.dry_run:
                rc = subprocess.call(cmd, cwd=root)
                if rc:
                    return rc
    run_dir = Path(args.run_dir) if args.run_dir else elf.parent / "run"
    inputs = None
    if args.input:
        progs = session.baked_programs(elf)
        minfo = progs[0].method(args.method) if progs else None
        mi = [m.name for m in progs[0].methods].index(args.method) if progs else 0
        inputs = [None] * (mi + 1)
        inputs[mi] = load_inputs(args.input, minfo)
    runner = args.runner
    if args.port:
        runner = device_runner(board, args)
    elif args.gdb or args.no_flash or args.baud:
        raise errors.ConfigError("--gdb, --no-flash and --baud are for runs on a board: give its serial port (--port)")
    res = session.run(board, elf, run_dir, timeout=args.timeout, inputs=inputs, dry_run=args.dry_run,
                      runner=runner, icount=args.icount)
    if args.dry_run:
        return 0
    print_result(res, run_dir)
    return 0



def device_runner(board, args):
    """The serial-port runner with the flash step the options ask for."""
    from ..runners import flasher_for
    from ..runners.gdbserver import gdb_flash
    from ..runners.serialport import SerialDeviceRunner
    if args.gdb:
        flash = lambda elf: gdb_flash(board, elf, args.gdb)  # noqa: E731
    elif args.no_flash:
        flash = None
    else:
        flasher = flasher_for(board)
        flash = lambda elf: flasher.flash(Path(elf).parent)  # noqa: E731
    return SerialDeviceRunner(board, args.port, args.baud, flash=flash, log=print)
