"""The two structures of held-out torchvision networks that the xnnpack flow got wrong, small:
- shufflenet_v2's channel shuffle (view, transpose, view) between convolutions: its reshapes, delegated,
  brought real NCHW<->NHWC transposes into the delegates, which the 2022 XNNPACK cannot run; and its
  downsampling unit, whose two branches read one input (int8: through two equal edge transposes);
- mobilenet_v3's squeeze-excite with hardsigmoid, eight times in one delegate: each hardsigmoid's +3 and
  /6 constants are inputs of the delegate, 17 and more of them, which the backend had left unbound.
16x16 input (squeeze-excites on 4x4 maps: more than 7 pixels, the 2022 library's multipass mean), 16 channels: one export per flow (float, int8) covers both."""
import torch
from torch import nn
from torch.nn import functional as F


def channel_shuffle(x, groups: int):
    n, c, h, w = x.shape
    return x.view(n, groups, c // groups, h, w).transpose(1, 2).contiguous().view(n, c, h, w)


def _branch(cin: int, h: int, stride: int):
    return nn.Sequential(nn.Conv2d(cin, h, 1), nn.BatchNorm2d(h), nn.ReLU(),
                         nn.Conv2d(h, h, 3, stride=stride, padding=1, groups=h), nn.BatchNorm2d(h),
                         nn.Conv2d(h, h, 1), nn.BatchNorm2d(h), nn.ReLU())


class ShuffleUnit(nn.Module):
    """shufflenet_v2's unit. Stride 1: half the channels through 1x1, depthwise 3x3, 1x1; cat; shuffle.
    Stride 2: both branches read the whole input (depthwise 3x3 s2, 1x1 | 1x1, depthwise s2, 1x1)."""

    def __init__(self, c: int, stride: int = 1):
        super().__init__()
        h = c // 2
        self.stride = stride
        self.branch = _branch(c if stride == 2 else h, h, stride)
        if stride == 2:
            self.down = nn.Sequential(nn.Conv2d(c, c, 3, stride=2, padding=1, groups=c), nn.BatchNorm2d(c),
                                      nn.Conv2d(c, h, 1), nn.BatchNorm2d(h), nn.ReLU())

    def forward(self, x):
        if self.stride == 2:
            a, b = self.down(x), self.branch(x)
        else:
            a, b = x.chunk(2, dim=1)
            b = self.branch(b)
        return channel_shuffle(torch.cat((a, b), dim=1), 2)


class SqueezeExcite(nn.Module):
    """mobilenet_v3's (torchvision's SqueezeExcitation): AdaptiveAvgPool2d(1), 1x1 down, relu, 1x1 up,
    hardsigmoid, gate * x. In int8 the pool is a qs8 global average pooling whose output shares its input's
    quantisation: Debian's 2022 library rounds a mean at an exact tie (sum of the 64 pixels = 32 mod 64)
    differently from executorch's XNNPACK when the zero point is odd (the backend runs it in C)."""

    def __init__(self, c: int, r: int = 4):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.down, self.up = nn.Conv2d(c, c // r, 1), nn.Conv2d(c // r, c, 1)

    def forward(self, x):
        return F.hardsigmoid(self.up(F.relu(self.down(self.pool(x))))) * x


class ShuffleSE(nn.Module):
    def __init__(self, c: int = 16, n_se: int = 8):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, stride=2, padding=1), nn.BatchNorm2d(c), nn.ReLU())
        self.shuffle = nn.Sequential(ShuffleUnit(c), ShuffleUnit(c, stride=2))   # s2 reads a shuffle
        self.mid = nn.Conv2d(c, c, 1)   # a convolution right after the shuffle's second view
        self.se = nn.ModuleList(nn.Sequential(nn.Conv2d(c, c, 3, padding=1, groups=c), nn.Hardswish(),
                                              SqueezeExcite(c)) for _ in range(n_se))
        self.fc = nn.Linear(c, 10)

    def forward(self, x):
        x = self.mid(self.shuffle(self.stem(x)))
        for b in self.se:   # mobilenet_v3's residual around each block
            x = x + b(x)
        return self.fc(x.mean((2, 3)))


def model():
    torch.manual_seed(0)
    m = ShuffleSE().eval()
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():   # batch-norm statistics as in a trained network (not the identity)
        for b in m.modules():
            if isinstance(b, nn.Conv2d):   # fan-in: the output depends on the input through eight SE blocks
                nn.init.kaiming_normal_(b.weight, mode="fan_in", generator=g)
            if isinstance(b, nn.BatchNorm2d):
                b.running_mean.copy_(torch.randn(b.num_features, generator=g) * 0.1)
                b.running_var.copy_(torch.rand(b.num_features, generator=g) * 0.5 + 0.75)
    return m


def example_inputs():
    return (torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(0)),)
