"""Issue 18: the baked program + runtime as a library (libetmodel.a + etmodel.h + glue) inside
firmware that is not ours, built with Debian's cmake against the generated package: on the host,
and on Cortex-M55 (QEMU mps3-an547) with the user's own startup and linker script. Outputs must
equal the .bpte's bundled expected outputs."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from conftest import need_tool
from etdeploy import config, errors, library, libglue
from etdeploy.cli.main import main as cli_main
from etdeploy.pte import read_program
from etdeploy.results import expected_outputs
from support import userfw
from support import toolvenv
from support.compare import assert_close

ROOT = Path(__file__).resolve().parents[1]
BPTE = ROOT / "tests" / "models" / "mlp.bpte"
# zephyr_linker_sources() locations documented in Zephyr's cmake/modules/extensions.cmake
ZEPHYR_SNIPPET_LOCATIONS = {"NOINIT", "RWDATA", "RODATA", "ROM_START", "RAM_SECTIONS", "DATA_SECTIONS",
                            "RAMFUNC_SECTION", "NOCACHE_SECTION", "SECTIONS", "PINNED_RODATA",
                            "PINNED_RAM_SECTIONS", "PINNED_DATA_SECTIONS"}
LIBC_ALLOWED = {"memcpy", "memset", "memmove", "memcmp", "strlen", "strcmp", "strncmp"}


@pytest.fixture(scope="module")
def host_lib(tmp_path_factory):
    """The host library built the SCons way: `scons board=host pte=... lib=1`."""
    need_tool("cmake", "cmake")
    bd = tmp_path_factory.mktemp("scons-build")
    scons = Path(sys.executable).with_name("scons")
    r = subprocess.run([scons, "-Q", "board=host", f"pte={BPTE}", "lib=1", f"build_dir={bd}"], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    out = bd / "host" / "lib"
    return SimpleNamespace(out=out, archive=out / "lib" / "libetmodel.a", header=out / "include" / "etmodel.h")


def _cmake(src: Path, build: Path, pkg: Path, *extra, check=True) -> subprocess.CompletedProcess:
    cfg = subprocess.run(["cmake", "-S", src, "-B", build, f"-DETMODEL_PACKAGE={pkg}", *extra],
                         capture_output=True, text=True)
    assert cfg.returncode == 0, cfg.stdout + cfg.stderr
    r = subprocess.run(["cmake", "--build", build], capture_output=True, text=True)
    if check:
        assert r.returncode == 0, r.stdout + r.stderr
    return r


def _check_outputs(stdout: str, prog, cases, what: str) -> None:
    outs, done = userfw.parse_outputs(stdout)
    assert done == "ok", stdout
    assert sorted(outs) == list(range(len(cases))), stdout
    exp = expected_outputs(prog)
    for c, (_mi, name, _inputs) in enumerate(cases):
        e = exp[(name, 0)]
        assert_close(userfw.as_arrays(outs[c], e), e, f"{what} {name}")


def _host_app(lib_out: Path, prog, d: Path) -> str:
    cases = userfw.bundled_cases(prog)
    src = userfw.write_project(d / "src", cases)
    _cmake(src, d / "b", lib_out)
    r = subprocess.run([d / "b" / "app"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    _check_outputs(r.stdout, prog, cases, "host app via etmodel-config.cmake")
    return r.stdout


@pytest.mark.build
def test_host_app_through_cmake_package(host_lib, tmp_path):
    out = _host_app(host_lib.out, read_program(BPTE), tmp_path)
    assert "etmodel: set_input: dtype or byte size differs: " in out     # the weak fault report, our write
    assert all(c > 0 for c in userfw.cycles(out)) and userfw.cycles(out)  # our timer hook was used


@pytest.mark.build
def test_two_methods_each_with_its_constants(tmp_path):
    """A program with two methods: each is called by its own ETMODEL_<NAME> index and constants."""
    need_tool("cmake", "cmake")
    bpte = ROOT / "tests" / "models" / "two_methods.bpte"
    prog = read_program(bpte)
    lib = library.build(bpte, config.load_board("host"), tmp_path / "lib")
    h = lib.header.read_text()
    for i, m in enumerate(prog.methods):
        assert f"#define ETMODEL_{libglue.c_ident(m.name)} {i}u" in h
    assert len(userfw.bundled_cases(prog)) == len(prog.methods) == 2
    _host_app(lib.out, prog, tmp_path)


@pytest.mark.build
def test_library_carries_no_startup_main_or_libc(host_lib):
    _no_startup_main_or_libc("nm", host_lib.archive)


def _no_startup_main_or_libc(nm_tool, archive):
    nm = subprocess.run([nm_tool, "-A", archive], capture_output=True, text=True, check=True).stdout
    defined = {ln.split()[-1] for ln in nm.splitlines() if len(ln.split()) >= 3 and ln.split()[-2] in "TDRBW"}
    undefined = {ln.split()[-1] for ln in nm.splitlines() if ln.split()[-2:-1] == ["U"]}
    assert not {"main", "Reset_Handler", "_start", "bsp_init", "bsp_write"} & defined
    # libgcc's helpers (__aeabi_ldivmod, __udivdi3, ...) are the compiler's, not libc
    external = {s for s in undefined - defined if not s.startswith(("_GLOBAL_OFFSET", "__"))}
    assert external <= LIBC_ALLOWED, f"library needs more than mem*/str*: {sorted(external - LIBC_ALLOWED)}"
    # only the program's kernels: the mlp uses addmm/relu, never a convolution
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


def _qemu(qemu, elf: Path, machine: str = "mps3-an547") -> subprocess.CompletedProcess:
    return subprocess.run([qemu, "-M", machine, "-display", "none", "-monitor", "none", "-serial", "stdio",
                           "-semihosting-config", "enable=on,target=native", "-kernel", elf],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.build
@pytest.mark.emu
def test_cortex_m4_same_package_other_abi(tmp_path):
    """The same user project for mps2-an386 (Cortex-M4, FPv4): the package carries the board's ABI
    (ETMODEL_ARCH_FLAGS), the user's toolchain file uses it."""
    need_tool("arm-none-eabi-gcc", "gcc-arm-none-eabi")
    qemu = need_tool("qemu-system-arm", "qemu-system-arm")
    need_tool("cmake", "cmake")
    prog = read_program(BPTE)
    lib = library.build(BPTE, config.load_board("mps2-an386"), tmp_path / "lib")
    arch = re.search(r'set\(ETMODEL_ARCH_FLAGS "([^"]*)"\)', (lib.out / "etmodel-config.cmake").read_text()).group(1)
    assert "-mcpu=cortex-m4" in arch
    cases = userfw.bundled_cases(prog)
    src = userfw.write_project(tmp_path / "src", cases, cross_arch=arch.replace(";", " "), target="mps2-an386")
    _cmake(src, tmp_path / "b", lib.out, f"-DCMAKE_TOOLCHAIN_FILE={src / 'toolchain.cmake'}")
    r = _qemu(qemu, tmp_path / "b" / "app", machine="mps2-an386")
    assert r.returncode == 0, r.stdout + r.stderr
    _check_outputs(r.stdout, prog, cases, "mps2-an386 app via etmodel-config.cmake")


