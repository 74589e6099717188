"""Where a cross board's XNNPACK comes from, and what its dynamic image needs at run time.

Debian ships XNNPACK for arm64 only as glibc shared objects (libxnnpack0:arm64 and its two
dependencies), and its multiarch -dev packages cannot be installed beside the host's. So
tools/bootstrap.sh `apt-get download`s the runtime packages and unpacks them (dpkg-deb -x) into the
board's `[xnnpack] sysroot`, with the host's headers beside them. An XnnpackBackend image for such a
board links them with -L/-rpath-link and without -static; every other image of the board stays static.

At run time the image needs its shared objects and glibc's loader: qemu-user gets `-L <glibc_root>`
and LD_LIBRARY_PATH; over adb they are pushed beside the binary, which runs through the pushed loader
(an Android device has no glibc of its own)."""
from __future__ import annotations

from pathlib import Path

from .errors import BakeError, RunError

ROOT = Path(__file__).resolve().parents[2]
HEADERS = ("xnnpack.h", "pthreadpool.h")


def is_cross(x) -> bool:
    return x is not None and bool(x.sysroot)


def lib_dir(x) -> Path:
    return ROOT / x.sysroot / x.lib_dir


def include_dir(x) -> Path:
    return ROOT / x.sysroot / x.include_dir


def bootstrap_step(x) -> str:
    return (f"run tools/bootstrap.sh (its arm64 XNNPACK step: dpkg --add-architecture arm64, apt-get update, "
            f"apt-get download {' '.join(x.packages)}, dpkg-deb -x each into {x.sysroot})")


def missing(x) -> list[Path]:
    """Files the build needs that are not there (libraries named as ':file', the headers)."""
    want = [lib_dir(x) / lib[1:] for lib in x.libs if lib.startswith(":")]
    want += [include_dir(x) / h for h in HEADERS]
    return [p for p in want if not p.is_file()]


def check(board) -> None:
    x = board.xnnpack
    gone = missing(x)
    if gone:
        raise BakeError(f"board {board.name}: XNNPACK for {board.cpu} is not unpacked ({gone[0]} missing); "
                        f"{bootstrap_step(x)}")


def link_flags(x) -> list[str]:
    d = lib_dir(x)
    return [f"-L{d}", f"-Wl,-rpath-link,{d}"]


# ---------------------------------------------------------------- the dynamic image at run time

def _elf(path):
    from elftools.elf.elffile import ELFFile
    f = open(path, "rb")
    return f, ELFFile(f)


def interpreter(elf: Path | str) -> str | None:
    """PT_INTERP of the image (None: static, or not an ELF file we can read)."""
    try:
        f, e = _elf(elf)
    except Exception:      # a missing file or a placeholder in a dry run: treat as static
        return None
    with f:
        for seg in e.iter_segments():
            if seg["p_type"] == "PT_INTERP":
                return seg.get_interp_name()
    return None


def needed(path: Path) -> list[str]:
    f, e = _elf(path)
    with f:
        dyn = e.get_section_by_name(".dynamic")
        return [t.needed for t in dyn.iter_tags() if t.entry.d_tag == "DT_NEEDED"] if dyn else []


def _libraries_of(board, elf):
    """The board's [xnnpack] data that a dynamic image's libraries come from."""
    x = board.xnnpack
    if not is_cross(x):
        raise RunError(f"{elf} is a dynamic image, but board {board.name} names no libraries for it")
    return x


def search_dirs(board) -> list[Path]:
    x = board.xnnpack
    return [lib_dir(x), Path(x.glibc_root) / "lib"]


def runtime_files(board, elf: Path | str) -> list[Path]:
    """The shared objects the image loads (transitively, DT_NEEDED) and the loader, as files here."""
    x = _libraries_of(board, elf)
    dirs = search_dirs(board)
    interp = interpreter(elf)
    out: list[Path] = []
    todo, seen = list(needed(Path(elf))) + ([Path(interp).name] if interp else []), set()
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        hit = next((d / name for d in dirs if (d / name).is_file()), None)
        if hit is None:
            raise RunError(f"{Path(elf).name} needs {name}, found in none of {', '.join(map(str, dirs))}; "
                           f"{bootstrap_step(x)}")
        out.append(hit)
        todo += needed(hit.resolve())
    return out


def qemu_args(board, elf: Path | str) -> list[str]:
    """qemu-user options for a dynamic image: glibc's root for the loader and libc, LD_LIBRARY_PATH for
    the unpacked libraries (nothing for a static image)."""
    if interpreter(elf) is None:
        return []
    x = _libraries_of(board, elf)
    if missing(x) or not (Path(x.glibc_root) / "lib").is_dir():
        raise RunError(f"board {board.name}: the image's shared objects are missing under {lib_dir(x)} or "
                       f"{x.glibc_root}; {bootstrap_step(x)} and libc6-arm64-cross")
    return ["-L", x.glibc_root, "-E", f"LD_LIBRARY_PATH={lib_dir(x)}"]
