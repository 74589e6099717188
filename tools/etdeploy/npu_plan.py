"""Ethos-U buffers: where the NPU's weights, scratch and fast scratch go, by memory mode, from the
board's [npu] data; fit checks; and the C that places them (bake calls EthosUDelegate, its delegate hook).

Vela's memory modes (its vela.ini, read from the installed package when present):
  Sram_Only       weights, scratch in SRAM (Axi0); no fast scratch
  Shared_Sram     scratch in SRAM (Axi0), weights in the Axi1 memory (flash or DRAM: system config)
  Dedicated_Sram* scratch and weights in the Axi1 memory (DRAM), fast scratch (the arena cache,
                  arena_cache_size, e.g. 384K for Dedicated_Sram_384KB) in SRAM
Memory kinds map onto board regions by [npu] sram_region / dram_region / flash_region.

Placed symbols, read back from the ELF by the memory report:
  et_npu_scratch_<p>_<m>_<d>   (NOLOAD, section .et_npu.<region>.*)
  et_npu_weights_<p>_<m>_<d>   in place inside et_model_blob_<p> when the model region is the one the
                               mode asks for (zero copy), else a copy (section .et_npu_data.<region>.*)
  et_npu_fast_scratch          one per image (the driver's fast memory), Dedicated_Sram modes only
Build modes (option ethosu_driver=): <path to Arm's ethos-u-core-driver> compiles the backend in
firmware/backends/ethosu against it; `plan` places and reports the buffers with a stub backend that
refuses to run (the image is for the memory report only); empty: bake refuses the program.
"""
from __future__ import annotations

import configparser
import importlib.util
import re
from dataclasses import dataclass, field
from pathlib import Path

from .delegates import BackendPart, DelegateBackend
from .errors import BakeError, PlanDoesNotFit

ROOT = Path(__file__).resolve().parents[2]
BACKEND_DIR = ROOT / "firmware" / "backends" / "ethosu"
PLAN_ONLY = "plan"
NPU_ALIGN = 16
# Vela facts used when its vela.ini cannot be read: memory mode -> areas, system config -> Axi1 kind.
_MODES = {"Sram_Only": ("Axi0", "Axi0", "Axi0", 0), "Shared_Sram": ("Axi1", "Axi0", "Axi0", 0),
          "Dedicated_Sram": ("Axi1", "Axi1", "Axi0", 0)}
_KIND_OF_PORT = {"Sram": "sram", "Dram": "dram", "OffChipFlash": "flash", "OnChipFlash": "flash"}


@dataclass(frozen=True)
class ModeAreas:
    weights: str          # memory kind: sram | dram | flash
    scratch: str
    fast_scratch: str | None
    arena_cache_size: int


@dataclass
class Buffer:
    symbol: str
    kind: str             # weights | scratch | fast_scratch
    region: str
    size: int
    in_place: bool = False
    blob: int = 0         # weights: program index and offset of the bytes in its blob
    offset: int = 0

    def as_dict(self) -> dict:
        return {"symbol": self.symbol, "kind": self.kind, "region": self.region, "bytes": self.size,
                "in_place": self.in_place}


@dataclass
class DelegatePlan:
    tag: str              # <p>_<m>_<d>
    program: int
    payload_offset: int
    vela: object
    weights: Buffer
    scratch: Buffer
    flags: dict


@dataclass
class NpuPlan:
    memory_mode: str
    areas: ModeAreas
    delegates: list[DelegatePlan] = field(default_factory=list)
    fast_scratch: Buffer | None = None
    mode: str = PLAN_ONLY          # "plan" or "driver"

    def buffers(self) -> list[Buffer]:
        out = [b for d in self.delegates for b in (d.weights, d.scratch)]
        return out + ([self.fast_scratch] if self.fast_scratch else [])


# ---------------------------------------------------------------- Vela facts

def _vela_ini() -> configparser.ConfigParser | None:
    spec = importlib.util.find_spec("ethosu")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "config_files" / "Arm" / "vela.ini"
    if not path.is_file():
        return None
    cp = configparser.ConfigParser()
    cp.read(path)
    return cp


def _ini_section(cp, name: str) -> dict:
    if cp is None or not cp.has_section(name):
        return {}
    sec = dict(cp.items(name))
    parent = sec.pop("inherit", None)
    return {**_ini_section(cp, parent), **sec} if parent else sec


