"""Boards and toolchains as data: boards/<board>.toml and toolchains/<name>.toml, checked against a
schema and loaded into frozen dataclasses shared by SCons and the CLI.

Unknown keys are rejected with the valid ones listed; sizes ("512K", "2M", 4096) and addresses are
checked; memory regions may not overlap; `extends = "<board>"` starts from another board's data
(tables merge key by key, lists and scalars replace). Code never compares a board's name: all that
differs between boards is here."""
from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path

from .errors import ConfigError, ToolchainMissing, UnknownBoard

ROOT = Path(__file__).resolve().parents[2]
BOARDS_DIR = ROOT / "boards"
TOOLCHAINS_DIR = ROOT / "toolchains"

PLACEMENT_KINDS = ("text", "rodata", "data", "bss", "stack", "model", "arena", "pool")
UART_KINDS = ("cmsdk", "pl011", "semihost", "stdout")
CYCLE_KINDS = ("dwt", "systick", "dwt-or-systick", "ccount", "clock_gettime")
EXIT_KINDS = ("semihost", "simcall", "process", "halt")
IMAGE_KINDS = ("bin", "hex", "uf2")
EMULATOR_KINDS = ("native", "qemu-user", "qemu-system", "qemu-semihost", "fvp", "adb")


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


# ---------------------------------------------------------------- data classes
@dataclass(frozen=True)
class MemoryRegion:
    name: str
    origin: int
    size: int
    attrs: str = "rwx"          # r/w/x as in a linker MEMORY line
    load: bool = False          # holds load images (flash or RAM the loader fills): .data LMA goes here

    @property
    def end(self) -> int:
        return self.origin + self.size

    def contains(self, addr: int, size: int = 0) -> bool:
        return self.origin <= addr and addr + size <= self.end


@dataclass(frozen=True)
class Placement:
    text: str
    rodata: str
    data: str
    bss: str
    stack: str
    model: str
    arena: str
    pool: str
    stack_size: int = 16 * 1024
    data_load: str | None = None   # where .data's initial values live (default: the text region)

    def get(self, kind: str, default=None):
        return getattr(self, kind, default)

    def regions(self) -> dict:
        return {k: getattr(self, k) for k in PLACEMENT_KINDS}


@dataclass(frozen=True)
class Uart:
    kind: str
    base: int | None = None
    clock_hz: int = 0
    baud: int = 115200


@dataclass(frozen=True)
class Cycles:
    kind: str
    hz: int


@dataclass(frozen=True)
class Emulator:
    kind: str
    binary: str = ""
    args: tuple = ()
    package: str = ""
    machine: str = ""
    cpu: str = ""


@dataclass(frozen=True)
class Fvp:
    binary: str
    board_prefix: str
    macs_param: str = ""
    params: tuple = ()


@dataclass(frozen=True)
class Npu:
    kind: str
    macs: int
    system_config: str
    memory_mode: str
    target: str = ""            # vela/executorch target string, e.g. ethos-u55-128
    # Where the NPU's buffers go (etdeploy.npu_plan): the regions it reaches as its SRAM (Vela's Axi0
    # "Sram"), DRAM and flash (Axi1), and the fast scratch size for Dedicated_Sram modes (default:
    # the mode's arena_cache_size, e.g. 384K for Dedicated_Sram_384KB).
    sram_region: str = ""
    dram_region: str = ""
    flash_region: str = ""
    fast_scratch_size: int = 0
    base: int | None = None     # the NPU's register block and interrupt (the backend's driver init)
    irq: int | None = None


@dataclass(frozen=True)
class Flash:
    method: str
    target: str = ""
    interface: str = ""
    target_cfg: str = ""
    drive_label: str = ""
    images_txt: str = ""
    load_address: int = 0


@dataclass(frozen=True)
class Toolchain:
    name: str
    description: str
    tool: str                   # site_scons tool that sets the environment up
    prefix: str                 # e.g. arm-none-eabi-
    cc: str = "gcc"
    package: str = ""           # Debian package that provides it
    env: str = ""               # env var naming an install dir (its bin_subdir holds the compiler)
    bin_subdir: str = "bin"
    cpu_flags: dict = field(default_factory=dict)
    cflags: tuple = ()
    ldflags: tuple = ()
    libs: tuple = ()
    linker_script: bool = True  # bare metal: link with the board's rendered script

    def compiler(self) -> str:
        return self.prefix + self.cc

    def search_dirs(self) -> list[str]:
        base = os.environ.get(self.env) if self.env else None
        return [str(Path(base) / self.bin_subdir)] if base else []

    def locate(self) -> Path | None:
        """The compiler's path, or None when it is not installed."""
        from .proc import which
        hit = which(self.compiler(), self.search_dirs())
        return Path(hit) if hit else None

    def require(self) -> Path:
        p = self.locate()
        if p is None:
            detail = f"${self.env} is set but holds no {self.compiler()}" if self.env and os.environ.get(self.env) \
                else ""
            raise ToolchainMissing(self.name, self.compiler(), self.package or None, self.env or None, detail)
        return p


