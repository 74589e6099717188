"""android-arm64 with XnnpackBackend programs: Debian's arm64 XNNPACK (shared objects tools/bootstrap.sh
unpacks into .cache/arm64-xnnpack) linked dynamically and run under qemu-aarch64, with the outputs of
executorch's own runtime (pybindings, its XNNPACK) as the oracle. Real networks of tests/realmodels at
reduced size, float and int8, all in one image; exports cached by content under .cache/xnnpack-real.
Device runs go through a stand-in `adb` on PATH (no device here) that logs every command, keeps what is
pushed in a directory and runs `adb shell` programs there with qemu-aarch64 and no -L: the pushed files
alone must run the image."""
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from support.compare import assert_close
from support.export_key import flow_sources

from etdeploy import config
from etdeploy.errors import BakeError

NETS = ["ds_cnn", "resnet8"]
PROGRAMS = [(n, f) for n in NETS for f in ("xnnpack", "xnnpack_q8")]
REMOTE = "/data/local/tmp/etdeploy"


def image_dir():
    """This file's own build tree (later tests read its image; other tests rebuild the shared one)."""
    from support.boardrun import BUILD
    return BUILD / "xnnpack-arm64" / "android-arm64"


def need_arm64_xnnpack():
    from support.suite import require_board
    from etdeploy import xnnpack_sysroot
    require_board("android-arm64")
    x = config.load_board("android-arm64").xnnpack
    gone = xnnpack_sysroot.missing(x)
    if gone:
        pytest.skip(f"{gone[0]} missing: {xnnpack_sysroot.bootstrap_step(x)}")


def real_program(root, name: str, flow: str):
    """(.bpte, .pte) of a reduced real network exported with flow, cached by content."""
    import realmodels
    key = realmodels.content_key(f"xnnpack {name} {flow}".encode(), flow_sources("xnnpack"))
    d = root / ".cache" / "xnnpack-real" / f"{name}-{flow}-{key}"
    if not (d / "m.bpte").exists():
        from etdeploy import exporting
        module, ex = realmodels.build(name, small=True)
        exporting.export_model(module, ex, d, "m", flow, cases=2)
    return d / "m.bpte", d / "m.pte"


@pytest.fixture(scope="module")
def arm64_run(root):
    """One android-arm64 image with every program, run once under qemu-aarch64: (result, programs)."""
    need_arm64_xnnpack()
    from support.boardrun import build_and_run
    progs = [real_program(root, n, f) for n, f in PROGRAMS]
    doc = build_and_run("android-arm64", ",".join(str(b) for b, _ in progs), timeout=1200,
                        build_dir=image_dir().parent)
    return doc, progs


def outputs_by_case(doc, program: int) -> dict[int, list[np.ndarray]]:
    got: dict[int, dict[int, np.ndarray]] = {}
    for o, a in zip(doc["outputs"], doc["arrays"]):
        if o["program"] == program and o["method"] == "forward":
            got.setdefault(o.get("case") or 0, {})[o["index"]] = a
    return {k: [v[i] for i in sorted(v)] for k, v in got.items()}


@pytest.mark.build
@pytest.mark.emu
def test_real_networks_equal_executorch_runtime(arm64_run):
    from etdeploy import oracle
    doc, progs = arm64_run
    names = [f"{n}/{f}" for n, f in PROGRAMS]
    assert doc.get("status") == "pass", f"{doc.get('reason')} {doc.get('errors')}\n{doc['_stdout'][-3000:]}"
    assert doc["result"]["cases_failed"] == 0 and doc["result"]["cases"] == 2 * len(progs)
    assert "qemu-aarch64 -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH=" in doc["_stdout"]
    # every program's delegates ran on XNNPACK: each logged the heap it took through our allocator
    assert sum(line.startswith("xnnpack heap: peak") for line in doc["logs"]) >= len(progs)
    for pi, (bpte, pte) in enumerate(progs):
        got = outputs_by_case(doc, pi)
        assert sorted(got) == [0, 1], (names[pi], sorted(got))
        for k, (ins, _) in enumerate(oracle.bundled_cases(bpte)["forward"]):
            ref = oracle.run_reference(pte, ins)          # executorch's runtime with its own XNNPACK
            assert_close(got[k], ref, f"android-arm64 {names[pi]} case {k}", atol=1e-5)
        assert not np.array_equal(got[0][0], got[1][0]), f"{names[pi]}: outputs do not depend on the inputs"


