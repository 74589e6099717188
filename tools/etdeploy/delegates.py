"""The hook a delegate backend implements for bake (one object per backend id a program may name).

bake asks each delegate in a program for its backend; the backend checks that this build can carry
it (check), adds what it knows to the report (describe), and contributes its generated C, sources,
include dirs, defines and fit entries (contribute). Only Ethos-U has one today (npu_plan)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class BackendPart:
    """What a backend adds to a build."""
    generated: list[Path] = field(default_factory=list)
    sources: list[Path] = field(default_factory=list)
    include_dirs: list[Path] = field(default_factory=list)
    defines: dict = field(default_factory=dict)
    model_c: str = ""            # appended to et_model.gen.c (e.g. weights used in place)
    report: dict = field(default_factory=dict)
    libs: list[str] = field(default_factory=list)   # link libraries (from the board's data)
    linkflags: list[str] = field(default_factory=list)        # e.g. -L<dir> for libraries outside the toolchain
    drop_linkflags: list[str] = field(default_factory=list)   # toolchain flags that cannot stay (-static)


class DelegateBackend:
    backend = ""                 # the backend id programs name (e.g. "EthosUBackend")
    report_key = ""              # where contribute()'s report goes in bake's report

    def check(self, program, method, delegate, opts: dict) -> None:
        """Raise BakeError when this build cannot carry the delegate (say which option helps)."""

    def describe(self, program, delegate) -> dict:
        """Extra report fields for one delegate."""
        return {}

    def contribute(self, progs, board, out_dir: Path, opts: dict, blobs: list[Path], fit: dict,
                   model_region: str | None) -> BackendPart:
        return BackendPart()


def backends() -> dict[str, DelegateBackend]:
    from .npu_plan import EthosUDelegate
    from .xnnpack_delegate import XnnpackDelegate
    return {b.backend: b for b in (EthosUDelegate(), XnnpackDelegate())}
