"""Link faults (issue 8): a proxy on QEMU's TCP serial flips, drops and duplicates bytes at a 1e-3
rate. Results that arrive are exact, lost frames are counted and reported, the run's status says
so, and a partial ETDump is never written as the run's ETDump."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import need_tool
from etdeploy import config, errors, faultproxy, link, session

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / ".cache" / "reliability" / "link"
BOARD = "mps2-an386"


def _key(o):
    return (o.program, o.method, o.case, o.index)


@pytest.fixture(scope="module")
def image():
    need_tool("qemu-system-arm", "qemu-system-arm")
    p = subprocess.run([sys.executable, "-m", "SCons", "-Q", f"board={BOARD}", f"build_dir={BUILD}",
                        f"pte={ROOT / 'tests' / 'models' / 'cnn.bpte'}", "etdump=1"],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    return config.load_board(BOARD), BUILD / BOARD / "firmware.elf"


@pytest.mark.unit
def test_injector_is_reproducible_and_counts_every_fault():
    data = bytes(range(256)) * 400
    a, b = faultproxy.FaultStats(), faultproxy.FaultStats()
    out1 = faultproxy.FaultInjector(1e-3, seed=5).apply(data, a)
    out2 = faultproxy.FaultInjector(1e-3, seed=5).apply(data, b)
    assert out1 == out2 and a == b
    assert a.faults > 50 and a.flipped and a.dropped and a.duplicated
    assert len(out1) == len(data) - a.dropped + a.duplicated


@pytest.mark.unit
def test_decoder_never_yields_a_damaged_frame():
    """Pure link layer: frames through the injector decode to exactly the sent records or are counted."""
    frames = [link.encode_frame(link.LOG, i, f"line {i} ".encode() * (i % 40)) for i in range(3000)]
    stats = faultproxy.FaultStats()
    damaged = faultproxy.FaultInjector(1e-3, seed=1).apply(b"".join(frames), stats)
    dec = link.Decoder()
    recs = dec.feed(damaged)
    dec.finish()
    sent = {i: f"line {i} ".encode() * (i % 40) for i in range(3000)}
    assert stats.faults > 10
    for r in recs:
        assert r.payload == sent[r.seq]
    assert len(recs) + dec.stats.lost_frames >= 3000 - 1 - dec.stats.bad_frames
    assert dec.stats.bad_frames + dec.stats.lost_frames > 0
    assert len(recs) < 3000


@pytest.mark.emu
def test_faulty_link_results_exact_losses_counted_status_says_so(image, tmp_path):
    board, elf = image
    clean = session.run(board, elf, tmp_path / "clean", timeout=60, log=lambda m: None, icount=True)
    assert clean.status == "pass" and clean.link.bad_frames == 0
    assert (tmp_path / "clean" / "etdump.etdp").exists()
    want = {_key(o): o.value for o in clean.outputs}
    damaged_runs = faults = 0
    for seed in range(8):
        run_dir = tmp_path / f"seed{seed}"
        with faultproxy.installed(rate=1e-3, seed=seed) as proxies:
            try:
                res = session.run(board, elf, run_dir, timeout=60, runner="qemu-system+faults",
                                  log=lambda m: None, icount=True)
            except errors.RunError as e:
                res = e.result
                assert isinstance(e, (errors.LinkError, errors.RunError)), e
        faults += proxies[0].stats.faults
        doc = json.loads((run_dir / "result.json").read_text())
        lost = res.link.bad_frames + res.link.lost_frames
        assert doc["link"]["bad_frames"] + doc["link"]["lost_frames"] == lost
        for o in res.outputs:                                  # what arrived is exact
            assert _key(o) in want
            assert np.array_equal(np.asarray(o.value), np.asarray(want[_key(o)])), _key(o)
        if lost:
            damaged_runs += 1
            assert doc["status"] == "error", doc
            assert "lost" in doc["reason"] or "link" in doc["reason"] or "frame" in doc["reason"], doc["reason"]
            assert not (run_dir / "etdump.etdp").exists(), "an ETDump from a damaged link named as complete"
            if "etdump" in doc and "etdp" in doc["etdump"]:
                assert doc["etdump"]["etdp"].endswith("etdump.partial.etdp") and doc["etdump"]["partial"]
        else:
            assert doc["status"] == "pass", doc
            assert len(res.outputs) == len(clean.outputs)
    assert faults > 0 and damaged_runs > 0, "the proxy never damaged a frame: the test proves nothing"
