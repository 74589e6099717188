"""Markers and skip policy.

unit: no toolchain. build: needs a cross toolchain. emu: needs an emulator. slow: long-running.
A build/emu test skips only when the tool it needs is truly absent (use `need_tool`), and when the
environment variable CI is set such a skip is turned into a failure: on CI every tool must be
there, so a skip would hide a broken bootstrap."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "tools") not in sys.path:
    sys.path.insert(0, str(ROOT / "tools"))

MARKERS = {
    "unit": "no toolchain needed",
    "build": "needs a cross toolchain",
    "emu": "needs an emulator",
    "slow": "long-running (re-export of fixtures)",
}
STRICT = ("build", "emu")


def pytest_configure(config):
    for name, doc in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")


def on_ci() -> bool:
    return bool(os.environ.get("CI"))


def need_tool(binary: str, package: str = "") -> str:
    """The path of binary, or skip (fail under CI) naming the package that provides it."""
    path = shutil.which(binary)
    if path is None:
        msg = f"{binary} not installed" + (f" (apt-get install {package})" if package else "")
        if on_ci():
            pytest.fail(f"CI: {msg}; marked tests may not skip on CI")
        pytest.skip(msg)
    return path


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if not (rep.skipped and on_ci()) or hasattr(rep, "wasxfail"):
        return
    marks = {m.name for m in item.iter_markers()}
    if marks & set(STRICT):
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        rep.outcome = "failed"
        rep.longrepr = f"skipped under CI, which is not allowed for {'/'.join(sorted(marks & set(STRICT)))} " \
                       f"tests: {reason}"


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
