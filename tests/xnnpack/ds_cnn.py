"""MLPerf Tiny keyword spotting DS-CNN (the benchmark's published layer table): a 10x4 stride-2
convolution with 64 channels, four depthwise-separable blocks (3x3 depthwise + 1x1 pointwise, each
with batch norm and ReLU), average pooling over the 25x5 map and a 12-way classifier. Input: 49 MFCC
frames x 10 coefficients. Random weights (shapes and arithmetic are what the test checks)."""
import torch
from torch import nn


def _bn_relu(c):
    return [nn.BatchNorm2d(c), nn.ReLU()]


class DSCNN(nn.Module):
    def __init__(self, channels: int = 64, classes: int = 12):
        super().__init__()
        layers = [nn.Conv2d(1, channels, (10, 4), stride=2, padding=(5, 1)), *_bn_relu(channels)]
        for _ in range(4):
            layers += [nn.Conv2d(channels, channels, 3, padding=1, groups=channels), *_bn_relu(channels),
                       nn.Conv2d(channels, channels, 1), *_bn_relu(channels)]
        self.features = nn.Sequential(*layers)
        self.pool = nn.AvgPool2d((25, 5))
        self.fc = nn.Linear(channels, classes)
        g = torch.Generator().manual_seed(1)
        with torch.no_grad():   # non-trivial batch norm statistics, so folding them is exercised
            for m in self.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
                    m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)

    def forward(self, x):
        x = self.pool(self.features(x))
        return self.fc(torch.flatten(x, 1))


def example_inputs():
    return (torch.randn(1, 1, 49, 10, generator=torch.Generator().manual_seed(0)),)
