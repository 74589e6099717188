"""etdeploy flash: put a built image on a device as the board's data says."""
from __future__ import annotations

from pathlib import Path

HELP = "flash a built image: any GDB server (--gdb), probe (pyocd/openocd), UF2 drive, MPS3 USB drive, or adb"


def register(sub):
    p = sub.add_parser("flash", help=HELP, description=HELP)
    p.add_argument("--board", required=True)
    p.add_argument("--image-dir", help="where firmware.* are (default build/<board>)")
    p.add_argument("--drive", help="mount point of the UF2 / MPS3 drive (default: search /media, /mnt ...)")
    p.add_argument("--gdb", metavar="HOST:PORT", help="load through this GDB server (pyocd gdbserver, openocd, "
                                                      "JLinkGDBServer, QEMU -gdb), whatever the board's method")
    p.add_argument("--dry-run", action="store_true", help="print the commands only")
    p.set_defaults(func=main)
    return p


def main(args) -> int:
    from .. import config, flash
    board = config.load_board(args.board)
    root = config.ROOT
    image_dir = Path(args.image_dir) if args.image_dir else root / "build" / board.name
    if args.gdb:
        from ..runners.gdbserver import GdbServerRunner
        GdbServerRunner(board, log=print, server=args.gdb).flash(image_dir, dry_run=args.dry_run)
        return 0
    flash.flash(board, image_dir, drive=args.drive, dry_run=args.dry_run)
    return 0
