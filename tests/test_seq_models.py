"""Sequence and audio models end to end: a TransformerEncoderLayer, an LSTM, a GRU and a log-mel /
MFCC-style audio front end (conv1d framing, power, mel matmul, log, clamp, DCT as a matmul), small
sizes, exported once with the portable flow (the attention also with pt2e; cached under .cache/seq_models by content), run on the
host build of our runtime and compared with the real executorch runtime's outputs for the same
program. The LSTM also runs on corstone300 (Cortex-M55 under QEMU)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from support import kernelcase
from support.compare import assert_close

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "seq_models"
F, B = "float32", "bool"

# MultiheadAttention, exported float (mha) and with the pt2e flow (int8 linears, float softmax)
MHA = """
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.MultiheadAttention(16, 4, batch_first=True)
    def forward(self, q, kv):
        return self.a(q, kv, kv, need_weights=True)
"""
MODELS: dict[str, tuple] = {
    # post-norm layer (relu), a pre-norm gelu layer with a key padding mask, a two-layer encoder with a
    # causal mask (is_causal: the program rebuilds the mask with arange)
    "transformer": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
        self.b = torch.nn.TransformerEncoderLayer(16, 4, 24, dropout=0.0, activation="gelu", batch_first=True,
                                                  norm_first=True)
        layer = torch.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, activation="gelu", batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.register_buffer("mask", torch.nn.Transformer.generate_square_subsequent_mask(5))
    def forward(self, x, pad):
        return self.a(x), self.b(x, src_key_padding_mask=pad), self.enc(x, mask=self.mask, is_causal=True)
""", [((2, 5, 16), F, "n"), ((2, 5), B, "b50")]),
    "mha": (MHA, [((2, 3, 16), F, "n"), ((2, 6, 16), F, "n")]),
    "mha_pt2e": (MHA, [((2, 3, 16), F, "n"), ((2, 6, 16), F, "n")], "pt2e"),
    "lstm": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l = torch.nn.LSTM(8, 12, num_layers=2, batch_first=True)
        self.fc = torch.nn.Linear(12, 3)
    def forward(self, x):
        y, (h, c) = self.l(x)
        return self.fc(y[:, -1]), h, c
""", [((2, 6, 8), F, "n")]),
    "gru": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.g = torch.nn.GRU(8, 12, num_layers=2)
    def forward(self, x, h0):
        return self.g(x, h0)
""", [((6, 2, 8), F, "n"), ((2, 2, 12), F, "u")]),
    "gru_bidirectional": ("""
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.g = torch.nn.GRU(8, 10, batch_first=True, bidirectional=True)
    def forward(self, x):
        return self.g(x)
""", [((2, 6, 8), F, "n")]),
    # framing by a strided conv1d with windowed cos/sin filters, power spectrum, mel filterbank, log
    # with a floor, per-utterance mean removal, DCT-II as a matmul (MFCC); decibels with an 80 dB floor
    # and mean/variance normalisation
    "audio_frontend": ("""
import math
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        n, bins, mels, ceps = 64, 33, 12, 8
        t = torch.arange(n).float()
        k = torch.arange(bins).float()[:, None]
        w = 0.5 - 0.5 * torch.cos(2 * math.pi * t / n)
        self.register_buffer("fb", torch.cat([torch.cos(2 * math.pi * k * t / n) * w,
                                              -torch.sin(2 * math.pi * k * t / n) * w])[:, None, :])
        self.register_buffer("mel", torch.rand(bins, mels))
        i = torch.arange(mels).float()
        self.register_buffer("dct", torch.cos(math.pi / mels * (i[:, None] + 0.5) * torch.arange(ceps).float()[None, :]))
    def forward(self, wav):
        spec = F.conv1d(wav, self.fb, stride=32)
        power = spec[:, :33].pow(2) + spec[:, 33:].pow(2)
        melspec = torch.matmul(power.transpose(1, 2), self.mel)
        logmel = torch.log(torch.clamp(melspec, min=1e-6))
        logmel = logmel - logmel.mean(1, keepdim=True)
        db = 10.0 * torch.log10(torch.clamp(melspec, min=1e-10))
        db = torch.maximum(db, db.amax() - 80.0)
        cmvn = (db - db.mean(1, keepdim=True)) / (db.std(1, keepdim=True) + 1e-5)
        return logmel, torch.matmul(logmel, self.dct), cmvn
""", [((1, 1, 480), F, "n")]),
}


def _dir(name: str) -> Path:
    src, specs, *flow = MODELS[name]
    return kernelcase.case_dir(CACHE, name, src, specs, flow=flow[0] if flow else "portable")


def _require_kernels(d: Path) -> None:
    from etdeploy import kernels
    missing = sorted(set(kernelcase.operators(d)) - set(kernels.catalogue()))
    if missing:
        pytest.skip(f"no kernel yet for {missing}")


@pytest.mark.build
@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_on_host(name):
    from support.hostrun import run_host
    d = _dir(name)
    _require_kernels(d)
    ours = run_host(d / "m.bpte")
    assert_close(ours, kernelcase.reference(d), name)


@pytest.mark.emu
def test_lstm_on_corstone300():
    from support.boardrun import outputs_per_program
    from support.suite import require_board
    require_board("corstone300")
    d = _dir("lstm")
    ours, = outputs_per_program("corstone300", [d / "m.bpte"], "rtol=1e-4", "atol=1e-4")
    assert_close(ours, kernelcase.reference(d), "corstone300/lstm")
