"""Real architectures (tests/realmodels, reduced width/resolution) exported as a user would, from
plain NCHW modules: float (portable) on host, corstone300 and mps2-an386, int8 (cortex_m flow) on
corstone300 (Helium kernels), mps2-an386 (Cortex-M4: the DSP kernels)
and the host; every bundled case passes, and the expected outputs are what the real
executorch runtime (float) or executorch's cortex_m:: reference ops (int8) give.

Also the two patterns real networks broke on, as small kernel cases:
- ShuffleNet's channel shuffle (view of a channels_last tensor, transpose, view): executorch
  aliases the first view with the wrong layout unless export copies its base to contiguous first.
- a ceil-mode max pool between int8 convolutions (GoogLeNet): the quantized reference cannot run it
  on int8, so export keeps it in float and says so.
- nn.MultiheadAttention: a Cortex-M pass fails on its int8 bmm; export keeps bmm in float.

Exports are cached by content under .cache/realmodels (sources of the models, the export code, the
reference code and the package versions): a clean clone exports each once (about 20 s each)."""
from __future__ import annotations

import inspect
import json
from pathlib import Path

import numpy as np
import pytest

from conftest import on_ci
from etdeploy.pte import read_program
from support.boardrun import build_and_run
from support.compare import assert_close
from support.export_key import flow_sources
from support.suite import require_board

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "realmodels"
FLOAT = ["ds_cnn", "resnet8", "fc_autoencoder"]
# shufflenet_v2_x0_5: torchvision; tc_resnet8: 1-d convolutions (3-d input)
INT8 = ["ds_cnn", "resnet8", "mobilenet_v1_vww", "fc_autoencoder", "shufflenet_v2_x0_5", "tc_resnet8"]
CASES = ["channel_shuffle", "ceil_pool", "attention", "dense_preact"]   # kernel cases (modules below), int8 and float


