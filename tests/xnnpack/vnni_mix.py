"""Int8 convolutions and fully connected layers of every shape XnnpackBackend's own AVX512-VNNI kernel
takes (firmware/backends/xnnpack/et_xnn_own.c), with odd channel counts so every channel-block tail
and tile remainder is used: a one-input-channel conv (serialized as a depthwise one, 5x3, stride 2x1),
3x3 stride 2 padded, 1x1 on 36 channels (read in place), 3x3 with unequal padding and no bias, 5x5,
and two fully connected layers on a batch of 3 (rows > 1; 1x1 convolutions on odd channel counts,
through the padded image) in a second delegate after a portable mean, with and without relu. A
grouped conv stays in XNNPACK between them. (A relu6 between two int8 convs is a qs8 clamp whose input
and output scales differ, which the 2022 library refuses to define: not used.)"""
import torch
from torch import nn


class VnniMix(nn.Module):
    def __init__(self):
        super().__init__()
        self.c0 = nn.Conv2d(1, 9, (5, 3), stride=(2, 1), padding=(2, 1))
        self.c1 = nn.Conv2d(9, 36, 3, stride=2, padding=1)
        self.c2 = nn.Conv2d(36, 70, 1)      # 1x1 on a multiple of 4 channels: read in place, no image
        self.g = nn.Conv2d(70, 70, 3, padding=1, groups=2)
        self.c3 = nn.Conv2d(70, 17, 3, padding=(1, 2), bias=False)
        self.c4 = nn.Conv2d(17, 5, 5, padding=2)
        self.fc1 = nn.Linear(5, 33)
        self.fc2 = nn.Linear(33, 7)

    def forward(self, x):
        x = torch.relu(self.c0(x))
        x = self.c1(x)
        x = self.c2(x)
        x = torch.relu(self.g(x))
        x = torch.relu(self.c3(x))
        x = self.c4(x)
        x = torch.relu(self.fc1(x.mean(dim=(2, 3))))   # the mean stays on our portable kernels
        return self.fc2(x)


def example_inputs():
    return (torch.randn(3, 1, 95, 81),)   # c0 and c1 images past 64 KB: built on the pool too