def mode_areas(memory_mode: str, system_config: str, cp=None) -> ModeAreas:
    cp = _vela_ini() if cp is None else cp
    mode = _ini_section(cp, f"Memory_Mode.{memory_mode}")
    if mode:
        const, arena, cache = (mode.get(k, "Axi0").capitalize() for k in
                               ("const_mem_area", "arena_mem_area", "cache_mem_area"))
        cache_size = int(mode.get("arena_cache_size", 0))
    else:
        base = "Dedicated_Sram" if memory_mode.startswith("Dedicated_Sram") else memory_mode
        if base not in _MODES:
            raise BakeError(f"unknown Ethos-U memory mode '{memory_mode}' (Sram_Only, Shared_Sram, Dedicated_Sram*)")
        const, arena, cache, cache_size = _MODES[base]
        m = re.search(r"_(\d+)KB$", memory_mode)
        cache_size = int(m.group(1)) * 1024 if m else cache_size
    sysc = _ini_section(cp, f"System_Config.{system_config}")
    ports = {"Axi0": sysc.get("axi0_port", "Sram"), "Axi1": sysc.get("axi1_port", "Dram")}
    kind = lambda area: _KIND_OF_PORT.get(ports.get(area, "Sram"), "dram")   # noqa: E731
    fast = kind(cache) if cache != arena else None
    return ModeAreas(weights=kind(const), scratch=kind(arena), fast_scratch=fast, arena_cache_size=cache_size)


def compile_flags(specs: dict) -> dict:
    text = specs.get("compile_flags", b"")
    text = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    out = {}
    for tok in text.split():
        if tok.startswith("--") and "=" in tok:
            k, v = tok[2:].split("=", 1)
            out[k] = v
    return out


# ---------------------------------------------------------------- the plan

def _region(board, kind: str) -> str:
    npu = board.npu
    name = {"sram": npu.sram_region, "dram": npu.dram_region, "flash": npu.flash_region or npu.dram_region}[kind]
    if not name:
        raise BakeError(f"board '{board.name}' [npu] names no {kind}_region: add one (a memory region the NPU "
                        f"reaches) so that etdeploy can place the Ethos-U buffers")
    return name


def plan(progs, board, opts: dict, model_region: str | None) -> NpuPlan:
    from . import vela_payload
    npu = getattr(board, "npu", None)
    if npu is None:
        raise BakeError(f"board '{board.name}' has no Ethos-U NPU ([npu] in its data): export the model for the "
                        f"CPU (etdeploy export --board {board.name} --flow cortex_m)")
    areas = mode_areas(npu.memory_mode, npu.system_config)
    driver = str(opts.get("ethosu_driver") or "")
    res = NpuPlan(npu.memory_mode, areas, mode=PLAN_ONLY if driver == PLAN_ONLY else "driver")
    for i, p in enumerate(progs):
        for j, m in enumerate(p.methods):
            for k, d in enumerate(m.delegates):
                if d.backend != "EthosUBackend":
                    continue
                flags = compile_flags(d.compile_specs)
                want = {"accelerator-config": npu.target or f"{npu.kind}-{npu.macs}",
                        "memory-mode": npu.memory_mode, "system-config": npu.system_config}
                bad = [f"{f} {flags[f]} (board: {w})" for f, w in want.items() if f in flags and flags[f] != w]
                if bad:
                    raise BakeError(f"{p.path.name}: method '{m.name}' was compiled by Vela for {', '.join(bad)}. "
                                    f"Re-export it for this board: etdeploy export <file.py>:<name> --board "
                                    f"{board.name} --quantize")
                v = vela_payload.parse(p.data[d.offset:d.offset + d.size])
                tag = f"{i}_{j}_{k}"
                w_start = d.offset + v.blocks.get("weight_data", (0, 0))[0]
                w_region = _region(board, areas.weights)
                in_place = (w_region == model_region and (w_start % NPU_ALIGN) == 0
                            and "weight_data" not in v.external)
                weights = Buffer(f"et_npu_weights_{tag}", "weights", w_region, v.weight_bytes, in_place, i, w_start)
                scratch = Buffer(f"et_npu_scratch_{tag}", "scratch", _region(board, areas.scratch),
                                 max(v.scratch_bytes, NPU_ALIGN))
                res.delegates.append(DelegatePlan(tag, i, d.offset, v, weights, scratch, flags))
    if res.delegates and areas.fast_scratch:
        size = npu.fast_scratch_size or areas.arena_cache_size
        if not size:
            raise BakeError(f"memory mode {npu.memory_mode} needs a fast scratch in SRAM of the mode's arena cache "
                            f"size: set [npu] fast_scratch_size in boards/{board.name}.toml")
        res.fast_scratch = Buffer("et_npu_fast_scratch", "fast_scratch", _region(board, areas.fast_scratch), size)
    return res