@pytest.mark.build
@pytest.mark.emu
def test_xnnpack_image_is_dynamic_others_static(arm64_run, root):
    from support.boardrun import BUILD
    from etdeploy import bake, xnnpack_sysroot
    elf = image_dir() / "firmware.elf"
    assert xnnpack_sysroot.interpreter(elf) == "/lib/ld-linux-aarch64.so.1"
    assert "libXNNPACK.so.0" in xnnpack_sysroot.needed(elf)
    res = bake.bake([root / "tests" / "models" / "add.pte"], config.load_board("android-arm64"),
                    BUILD / "android-arm64-static-check")
    assert "-static" in res.build_unit().plan.linkflags   # no XNNPACK delegate: static, as before


FAKE_ADB = r'''#!{python}
"""Stands in for adb with a device: logs argv; push copies into FAKE_ADB_DEVICE; shell runs there."""
import json, os, shlex, shutil, subprocess, sys
dev, args = os.environ["FAKE_ADB_DEVICE"], sys.argv[1:]
with open(os.environ["FAKE_ADB_LOG"], "a") as f:
    f.write(json.dumps(args) + "\n")
here = lambda p: dev + p if p.startswith("/data/") else p
if args[0] == "push":
    os.makedirs(os.path.dirname(here(args[2])), exist_ok=True)
    shutil.copyfile(args[1], here(args[2]))
    sys.exit(0)
words = shlex.split(args[-1])
if words[0] in ("chmod", "mkdir"):
    sys.exit(subprocess.run([here(w) for w in words]).returncode)
env = [w for w in words if "=" in w and not w.startswith("/")]
argv = ["qemu-aarch64"] + [x for e in env for x in ("-E", e.split("=")[0] + "=" + here(e.split("=", 1)[1]))]
os.execvp("qemu-aarch64", argv + [here(w) for w in words[len(env):]])
'''


