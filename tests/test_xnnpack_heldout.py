"""Structures of held-out torchvision networks through --flow xnnpack (float and int8) on the host build
with Debian's XNNPACK, executorch's runtime (its XNNPACK backend) as the oracle: shufflenet_v2's channel
shuffle and mobilenet_v3's hardsigmoid squeeze-excite (tests/xnnpack/heldout_patterns.py). Before the
fixes the first was refused at bake (real transposes inside a delegate) and the second aborted in the
library (a delegate input left unbound). Exports cached by content under .cache/xnnpack."""
import numpy as np
import pytest

from support.compare import assert_close
from support.hostrun import run_host
from support.xnnpack_programs import export_programs, need_xnnpack

CASES = {"heldout_patterns": ("tests/xnnpack/heldout_patterns.py:model", False),
         "heldout_patterns_q8": ("tests/xnnpack/heldout_patterns.py:model", True)}


@pytest.fixture(scope="module")
def programs(root):
    return export_programs(root, CASES)


@pytest.mark.build
@pytest.mark.parametrize("name", list(CASES))
def test_heldout_patterns_equal_executorch_runtime(programs, name):
    need_xnnpack()
    from etdeploy import oracle
    pte = programs[name].with_suffix(".pte")
    refs = []
    for seed in (1, 2):
        rng = np.random.default_rng(seed)
        x = [rng.standard_normal(s).astype(d) for s, d in oracle.input_specs(pte)]
        refs.append(oracle.run_reference(pte, x))
        assert_close(run_host(pte, x), refs[-1], f"{name} seed {seed}", atol=1e-5)
    # the output follows the input (no vanishing signal): the comparison means something
    assert float(np.abs(refs[0][0] - refs[1][0]).max()) > 0.1


@pytest.mark.parametrize("name", list(CASES))
def test_heldout_patterns_partitioned_as_the_library_runs(programs, name):
    """The shuffle's transpose and its 4-d reshapes stay on our kernels, every delegate passes the bake's
    check, the squeeze-excite delegate has more than 16 external values (what the backend had dropped), and
    int8 has twin edge transposes (what the bake had refused)."""
    from etdeploy import xnnpack_delegate as xd
    from etdeploy.exporting import program_operators
    from etdeploy.pte import read_program
    pte = programs[name].with_suffix(".pte")
    ops, delegates = program_operators(pte.read_bytes())
    assert delegates == ["XnnpackBackend"]
    assert "aten::permute_copy.out" in ops["forward"], ops
    prog = read_program(pte)
    graphs = [xd.read_payload(prog.data[d.offset:d.offset + d.size]).graph for d in prog.methods[0].delegates]
    for i, g in enumerate(graphs):
        xd.check_graph(g, f"{name}[{i}]")
    assert max(g["num_externs"] for g in graphs) > 16
    if name.endswith("_q8"):   # the downsampling unit's input through two equal edge transposes, one value
        assert any(xd.twin_transposes(g["xnodes"]) for g in graphs)
    assert any("XNNDiv" in xd.node_types(g) or "XNNMultiply" in xd.node_types(g) for g in graphs)


def test_export_refuses_a_delegate_the_library_cannot_run():
    """executorch's own reshape config (no layout rule) on conv, channel shuffle, conv: the delegate gets
    real transposes, and the flow's export-time check names the node instead of leaving it to the bake (with
    the flow's own partitioner the check passes: every export of the fixture runs it)."""
    import torch
    from executorch.backends.xnnpack.partition import config as cfg
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    from etdeploy import export_xnnpack
    from etdeploy.export_common import ExportError

    class ConvShuffleConv(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Conv2d(4, 4, 1), torch.nn.Conv2d(4, 4, 1)

        def forward(self, x):
            return self.b(self.a(x).view(1, 2, 2, 4, 4).transpose(1, 2).reshape(1, 4, 4, 4))

    ep = torch.export.export(ConvShuffleConv().eval(), (torch.randn(1, 4, 4, 4),))
    plain = XnnpackPartitioner(configs=[cfg.ConvolutionConfig, cfg.ViewCopyConfig])
    with pytest.raises(ExportError, match=r"XNNStaticTranspose.*partitioning should have kept it out.*--flow portable"):
        export_xnnpack.check_delegates(to_edge_transform_and_lower(ep, partitioner=[plain]))
