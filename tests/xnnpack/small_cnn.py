"""Small CNN for the xnnpack flows: conv+relu, depthwise conv, max pool, mean, linear (all delegated),
then a tanh the 2022 library lacks (stays on our portable kernels)."""
import torch
from torch import nn


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.dw(torch.relu(self.conv(x)))))
        x = x.mean(dim=(2, 3))
        return torch.tanh(self.fc(x))


def example_inputs():
    return (torch.randn(1, 3, 16, 16),)

