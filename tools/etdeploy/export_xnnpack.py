"""The xnnpack export flows: executorch's XnnpackPartitioner, restricted to what Debian's XNNPACK runs.

Debian 12 packages a February 2022 XNNPACK snapshot (libxnnpack0 0.0~git20220216). Its subgraph API
has convolution, depthwise, fully connected, pooling, the binary element-wise ops, pad, reshape,
resize-bilinear, clamp, hardswish, sigmoid, softmax, leaky-relu, prelu and per-channel int8 weights,
but no concatenate, transpose, slice, batch matmul, gelu, tanh or exp. The partitioner gets only the
configs for the first set; everything else stays on our portable kernels.

  xnnpack       float: partitioned program, expected outputs from executorch's runtime (with XNNPACK)
  xnnpack_q8    XNNPACKQuantizer (symmetric, per-channel weights) int8, then the same partitioner
"""
from __future__ import annotations

FLOWS = ("xnnpack", "xnnpack_q8")

# executorch partitioner config class names whose serialized nodes the 2022 library defines
CONFIGS = (
    "AddConfig", "SubConfig", "MulConfig", "DivConfig", "MinimumConfig", "MaximumConfig",
    "ConvolutionConfig", "LinearConfig", "AddmmConfig", "BatchNormConfig",   # batch norm: folded into conv
    "AvgPoolingConfig", "MaxPool2dConfig", "MeanDimConfig",
    "ConstantPadConfig", "ClampConfig", "HardtanhConfig", "ReLUConfig", "HardswishConfig",
    "SigmoidConfig", "SoftmaxConfig", "LeakyReLUConfig", "PreluConfig",
    "AbsConfig", "NegConfig", "FloorConfig", "CeilConfig", "SquareRootConfig",
    "ViewCopyConfig", "UpsampleBilinear2dConfig",
    "QuantizedPerTensorConfig", "DeQuantizedPerTensorConfig",
)


def flow_name(flow: str, quantize: bool) -> str:
    """`--flow xnnpack --quantize` is the int8 flow."""
    return "xnnpack_q8" if flow == "xnnpack" and quantize else flow


def partitioner():
    from executorch.backends.xnnpack.partition import config as cfg
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    return XnnpackPartitioner(configs=[getattr(cfg, n) for n in CONFIGS])


def lower(flow: str, module, example_inputs: tuple, calibration, calibrate_quantize):
    """(edge program manager, None) for `flow`; calibrate_quantize is exporting's PT2E helper."""
    import torch
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower
    if flow == "xnnpack_q8":
        from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
            XNNPACKQuantizer, get_symmetric_quantization_config)
        # per-channel weights for convolutions; the 2022 library's fully connected takes per-tensor only
        quantizer = (XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
                     .set_module_type(torch.nn.Linear, get_symmetric_quantization_config(is_per_channel=False)))
        ep = calibrate_quantize(module, example_inputs, quantizer, calibration)
        config = EdgeCompileConfig(_check_ir_validity=False)
    else:
        ep = torch.export.export(module, example_inputs)
        config = None
    edge = to_edge_transform_and_lower(ep, partitioner=[partitioner()], compile_config=config,
                                       generate_etrecord=True)
    return edge, None