@pytest.mark.build
@pytest.mark.emu
def test_corstone300_arenas_the_user_defines(tmp_path):
    """arenas=user: the library leaves arenas and pools to the user, who defines them (sized by
    etmodel.h's constants) in a section and region of their own."""
    need_tool("arm-none-eabi-gcc", "gcc-arm-none-eabi")
    qemu = need_tool("qemu-system-arm", "qemu-system-arm")
    need_tool("cmake", "cmake")
    board = config.load_board("corstone300")
    prog = read_program(BPTE)
    assert cli_main(["lib", "--board", "corstone300", "--pte", str(BPTE), "-o", str(tmp_path / "lib"),
                     "--arenas", "user"]) == 0
    arch = " ".join(config.arch_flags(board, config.board_toolchain(board)))
    cases = userfw.bundled_cases(prog)
    mem = userfw.user_memory_c(libglue.buffers(prog), [libglue.c_ident(m.name) for m in prog.methods])
    src = userfw.write_project(tmp_path / "src", cases, cross_arch=arch, user_memory=mem)
    _cmake(src, tmp_path / "b", tmp_path / "lib", f"-DCMAKE_TOOLCHAIN_FILE={src / 'toolchain.cmake'}")
    r = _qemu(qemu, tmp_path / "b" / "app")
    assert r.returncode == 0, r.stdout + r.stderr
    _check_outputs(r.stdout, prog, cases, "corstone300, arenas the user defines")
    from elftools.elf.elffile import ELFFile
    with open(tmp_path / "b" / "app", "rb") as f:
        syms = {s.name: s["st_value"] for s in ELFFile(f).get_section_by_name(".symtab").iter_symbols()}
    assert 0x31000000 <= syms["et_arena_0_0_1"] < 0x31400000 and 0x31000000 <= syms["et_pool_0_0"] < 0x31400000