@dataclass(frozen=True)
class Board:
    name: str
    description: str
    cpu: str
    family: str                 # firmware/boards/<family>/
    toolchains: tuple           # preference order; the first one installed is used
    pointer_bytes: int
    regions: tuple              # MemoryRegion, in file order
    placement: Placement | None
    uart: Uart
    cycles: Cycles
    exit: str
    arch_flags: tuple = ()
    fpu: bool = False
    images: tuple = ()
    defines: dict = field(default_factory=dict)
    emulator: Emulator | None = None
    fvp: Fvp | None = None
    npu: Npu | None = None
    flash: Flash | None = None
    uf2_family: int | None = None
    extends: str | None = None
    path: Path | None = None

    @property
    def memory(self) -> tuple:
        return self.regions

    @property
    def toolchain(self) -> str:
        return self.toolchains[0]

    def region(self, name: str) -> MemoryRegion:
        for r in self.regions:
            if r.name == name:
                return r
        raise ConfigError(f"board '{self.name}' has no memory region '{name}'; regions: "
                          f"{', '.join(r.name for r in self.regions) or '(none)'}")


# ---------------------------------------------------------------- schema
_BOARD_KEYS = {"description", "cpu", "family", "toolchain", "pointer_bytes", "memory", "placement", "uart",
               "cycles", "exit", "arch_flags", "fpu", "images", "defines", "emulator", "fvp", "npu", "flash",
               "extends", "uf2_family"}
_REGION_KEYS = {"name", "origin", "size", "attrs", "load"}
_PLACEMENT_KEYS = set(PLACEMENT_KINDS) | {"stack_size", "data_load"}
_TABLES = {
    "uart": (Uart, {"kind": str}, {"base": "addr", "clock_hz": int, "baud": int}),
    "cycles": (Cycles, {"kind": str, "hz": int}, {}),
    "emulator": (Emulator, {"kind": str}, {"binary": str, "args": list, "package": str, "machine": str, "cpu": str}),
    "fvp": (Fvp, {"binary": str, "board_prefix": str}, {"macs_param": str, "params": list}),
    "npu": (Npu, {"kind": str, "macs": int, "system_config": str, "memory_mode": str},
            {"target": str, "sram_region": str, "dram_region": str, "flash_region": str, "fast_scratch_size": "size",
             "base": "addr", "irq": int}),
    "flash": (Flash, {"method": str}, {"target": str, "interface": str, "target_cfg": str, "drive_label": str,
                                       "images_txt": str, "load_address": "addr"}),
}
_TOOLCHAIN_KEYS = {"description", "tool", "prefix", "cc", "package", "env", "bin_subdir", "cpu_flags", "cflags",
                   "ldflags", "libs", "linker_script"}


def _table(name: str, raw, where: str):
    cls, req, opt = _TABLES[name]
    w = f"{where} [{name}]"
    if not isinstance(raw, dict):
        raise ConfigError(f"{w}: expected a table")
    _check_keys(raw, set(req) | set(opt), w)
    kw = {}
    for k, t in {**req, **opt}.items():
        if k not in raw:
            if k in req:
                raise ConfigError(f"{w}: missing required key '{k}'")
            continue
        v = raw[k]
        if t == "addr":
            v = parse_addr(v, f"{w} {k}")
        elif t == "size":
            v = parse_size(v, f"{w} {k}")
        elif t is list:
            v = _str_list(v, f"{w} {k}")
        elif not isinstance(v, t) or isinstance(v, bool) and t is int:
            raise ConfigError(f"{w}: '{k}' must be a {t.__name__}, got {v!r}")
        kw[k] = v
    return cls(**kw)


def _regions(raw, where: str) -> tuple:
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{where}: [[memory]] must list at least one region")
    out = []
    for i, r in enumerate(raw):
        w = f"{where} memory[{i}]"
        if not isinstance(r, dict):
            raise ConfigError(f"{w}: expected a table")
        _check_keys(r, _REGION_KEYS, w)
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


