"""The baked program + runtime as a static library for someone else's firmware (issue 18):
`etdeploy lib` / `scons lib=1` write build/<board>/lib/ with libetmodel.a (runtime core, only the
program's kernels, the baked program, its arenas and pools in their own sections), include/etmodel.h
(firmware/lib/etmodel.c's API and the program's metadata as constants) and the build-system glue
(etdeploy.libglue). It is the board's BuildUnit without board support, startup, main or link code."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import bake as et_bake
from . import buildenv, libglue, proc
from .errors import BakeError, BuildError

ROOT = et_bake.ROOT
LIB_C = ROOT / "firmware" / "lib"
# Runtime files an image needs and a library must not carry: main, the UART link (the host firmware
# owns its UART), profiling to the link.
NOT_IN_LIB = {"et_main.c", "et_link.c", "et_link_rx.c", "et_profile.c"}
# Options that change what firmware does with a link: meaningless inside someone else's firmware.
IMAGE_ONLY = ("inputs", "link", "etdump", "run", "runner")
ARCHIVE = "libetmodel.a"
# Where arenas and pools live: "sections" (the library defines them in .et_arena*/.et_pool* for your
# linker script) or "user" (you define the arrays etmodel.h declares, wherever you like).
ARENAS = ("sections", "user")
_BUFFER = re.compile(r'^(uint8_t et_(?:arena|pool)_\w+\[.*\]) __attribute__\(\(aligned\(16\), section\("[^"]+"\)\)\);$', re.M)


class LibraryError(BakeError):
    """A program or option the library cannot carry."""


@dataclass
class Library:
    out: Path
    archive: Path
    header: Path
    unit: buildenv.BuildUnit
    sections: list[str]                      # input sections the user's linker script must place
    files: list[Path] = field(default_factory=list)   # every file written (archive, header, glue)
    report: dict = field(default_factory=dict)


def check_program(progs) -> None:
    if len(progs) != 1:
        raise LibraryError(f"lib: one program per library, got {len(progs)} ({', '.join(p.path.name for p in progs)})")
    p = progs[0]
    for m in p.methods:
        if m.delegates:
            backends = ", ".join(sorted({d.backend for d in m.delegates}))
            raise LibraryError(f"{p.path.name}: method '{m.name}' delegates to {backends}; the library cannot carry "
                               f"delegates (their drivers need the board's interrupt vectors and BSP). Export for "
                               f"the CPU (portable or Cortex-M flow), or build a whole image with `scons pte=...`.")


def lib_model_c(gen_c: Path, prog, arenas: str) -> str:
    """bake's et_model.gen.c for the library: with arenas="user" the arena and pool arrays become
    extern (same sizes: the runtime still takes sizeof of them); and in either mode static asserts
    that etmodel.h's size constants are the sizes the C compiler computes."""
    from .libglue import buffers, c_ident
    text = gen_c.read_text()
    if arenas == "user":
        text, n = _BUFFER.subn(r"extern \1;", text)
        want = sum(len(b) for b in buffers(prog))
        if n != want:    # bake's C changed shape: refuse rather than define the buffers twice
            raise LibraryError(f"arenas=user: found {n} arena/pool definitions in {gen_c.name}, expected {want}")
    out = [text, '#include "etmodel.h"']
    for j, m in enumerate(prog.methods):
        mid = "ETMODEL_" + c_ident(m.name)
        for sym, const in buffers(prog)[j]:
            out.append(f'_Static_assert(sizeof({sym}) == {mid}_{const}, "etmodel.h: {mid}_{const} is not sizeof({sym})");')
    return "\n".join(out) + "\n"


