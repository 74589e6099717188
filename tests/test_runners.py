"""Runners as plugins: every runner registers under the key a board names; boards naming an unknown
runner or flash method are refused when they load; a runner added as one file (runners/wrapper.py)
runs a real program to a pass with nothing else changed but a board's [emulator] kind."""
import shutil

import pytest

from conftest import ROOT, need_tool
from etdeploy import config, runners, session
from etdeploy.errors import ConfigError

MODELS = ROOT / "tests" / "models"


def _boards(tmp_path, extra: str):
    d = tmp_path / "boards"
    d.mkdir()
    shutil.copyfile(ROOT / "boards" / "host.toml", d / "host.toml")
    (d / "t.toml").write_text('extends = "host"\n' + extra)
    return d


@pytest.mark.unit
def test_registry_names_every_runner_and_flasher():
    assert {"native", "qemu-user", "qemu-system", "qemu-semihost", "fvp", "adb", "wrapper"} <= set(runners.kinds("run"))
    assert {"pyocd", "openocd", "uf2", "mps3", "adb"} <= set(runners.kinds("flash"))
    # every board's keys resolve to a registered runner with the capability it is used for
    for b in config.load_boards():
        if b.emulator is not None:
            assert runners.runner_for(b).name == b.emulator.kind
        if b.flash is not None:
            assert runners.flasher_for(b).caps.flash


@pytest.mark.unit
def test_unknown_flash_method_is_refused_at_load(tmp_path):
    d = _boards(tmp_path, '[flash]\nmethod = "jtag-magic"\n')
    with pytest.raises(ConfigError, match=r"\[flash\] method: 'jtag-magic' is not one of .*openocd.*pyocd"):
        config.load_board("t", d)


@pytest.mark.unit
def test_unknown_emulator_kind_is_refused_at_load(tmp_path):
    d = _boards(tmp_path, '[emulator]\nkind = "renode"\n')
    with pytest.raises(ConfigError, match=r"\[emulator\] kind: 'renode' is not one of .*native.*wrapper"):
        config.load_board("t", d)


@pytest.mark.build
def test_a_runner_added_as_one_file_runs_a_program(tmp_path):
    """runners/wrapper.py and a board key: the host image under `env` passes its bundled cases."""
    need_tool("gcc", "gcc")
    from support.hostrun import build
    d = _boards(tmp_path, '[emulator]\nkind = "wrapper"\nbinary = "env"\nargs = ["ETDEPLOY_WRAPPED=1", "{elf}"]\n')
    board = config.load_board("t", d)
    exe, progs = build(MODELS / "mlp.bpte", sanitize=False)
    logged = []
    res = session.run(board, exe, tmp_path / "run", timeout=60, programs=progs, log=logged.append)
    assert res.status == "pass", res.reason
    assert res.cases and all(c["passed"] for c in res.cases)
    assert logged and logged[0].startswith("env ETDEPLOY_WRAPPED=1 ") and logged[0].endswith(str(exe))