def _placement(raw, regions, where: str) -> Placement:
    w = f"{where} [placement]"
    if not isinstance(raw, dict):
        raise ConfigError(f"{w}: expected a table")
    _check_keys(raw, _PLACEMENT_KEYS, w)
    names = {r.name for r in regions}
    kw = {}
    for k in PLACEMENT_KINDS + ("data_load",):
        if k not in raw:
            if k == "data_load":
                continue
            raise ConfigError(f"{w}: missing required key '{k}' (a memory region name)")
        if raw[k] not in names:
            raise ConfigError(f"{w}: {k} = {raw[k]!r} is not a memory region; regions: {', '.join(sorted(names))}")
        kw[k] = raw[k]
    if "stack_size" in raw:
        kw["stack_size"] = parse_size(raw["stack_size"], f"{w} stack_size")
    return Placement(**kw)


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
    placement = _placement(raw["placement"], regions, where) if "placement" in raw else None
    family = _need(raw, "family", where)
    if not (ROOT / "firmware" / "boards" / family).is_dir() and boards_dir == BOARDS_DIR:
        raise ConfigError(f"{where}: family '{family}' has no firmware/boards/{family}/")
    tc = raw.get("toolchain")
    tcs = (tc,) if isinstance(tc, str) else _str_list(tc, f"{where} toolchain") if tc is not None else ()
    if not tcs:
        raise ConfigError(f"{where}: missing required key 'toolchain'")
    pb = _need(raw, "pointer_bytes", where, int)
    if pb not in (4, 8):
        raise ConfigError(f"{where}: pointer_bytes must be 4 or 8, got {pb}")
    uart = _table("uart", _need(raw, "uart", where, dict), where)
    _choice(uart.kind, UART_KINDS, f"{where} [uart] kind")
    if uart.kind in ("cmsdk", "pl011") and uart.base is None:
        raise ConfigError(f"{where} [uart]: kind '{uart.kind}' needs base = <address>")
    cycles = _table("cycles", _need(raw, "cycles", where, dict), where)
    _choice(cycles.kind, CYCLE_KINDS, f"{where} [cycles] kind")
    images = _str_list(raw.get("images", []), f"{where} images")
    for im in images:
        _choice(im, IMAGE_KINDS, f"{where} images")
    defines = raw.get("defines", {})
    if not isinstance(defines, dict) or not all(isinstance(v, (str, int)) and not isinstance(v, bool)
                                                for v in defines.values()):
        raise ConfigError(f"{where}: defines must be a table of strings or integers")
    emu = _table("emulator", raw["emulator"], where) if "emulator" in raw else None
    if emu is not None:
        _choice(emu.kind, EMULATOR_KINDS, f"{where} [emulator] kind")
    tables = {k: _table(k, raw[k], where) for k in ("fvp", "npu", "flash") if k in raw}
    npu = tables.get("npu")
    for k in ("sram_region", "dram_region", "flash_region"):
        if npu is not None and getattr(npu, k) and getattr(npu, k) not in {r.name for r in regions}:
            raise ConfigError(f"{where} [npu] {k}: '{getattr(npu, k)}' is not a memory region; regions: "
                              f"{', '.join(r.name for r in regions)}")
    uf2 = raw.get("uf2_family")
    if uf2 is not None:
        uf2 = parse_addr(uf2, f"{where} uf2_family", bits=32)
    if "uf2" in images and uf2 is None:
        raise ConfigError(f"{where}: images has 'uf2' but no uf2_family = <UF2 family id>")
    if regions and placement is None:
        raise ConfigError(f"{where}: a board with [[memory]] regions needs a [placement] table")
    return Board(
        name=name, description=raw.get("description", ""), cpu=_need(raw, "cpu", where), family=family,
        toolchains=tcs, pointer_bytes=pb, regions=regions, placement=placement, uart=uart, cycles=cycles,
        exit=_choice(_need(raw, "exit", where), EXIT_KINDS, f"{where} exit"),
        arch_flags=_str_list(raw.get("arch_flags", []), f"{where} arch_flags"), fpu=bool(raw.get("fpu", False)),
        images=images, defines=dict(defines), emulator=emu, uf2_family=uf2, extends=raw.get("extends"),
        path=boards_dir / f"{name}.toml", **tables)


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
    _check_keys(raw, _TOOLCHAIN_KEYS, where)
    cpu_flags = raw.get("cpu_flags", {})
    if not isinstance(cpu_flags, dict):
        raise ConfigError(f"{where}: cpu_flags must be a table cpu -> [flags]")
    kw = {k: raw[k] for k in ("cc", "package", "env", "bin_subdir") if k in raw}
    for k, v in kw.items():
        if not isinstance(v, str):
            raise ConfigError(f"{where}: '{k}' must be a string")
    return Toolchain(
        name=name, description=raw.get("description", ""), tool=_need(raw, "tool", where),
        prefix=raw.get("prefix", ""), cpu_flags={c: _str_list(f, f"{where} cpu_flags.{c}") for c, f in cpu_flags.items()},
        cflags=_str_list(raw.get("cflags", []), f"{where} cflags"),
        ldflags=_str_list(raw.get("ldflags", []), f"{where} ldflags"),
        libs=_str_list(raw.get("libs", []), f"{where} libs"), linker_script=bool(raw.get("linker_script", True)),
        **kw)


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
    kinds = {"dwt": ["DWT"], "systick": ["SYSTICK"], "dwt-or-systick": ["DWT", "SYSTICK"],
             "ccount": ["CCOUNT"], "clock_gettime": ["CLOCK_GETTIME"]}[board.cycles.kind]
    for k in kinds:
        d[f"BSP_CYCLES_{k}"] = 1
    d.update(board.defines)
    return d


def option_values(board: Board) -> dict:
    """Public view for reports and the CLI."""
    return {f.name: getattr(board, f.name) for f in fields(board)}
