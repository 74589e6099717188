"""torchvision's mobilenet_v2 and resnet18 (their own definitions, reduced: tests/xnnpack/torchvision_small.py)
through --flow xnnpack, float and int8, on the host build of our runtime with Debian's XNNPACK; executorch's
own runtime (pybindings, its XNNPACK backend) is the oracle. Full size: bench/xnnpack_speed.py.
Exports are cached by content under .cache/xnnpack (the cache tests/test_xnnpack.py uses)."""
import numpy as np
import pytest

from support.compare import assert_close
from support.hostrun import run_host
from support.xnnpack_programs import export_programs, need_xnnpack

CASES = {"tv_mbv2_small": ("tests/xnnpack/torchvision_small.py:mobilenet_v2", False),
         "tv_mbv2_small_q8": ("tests/xnnpack/torchvision_small.py:mobilenet_v2", True),
         "tv_resnet18_small": ("tests/xnnpack/torchvision_small.py:resnet18", False),
         "tv_resnet18_small_q8": ("tests/xnnpack/torchvision_small.py:resnet18", True)}


@pytest.fixture(scope="module")
def programs(root):
    return export_programs(root, CASES)


@pytest.mark.build
@pytest.mark.parametrize("name", list(CASES))
def test_torchvision_outputs_equal_executorch_runtime(programs, name):
    need_xnnpack()
    from etdeploy import oracle
    pte = programs[name].with_suffix(".pte")
    for seed in (1, 2):
        rng = np.random.default_rng(seed)
        x = [rng.standard_normal(s).astype(d) for s, d in oracle.input_specs(pte)]
        assert_close(run_host(pte, x), oracle.run_reference(pte, x), f"{name} seed {seed}", atol=1e-5)


def test_torchvision_nets_go_to_xnnpack_whole(programs):
    """Every convolution, pooling and the classifier went to XNNPACK; what stays on our kernels is at most
    mobilenet_v2's dropout (an eval-time clone between the two delegates)."""
    from etdeploy.exporting import program_operators
    for name, prog in programs.items():
        ops, delegates = program_operators(prog.with_suffix(".pte").read_bytes())
        assert delegates == ["XnnpackBackend"], name
        assert set(ops["forward"]) <= {"dim_order_ops::_clone_dim_order.out"}, (name, ops)


@pytest.mark.build
@pytest.mark.parametrize("name", ["tv_mbv2_small", "tv_resnet18_small_q8"])
def test_torchvision_threads_2_equal_executorch_runtime(programs, name):
    """threads=2: XNNPACK parallelizes every operator on the backend's own pool (et_xnn_pool.c, the
    pthreadpool API); the outputs stay those of executorch's runtime."""
    need_xnnpack()
    from etdeploy import oracle
    pte = programs[name].with_suffix(".pte")
    rng = np.random.default_rng(3)
    x = [rng.standard_normal(s).astype(d) for s, d in oracle.input_specs(pte)]
    assert_close(run_host(pte, x, opts={"threads": 2}), oracle.run_reference(pte, x), f"{name} threads=2", atol=1e-5)
