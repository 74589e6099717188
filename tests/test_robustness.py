"""The C loader and executor under bad programs (issue 8): every truncation and single-byte
corruption of the fixtures ends in a named status under ASan+UBSan; libFuzzer (Debian clang) finds
nothing in a short run; the inputs that once crashed stay fixed. The bake parser raises only typed
errors. The long runs (stride-1 sweeps, >= 10 minute libFuzzer) are in tests/fuzz/README.md."""
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from etdeploy.errors import EtdeployError
from etdeploy.pte import read_program
from fuzz import build as fuzzbuild  # tests/fuzz/build.py

ROOT = Path(__file__).resolve().parents[1]
REGRESSIONS = ROOT / "tests" / "fuzz" / "regressions"
CI_CASES_PER_FILE = 600       # per mode; stride 1 for files up to this size


@pytest.fixture(scope="session")
def harness():
    try:
        return fuzzbuild.build("sweep")
    except fuzzbuild.NoCompiler as e:
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def libfuzzer():
    try:
        return fuzzbuild.build("libfuzzer")
    except fuzzbuild.NoCompiler as e:
        pytest.skip(str(e))


def _once(exe, path, *extra):
    return subprocess.run([str(exe), str(path), *extra], capture_output=True, text=True, timeout=120,
                          env=os.environ | fuzzbuild.SAN_ENV)


@pytest.mark.build
def test_fixtures_run_clean_under_sanitizers(harness):
    for f in fuzzbuild.fixtures():
        p = _once(harness, f, "once")
        assert "Sanitizer" not in p.stderr and "runtime error" not in p.stderr, p.stderr[-3000:]
        if "ethos" in f.name:
            assert "unknown backend" in p.stdout, p.stdout   # no NPU backend on the host: named, not a crash
        else:
            assert p.returncode == 0, f"{f.name}: {p.stdout} {p.stderr[-2000:]}"


@pytest.mark.build
@pytest.mark.parametrize("mode", ["truncate", "corrupt"])
def test_every_prefix_and_byte_gives_a_named_status(harness, mode):
    files = fuzzbuild.fixtures()
    assert files, "no fixtures"
    findings = []
    for f in files:
        size = f.stat().st_size
        stride = max(1, -(-size // CI_CASES_PER_FILE))   # CI sample; stride 1 over all: tests/fuzz/README.md
        try:
            hist = fuzzbuild.sweep(harness, f, mode, stride)
        except AssertionError as e:   # runtime and kernels alike: each names file:line and the case
            findings.append(f"{f.name}: {fuzzbuild.finding_location(str(e))}\n{e}")
            continue
        assert sum(hist.values()) == len(range(0, size, stride)), hist
        assert "bad program" in hist, hist
    assert not findings, "\n\n".join(findings)


@pytest.mark.build
def test_misaligned_arena_offset_is_a_bad_program(harness):
    """add.pte with the output's memory_offset changed from 128 to 1: kernels would store floats at an
    odd address (a fault on Cortex-M VSTR and on Xtensa). Found by the corruption sweep."""
    p = _once(harness, ROOT / "tests" / "models" / "add.pte", "at", "624", "0x01")
    assert p.returncode == 0 and "Sanitizer" not in p.stderr and "runtime error" not in p.stderr, p.stderr[-3000:]
    assert "status 1 bad program" in p.stdout, p.stdout


@pytest.mark.build
def test_int64_expected_output_far_from_the_result_is_a_mismatch(harness):
    """ops_int.bpte with its first int64 expected output's top byte set to 0x80 (about INT64_MIN): the
    bundled check computed got - expected in int64 (signed overflow). Found by libFuzzer."""
    p = _once(harness, ROOT / "tests" / "models" / "ops_int.bpte", "at", "7335", "0x80")
    assert "Sanitizer" not in p.stderr and "runtime error" not in p.stderr, p.stderr[-3000:]
    assert "status 10 output mismatch" in p.stdout, p.stdout


@pytest.mark.build
def test_inputs_that_once_crashed_stay_fixed(libfuzzer):
    cases = sorted(REGRESSIONS.glob("*.bin"))
    assert cases
    p = subprocess.run([str(libfuzzer), "-timeout=30", *map(str, cases)], capture_output=True, text=True, timeout=300,
                       env=os.environ | fuzzbuild.SAN_ENV)
    assert p.returncode == 0, p.stderr[-4000:]
    assert "Sanitizer" not in p.stderr and "runtime error" not in p.stderr, p.stderr[-4000:]


@pytest.mark.build
def test_libfuzzer_short_run_finds_nothing(libfuzzer, tmp_path):
    r = fuzzbuild.fuzz(20, tmp_path)
    log = Path(r["log"]).read_text(errors="replace")
    assert r["executions"] > 100, log[-3000:]
    assert not r["findings"] and r["returncode"] == 0, log[-5000:]


# ---------------------------------------------------------------------------------- bake parser

SMALL = fuzzbuild.fixtures(limit_bytes=40_000)


def _parse(path, data):
    try:
        read_program(path, data)
    except EtdeployError:
        pass        # typed: fine. Anything else escapes and fails the test.


@pytest.mark.unit
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.sampled_from(SMALL), st.data())
def test_bake_parser_raises_only_typed_errors(path, data):
    raw = path.read_bytes()
    how = data.draw(st.sampled_from(["truncate", "bytes", "word", "splice"]))
    b = bytearray(raw)
    if how == "truncate":
        b = b[:data.draw(st.integers(0, len(raw) - 1))]
    elif how == "bytes":
        for _ in range(data.draw(st.integers(1, 4))):
            b[data.draw(st.integers(0, len(b) - 1))] = data.draw(st.integers(0, 255))
    elif how == "word":     # offsets and lengths: 32-bit little-endian fields
        at = data.draw(st.integers(0, len(b) - 4))
        b[at:at + 4] = data.draw(st.sampled_from([0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, len(b), len(b) - at])
                                 ).to_bytes(4, "little")
    else:
        a = data.draw(st.integers(0, len(b) - 1))
        c = data.draw(st.integers(0, len(b) - 1))
        n = data.draw(st.integers(1, 64))
        b[a:a + n] = raw[c:c + n]
    _parse(path, bytes(b))


@pytest.mark.unit
def test_bake_parser_every_prefix_of_a_small_program():
    for name in ("add.pte", "add.bpte", "two_methods.pte"):
        f = ROOT / "tests" / "models" / name
        raw = f.read_bytes()
        for k in range(len(raw)):
            _parse(f, raw[:k])