def check_fit(npu: NpuPlan, board, fit: dict) -> dict:
    """fit: the bake's {region: {size, need}}; adds the NPU buffers and raises PlanDoesNotFit."""
    out = {r: dict(v) for r, v in fit.items()}
    items: dict[str, list] = {}
    for b in npu.buffers():
        if b.in_place:
            continue
        r = board.region(b.region)
        if b.kind == "weights" and not r.load:
            raise BakeError(f"{b.symbol}: memory mode {npu.memory_mode} wants the Ethos-U weights in region "
                            f"'{b.region}', which the image does not load; place the model there (placement "
                            f"model = \"{b.region}\") or name a loaded region in [npu]")
        e = out.setdefault(b.region, {"size": r.size, "need": 0})
        e["need"] += (b.size + NPU_ALIGN - 1) // NPU_ALIGN * NPU_ALIGN
        items.setdefault(b.region, []).append((b.symbol, b.size))
    for region, e in out.items():
        if e["size"] is not None and e["need"] > e["size"] and region in items:
            detail = ", ".join(f"{s} {n} B" for s, n in sorted(items[region], key=lambda x: -x[1])[:4])
            raise PlanDoesNotFit(region, e["need"], e["size"], detail + " with the program's own buffers")
    return out


def check_runnable(npu: NpuPlan, board, opts: dict) -> None:
    if not opts.get("run"):
        return
    if npu.mode == PLAN_ONLY:
        raise BakeError("ethosu_driver=plan builds the image for the NPU memory report only (no driver, the "
                        "delegate cannot execute): drop run=1, or pass ethosu_driver=<path to Arm's "
                        "ethos-u-core-driver> and runner=fvp")
    emu = getattr(board, "emulator", None)
    runner = opts.get("runner") or (emu.kind if emu is not None else "")
    if runner != "fvp":
        raise BakeError(f"this program delegates to the Ethos-U NPU, which the '{runner or 'default'}' runner of "
                        f"board '{board.name}' does not have (QEMU emulates the CPU only): run on the FVP "
                        f"(runner=fvp, FVP on PATH), or export for the CPU with the Cortex-M flow "
                        f"(etdeploy export <file.py>:<name> --board {board.name} --flow cortex_m)")


# ---------------------------------------------------------------- C

def render_model_asm(npu: NpuPlan) -> str:
    """Weights used in place: symbols inside the model blob (appended to the bake's et_model.gen.c, the
    translation unit that defines et_model_blob_<p>)."""
    out = []
    for d in npu.delegates:
        w = d.weights
        if not w.in_place:
            continue
        out += ["__asm__(", f'  ".global {w.symbol}\\n"', f'  ".type {w.symbol}, STT_OBJECT\\n"',
                f'  ".set {w.symbol}, et_model_blob_{w.blob} + {w.offset}\\n"',
                f'  ".size {w.symbol}, {w.size}\\n");']
    return ("\n/* Ethos-U weights used in place (etdeploy npu_plan) */\n" + "\n".join(out) + "\n") if out else ""


def render_c(npu: NpuPlan, blobs: list[Path]) -> str:
    out = ["/* Generated by etdeploy npu_plan: Ethos-U buffers placed by memory mode "
           f"{npu.memory_mode}. Do not edit. */", '#include "et_npu_plan.h"', ""]
    for b in sorted({d.program for d in npu.delegates}):
        out.append(f"extern const uint8_t et_model_blob_{b}[];")
    for d in npu.delegates:
        s, w = d.scratch, d.weights
        out.append(f'uint8_t {s.symbol}[{s.size}u] __attribute__((aligned({NPU_ALIGN}), '
                   f'section(".et_npu.{s.region}.{d.tag}")));')
        if w.in_place:
            out.append(f"extern const uint8_t {w.symbol}[];")
        else:
            out += ["__asm__(", f'  ".section .et_npu_data.{w.region}.{d.tag},\\"a\\"\\n"',
                    f'  ".balign {NPU_ALIGN}\\n"', f'  ".global {w.symbol}\\n"', f'  ".type {w.symbol}, STT_OBJECT\\n"',
                    f'  "{w.symbol}:\\n"',
                    f'  ".incbin \\"{blobs[w.blob].as_posix()}\\", {w.offset}, {w.size}\\n"',
                    f'  ".size {w.symbol}, {w.size}\\n"', '  ".previous\\n");',
                    f"extern const uint8_t {w.symbol}[];"]
    f = npu.fast_scratch
    if f:
        out.append(f'uint8_t {f.symbol}[{f.size}u] __attribute__((aligned({NPU_ALIGN}), '
                   f'section(".et_npu.{f.region}.fast")));')
    out += ["", "const et_npu_delegate_plan et_npu_plans[] = {"]
    for d in npu.delegates:
        out.append(f"  {{et_model_blob_{d.program} + {d.payload_offset}u, {d.weights.symbol}, {d.weights.size}u, "
                   f"{d.scratch.symbol}, {d.scratch.size}u}},")
    out += ["  {0, 0, 0u, 0, 0u},", "};", f"const uint32_t et_npu_n_plans = {len(npu.delegates)}u;",
            f"uint8_t *const et_npu_fast_scratch_ptr = {f.symbol if f else '0'};",
            f"const uint32_t et_npu_fast_scratch_size = {f.size if f else 0}u;"]
    return "\n".join(out) + "\n"


