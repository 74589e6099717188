"""The Cortex-M passes with activations fused also where their output's quantisation is wider than what
they produce.

executorch 1.5.1's ActivationFusionPass fuses `conv/linear/add -> ReLU/clamp` by narrowing the producer's
output range to the activation's, but refuses ("Cannot fuse activation ... qmin is out of range") when
the activation's output quantisation covers codes the activation never yields: a ReLU whose output
shares its scale and zero point with a concatenation partner that has negative values (DenseNet's stem,
GoogLeNet's branches). The convolution is then left as aten::convolution on raw int8 codes, which the
device runtime does not run. The codes an activation yields are exactly [q(lo), q(hi)] of its bounds, so
narrowing its output's qmin/qmax to them changes no value; the pass then fuses as usual (the producer
clamps to that range, its scale and zero point those of the shared quantisation).

    CortexMPassManager(ep, passes=cortex_m_passes(), target_config=...)
"""
from __future__ import annotations


def _narrowing_fusion_pass():
    from executorch.backends.arm._passes.quant_args import QuantArgs
    from executorch.backends.cortex_m.passes.activation_fusion_pass import ActivationFusionPass
    from executorch.backends.cortex_m.passes.passes_utils import get_activation_bounds, quantize_val

    class NarrowingActivationFusionPass(ActivationFusionPass):
        def _get_validated_qparams(self, node, input_node):
            oq = node.meta.get("output_qparams")
            qa = oq.get(0) if isinstance(oq, dict) else None
            bounds = get_activation_bounds(node)
            if (qa is not None and bounds is not None and input_node.target not in self.MAX_POOL_OPS
                    and isinstance(qa.scale, float) and isinstance(qa.zp, int)):
                lo, hi = bounds
                qlo = int(quantize_val(lo, qa.scale, qa.zp, qa.qmin, qa.qmax)) if lo is not None else qa.qmin
                qhi = int(quantize_val(hi, qa.scale, qa.zp, qa.qmin, qa.qmax)) if hi is not None else qa.qmax
                if qa.qmin <= qlo <= qhi <= qa.qmax and (qlo, qhi) != (qa.qmin, qa.qmax):
                    node.meta["output_qparams"][0] = QuantArgs(**{**qa._asdict(), "qmin": qlo, "qmax": qhi})
            return super()._get_validated_qparams(node, input_node)

    return NarrowingActivationFusionPass


def cortex_m_passes() -> list:
    """CortexMPassManager's default (legacy) pass list with the activation fusion narrowed as above."""
    from executorch.backends.cortex_m.passes.activation_fusion_pass import ActivationFusionPass
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    narrowing = _narrowing_fusion_pass()
    return [narrowing if p is ActivationFusionPass else p for p in CortexMPassManager.legacy_pass_list]