@pytest.mark.build
@pytest.mark.emu
def test_corstone300_user_startup_and_linker_script(tmp_path):
    need_tool("arm-none-eabi-gcc", "gcc-arm-none-eabi")
    qemu = need_tool("qemu-system-arm", "qemu-system-arm")
    need_tool("cmake", "cmake")
    board = config.load_board("corstone300")
    assert cli_main(["lib", "--board", "corstone300", "--pte", str(BPTE), "-o", str(tmp_path / "lib")]) == 0
    lib = SimpleNamespace(out=tmp_path / "lib", sections=libglue.sections(read_program(BPTE)))
    _no_startup_main_or_libc("arm-none-eabi-nm", lib.out / "lib" / "libetmodel.a")
    arch = " ".join(config.arch_flags(board, config.board_toolchain(board)))
    prog = read_program(BPTE)
    cases = userfw.bundled_cases(prog)
    src = userfw.write_project(tmp_path / "src", cases, cross_arch=arch)
    _cmake(src, tmp_path / "b", lib.out, f"-DCMAKE_TOOLCHAIN_FILE={src / 'toolchain.cmake'}")
    elf = tmp_path / "b" / "app"
    libglue.check_elf(elf, lib.sections)      # the Python check agrees the user's script places them
    r = _qemu(qemu, elf)
    assert r.returncode == 0, r.stdout + r.stderr
    _check_outputs(r.stdout, prog, cases, "corstone300 app via etmodel-config.cmake")

    # the same project with a linker script that forgets the arenas: the package's post-link check
    # fails the build and names the sections
    bad = userfw.write_project(tmp_path / "bad", cases, cross_arch=arch, arenas_placed=False)
    r = _cmake(bad, tmp_path / "bb", lib.out, f"-DCMAKE_TOOLCHAIN_FILE={bad / 'toolchain.cmake'}", check=False)
    assert r.returncode != 0
    assert ".et_arena.0_0_1" in r.stdout + r.stderr and ".et_pool.0_0" in r.stdout + r.stderr
    # linked without the package's check, `etdeploy lib check` (libglue.check_elf) names them too
    _cmake(bad, tmp_path / "bb2", lib.out, f"-DCMAKE_TOOLCHAIN_FILE={bad / 'toolchain.cmake'}", "-DSKIP_CHECK=ON")
    with pytest.raises(libglue.LinkCheckError, match=r"\.et_arena\.0_0_1, \.et_pool\.0_0"):
        libglue.check_elf(tmp_path / "bb2" / "app", lib.sections)
    assert cli_main(["lib", "check", str(tmp_path / "bb2" / "app"), "--package", str(lib.out)]) == 5
    assert cli_main(["lib", "check", str(elf), "--package", str(lib.out)]) == 0


@pytest.mark.unit
def test_delegated_program_refused(tmp_path):
    with pytest.raises(library.LibraryError, match="cannot carry delegates"):
        library.plan(ROOT / "tests" / "models" / "add_ethos_u.pte", config.load_board("corstone300"), tmp_path)


@pytest.mark.unit
def test_one_program_per_library():
    progs = [read_program(BPTE), read_program(ROOT / "tests" / "models" / "add.bpte")]
    with pytest.raises(library.LibraryError, match="one program per library"):
        library.check_program(progs)