def plan(pte: Path, board, out: Path, opts: dict | None = None, opt: str = "2", arenas: str = "sections") -> tuple:
    """(BuildUnit of the library, BakeResult): bake into out/gen, then the unit without board support
    and image-only runtime files, plus firmware/lib's API."""
    if arenas not in ARENAS:
        raise LibraryError(f"arenas={arenas!r}: choose one of {', '.join(ARENAS)}")
    opts = {k: v for k, v in dict(opts or {}).items() if k not in IMAGE_ONLY}
    from .pte import read_program
    pte = Path(pte)
    if not pte.exists():
        raise BakeError(f"program file not found: {pte}")
    check_program([read_program(pte)])      # before bake: a delegate is refused by name, not by backend
    res = et_bake.bake([pte], board, Path(out) / "gen", opts)
    gen_c = [g for g in res.generated if str(g).endswith(".c")]
    model_c = res.out_dir / "et_model.gen.c"
    lib_c = et_bake.write_if_changed(res.out_dir / "et_model_lib.gen.c", lib_model_c(model_c, res.programs[0], arenas))
    unit = buildenv.unit(board, opt, sources=[s for s in res.sources if s.name not in NOT_IN_LIB] +
                         [lib_c if g == model_c else g for g in gen_c] +
                         sorted(LIB_C.glob("*.c")),
                         include_dirs=[Path(out) / "include"] + list(res.include_dirs), defines=res.defines,
                         depends=res.depends, gen_dir=res.out_dir, with_bsp=False, placement=dict(res.sections))
    return unit, res


def _ar(unit: buildenv.BuildUnit) -> str:
    tc = unit.plan.toolchain
    cand = unit.plan.compiler.parent / f"{tc.prefix}ar"
    return str(cand) if cand.exists() else (proc.which(f"{tc.prefix}ar") or f"{tc.prefix}ar")


def build(pte: Path, board, out: Path, opts: dict | None = None, opt: str = "2", arenas: str = "sections") -> Library:
    """Bake, render etmodel.h, compile the unit, archive it, write the glue. Objects are kept by the
    digest of their command line and source, so a second build recompiles only what changed."""
    out = Path(out)
    unit, res = plan(pte, board, out, opts, opt, arenas)
    prog = res.programs[0]
    header = et_bake.write_if_changed(out / "include" / "etmodel.h", libglue.header(prog, board, arenas))
    extra = list(board_lib_flags(unit))
    headers = b"".join(h.read_bytes() for h in sorted((ROOT / "firmware").rglob("*.h")))
    objs = []
    for src in unit.sources:
        argv_probe = unit.compile_argv(src, Path("x.o"), extra)
        h = hashlib.sha256(" ".join(argv_probe).encode() + src.read_bytes() + header.read_bytes() + headers +
                           b"".join(d.read_bytes() for d in unit.depends if unit.is_generated(src)))
        for hdr in sorted(res.out_dir.glob("*.h")):
            h.update(hdr.read_bytes())
        obj = out / "obj" / f"{src.stem}-{h.hexdigest()[:16]}.o"
        if not obj.exists():
            obj.parent.mkdir(parents=True, exist_ok=True)
            try:
                proc.run(unit.compile_argv(src, obj, extra))
            except proc.ProcError as e:
                raise BuildError(f"lib: compiling {src.name} failed:\n{e}") from None
        objs.append(obj)
    archive = out / "lib" / ARCHIVE
    archive.parent.mkdir(parents=True, exist_ok=True)
    archive.unlink(missing_ok=True)
    proc.run([_ar(unit), "rcs", archive, *objs])
    sections = libglue.sections(prog, arenas)
    files = [archive, header] + libglue.write_all(out, prog, board, unit, sections, extra, arenas)
    rep = {"board": board.name, "program": str(prog.path), "archive": str(archive), "objects": len(objs),
           "sections": sections, "arenas": arenas, "archive_bytes": archive.stat().st_size}
    return Library(out, archive, header, unit, sections, files, rep)


def board_lib_flags(unit: buildenv.BuildUnit) -> list[str]:
    """Compile flags a library needs beyond the image's: position-independent code where the host's
    executables are PIE (objects of a static library end up in the user's executable as they are)."""
    return ["-fPIC"] if unit.plan.board.family == "linux" else []
