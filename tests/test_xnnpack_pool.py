"""The backend's thread pool (firmware/backends/xnnpack/et_xnn_pool.c, the pthreadpool API XNNPACK
parallelizes on) checked on its own: tests/xnnpack/pool_check.c drives every parallelize_* variant on no
pool and on pools of 1-3 threads and checks that every grid cell is visited exactly once with the tile
sizes pthreadpool documents. Host: built with the address and undefined-behaviour sanitizers; AArch64
(android-arm64 links the same pool): static, under qemu-aarch64."""
import subprocess
from pathlib import Path

import pytest

from conftest import need_tool

SOURCES = ("tests/xnnpack/pool_check.c", "firmware/backends/xnnpack/et_xnn_pool.c")
CALLS = 4 * 50 * 21                  # pools x repeats x variants


def need_header():
    if not Path("/usr/include/pthreadpool.h").is_file():
        pytest.skip("libpthreadpool-dev not installed (tools/bootstrap.sh installs it)")


def _check(argv, timeout=120):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0 and p.stdout.startswith("ok "), p.stdout + p.stderr
    assert int(p.stdout.split()[1]) == CALLS


@pytest.mark.build
def test_pool_visits_every_cell_once(root, tmp_path):
    cc = need_tool("gcc", "gcc")
    need_header()
    exe = tmp_path / "pool_check"
    subprocess.run([cc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-fsanitize=address,undefined",
                    "-fno-sanitize-recover=undefined", *(str(root / s) for s in SOURCES), "-lpthread", "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    _check([str(exe)])


@pytest.mark.build
@pytest.mark.emu
def test_pool_visits_every_cell_once_aarch64(root, tmp_path):
    cc = need_tool("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu")
    qemu = need_tool("qemu-aarch64", "qemu-user")
    need_header()
    exe = tmp_path / "pool_check_a64"
    # the host's pthreadpool.h (the same header for every architecture) after the cross compiler's own
    subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-static", "-idirafter", "/usr/include",
                    *(str(root / s) for s in SOURCES), "-lpthread", "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    _check([qemu, str(exe)], timeout=300)
