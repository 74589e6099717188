"""Boards and toolchains as data: boards/<board>.toml and toolchains/<name>.toml, checked against a
schema and loaded into frozen dataclasses shared by SCons and the CLI.

Unknown keys are rejected with the valid ones listed; sizes ("512K", "2M", 4096) and addresses are
checked; memory regions may not overlap; `extends = "<board>"` starts from another board's data
(tables merge key by key, lists and scalars replace). Code never compares a board's name: all that
differs between boards is here. The data classes and their schema (keys, kinds, choices) are in
board_data.py; this module reads files against it."""
from __future__ import annotations

import re
import tomllib
from dataclasses import fields
from pathlib import Path

from .board_data import (CYCLE_KINDS, EXIT_KINDS, IMAGE_KINDS, PLACEMENT_KINDS, TABLES, UART_KINDS,  # noqa: F401
                         Board, Cycles, Emulator, Flash, Fvp, MemoryRegion, Npu, Placement, Toolchain, Uart,
                         schema)
from .errors import ConfigError, ToolchainMissing, UnknownBoard

ROOT = Path(__file__).resolve().parents[2]
BOARDS_DIR = ROOT / "boards"
TOOLCHAINS_DIR = ROOT / "toolchains"



# ---------------------------------------------------------------- value checks
def parse_size(v, what: str = "size") -> int:
    """4096, "4096", "0x1000", "512K", "2M", "1G" -> bytes."""
    if isinstance(v, bool):
        raise ConfigError(f"{what}: expected a size like 512K or 2M, got {v!r}")
    if isinstance(v, int):
        if v < 0:
            raise ConfigError(f"{what}: size must be >= 0, got {v}")
        return v
    if isinstance(v, str):
        m = re.fullmatch(r"\s*(0x[0-9a-fA-F]+|\d+)\s*([KMG]?)(i?B)?\s*", v)
        if m:
            n = int(m.group(1), 0)
            return n * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)]
    raise ConfigError(f"{what}: expected a size like 4096, 512K or 2M, got {v!r}")


def parse_addr(v, what: str = "address", bits: int = 64) -> int:
    if isinstance(v, str):
        try:
            v = int(v.replace("_", ""), 0)
        except ValueError:
            raise ConfigError(f"{what}: expected an address like 0x10000000, got {v!r}") from None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0 or v >= (1 << bits):
        raise ConfigError(f"{what}: expected an address like 0x10000000, got {v!r}")
    return v


def _str_list(v, what):
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ConfigError(f"{what}: expected a list of strings, got {v!r}")
    return tuple(v)


def _check_keys(table: dict, allowed, where: str) -> None:
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; valid keys: {', '.join(sorted(allowed))}")


def _need(table: dict, key: str, where: str, kind=str):
    if key not in table:
        raise ConfigError(f"{where}: missing required key '{key}'")
    v = table[key]
    if kind is not None and not isinstance(v, kind):
        raise ConfigError(f"{where}: '{key}' must be a {getattr(kind, '__name__', kind)}, got {v!r}")
    return v


def _choice(v, choices, what):
    if v not in choices:
        raise ConfigError(f"{what}: {v!r} is not one of {', '.join(choices)}")
    return v


# ---------------------------------------------------------------- reading against the schema
def _choices(spec):
    """A field's allowed values; 'run'/'flash': the registered runners with that capability."""
    if isinstance(spec, str):
        from . import runners
        return tuple(runners.kinds(spec))
    return tuple(spec)


def _value(f, v, w: str, regions=()):
    """One TOML value checked and converted as field f's metadata says."""
    kind, choices, k = f.metadata.get("kind", "str"), f.metadata.get("choices"), f.name
    if kind == "addr":
        v = parse_addr(v, f"{w} {k}")
    elif kind == "addr32":
        v = parse_addr(v, f"{w} {k}", bits=32)
    elif kind == "size":
        v = parse_size(v, f"{w} {k}")
    elif kind == "strs":
        v = _str_list(v, f"{w} {k}")
    elif kind == "bool":
        v = bool(v)
    elif kind == "int":
        if not isinstance(v, int) or isinstance(v, bool):
            raise ConfigError(f"{w}: '{k}' must be a int, got {v!r}")
    elif kind in ("region", "region_prefs"):
        names = [r.name for r in regions]
        many = kind == "region_prefs" and isinstance(v, list)
        vals = _str_list(v, f"{w} {k}") if many else (v,)
        if not vals:
            raise ConfigError(f"{w}: {k} = [] must name at least one memory region")
        for x in vals:
            if x not in names:
                raise ConfigError(f"{w}: {k} = {x!r} is not a memory region; regions: {', '.join(sorted(names))}")
        v = tuple(vals) if kind == "region_prefs" else v
    elif not isinstance(v, str):
        raise ConfigError(f"{w}: '{k}' must be a str, got {v!r}")
    if choices is not None:
        allowed = _choices(choices)
        for x in (v if kind == "strs" else (v,)):
            if x not in allowed:
                raise ConfigError(f"{w} {k}: {x!r} is not one of {', '.join(map(str, allowed))}")
    return v


