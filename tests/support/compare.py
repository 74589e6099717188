"""How outputs are judged against the reference (issue 3): float max abs err <= 1e-5 relative to
max |ref|; integers and bools exact; everything bit for bit with exact=True (quantized programs)."""
import numpy as np

REL = 1e-5


def assert_close(ours, ref, what="", exact=False):
    assert len(ours) == len(ref), f"{what}: {len(ours)} outputs, reference has {len(ref)}"
    for i, (a, r) in enumerate(zip(ours, ref)):
        a, r = np.asarray(a), np.asarray(r)
        assert a.shape == r.shape, f"{what} output {i}: shape {a.shape} vs reference {r.shape}"
        if exact:
            assert a.dtype == r.dtype, f"{what} output {i}: dtype {a.dtype} vs reference {r.dtype}"
            bad = ~((a == r) | (np.isnan(a) & np.isnan(r))) if r.dtype.kind == "f" else a != r
            assert not bad.any(), f"{what} output {i}: {int(bad.sum())} of {a.size} values differ " \
                                  f"(ours {a[bad][:8]}, reference {r[bad][:8]})"
        elif r.dtype.kind == "f":
            scale = max(float(np.abs(r).max()) if r.size else 0.0, 1e-6)
            err = float(np.abs(a.astype(np.float64) - r.astype(np.float64)).max()) if r.size else 0.0
            assert err <= REL * scale, f"{what} output {i}: max abs err {err:.3g} > {REL:g} x {scale:.3g}"
        else:
            assert a.dtype == r.dtype, f"{what} output {i}: dtype {a.dtype} vs reference {r.dtype}"
            np.testing.assert_array_equal(a, r, err_msg=f"{what} output {i}")
