"""What the export driver (exporting.py) and the lowering per flow (export_lowering.py) share: the
flows' names, the Ethos-U defaults, the export errors and the progress messages on stderr."""
from __future__ import annotations

import sys
import time
from typing import Sequence

from etdeploy.errors import EtdeployError

FLOWS = ("portable", "pt2e", "cortex_m", "ethos_u", "xnnpack", "xnnpack_q8")    # xnnpack*: export_xnnpack
CPU_FLOWS = ("portable", "pt2e", "cortex_m", "xnnpack", "xnnpack_q8")
USER_FLOWS = ("portable", "pt2e", "cortex_m", "ethos_u", "xnnpack")   # what --flow / flow= take (xnnpack_q8 = xnnpack + quantize)
ARM_PACKAGES = ("ethos-u-vela==5.1.0", "tosa-tools==2026.5.0", "ml_dtypes==0.5.1")
ETHOS_U_TARGET = "ethos-u55-128"
ETHOS_U_DEFAULT = {"target": ETHOS_U_TARGET, "system_config": "Ethos_U55_High_End_Embedded",
                   "memory_mode": "Shared_Sram"}


class ExportError(EtdeployError):
    """A model could not be exported with the requested flow."""


class MissingArmPackages(ExportError):
    def __init__(self, missing: Sequence[str]):
        self.missing = list(missing)
        super().__init__(
            f"the ethos_u flow needs the Arm packages ({', '.join(self.missing)} not importable). "
            f"Install them: pip install {' '.join(ARM_PACKAGES)}  (or pip install -r requirements-arm.txt)")


def _say(msg: str) -> None:
    print(f"[export] {msg}", file=sys.stderr, flush=True)


class _Step:
    """Progress message around a slow step: '... ' then 'done in N s'."""

    def __init__(self, what: str):
        self.what = what

    def __enter__(self):
        self.t0 = time.monotonic()
        _say(self.what + " ...")
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            _say(f"{self.what}: {time.monotonic() - self.t0:.1f} s")
        return False
