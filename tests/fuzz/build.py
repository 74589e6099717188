"""Builds the host harness of tests/fuzz/fuzz_program.c over the real runtime and every kernel, as
the host board's build unit (etdeploy.buildenv.BuildUnit, the description SCons compiles) without
its board support, et_main.c and the link, plus the harness:

- `sweep`: gcc (or clang) with ASan+UBSan and the sweep driver main (truncate / corrupt / once / at);
- `libfuzzer`: Debian clang with -fsanitize=fuzzer,address,undefined (ET_FUZZER drops the main).

Binaries are cached in .cache/fuzz/<hash of every source and header>/. As a script it runs the long
jobs documented in tests/fuzz/README.md:

    .venv/bin/python tests/fuzz/build.py fuzz --seconds 600      # libFuzzer, seeded with the fixtures
    .venv/bin/python tests/fuzz/build.py sweep --stride 1        # every prefix, every byte, every fixture
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __name__ == "__main__":   # as a script: the worktree's package (under pytest, conftest does this)
    sys.path.insert(0, str(ROOT / "tools"))

from etdeploy import bake, buildenv, config, kernels  # noqa: E402

MODELS = ROOT / "tests" / "models"
CACHE = ROOT / ".cache" / "fuzz"
HERE = Path(__file__).resolve().parent
# ET_MAX_STEPS: a corrupted jump that loops ends as BAD_PROGRAM after this many instructions, not a timeout
OPT = "1"
SAN = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer",
       "-DET_MAX_STEPS=100000"]
SKIP = ("et_main.c", "et_link.c", "et_link_rx.c")


class NoCompiler(RuntimeError):
    pass


def fixtures(limit_bytes: int | None = None) -> list[Path]:
    """Every CPU fixture (.pte and .bpte). Ethos-U programs load but their delegate cannot run here;
    they stay in: an unknown/failed delegate must be a named status too."""
    files = sorted(MODELS.glob("*.pte")) + sorted(MODELS.glob("*.bpte"))
    if limit_bytes:
        files = [f for f in files if f.stat().st_size <= limit_bytes]
    return files


def sources() -> list[Path]:
    src = [*bake.runtime_sources(), *kernels.sources_for(set(kernels.catalogue())), HERE / "fuzz_program.c"]
    return [s for s in src if s.name not in SKIP]


def _key(kind: str, cc: str, flags: list[str]) -> str:
    h = hashlib.sha256(kind.encode() + cc.encode() + " ".join(flags).encode())
    for p in sources() + sorted((ROOT / "firmware").rglob("*.h")):
        h.update(p.name.encode() + p.read_bytes())
    return h.hexdigest()[:16]


def clang() -> str | None:
    for c in ("clang", "clang-14", "clang-15", "clang-16"):
        if shutil.which(c):
            return shutil.which(c)
    return None


def build(kind: str = "sweep") -> Path:
    """kind: 'sweep' (ASan+UBSan driver) or 'libfuzzer'. Returns the executable."""
    if kind == "libfuzzer":
        cc = clang()
        if cc is None:
            raise NoCompiler("clang not installed: apt-get install --no-install-recommends clang libclang-rt-14-dev")
        flags = ["-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=undefined",
                 "-fno-omit-frame-pointer", "-DET_FUZZER", "-DET_MAX_STEPS=100000"]
    else:
        cc = shutil.which("gcc") or clang()
        if cc is None:
            raise NoCompiler("no C compiler (gcc or clang)")
        flags = SAN
    out = CACHE / f"{kind}-{_key(kind, cc, flags)}"
    exe = out / ("fuzz_program" if kind == "libfuzzer" else "sweep")
    if exe.exists():
        return exe
    out.mkdir(parents=True, exist_ok=True)
    bake.schema_headers(out)
    (out / "ops_all.gen.c").write_text(kernels.all_ops_c())
    unit = buildenv.unit(config.load_board("host"), OPT, sources=sources() + [out / "ops_all.gen.c"],
                         include_dirs=bake.include_dirs(out), gen_dir=out, with_bsp=False)
    tmp = exe.with_suffix(".tmp")
    argv = unit.link_argv([], tmp, [*unit.compile_flags(flags), *map(str, unit.sources)], cc=cc)
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"building the {kind} harness failed:\n{p.stderr[-4000:]}")
    tmp.replace(exe)   # atomic: a concurrent test never sees a half-written binary
    return exe


def seed_corpus(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for f in fixtures():
        shutil.copyfile(f, dest / f.name)
    return dest


SAN_ENV = {"ASAN_OPTIONS": "abort_on_error=1:detect_leaks=0:allocator_may_return_null=1",
           "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:abort_on_error=1"}


def sweep(exe: Path, path: Path, mode: str, stride: int = 1, timeout: float = 900) -> dict[str, int]:
    """Runs one sweep; raises AssertionError with the failing case on a crash, hang or report."""
    env = os.environ | SAN_ENV
    p = subprocess.run([str(exe), str(path), mode, str(stride)], capture_output=True, text=True,
                       timeout=timeout, env=env)
    bad = p.returncode != 0 or "runtime error" in p.stderr or "Sanitizer" in p.stderr
    assert not bad, f"{path.name} {mode} stride {stride}: crash, hang or sanitizer report\n{p.stderr[-4000:]}"
    hist = dict(re.findall(r"^([a-z ]+): (\d+)$", p.stdout, re.M))
    return {k: int(v) for k, v in hist.items()}


def finding_location(report: str) -> str | None:
    """file:line of the first sanitizer report (or of its first stack frame) in a run's stderr."""
    m = re.search(r"^(/\S+?:\d+):\d+: runtime error", report, re.M) or re.search(r"#\d+ 0x[0-9a-f]+ in \S+ (/\S+?:\d+)", report)
    return m.group(1) if m else None


