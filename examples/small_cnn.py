"""A small CNN (conv + relu + pool + linear) for the int8 flows, NHWC example input."""
import torch
from torch import nn
import torch.nn.functional as F


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 7 * 7, 10)

    def forward(self, x):                    # 1x1x14x14
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc(x.flatten(1))


def example_inputs():
    return (torch.randn(1, 1, 14, 14, generator=torch.Generator().manual_seed(2)),)
