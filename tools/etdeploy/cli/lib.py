"""etdeploy lib: the baked program + runtime as a library for your own firmware (libetmodel.a,
etmodel.h, a CMake package, a Zephyr module, a PlatformIO manifest), and `etdeploy lib check
firmware.elf`: does your linked firmware place the library's sections?"""
from __future__ import annotations

from pathlib import Path

HELP = "build libetmodel.a + etmodel.h + CMake/Zephyr/PlatformIO glue for your own firmware"


def register(sub):
    p = sub.add_parser("lib", help=HELP, description=HELP + ". `etdeploy lib check firmware.elf` checks that your "
                       "linker script places the library's sections (.et_model*, .et_arena*, .et_pool*).")
    p.add_argument("action", nargs="?", choices=["check"], help="check: inspect a linked firmware ELF")
    p.add_argument("elf", nargs="?", help="with check: your linked firmware")
    p.add_argument("--board", default="host", help="board to build for (default: host)")
    p.add_argument("--pte", help="the program (.pte or .bpte)")
    p.add_argument("-o", "--out", help="output directory (default: build/<board>/lib)")
    p.add_argument("--opt", default="2", help="optimisation level (-O<opt>)")
    p.add_argument("--arenas", choices=["sections", "user"], default="sections",
                   help="sections: the library defines arenas and pools in .et_arena*/.et_pool* for your linker "
                        "script; user: you define the arrays etmodel.h declares, wherever you like")
    p.add_argument("--package", help="with check: the library directory (default: any etmodel section)")
    for opt in ("model_region", "arena_region", "pool_region"):
        p.add_argument(f"--{opt.replace('_', '-')}", dest=opt, help=f"as scons {opt}=")
    p.set_defaults(func=main)
    return p


def _needed(package: str | None) -> list[str] | None:
    if not package:
        return None
    import re
    text = (Path(package) / "etmodel-config.cmake").read_text()
    m = re.search(r'set\(ETMODEL_SECTIONS "([^"]*)"\)', text)
    return m.group(1).split(";") if m else None


def main(args) -> int:
    from .. import config, errors, libglue, library
    if args.action == "check":
        if not args.elf:
            raise errors.ConfigError("etdeploy lib check <firmware.elf> [--package DIR]")
        libglue.check_elf(Path(args.elf), _needed(args.package))
        print(f"{args.elf}: libetmodel.a's sections are placed by the linker script")
        return 0
    if not args.pte:
        raise errors.ConfigError("etdeploy lib: --pte <file.pte|file.bpte> is required")
    board = config.load_board(args.board)
    out = Path(args.out) if args.out else config.ROOT / "build" / board.name / "lib"
    opts = {k: getattr(args, k) for k in ("model_region", "arena_region", "pool_region") if getattr(args, k)}
    lib = library.build(Path(args.pte), board, out, opts, args.opt, args.arenas)
    print(f"{lib.archive} ({lib.report['archive_bytes']} B), {lib.header}")
    print(f"sections your linker script must place: {', '.join(lib.sections)}")
    print(f"CMake: find_package(etmodel REQUIRED PATHS {out} NO_DEFAULT_PATH); "
          f"target_link_libraries(app PRIVATE etmodel::etmodel)")
    return 0
