"""One XNNPACK delegate with three inputs and three outputs: the delegate's arguments must meet the
subgraph's external ids in order."""
import torch
from torch import nn


class TwoInTwoOut(nn.Module):
    """Two inputs and two outputs of one delegate (argument order = external ids): y + conv(x), and
    a sigmoid of the fully connected head; plus a softmax on the side."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.fc = nn.Linear(6, 3)

    def forward(self, x, y, z):
        return y + self.conv(x), torch.sigmoid(self.fc(z)), torch.softmax(z, dim=-1)


def example_inputs():
    return (torch.randn(1, 4, 6, 5), torch.randn(1, 4, 6, 5), torch.randn(2, 6))
