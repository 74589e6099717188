"""Every CPU fixture runs on the host build of our runtime with the real executorch runtime's
outputs (cortex_m:: programs: the package's Python reference ops), its bundled test cases pass,
and the method pool bake sized is exactly what the loader used."""
import json

import numpy as np
import pytest

from support.compare import assert_close
from support.hostrun import build, run_host
from support.suite import MODELS, ROOT, cpu_fixtures  # noqa: F401


def reference(name, inputs=None):
    from etdeploy import oracle
    pte = MODELS / f"{name}.pte"
    if "cortex_m" in name:
        return oracle.run_cortex_m_reference(pte, inputs)
    return oracle.run_reference(pte, inputs)


@pytest.mark.build
@pytest.mark.parametrize("name", cpu_fixtures())
def test_host_ones_match_reference(name):
    ours = run_host(MODELS / f"{name}.pte")
    assert_close(ours, reference(name), name)


@pytest.mark.build
@pytest.mark.parametrize("name", cpu_fixtures())
def test_host_link_inputs_match_reference(name):
    from etdeploy import oracle
    specs = oracle.input_specs(MODELS / f"{name}.pte")
    rng = np.random.default_rng(5)
    inputs = [(rng.standard_normal(s) if np.dtype(d).kind == "f" else rng.integers(0, 4, s)).astype(d)   # valid as indices too
              for s, d in specs]
    ours = run_host(MODELS / f"{name}.pte", inputs)
    assert_close(ours, reference(name, inputs), name)


@pytest.mark.build
@pytest.mark.parametrize("name", [n for n in cpu_fixtures() if (MODELS / f"{n}.bpte").exists()])
def test_host_bundled_cases_pass_and_pool_is_exact(name):
    run_host(MODELS / f"{name}.bpte")
    exe, _ = build(MODELS / f"{name}.bpte")
    doc = json.loads((exe.parent / "run" / "result.json").read_text())
    assert doc["status"] == "pass", doc["reason"]
    assert doc["result"]["cases"] >= 1 and doc["result"]["cases_failed"] == 0
    for m in doc["methods"]:
        assert m["pool_used"] == m["pool_size"], f"{m['name']}: pool used {m['pool_used']} != planned {m['pool_size']}"
