"""The test support code's own promises: a failed board build fails the test with the build's error
(never a result left by an earlier run); export cache keys change with the reference code."""
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


def test_export_key_follows_the_reference_code(tmp_path, monkeypatch):
    """Cached expected outputs come from tools/etdeploy/oracle*.py: editing either file changes every
    export key (kernel cases, real networks, benchmarks all take theirs from support.export_key)."""
    import shutil
    from support import export_key, kernelcase
    from realmodels import content_key as realmodels_key
    names = {p.name for p in export_key.reference_sources()}
    assert {"oracle.py", "oracle_portable.py"} <= names, names
    for p in [*export_key.reference_sources(), *export_key.flow_sources("cortex_m")]:
        shutil.copy(p, tmp_path / p.name)
    monkeypatch.setattr(export_key, "ETDEPLOY", tmp_path)
    before = (export_key.content_key("x"), kernelcase._hash("src", ["cortex_m"], "cortex_m"), realmodels_key(b"x"))
    assert before == (export_key.content_key("x"), kernelcase._hash("src", ["cortex_m"], "cortex_m"), realmodels_key(b"x"))
    for name in ("oracle.py", "oracle_portable.py"):
        with open(tmp_path / name, "a") as f:
            f.write("\n# changed\n")
        after = (export_key.content_key("x"), kernelcase._hash("src", ["cortex_m"], "cortex_m"), realmodels_key(b"x"))
        assert all(a != b for a, b in zip(before, after)), f"{name}: {before} -> {after}"
        before = after
    # a kernel case's key follows its flow's export code as well
    for name in ("cortex_m_export.py", "export_lowering.py"):
        key = kernelcase._hash("src", ["cortex_m"], "cortex_m")
        with open(tmp_path / name, "a") as f:
            f.write("\n# changed\n")
        assert kernelcase._hash("src", ["cortex_m"], "cortex_m") != key, name


def _etdeploy_imports(path) -> set[str]:
    """Names of the etdeploy modules a source file imports (relative or absolute)."""
    import ast
    names = set()
    for n in ast.walk(ast.parse(path.read_text())):
        if isinstance(n, ast.ImportFrom) and n.level == 1:
            names |= {n.module.split(".")[0]} if n.module else {a.name for a in n.names}
        elif isinstance(n, ast.ImportFrom) and (n.module or "").startswith("etdeploy."):
            names.add(n.module.split(".")[1])
    return names


def test_export_keys_cover_every_export_module():
    """A new export pass imported by the lowering must join FLOW_MODULES, or cached kernel cases and real
    networks keep programs exported by the old code (two export passes were missing from it once)."""
    from support import export_key
    etdeploy = export_key.ETDEPLOY
    seen, todo = set(), ["exporting", "export_lowering", "export_common"]
    while todo:
        name = todo.pop()
        if name not in seen and (etdeploy / f"{name}.py").exists():
            seen.add(name)
            todo += _etdeploy_imports(etdeploy / f"{name}.py")
    # read the .pte, count MACs, name dtypes and errors: they do not change what is exported
    not_program = {"dtypes", "errors", "fbs", "pte", "program_macs"}
    keyed = {p.stem for p in [*export_key.reference_sources(), *export_key.flow_sources("any")]}
    assert seen - not_program - keyed == set()
