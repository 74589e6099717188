"""Export the committed fixture corpus with the real executorch 1.5.1 into tests/models/.

    .venv/bin/python tests/models/export.py [--out DIR] [--only NAME,...] [--no-manifest]

Writes <name>.pte, <name>.etrecord, <name>.bpte (CPU programs), <name>.ones.npz (real runtime's
outputs for all-ones inputs, programs it can run) and manifest.json. Deterministic: fixed seeds.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tools"))
sys.path.insert(0, str(HERE))

import torch  # noqa: E402
from torch import nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from corpus_ops import OP_MODELS, REQUIRED  # noqa: E402
from manifest import entry_for, write_manifest  # noqa: E402


# ---------------------------------------------------------------- core models

class Add(nn.Module):
    def forward(self, x, y):
        return x + y


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(784, 32), nn.Linear(32, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class CNN(nn.Module):
    def __init__(self, hwc_flatten=False):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 7 * 7, 10)
        self.hwc_flatten = hwc_flatten

    def forward(self, x):                      # 1x1x14x14
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        if self.hwc_flatten:                   # flatten in NHWC order: a true alias of NHWC memory
            x = x.permute(0, 2, 3, 1)
        return self.fc(x.flatten(1))


class CNNChannelsLast(CNN):
    def __init__(self):
        super().__init__(hwc_flatten=True)


def _seeded(cls, seed=0):
    torch.manual_seed(seed)
    return cls().eval()


def core_models():
    """name -> (module factory, example inputs, flow, export kwargs)"""
    mlp_in = (torch.randn(1, 784, generator=torch.Generator().manual_seed(1)),)
    cnn_in = (torch.randn(1, 1, 14, 14, generator=torch.Generator().manual_seed(2)),)
    cnn_nhwc = (cnn_in[0].contiguous(memory_format=torch.channels_last),)
    add_in = (torch.ones(2, 8), torch.ones(2, 8))
    return {
        "add": (lambda: Add(), add_in, "portable", {}),
        "mlp": (lambda: _seeded(MLP), mlp_in, "portable", {}),
        "cnn": (lambda: _seeded(CNN), cnn_in, "portable", {}),
        "mlp_pt2e": (lambda: _seeded(MLP), mlp_in, "pt2e", {}),
        "mlp_cortex_m": (lambda: _seeded(MLP), mlp_in, "cortex_m", {}),
        # CortexMQuantizer lowers convolutions only when every tensor of the pattern is channels_last;
        # with one input channel NCHW and NHWC coincide, so the weights must be channels_last too.
        # The flatten is done in NHWC order: the legacy Cortex-M passes drop the layout change a
        # plain flatten of an NHWC tensor needs (the planned alias then reads NHWC order).
        "cnn_cortex_m": (lambda: _seeded(CNNChannelsLast).to(memory_format=torch.channels_last), cnn_nhwc,
                         "cortex_m", {}),
        "add_ethos_u": (lambda: Add(), (torch.ones(1, 8), torch.ones(1, 8)), "ethos_u", {}),
        "mlp_ethos_u": (lambda: _seeded(MLP), mlp_in, "ethos_u", {}),
    }


class TwoMethodsA(nn.Module):
    def forward(self, x):
        return torch.relu(x * 2.0 + 1.0)


class TwoMethodsB(nn.Module):
    def forward(self, x, y):
        return torch.cat([x - y, x * y], dim=1)


def multi_method_models():
    return {"two_methods": {"forward": (TwoMethodsA(), (torch.randn(2, 4),)),
                            "combine": (TwoMethodsB(), (torch.randn(2, 3), torch.randn(2, 3)))}}


# ---------------------------------------------------------------- driver

def _ones_npz(res, out_dir):
    """Real runtime's outputs for all-ones inputs, per method (programs the host runtime can run)."""
    import numpy as np
    from etdeploy import oracle
    if res.delegates or res.flow == "cortex_m":
        return None
    arrays = {}
    for method in res.operators:
        for i, a in enumerate(oracle.run_reference(res.pte, None, method)):
            arrays[f"{method}.{i}"] = a
    path = out_dir / f"{res.name}.ones.npz"
    with open(path, "wb") as f:          # fixed zip timestamps: np.savez is byte-deterministic
        np.savez(f, **arrays)
    return path


def export_all(out_dir: Path, only: set[str] | None = None, manifest: bool = True) -> dict:
    from etdeploy.exporting import export_methods, export_model
    out_dir.mkdir(parents=True, exist_ok=True)
    jobs = []
    for name, (factory, ex, flow, kw) in list(core_models().items()) + list(OP_MODELS().items()):
        jobs.append((name, lambda f=factory, ex=ex, flow=flow, kw=kw, name=name:
                     export_model(f(), ex, out_dir, name, flow, seed=0, **kw)))
    for name, methods in multi_method_models().items():
        jobs.append((name, lambda m=methods, name=name: export_methods(m, out_dir, name, seed=0)))
    entries = {}
    for name, job in jobs:
        if only and name not in only:
            continue
        res = job()
        ones = _ones_npz(res, out_dir)
        entries.update(entry_for(res, ones))
        ops = sorted({o for v in res.operators.values() for o in v})
        print(f"{name:22s} {res.flow:9s} {res.pte.stat().st_size:8d} B  cases={res.cases}  "
              f"delegates={','.join(res.delegates) or '-'}  ops={' '.join(ops)}", flush=True)
    if manifest and not only:
        write_manifest(out_dir / "manifest.json", entries)
        check_required(entries)
    return entries


def check_required(entries: dict) -> list[str]:
    present = {op for e in entries.values() for m in e["methods"].values() for op in m["operators"]}
    missing = [label for label, alts in REQUIRED.items() if not any(a in present for a in alts)]
    print(f"required operator coverage: {len(REQUIRED) - len(missing)}/{len(REQUIRED)}"
          + (f"; MISSING: {', '.join(missing)}" if missing else ""))
    return missing


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, default=HERE)
    ap.add_argument("--only", default="")
    ap.add_argument("--no-manifest", action="store_true")
    a = ap.parse_args(argv)
    only = set(filter(None, a.only.split(","))) or None
    export_all(a.out, only, not a.no_manifest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
