"""The xnnpack export flows: executorch's XnnpackPartitioner, restricted to what Debian's XNNPACK runs.

Debian 12 packages a February 2022 XNNPACK snapshot (libxnnpack0 0.0~git20220216). Its subgraph API
has convolution, depthwise, fully connected, pooling, the binary element-wise ops, pad, reshape,
resize-bilinear, clamp, hardswish, sigmoid, softmax, leaky-relu, prelu and per-channel int8 weights,
but no concatenate, transpose, slice, batch matmul, gelu, tanh or exp. The partitioner gets only the
configs for the first set; everything else stays on our portable kernels.

No transpose also means no layout change inside a delegate. executorch runs 4-d tensors in a delegate
channels-last (NHWC) and puts an NCHW<->NHWC transpose before and after every node that needs NCHW; a
reshape (view_copy) needs NCHW, so one between two convolutions (shufflenet's channel shuffle:
view, transpose, view) brings two real transposes into the delegate. Only the transposes at a
delegate's edge can run (the backend does them in C), so a reshape is delegated only where NCHW and
NHWC are the same bytes: every 4-d tensor it reads or writes has one channel or one pixel (the
[N, C, 1, 1] -> [N, C] flatten before a classifier). Other reshapes run on our kernels, between
delegates, whose edges then carry the layout change.

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


def layout_free(shape) -> bool:
    """A tensor whose NCHW and NHWC layouts are the same bytes (not 4-d, one channel or one pixel)."""
    return len(shape) != 4 or shape[1] == 1 or shape[2] * shape[3] == 1


def _reshape_config(base):
    class LayoutFreeViewCopyConfig(base):
        """view_copy only where no NCHW<->NHWC transpose can come next to it (module docstring)."""

        def check_constraints(self, node, ep) -> bool:
            if not super().check_constraints(node, ep):
                return False
            src = node.args[0]
            shapes = [tuple(n.meta["val"].shape) for n in (src, node)
                      if hasattr(n, "meta") and hasattr(n.meta.get("val"), "shape")]
            if len(shapes) == 2 and all(layout_free(s) for s in shapes):
                return True
            import logging
            from executorch.exir.backend.utils import WhyNoPartition
            WhyNoPartition(logger=logging.getLogger(__name__))(node, reason=f"reshape {shapes} would need an NCHW<->NHWC transpose "
                                                       f"inside the delegate (the 2022 XNNPACK has none)")
            return False
    return LayoutFreeViewCopyConfig


def partitioner():
    from executorch.backends.xnnpack.partition import config as cfg
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    configs = [_reshape_config(cfg.ViewCopyConfig) if n == "ViewCopyConfig" else getattr(cfg, n) for n in CONFIGS]
    return XnnpackPartitioner(configs=configs)


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
    check_delegates(edge)
    return edge, None


def check_delegates(edge) -> None:
    """Each delegate payload passes the bake's check (xnnpack_delegate.check_graph) now, at export: a node
    the partitioning let through that the installed XNNPACK cannot run is this flow's bug, not the user's."""
    from executorch.exir.lowered_backend_module import LoweredBackendModule
    from .errors import BakeError
    from .export_common import ExportError
    from .xnnpack_delegate import XnnpackDelegate, check_graph, read_payload
    for method in edge.methods:
        mods = [m for m in edge.exported_program(method).graph_module.modules()
                if isinstance(m, LoweredBackendModule) and m.backend_id == XnnpackDelegate.backend]
        for i, m in enumerate(mods):
            try:
                check_graph(read_payload(bytes(m.processed_bytes)).graph, f"{method}[{i}]")
            except BakeError as e:
                raise ExportError(f"{str(e).split('; ')[0]}: the xnnpack flow's partitioning should have kept it "
                                  f"out (a bug, please report it with the model); --flow portable runs the model "
                                  f"meanwhile") from None
