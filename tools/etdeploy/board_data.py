"""The data classes boards/*.toml and toolchains/*.toml load into, and their schema.

Each field's metadata is its schema entry: the TOML key (when it differs from the field name), the
value kind (str, int, bool, size, addr, strs, region, table, runner) and its choices. config.py
reads these to check files: the keys, what is required (a field with no default) and the value
checks are written here once."""
from __future__ import annotations

import os
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path

from .errors import ToolchainMissing

PLACEMENT_KINDS = ("text", "rodata", "data", "bss", "stack", "model", "arena", "pool")
UART_KINDS = ("cmsdk", "pl011", "semihost", "stdout")
# cycle counter kind -> the BSP_CYCLES_* defines it turns on (firmware/boards/bsp_config.h)
CYCLE_KINDS = {"dwt": ("DWT",), "systick": ("SYSTICK",), "dwt-or-systick": ("DWT", "SYSTICK"),
               "ccount": ("CCOUNT",), "clock_gettime": ("CLOCK_GETTIME",)}
EXIT_KINDS = ("semihost", "simcall", "process", "halt")
IMAGE_KINDS = ("bin", "hex", "uf2")


def key(default=MISSING, kind: str = "str", choices=None, toml: str | None = None, factory=None):
    """A schema field: kind of value, allowed values (a tuple, or 'run'/'flash' for the registered
    runners with that capability), TOML key name ('' = not read from TOML)."""
    md = {"kind": kind, "choices": choices, "toml": toml}
    if factory is not None:
        return field(default_factory=factory, metadata=md)
    return field(default=default, metadata=md)


def toml_name(f) -> str:
    t = f.metadata.get("toml")
    return f.name if t is None else t


def schema(cls) -> tuple[dict, dict]:
    """({toml key: field} required, {toml key: field} optional) of a data class."""
    req, opt = {}, {}
    for f in fields(cls):
        name = toml_name(f)
        if not name:
            continue
        (req if f.default is MISSING and f.default_factory is MISSING else opt)[name] = f
    return req, opt


@dataclass(frozen=True)
class MemoryRegion:
    name: str = key(kind="ident")
    origin: int = key(kind="addr")
    size: int = key(kind="size")
    attrs: str = key("rwx", kind="attrs")   # r/w/x as in a linker MEMORY line
    load: bool = key(False, kind="bool")    # holds load images (flash or RAM the loader fills): .data LMA goes here

    @property
    def end(self) -> int:
        return self.origin + self.size

    def contains(self, addr: int, size: int = 0) -> bool:
        return self.origin <= addr and addr + size <= self.end


@dataclass(frozen=True)
class Placement:
    text: str = key(kind="region")
    rodata: str = key(kind="region")
    data: str = key(kind="region")
    bss: str = key(kind="region")
    stack: str = key(kind="region")
    # model bytes, planned arenas, method pools: regions in order of preference (etdeploy.placing)
    model: tuple = key(kind="region_prefs")
    arena: tuple = key(kind="region_prefs")
    pool: tuple = key(kind="region_prefs")
    stack_size: int = key(16 * 1024, kind="size")
    data_load: str | None = key(None, kind="region")   # where .data's initial values live (default: the text region)

    def get(self, kind: str, default=None):
        return getattr(self, kind, default)

    def prefs(self, kind: str) -> tuple:
        """The regions a blob kind (model, arena, pool) may go to, first choice first."""
        v = getattr(self, kind)
        return (v,) if isinstance(v, str) else tuple(v)

    def first(self, kind: str) -> str:
        return self.prefs(kind)[0]

    def regions(self) -> dict:
        return {k: getattr(self, k) for k in PLACEMENT_KINDS}


@dataclass(frozen=True)
class Uart:
    kind: str = key(choices=UART_KINDS)
    base: int | None = key(None, kind="addr")
    clock_hz: int = key(0, kind="int")
    baud: int = key(115200, kind="int")


@dataclass(frozen=True)
class Cycles:
    kind: str = key(choices=tuple(CYCLE_KINDS))
    hz: int = key(kind="int")


@dataclass(frozen=True)
class Emulator:
    kind: str = key(kind="runner", choices="run")
    binary: str = key("")
    args: tuple = key((), kind="strs")
    package: str = key("")
    machine: str = key("")
    cpu: str = key("")


@dataclass(frozen=True)
class Fvp:
    binary: str = key()
    board_prefix: str = key()
    macs_param: str = key("")
    params: tuple = key((), kind="strs")