def _case_module(name, flow="cortex_m"):
    import torch
    from torch import nn

    class ChannelShuffle(nn.Module):
        """1x1 conv, ShuffleNetV2's channel shuffle (groups 2), 1x1 conv. Without convs (the float
        case: executorch's portable conv refuses channels_last, and the real runtime is the oracle)
        relu and add around the shuffle: its view's base is then an intermediate, as in the network."""

        def __init__(self, c=8, convs=True):
            super().__init__()
            self.a = nn.Conv2d(c, c, 1) if convs else nn.Identity()
            self.b = nn.Conv2d(c, c, 1) if convs else nn.Identity()

        def forward(self, x):
            x = torch.relu(self.a(x))
            n, c, h, w = x.shape
            x = x.view(n, 2, c // 2, h, w).transpose(1, 2).contiguous().view(n, c, h, w)
            return self.b(x) + 1

    class CeilPool(nn.Module):
        """conv, max pool 3x3 s2 ceil_mode, then GoogLeNet's inception input: a conv of it and a conv after
        a second (3x3 s1 pad 1, ceil_mode) pool of it, concatenated."""

        def __init__(self, c=8):
            super().__init__()
            self.a, self.b, self.d = nn.Conv2d(3, c, 3, padding=1), nn.Conv2d(c, c, 1), nn.Conv2d(c, c, 1)
            self.pool = nn.MaxPool2d(3, 2, ceil_mode=True)
            self.pool2 = nn.MaxPool2d(3, 1, padding=1, ceil_mode=True)

        def forward(self, x):
            y = self.pool(torch.relu(self.a(x)))
            return torch.cat([self.b(y), self.d(self.pool2(y))], 1)

    class Attention(nn.Module):
        """nn.MultiheadAttention over a conv's pixels: a Cortex-M pass fails on its int8 bmm (an int32
        operand), so export keeps bmm in float."""

        def __init__(self, c=8):
            super().__init__()
            self.a, self.att = nn.Conv2d(3, c, 3, 2, 1), nn.MultiheadAttention(c, 2, batch_first=True)

        def forward(self, x):
            t = torch.relu(self.a(x)).flatten(2).transpose(1, 2)
            return self.att(t, t, t)[0]

    class DensePreact(nn.Module):
        """DenseNet's pattern: conv, BatchNorm, ReLU whose output a concatenation shares with a conv
        output that has negative values, then BatchNorm -> ReLU -> conv after the concatenation (no conv
        before that norm to fold it into); the conv inside has padding='same' with an even kernel, the
        last one dilation 2."""

        def __init__(self, c=8):
            super().__init__()
            self.a, self.na = nn.Conv2d(3, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
            self.b, self.nb = nn.Conv2d(c, c // 2, 4, padding="same"), nn.BatchNorm2d(c + c // 2)
            self.c = nn.Conv2d(c + c // 2, c, 3, padding=2, dilation=2)
            for n in (self.na, self.nb):
                with torch.no_grad():
                    n.running_mean.uniform_(-0.5, 0.5), n.running_var.uniform_(0.5, 2.0)
                    n.weight.uniform_(0.5, 1.5), n.bias.uniform_(-0.3, 0.3)

        def forward(self, x):
            a = torch.relu(self.na(self.a(x)))
            y = torch.cat([a, self.b(a)], 1)
            return self.c(torch.relu(self.nb(y)))

    torch.manual_seed(0)
    if name == "dense_preact":
        return DensePreact().eval(), (torch.randn(1, 3, 8, 8),)
    if name == "attention":
        return Attention().eval(), (torch.randn(1, 3, 8, 8),)
    if name == "channel_shuffle":
        return ChannelShuffle(convs=flow == "cortex_m").eval(), (torch.randn(1, 8, 5, 5),)
    return CeilPool().eval(), (torch.randn(1, 3, 16, 16),)   # 16x16: torch refuses int8 max pool over > 127 pixels


def _key() -> str:
    import realmodels
    return realmodels.content_key(inspect.getsource(_case_module).encode(), flow_sources("cortex_m"))


def export(name: str, flow: str) -> dict:
    """{'bpte': Path, 'pte': Path, 'operators': [...], 'int8_share': float, 'kept_float': {...}}, cached."""
    d = CACHE / f"{name}-{flow}-{_key()}"
    facts = d / "facts.json"
    if not facts.exists():
        import torch
        import realmodels
        from etdeploy import exporting
        from realmodels.vision import TorchvisionMissing
        try:
            module, ex = _case_module(name, flow) if name in CASES else realmodels.build(name, small=True)
        except TorchvisionMissing as e:   # tools/bootstrap.sh installs it (requirements-vision.txt)
            if on_ci():
                pytest.fail(f"CI: {e}")
            pytest.skip(str(e))
        if name == "channel_shuffle" and flow == "portable":   # the failing pattern is channels_last
            module = module.to(memory_format=torch.channels_last)
            ex = tuple(x.contiguous(memory_format=torch.channels_last) for x in ex)
        res = exporting.export_model(module, ex, d, "m", flow, cases=2)
        facts.write_text(json.dumps({"operators": res.operators["forward"], "kept_float": res.kept_float,
                                     "int8_share": res.macs.int8_share, "macs": res.macs.total}))
    doc = json.loads(facts.read_text())
    return {**doc, "bpte": d / "m.bpte", "pte": d / "m.pte"}


def _run_all(board: str, programs: list[tuple[str, str]]):
    require_board(board)
    bptes = [export(n, f)["bpte"] for n, f in programs]
    doc = build_and_run(board, ",".join(str(b) for b in bptes), timeout=1200)
    names = [f"{n}/{f}" for n, f in programs]
    errs = [(names[e["program"]] if e.get("program") is not None else "?", e) for e in doc.get("errors") or []]
    assert doc.get("status") == "pass", f"{board}: {doc.get('reason')} {errs}\n{doc['_stdout'][-2500:]}"
    assert doc["result"]["cases_failed"] == 0 and doc["result"]["cases"] == 2 * len(programs)
    assert {c["program"] for c in doc["cases"]} == set(range(len(programs)))


FLOAT_PROGRAMS = [(n, "portable") for n in FLOAT + CASES]
INT8_PROGRAMS = [(n, "cortex_m") for n in INT8 + CASES]


def _in_dim_order(a: np.ndarray, order):
    import torch
    t = torch.from_numpy(np.ascontiguousarray(a))
    if order and list(order) != sorted(order):
        t = t.permute(*order).contiguous().permute(*np.argsort(order).tolist())
    return t


# ---------------------------------------------------------------- export facts (real executorch, no toolchain)

@pytest.mark.parametrize("name", INT8)
def test_int8_export_of_nchw_module_runs_convolutions_in_int8(name):
    e = export(name, "cortex_m")
    ops = e["operators"]
    assert "aten::convolution.out" not in ops, ops
    if name != "fc_autoencoder":
        assert "cortex_m::quantized_conv2d.out" in ops or "cortex_m::quantized_depthwise_conv2d.out" in ops
    assert e["int8_share"] == 1.0 and e["macs"] > 10_000


def test_operator_the_quantizer_cannot_run_stays_float():
    """The quantizer keeps the ceil-mode max pools out (float between a dequantize and a quantize, and a pool
    of a pool float throughout); export then runs them on the int8 codes (padded, floor-mode int8 pool,
    requantising table), which the bundled cases (expected outputs: the float-pool graph) check on the
    boards."""
    e = export("ceil_pool", "cortex_m")
    assert list(e["kept_float"]) == ["max_pool2d"], e["kept_float"]
    assert "aten::max_pool2d_with_indices.out" not in e["operators"]
    assert "cortex_m::quantized_max_pool2d.out" in e["operators"]
    assert "cortex_m::quantized_conv2d.out" in e["operators"]
    assert 0.9 < e["int8_share"] <= 1.0


def test_operator_a_cortex_m_pass_cannot_lower_stays_float():
    e = export("attention", "cortex_m")
    assert list(e["kept_float"]) == ["bmm"], e["kept_float"]
    assert "aten::bmm.out" in e["operators"]
    assert "cortex_m::quantized_linear.out" in e["operators"]


def test_int8_densenet_pattern_runs_in_int8():
    """DenseNet's BatchNorm after a concatenation becomes an int8 depthwise 1x1 conv (norm_as_depthwise.py;
    left alone, the Cortex-M passes fed the next quantized conv a float tensor), and the ReLU sharing the
    concatenation's quantisation is fused into its conv (activation_ranges.py; left alone, the conv stayed
    aten::convolution on int8 codes, which the device runtime refuses); padding='same' becomes explicit
    (conv_padding.py; left alone, that conv stayed in float); the dilated conv exports (its reference ran
    into ATen's missing integer dilated convolution: oracle_portable.py)."""
    e = export("dense_preact", "cortex_m")
    ops = e["operators"]
    assert not [o for o in ops if o.startswith("aten::") and o != "aten::cat.out"], ops
    assert "cortex_m::quantized_depthwise_conv2d.out" in ops and "cortex_m::quantized_conv2d.out" in ops
    assert "cortex_m::pad.out" in ops   # the even kernel's extra row and column
    assert not e["kept_float"] and e["int8_share"] == 1.0


@pytest.mark.parametrize("name,flow", FLOAT_PROGRAMS + INT8_PROGRAMS, ids=lambda v: str(v))
def test_expected_outputs_are_the_reference_runtimes(name, flow):
    """The .bpte's expected outputs = the real executorch runtime (float) or executorch's cortex_m::
    reference ops run over the program's own instructions (int8), for each bundled input."""
    from etdeploy import oracle
    e = export(name, flow)
    cases = oracle.bundled_cases(e["bpte"])["forward"]
    if flow == "cortex_m":
        outs = [[np.asarray(o) for o in oracle.run_cortex_m_reference(e["pte"], ins)] for ins, _ in cases]
    else:   # the runtime's pybinding copies input bytes as they are: hand it tensors in the program's dim order
        orders = [i.dim_order for i in read_program(e["pte"]).methods[0].inputs]
        outs = [[np.asarray(o) for o in oracle.run_reference(e["pte"], [_in_dim_order(a, d) for a, d in
                                                                         zip(ins, orders)])] for ins, _ in cases]
    for k, ((ins, exp), got) in enumerate(zip(cases, outs)):
        assert_close(got, exp, f"{name}/{flow} case {k}")
    assert not np.array_equal(outs[0][0], outs[1][0]), f"{name}/{flow}: outputs do not depend on the inputs"


# ---------------------------------------------------------------- on the boards

@pytest.mark.build
@pytest.mark.emu
@pytest.mark.parametrize("board", ["host", "corstone300", "mps2-an386"])
def test_float_bundles_pass(board):
    _run_all(board, FLOAT_PROGRAMS)


@pytest.mark.build
@pytest.mark.emu
@pytest.mark.parametrize("board", ["corstone300", "host", "mps2-an386"])   # Helium, portable, DSP (SMLAD) kernels
def test_int8_bundles_pass(board):
    _run_all(board, INT8_PROGRAMS)


@pytest.mark.build
def test_nchw_input_feeds_the_channels_last_int8_program():
    """An input given in NCHW (as `etdeploy run --input x.npy` sends it) reaches the program whose
    input the flow made channels_last: laid out by the host side, the outputs are the expected ones."""
    from etdeploy import oracle
    from support.hostrun import run_host
    e = export("resnet8", "cortex_m")
    assert read_program(e["pte"]).methods[0].inputs[0].dim_order == (0, 2, 3, 1)
    ins, exp = oracle.bundled_cases(e["bpte"])["forward"][1]
    assert ins[0].shape[1] == 3 and ins[0].flags["C_CONTIGUOUS"]            # NCHW, three channels
    assert_close(run_host(e["pte"], inputs=[ins[0]]), exp, "resnet8/cortex_m with an NCHW input")


def test_export_failure_is_one_line_naming_the_model_and_the_way_out(tmp_path):
    import torch
    from etdeploy import exporting

    class DataDependent(torch.nn.Module):
        def forward(self, x):
            return x * 2 if x.sum() > 0 else x - 1          # torch.export cannot trace this branch

    with pytest.raises(exporting.ExportError) as e:
        exporting.export_model(DataDependent(), (torch.randn(1, 3, 4, 4),), tmp_path, "branchy", "cortex_m")
    msg = str(e.value)
    assert "\n" not in msg and "'branchy'" in msg and "way out: export it in float" in msg, msg


def test_int8_shufflenet_keeps_channels_last_through_its_shuffles():
    """Export does ShuffleNetV2's channel shuffles in the channels_last bytes (shuffle_layout.py): every
    int8 convolution reads NHWC input (an NCHW one takes the slow generic path, 7-12 instructions per
    MAC), no copy to the contiguous order is left, and the splits and cats between them stay NHWC."""
    from etdeploy.pte import TensorInfo
    e = export("shufflenet_v2_x0_5", "cortex_m")
    prog = read_program(e["pte"])
    m = prog.methods[0]
    assert "dim_order_ops::_clone_dim_order.out" not in m.operators, m.operators
    convs = 0
    for _, op, args in m.calls:
        name = m.operators[op]
        first = next((a for a in args if isinstance(a, TensorInfo)), None)
        if name.startswith(("cortex_m::quantized_conv2d", "cortex_m::quantized_depthwise_conv2d",
                            "aten::cat", "aten::split_with_sizes_copy")) and first is not None and first.sizes[2:] != (1, 1):
            assert first.dim_order == (0, 2, 3, 1), (name, first)
            convs += name.startswith("cortex_m::quantized")
    assert convs > 20
