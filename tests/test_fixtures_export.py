"""Export library behaviour that needs no executorch import: typed errors and their messages."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from etdeploy import exporting
from etdeploy.errors import EtdeployError


@pytest.mark.unit
def test_unknown_flow_is_a_typed_error(tmp_path):
    with pytest.raises(exporting.ExportError, match="unknown export flow 'tflite'.*portable"):
        exporting.export_model(object(), (), tmp_path, "m", flow="tflite")


@pytest.mark.unit
def test_missing_arm_packages_named(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("ethosu", "tosa") else real(name, *a))
    with pytest.raises(exporting.MissingArmPackages) as e:
        exporting._check_arm_packages()
    assert isinstance(e.value, EtdeployError)
    msg = str(e.value)
    assert "ethos-u-vela" in msg and "tosa-tools" in msg and "ethos-u-vela==5.1.0" in msg


@pytest.mark.unit
def test_importing_exporting_and_oracle_is_cheap():
    import subprocess
    code = ("import sys; sys.path.insert(0, 'tools'); import etdeploy.exporting, etdeploy.oracle; "
            "print(any(m.startswith(('executorch', 'torch')) for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "False"   # executorch/torch are imported lazily, inside the flows
