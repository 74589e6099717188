"""What a build needs for one board, as plain data for the SCons tools (site_scons/site_tools):
the board, its installed toolchain, the compiler flags, the BSP defines and sources. Errors are
etdeploy's typed errors; the SCons tools turn them into messages."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import config

ROOT = config.ROOT
BOARDS_C = ROOT / "firmware" / "boards"
OPT_LEVELS = ("0", "1", "2", "3", "s", "z", "g")
COMMON_CFLAGS = ["-g", "-Wall", "-Wextra", "-Wno-unused-parameter"]


@dataclass
class BuildPlan:
    board: config.Board
    toolchain: config.Toolchain
    compiler: Path
    ccflags: list[str]
    cflags: list[str]
    linkflags: list[str]
    libs: list[str]
    defines: dict
    include_dirs: list[Path]
    bsp_sources: list[Path]
    minimal_main: Path
    linker_script: bool
    tools: dict = field(default_factory=dict)   # objcopy etc. by name -> executable


def bsp_sources(board: config.Board) -> list[Path]:
    d = BOARDS_C / board.family
    return sorted(list(d.glob("*.c")) + list(d.glob("*.S")))


def plan(board: config.Board, opt: str = "2") -> BuildPlan:
    if opt not in OPT_LEVELS:
        raise config.ConfigError(f"opt={opt!r}: choose one of {', '.join(OPT_LEVELS)}")
    tc = config.board_toolchain(board, require=True)
    cc = tc.require()
    arch = config.arch_flags(board, tc)
    bindir = cc.parent
    return BuildPlan(
        board=board, toolchain=tc, compiler=cc,
        ccflags=arch + list(tc.cflags) + [f"-O{opt}"] + COMMON_CFLAGS,
        cflags=["-std=c11"],
        linkflags=arch + list(tc.ldflags),
        libs=list(tc.libs),
        defines=config.bsp_defines(board),
        include_dirs=[BOARDS_C],
        bsp_sources=bsp_sources(board),
        minimal_main=BOARDS_C / "minimal_main.c",
        linker_script=tc.linker_script and bool(board.regions),
        tools={t: str(bindir / f"{tc.prefix}{t}") for t in ("objcopy", "objdump", "size", "nm")},
    )


def check_region(board: config.Board, name: str) -> config.MemoryRegion:
    """A region named by an option (arena_region=), or ConfigError listing the board's regions."""
    if not board.regions:
        raise config.ConfigError(f"arena_region={name}: board '{board.name}' has no memory map (its arenas are "
                                 f"ordinary static arrays)")
    return board.region(name)
