"""Reference outputs for ExecuTorch programs on the host.

    run_reference(pte, inputs=None, method="forward") -> [np.ndarray]
        the real executorch runtime (portable_lib + the quantized kernels library).
    run_reference_etdump(pte, inputs, etdp_path, method="forward") -> [np.ndarray]
        the same, writing the runtime's own ETDump (.etdp) of that run.
    run_cortex_m_reference(pte, inputs=None, method="forward") -> [np.ndarray]
        programs calling cortex_m:: kernels, which the host runtime lacks: a small Python interpreter
        of the .pte's instructions that calls the ops registered in torch (aten:: out variants,
        quantized_decomposed::, dim_order_ops::, and the cortex_m:: Python reference implementations
        that ship with executorch; aten:: ops whose ATen arithmetic differs from the portable
        kernels', upsample_bilinear2d, the portable way: oracle_portable.py). Works for any program
        without delegates.
    bundled_cases(bpte) -> {method: [(inputs, expected_outputs)]}

inputs=None means every input filled with ones of its dtype and shape (the firmware's default).
executorch is imported lazily (about 9 s).
"""
from __future__ import annotations

import ctypes
import os
from pathlib import Path

import numpy as np

from etdeploy.dtypes import DTYPES, numpy_dtypes
from etdeploy.errors import OracleError  # noqa: F401  (oracle.OracleError stays importable)
from etdeploy.oracle_portable import PORTABLE_OPS

# executorch ScalarType codes -> numpy dtypes (etdeploy.dtypes)
SCALAR_TYPES = numpy_dtypes()


_runtime = None


def _portable_lib():
    """portable_lib with the quantized kernels registered (loaded RTLD_GLOBAL first)."""
    global _runtime
    if _runtime is None:
        import importlib.util
        spec = importlib.util.find_spec("executorch")
        if spec is None or not spec.submodule_search_locations:
            raise OracleError("executorch is not installed in this Python: pip install executorch==1.5.1")
        lib = Path(list(spec.submodule_search_locations)[0]) / "lib" / "libexecutorch_kernels_quantized.so"
        if lib.exists():
            ctypes.CDLL(str(lib), mode=os.RTLD_NOW | ctypes.RTLD_GLOBAL)
        from executorch.extension.pybindings import portable_lib
        _runtime = portable_lib
    return _runtime


def _input_specs(module, method: str) -> list[tuple[tuple, np.dtype]]:
    meta = module.method_meta(method)
    specs = []
    for i in range(meta.num_inputs()):
        info = meta.input_tensor_meta(i)
        code = int(info.dtype()) if not hasattr(info.dtype(), "value") else info.dtype().value
        specs.append((tuple(info.sizes()), SCALAR_TYPES[code]))
    return specs


def ones_inputs(specs) -> list[np.ndarray]:
    return [np.ones(shape, dtype=dt) for shape, dt in specs]


def _to_torch(inputs):
    import torch
    return tuple(x if isinstance(x, torch.Tensor) else torch.from_numpy(np.ascontiguousarray(x))
                 for x in inputs)


def _run(pte, inputs, method, **load_kw):
    pl = _portable_lib()
    try:
        module = pl._load_for_executorch(str(pte), **load_kw)
    except Exception as e:
        raise OracleError(f"the reference runtime cannot load {pte}: {e}") from e
    if inputs is None:
        inputs = ones_inputs(_input_specs(module, method))
    try:
        outs = module.run_method(method, _to_torch(inputs))
    except Exception as e:
        raise OracleError(f"the reference runtime failed running {Path(pte).name}:{method}: {e} "
                          "(cortex_m:: programs: use run_cortex_m_reference; delegates cannot run here)") from e
    return module, [o.detach().numpy().copy() for o in outs]


def run_reference(pte_path, inputs: list[np.ndarray] | None = None, method: str = "forward") -> list[np.ndarray]:
    return _run(pte_path, inputs, method)[1]