def _table(name: str, raw, where: str, regions=()):
    """A [name] table read into its data class (board_data.TABLES) by the class's schema."""
    cls = TABLES[name]
    req, opt = schema(cls)
    w = f"{where} [{name}]"
    if not isinstance(raw, dict):
        raise ConfigError(f"{w}: expected a table")
    _check_keys(raw, set(req) | set(opt), w)
    kw = {}
    for k, f in {**req, **opt}.items():
        if k not in raw:
            if k in req:
                what = " (a memory region name)" if f.metadata.get("kind") == "region" else ""
                raise ConfigError(f"{w}: missing required key '{k}'{what}")
            continue
        kw[f.name] = _value(f, raw[k], w, regions)
    return cls(**kw)


def _regions(raw, where: str) -> tuple:
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{where}: [[memory]] must list at least one region")
    req, opt = schema(MemoryRegion)
    out = []
    for i, r in enumerate(raw):
        w = f"{where} memory[{i}]"
        if not isinstance(r, dict):
            raise ConfigError(f"{w}: expected a table")
        _check_keys(r, set(req) | set(opt), w)
        name = _need(r, "name", w)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ConfigError(f"{w}: region name {name!r} must be an identifier")
        origin = parse_addr(_need(r, "origin", w, None), f"{w} origin")
        size = parse_size(_need(r, "size", w, None), f"{w} size")
        if size == 0:
            raise ConfigError(f"{w}: region '{name}' has size 0")
        attrs = r.get("attrs", "rwx")
        if not isinstance(attrs, str) or not re.fullmatch(r"!?[rwxaiIlL]+", attrs):
            raise ConfigError(f"{w}: attrs {attrs!r} must be linker MEMORY attributes like 'rx' or 'rwx'")
        out.append(MemoryRegion(name, origin, size, attrs, bool(r.get("load", False))))
    names = [r.name for r in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError(f"{where}: memory region(s) named twice: {', '.join(dup)}")
    s = sorted(out, key=lambda r: r.origin)
    for a, b in zip(s, s[1:]):
        if b.origin < a.end:
            raise ConfigError(f"{where}: memory regions '{a.name}' (0x{a.origin:08x}-0x{a.end - 1:08x}) and "
                              f"'{b.name}' (0x{b.origin:08x}-0x{b.end - 1:08x}) overlap")
    return tuple(out)


_BOARD_REQ, _BOARD_OPT = schema(Board)
_BOARD_KEYS = set(_BOARD_REQ) | set(_BOARD_OPT)


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def _read_toml(path: Path, what: str) -> dict:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML ({e})") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read {what} ({e.strerror})") from None


def board_names(boards_dir: Path | None = None) -> list[str]:
    d = Path(boards_dir or BOARDS_DIR)
    return sorted(p.stem for p in d.glob("*.toml"))


def _raw_board(name: str, boards_dir: Path, seen: tuple = ()) -> dict:
    path = boards_dir / f"{name}.toml"
    if not path.is_file():
        raise UnknownBoard(name, board_names(boards_dir))
    raw = _read_toml(path, "board")
    _check_keys(raw, _BOARD_KEYS, str(path))
    parent = raw.get("extends")
    if parent is not None:
        if not isinstance(parent, str):
            raise ConfigError(f"{path}: extends must be a board name")
        if parent in seen + (name,):
            raise ConfigError(f"{path}: extends forms a cycle: {' -> '.join(seen + (name, parent))}")
        if not (boards_dir / f"{parent}.toml").is_file():
            raise ConfigError(f"{path}: extends unknown board '{parent}'; boards: "
                              f"{', '.join(board_names(boards_dir))}")
        base = _raw_board(parent, boards_dir, seen + (name,))
        base.pop("extends", None)
        if "memory" in raw:          # a variant that names regions replaces the whole map
            base.pop("memory", None)
        raw = _merge(base, raw)
    return raw