@dataclass(frozen=True)
class Xnnpack:
    """The board links the system XNNPACK for XnnpackBackend programs (etdeploy.xnnpack_delegate)."""
    libs: tuple = key(kind="strs")      # e.g. XNNPACK pthreadpool cpuinfo pthread (":libX.so.0": that file)
    packages: tuple = key((), kind="strs")   # Debian packages that provide them (named when missing)
    default_flow: bool = key(False, kind="bool")   # `etdeploy export` without --flow uses xnnpack (xnnpack_q8)
    # Cross boards: the libraries are Debian's shared objects for the board's architecture, unpacked (not
    # installed) by tools/bootstrap.sh into `sysroot` (relative to the project); the image links them
    # dynamically and runs them with `glibc_root`'s loader (qemu-user -L, pushed beside it over adb).
    sysroot: str = key("")
    lib_dir: str = key("")              # inside sysroot
    include_dir: str = key("")          # inside sysroot (the headers, copied from the host's -dev packages)
    glibc_root: str = key("")           # e.g. /usr/aarch64-linux-gnu (libc6-arm64-cross)
    toolchain: str = key("")            # the toolchain that can link them (glibc), when the board has others


@dataclass(frozen=True)
class Npu:
    kind: str = key()
    macs: int = key(kind="int")
    system_config: str = key()
    memory_mode: str = key()
    target: str = key("")            # vela/executorch target string, e.g. ethos-u55-128
    # Where the NPU's buffers go (etdeploy.npu_plan): the regions it reaches as its SRAM (Vela's Axi0
    # "Sram"), DRAM and flash (Axi1), and the fast scratch size for Dedicated_Sram modes (default:
    # the mode's arena_cache_size, e.g. 384K for Dedicated_Sram_384KB).
    sram_region: str = key("", kind="region")
    dram_region: str = key("", kind="region")
    flash_region: str = key("", kind="region")
    fast_scratch_size: int = key(0, kind="size")
    base: int | None = key(None, kind="addr")     # the NPU's register block and interrupt (the backend's driver init)
    irq: int | None = key(None, kind="int")


@dataclass(frozen=True)
class Flash:
    method: str = key(kind="runner", choices="flash")   # a runner that can flash (etdeploy.runners)
    target: str = key("")
    interface: str = key("")
    target_cfg: str = key("")
    drive_label: str = key("")
    images_txt: str = key("")
    load_address: int = key(0, kind="addr")


@dataclass(frozen=True, kw_only=True)
class Toolchain:
    name: str = key(toml="")
    description: str = key("")
    tool: str = key()                   # site_scons tool that sets the environment up
    prefix: str = key("")               # e.g. arm-none-eabi-
    cc: str = key("gcc")
    package: str = key("")              # Debian package that provides it
    env: str = key("")                  # env var naming an install dir (its bin_subdir holds the compiler)
    bin_subdir: str = key("bin")
    cpu_flags: dict = key(kind="cpu_flags", factory=dict)
    cflags: tuple = key((), kind="strs")
    ldflags: tuple = key((), kind="strs")
    libs: tuple = key((), kind="strs")
    linker_script: bool = key(True, kind="bool")  # bare metal: link with the board's rendered script

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


@dataclass(frozen=True, kw_only=True)
class Board:
    name: str = key(toml="")
    description: str = key("")
    cpu: str = key()
    family: str = key()                 # firmware/boards/<family>/
    toolchains: tuple = key(kind="toolchains", toml="toolchain")   # preference order; the first installed is used
    pointer_bytes: int = key(kind="int", choices=(4, 8))
    regions: tuple = key((), kind="regions", toml="memory")        # MemoryRegion, in file order
    placement: Placement | None = key(None, kind="table")
    uart: Uart = key(kind="table")
    cycles: Cycles = key(kind="table")
    exit: str = key(choices=EXIT_KINDS)
    arch_flags: tuple = key((), kind="strs")
    fpu: bool = key(False, kind="bool")
    images: tuple = key((), kind="strs", choices=IMAGE_KINDS)
    defines: dict = key(kind="defines", factory=dict)
    emulator: Emulator | None = key(None, kind="table")
    fvp: Fvp | None = key(None, kind="table")
    npu: Npu | None = key(None, kind="table")
    xnnpack: Xnnpack | None = key(None, kind="table")
    flash: Flash | None = key(None, kind="table")
    uf2_family: int | None = key(None, kind="addr32")
    extends: str | None = key(None)
    path: Path | None = key(None, toml="")

    @property
    def toolchain(self) -> str:
        return self.toolchains[0]

    def region(self, name: str) -> MemoryRegion:
        from .errors import ConfigError
        for r in self.regions:
            if r.name == name:
                return r
        raise ConfigError(f"board '{self.name}' has no memory region '{name}'; regions: "
                          f"{', '.join(r.name for r in self.regions) or '(none)'}")


TABLES = {"placement": Placement, "uart": Uart, "cycles": Cycles, "emulator": Emulator, "fvp": Fvp, "npu": Npu,
          "flash": Flash, "xnnpack": Xnnpack}
