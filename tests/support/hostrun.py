"""Fast host loop for tests: bake a program for the real host board and compile its build unit
(etdeploy.buildenv.BuildUnit, the description SCons compiles) at -O1 with the sanitizers (objects
cached by content under .cache/hostrun), run it natively through the real runner and link, return
its outputs.

    run_host(pte, inputs=None | [np.ndarray, ...], method="forward") -> [np.ndarray, ...]
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np

from etdeploy import bake, config, session

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "hostrun"
OPT = "1"
EXTRA = ["-fno-omit-frame-pointer"]
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]


def host_board():
    return config.load_board("host")


def _digest(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
    return h.hexdigest()[:20]


def _headers_digest() -> str:
    return _digest(*[p.read_bytes() for p in sorted((ROOT / "firmware").rglob("*.h"))])


def build(pte: Path, opts: dict | None = None, sanitize: bool = True) -> tuple[Path, list]:
    opts = dict(opts or {})
    pte = Path(pte)
    key = _digest(pte.resolve(), sorted(opts.items()), sanitize)
    # one generated tree per pytest-xdist worker: two workers may bake the same program at once
    out = CACHE / "gen" / os.environ.get("PYTEST_XDIST_WORKER", "main") / key
    res = bake.bake([pte], host_board(), out, opts)
    unit = res.build_unit(OPT)
    # The runtime, kernel and board sources see only the bake tree's headers (the schema headers, the
    # same for every program): compiled against a copy of them kept by content, their objects serve
    # every program with the same options, and a program compiles just its own et_model.gen.c.
    shared = _shared_headers(out)
    extra = EXTRA + (SANITIZE if sanitize else [])
    hdr = _headers_digest()
    objs = []
    for src in unit.sources:
        gen = unit.is_generated(src)
        imap = None if gen else {out: shared}
        k = _digest(src.read_bytes(), unit.compile_flags(extra, imap), hdr,
                    *([b.read_bytes() for b in unit.depends] if gen else []))
        obj = CACHE / "obj" / f"{src.stem}-{k}.o"
        if not obj.exists():
            obj.parent.mkdir(parents=True, exist_ok=True)
            tmp = obj.with_suffix(f".{os.getpid()}.tmp.o")   # workers may compile the same object
            _cc(unit.compile_argv(src, tmp, extra, imap))
            tmp.rename(obj)
        objs.append(obj)
    exe = out / "firmware"
    _cc(unit.link_argv(objs, exe, SANITIZE if sanitize else []))
    return exe, res.programs


def _shared_headers(out: Path) -> Path:
    headers = sorted(out.glob("*.h"))
    d = CACHE / "inc" / _digest(*[part for h in headers for part in (h.name, h.read_bytes())])
    if not d.exists():
        tmp = d.with_name(f"{d.name}.{os.getpid()}.tmp")
        tmp.mkdir(parents=True, exist_ok=True)
        for h in headers:
            shutil.copyfile(h, tmp / h.name)
        try:
            tmp.rename(d)
        except OSError:          # another worker put the same headers there first
            shutil.rmtree(tmp)
    return d


def _cc(argv: list[str]) -> None:
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"compile failed: {' '.join(argv)}\n{p.stderr[-4000:]}")


def run_host(pte, inputs=None, method: str = "forward", opts: dict | None = None, timeout: float = 60,
             sanitize: bool = True):
    """Runs the program's method on the host; inputs None = all ones (or the .bpte's test cases).
    Returns the outputs of the (last) execution as numpy arrays."""
    o = dict(opts or {})
    if inputs is not None:
        o["inputs"] = "link"
    exe, progs = build(Path(pte), o, sanitize)
    run_dir = exe.parent / "run"
    prog = progs[0]
    mi = [m.name for m in prog.methods].index(method)
    feed = None
    if inputs is not None:
        feed = [None] * len(prog.methods)
        feed[mi] = [np.asarray(a) for a in inputs]
    res = session.run(host_board(), exe, run_dir, timeout=timeout, inputs=feed, programs=progs, log=lambda m: None)
    outs = [o for o in res.outputs if o.method == mi]
    last_case = outs[-1].case if outs else None
    return [o.value for o in sorted((o for o in outs if o.case == last_case), key=lambda o: o.index)]
