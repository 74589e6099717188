"""Reading .pte and .bpte files into a ProgramInfo: methods, inputs/outputs, planned arenas,
operators, delegates and segments, plus the counts the method-pool formula needs.

Only typed errors leave this module (BadProgram); the decoder checks every offset."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from . import fbs
from .dtypes import DTYPES, code_of
from .errors import BadProgram



@dataclass(frozen=True)
class TensorInfo:
    dtype: int
    sizes: tuple[int, ...]
    dim_order: tuple[int, ...]
    mem_id: int | None          # planned arena, None for constants/unbound
    offset: int
    constant_index: int         # data_buffer_idx (0 = none)
    dynamism: int

    @property
    def dtype_name(self) -> str:
        return DTYPES.get(self.dtype, (f"dtype{self.dtype}", 0))[0]

    @property
    def nbytes(self) -> int:
        n = DTYPES.get(self.dtype, ("", 0))[1]
        for s in self.sizes:
            n *= s
        return n


@dataclass(frozen=True)
class DelegateInfo:
    backend: str
    location: str               # "inline" | "segment"
    index: int
    size: int
    offset: int                 # where the payload starts in the file
    compile_specs: dict


@dataclass
class PoolCounts:
    """What et_method_load allocates, grouped so a C expression can size the pool exactly."""
    values: int = 0
    tensors: int = 0
    dims_bytes: int = 0          # sum of ET_A(ndim*4)
    strings: int = 0
    lists: int = 0
    list_bytes: int = 0          # sum of ET_A(n*8) / ET_A(n) for int/double/bool lists
    ptr_arrays: dict = field(default_factory=dict)   # n -> count of ET_A(n*sizeof(void*))
    chains: int = 0
    instr_arrays: dict = field(default_factory=dict) # n -> count of ET_A(n*sizeof(et_instr))
    delegates: int = 0
    kernel_state: int = 0        # bytes of et_kernel_state blocks (bake fills it from ET_STATE)
    scratch: int = 0             # the kernels' planned scratch block (bake: etdeploy.kernel_scratch), 16-aligned


@dataclass
class MethodInfo:
    name: str
    operators: list[str]
    inputs: list[object]         # TensorInfo or a scalar description
    outputs: list[object]
    arenas: list[int]            # non_const_buffer_sizes (index = mem_id, [0] = 0)
    delegates: list[DelegateInfo]
    instructions: int
    kernel_calls: list[tuple[int, int]]   # (op index, nargs)
    counts: PoolCounts
    values: int
    # per KernelCall (chain order): (instruction ordinal over all chains, op index, [argument]) where an
    # argument is a TensorInfo, (kind, scalar) or ("IntList", [ints]): what kernel_scratch sizes from
    calls: list = field(default_factory=list)
    scratch_plan: list = field(default_factory=list)   # per instruction: planned scratch bytes (bake)
    scratch_mem: list = field(default_factory=list)    # per instruction: arena mem_id of its scratch, 0 = pool block
    scratch_off: list = field(default_factory=list)    # per instruction: offset in that arena
    # what the arena placement of kernel scratch reads (etdeploy.scratch_place): per instruction (kind, value
    # indices it uses with tensor lists expanded, the last argument of a KernelCall or None, its arguments); planned tensors
    # by value index: (mem_id, offset, bytes or None for an unknown dtype, has initial data); the method's input
    # and output value indices
    instr_uses: list = field(default_factory=list)
    planned: dict = field(default_factory=dict)
    io_values: tuple = ((), ())


@dataclass
class ProgramInfo:
    path: Path
    data: bytes                  # the file as given (a .bpte stays a .bpte)
    program_offset: int          # where the .pte starts inside data (0 unless bundled)
    program_size: int
    bundled: bool
    version: int
    methods: list[MethodInfo]
    segments: list[tuple[int, int]]  # (absolute offset, size) in the program
    constant_bytes: int
    test_cases: dict             # method -> number of bundled test cases

    def method(self, name: str) -> MethodInfo:
        for m in self.methods:
            if m.name == name:
                return m
        raise BadProgram(f"{self.path}: no method '{name}' (has {', '.join(m.name for m in self.methods)})")


def _a8(n: int) -> int:
    return (n + 7) & ~7


def _tensor(t: dict) -> TensorInfo:
    alloc = t.get("allocation_info")
    sizes = tuple(t.get("sizes") or [])
    dorder = t.get("dim_order")
    dorder = tuple(dorder.tobytes()) if dorder is not None else tuple(range(len(sizes)))
    mem_id, off = None, 0
    if alloc:
        mem_id = alloc["memory_id"]
        off = alloc["memory_offset_low"] | (alloc["memory_offset_high"] << 32)
    return TensorInfo(t["scalar_type"], sizes, dorder, mem_id, off, t.get("data_buffer_idx") or 0,
                      t.get("shape_dynamism") or 0)


def _describe(v: dict):
    kind = v.get("val_type")
    body = v.get("val")
    if kind == "Tensor":
        return _tensor(body)
    if kind in ("Int", "Bool", "Double"):
        return (kind, list(body.values())[1])
    return (kind, None)


def _arg(values: list, idx: int):
    """A kernel argument as the kernels see it: int lists resolved to their ints."""
    if not 0 <= idx < len(values):
        return ("Null", None)
    v = values[idx]
    if v.get("val_type") == "IntList":
        items = [values[i] for i in v["val"].get("items") or [] if 0 <= i < len(values)]
        return ("IntList", [int(x["val"]["int_val"]) for x in items if x.get("val_type") == "Int"])
    return _describe(v)


def _uses(values: list, kind, body: dict) -> tuple:
    """(kind, the value indices an instruction touches, tensor lists expanded, the KernelCall's last argument,
    the KernelCall's arguments as given)."""
    if kind in ("KernelCall", "DelegateCall"):
        idx = list(body.get("args") or [])
    elif kind == "MoveCall":
        idx = [body.get("move_from", -1), body.get("move_to", -1)]
    elif kind == "JumpFalseCall":
        idx = [body.get("cond_value_index", -1)]
    elif kind == "FreeCall":
        idx = [body.get("value_index", -1)]
    else:
        idx = []
    out = []
    for a in idx:
        if not isinstance(a, int) or not 0 <= a < len(values):
            continue
        out.append(a)
        v = values[a]
        if v.get("val_type") in ("TensorList", "OptionalTensorList"):
            out += [i for i in (v.get("val") or {}).get("items") or [] if isinstance(i, int) and 0 <= i < len(values)]
    last = idx[-1] if kind == "KernelCall" and idx else None
    return (kind, out, last, idx if kind == "KernelCall" else [])


def _method(plan: dict, path: Path) -> MethodInfo:
    values = plan.get("values") or []
    c = PoolCounts(values=len(values))
    for v in values:
        kind, body = v.get("val_type"), v.get("val")
        if kind is None or kind == "Null":
            continue
        if body is None:
            raise BadProgram(f"{path}: value of type {kind} has no body")
        if kind == "Tensor":
            c.tensors += 1
            c.dims_bytes += _a8(4 * len(body.get("sizes") or []))
        elif kind == "String":
            c.strings += 1
        elif kind in ("IntList", "DoubleList", "BoolList"):
            c.lists += 1
            n = len(body.get("items") or [])
            c.list_bytes += _a8(n * (1 if kind == "BoolList" else 8))
        elif kind in ("TensorList", "OptionalTensorList"):
            c.lists += 1
            n = len(body.get("items") or [])
            if n:
                c.ptr_arrays[n] = c.ptr_arrays.get(n, 0) + 1
    ops = [f"{o.get('name') or ''}.{o.get('overload') or 'default'}" for o in plan.get("operators") or []]
    chains = plan.get("chains") or []
    c.chains = len(chains)
    n_instr, kcalls, calls, uses = 0, [], [], []
    for ch in chains:
        ins = ch.get("instructions") or []
        n_instr += len(ins)
        if ins:
            c.instr_arrays[len(ins)] = c.instr_arrays.get(len(ins), 0) + 1
        for k, i in enumerate(ins, n_instr - len(ins)):
            kind, body = i.get("instr_args_type"), i.get("instr_args") or {}
            uses.append(_uses(values, kind, body))
            if kind in ("KernelCall", "DelegateCall"):
                n = len(body.get("args") or [])
                if n:
                    c.ptr_arrays[n] = c.ptr_arrays.get(n, 0) + 1
                if kind == "KernelCall":
                    kcalls.append((body.get("op_index", 0), n))
                    calls.append((k, body.get("op_index", 0), [_arg(values, a) for a in body.get("args") or []]))
    inputs = [_describe(values[i]) for i in plan.get("inputs") or [] if 0 <= i < len(values)]
    outputs = [_describe(values[i]) for i in plan.get("outputs") or [] if 0 <= i < len(values)]
    c.delegates = len(plan.get("delegates") or [])
    m = MethodInfo(plan.get("name") or "", ops, inputs, outputs, list(plan.get("non_const_buffer_sizes") or [0]),
                   [], n_instr, kcalls, c, len(values), calls)
    m.instr_uses = uses
    m.planned = {i: (t.mem_id, t.offset, t.nbytes if t.dtype in DTYPES else None, t.constant_index > 0) for i, v in enumerate(values) if v.get("val_type") == "Tensor"
                 for t in [_tensor(v["val"])] if t.mem_id is not None and t.mem_id >= 1}
    m.io_values = (tuple(plan.get("inputs") or ()), tuple(plan.get("outputs") or ()))
    return m


def _delegates(prog: dict, plan: dict, base: int, seg_base: int, size: int) -> list[DelegateInfo]:
    out = []
    inline = prog.get("backend_delegate_data") or []
    segs = prog.get("segments") or []
    for d in plan.get("delegates") or []:
        ref = d.get("processed") or {}
        loc, idx = ref.get("location", 0), ref.get("index", 0)
        specs = {cs.get("key"): (cs.get("value").tobytes() if cs.get("value") is not None else b"")
                 for cs in d.get("compile_specs") or []}
        if loc == 1:
            if idx >= len(segs):
                raise BadProgram(f"delegate {d.get('id')} refers to segment {idx} of {len(segs)}")
            off, sz = seg_base + segs[idx]["offset"], segs[idx]["size"]
        else:
            if idx >= len(inline):
                raise BadProgram(f"delegate {d.get('id')} refers to inline data {idx} of {len(inline)}")
            span = inline[idx]["data"]
            off, sz = span.offset, span.size
        if off + sz > size:
            raise BadProgram(f"delegate {d.get('id')} payload [{off}, {off + sz}) outside the file ({size} bytes)")
        out.append(DelegateInfo(d.get("id") or "", "segment" if loc == 1 else "inline", idx, sz, base + off, specs))
    return out


def read_program(path: Path, data: bytes | None = None) -> ProgramInfo:
    path = Path(path)
    if data is None:
        try:
            data = path.read_bytes()
        except OSError as e:
            raise BadProgram(f"{path}: cannot read: {e.strerror}") from None
    try:
        return _read(path, data)
    except fbs.FlatbufferError as e:
        raise BadProgram(f"{path}: malformed flatbuffer: {e}") from None
    except (KeyError, TypeError, AttributeError, ValueError, struct.error, RecursionError) as e:
        raise BadProgram(f"{path}: malformed program: {type(e).__name__}: {e}") from None


def _read(path: Path, data: bytes) -> ProgramInfo:
    if len(data) < 16:
        raise BadProgram(f"{path}: {len(data)} bytes is too short to be a .pte or .bpte")
    ident = data[4:8]
    bundled, cases = False, {}
    poff, pdata = 0, data
    if ident == b"BP08":
        bundled = True
        root = broot = fbs.Reader(fbs.bundled_schema(), data).root()
        span = root.get("program")
        if span is None or len(span) == 0:
            raise BadProgram(f"{path}: bundled program holds no program")
        poff = span.offset
        pdata = data[poff:poff + span.size]
        for s in root.get("method_test_suites") or []:
            cases[s.get("method_name") or ""] = len(s.get("test_cases") or [])
        ident = pdata[4:8]
    if ident != b"ET12":
        if ident[:2] == b"ET" and ident[2:].isdigit():
            raise BadProgram(f"{path}: program schema version {ident.decode()} is not supported (etdeploy reads ET12, "
                             f"executorch 1.5.x): re-export the model with executorch 1.5.x")
        raise BadProgram(f"{path}: file identifier {ident!r} is not ET12 (executorch 1.5 .pte) or BP08 (.bpte): "
                         f"not an executorch program; pass the .pte/.bpte that executorch's to_executorch() wrote")
    psize, seg_base = len(pdata), 0
    if pdata[8:12] == b"eh00":
        hlen, psize, seg_base = struct.unpack_from("<IQQ", pdata, 12)
        if hlen < 24 or psize > len(pdata) or seg_base > len(pdata) or psize < 16:
            raise BadProgram(f"{path}: extended header out of range (program {psize}, segments at {seg_base}, "
                             f"file {len(pdata)})")
    root = fbs.Reader(fbs.program_schema(), pdata, limit=psize).root()
    plans = root.get("execution_plan") or []
    if not plans:
        raise BadProgram(f"{path}: program has no methods")
    segs = [(seg_base + s["offset"], s["size"]) for s in root.get("segments") or []]
    for off, sz in segs:
        if off + sz > len(pdata):
            raise BadProgram(f"{path}: segment [{off}, {off + sz}) lies beyond the end of the file ({len(pdata)})")
    const_bytes = 0
    cs = root.get("constant_segment")
    if cs and cs.get("offsets") and segs:
        if cs["segment_index"] >= len(segs):
            raise BadProgram(f"{path}: constant segment index {cs['segment_index']} of {len(segs)} segments")
        const_bytes = segs[cs["segment_index"]][1]
    else:
        const_bytes = sum(len(b.get("storage") or b"") for b in root.get("constant_buffer") or [])
    methods = []
    for plan in plans:
        m = _method(plan, path)
        m.delegates = _delegates(root, plan, poff, seg_base, len(pdata))
        methods.append(m)
    if bundled:
        _check_cases(path, broot, methods)
    return ProgramInfo(path, data, poff, len(pdata), bundled, root.get("version") or 0, methods, segs,
                       const_bytes, cases)


def _case_tensor_fits(want: TensorInfo, got: dict) -> str | None:
    """Why a given input tensor (sizes, scalar_type) does not fit the planned one, or None."""
    sizes = tuple(got.get("sizes") or [])
    st = got.get("scalar_type")
    if st != want.dtype:
        return f"dtype {DTYPES.get(st, (f'dtype{st}',))[0]}, the program plans {want.dtype_name}"
    if len(sizes) != len(want.sizes):
        return f"rank {len(sizes)} {list(sizes)}, the program plans rank {len(want.sizes)} {list(want.sizes)}"
    if want.dynamism == 0 and sizes != want.sizes:
        return f"sizes {list(sizes)}, the program's static sizes are {list(want.sizes)}"
    over = [i for i, (g, w) in enumerate(zip(sizes, want.sizes)) if g > w]
    if want.dynamism == 1 and over:
        return (f"sizes {list(sizes)} exceed the planned upper bounds {list(want.sizes)} (dim {over[0]}); "
                f"a larger bound needs a re-export (torch.export Dim(max=...))")
    return None


def _check_cases(path: Path, root: dict, methods: list[MethodInfo]) -> None:
    """Bundled test cases must fit the planned tensors: the firmware would only say 'bad input'."""
    by_name = {m.name: m for m in methods}
    for s in root.get("method_test_suites") or []:
        name = s.get("method_name") or ""
        m = by_name.get(name)
        if m is None:
            raise BadProgram(f"{path}: test suite for method '{name}', which the program lacks "
                             f"(has {', '.join(by_name)})")
        # Inputs only: expected outputs of 0-dim results are stored with sizes [1], and the runtime
        # compares those by value.
        for ci, tc in enumerate(s.get("test_cases") or []):
            given = tc.get("inputs") or []
            if len(given) != len(m.inputs):
                raise BadProgram(f"{path}: {name} case {ci} has {len(given)} inputs, the method takes "
                                 f"{len(m.inputs)}: rebuild the .bpte from this program")
            for i, (v, want) in enumerate(zip(given, m.inputs)):
                if v.get("val_type") != "Tensor" or not isinstance(want, TensorInfo):
                    continue
                why = _case_tensor_fits(want, v.get("val") or {})
                if why:
                    raise BadProgram(f"{path}: {name} case {ci} input {i}: {why}: rebuild the .bpte with "
                                     f"cases that fit, or re-export the program for them")


def input_mismatch(method: MethodInfo, arrays) -> str | None:
    """Why these arrays cannot be a method's inputs (count, dtype, planned sizes), or None."""
    if len(arrays) != len(method.inputs):
        return f"{len(arrays)} inputs given, method '{method.name}' takes {len(method.inputs)}"
    for i, (a, want) in enumerate(zip(arrays, method.inputs)):
        if not isinstance(want, TensorInfo):
            continue
        code = code_of(getattr(a, "dtype", None))
        if code is None:
            return f"input {i}: no executorch dtype for numpy {getattr(a, 'dtype', type(a).__name__)}"
        why = _case_tensor_fits(want, {"sizes": list(a.shape), "scalar_type": code})
        if why:
            return f"method '{method.name}' input {i}: {why}: give inputs that fit"
    return None
