"""Kernel scratch planned at bake (etdeploy.kernel_scratch): the planned figure of every call is what the
kernel itself asks for, and a plan short of that fails at method load with a typed error.

At method load each call of an ET_SCRATCH operator reports the bytes its own C size function gives for its
shapes (ctx->scratch_need) and et_method_load compares that with bake's figure for the instruction: any
difference fails the load (ET_ERR_SCRATCH, detail = the kernel's need, detail2 = the plan). So an image
that runs is an image whose every call's plan equals the kernel's need; these tests make sure the calls
are there and planned (conv KxK, pointwise, depthwise padded/band/plane/first-layer, linear), run them on
corstone300 (Helium paths: the scratch users) and mps2-an386 (DSP paths), bit for bit against executorch's
reference ops, and cut one call's plan to see the load fail naming the kernel's real figure."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from etdeploy import bake, config, errors, kernel_scratch, kernels
from support import kernelcase
from support.compare import assert_close

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "kernel_scratch"

# one module, every scratch path of the cortex_m conv kernels: a 3x3 conv (im2col), a pointwise conv (kernel
# sums only), a padded small-image depthwise, a 24x25 depthwise (a band of rows), a depthwise with depth
# multiplier 4 and few channels (the plane path), one input channel to 8 outputs (transposed weights + GEMM),
# a linear (no scratch)
SOURCE = """from torch import nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(16, 19, 3, padding=1)
        self.b = nn.Conv2d(24, 37, 1)
        self.c = nn.Conv2d(19, 19, 3, padding=1, groups=19)
        self.d = nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.e = nn.Conv2d(1, 8, 3, padding=1)
        self.f = nn.Conv2d(2, 8, 3, padding=1, groups=2)
        self.g = nn.Linear(40, 10)
    def forward(self, x, y, z, v, s, p, q):
        return (F.relu(self.a(x)), self.b(y), self.c(z), F.relu(self.d(v)), self.e(s), self.f(p), self.g(q))
