"""From `<file.py>:<name>` and a board to an exported program: what `etdeploy export` and
`scons board=<b> model=<file.py>:<name>` share.

    spec = ModelSpec.parse("examples/mnist_mlp.py:MnistMLP")
    flow = flow_for_board(board, quantize=True)            # the flow the board's data names
    res = export_for_board(spec, board, out_dir, quantize=True)

The flow comes from board data, never from a board's name:
  no --quantize                      -> portable (float, portable kernels)
  --quantize, board has [npu]        -> ethos_u  (Vela with the board's target/system config/memory mode)
  --quantize, family cortex-m        -> cortex_m (cortex_m:: int8 kernels for the board's cpu)
  --quantize, any other board        -> pt2e     (int8 on portable + quantized_decomposed kernels)
`flow=` overrides (e.g. cortex_m on a Corstone board to run on the CPU under QEMU).

Re-export only on change: out_dir/<name>.export.json records a digest of the model file, the inputs
and calibration files and the options; `needs_export` compares it.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from . import torchvision_compat
from .exporting import FLOWS, ExportError

STAMP_VERSION = 2      # 2: the cortex_m flow lays 4-d models out channels_last


@dataclass(frozen=True)
class ModelSpec:
    file: Path
    name: str

    @classmethod
    def parse(cls, text: str, base: Path | None = None) -> "ModelSpec":
        file, sep, name = str(text).rpartition(":")
        if not sep or not file or not name or not file.endswith(".py"):
            raise ExportError(f"model '{text}': expected <file.py>:<name> (a module or a function "
                              f"returning one, in a Python file)")
        path = Path(file)
        if not path.is_absolute():
            path = (base or Path.cwd()) / path
        if not path.is_file():
            raise ExportError(f"model file not found: {path}")
        return cls(path.resolve(), name)

    def __str__(self) -> str:
        return f"{self.file}:{self.name}"


def load_module_file(path: Path):
    key = "etdeploy_user_model_" + hashlib.sha1(str(path).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(key, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[key] = mod
    try:
        try:
            spec.loader.exec_module(mod)
        except RuntimeError as e:
            if not torchvision_compat.is_broken_import(e):
                raise
            # the file imports torchvision, whose compiled ops do not load here: its models do
            torchvision_compat.forget_partial_import()
            torchvision_compat.import_models()
            spec.loader.exec_module(mod)
    except Exception as e:
        raise ExportError(f"importing {path} failed: {type(e).__name__}: {e}") from e
    return mod


def load_model(spec: ModelSpec):
    """(nn.Module in eval mode, example inputs or None, the loaded Python module)."""
    import torch
    mod = load_module_file(spec.file)
    obj = getattr(mod, spec.name, None)
    if obj is None:
        names = [n for n, v in vars(mod).items() if isinstance(v, type) and issubclass(v, torch.nn.Module)
                 and v.__module__ == mod.__name__]
        raise ExportError(f"{spec.file} has no '{spec.name}'" + (f"; modules there: {', '.join(names)}" if names else ""))
    try:
        model = obj() if callable(obj) and not isinstance(obj, torch.nn.Module) else obj
    except Exception as e:
        raise ExportError(f"building {spec}: {type(e).__name__}: {e}") from e
    if not isinstance(model, torch.nn.Module):
        raise ExportError(f"{spec} is not a torch.nn.Module (nor a class/function returning one)")
    ex = None
    if hasattr(mod, "example_inputs"):
        ex = mod.example_inputs()
        ex = tuple(ex) if isinstance(ex, (tuple, list)) else (ex,)
    return model.eval(), ex, mod


def load_arrays(paths: list[Path] | str) -> list:
    """Tensors from .npy (one array) / .npz (arrays in file order) files."""
    import numpy as np
    import torch
    if isinstance(paths, str):
        paths = [Path(p) for p in paths.split(",") if p]
    out = []
    for p in paths:
        p = Path(p)
        if not p.is_file():
            raise ExportError(f"input file not found: {p}")
        if p.suffix == ".npz":
            with np.load(p) as z:
                out += [torch.from_numpy(np.array(z[k])) for k in z.files]
        elif p.suffix == ".npy":
            out.append(torch.from_numpy(np.load(p)))
        else:
            raise ExportError(f"{p}: inputs and calibration data must be .npy or .npz")
    return out


def calibration_samples(path: Path, example_inputs: tuple) -> list[tuple]:
    """A .npy holds N samples of the only input (N x input shape, or exactly one input's shape);
    a .npz holds one such array per input, in order."""
    arrays = load_arrays([Path(path)])
    if len(arrays) != len(example_inputs):
        raise ExportError(f"calibration file {path} has {len(arrays)} array(s) for a model with "
                          f"{len(example_inputs)} input(s): use one .npz array per input")
    per_input = []
    for a, ex in zip(arrays, example_inputs):
        a = a.to(ex.dtype)
        if tuple(a.shape) == tuple(ex.shape):
            a = a.unsqueeze(0)
        if tuple(a.shape[1:]) != tuple(ex.shape):
            if a.dim() == ex.dim() and a.shape[1:] == ex.shape[1:]:   # N stacked along a batch dim of 1
                a = a.unsqueeze(1)
            else:
                raise ExportError(f"calibration file {path}: samples of shape {tuple(a.shape[1:])}, the model's "
                                  f"input has shape {tuple(ex.shape)}")
        per_input.append(a)
    n = per_input[0].shape[0]
    if any(a.shape[0] != n for a in per_input):
        raise ExportError(f"calibration file {path}: the arrays hold different numbers of samples")
    return [tuple(a[i] for a in per_input) for i in range(n)]


# ---------------------------------------------------------------- board -> flow

def flow_for_board(board, quantize: bool, flow: str | None = None) -> str:
    if flow == "xnnpack" and quantize:
        flow = "xnnpack_q8"
    if flow:
        if flow not in FLOWS:
            raise ExportError(f"unknown flow '{flow}': choose one of {', '.join(FLOWS)}")
        if flow == "ethos_u" and getattr(board, "npu", None) is None:
            raise ExportError(f"flow ethos_u needs a board with an Ethos-U NPU ([npu] in its data); "
                              f"'{board.name}' has none")
        return flow
    x = getattr(board, "xnnpack", None)
    if x is not None and x.default_flow:   # what the board's users ship (Android: the XNNPACK partitioner)
        return "xnnpack_q8" if quantize else "xnnpack"
    if not quantize:
        return "portable"
    if getattr(board, "npu", None) is not None:
        return "ethos_u"
    if board.family == "cortex-m":
        return "cortex_m"
    return "pt2e"


def npu_options(board) -> dict | None:
    npu = getattr(board, "npu", None)
    if npu is None:
        return None
    return {"target": npu.target or f"{npu.kind}-{npu.macs}", "system_config": npu.system_config,
            "memory_mode": npu.memory_mode}


def cpu_name(board) -> str:
    return board.cpu.lower().replace("cortex-", "")


# ---------------------------------------------------------------- re-export only on change

def _digest(path: Path | None) -> str | None:
    if path is None:
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def stamp(spec: ModelSpec, board, flow: str, inputs: list[Path], calibration: Path | None, cases: int) -> dict:
    if flow.startswith("xnnpack"):   # the partitioner's op set decides the program
        from . import export_xnnpack   # and its partitioning rules (the file's code)
        return {**stamp(spec, board, "portable", inputs, calibration, cases), "flow": flow,
                "xnnpack": list(export_xnnpack.CONFIGS), "xnnpack_code": _digest(Path(export_xnnpack.__file__))}
    return {"version": STAMP_VERSION, "model": str(spec), "model_sha256": _digest(spec.file), "flow": flow,
            "npu": npu_options(board) if flow == "ethos_u" else None,
            "cpu": cpu_name(board) if flow == "cortex_m" else None,
            "inputs": [[str(p), _digest(p)] for p in inputs],
            "calibration": [str(calibration), _digest(calibration)] if calibration else None, "cases": cases}


def outputs_for(out_dir: Path, name: str, flow: str) -> list[Path]:
    out = [out_dir / f"{name}.pte", out_dir / f"{name}.etrecord"]
    return out + [out_dir / f"{name}.bpte"]


def needs_export(out_dir: Path, name: str, want: dict) -> bool:
    p = Path(out_dir) / f"{name}.export.json"
    try:
        have = json.loads(p.read_text())
    except (OSError, ValueError):
        return True
    return have != want or not all(f.exists() for f in outputs_for(Path(out_dir), name, want["flow"]))


def export_for_board(spec: ModelSpec, board, out_dir: Path, *, quantize: bool = False, flow: str | None = None,
                     inputs: list[Path] | None = None, calibration: Path | None = None, cases: int = 2,
                     force: bool = False, name: str | None = None):
    """Export (when the stamp says so) and return (ExportResult or None if up to date, program path)."""
    from .exporting import export_model
    flow = flow_for_board(board, quantize, flow)
    inputs = [Path(p) for p in inputs or []]
    name = name or spec.name
    out_dir = Path(out_dir)
    want = stamp(spec, board, flow, inputs, Path(calibration) if calibration else None, cases)
    program = out_dir / f"{name}.bpte"
    if not force and not needs_export(out_dir, name, want):
        return None, program
    model, ex, _ = load_model(spec)
    if inputs:
        ex = tuple(load_arrays(inputs))
    if ex is None:
        raise ExportError(f"{spec.file} has no example_inputs() function: define one (returning a tuple of "
                          f"tensors) or pass --inputs <file.npy|.npz>[,...]")
    import torch
    gen = torch.Generator().manual_seed(0)
    from .exporting import random_like
    case_inputs = [tuple(ex)] + [random_like(tuple(ex), gen) for _ in range(max(0, cases - 1))]
    calib = calibration_samples(Path(calibration), tuple(ex)) if calibration else None
    res = export_model(model, tuple(ex), out_dir, name, flow, case_inputs=case_inputs, calibration=calib,
                       bundle=True, npu=npu_options(board), cpu=cpu_name(board))
    (out_dir / f"{name}.export.json").write_text(json.dumps(want, indent=1) + "\n")
    return res, program
