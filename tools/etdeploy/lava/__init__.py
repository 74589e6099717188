"""Device-farm jobs on LAVA (issue 17).

jobs.py writes one LAVA job definition per (board, image) from the board's TOML; dispatcher.py
checks it with LAVA's own schema and runs it with a local `lava-run`; logs.py turns a finished
job's log back into result.json and the same typed errors as a local run; server.py submits to a
LAVA server over XML-RPC.

LAVA judges a run from console text, our link is binary: images for the farm are built with
link=text (each frame as a hex line, CRC-checked as before, plus a verdict line with its own CRC).
LAVA's pass/fail comes from that verdict line; etdeploy's comes from the decoded frames, as locally."""
from __future__ import annotations

from .. import errors


class NoFarmMethod(errors.ConfigError):
    """The board's data names no way LAVA could run or flash it."""


class JobRefused(errors.ConfigError):
    """LAVA's schema (or the dispatcher's validation) refuses a job definition."""


class DispatcherMissing(errors.EmulatorMissing):
    """lava-run / lava_common are not installed here."""


class FarmUnreachable(errors.EtdeployError):
    """The LAVA server at LAVA_URL cannot be reached or refuses the token."""


class FarmJobFailed(errors.RunError):
    """The farm ran the job but it ended Incomplete/Canceled with no log to judge."""