"""
SHAPES = [((1, 16, 9, 7), "cl"), ((1, 24, 6, 5), "cl"), ((1, 19, 7, 9), "cl"), ((1, 32, 24, 25), "cl"),
          ((1, 1, 13, 11), "cl"), ((1, 2, 6, 7), "cl"), ((1, 40), "n")]


def _case() -> Path:
    case = ("cortex_m", SOURCE, [(list(s), "float32", k) for s, k in SHAPES], True, None)
    return kernelcase.export_case(CACHE, "scratch_paths", case, calib_random=4)


def _plan(pte: Path, board: str) -> tuple[list[int], object]:
    from etdeploy.pte import read_program
    m = read_program(pte).method("forward")
    isa = kernel_scratch.isa(config.load_board(board))
    return kernel_scratch.plan(m, kernels.catalogue(), isa), m


def _by_op(plan: list[int], m) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for k, oi, _ in m.calls:
        out.setdefault(m.operators[oi], []).append(plan[k])
    return out


def _scons(board: str, pte: Path, build: Path, patch: str = "") -> dict:
    """scons board=... pte=... run=1 in a fresh interpreter; `patch` runs first (e.g. to change bake's plan)."""
    code = (f"import sys, runpy\n{patch}\n"
            f"sys.argv = ['scons', '-Q', 'board={board}', 'pte={pte}', 'build_dir={build}', 'run=1']\n"
            "runpy.run_module('SCons', run_name='__main__', alter_sys=True)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "tools"))
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=900, env=env)
    res = build / board / "run" / "result.json"
    doc = json.loads(res.read_text()) if res.exists() else {}
    doc["_log"] = p.stdout[-3000:] + p.stderr[-3000:]
    return doc


@pytest.mark.unit
def test_bounds_come_from_the_kernels_defines():
    b = kernel_scratch.bounds()
    gemm = (kernel_scratch.CM_DIR / "cm_gemm.h").read_text()
    assert f"#define QC_COLS {b['QC_COLS']}" in gemm and b["QDL_PAD"] > 0 and b["QDW_IB"] > 0
    with pytest.raises(ValueError):
        kernel_scratch.call_bytes("cortex_m::quantized_conv2d.out", [], "sse")


@pytest.mark.unit
def test_dsp_figures_for_chunked_rows_and_5x5_planes():
    """The DSP one-column linear widens its row in chunks of CM_DSP_KCH k plus N partial sums only where that
    is smaller (FC-AE's 640 -> 128: 256 + 512 bytes, not 1280; a 1280 -> 1000 classifier keeps its 2560-byte
    row); the 5x5 plane depthwise holds K = 5 rows a band at least (12x12, padding 2: a band of all 12
    output rows, 16 rows of 16 int16 per channel, 3 blocks of sums a row)."""
    b = kernel_scratch.bounds()
    assert b["CM_DSP_KCH"] == 128 and b["CM_DSP_DWK_KMAX"] == 5
    assert kernel_scratch._dsp_mm_bytes(640, 128, False, False) == 256 + 512
    assert kernel_scratch._dsp_mm_bytes(1280, 1000, False, False) == 2560
    assert kernel_scratch._dsp_mm_bytes(128, 128, False, False) == 256
    assert kernel_scratch._dsp_mm_bytes(640, 128, True, False) == 16 * 160 + 16 * 64   # two columns: unchanged
    c = {"x": {"n": 1, "c": 72, "h": 12, "w": 12, "sc": 1}, "y": {"c": 72, "h": 12, "w": 12}, "KH": 5, "KW": 5,
         "sh": 1, "sw": 1, "ph": 2, "pw": 2, "dh": 1, "dw": 1, "opg": 1}
    assert kernel_scratch._dsp_dwk(c) == 8 * 16 * 16 + 16 * 12 * 3
    assert kernel_scratch._dsp_dwk(dict(c, KH=7, KW=7)) is None and kernel_scratch._dsp_dwk(dict(c, KH=4, KW=4)) is None


@pytest.mark.unit
def test_arena_gaps_avoid_every_tensor_live_at_the_call():
    """Three calls over one 256-byte arena: x (input, whole method) at 0..63, a (out of call 0, read by 1) at
    64..127, b (out of call 1, the output) at 128..191, c (executorch's per-call scratch of call 1, bytes shared
    with d) and d (out of call 2) at 192..255. Scratch of 64 bytes: call 0 may use 128..191 (b is written by
    call 1 only); call 1 has no gap (pool block); call 2 may use 64..127 (a is dead)."""
    from types import SimpleNamespace
    from etdeploy import scratch_place
    K = "KernelCall"

    def uses(*calls):   # (args): the last argument is the call's out
        return [(K, list(a), a[-1], list(a)) for a in calls]
    m = SimpleNamespace(instructions=3, arenas=[0, 256], io_values=((10,), (12,)),
                        planned={10: (1, 0, 64, False), 11: (1, 64, 64, False), 12: (1, 128, 64, False),
                                 13: (1, 192, 64, False), 14: (1, 192, 64, False)},
                        instr_uses=uses((10, 11), (11, 13, 12), (12, 14)))
    mem, off, block = scratch_place.place(m, [64, 64, 64])
    assert (mem, off, block) == ([1, 0, 1], [128, 0, 64], 64)
    assert scratch_place.place(m, [0, 0, 65])[0] == [0, 0, 0]   # too large for any gap: the block
    # executorch's CMSIS-NN scratch tensor of call 1, which our kernel never touches: call 1's scratch goes there
    assert scratch_place.place(m, [0, 64, 0], untouched=lambda k: [13] if k == 1 else [])[:2] == ([0, 1, 0],
                                                                                                 [0, 192, 0])
    # ... but not when its bytes are its own (executorch planned it for the whole program: it may keep state)
    m.planned[14] = (1, 192, 0, False)
    assert scratch_place.place(m, [0, 64, 0], untouched=lambda k: [13] if k == 1 else [])[0] == [0, 0, 0]
    m.planned[14] = (1, 192, 64, False)
    # b read by call 0 before call 1 writes it: it may hold the last execution's state, so it is kept
    m.instr_uses = uses((10, 12, 11), (11, 13, 12), (12, 14))
    assert scratch_place.place(m, [64, 0, 64])[1] == [192, 0, 64]
    # an in-place update at its first use (index_put.out(b, ..., out=b)) reads the last execution's b too
    m.instr_uses = uses((10, 11), (12, 11, 13, 12), (12, 14))
    assert scratch_place.place(m, [64, 0, 0])[1] == [192, 0, 0]
    # a move (or a jump) makes value liveness unsound: every call in the block
    m.instr_uses = uses((10, 11), (11, 13, 12), (12, 14)) + [("MoveCall", [12, 11], None, [])]
    m.instructions = 4
    assert scratch_place.place(m, [64, 64, 64, 0])[0] == [0, 0, 0, 0]


@pytest.mark.build
def test_plan_covers_every_scratch_path_and_heads_the_pool(tmp_path):
    """On the Helium board every conv call and every depthwise call is planned (the largest figure, 16-aligned,
    is in the pool formula and the report); the Helium linear and the host build plan nothing."""
    pte = _case() / "m.bpte"
    plan, m = _plan(pte, "corstone300")
    per = _by_op(plan, m)
    conv, dw = per["cortex_m::quantized_conv2d.out"], per["cortex_m::quantized_depthwise_conv2d.out"]
    assert len(conv) == 2 and all(conv), conv          # 3x3 (im2col + kernel sums), pointwise (kernel sums)
    assert len(dw) == 4 and all(dw), dw                # padded, band, plane, 1 -> 8 (exported as a depthwise)
    assert not any(per.get("cortex_m::quantized_linear.out", [0]))
    assert not any(_plan(pte, "host")[0])
    # DSP (dsp_gemm.h): two widened columns (16 bytes per 4 k) and a channel block's requantisation table
    # (16 bytes a channel) for the 3x3 (K = 144) and the pointwise (K = 24); the 3x3 depthwise's int16
    # planes (4 channels x band rows x padded width) and its band's sums (dsp_dwk.h: 7x9 -> 9 rows of 14, 7
    # rows of 3 blocks; 24x25 -> 15 rows of 30, 13 rows of 7 blocks); the one-channel depthwise as a dense
    # conv (K = 9): transposed weights (72 -> 80), two columns
    # (48), table (128), the zero-padded last weight row (16), two int8 im2col rows (2 x 16); the linear's
    # one widened column (8 bytes per 4 k)
    dsp = _by_op(*_plan(pte, "mps2-an386"))
    assert dsp["cortex_m::quantized_conv2d.out"] == [16 * 36 + 16 * 19, 16 * 6 + 16 * 37], dsp
    assert dsp["cortex_m::quantized_depthwise_conv2d.out"] == [8 * 9 * 14 + 16 * 7 * 3, 8 * 15 * 30 + 16 * 13 * 7,
                                                                80 + 48 + 128 + 16 + 32, 0], dsp
    assert dsp["cortex_m::quantized_linear.out"] == [8 * 10], dsp
    res = bake.bake([pte], config.load_board("corstone300"), tmp_path / "gen", {})
    mb = res.programs[0].method("forward")
    pooled = [n for n, a in zip(mb.scratch_plan, mb.scratch_mem) if a == 0]
    assert mb.scratch_plan == plan and mb.counts.scratch == (max(pooled, default=0) + 15) & ~15
    assert any(mb.scratch_mem), "no call found a free gap in the arena"
    for n, a, o in zip(mb.scratch_plan, mb.scratch_mem, mb.scratch_off):
        assert not a or (o % 16 == 0 and o + n <= mb.arenas[a])
    rep = res.report["programs"][0]["methods"][0]
    assert rep["scratch"]["bytes"] == mb.counts.scratch and rep["scratch"]["isa"] == "mve"
    without = bake.pool_bytes(mb.counts, 4) - mb.counts.scratch
    assert rep["pool_bytes"] == without + mb.counts.scratch
    src = (tmp_path / "gen" / "et_model.gen.c").read_text()
    assert f"{mb.counts.scratch}u" in src and "et_scratch_plan_0_0" in src


@pytest.mark.emu
@pytest.mark.parametrize("board", ["corstone300", "mps2-an386"])
def test_every_call_needs_what_bake_planned(board):
    """The image loads (every call's own need equals its planned figure) and runs bit for bit."""
    from support.suite import require_board
    require_board(board)
    from support.boardrun import outputs_per_program
    d = _case()
    [ours] = outputs_per_program(board, [d / "m.bpte"], "rtol=0", "atol=0")
    assert_close(ours, kernelcase.reference(d), f"{board}/scratch_paths", exact=True)


@pytest.mark.emu
def test_a_call_planned_short_fails_at_load(tmp_path):
    """Bake's figure for the largest call cut by 16 bytes: method load fails with ET_ERR_SCRATCH (exit code of
    out of memory) naming the instruction, the kernel's own need (= the true plan) and the short plan."""
    from support.suite import require_board
    require_board("corstone300")
    pte = _case() / "m.bpte"
    plan, m = _plan(pte, "corstone300")
    top = max(range(len(plan)), key=lambda k: plan[k])
    patch = ("from etdeploy import kernel_scratch as ks\n_p = ks.plan\n"
             f"ks.plan = lambda m, c, i: [n - 16 if k == {top} else n for k, n in enumerate(_p(m, c, i))]\n")
    doc = _scons("corstone300", pte, tmp_path, patch)
    assert doc.get("status") == "error", doc.get("reason") or doc["_log"]
    err = doc["errors"][0]
    assert err["code"] == 11 and err["detail"] == plan[top] and err["detail2"] == plan[top] - 16, err
    assert "scratch" in doc["reason"] and str(plan[top]) in doc["reason"], doc["reason"]
    assert not doc.get("outputs") and not doc.get("cases"), "nothing may run after a failed load"
    assert errors.RunScratchMismatch.exit_code == errors.RunOutOfMemory.exit_code
