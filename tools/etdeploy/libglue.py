"""What `etdeploy lib` writes next to libetmodel.a, rendered from firmware/lib/templates/*.j2: the
public header etmodel.h (API + the program's metadata as constants), the CMake package, the Zephyr
module, the PlatformIO manifest and a GNU ld fragment, all pointing at the same archive and header.
Also the post-link check of a user's ELF (`etdeploy lib check`)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import jinja2

from . import config
from .bake import BLOB_ALIGN, pool_bytes, write_if_changed
from .dtypes import SCALAR_TYPES
from .errors import BuildError

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "firmware" / "lib" / "templates"
SECTION_PREFIXES = (".et_model.", ".et_arena.", ".et_pool.")
VERSION = "1.0.0"    # of the library's C API (etmodel.h), for find_package and library.json
GLUE = ["etmodel-config.cmake", "etmodel-config-version.cmake", "etmodel-check.cmake", "etmodel-sections.ld", "zephyr/module.yml",
        "zephyr/CMakeLists.txt", "zephyr/Kconfig", "zephyr/etmodel-model.ld", "zephyr/etmodel-arena.ld"]


class LinkCheckError(BuildError):
    """A user's linked firmware does not place the library's sections."""


def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True)


def c_ident(name: str) -> str:
    s = re.sub(r"[^0-9A-Za-z]", "_", name).upper()
    return s if s and not s[0].isdigit() else "M_" + s


def _dtype(code: int) -> str:
    return SCALAR_TYPES.get(code, (f"dtype{code}",))[0].upper()


def _io(tag: str, v) -> dict:
    if hasattr(v, "sizes"):
        n = 1
        for s in v.sizes:
            n *= s
        return {"tag": tag, "tensor": True, "dtype": _dtype(v.dtype), "ndim": len(v.sizes),
                "sizes": list(v.sizes) or [1],   # a 0-d tensor: {1} (C has no empty initializer)
                "dim_order": list(v.dim_order) or [0], "numel": n, "nbytes": v.nbytes}
    return {"tag": tag, "tensor": False, "kind": v[0] if isinstance(v, tuple) else str(v)}


def methods(prog, board) -> list[dict]:
    out = []
    for m in prog.methods:
        arenas = [(mid, sz) for mid, sz in enumerate(m.arenas) if mid and sz]
        out.append({"name": m.name, "id": c_ident(m.name), "pool": pool_bytes(m.counts, board.pointer_bytes),
                    "arenas": arenas, "arena_total": sum(sz for _, sz in arenas),
                    "inputs": [_io(f"IN{i}", v) for i, v in enumerate(m.inputs)],
                    "outputs": [_io(f"OUT{i}", v) for i, v in enumerate(m.outputs)]})
    return out


def buffers(prog) -> list[list[tuple[str, str]]]:
    """Per method: (C symbol, etmodel.h size constant suffix) of each arena and the pool."""
    return [[(f"et_arena_0_{j}_{mid}", f"ARENA{mid}_BYTES") for mid, sz in enumerate(m.arenas) if mid and sz] +
            [(f"et_pool_0_{j}", "POOL_BYTES")] for j, m in enumerate(prog.methods)]


def sections(prog, arenas: str = "sections") -> list[str]:
    """The input sections bake's et_model.gen.c puts the program's blobs in (one program: index 0);
    with arenas="user" only the model's (you define the arenas and pools)."""
    out = [".et_model.0"]
    if arenas == "user":
        return out
    for j, m in enumerate(prog.methods):
        out += [f".et_arena.0_{j}_{mid}" for mid, sz in enumerate(m.arenas) if mid and sz]
        out.append(f".et_pool.0_{j}")
    return out


def _symbols(prog) -> list[str]:
    out = ["et_model_blob_0"]
    for j, m in enumerate(prog.methods):
        out += [f"et_arena_0_{j}_{mid}" for mid, sz in enumerate(m.arenas) if mid and sz]
        out.append(f"et_pool_0_{j}")
    return out


def _context(prog, board, sections_=None, arch=(), arenas: str = "sections") -> dict:
    ms = methods(prog, board)
    for m, bufs in zip(ms, buffers(prog)):
        m["buffers"] = bufs
    return {"board": board, "program": prog.path.name, "program_name": prog.path.name, "methods": ms,
            "model_bytes": len(prog.data), "model_align": BLOB_ALIGN,
            "arena_bytes": sum(m["arena_total"] for m in ms), "pool_bytes": sum(m["pool"] for m in ms),
            "dtypes": [(n.upper(), c) for c, (n, _b, _t) in sorted(SCALAR_TYPES.items())],
            "sections": list(sections_ or sections(prog)), "symbols": _symbols(prog), "arch_flags": list(arch), "user_arenas": arenas == "user",
            "version": VERSION}


def header(prog, board, arenas: str = "sections") -> str:
    return _env().get_template("etmodel.h.j2").render(**_context(prog, board, arenas=arenas))


def platformio_manifest(prog, board) -> dict:
    """library.json (PlatformIO's library manifest): a precompiled archive, its header dir, no sources."""
    return {
        "name": "etmodel",
        "version": VERSION,
        "description": f"ExecuTorch program {prog.path.name} baked with etdeploy's runtime for {board.name}",
        "keywords": ["executorch", "etdeploy", "tinyml"],
        "frameworks": "*",
        "platforms": "*",
        "headers": "etmodel.h",
        "build": {
            "includeDir": "include",
            "srcFilter": ["-<*>"],
            "flags": ["-L lib", "-l etmodel"],
            "libArchive": False,
        },
    }


def write_all(out: Path, prog, board, unit, sections_: list[str], extra=(), arenas: str = "sections") -> list[Path]:
    arch = config.arch_flags(board, unit.plan.toolchain)
    ctx = _context(prog, board, sections_, arch, arenas)
    env = _env()
    files = [write_if_changed(Path(out) / name, env.get_template(name + ".j2").render(**ctx)) for name in GLUE]
    files.append(write_if_changed(Path(out) / "library.json",
                                  json.dumps(platformio_manifest(prog, board), indent=2) + "\n"))
    return files


def check_elf(elf: Path, needed: list[str] | None = None) -> list[str]:
    """The library's sections the linked ELF left as orphans (a section named like its input section,
    .et_arena.0_0_1 say) or lacks entirely; raises LinkCheckError naming them. needed: the library's
    section names (from etmodel-config.cmake's list); default: any .et_model/.et_arena/.et_pool input."""
    from elftools.elf.elffile import ELFFile
    with open(elf, "rb") as f:
        e = ELFFile(f)
        names = [s.name for s in e.iter_sections()]
        syms = set()
        tab = e.get_section_by_name(".symtab")
        if tab is not None:
            syms = {s.name for s in tab.iter_symbols()}
    orphans = sorted(n for n in names if n.startswith(SECTION_PREFIXES) and (needed is None or n in needed))
    has_lib = "et_model_blob_0" in syms
    if not has_lib:
        raise LinkCheckError(f"{elf}: no libetmodel.a in this ELF (symbol et_model_blob_0 missing)")
    if orphans:
        raise LinkCheckError(f"{elf}: the linker script does not place the library's sections: {', '.join(orphans)}. "
                             f"Collect them in SECTIONS (see etmodel-sections.ld): .et_model* in a loaded region, "
                             f".et_arena* and .et_pool* (NOLOAD) in RAM")
    return []
