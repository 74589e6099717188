"""The C loader and executor under bad programs: every truncation and single-byte corruption of
the fixtures ends in a named status, under ASan+UBSan (issue 8). The bake parser likewise raises
only typed errors."""
import hashlib
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from etdeploy import bake, fbs, kernels
from etdeploy.errors import EtdeployError
from etdeploy.pte import read_program

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "tests" / "models"
CACHE = ROOT / ".cache" / "fuzz"
SAN = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g", "-O1"]


def fixtures(limit_bytes=None):
    files = sorted(MODELS.glob("*.pte")) + sorted(MODELS.glob("*.bpte"))
    files = [f for f in files if "ethos" not in f.name]
    if limit_bytes:
        files = [f for f in files if f.stat().st_size <= limit_bytes]
    return files


@pytest.fixture(scope="session")
def harness():
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    src = [*bake.runtime_sources(), *kernels.sources_for(set(kernels.catalogue())),
           ROOT / "tests" / "fuzz" / "fuzz_program.c"]
    src = [s for s in src if s.name not in ("et_main.c", "et_link.c", "et_link_rx.c")]
    key = hashlib.sha256(b"".join(p.read_bytes() for p in src + sorted((ROOT / "firmware").rglob("*.h"))))
    out = CACHE / key.hexdigest()[:16]
    exe = out / "sweep"
    if not exe.exists():
        out.mkdir(parents=True, exist_ok=True)
        bake.schema_headers(out)
        (out / "ops_all.gen.c").write_text(kernels.all_ops_c())
        inc = [f"-I{d}" for d in (ROOT / "firmware" / "runtime", ROOT / "firmware" / "kernels",
                                  ROOT / "firmware" / "boards", out)]
        subprocess.run(["gcc", "-std=c11", *SAN, *inc, *map(str, src), str(out / "ops_all.gen.c"), "-lm",
                        "-o", str(exe)], check=True)
    return exe


def sweep(exe, path, mode, stride=1):
    p = subprocess.run([str(exe), str(path), mode, str(stride)], capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, f"{path.name} {mode}: crashed or sanitizer report\n{p.stderr[-3000:]}"
    assert "runtime error" not in p.stderr and "AddressSanitizer" not in p.stderr, p.stderr[-3000:]
    hist = dict(re.findall(r"^([a-z ]+): (\d+)$", p.stdout, re.M))
    return {k: int(v) for k, v in hist.items()}


@pytest.mark.build
def test_fixtures_run_clean_under_sanitizers(harness):
    for f in fixtures():
        p = subprocess.run([str(harness), str(f), "once"], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, f"{f.name}: {p.stdout} {p.stderr[-2000:]}"


@pytest.mark.build
@pytest.mark.parametrize("mode", ["truncate", "corrupt"])
def test_every_prefix_and_byte_gives_a_named_status(harness, mode):
    files = fixtures()
    assert files, "no fixtures"
    for f in files:
        size = f.stat().st_size
        stride = max(1, size // 4000)   # CI: ~4000 cases per file; `stride=1` runs documented in BENCHMARKS.md
        hist = sweep(harness, f, mode, stride)
        assert sum(hist.values()) == len(range(0, size, stride))
        assert "bad program" in hist


@pytest.mark.unit
def test_bake_parser_raises_only_typed_errors():
    files = fixtures(limit_bytes=200_000)
    assert files
    rng = random.Random(3)
    for f in files:
        data = f.read_bytes()
        cases = [data[:k] for k in sorted({rng.randrange(len(data)) for _ in range(150)})]
        for _ in range(300):
            b = bytearray(data)
            for _ in range(rng.randrange(1, 4)):
                b[rng.randrange(len(b))] = rng.randrange(256)
            cases.append(bytes(b))
        for c in cases:
            try:
                read_program(f, c)
            except EtdeployError:
                pass