def run_reference_etdump(pte_path, inputs, etdp_path, method: str = "forward",
                         debug_buffer_size: int = 1 << 20) -> list[np.ndarray]:
    """Run once with ETDump enabled and write the runtime's .etdp (plus <etdp>.debug.bin)."""
    module, outs = _run(pte_path, inputs, method, enable_etdump=True, debug_buffer_size=debug_buffer_size)
    etdp_path = Path(etdp_path)
    module.write_etdump_result_to_file(str(etdp_path), str(etdp_path) + ".debug.bin")
    return outs


def input_specs(pte_path, method: str = "forward") -> list[tuple[tuple, np.dtype]]:
    """(shape, numpy dtype) per input, from the program itself (no runtime needed)."""
    plan = _plan(_deserialize(pte_path)[0], method)
    return [(tuple(plan.values[i].val.sizes), SCALAR_TYPES[int(plan.values[i].val.scalar_type)])
            for i in plan.inputs]


def bundled_cases(bpte_path) -> dict[str, list[tuple[list[np.ndarray], list[np.ndarray]]]]:
    """Test cases of a .bpte: {method: [(inputs, expected_outputs)]} as numpy arrays."""
    from executorch.devtools.bundled_program.serialize import (
        deserialize_from_flatbuffer_to_bundled_program)
    bp = deserialize_from_flatbuffer_to_bundled_program(Path(bpte_path).read_bytes())
    out = {}
    for suite in bp.method_test_suites:
        out[suite.method_name] = [([_bp_tensor(t) for t in case.inputs],
                                   [_bp_tensor(t) for t in case.expected_outputs])
                                  for case in suite.test_cases]
    return out


def _bp_tensor(value) -> np.ndarray:
    t = value.val if hasattr(value, "val") else value
    dt = SCALAR_TYPES[int(t.scalar_type)]
    arr = np.frombuffer(bytes(t.data), dtype=dt).copy()
    sizes, dim_order = list(t.sizes), list(t.dim_order)
    if dim_order and dim_order != sorted(dim_order):   # stored in dim order: back to logical order
        arr = arr.reshape([sizes[d] for d in dim_order]).transpose(np.argsort(dim_order))
        return np.ascontiguousarray(arr)
    return arr.reshape(sizes)


def bundled_program_bytes(bpte_path) -> bytes:
    """The .pte inside a .bpte."""
    from executorch.devtools.bundled_program.schema.bundled_program_schema import BundledProgram  # noqa
    from executorch.devtools.bundled_program.serialize import convert_from_flatbuffer  # noqa
    import json
    obj = json.loads(convert_from_flatbuffer(Path(bpte_path).read_bytes()))
    return bytes(obj["program"])


# ---------------------------------------------------------------- the .pte interpreter

def _deserialize(pte):
    from executorch.exir._serialize._program import deserialize_pte_binary
    data = pte if isinstance(pte, (bytes, bytearray)) else Path(pte).read_bytes()
    f = deserialize_pte_binary(bytes(data))
    return getattr(f, "program", f), data


def _plan(program, method):
    for plan in program.execution_plan:
        if plan.name == method:
            return plan
    raise OracleError(f"no method '{method}' in program (has {[p.name for p in program.execution_plan]})")


def _torch_dtype(code: int):
    import torch
    return getattr(torch, DTYPES[code][0])     # etdeploy.dtypes names are torch's dtype names


