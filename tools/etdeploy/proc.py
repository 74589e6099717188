"""The one subprocess wrapper: every command etdeploy runs goes through `run`, which logs the exact
command line, honours dry-run and a timeout, and raises typed errors (ProcError, ProcTimeout)."""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from .errors import ProcError, ProcTimeout

_log: Callable[[str], None] | None = None
_dry_run = False


def configure(log: Callable[[str], None] | None = None, dry_run: bool | None = None) -> None:
    """Set the process-wide logger (None: quiet) and dry-run default."""
    global _log, _dry_run
    _log = log
    if dry_run is not None:
        _dry_run = bool(dry_run)


def describe(argv: Sequence[str]) -> str:
    return " ".join(shlex.quote(str(a)) for a in argv)


@dataclass
class Result:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    dry_run: bool = False

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def which(binary: str, extra_dirs: Sequence[str | Path] = ()) -> str | None:
    """A binary on PATH, or in one of extra_dirs (toolchain bin dirs named by env vars)."""
    for d in extra_dirs:
        cand = Path(d) / binary
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    return shutil.which(binary)


def run(argv: Sequence[str | Path], *, check: bool = True, timeout: float | None = None,
        dry_run: bool | None = None, cwd: str | Path | None = None, env: dict | None = None,
        input: bytes | str | None = None, log: Callable[[str], None] | None = None,
        text: bool = True) -> Result:
    """Run argv (no shell) and capture its output.

    check: raise ProcError on a non-zero status. timeout: seconds, raises ProcTimeout.
    dry_run: log only, return a Result with returncode 0."""
    argv = [str(a) for a in argv]
    logger = log if log is not None else _log
    if logger:
        logger(describe(argv))
    if _dry_run if dry_run is None else dry_run:
        return Result(argv, 0, "", "", dry_run=True)
    full_env = None
    if env:
        full_env = dict(os.environ)
        full_env.update({k: str(v) for k, v in env.items()})
    try:
        p = subprocess.run(argv, cwd=cwd, env=full_env, input=input, capture_output=True, text=text,
                           timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"") + (e.stderr or b"") if isinstance(e.stdout or b"", bytes) else \
            (e.stdout or "") + (e.stderr or "")
        if isinstance(out, bytes):
            out = out.decode("utf-8", "replace")
        raise ProcTimeout(argv, None, out, timeout=timeout) from None
    except FileNotFoundError:
        raise ProcError(argv, None, f"'{argv[0]}' not found") from None
    stdout = p.stdout if text else p.stdout.decode("utf-8", "replace")
    stderr = p.stderr if text else p.stderr.decode("utf-8", "replace")
    res = Result(argv, p.returncode, stdout or "", stderr or "")
    if check and p.returncode != 0:
        raise ProcError(argv, p.returncode, res.output)
    return res
