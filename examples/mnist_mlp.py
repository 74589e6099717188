"""A small MNIST-shaped MLP for `etdeploy export examples/mnist_mlp.py:MnistMLP --board <b>`.

Weights are seeded (no training): the point is a deterministic model for the export flows."""
import torch
from torch import nn
import torch.nn.functional as F


class MnistMLP(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = nn.Linear(784, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def example_inputs():
    return (torch.randn(1, 784, generator=torch.Generator().manual_seed(1)),)