def _make_tensor(t, program, arenas):
    """A tensor value: constant data, or a view into its planned arena (mem_id, offset) so that
    planned aliasing (views realised by the memory plan, with no instruction) behaves as on target."""
    import torch
    dtype = _torch_dtype(int(t.scalar_type))
    sizes, dim_order = list(t.sizes), list(t.dim_order)
    phys = [sizes[d] for d in dim_order] if dim_order else sizes
    n = int(np.prod(phys)) if phys else 1
    if t.data_buffer_idx > 0:
        raw = bytes(program.constant_buffer[t.data_buffer_idx].storage)
        arr = np.frombuffer(raw, dtype=np.dtype(SCALAR_TYPES[int(t.scalar_type)]), count=n).copy()
        x = torch.from_numpy(arr).reshape(phys)
    elif t.allocation_info is not None:
        a = t.allocation_info
        nbytes = n * torch.empty((), dtype=dtype).element_size()
        x = arenas[a.memory_id][a.memory_offset: a.memory_offset + nbytes].view(dtype).reshape(phys)
    else:
        x = torch.zeros(phys, dtype=dtype)
    if dim_order and dim_order != sorted(dim_order):
        x = x.permute(*np.argsort(dim_order).tolist())   # logical view over the physical layout
    return x


def _evalue(v, program, arenas):
    from executorch.exir import schema as s
    val = v.val
    if isinstance(val, s.Tensor):
        return _make_tensor(val, program, arenas)
    if isinstance(val, s.Int):
        return val.int_val
    if isinstance(val, s.Bool):
        return val.bool_val
    if isinstance(val, s.Double):
        return float(val.double_val)
    if isinstance(val, s.String):
        return val.string_val
    if isinstance(val, s.Null):
        return None
    if isinstance(val, (s.IntList, s.TensorList, s.OptionalTensorList)):
        return ("list", list(val.items))            # resolved at call time (items are value indices)
    if isinstance(val, (s.DoubleList, s.BoolList)):
        return list(val.items)
    raise OracleError(f"unsupported value {type(val).__name__}")


def _resolve(x, values):
    if isinstance(x, tuple) and len(x) == 2 and x[0] == "list":
        return [None if i < 0 else values[i] for i in x[1]]
    return x


def _is_list(x):
    return isinstance(x, tuple) and len(x) == 2 and x[0] == "list"


def _load_op_libraries():
    import importlib
    for mod in ("executorch.exir.passes.dim_order_ops_registry", "executorch.kernels.quantized",
                "executorch.exir.passes.executorch_prim_ops_registry",
                "executorch.backends.cortex_m.passes",  # registers cortex_m:: (import order matters)
                "executorch.backends.cortex_m.ops.operators"):
        try:
            importlib.import_module(mod)
        except Exception:   # an optional family: its ops then report as unsupported
            pass


def _call(op_name: str, args: list, values: list, arg_idx: list[int]):
    import torch
    ns, _, rest = op_name.partition("::")
    name, _, overload = rest.partition(".")
    if ns == "executorch_prim" and name == "et_view":
        return 2, [args[0].reshape(args[1])]
    if op_name in PORTABLE_OPS:   # ATen's arithmetic differs from the portable kernel's
        n, fn = PORTABLE_OPS[op_name]
        return n, [fn(*args[:n])]
    try:
        packet = getattr(getattr(torch.ops, ns), name)
        op = getattr(packet, overload or "default")
    except AttributeError:
        raise OracleError(f"no Python implementation of {op_name}") from None
    schema = op._schema
    n = len(schema.arguments)
    pos, kw = [], {}
    for a, v in zip(schema.arguments, args[:n]):
        if a.kwarg_only:
            kw[a.name] = v
        else:
            pos.append(v)
    outs = [a for a in schema.arguments if a.is_out]
    try:
        if ns == "cortex_m":   # the reference ops' integer arithmetic where ATen lacks it (oracle_portable)
            from etdeploy.oracle_portable import portable_arithmetic
            with portable_arithmetic():
                res = op(*pos, **kw)
        else:
            res = op(*pos, **kw)
    except NotImplementedError:
        # no kernel for the out variant (cortex_m::): run the functional overload, copy into out
        fn = getattr(packet, "default")
        base = [v for a, v in zip(schema.arguments, args[:n]) if not a.is_out]
        from etdeploy.oracle_portable import portable_arithmetic
        with portable_arithmetic():
            res = fn(*base)
        res_list = list(res) if isinstance(res, (tuple, list)) else [res]
        for a_out, r in zip([v for a, v in zip(schema.arguments, args[:n]) if a.is_out], res_list):
            a_out.resize_(r.shape) if a_out.shape != r.shape else None
            a_out.copy_(r)
        res = res_list[0] if len(res_list) == 1 else tuple(res_list)
    # out tensors keep their identity: the returned values are those same objects
    ret = list(res) if isinstance(res, (tuple, list)) else [res]
    if outs:
        out_objs = [v for a, v in zip(schema.arguments, args[:n]) if a.is_out]
        for o, r in zip(out_objs, ret):
            if r is not o and isinstance(o, torch.Tensor):
                if o.shape != r.shape:
                    o.resize_(r.shape)
                o.copy_(r)
        ret = out_objs + ret[len(out_objs):]
    return n, ret