@pytest.mark.build
@pytest.mark.parametrize("pte,code,text", [
    ("add_ethos_u.pte", 4, "cannot carry delegates"),
    ("add.bpte,tests/models/mlp.bpte", 2, "exactly one program"),
])
def test_scons_lib_refusals_are_one_line(tmp_path, pte, code, text):
    scons = Path(sys.executable).with_name("scons")
    r = subprocess.run([scons, "-Q", "board=corstone300", f"pte=tests/models/{pte}", "lib=1", f"build_dir={tmp_path}"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == code and text in r.stderr, r.stdout + r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "corstone300" / "lib" / "lib" / "libetmodel.a").exists()


@pytest.mark.unit
def test_missing_toolchain_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("ARM_GNU_TOOLCHAIN", raising=False)
    with pytest.raises(errors.ToolchainMissing) as e:
        library.plan(BPTE, config.load_board("corstone300"), tmp_path)
    assert "arm-none-eabi" in str(e.value)


@pytest.mark.build
def test_zephyr_module_files(host_lib):
    """Zephyr's build is not installable here: the module's files are checked against Zephyr's
    documented module.yml schema (tests/data/zephyr_module.schema.json) and the rules its module
    scanner applies (cmake: a directory holding CMakeLists.txt, kconfig: a file, both relative to the
    module root, the directory above zephyr/)."""
    import jsonschema
    out = host_lib.out
    mod = yaml.safe_load((out / "zephyr" / "module.yml").read_text())
    jsonschema.validate(mod, json.loads((ROOT / "tests" / "data" / "zephyr_module.schema.json").read_text()))
    assert (out / mod["build"]["cmake"] / "CMakeLists.txt").is_file()
    assert (out / mod["build"]["kconfig"]).is_file()
    cm = (out / "zephyr" / "CMakeLists.txt").read_text()
    for rel in ("../lib/libetmodel.a", "../include"):
        assert f"${{CMAKE_CURRENT_LIST_DIR}}/{rel}" in cm and (out / "zephyr" / rel).resolve().exists()
    snippets = re.findall(r"zephyr_linker_sources\((\w+) \$\{CMAKE_CURRENT_LIST_DIR\}/(\S+\.ld)\)", cm)
    assert len(snippets) == 2, cm
    for loc, ld in snippets:
        assert loc in ZEPHYR_SNIPPET_LOCATIONS and (out / "zephyr" / ld).is_file(), (loc, ld)
        body = (out / "zephyr" / ld).read_text()
        # NOINIT/RODATA snippets land inside an existing output section: input descriptions only
        assert "{" not in body and re.search(r"\*\(\.et_", body), body
    kc = (out / "zephyr" / "Kconfig").read_text()
    for sym in re.findall(r"CONFIG_(\w+)", cm):     # every symbol the CMake file tests is declared
        assert re.search(rf"^config {sym}$", kc, re.M), sym


def test_platformio_manifest_by_platformio(host_lib):
    """library.json read by PlatformIO's own manifest parser and schema (PlatformIO in a throw-away
    venv, see tests/support/toolvenv.py); its `build` keys must be ones PlatformIO's library builder
    reads, and the Zephyr Kconfig parses with kconfiglib (Zephyr's Kconfig implementation)."""
    man = json.loads((host_lib.out / "library.json").read_text())   # the documented fields, always
    assert man["name"] == "etmodel" and re.fullmatch(r"\d+\.\d+\.\d+", man["version"])
    assert set(man["build"]) <= {"flags", "unflags", "includeDir", "srcDir", "srcFilter", "extraScript", "libArchive",
                                 "libLDFMode", "libCompatMode", "builder"}
    assert (host_lib.out / man["build"]["includeDir"] / man["headers"]).is_file()
    if toolvenv.python() is None:
        pytest.skip("platformio/kconfiglib not installable here (no package registry)")
    r = toolvenv.run(PIO_CHECK, host_lib.out / "library.json", host_lib.out / "zephyr" / "Kconfig")
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads(r.stdout)
    assert got["schema"]["name"] == "etmodel" and got["schema"]["headers"] == ["etmodel.h"]
    assert not got["unknown_build_keys"], got
    assert "-l etmodel" in got["build"]["flags"] and (host_lib.out / got["build"]["includeDir"] / "etmodel.h").is_file()
    assert {"ETMODEL", "ETMODEL_ARENA_NOINIT", "ETMODEL_ARENA_USER"} <= set(got["kconfig"])


PIO_CHECK = r"""
import json, sys
from pathlib import Path
import kconfiglib
import platformio
from platformio.package.manifest.parser import ManifestParserFactory
from platformio.package.manifest.schema import ManifestSchema
parsed = ManifestParserFactory.new_from_file(sys.argv[1]).as_dict()
schema = ManifestSchema().load_manifest(parsed)          # raises ManifestValidationError
src = (Path(platformio.__file__).parent / "builder" / "tools" / "piolib.py").read_text()   # needs SCons to import
unknown = [k for k in parsed.get("build", {}) if f'"{k}"' not in src]
k = kconfiglib.Kconfig(sys.argv[2], warn_to_stderr=False)
if k.warnings:
    sys.exit("kconfig warnings: " + "; ".join(k.warnings))
print(json.dumps({"schema": schema, "build": parsed.get("build", {}), "unknown_build_keys": unknown,
                  "kconfig": [s.name for s in k.unique_defined_syms]}, default=str))
"""
