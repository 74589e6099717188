"""The op-coverage corpus: small float/int modules that together use every operator on etdeploy's
list. Each exports to ops_<family>.pte/.bpte (portable flow). REQUIRED maps each item of the list to
the operator names (any of) that prove it appears in an exported program."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def _g(seed):
    return torch.Generator().manual_seed(seed)


class Arith(nn.Module):
    def forward(self, x, y, z):                 # x, y: (2,3,4); z: (3,4) broadcast
        d = y.abs() + 0.5
        return (x + y, x - z, x * y, x / d,
                torch.div(x * 4.0, d, rounding_mode="floor"), torch.div(x * 4.0, d, rounding_mode="trunc"),
                torch.rsub(x, z), 1.0 - x, -x, x.abs(), x * 0.5 + 2.0)


class Compare(nn.Module):
    def forward(self, x, y):                    # small integer-valued floats: equality happens
        return (x == y, x != y, x < y, x <= y, x > y, x >= y,
                x == 1.0, x != 0.0, x < 0.5, x <= -1.0, x > 1.0, x >= 0.0,
                torch.logical_not(x > y), torch.where(x > y, x, y))


class IntOps(nn.Module):
    def forward(self, a, b, f):                 # a int32 (2,4), b int64 (2,4), f float (2,4)
        return (a + a, a - a * 3, b * b, a + b, a + f, b.abs(), -a, a > b, a.eq(2))


class Activations(nn.Module):
    def forward(self, x):
        return (F.relu(x), F.hardtanh(x, -0.5, 0.5), torch.sigmoid(x), torch.tanh(x), F.gelu(x),
                F.gelu(x, approximate="tanh"), F.hardswish(x), F.hardsigmoid(x), x.clamp(-0.3, 0.7),
                F.softmax(x, dim=-1), F.log_softmax(x, dim=1))


class Linalg(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 5)

    def forward(self, a, b, c, bias):           # a (3,4), b (4,6), c (2,4,6)->bmm with (2,6,3)
        return (torch.addmm(bias, a, b), torch.mm(a, b), torch.bmm(c, c.transpose(1, 2)), self.fc(torch.mm(a, b)))


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.strided = nn.Conv2d(4, 6, 3, stride=2, padding=1)
        self.dilated = nn.Conv2d(4, 4, 3, dilation=2, padding=2, bias=False)
        self.grouped = nn.Conv2d(4, 6, 3, groups=2)
        self.depthwise = nn.Conv2d(4, 4, 3, groups=4, padding=1)
        self.conv1d = nn.Conv1d(4, 3, 5, stride=2, padding=2)

    def forward(self, x, s):                    # x (1,4,8,8), s (1,4,16)
        return self.strided(x), self.dilated(x), self.grouped(x), self.depthwise(x), self.conv1d(s)


class Pool(nn.Module):
    def forward(self, x):                       # (1,3,6,6)
        return (F.max_pool2d(x, 2), F.max_pool2d(x, 3, stride=2, padding=1), F.avg_pool2d(x, 2),
                F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False), F.adaptive_avg_pool2d(x, (2, 2)),
                x.mean(dim=(-1, -2), keepdim=True), x.sum(dim=1), x.amax(dim=-1))


class Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(8)
        self.bn = nn.BatchNorm2d(3)
        with torch.no_grad():
            self.ln.weight.copy_(torch.rand(8, generator=_g(5)) + 0.5)
            self.ln.bias.copy_(torch.randn(8, generator=_g(6)))
            self.bn.running_mean.copy_(torch.randn(3, generator=_g(7)))
            self.bn.running_var.copy_(torch.rand(3, generator=_g(8)) + 0.5)
            self.bn.weight.copy_(torch.rand(3, generator=_g(9)) + 0.5)
            self.bn.bias.copy_(torch.randn(3, generator=_g(10)))

    def forward(self, x):                       # (1,3,4,8)
        return self.ln(x), self.bn(x)


class Shape(nn.Module):
    def forward(self, x, y):                    # x (2,3,4), y (1,4)
        parts = torch.split(x, [1, 3], dim=2)
        return (x.permute(2, 0, 1) * 1.0, (x * 2.0).view(6, 4), (x + 1.0).unsqueeze(0),
                (x - 1.0).unsqueeze(1).squeeze(1) * 3.0, y.expand(3, 4) + 0.0, x[:, 1:3] * 1.0,
                x[:, 1] + 0.0, torch.cat([x, x * 2.0], dim=2), parts[0] + 1.0, parts[1] * 2.0,
                F.pad(x, (1, 2), value=0.5))


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)

    def forward(self, idx):                     # int64 (2,5), values in [0, 10)
        return self.emb(idx)


class DimOrder(nn.Module):
    def forward(self, x, a):                    # x (1,2,3,3) float, a (2,3) int32
        return (x.contiguous(memory_format=torch.channels_last), a.to(torch.float32) * 0.5,
                x.to(torch.int32), x.clone() + 1.0)


class Copies(nn.Module):                        # exported with _skip_dim_order: aten::_to_copy, clone
    def forward(self, x, a):
        return a.to(torch.float32) * 0.5, x.to(torch.int64), x.clone() + 1.0


def _ints(lo, hi, shape, dtype):
    return lambda g: torch.randint(lo, hi, shape, generator=g).to(dtype)


def _cmp_inputs(g):
    return (torch.randint(-2, 3, (2, 5), generator=g).float(), torch.randint(-2, 3, (2, 5), generator=g).float())


def OP_MODELS():
    """name -> (module factory, example inputs, flow, export kwargs) for export_model."""
    def seeded(cls):
        def make():
            torch.manual_seed(0)
            return cls().eval()
        return make

    ex = lambda *shape: torch.randn(*shape, generator=_g(len(shape)))  # noqa: E731
    int_in = (torch.tensor([[1, 2, -3, 4], [0, 5, 2, -1]], dtype=torch.int32),
              torch.tensor([[3, -2, 1, 0], [2, 2, 7, -4]], dtype=torch.int64), ex(2, 4))
    return {
        # rsub is not core ATen (it decomposes to sub): keep the Scalar form, which portable has
        "ops_arith": (seeded(Arith), (ex(2, 3, 4), ex(2, 3, 4), ex(3, 4)), "portable",
                      {"edge_config": {"preserve_ops": [torch.ops.aten.rsub.Scalar]}}),
        "ops_compare": (seeded(Compare), _cmp_inputs(_g(1)), "portable", {"make_inputs": _cmp_inputs}),
        "ops_int": (seeded(IntOps), int_in, "portable",
                    {"make_inputs": lambda g: (_ints(-8, 8, (2, 4), torch.int32)(g),
                                               _ints(-8, 8, (2, 4), torch.int64)(g), torch.randn(2, 4, generator=g))}),
        "ops_activation": (seeded(Activations), (ex(2, 16) * 3,), "portable",
                           {"make_inputs": lambda g: (torch.randn(2, 16, generator=g) * 3,)}),
        "ops_linalg": (seeded(Linalg), (ex(3, 4), ex(4, 6), ex(2, 4, 6), ex(3, 6)), "portable",
                       {"edge_config": {"preserve_ops": [torch.ops.aten.linear.default]}}),
        "ops_conv": (seeded(Conv), (ex(1, 4, 8, 8), ex(1, 4, 16)), "portable", {}),
        "ops_pool": (seeded(Pool), (ex(1, 3, 6, 6),), "portable", {}),
        "ops_norm": (seeded(Norm), (ex(1, 3, 4, 8),), "portable", {}),
        "ops_shape": (seeded(Shape), (ex(2, 3, 4), ex(1, 4)), "portable", {}),
        "ops_embedding": (seeded(Embed), (torch.tensor([[0, 3, 9, 1, 1], [7, 2, 5, 0, 8]]),), "portable",
                          {"make_inputs": lambda g: (_ints(0, 10, (2, 5), torch.int64)(g),)}),
        "ops_dim_order": (seeded(DimOrder), (ex(1, 2, 3, 3), int_in[0][:, :3].contiguous()), "portable",
                          {"make_inputs": lambda g: (torch.randn(1, 2, 3, 3, generator=g) * 4,
                                                     _ints(-8, 8, (2, 3), torch.int32)(g))}),
        "ops_copy": (seeded(Copies), (ex(1, 2, 3, 3), int_in[0][:, :3].contiguous()), "portable",
                     {"edge_config": {"_skip_dim_order": True},
                      "make_inputs": lambda g: (torch.randn(1, 2, 3, 3, generator=g) * 4,
                                                _ints(-8, 8, (2, 3), torch.int32)(g))}),
    }


# item of the list -> operator names, any of which proves it is covered
REQUIRED = {
    "add": ["aten::add.out"], "sub": ["aten::sub.out"], "mul": ["aten::mul.out"],
    "div": ["aten::div.out"], "div rounding_mode": ["aten::div.out_mode"],
    "rsub": ["aten::rsub.Scalar_out", "aten::rsub.out"], "neg": ["aten::neg.out"], "abs": ["aten::abs.out"],
    "eq Scalar": ["aten::eq.Scalar_out"], "eq Tensor": ["aten::eq.Tensor_out"],
    "ne Scalar": ["aten::ne.Scalar_out"], "ne Tensor": ["aten::ne.Tensor_out"],
    "lt Scalar": ["aten::lt.Scalar_out"], "lt Tensor": ["aten::lt.Tensor_out"],
    "le Scalar": ["aten::le.Scalar_out"], "le Tensor": ["aten::le.Tensor_out"],
    "gt Scalar": ["aten::gt.Scalar_out"], "gt Tensor": ["aten::gt.Tensor_out"],
    "ge Scalar": ["aten::ge.Scalar_out"], "ge Tensor": ["aten::ge.Tensor_out"],
    "logical_not": ["aten::logical_not.out"], "relu": ["aten::relu.out"], "hardtanh": ["aten::hardtanh.out"],
    "sigmoid": ["aten::sigmoid.out"], "tanh": ["aten::tanh.out"], "gelu": ["aten::gelu.out"],
    # no portable kernel in 1.5.1: to_edge decomposes both into add/clamp/div/mul (ops_activation)
    "hardswish": ["aten::hardswish.out", "aten::clamp.out"],
    "hardsigmoid": ["aten::hardsigmoid.out", "aten::clamp.out"],
    "clamp": ["aten::clamp.out"], "where": ["aten::where.self_out"],
    "softmax": ["aten::_softmax.out"], "log_softmax": ["aten::_log_softmax.out"],
    "addmm": ["aten::addmm.out"], "mm": ["aten::mm.out"], "bmm": ["aten::bmm.out"], "linear": ["aten::linear.out"],
    "convolution": ["aten::convolution.out"],
    "max_pool2d_with_indices": ["aten::max_pool2d_with_indices.out"], "avg_pool2d": ["aten::avg_pool2d.out"],
    "adaptive avg pool": ["aten::_adaptive_avg_pool2d.out"],
    "mean.dim": ["aten::mean.out"], "sum.dim_IntList": ["aten::sum.IntList_out"], "amax": ["aten::amax.out"],
    "native_layer_norm": ["aten::native_layer_norm.out"],
    "batch norm": ["aten::_native_batch_norm_legit_no_training.out"],
    "permute_copy": ["aten::permute_copy.out"], "view_copy": ["aten::view_copy.out"],
    "squeeze_copy": ["aten::squeeze_copy.dims_out", "aten::squeeze_copy.dim_out", "aten::squeeze_copy.out"],
    "unsqueeze_copy": ["aten::unsqueeze_copy.out"], "expand_copy": ["aten::expand_copy.out"],
    "slice_copy": ["aten::slice_copy.Tensor_out"], "select_copy": ["aten::select_copy.int_out"],
    "cat": ["aten::cat.out"], "split_with_sizes_copy": ["aten::split_with_sizes_copy.out"],
    "constant_pad_nd": ["aten::constant_pad_nd.out"], "embedding": ["aten::embedding.out"],
    "_to_copy": ["aten::_to_copy.out"], "clone": ["aten::clone.out"],
    "_to_dim_order_copy": ["dim_order_ops::_to_dim_order_copy.out"],
    "_clone_dim_order": ["dim_order_ops::_clone_dim_order.out"],
}
