"""XnnpackBackend's own int8 conv/FC kernel (AVX512-VNNI, firmware/backends/xnnpack/et_xnn_qconv.c):
on a CPU with VNNI it takes the int8 convolutions and fully connected layers from Debian's XNNPACK,
and the outputs stay equal, bit for bit, to executorch's runtime with its own XNNPACK (the oracle).
Without VNNI the backend says its kernel is off and everything runs in the library."""
import json
from pathlib import Path

import numpy as np
import pytest

from support.compare import assert_close
from support.hostrun import build, run_host
from support.xnnpack_programs import export_programs, need_xnnpack

CASES = {"vnni_mix_q8": ("tests/xnnpack/vnni_mix.py:VnniMix", True)}
OWN_NODES = 8        # c0 (one-channel depthwise), c1, c2, c3, c4, fc1 and its relu (a clamp node, fused), fc2


def _has_vnni() -> bool:
    flags = next((ln.split(":", 1)[1].split() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                  if ln.startswith("flags")), [])
    return all(f in flags for f in ("avx512f", "avx512bw", "avx512_vnni"))


@pytest.fixture(scope="module")
def programs(root):
    return export_programs(root, CASES)


def _own_lines(bpte: Path, opts: dict) -> list[str]:
    run_host(bpte, opts=opts)
    exe, _ = build(bpte, opts)
    doc = json.loads((exe.parent / "run" / "result.json").read_text())
    assert doc["status"] == "pass", doc["reason"]
    assert doc["result"]["cases"] >= 1 and doc["result"]["cases_failed"] == 0
    lines = [ln for ln in doc["logs"] if ln.startswith("xnnpack own int8 kernels")]
    assert len(lines) == 2, doc["logs"]          # one per delegate (the portable mean splits the graph)
    return lines


@pytest.mark.build
@pytest.mark.parametrize("threads", [1, 2])
def test_own_kernel_taken_and_bundled_cases_bit_exact(programs, threads):
    """The bundled cases (expected outputs from executorch's runtime, int8 network: compared exactly)
    pass, and the backend's log says which path ran."""
    need_xnnpack()
    lines = _own_lines(programs["vnni_mix_q8"], {"threads": threads} if threads > 1 else {})
    if _has_vnni():
        head = "xnnpack own int8 kernels (avx512vnni): "
        assert all(ln.startswith(head) for ln in lines), lines
        assert sum(int(ln[len(head):].split()[0]) for ln in lines) == OWN_NODES, lines
    else:
        assert lines == ["xnnpack own int8 kernels: off (no avx512vnni)"] * 2, lines


@pytest.mark.build
def test_outputs_equal_executorch_runtime_exactly(programs):
    need_xnnpack()
    from etdeploy import oracle
    pte = programs["vnni_mix_q8"].with_suffix(".pte")
    for seed in (3, 4):
        rng = np.random.default_rng(seed)
        x = [(rng.standard_normal(s) * 2).astype(d) for s, d in oracle.input_specs(pte)]
        assert_close(run_host(pte, x), oracle.run_reference(pte, x), f"vnni_mix_q8 seed {seed}", exact=True)
