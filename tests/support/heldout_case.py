"""The module of the held-out networks' kernel cases (test_kernels_cm's cm_heldout, test_kernels_dsp's
dsp_heldout: one network's ops on the M55 and on the DSP cores): ShuffleNetV2 units (chunk, cat, channel
shuffle) kept channels_last, grouped convolutions, an SE gate with a per-channel mul, SiLU, a strided max pool,
hardswish."""

SOURCE = """
nn = torch.nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(8, 40, 1)
        self.b = nn.Conv2d(20, 20, 1)
        self.d = nn.Conv2d(20, 20, 3, padding=1, groups=20)
        self.c = nn.Conv2d(20, 20, 1)
        self.e = nn.Conv2d(40, 40, 1)
        self.g1 = nn.Conv2d(40, 40, 3, padding=1, groups=4)
        self.g2 = nn.Conv2d(40, 24, 1, groups=2)
        self.g3 = nn.Conv2d(40, 40, 3, stride=2, padding=1, groups=5)
        self.se1 = nn.Conv2d(40, 10, 1)
        self.se2 = nn.Conv2d(10, 40, 1)
    @staticmethod
    def shuffle(x, g):
        n, c, h, w = x.shape
        return x.view(n, g, c // g, h, w).transpose(1, 2).contiguous().view(n, c, h, w)
    def forward(self, x):
        y = F.relu(self.a(x))
        for _ in range(2):
            u, v = y.chunk(2, dim=1)
            y = self.shuffle(torch.cat((u, F.relu(self.c(self.d(F.relu(self.b(v)))))), dim=1), 2)
        z = self.e(self.shuffle(y, 4))
        s = torch.sigmoid(self.se2(F.relu(self.se1(F.adaptive_avg_pool2d(z, 1)))))
        return (F.relu(self.g1(z)), self.g2(z), self.g3(z), z * s, F.silu(z), F.max_pool2d(z, 3, 2, 1),
                F.hardswish(self.g2(z)))
"""
SHAPES = [(1, 8, 10, 9)]
