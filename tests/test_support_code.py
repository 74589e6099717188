"""The test support code's own promises: a failed board build fails the test with the build's error
(never a result left by an earlier run)."""
from __future__ import annotations

import json

import pytest

from support import boardrun

pytestmark = pytest.mark.unit


def test_failed_build_is_not_read_as_the_last_run(tmp_path, monkeypatch):
    """scons stops at bake (not an executorch program) before any compiler runs; a passing result.json
    from an earlier run sits where the run would write its own."""
    monkeypatch.setattr(boardrun, "BUILD", tmp_path / "build")
    stale = tmp_path / "build" / "host" / "run"
    stale.mkdir(parents=True)
    (stale / "result.json").write_text(json.dumps({"status": "pass", "reason": "an earlier run", "outputs": [
        {"program": 0, "method": "forward", "index": 0, "values": [1.0]}]}))
    junk = tmp_path / "junk.pte"
    junk.write_bytes(b"\x10\x00\x00\x00NOPE" + bytes(56))
    with pytest.raises(AssertionError) as e:
        boardrun.build_and_run("host", junk, timeout=300)
    msg = str(e.value)
    assert "no run (scons exit 4)" in msg and "not an executorch program" in msg, msg
    with pytest.raises(AssertionError, match="not an executorch program"):
        boardrun.outputs_per_program("host", [junk], timeout=300)
