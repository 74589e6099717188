"""The functions the CLI calls, for flash-and-run scripts: build an image, flash it, run it (on the
board's emulator, or on a device through its serial port) and get typed results or typed errors.

    from etdeploy import api
    img = api.build("corstone300", "model.pte", inputs_over_link=True)
    run = api.run(img, port="/dev/ttyACM0", gdb="localhost:3333", inputs=[x])
    # opens the port, flashes through the GDB server (or the board's method; flash=False: neither),
    # then reads the link; api.flash(img, gdb=...) flashes alone
    print(run.outputs[0].argmax())

Failures raise etdeploy.errors classes (re-exported here): RunTimeout, RunFault (reason names the
function), LinkError, FlashError, DeviceNotFound, BuildError ...; each carries .exit_code, and run
errors carry .result (what the target said before it went wrong)."""
from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import (BadInputs, BuildError, DeviceNotFound, EtdeployError, FlashError, LinkError,  # noqa: F401
                     RunError, RunFault, RunMismatch, RunTimeout)

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Image:
    board: str
    elf: Path

    @property
    def dir(self) -> Path:
        return self.elf.parent


@dataclass
class Run:
    status: str                        # "pass" (anything else raised)
    reason: str
    outputs: list[np.ndarray]          # the forward method's outputs of the last execution, in order
    run_dir: Path                      # result.json, outputs, etdump.etdp
    cases_passed: int = 0
    cases: int = 0
    methods: list = field(default_factory=list)
    seconds: float = 0.0
    flashed: object = None             # the gdb FlashReport when run() flashed through a GDB server


def _board(name: str):
    from . import config
    return config.load_board(name)


def build(board: str, pte, build_dir=None, inputs_over_link: bool = False, options: dict | None = None) -> Image:
    """scons board=<board> pte=<pte> [inputs=link] [name=value...]; BuildError with SCons's last lines."""
    b = _board(board)
    ptes = ",".join(str(Path(p).resolve()) for p in ([pte] if isinstance(pte, (str, Path)) else pte))
    argv = [sys.executable, "-m", "SCons", "-Q", f"board={b.name}", f"pte={ptes}"]
    if build_dir:
        argv.append(f"build_dir={Path(build_dir).resolve()}")
    if inputs_over_link:
        argv.append("inputs=link")
    argv += [f"{k}={v}" for k, v in (options or {}).items()]
    p = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    if p.returncode:
        raise BuildError(f"build for {b.name} failed (scons exit {p.returncode}): "
                         f"{(p.stdout + p.stderr).strip()[-1500:]}")
    elf = (Path(build_dir).resolve() if build_dir else ROOT / "build") / b.name / "firmware.elf"
    if not elf.exists():
        raise BuildError(f"scons succeeded but left no image at {elf}")
    return Image(b.name, elf)


def flash(image: Image, gdb: str | None = None, log=lambda msg: None):
    """Through a GDB server (gdb=HOST:PORT) or the board's [flash] method. Returns the gdb FlashReport
    (sections verified, entry) or None for other methods."""
    b = _board(image.board)
    if gdb:
        from .runners.gdbserver import gdb_flash
        return gdb_flash(b, image.elf, gdb, log=log)
    from .runners import flasher_for
    return flasher_for(b, log=log).flash(image.dir)


flash_image = flash   # run() has a parameter named flash


def run(image: Image, port: str | None = None, gdb: str | None = None, flash: bool = True, baud: int | None = None,
        inputs: list[np.ndarray] | None = None, timeout: float | None = None, run_dir=None,
        log=lambda msg: None) -> Run:
    """On the device behind `port` (flashed through `gdb` or the board's method first, unless flash=False),
    or on the board's emulator when no port is given. Inputs go to the forward method over the link."""
    from . import session
    b = _board(image.board)
    runner = None
    if port:
        from .runners.serialport import SerialDeviceRunner
        step = None
        if flash:
            step = lambda elf: flash_image(image, gdb=gdb, log=log)  # noqa: E731
        runner = SerialDeviceRunner(b, port, baud, flash=step, log=log)
    elif gdb or not flash:
        raise RunError("gdb= and flash=False are for runs on a device: give its serial port (port=)")
    rd = Path(run_dir) if run_dir else image.dir / "run"
    arrays = None if inputs is None else [[np.asarray(a) for a in inputs]]
    res = session.run(b, image.elf, rd, timeout=timeout, inputs=arrays, runner=runner, log=log)
    fwd = [o for o in res.outputs if o.program == 0 and o.method == 0]
    last = max((o.case or 0 for o in fwd if getattr(o, "case", None) is not None), default=None)
    if last is not None:
        fwd = [o for o in fwd if (o.case or 0) == last]
    outs = [np.asarray(o.value) for o in sorted(fwd, key=lambda o: o.index)]
    return Run(status=res.status, reason=res.reason, outputs=outs, run_dir=rd,
               cases_passed=sum(1 for c in res.cases if c["passed"]), cases=len(res.cases),
               methods=list(res.methods), seconds=res.elapsed, flashed=getattr(runner, "flashed", None))
