"""XNNPACK test programs for the host: the library check and one export per case (cached by the export
stamp under .cache/xnnpack)."""
from pathlib import Path

import pytest


def need_xnnpack():
    if not Path("/usr/include/xnnpack.h").is_file():
        pytest.skip("libxnnpack-dev not installed (tools/bootstrap.sh installs it)")


def export_programs(root: Path, cases: dict) -> dict:
    """cases: name -> (model spec relative to root, quantize); returns name -> .bpte path."""
    from etdeploy import config
    from etdeploy.export_spec import ModelSpec, export_for_board
    board = config.load_board("host")
    return {name: export_for_board(ModelSpec.parse(str(root / spec)), board, root / ".cache" / "xnnpack",
                                   quantize=q, flow="xnnpack", name=name)[1]
            for name, (spec, q) in cases.items()}
