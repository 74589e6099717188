"""Bake: fit one or more programs to a board and render the C that carries them.

From each .pte/.bpte: the op table (only kernels the program uses), the planned arenas and the exact
method pool (a C expression over the runtime's own struct sizes), and the model bytes unchanged,
aligned, in the model section. Checks before anything compiles: every operator has a kernel, every
delegate has a backend, and arenas/pools/model fit the board's regions."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import delegates, fbs, kernel_scratch, kernels, placing, scratch_place
from .errors import BakeError, MissingOperators
from .pte import ProgramInfo, read_program

ROOT = Path(__file__).resolve().parents[2]
RUNTIME_DIR = ROOT / "firmware" / "runtime"
BLOB_ALIGN = 64      # bundled programs need their embedded .pte 32-aligned (force_align), constants 16


@dataclass
class BakeResult:
    generated: list[Path]
    sources: list[Path]
    include_dirs: list[Path]
    defines: dict
    sections: dict
    report: dict
    depends: list[Path] = field(default_factory=list)   # files the generated C includes by .incbin
    programs: list[ProgramInfo] = field(default_factory=list)
    board: object = None
    out_dir: Path | None = None
    libs: list[str] = field(default_factory=list)       # backends' link libraries
    linkflags: list[str] = field(default_factory=list)  # backends' link flags (-L, -rpath-link)
    drop_linkflags: list[str] = field(default_factory=list)   # toolchain link flags they rule out (-static)

    def build_unit(self, opt: str = "2"):
        """The one C build description of this image (etdeploy.buildenv.BuildUnit): runtime, kernels,
        generated C, then the board support; every compile of it (SCons, tests, benchmarks) uses it."""
        from . import buildenv
        gen_c = [g for g in self.generated if str(g).endswith(".c")]
        u = buildenv.unit(self.board, opt, sources=list(self.sources) + gen_c, include_dirs=self.include_dirs,
                          defines=self.defines, depends=self.depends, gen_dir=self.out_dir,
                          placement=dict(self.sections))
        u.plan.libs = list(self.libs) + list(u.plan.libs)
        u.plan.linkflags = [f for f in u.plan.linkflags if f not in self.drop_linkflags] + list(self.linkflags)
        return u


def struct_sizes(ptr: int) -> dict:
    """sizeof() of the runtime structs on a target with ptr-byte pointers (see et_runtime.h)."""
    return {"et_value": 16, "et_tensor": 3 * ptr + 8, "et_string": 2 * ptr if ptr == 8 else 8,
            "et_list": 2 * ptr if ptr == 8 else 8, "et_chain": 2 * ptr if ptr == 8 else 8,
            "et_instr": 16 + 3 * ptr, "et_delegate": 2 * ptr}


def _a8(n: int) -> int:
    return (n + 7) & ~7


def pool_bytes(counts, ptr: int) -> int:
    """The pool et_method_load will use, for a target with ptr-byte pointers."""
    s = struct_sizes(ptr)
    total = _a8(counts.values * s["et_value"]) if counts.values else 0
    total += counts.tensors * _a8(s["et_tensor"]) + counts.dims_bytes
    total += counts.strings * _a8(s["et_string"]) + counts.lists * _a8(s["et_list"]) + counts.list_bytes
    total += sum(c * _a8(n * ptr) for n, c in counts.ptr_arrays.items())
    total += _a8(counts.chains * s["et_chain"]) if counts.chains else 0
    total += sum(c * _a8(n * s["et_instr"]) for n, c in counts.instr_arrays.items())
    total += _a8(counts.delegates * s["et_delegate"]) if counts.delegates else 0
    return total + counts.kernel_state + counts.scratch


def pool_expr(counts) -> str:
    """The same sum as a C constant expression, so the compiler applies the real sizeof()s."""
    t = []
    if counts.values:
        t.append(f"ET_A({counts.values}u*sizeof(et_value))")
    if counts.tensors:
        t.append(f"{counts.tensors}u*ET_A(sizeof(et_tensor))")
    if counts.dims_bytes:
        t.append(f"{counts.dims_bytes}u")
    if counts.strings:
        t.append(f"{counts.strings}u*ET_A(sizeof(et_string))")
    if counts.lists:
        t.append(f"{counts.lists}u*ET_A(sizeof(et_list))")
    if counts.list_bytes:
        t.append(f"{counts.list_bytes}u")
    t += [f"{c}u*ET_A({n}u*sizeof(void*))" for n, c in sorted(counts.ptr_arrays.items())]
    if counts.chains:
        t.append(f"ET_A({counts.chains}u*sizeof(et_chain))")
    t += [f"{c}u*ET_A({n}u*sizeof(et_instr))" for n, c in sorted(counts.instr_arrays.items())]
    if counts.delegates:
        t.append(f"ET_A({counts.delegates}u*sizeof(et_delegate))")
    if counts.kernel_state:
        t.append(f"{counts.kernel_state}u")
    if counts.scratch:
        t.append(f"{counts.scratch}u")
    return "(" + " + ".join(t or ["8u"]) + ")"


def _check_ops(progs: list[ProgramInfo]) -> dict[str, kernels.Kernel]:
    cat = kernels.catalogue()
    missing: dict[str, list[str]] = {}
    for p in progs:
        for m in p.methods:
            for op in m.operators:
                if op not in cat:
                    missing.setdefault(op, []).append(f"{p.path.name}:{m.name}")
    if missing:
        raise MissingOperators(sorted(missing), where=missing)
    return cat


def _count_kernel_state(progs: list[ProgramInfo], cat: dict[str, kernels.Kernel]) -> None:
    """Each call of an operator with ET_STATE takes its block from the method pool at load."""
    for p in progs:
        for m in p.methods:
            state = [getattr(cat.get(op), "state", 0) for op in m.operators]
            m.counts.kernel_state = sum(_a8(state[oi]) for oi, _ in m.kernel_calls if 0 <= oi < len(state))


def _plan_scratch(progs: list[ProgramInfo], cat: dict[str, kernels.Kernel], isa: str) -> None:
    """Each call of an ET_SCRATCH operator gets its figure (etdeploy.kernel_scratch) and a place
    (etdeploy.scratch_place): a gap of the planned arenas free during the call, else the method's scratch
    block, shared by the calls placed there (they run one at a time) and taken from the pool first."""
    for p in progs:
        for m in p.methods:
            m.scratch_plan = kernel_scratch.plan(m, cat, isa)
            m.scratch_mem, m.scratch_off, m.counts.scratch = scratch_place.place(m, m.scratch_plan,
                                                                               kernel_scratch.untouched(m))


def _scratch_report(m, isa: str) -> dict:
    top = max(range(len(m.scratch_plan)), key=lambda k: m.scratch_plan[k], default=None)
    rep = {"bytes": m.counts.scratch, "isa": isa, "calls": sum(1 for n in m.scratch_plan if n),
           "in_arenas": sum(1 for n, a in zip(m.scratch_plan, m.scratch_mem) if n and a),
           "largest_need": max(m.scratch_plan, default=0)}
    if top is not None and m.scratch_plan[top]:
        op = next((m.operators[oi] for k, oi, _ in m.calls if k == top), "")
        rep["largest"] = {"instruction": top, "operator": op, "bytes": m.scratch_plan[top]}
    return rep


def _check_delegates(progs: list[ProgramInfo], opts: dict) -> dict[str, delegates.DelegateBackend]:
    """The backend hook of every delegate the programs use, each checked for this build."""
    known, needed = delegates.backends(), {}
    for p in progs:
        for m in p.methods:
            for d in m.delegates:
                hook = known.get(d.backend)
                if hook is None:
                    raise BakeError(f"{p.path.name}: method '{m.name}' delegates to backend '{d.backend}', which "
                                    f"etdeploy has no runtime for. Export for the CPU instead (portable or "
                                    f"Cortex-M flow).")
                hook.check(p, m, d, opts)
                needed[d.backend] = hook
    return needed


def _check_fit(progs: list[ProgramInfo], board, opts: dict, ptr: int) -> dict:
    """Places the model bytes, arenas and pools (etdeploy.placing); {kind: Decision}."""
    needs: dict[str, int] = {}
    items: dict[str, list] = {}

    def add(kind, what, n):
        needs[kind] = needs.get(kind, 0) + n
        items.setdefault(kind, []).append((what, n))
    for p in progs:
        add("model", f"model {p.path.name}", len(p.data) + BLOB_ALIGN)
        for m in p.methods:
            for mid, sz in enumerate(m.arenas):
                if mid and sz:
                    add("arena", f"arena {p.path.name}:{m.name} mem_id {mid}", _a8(sz) + 16)
            add("pool", f"method pool {p.path.name}:{m.name}", pool_bytes(m.counts, ptr) + 16)
    return placing.decide(board, needs, opts, items)


def _delegate_report(p: ProgramInfo, d, hooks: dict) -> dict:
    rep = {"backend": d.backend, "location": d.location, "index": d.index, "bytes": d.size,
           "compile_specs": {k: v.decode("utf-8", "replace") for k, v in d.compile_specs.items()}}
    return rep | (hooks[d.backend].describe(p, d) if d.backend in hooks else {})


def _c_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _uses(m, cat: dict, what: str) -> bool:
    """Some operator of the method declares ET_STATE ("state") or ET_SCRATCH ("scratch")."""
    return any(getattr(cat[op], what) for op in m.operators)


def render_model(progs: list[ProgramInfo], cat: dict, blob_paths: list[Path], opts: dict) -> str:
    out = ["/* Generated by etdeploy bake. Do not edit. */", '#include "et_baked.h"', ""]
    syms = sorted({cat[op].symbol for p in progs for m in p.methods for op in m.operators})
    out += [f"et_status {s}(et_kctx *, et_value *const *, uint32_t);" for s in syms]
    for i, (p, blob) in enumerate(zip(progs, blob_paths)):
        # The bytes go in unchanged by .incbin: no C array text, no copy at run time.
        out += ["", f"/* {p.path.name}: {len(p.data)} bytes */",
                "__asm__(",
                f'  ".section .et_model.{i},\\"a\\"\\n"',
                f'  ".balign {BLOB_ALIGN}\\n"',
                f'  ".global et_model_blob_{i}\\n"',
                f'  ".type et_model_blob_{i}, STT_OBJECT\\n"',
                f'  "et_model_blob_{i}:\\n"',
                f'  ".incbin \\"{blob.as_posix()}\\"\\n"',
                f'  ".size et_model_blob_{i}, {len(p.data)}\\n"',
                '  ".previous\\n");',
                f"extern const uint8_t et_model_blob_{i}[];"]
        for j, m in enumerate(p.methods):
            tag = f"{i}_{j}"
            ops = ", ".join(cat[op].symbol for op in m.operators) or "0"
            out.append(f"static const et_kernel_fn et_ops_{tag}[] = {{{ops}}};")
            if _uses(m, cat, "state"):   # ET_STATE sizes, by op index
                out.append(f"static const uint16_t et_op_state_{tag}[] = "
                           f"{{{', '.join(f'{cat[op].state}u' for op in m.operators)}}};")
            if _uses(m, cat, "scratch"):   # ET_SCRATCH operators, by op index; bake's plan, by instruction
                out.append(f"static const uint8_t et_op_scratch_{tag}[] = "
                           f"{{{', '.join('1u' if cat[op].scratch else '0u' for op in m.operators)}}};")
                out.append(f"static const uint32_t et_scratch_plan_{tag}[] = "
                           f"{{{', '.join(f'{n}u' for n in m.scratch_plan) or '0u'}}};")
                out.append(f"static const uint8_t et_scratch_mem_{tag}[] = "
                           f"{{{', '.join(f'{n}u' for n in m.scratch_mem) or '0u'}}};")
                out.append(f"static const uint32_t et_scratch_off_{tag}[] = "
                           f"{{{', '.join(f'{n}u' for n in m.scratch_off) or '0u'}}};")
            arena_ptrs, arena_sizes = [], []
            for mid, sz in enumerate(m.arenas):
                if mid == 0 or sz == 0:
                    arena_ptrs.append("0")
                    arena_sizes.append("0u")
                    continue
                out.append(f'uint8_t et_arena_{tag}_{mid}[{sz}u] __attribute__((aligned(16), '
                           f'section(".et_arena.{tag}_{mid}")));')
                arena_ptrs.append(f"et_arena_{tag}_{mid}")
                arena_sizes.append(f"{sz}u")
            out.append(f"static uint8_t *const et_arenas_{tag}[] = {{{', '.join(arena_ptrs)}}};")
            out.append(f"static const uint32_t et_arena_sizes_{tag}[] = {{{', '.join(arena_sizes)}}};")
            out.append(f'uint8_t et_pool_{tag}[{pool_expr(m.counts)}] __attribute__((aligned(16), '
                       f'section(".et_pool.{tag}")));')
        out.append(f"static et_program et_prog_state_{i};")
        out += [f"static et_method et_method_state_{i}_{j};" for j in range(len(p.methods))]
        out.append(f"static const et_baked_method et_methods_{i}[] = {{")
        for j, m in enumerate(p.methods):
            tag = f"{i}_{j}"
            out.append(f"  {{{_c_str(m.name)}, et_ops_{tag}, {len(m.operators)}u, et_arenas_{tag}, "
                       f"et_arena_sizes_{tag}, {len(m.arenas)}u, et_pool_{tag}, sizeof(et_pool_{tag}), "
                       f"{f'et_op_state_{tag}' if _uses(m, cat, 'state') else '0'}, "
                       f"&et_method_state_{tag}, "
                       + (f"et_op_scratch_{tag}, et_scratch_plan_{tag}, {m.counts.scratch}u, et_scratch_mem_{tag}, "
                          f"et_scratch_off_{tag}}}," if _uses(m, cat, "scratch") else "0, 0, 0u, 0, 0},"))
        out.append("};")
    out.append("")
    out.append("const et_baked_program et_baked_programs[] = {")
    for i, p in enumerate(progs):
        out.append(f"  {{et_model_blob_{i}, {len(p.data)}u, et_methods_{i}, {len(p.methods)}u, &et_prog_state_{i}}},")
    out.append("};")
    out.append(f"const uint32_t et_baked_n_programs = {len(progs)}u;")
    n_methods = sum(len(p.methods) for p in progs)
    out.append(f"et_bundle et_baked_bundles[{len(progs)}];")
    out.append(f"et_pool et_baked_pools[{n_methods}];")
    out.append(f"uint64_t et_baked_load_cycles[{n_methods}];")
    out.append(f"uint32_t et_baked_first_method[{len(progs)}];")
    out.append(f"const float et_baked_atol = {float(opts.get('atol', 1e-5))!r}f;")
    out.append(f"const float et_baked_rtol = {float(opts.get('rtol', 1e-5))!r}f;")
    return "\n".join(out) + "\n"


def write_if_changed(path: Path, text: str | bytes) -> Path:
    data = text.encode() if isinstance(text, str) else text
    if not path.exists() or path.read_bytes() != data:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return path


def schema_headers(out_dir: Path) -> list[Path]:
    return [write_if_changed(out_dir / "et_schema.gen.h", fbs.c_header(fbs.program_schema(), "ETFB")),
            write_if_changed(out_dir / "et_bundled_schema.gen.h", fbs.c_header(fbs.bundled_schema(), "ETBP"))]


def runtime_sources() -> list[Path]:
    return sorted(RUNTIME_DIR.glob("*.c"))


def include_dirs(out_dir: Path) -> list[Path]:
    """Where the runtime, kernels and generated C find their headers (the bake tree last)."""
    return [RUNTIME_DIR, ROOT / "firmware" / "boards", ROOT / "firmware" / "kernels", Path(out_dir)]


def bake(pte_paths: list[Path], board, out_dir: Path, opts: dict | None = None) -> BakeResult:
    opts = dict(opts or {})
    if not pte_paths:
        raise BakeError("no program given: pass pte=<file.pte|file.bpte>[,more]")
    progs = []
    for p in pte_paths:
        p = Path(p)
        if not p.exists():
            raise BakeError(f"program file not found: {p}")
        progs.append(read_program(p))
    cat = _check_ops(progs)
    _count_kernel_state(progs, cat)
    isa = kernel_scratch.isa(board)
    _plan_scratch(progs, cat, isa)
    backends = _check_delegates(progs, {**opts, "_board": board})
    ptr = board.pointer_bytes
    placed = _check_fit(progs, board, opts, ptr)
    fit = placing.fit_summary(placed, board)
    model_region = placed["model"].region if "model" in placed else None
    out_dir = Path(out_dir)
    gen = schema_headers(out_dir)
    blobs = [write_if_changed(out_dir / f"model_{i}{p.path.suffix}", p.data) for i, p in enumerate(progs)]
    parts = {b: hook.contribute(progs, board, out_dir, opts, blobs, fit, model_region)
             for b, hook in backends.items()}
    gen.append(write_if_changed(out_dir / "et_model.gen.c",
                                render_model(progs, cat, blobs, opts) + "".join(x.model_c for x in parts.values())))
    # The runner reads this to name operators in errors and to compare with expected outputs.
    write_if_changed(out_dir / "bake.json", __import__("json").dumps({"programs": [str(b) for b in blobs]}, indent=1))
    ops = {op for p in progs for m in p.methods for op in m.operators}
    defines = {}
    if opts.get("inputs") == "link":
        defines["ET_LINK_INPUTS"] = "1"
    if opts.get("link") == "text":
        defines["ET_LINK_TEXT"] = "1"
    if opts.get("etdump") and str(opts["etdump"]) not in ("0", "off", "false"):
        defines["ET_PROFILE"] = "1"
        if str(opts["etdump"]) == "debug":
            defines["ET_PROFILE_DEBUG"] = "1"
    for b in backends:
        defines[f"ET_WITH_{b.upper().replace('BACKEND', '')}"] = "1"
    report = {
        "programs": [{
            "file": str(p.path), "bytes": len(p.data), "bundled": p.bundled, "constant_bytes": p.constant_bytes,
            "test_cases": p.test_cases,
            "methods": [{"name": m.name, "operators": m.operators, "instructions": m.instructions,
                         "arenas": {str(i): s for i, s in enumerate(m.arenas) if i},
                         "pool_bytes": pool_bytes(m.counts, ptr),
                         "scratch": _scratch_report(m, isa),
                         "delegates": [_delegate_report(p, d, backends) for d in m.delegates]}
                        for m in p.methods]} for p in progs],
        "fit": fit,
        "placement": {k: d.as_dict() for k, d in placed.items()},
    }
    sources = runtime_sources() + kernels.sources_for(ops)
    incs = include_dirs(out_dir)
    libs: list[str] = []
    linkflags: list[str] = []
    drop: list[str] = []
    for b, part in parts.items():
        libs += [x for x in part.libs if x not in libs]
        linkflags += [x for x in part.linkflags if x not in linkflags]
        drop += part.drop_linkflags
        gen += part.generated
        sources += part.sources
        incs += part.include_dirs
        defines.update(part.defines)
        report[backends[b].report_key] = part.report
    sections = {k: d.region for k, d in placed.items()}
    return BakeResult(gen, sources, incs, defines, sections, report, blobs, progs, board, out_dir, libs,
                      linkflags, drop)
