"""MLPerf Tiny image classification ResNet-8 (the benchmark's published layer table): a 3x3 convolution
with 16 channels, three residual stacks (16 channels stride 1, 32 stride 2, 64 stride 2; each two 3x3
convolutions with batch norm, ReLU after the first and after the residual add, a 1x1 stride-2
convolution on the shortcut when the shape changes), 8x8 average pooling and a 10-way classifier.
Input: a 32x32 RGB image. Random weights."""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1)
        self.b2 = nn.BatchNorm2d(cout)
        self.short = nn.Conv2d(cin, cout, 1, stride) if stride != 1 or cin != cout else None

    def forward(self, x):
        y = self.b2(self.c2(torch.relu(self.b1(self.c1(x)))))
        return torch.relu(y + (self.short(x) if self.short is not None else x))


class ResNet8(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.stacks = nn.Sequential(Block(16, 16, 1), Block(16, 32, 2), Block(32, 64, 2))
        self.pool = nn.AvgPool2d(8)
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.stacks(self.stem(x))), 1))


def example_inputs():
    return (torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(0)),)
