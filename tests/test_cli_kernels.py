"""`etdeploy kernels`: the catalogue as bake sees it (every ET_OP marker, its file, the boards of
the flows that emit it), and a program's missing operators with the CLI's exit code."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from etdeploy import config, errors, kernels
from etdeploy.cli import main as cli

ROOT = Path(__file__).resolve().parents[1]
CNN = ROOT / "tests" / "models" / "cnn.pte"
pytestmark = pytest.mark.unit


def _run(capsys, *argv):
    rc = cli.main(["kernels", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_catalogue_lists_every_marker(capsys):
    rc, out, _ = _run(capsys, "--json")
    assert rc == 0
    rows = {r["op"]: r for r in json.loads(out)}
    # read the markers independently of etdeploy.kernels: one row per first marker of each op
    seen = {}
    kdir = ROOT / "firmware" / "kernels"
    for path in sorted(kdir.rglob("*.c")):
        for op in re.findall(r'ET_OP\(\s*"([^"]+)"', path.read_text()):
            seen.setdefault(op, path.relative_to(kdir).as_posix())
    assert {op: r["file"] for op, r in rows.items()} == seen
    assert rows["aten::as_strided_copy.out"]["file"] == "reorder.c"
    assert rows["aten::any.out"]["file"] == "argreduce.c"
    every = sorted(b.name for b in config.load_boards())
    cortex = sorted(b.name for b in config.load_boards() if b.family == "cortex-m")
    assert cortex and cortex != every
    assert rows["aten::add.out"]["boards"] == every
    assert rows["cortex_m::quantized_linear.out"]["boards"] == cortex
    assert rows["cortex_m::quantized_linear.out"]["flows"] == ["cortex_m"]


def test_catalogue_table_and_board_filter(capsys):
    rc, out, _ = _run(capsys)
    assert rc == 0
    assert re.search(r"^aten::topk\.values\s+argreduce\.c\s+portable, pt2e, cortex_m\s+all$", out, re.M), out
    assert f"{len(kernels.catalogue())} operators" in out
    rc, out, _ = _run(capsys, "--board", "xtensa-sim")
    assert rc == 0 and "aten::gather.out" in out and "cortex_m::" not in out
    rc, out, _ = _run(capsys, "--board", "mps2-an386")
    assert rc == 0 and "cortex_m::quantized_conv2d.out" in out
    rc, _, err = _run(capsys, "--board", "no-such-board")
    assert rc == errors.UnknownBoard.exit_code and "unknown board 'no-such-board'" in err


def test_program_with_every_kernel(capsys):
    rc, out, _ = _run(capsys, str(CNN))
    assert rc == 0
    assert re.search(r"^aten::convolution\.out\s+conv\.c\s+cnn\.pte:forward$", out, re.M), out
    assert "0 without a kernel" in out


def test_program_with_a_missing_operator(capsys, tmp_path):
    data = CNN.read_bytes()
    assert data.count(b"aten::relu") == 1
    bad = tmp_path / "bad.pte"
    bad.write_bytes(data.replace(b"aten::relu", b"aten::relx"))   # same length: still a valid program
    rc, out, err = _run(capsys, str(bad), str(CNN))
    assert rc == errors.MissingOperators.exit_code != 0
    assert re.search(r"^aten::relx\.out\s+MISSING\s+bad\.pte:forward$", out, re.M), out
    assert "aten::relx.out" in err and "1 operator(s) have no etdeploy kernel" in err
    rc, out, _ = _run(capsys, "--json", str(bad))
    assert rc == errors.MissingOperators.exit_code
    assert json.loads(out[:out.rindex("}") + 1])["missing"] == ["aten::relx.out"]


def test_help_and_readme_name_the_command(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    helptext = capsys.readouterr().out
    assert re.search(r"^\s+kernels\s+list the operators", helptext, re.M), helptext
    readme = (ROOT / "README.md").read_text()
    listed = re.search(r"etdeploy --help\s+# (.*)", readme).group(1)
    for name in cli._subcommands():
        assert name in listed, f"README's command list lacks {name}: {listed}"
