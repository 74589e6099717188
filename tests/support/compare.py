"""How outputs are judged against the reference (issue 3), in one place; each test keeps its own
tolerance as parameters.

Floats: NaN positions and infinities must match exactly; the finite values either within
`rel` x scale of the reference, scale = max(|ref|, scale_floor) (the default), or, with `rtol`,
elementwise within atol + rtol x |ref| (numpy's assert_allclose). Integers and bools, and floats
with exact=True, must be equal (NaN equals NaN). Dtypes must match. Returns the worst error relative
to the scale."""
import numpy as np

REL = 1e-5


def assert_close(ours, ref, what="", *, rel=REL, scale_floor=1e-6, rtol=None, atol=0.0, exact=False) -> float:
    assert len(ours) == len(ref), f"{what}: {len(ours)} outputs, reference has {len(ref)}"
    worst = 0.0
    for i, (a, r) in enumerate(zip(ours, ref)):
        a, r = np.asarray(a), np.asarray(r)
        if r.shape == () and a.shape == (1,):   # 0-d outputs: the host link may deliver them as [1]
            a = a.reshape(())
        assert a.shape == r.shape, f"{what} output {i}: shape {a.shape} vs reference {r.shape}"
        assert a.dtype == r.dtype, f"{what} output {i}: dtype {a.dtype} vs reference {r.dtype}"
        if r.dtype.kind != "f" or exact:
            bad = ~((a == r) | (np.isnan(a) & np.isnan(r))) if r.dtype.kind == "f" else (a != r)
            assert not bad.any(), (f"{what} output {i}: {int(bad.sum())} of {a.size} values differ\n"
                                   f"ours={a[bad][:10]}\nref={r[bad][:10]}")
            continue
        a64, r64 = a.astype(np.float64), r.astype(np.float64)
        assert np.array_equal(np.isnan(a64), np.isnan(r64)), f"{what} output {i}: NaN positions differ"
        inf = np.isinf(r64)
        assert np.array_equal(a64[inf], r64[inf]), f"{what} output {i}: infinities differ\nours={a}\nref={r}"
        fin = np.isfinite(r64)
        if rtol is not None:
            np.testing.assert_allclose(a64[fin], r64[fin], rtol=rtol, atol=atol, err_msg=f"{what} output {i}")
            continue
        scale = max(scale_floor, float(np.max(np.abs(r64[fin]), initial=0.0)))
        err = float(np.max(np.abs(a64[fin] - r64[fin]), initial=0.0))
        worst = max(worst, err / scale)
        assert err <= rel * scale, f"{what} output {i}: max abs err {err:.3g} > {rel:g} x {scale:.3g}\nours={a}\nref={r}"
    return worst
