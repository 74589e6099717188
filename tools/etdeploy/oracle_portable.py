"""aten:: ops whose ATen CPU arithmetic differs from executorch's portable kernels (the kernels a real
executorch runtime runs), evaluated here the portable way for the .pte interpreter in oracle.py.

upsample_bilinear2d: ATen rounds its blend differently (fused/vectorised products) and lands one ulp
away from the portable kernel in about a fifth of the values; where a quantize follows, as in a
cortex_m program, z / scale of a blend of dequantized int8 values sits on .5 often, so that ulp flips
whole quanta. The portable kernel (and ours, bit for bit) computes in float32, each step rounded:
  h0 * (w0 * v00 + w1 * v01) + h1 * (w0 * v10 + w1 * v11)
with taps from src = step * (o + 0.5) - 0.5 (align_corners: step * o), clamped at 0, where step is
(float)(1 / scale) (divided in double) or in / out, and 1 for a dim whose size does not change.
"""
from __future__ import annotations

import math

import numpy as np


def _taps(n_in: int, n_out: int, align: bool, scale):
    f = np.float32
    if align:
        step = f(n_in - 1) / f(n_out - 1) if n_out > 1 else f(0)
    elif n_in == n_out:
        step = f(1)
    elif scale is not None and scale > 0:
        step = f(1.0 / scale)   # (float)(1 / scale) with the division in double
    else:
        step = f(n_in) / f(n_out) if n_out > 0 else f(0)
    o = np.arange(n_out, dtype=np.float32)
    src = step * o if align else step * (o + f(0.5)) - f(0.5)
    src = np.maximum(src, f(0)).astype(np.float32)
    i0 = np.minimum(src.astype(np.int64), n_in - 1)
    i1 = np.where(i0 < n_in - 1, i0 + 1, i0)
    l1 = np.minimum(src - i0.astype(np.float32), f(1)).astype(np.float32)
    l0 = (f(1) - l1).astype(np.float32)
    return i0, i1, l0, l1


def upsample_bilinear2d(x, out_hw, align_corners: bool, scales=(None, None)):
    """A new tensor (x's memory format) blended like the portable kernel; out_hw None: from scales."""
    import torch
    ih, iw = int(x.shape[-2]), int(x.shape[-1])
    sh, sw = (None if s is None else float(s) for s in scales)
    if out_hw:
        oh, ow = int(out_hw[0]), int(out_hw[1])
    else:
        oh, ow = int(math.floor(ih * sh)), int(math.floor(iw * sw))
    y0, y1, h0, h1 = (torch.from_numpy(a) for a in _taps(ih, oh, align_corners, sh))
    x0, x1, w0, w1 = (torch.from_numpy(a) for a in _taps(iw, ow, align_corners, sw))
    v = x.to(torch.float32)
    top, bot = v.index_select(2, y0), v.index_select(2, y1)
    t0 = top.index_select(3, x0) * w0 + top.index_select(3, x1) * w1   # two roundings each, as in C
    t1 = bot.index_select(3, x0) * w0 + bot.index_select(3, x1) * w1
    r = (t0 * h0[:, None] + t1 * h1[:, None]).to(x.dtype)
    if x.dim() == 4 and not x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last):
        r = r.contiguous(memory_format=torch.channels_last)
    return r


def upsample_bilinear2d_vec_out(x, output_size, align_corners, scale_factors, out):
    r = upsample_bilinear2d(x, output_size, align_corners, scale_factors or (None, None))
    if tuple(out.shape) != tuple(r.shape):
        out.resize_(r.shape)
    out.copy_(r)
    return out


def portable_arithmetic():
    """A torch dispatch mode in which the ops above compute the portable kernels' way (for running an
    exported graph module as the reference of a program on CPU kernels)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    aten = torch.ops.aten

    class _Portable(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func is aten.upsample_bilinear2d.vec:
                a = list(args) + [kwargs.get(k) for k in ("output_size", "align_corners", "scale_factors")][len(args) - 1:]
                return upsample_bilinear2d(a[0], a[1], bool(a[2]), a[3] or (None, None))
            if func is aten.upsample_bilinear2d.default:
                names = ("output_size", "align_corners", "scales_h", "scales_w")
                a = list(args) + [kwargs.get(k) for k in names[len(args) - 1:]]
                return upsample_bilinear2d(a[0], a[1], bool(a[2]), (a[3], a[4]))
            return func(*args, **kwargs)

    return _WithIntegerDilatedConv(_Portable())


class _WithIntegerDilatedConv:
    """The mode, and torch.nn.functional.conv2d computing integer convolutions with dilation in float64
    (exact: int8-range products summed stay far below 2^53): CPU ATen has none ("slow_conv_dilated<> not
    implemented for 'Int'"), which executorch's cortex_m::quantized_conv2d reference calls. Patched for the
    duration only; the mode cannot see it (the reference op runs below the Python dispatch key)."""

    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        import torch.nn.functional as F
        self.saved = conv = F.conv2d

        def conv2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
            dil = (dilation,) * 2 if isinstance(dilation, int) else tuple(dilation)
            if x.is_floating_point() or all(d == 1 for d in dil):
                return conv(x, w, b, stride, padding, dilation, groups)
            return conv(x.double(), w.double(), None if b is None else b.double(), stride, padding, dilation,
                        groups).round().to(x.dtype)

        F.conv2d = conv2d
        self.mode.__enter__()
        return self

    def __exit__(self, *exc):
        import torch.nn.functional as F
        try:
            return self.mode.__exit__(*exc)
        finally:
            F.conv2d = self.saved


# op name -> (number of schema arguments, implementation taking them in order)
PORTABLE_OPS = {
    "aten::upsample_bilinear2d.vec_out": (5, upsample_bilinear2d_vec_out),
}
