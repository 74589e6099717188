"""The one content key for cached exports (kernel cases, real networks, benchmarks): what the caller
names (module source, options, the export code it depends on), the reference code that computes the
expected outputs (tools/etdeploy/oracle*.py: a change there must re-compute them) and the torch,
executorch and torchvision versions."""
from __future__ import annotations

import hashlib
import importlib.metadata as md
from pathlib import Path

ETDEPLOY = Path(__file__).resolve().parents[2] / "tools" / "etdeploy"
PACKAGES = ("torch", "executorch", "torchvision")


def reference_sources() -> list[Path]:
    """The reference code: the .pte interpreter and the portable kernels' arithmetic."""
    return sorted(ETDEPLOY.glob("oracle*.py"))


def export_sources(*flow_modules: str) -> list[Path]:
    """The export code a cached program depends on: the driver and the lowering, and the given flow's own
    modules (e.g. "cortex_m_export.py", "view_layout.py"; "export_xnnpack.py")."""
    return [ETDEPLOY / f for f in ("exporting.py", *flow_modules, "export_lowering.py", "export_common.py")]


# each flow's own export modules, besides the driver and the lowering
FLOW_MODULES = {"portable": (),
                "cortex_m": ("cortex_m_export.py", "view_layout.py", "shuffle_layout.py", "conv_offset_fold.py",
                             "norm_as_depthwise.py", "activation_ranges.py", "conv1d_as_conv2d.py",
                             "conv_padding.py", "graph_rewrite.py"),
                "xnnpack": ("export_xnnpack.py",)}


def flow_sources(flow: str) -> list[Path]:
    """export_sources for a flow by name (an unknown one: every flow's modules)."""
    modules = FLOW_MODULES.get(flow) or tuple(m for ms in FLOW_MODULES.values() for m in ms)
    return export_sources(*modules)


def content_key(*parts: bytes | str, files=(), digits: int = 16) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode())
    for f in [*files, *reference_sources()]:
        h.update(Path(f).name.encode() + b"\0" + Path(f).read_bytes())
    for pkg in PACKAGES:
        try:
            h.update(f"{pkg}={md.version(pkg)}".encode())
        except md.PackageNotFoundError:
            pass
    return h.hexdigest()[:digits]
