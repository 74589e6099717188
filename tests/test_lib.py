"""Issue 18: the baked program + runtime as a library (libetmodel.a + etmodel.h + glue) inside
firmware that is not ours, built with Debian's cmake against the generated package: on the host,
and on Cortex-M55 (QEMU mps3-an547) with the user's own startup and linker script. Outputs must
equal the .bpte's bundled expected outputs."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import need_tool
from etdeploy import config, errors, library, libglue
from etdeploy.pte import read_program
from etdeploy.results import expected_outputs
from support import userfw
from support.compare import assert_close

ROOT = Path(__file__).resolve().parents[1]
BPTE = ROOT / "tests" / "models" / "mlp.bpte"
LIBC_ALLOWED = {"memcpy", "memset", "memmove", "memcmp", "strlen", "strcmp", "strncmp"}


def _expected(prog):
    return expected_outputs(prog)[("forward", 0)]


@pytest.fixture(scope="module")
def host_lib(tmp_path_factory):
    need_tool("cmake", "cmake")
    return library.build(BPTE, config.load_board("host"), tmp_path_factory.mktemp("lib-host"))


def _cmake(src: Path, build: Path, pkg: Path, *extra, check=True) -> subprocess.CompletedProcess:
    cfg = subprocess.run(["cmake", "-S", src, "-B", build, f"-DETMODEL_PACKAGE={pkg}", *extra],
                         capture_output=True, text=True)
    assert cfg.returncode == 0, cfg.stdout + cfg.stderr
    r = subprocess.run(["cmake", "--build", build], capture_output=True, text=True)
    if check:
        assert r.returncode == 0, r.stdout + r.stderr
    return r


@pytest.mark.build
def test_host_app_through_cmake_package(host_lib, tmp_path):
    prog = read_program(BPTE)
    src = userfw.write_project(tmp_path / "src", userfw.bundled_case(prog))
    _cmake(src, tmp_path / "b", host_lib.out)
    r = subprocess.run([tmp_path / "b" / "app"], capture_output=True, text=True, timeout=60)
    outs, done = userfw.parse_outputs(r.stdout)
    assert r.returncode == 0 and done == "ok", r.stdout + r.stderr
    exp = _expected(prog)
    assert_close(userfw.as_arrays(outs, exp), exp, "host app via etmodel-config.cmake")


@pytest.mark.build
def test_library_carries_no_startup_main_or_libc(host_lib):
    nm = subprocess.run(["nm", "-A", host_lib.archive], capture_output=True, text=True, check=True).stdout
    defined = {ln.split()[-1] for ln in nm.splitlines() if len(ln.split()) >= 3 and ln.split()[-2] in "TDRBW"}
    undefined = {ln.split()[-1] for ln in nm.splitlines() if ln.split()[-2:-1] == ["U"]}
    assert not {"main", "Reset_Handler", "_start", "bsp_init", "bsp_write"} & defined
    external = {s for s in undefined - defined if not s.startswith("_GLOBAL_OFFSET")}
    assert external <= LIBC_ALLOWED, f"library needs more than mem*/str*: {sorted(external - LIBC_ALLOWED)}"
    # only the program's kernels: the mlp uses addmm/relu/permute, never a convolution
    assert "k_aten_addmm_out" in defined and "k_aten_convolution_out" not in defined


@pytest.mark.build
def test_header_metadata_matches_program(host_lib):
    h = host_lib.header.read_text()
    prog = read_program(BPTE)
    inp = prog.methods[0].inputs[0]
    assert f"#define ETMODEL_FORWARD_IN0_SIZES {{{', '.join(map(str, inp.sizes))}}}" in h
    assert f"#define ETMODEL_FORWARD_IN0_BYTES {inp.nbytes}u" in h
    assert f"#define ETMODEL_FORWARD_ARENA1_BYTES {prog.methods[0].arenas[1]}u" in h
    assert "ETMODEL_FORWARD_POOL_BYTES" in h


@pytest.mark.build
@pytest.mark.emu
def test_corstone300_user_startup_and_linker_script(tmp_path):
    need_tool("arm-none-eabi-gcc", "gcc-arm-none-eabi")
    qemu = need_tool("qemu-system-arm", "qemu-system-arm")
    need_tool("cmake", "cmake")
    board = config.load_board("corstone300")
    lib = library.build(BPTE, board, tmp_path / "lib")
    arch = " ".join(config.arch_flags(board, config.board_toolchain(board)))
    prog = read_program(BPTE)
    src = userfw.write_project(tmp_path / "src", userfw.bundled_case(prog), cross_arch=arch)
    _cmake(src, tmp_path / "b", lib.out, f"-DCMAKE_TOOLCHAIN_FILE={src / 'toolchain.cmake'}")
    elf = tmp_path / "b" / "app"
    libglue.check_elf(elf, lib.sections)      # the Python check agrees the user's script places them
    r = subprocess.run([qemu, "-M", "mps3-an547", "-display", "none", "-monitor", "none", "-serial", "stdio",
                        "-semihosting-config", "enable=on,target=native", "-kernel", elf],
                       capture_output=True, text=True, timeout=120)
    outs, done = userfw.parse_outputs(r.stdout)
    assert r.returncode == 0 and done == "ok", r.stdout + r.stderr
    exp = _expected(prog)
    assert_close(userfw.as_arrays(outs, exp), exp, "corstone300 app via etmodel-config.cmake")

    # the same project with a linker script that forgets the arenas: the package's post-link check
    # fails the build and names the sections
    bad = userfw.write_project(tmp_path / "bad", userfw.bundled_case(prog), cross_arch=arch, arenas_placed=False)
    r = _cmake(bad, tmp_path / "bb", lib.out, f"-DCMAKE_TOOLCHAIN_FILE={bad / 'toolchain.cmake'}", check=False)
    assert r.returncode != 0
    assert ".et_arena.0_0_1" in r.stdout + r.stderr and ".et_pool.0_0" in r.stdout + r.stderr
    # linked without the package's check, `etdeploy lib check` (libglue.check_elf) names them too
    _cmake(bad, tmp_path / "bb2", lib.out, f"-DCMAKE_TOOLCHAIN_FILE={bad / 'toolchain.cmake'}", "-DSKIP_CHECK=ON")
    with pytest.raises(libglue.LinkCheckError, match=r"\.et_arena\.0_0_1, \.et_pool\.0_0"):
        libglue.check_elf(tmp_path / "bb2" / "app", lib.sections)


@pytest.mark.unit
def test_delegated_program_refused(tmp_path):
    with pytest.raises(library.LibraryError, match="cannot carry delegates"):
        library.plan(ROOT / "tests" / "models" / "add_ethos_u.pte", config.load_board("corstone300"), tmp_path)


@pytest.mark.unit
def test_missing_toolchain_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("ARM_GNU_TOOLCHAIN", raising=False)
    with pytest.raises(errors.ToolchainMissing) as e:
        library.plan(BPTE, config.load_board("corstone300"), tmp_path)
    assert "arm-none-eabi" in str(e.value)


@pytest.mark.build
def test_zephyr_module_and_platformio_manifest(host_lib):
    out = host_lib.out
    mod = yaml.safe_load((out / "zephyr" / "module.yml").read_text())
    # Zephyr's documented module.yml: name, build.cmake (a dir with CMakeLists.txt, relative to the
    # module root), build.kconfig (a file, relative to the module root)
    assert set(mod) <= {"name", "build", "samples", "tests", "boards", "blobs", "package-managers", "security"}
    assert set(mod["build"]) <= {"cmake", "kconfig", "cmake-ext", "kconfig-ext", "sysbuild-cmake", "depends", "settings"}
    assert (out / mod["build"]["cmake"] / "CMakeLists.txt").is_file()
    assert (out / mod["build"]["kconfig"]).is_file()
    cm = (out / "zephyr" / "CMakeLists.txt").read_text()
    for rel in ("../lib/libetmodel.a", "../include"):
        assert rel in cm and (out / "zephyr" / rel).resolve().exists()
    kc = (out / "zephyr" / "Kconfig").read_text()
    assert "config ETMODEL\n" in kc and "ETMODEL_ARENA_NOINIT" in kc and "ETMODEL_ARENA_NOINIT" in cm
    man = json.loads((out / "library.json").read_text())
    assert man["name"] == "etmodel" and (out / man["build"]["includeDir"] / man["headers"]).is_file()
    assert "-l etmodel" in man["build"]["flags"] and (out / "lib" / "libetmodel.a").is_file()
