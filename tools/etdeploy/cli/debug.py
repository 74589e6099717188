"""etdeploy debug: gdb on the image, with its symbols, attached to the board's emulator started halted
(QEMU's gdbstub), or to a probe's GDB server (--gdb HOST:PORT), as `west debug` or `idf.py gdb` do.
--batch FILE runs gdb's commands from FILE without a prompt (scripts, CI)."""
from __future__ import annotations

import signal
import subprocess
import threading
from pathlib import Path

HELP = "debug an image with gdb: on the board's emulator (halted at reset) or through a probe's GDB server"


def register(sub):
    p = sub.add_parser("debug", help=HELP, description=HELP)
    p.add_argument("--board", required=True)
    p.add_argument("--elf", help="the image (default build/<board>/firmware.elf)")
    p.add_argument("--gdb", metavar="HOST:PORT", help="a probe's GDB server instead of the emulator; `load` in gdb "
                                                      "writes the image (or `etdeploy flash --gdb` first)")
    p.add_argument("--batch", metavar="FILE", help="run these gdb commands and exit (no prompt)")
    p.set_defaults(func=main)
    return p


def gdb_argv(elf: Path, server: str, batch: str | None) -> list[str]:
    from ..runners.base import need_binary
    from ..runners.gdbserver import GDB, target_command
    argv = [need_binary(GDB, GDB), "-nx", "-q", "-ex", "set pagination off", "-ex", "set confirm off"]
    for c in target_command(server):
        argv += ["-ex", c]
    if batch:
        argv += ["-batch", "-x", str(batch)]
    return argv + [str(elf)]


def _gdb(argv: list[str]) -> int:
    """gdb in the foreground: Ctrl-C interrupts the target in gdb, not etdeploy (which holds the emulator)."""
    old = signal.signal(signal.SIGINT, lambda *a: None)   # not SIG_IGN: that would pass to gdb
    try:
        return subprocess.call(argv)
    finally:
        signal.signal(signal.SIGINT, old)


def _drain(sess, stop: threading.Event) -> None:
    # The UART must be read, or a chatty image stalls on a full socket while the user debugs.
    while not stop.is_set() and sess.poll() is None:
        sess.read(0.1)


def main(args) -> int:
    from .. import config
    from ..errors import ConfigError, RunError
    board = config.load_board(args.board)
    root = config.ROOT
    elf = Path(args.elf) if args.elf else root / "build" / board.name / "firmware.elf"
    if not elf.exists():
        raise RunError(f"no image at {elf}: build it first (scons board={board.name} pte=...)")
    if args.batch and not Path(args.batch).is_file():
        raise ConfigError(f"--batch {args.batch}: no such file")
    if args.gdb:
        return _gdb(gdb_argv(elf, args.gdb, args.batch))
    from ..runners import runner_for
    from ..runners.qemu import QemuSystemRunner, QemuUartSession, free_port
    from ..runners.base import ProcessSession, need_binary
    r = runner_for(board, log=print)
    if not isinstance(r, QemuSystemRunner):
        raise RunError(f"board '{board.name}' runs on '{r.name}', which has no GDB server here: "
                       f"give a probe's with --gdb HOST:PORT")
    uart, gport = free_port(), free_port()
    argv = r.command(str(elf), port=uart) + ["-S", "-gdb", f"tcp:127.0.0.1:{gport}"]
    need_binary(argv[0], board.emulator.package or argv[0])
    r.log_command(argv)
    sess = QemuUartSession(ProcessSession(argv, link_on_stdout=False), uart)
    stop = threading.Event()
    t = threading.Thread(target=_drain, args=(sess, stop), daemon=True)
    t.start()
    try:
        return _gdb(gdb_argv(elf, f"127.0.0.1:{gport}", args.batch))
    finally:
        stop.set()
        t.join(1.0)
        sess.kill()