@pytest.fixture
def fake_adb(tmp_path, monkeypatch):
    """(device directory, function returning the logged adb command lines)."""
    bindir, dev, log = tmp_path / "bin", tmp_path / "device", tmp_path / "adb.log"
    bindir.mkdir()
    dev.mkdir()
    (bindir / "adb").write_text(FAKE_ADB.replace("{python}", sys.executable))
    (bindir / "adb").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_ADB_DEVICE", str(dev))
    monkeypatch.setenv("FAKE_ADB_LOG", str(log))
    return dev, lambda: [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.build
@pytest.mark.emu
def test_flash_pushes_shared_objects_and_adb_run_passes(arm64_run, fake_adb, tmp_path):
    """`etdeploy flash` over adb pushes the image, its shared objects and glibc's loader; `etdeploy run`
    over adb then runs the image from the pushed files alone and its bundled cases pass."""
    import subprocess
    from etdeploy import session
    from etdeploy.cli.main import main as etdeploy
    dev, logged = fake_adb
    img = image_dir()
    assert etdeploy(["flash", "--board", "android-arm64", "--image-dir", str(img)]) == 0
    cmds = logged()
    pushed = {c[2].rsplit("/", 1)[1]: c[1] for c in cmds if c[0] == "push"}
    assert cmds[0] == ["push", str(img / "firmware.elf"), f"{REMOTE}/firmware"]
    assert {"libXNNPACK.so.0", "libpthreadpool.so.0", "libcpuinfo.so.0", "libc.so.6",
            "ld-linux-aarch64.so.1"} <= set(pushed), sorted(pushed)
    assert all(Path(src).resolve() == Path(src) for src in pushed.values())   # files, not symlinks
    assert ["shell", f"chmod 755 {REMOTE}/lib/ld-linux-aarch64.so.1"] in cmds
    assert (dev / REMOTE[1:] / "lib" / "libXNNPACK.so.0").stat().st_size > 1_000_000

    res = session.run(config.load_board("android-arm64"), img / "firmware.elf", tmp_path / "run", runner="adb",
                      timeout=600, log=lambda m: None)
    assert res.status == "pass", res.reason
    assert logged()[-1] == ["shell", "-T", f"LD_LIBRARY_PATH={REMOTE}/lib {REMOTE}/lib/ld-linux-aarch64.so.1 "
                                           f"{REMOTE}/firmware"]
    doc = json.loads((tmp_path / "run" / "result.json").read_text())
    assert doc["result"]["cases"] == 2 * len(PROGRAMS) and doc["result"]["cases_failed"] == 0
    # the stand-in really needs the pushed lib/: without it the loader finds no XNNPACK
    p = subprocess.run(["qemu-aarch64", str(dev / REMOTE[1:] / "lib" / "ld-linux-aarch64.so.1"),
                        str(dev / REMOTE[1:] / "firmware")], capture_output=True, timeout=300)
    assert p.returncode != 0 and b"libXNNPACK.so.0" in p.stderr


def test_missing_libraries_name_the_bootstrap_step(root, tmp_path, monkeypatch):
    from etdeploy import bake, xnnpack_sysroot
    bpte, _ = real_program(root, "ds_cnn", "xnnpack")
    monkeypatch.setattr(xnnpack_sysroot, "ROOT", tmp_path)     # a clone where the bootstrap has not run
    board = config.load_board("android-arm64")
    want = (r"libXNNPACK.so.0 missing.*tools/bootstrap.sh.*dpkg --add-architecture arm64.*apt-get download "
            r"libxnnpack0:arm64 libpthreadpool0:arm64 libcpuinfo0:arm64")
    with pytest.raises(BakeError, match=want):
        bake.bake([bpte], board, tmp_path / "gen")


@pytest.mark.build
@pytest.mark.emu
def test_run_without_libraries_names_the_bootstrap_step(arm64_run, tmp_path, monkeypatch):
    """An image built before, run where the unpacked libraries are gone: the runner says what to run."""
    from etdeploy import session, xnnpack_sysroot
    from etdeploy.errors import RunError
    monkeypatch.setattr(xnnpack_sysroot, "ROOT", tmp_path)
    with pytest.raises(RunError, match=r"apt-get download libxnnpack0:arm64"):
        session.run(config.load_board("android-arm64"), image_dir() / "firmware.elf", tmp_path / "run",
                    dry_run=True, log=lambda m: None)


def test_ndk_toolchain_is_refused_naming_the_one_that_links(root, tmp_path, monkeypatch):
    """With ANDROID_NDK_HOME set the board builds with NDK clang (bionic), which cannot link Debian's glibc
    shared objects: bake says which toolchain to use instead."""
    from etdeploy import bake
    bpte, _ = real_program(root, "ds_cnn", "xnnpack")
    bindir = tmp_path / "ndk" / "toolchains/llvm/prebuilt/linux-x86_64/bin"
    bindir.mkdir(parents=True)
    (bindir / "aarch64-linux-android24-clang").write_text("#!/bin/sh\n")
    (bindir / "aarch64-linux-android24-clang").chmod(0o755)
    monkeypatch.setenv("ANDROID_NDK_HOME", str(tmp_path / "ndk"))
    with pytest.raises(BakeError, match=r"android-ndk toolchain cannot; build them with aarch64-linux-gnu.*"
                                        r"ANDROID_NDK_HOME.*--flow portable"):
        bake.bake([bpte], config.load_board("android-arm64"), tmp_path / "gen")