def load_board(name: str, boards_dir: Path | str | None = None) -> Board:
    boards_dir = Path(boards_dir or BOARDS_DIR)
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name or ""):
        raise UnknownBoard(str(name), board_names(boards_dir))
    raw = _raw_board(name, boards_dir)
    where = str(boards_dir / f"{name}.toml")
    regions = _regions(raw.get("memory"), where) if raw.get("memory") is not None else ()
    family = _need(raw, "family", where)
    if not (ROOT / "firmware" / "boards" / family).is_dir() and boards_dir == BOARDS_DIR:
        raise ConfigError(f"{where}: family '{family}' has no firmware/boards/{family}/")
    tc = raw.get("toolchain")
    tcs = (tc,) if isinstance(tc, str) else _str_list(tc, f"{where} toolchain") if tc is not None else ()
    if not tcs:
        raise ConfigError(f"{where}: missing required key 'toolchain'")
    kw = {"name": name, "family": family, "toolchains": tcs, "regions": regions, "path": boards_dir / f"{name}.toml"}
    for k, f in {**_BOARD_REQ, **_BOARD_OPT}.items():
        if f.name in kw:
            continue
        if k not in raw:
            if k in _BOARD_REQ:
                raise ConfigError(f"{where}: missing required key '{k}'")
            continue
        kind = f.metadata.get("kind")
        if kind == "table":
            kw[f.name] = _table(k, raw[k], where, regions)
        elif kind == "defines":
            d = raw[k]
            if not isinstance(d, dict) or not all(isinstance(v, (str, int)) and not isinstance(v, bool)
                                                  for v in d.values()):
                raise ConfigError(f"{where}: defines must be a table of strings or integers")
            kw[f.name] = dict(d)
        elif k == "pointer_bytes" and raw[k] not in (4, 8):
            raise ConfigError(f"{where}: pointer_bytes must be 4 or 8, got {raw[k]}")
        else:
            kw[f.name] = _value(f, raw[k], where, regions)
    uart = kw["uart"]
    if uart.kind in ("cmsdk", "pl011") and uart.base is None:
        raise ConfigError(f"{where} [uart]: kind '{uart.kind}' needs base = <address>")
    if "uf2" in kw.get("images", ()) and kw.get("uf2_family") is None:
        raise ConfigError(f"{where}: images has 'uf2' but no uf2_family = <UF2 family id>")
    if regions and kw.get("placement") is None:
        raise ConfigError(f"{where}: a board with [[memory]] regions needs a [placement] table")
    return Board(**kw)


def load_boards(boards_dir: Path | str | None = None) -> list[Board]:
    return [load_board(n, boards_dir) for n in board_names(boards_dir)]


def toolchain_names(toolchains_dir: Path | None = None) -> list[str]:
    return sorted(p.stem for p in Path(toolchains_dir or TOOLCHAINS_DIR).glob("*.toml"))


def load_toolchain(name: str, toolchains_dir: Path | str | None = None) -> Toolchain:
    d = Path(toolchains_dir or TOOLCHAINS_DIR)
    path = d / f"{name}.toml"
    if not path.is_file():
        raise ConfigError(f"unknown toolchain '{name}'; toolchains: {', '.join(toolchain_names(d))}")
    raw = _read_toml(path, "toolchain")
    where = str(path)
    req, opt = schema(Toolchain)
    _check_keys(raw, set(req) | set(opt), where)
    kw = {"name": name}
    for k, f in {**req, **opt}.items():
        if k not in raw:
            if k in req:
                raise ConfigError(f"{where}: missing required key '{k}'")
            continue
        if f.metadata.get("kind") == "cpu_flags":
            if not isinstance(raw[k], dict):
                raise ConfigError(f"{where}: cpu_flags must be a table cpu -> [flags]")
            kw[f.name] = {c: _str_list(v, f"{where} cpu_flags.{c}") for c, v in raw[k].items()}
        else:
            kw[f.name] = _value(f, raw[k], where)
    return Toolchain(**kw)


def board_toolchain(board: Board, require: bool = True) -> Toolchain:
    """The first of the board's toolchains that is installed; with require, ToolchainMissing naming the
    package/env var of each when none is."""
    tcs = [load_toolchain(t) for t in board.toolchains]
    for tc in tcs:
        if tc.locate() is not None:
            return tc
    if not require:
        return tcs[-1]
    if len(tcs) == 1:
        tcs[0].require()
    last = tcs[-1]
    alts = [t for t in tcs[:-1] if t.env]
    raise ToolchainMissing(last.name, last.compiler(), last.package or None,
                           alts[0].env if alts else (last.env or None),
                           detail=f"board '{board.name}' can use: {', '.join(t.name for t in tcs)}")


def arch_flags(board: Board, tc: Toolchain) -> list[str]:
    """CPU flags: the toolchain's flags for the board's cpu, then the board's own."""
    return list(tc.cpu_flags.get(board.cpu, ())) + list(board.arch_flags)


def bsp_defines(board: Board) -> dict:
    """The -D defines the board support C reads (firmware/boards/bsp_config.h)."""
    d = {"BSP_BOARD_NAME": f'"{board.name}"', "BSP_CYCLES_HZ": f"{board.cycles.hz}u",
         f"BSP_UART_{board.uart.kind.upper()}": 1, f"BSP_EXIT_{board.exit.upper()}": 1,
         "BSP_FPU": int(board.fpu), "BSP_UART_BAUD": f"{board.uart.baud}u"}
    if board.uart.base is not None:
        d["BSP_UART_BASE"] = f"0x{board.uart.base:08x}u"
    if board.uart.clock_hz:
        d["BSP_UART_CLOCK_HZ"] = f"{board.uart.clock_hz}u"
    for k in CYCLE_KINDS[board.cycles.kind]:
        d[f"BSP_CYCLES_{k}"] = 1
    d.update(board.defines)
    return d


def option_values(board: Board) -> dict:
    """Public view for reports and the CLI."""
    return {f.name: getattr(board, f.name) for f in fields(board)}
