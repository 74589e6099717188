"""The backend's thread pool (firmware/backends/xnnpack/et_xnn_pool.c, the pthreadpool API XNNPACK
parallelizes on) checked on its own: tests/xnnpack/pool_check.c drives every parallelize_* variant on no
pool and on pools of 1-3 threads and checks that every grid cell is visited exactly once with the tile
sizes pthreadpool documents; built with the address and undefined-behaviour sanitizers."""
import subprocess
from pathlib import Path

import pytest

from conftest import need_tool


@pytest.mark.build
def test_pool_visits_every_cell_once(root, tmp_path):
    cc = need_tool("gcc", "gcc")
    if not Path("/usr/include/pthreadpool.h").is_file():
        pytest.skip("libpthreadpool-dev not installed (tools/bootstrap.sh installs it)")
    exe = tmp_path / "pool_check"
    subprocess.run([cc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-fsanitize=address,undefined",
                    "-fno-sanitize-recover=undefined", str(root / "tests/xnnpack/pool_check.c"),
                    str(root / "firmware/backends/xnnpack/et_xnn_pool.c"), "-lpthread", "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    p = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.startswith("ok "), p.stdout + p.stderr
    assert int(p.stdout.split()[1]) == 4 * 50 * 21            # pools x repeats x variants