def report(npu: NpuPlan) -> dict:
    a = npu.areas
    return {"memory_mode": npu.memory_mode, "build": npu.mode,
            "areas": {"weights": a.weights, "scratch": a.scratch, "fast_scratch": a.fast_scratch,
                      "arena_cache_size": a.arena_cache_size},
            "buffers": [b.as_dict() for b in npu.buffers()]}


def driver_sources(path: str, board) -> tuple[list[Path], list[Path], dict]:
    """Sources, include dirs and defines for Arm's ethos-u-core-driver at `path` (its include/ and src/)."""
    root = Path(path).expanduser()
    if not (root / "include" / "ethosu_driver.h").is_file():
        raise BakeError(f"ethosu_driver={path}: no include/ethosu_driver.h there; give the root of Arm's "
                        f"ethos-u-core-driver (or ethosu_driver=plan to place the NPU buffers without a driver)")
    arch = board.npu.kind.replace("ethos-", "")          # u55 | u65 | u85
    device = "ethosu_device_u85.c" if arch == "u85" else "ethosu_device_u55_u65.c"
    srcs = [s for s in sorted((root / "src").glob("*.c")) if not s.name.startswith("ethosu_device_") or s.name == device]
    defines = {f"ETHOSU{arch[1:]}": "1", "ETHOSU_ARCH": arch, "ETHOSU_MACS": str(board.npu.macs)}
    return srcs, [root / "include", root / "src"], defines


class EthosUDelegate(DelegateBackend):
    """Bake's hook for programs delegated to the Ethos-U: the driver option, the Vela payload in the
    report, and the NPU buffers placed by memory mode (C, sources, fit, report)."""
    backend = "EthosUBackend"
    report_key = "npu"
    option = "ethosu_driver"

    def check(self, program, method, delegate, opts: dict) -> None:
        if not opts.get(self.option):
            opt = self.option
            raise BakeError(
                f"{program.path.name}: method '{method.name}' delegates {delegate.size} bytes to {delegate.backend} "
                f"(the Ethos-U NPU). This build has no NPU driver: pass {opt}=<path to Arm's ethos-u-core-driver> "
                f"and run on the FVP (runner=fvp; QEMU has no NPU), or export the model for the CPU with the "
                f"Cortex-M flow (etdeploy export <file.py>:<name> --board <b> --flow cortex_m). "
                f"{opt}=plan places the NPU buffers for the memory report without a driver (no run).")

    def describe(self, program, delegate) -> dict:
        from . import vela_payload
        v = vela_payload.parse(program.data[delegate.offset:delegate.offset + delegate.size])
        return {"vela": {"command_stream_bytes": v.cmd_bytes, "weight_bytes": v.weight_bytes,
                         "scratch_bytes": v.scratch_bytes,
                         "inputs": [io.__dict__ | {"bytes": io.nbytes} for io in v.inputs],
                         "outputs": [io.__dict__ | {"bytes": io.nbytes} for io in v.outputs]}}

    def contribute(self, progs, board, out_dir: Path, opts: dict, blobs: list[Path], fit: dict,
                   model_region: str | None) -> BackendPart:
        npu = plan(progs, board, opts, model_region)
        fit.update(check_fit(npu, board, fit))
        check_runnable(npu, board, opts)
        gen = Path(out_dir) / "et_npu.gen.c"
        text = render_c(npu, blobs)
        if not gen.exists() or gen.read_text() != text:
            gen.parent.mkdir(parents=True, exist_ok=True)
            gen.write_text(text)
        n = board.npu
        defines = {"ET_NPU_BASE": f"0x{n.base:08x}u" if getattr(n, "base", None) else "0u",
                   "ET_NPU_IRQ": str(getattr(n, "irq", -1) if getattr(n, "irq", None) is not None else -1)}
        if npu.mode == PLAN_ONLY:
            sources, incs = [BACKEND_DIR / "et_backend_ethosu_plan.c", BACKEND_DIR / "et_vela_blocks.c"], [BACKEND_DIR]
            defines["ET_NPU_PLAN_ONLY"] = "1"
        else:
            srcs, incs, dd = driver_sources(str(opts[self.option]), board)
            sources = [BACKEND_DIR / "et_backend_ethosu.c", BACKEND_DIR / "et_vela_blocks.c"] + srcs
            incs = [BACKEND_DIR] + incs
            defines.update(dd)
        return BackendPart([gen], sources, incs, defines, render_model_asm(npu), report(npu))
