"""What a build needs for one board, as plain data: the board, its installed toolchain, the compiler
flags, the BSP defines and sources (BuildPlan), and the one C build description every compile of
the runtime uses (BuildUnit: SCons, tests/support/hostrun.py, tests/fuzz/build.py and the host
benchmarks). Errors are etdeploy's typed errors; the SCons tools turn them into messages."""
from __future__ import annotations

import dataclasses
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


def check_region(board: config.Board, name: str, option: str = "arena_region") -> config.MemoryRegion:
    """A region named by an option (model_region=, arena_region=, pool_region=), or ConfigError
    listing the board's regions."""
    if not board.regions:
        raise config.ConfigError(f"{option}={name}: board '{board.name}' has no memory map (its blobs are "
                                 f"ordinary static arrays)")
    return board.region(name)


@dataclass
class BuildUnit:
    """Everything that compiles into one image: sources (runtime, kernels, board support, generated
    C), include dirs and defines in command-line order, and the plan's flags. compile_argv and
    link_argv give the exact command lines; SCons puts the same values in its environment."""
    plan: BuildPlan
    sources: list[Path]
    include_dirs: list[Path]
    defines: dict
    depends: list[Path] = field(default_factory=list)   # what the generated C .incbin's
    gen_dir: Path | None = None                         # the bake tree (generated C and headers)
    placement: dict = field(default_factory=dict)       # bake's regions for model/arena/pool (linker script)

    def with_sources(self, keep=lambda p: True, add=()) -> "BuildUnit":
        """A copy with the sources `keep` accepts plus `add` (a test harness's own main, say)."""
        return dataclasses.replace(self, sources=[s for s in self.sources if keep(s)] + [Path(a) for a in add])

    def is_generated(self, src: Path) -> bool:
        return self.gen_dir is not None and Path(self.gen_dir) in Path(src).parents

    def compile_flags(self, extra=(), include_map: dict | None = None) -> list[str]:
        """Flags for one compile (-c not included); include_map swaps include dirs (a cache's copy)."""
        m = include_map or {}
        return (list(self.plan.ccflags) + list(self.plan.cflags) + list(extra) +
                [f"-I{m.get(d, d)}" for d in self.include_dirs] +
                [f"-D{k}={v}" for k, v in self.defines.items()])

    def compile_argv(self, src: Path, obj: Path, extra=(), include_map=None, cc=None) -> list[str]:
        return [str(cc or self.plan.compiler), *self.compile_flags(extra, include_map), "-c", str(src), "-o", str(obj)]

    def link_argv(self, objs, exe: Path, extra=(), cc=None) -> list[str]:
        return [str(cc or self.plan.compiler), *self.plan.linkflags, *extra, *map(str, objs), "-o", str(exe),
                *[f"-l{lib}" for lib in self.plan.libs]]


def unit(board: config.Board, opt: str = "2", sources=(), include_dirs=(), defines=None, depends=(),
         gen_dir: Path | None = None, with_bsp: bool = True, placement: dict | None = None) -> BuildUnit:
    """The board's build unit: the given sources (bake's) + the board support, bake's include dirs
    before the plan's, the BSP defines then bake's."""
    p = plan(board, opt)
    return BuildUnit(plan=p, sources=list(sources) + (list(p.bsp_sources) if with_bsp else []),
                     include_dirs=list(include_dirs) + list(p.include_dirs),
                     defines={**p.defines, **(defines or {})}, depends=list(depends), gen_dir=gen_dir,
                     placement=dict(placement or {}))
