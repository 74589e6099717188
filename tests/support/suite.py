"""What several test files share, written once: where the fixtures are, which CPU fixtures exist,
which boards are built and run, how a test asks for a board's tools, and the operators each kernel
test file must exercise."""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "tests" / "models"

# Boards that run here (QEMU corstone300/mps2-an386, QEMU Xtensa, qemu-aarch64, the host itself).
RUN_BOARDS = ["corstone300", "mps2-an386", "xtensa-sim", "android-arm64", "host"]


def all_boards() -> list[str]:
    from etdeploy import config
    return config.board_names()


def cpu_fixtures() -> list[str]:
    man = MODELS / "manifest.json"
    if not man.exists():
        return []
    doc = json.loads(man.read_text())
    entries = doc.get("files", doc) if isinstance(doc, dict) else doc
    names = sorted({Path(k).stem for k in (entries if isinstance(entries, dict) else [e["file"] for e in entries])
                    if k.endswith(".pte") and "ethos" not in k})
    return names


def require_board(name: str) -> None:
    """Skip (fail on CI) unless the board's compiler and emulator are installed."""
    from conftest import need_tool
    from etdeploy import config
    b = config.load_board(name)
    tc = config.board_toolchain(b, require=False)
    if tc.locate() is None:
        need_tool(tc.compiler(), tc.package)
    if b.emulator and b.emulator.binary:
        need_tool(b.emulator.binary, b.emulator.package)


def assert_cover(required: set[str], case_dirs) -> None:
    """The exported cases (dirs with ops.json) exercise every required operator, and every operator
    they use has a kernel in our catalogue."""
    from etdeploy import kernels
    seen: set[str] = set()
    for d in case_dirs:
        seen.update(json.loads((Path(d) / "ops.json").read_text()))
    missing = required - seen
    assert not missing, f"no test case exercises {sorted(missing)}"
    extra = seen - set(kernels.catalogue())
    assert not extra, f"ops without kernels: {sorted(extra)}"


# Operators each kernel test file's cases must exercise (test_cases_cover_the_ops in each).
REQUIRED_OPS = {
    "test_kernels_a": {
        "aten::add.out", "aten::sub.out", "aten::mul.out", "aten::div.out", "aten::div.out_mode",
        "aten::lt.Tensor_out", "aten::le.Scalar_out", "aten::eq.Tensor_out", "aten::ne.Scalar_out",
        "aten::gt.Tensor_out", "aten::ge.Tensor_out", "aten::logical_not.out", "aten::where.self_out",
        "aten::relu.out", "aten::hardtanh.out", "aten::sigmoid.out", "aten::tanh.out", "aten::gelu.out",
        "aten::clamp.out", "aten::clamp.Tensor_out", "aten::neg.out", "aten::abs.out",
        "aten::_softmax.out", "aten::_log_softmax.out", "aten::mean.out", "aten::sum.IntList_out", "aten::amax.out",
        "aten::permute_copy.out", "aten::view_copy.out", "aten::squeeze_copy.dims_out", "aten::unsqueeze_copy.out",
        "aten::expand_copy.out", "aten::slice_copy.Tensor_out", "aten::select_copy.int_out", "aten::cat.out",
        "aten::split_with_sizes_copy.out", "aten::constant_pad_nd.out", "aten::full.out", "aten::full_like.out",
        "dim_order_ops::_clone_dim_order.out", "dim_order_ops::_to_dim_order_copy.out",
    },
    "test_kernels_b": {
        "aten::convolution.out", "aten::addmm.out", "aten::mm.out", "aten::bmm.out", "aten::linear.out",
        "aten::max_pool2d_with_indices.out", "aten::avg_pool2d.out", "aten::_adaptive_avg_pool2d.out",
        "aten::native_layer_norm.out", "aten::_native_batch_norm_legit_no_training.out", "aten::embedding.out",
    },
    "test_kernels_bq": {
        "quantized_decomposed::quantize_per_tensor.out", "quantized_decomposed::dequantize_per_tensor.out",
        "quantized_decomposed::quantize_per_tensor.Tensor_out",
        "quantized_decomposed::dequantize_per_tensor.Tensor_out",
        "quantized_decomposed::quantize_per_channel.out", "quantized_decomposed::dequantize_per_channel.out",
        "cortex_m::quantize_per_tensor.out", "cortex_m::dequantize_per_tensor.out", "cortex_m::quantized_linear.out",
        "cortex_m::quantized_conv2d.out", "cortex_m::quantized_depthwise_conv2d.out", "cortex_m::quantized_add.out",
        "cortex_m::quantized_mul.out", "cortex_m::quantized_max_pool2d.out", "cortex_m::quantized_avg_pool2d.out",
        "cortex_m::softmax.out", "cortex_m::transpose.out", "cortex_m::pad.out",
        "cortex_m::quantized_transpose_conv2d.out",
    },
}
