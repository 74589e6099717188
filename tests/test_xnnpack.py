"""XNNPACK-delegated programs (--flow xnnpack, float and int8) run through Debian's XNNPACK on the host
build of our runtime, with the outputs of executorch's own runtime (pybindings, its XNNPACK backend)
as the oracle. Exports are cached by content under .cache/xnnpack."""
import json

import numpy as np
import pytest

from support.compare import assert_close
from support.hostrun import build, run_host
from support.xnnpack_programs import export_programs, need_xnnpack

from etdeploy import config
from etdeploy.errors import BakeError

CASES = {"small_cnn": ("tests/xnnpack/small_cnn.py:SmallCNN", False),
         "small_cnn_q8": ("tests/xnnpack/small_cnn.py:SmallCNN", True),
         "ds_cnn": ("tests/xnnpack/ds_cnn.py:DSCNN", False),
         "ds_cnn_q8": ("tests/xnnpack/ds_cnn.py:DSCNN", True),
         "resnet8": ("tests/xnnpack/resnet8.py:ResNet8", False),
         "resnet8_q8": ("tests/xnnpack/resnet8.py:ResNet8", True),
         "two_io": ("tests/xnnpack/two_io.py:TwoInTwoOut", False)}


@pytest.fixture(scope="module")
def programs(root):
    return export_programs(root, CASES)


def _inputs(pte, seed):
    from etdeploy import oracle
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(d) for s, d in oracle.input_specs(pte)]


@pytest.mark.build
@pytest.mark.parametrize("name", list(CASES))
def test_outputs_equal_executorch_runtime(programs, name):
    need_xnnpack()
    from etdeploy import oracle
    pte = programs[name].with_suffix(".pte")
    for seed in (1, 2):
        x = _inputs(pte, seed)
        ref = oracle.run_reference(pte, x)
        ours = run_host(pte, x)
        assert_close(ours, ref, f"{name} seed {seed}", atol=1e-5)


@pytest.mark.build
@pytest.mark.parametrize("name", ["small_cnn", "ds_cnn_q8"])
def test_bundled_cases_pass_threads_2(programs, name):
    need_xnnpack()
    run_host(programs[name], opts={"threads": 2})
    exe, _ = build(programs[name], {"threads": 2})
    doc = json.loads((exe.parent / "run" / "result.json").read_text())
    assert doc["status"] == "pass", doc["reason"]
    assert doc["result"]["cases"] >= 1 and doc["result"]["cases_failed"] == 0
    # the memory report: XNNPACK's allocations went through our counting allocator, and they hold at
    # least the delegate's weights (packed)
    from etdeploy import xnnpack_delegate as xd
    from etdeploy.pte import read_program
    p = read_program(programs[name])
    weights = sum(c["size"] for d in p.methods[0].delegates
                  for c in xd.read_payload(p.data[d.offset:d.offset + d.size]).graph["constant_data"] or [])
    heap = [int(line.split()[3]) for line in doc["logs"] if line.startswith("xnnpack heap: peak")]
    assert heap and heap[0] >= weights > 0, (heap, weights)


def test_operator_table_names_what_xnnpack_took(programs):
    from etdeploy.exporting import program_operators
    ops, delegates = program_operators(programs["small_cnn"].with_suffix(".pte").read_bytes())
    assert delegates == ["XnnpackBackend"]
    # conv, depthwise, relu, pooling and linear went to XNNPACK; tanh (not in the 2022 library) and
    # the mean stay on our portable kernels
    assert sorted(ops["forward"]) == ["aten::mean.out", "aten::tanh.out"]
    from etdeploy.xnnpack_delegate import summary
    text = summary(programs["small_cnn"].with_suffix(".pte"))
    assert "XNNConv2d x1" in text and "XNNDepthwiseConv2d x1" in text and "XNNFullyConnected x1" in text
    assert "forward[0]" in text and "forward[1]" in text      # two delegates around the portable mean
    ops_q, _ = program_operators(programs["ds_cnn_q8"].with_suffix(".pte").read_bytes())
    assert not [o for o in ops_q["forward"] if "convolution" in o or "linear" in o or "addmm" in o]


def test_bake_refuses_cortex_m_board_naming_the_flow(programs, tmp_path):
    from etdeploy import bake
    with pytest.raises(BakeError, match="--flow cortex_m"):
        bake.bake([programs["small_cnn"]], config.load_board("corstone300"), tmp_path)


def test_bake_refuses_board_without_xnnpack(programs, tmp_path):
    from etdeploy import bake
    with pytest.raises(BakeError, match="xtensa-sim does not link XNNPACK.*--flow portable"):
        bake.bake([programs["small_cnn"]], config.load_board("xtensa-sim"), tmp_path)


def test_bake_refuses_node_the_library_lacks(programs):
    """The real payload with one node's type changed to XNNTanh (which the 2022 library lacks)."""
    from etdeploy import xnnpack_delegate as xd
    from etdeploy.pte import read_program
    p = read_program(programs["small_cnn"])
    d = p.methods[0].delegates[0]
    graph = xd.read_payload(p.data[d.offset:d.offset + d.size]).graph
    xd.check_graph(graph, "ok")
    graph["xnodes"][1]["xnode_union_type"] = "XNNTanh"
    with pytest.raises(BakeError, match=r"XNNTanh.*--flow xnnpack"):
        xd.check_graph(graph, "small_cnn")


def test_bake_refuses_edge_input_also_read_untransposed(programs):
    """The edge NCHW->NHWC transpose runs in C on the delegate's input: if another node read that input
    as it is, the re-laid-out tensor would be wrong for it, so bake refuses."""
    from etdeploy import xnnpack_delegate as xd
    from etdeploy.pte import read_program
    p = read_program(programs["small_cnn"])
    d = p.methods[0].delegates[0]
    graph = xd.read_payload(p.data[d.offset:d.offset + d.size]).graph
    assert graph["xnodes"][0]["xnode_union_type"] == "XNNStaticTranspose"
    graph["xnodes"][2]["xnode_union"]["input1_id"] = graph["xnodes"][0]["xnode_union"]["input_id"]
    with pytest.raises(BakeError, match="XNNStaticTranspose"):
        xd.check_graph(graph, "small_cnn")


def test_bake_refuses_unknown_payload_version(programs):
    from etdeploy import xnnpack_delegate as xd
    from etdeploy.pte import read_program
    p = read_program(programs["small_cnn"])
    d = p.methods[0].delegates[0]
    data = bytearray(p.data[d.offset:d.offset + d.size])
    data[4:8] = b"XH99"
    with pytest.raises(BakeError, match="XNNHeader"):
        xd.read_payload(bytes(data))