def run_program_python(pte_path, inputs: list | None = None, method: str = "forward") -> list[np.ndarray]:
    """Interpret the program's instructions with the ops registered in torch (see module doc)."""
    import torch
    from executorch.exir import schema as s
    _load_op_libraries()
    program, _ = _deserialize(pte_path)
    plan = _plan(program, method)
    if plan.delegates:
        raise OracleError(f"{Path(str(pte_path)).name}: delegates ({[d.id for d in plan.delegates]}) "
                          "cannot run in the Python reference")
    arenas = [torch.zeros(max(int(size), 1), dtype=torch.uint8) for size in plan.non_const_buffer_sizes]
    values = [_evalue(v, program, arenas) for v in plan.values]
    if inputs is None:
        inputs = ones_inputs([(tuple(plan.values[i].val.sizes), SCALAR_TYPES[int(plan.values[i].val.scalar_type)])
                              for i in plan.inputs])
    for idx, x in zip(plan.inputs, _to_torch(inputs)):
        tgt = values[idx]
        if isinstance(tgt, torch.Tensor):
            tgt.copy_(x.to(tgt.dtype).reshape(tgt.shape))
        else:
            values[idx] = x
    ops = [f"{o.name}.{o.overload}" if o.overload else o.name for o in plan.operators]
    chain = plan.chains[0]
    pc = 0
    with torch.no_grad():
        while pc < len(chain.instructions):
            ins = chain.instructions[pc].instr_args
            pc += 1
            if isinstance(ins, s.KernelCall):
                args = [_resolve(values[i], values) for i in ins.args]
                op_name = ops[ins.op_index]
                try:
                    n, ret = _call(op_name, args, values, ins.args)
                except OracleError:
                    raise
                except Exception as e:
                    raise OracleError(f"instruction {pc - 1} ({op_name}) failed: {type(e).__name__}: {e}") from e
                if not any(isinstance(values[i], torch.Tensor) or _is_list(values[i]) for i in ins.args[n:]):
                    for i, r in zip(ins.args[n:], ret):  # returned values follow the schema args
                        values[i] = r
            elif isinstance(ins, s.MoveCall):
                values[ins.move_to] = values[ins.move_from]
            elif isinstance(ins, s.JumpFalseCall):
                if not bool(_resolve(values[ins.cond_value_index], values)):
                    pc = ins.destination_instruction
            elif isinstance(ins, s.FreeCall):
                pass
            else:
                raise OracleError(f"instruction {pc - 1}: {type(ins).__name__} is not supported here")
    return [values[i].detach().contiguous().numpy().copy() if isinstance(values[i], torch.Tensor)
            else np.asarray(values[i]) for i in plan.outputs]


def run_cortex_m_reference(pte_path, inputs: list | None = None, method: str = "forward") -> list[np.ndarray]:
    """Reference outputs of a program using cortex_m:: kernels (executorch's Python reference ops)."""
    return run_program_python(pte_path, inputs, method)