def fuzz(seconds: int, workdir: Path, jobs: int = 1, extra: list[str] | None = None) -> dict:
    """Runs libFuzzer for `seconds`; returns {executions, findings, corpus, log}."""
    exe = build("libfuzzer")
    corpus = workdir / "corpus"
    seeds = seed_corpus(workdir / "seeds")
    corpus.mkdir(parents=True, exist_ok=True)
    arts = workdir / "artifacts"
    arts.mkdir(parents=True, exist_ok=True)
    log = workdir / "fuzz.log"
    max_len = max(f.stat().st_size for f in fixtures()) + 1024
    argv = [str(exe), str(corpus), str(seeds), f"-max_total_time={seconds}", f"-max_len={max_len}",
            "-timeout=10", "-rss_limit_mb=2048", "-print_final_stats=1", f"-artifact_prefix={arts}/",
            *(extra or [])]
    if jobs > 1:
        argv += [f"-jobs={jobs}", f"-workers={jobs}"]
    t0 = time.monotonic()
    with open(log, "w") as f:
        p = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, env=os.environ | SAN_ENV)
    text = log.read_text(errors="replace")
    execs = max([int(x) for x in re.findall(r"stat::number_of_executed_units:\s*(\d+)", text)] +
                [int(x) for x in re.findall(r"^#(\d+):? ", text, re.M)] or [0])
    findings = sorted(a.name for a in arts.iterdir())
    return {"executions": execs, "findings": findings, "returncode": p.returncode,
            "seconds": round(time.monotonic() - t0, 1), "corpus": len(list(corpus.iterdir())), "log": str(log)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fuzz")
    f.add_argument("--seconds", type=int, default=600)
    f.add_argument("--workdir", type=Path, default=CACHE / "run")
    f.add_argument("--explore", action="store_true",
                   help="fork mode that keeps going after a finding (collects several at once)")
    s = sub.add_parser("sweep")
    s.add_argument("--stride", type=int, default=1)
    s.add_argument("--mode", choices=["truncate", "corrupt", "both"], default="both")
    sub.add_parser("build")
    a = ap.parse_args(argv)
    if a.cmd == "build":
        print(build("sweep"))
        print(build("libfuzzer"))
        return 0
    if a.cmd == "fuzz":
        r = fuzz(a.seconds, a.workdir, extra=["-fork=1", "-ignore_crashes=1", "-ignore_timeouts=1", "-ignore_ooms=1"]
                 if a.explore else None)
        print(json.dumps(r, indent=1))
        return 0 if not r["findings"] and r["returncode"] == 0 else 1
    exe = build("sweep")
    modes = ["truncate", "corrupt"] if a.mode == "both" else [a.mode]
    total = 0
    t0 = time.monotonic()
    for fx in fixtures():
        for m in modes:
            h = sweep(exe, fx, m, a.stride, timeout=24 * 3600)
            total += sum(h.values())
            print(f"{fx.name:28s} {m:8s} {sum(h.values()):7d} cases  {h}", flush=True)
    print(f"{total} cases in {time.monotonic() - t0:.0f} s, no crash, hang or sanitizer report")
    return 0


if __name__ == "__main__":
    sys.exit(main())
