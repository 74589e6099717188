"""A throw-away virtualenv for tools the glue tests consult but the project does not depend on
(PlatformIO's manifest parser, kconfiglib): created once under the ignored .cache/, never in the
shared venv. None when the packages cannot be installed here (no registry)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".cache" / "tool-venv"
PACKAGES = ["platformio==6.2.0", "kconfiglib==14.1.0"]


def python() -> Path | None:
    py = VENV / "bin" / "python"
    stamp = VENV / ".installed"
    if stamp.exists() and stamp.read_text() == "\n".join(PACKAGES) + "\n":
        return py
    try:
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True, capture_output=True, timeout=120)
        subprocess.run([py, "-m", "pip", "install", "-q", *PACKAGES], check=True, capture_output=True, timeout=400)
    except (subprocess.SubprocessError, OSError):
        return None
    stamp.write_text("\n".join(PACKAGES) + "\n")
    return py


def run(script: str, *args) -> subprocess.CompletedProcess:
    return subprocess.run([python(), "-c", script, *map(str, args)], capture_output=True, text=True, timeout=120)
