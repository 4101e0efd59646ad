"""The torch-free harness's inputs (``numpy_inputs``): each ``init`` kind and ``vary`` distribution drawn with
NumPy has the law, dtype and shape of torch's draw (``cuda_launch.make_arg_tensor``), and each poison the
bytes torch's ``poison_`` writes.

The laws are compared on 20 000 draws of each (fixed seeds, so the test is deterministic): the two-sample
Kolmogorov-Smirnov statistic below 0.03 (its 1e-6 critical value at that size is 0.027), the means within
5 % of a standard deviation (7 standard errors) and the standard deviations within 5 % (10 standard
errors); a law shifted by a tenth of its deviation or scaled by 1.1 fails (checked below).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from perfagent.workloads import numpy_inputs
from perfagent.workloads.cuda_launch import make_arg_tensor, poison_, torch_dtype
from perfagent.workloads.inputs import DISTRIBUTIONS
from perfagent.workloads.launch_resolve import ResolvedArg

N = 20_000
SAME_LAW = 0.03


def _arg(dtype: str = "float32", shape: tuple[int, ...] = (N,), **fields: Any) -> ResolvedArg:
    return ResolvedArg(
        name=fields.pop("name", "x"), dtype=dtype, is_scalar=False, role="input", shape=shape, **fields
    )


def _as_float(host: np.ndarray, dtype: str) -> np.ndarray:
    """A host array as float64 values (bfloat16: the uint16 words put back as the top half of a float32)."""
    if dtype == "bfloat16":
        return (host.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return host.astype(np.float64)


def _torch_values(arg: ResolvedArg, dist: str | None = None) -> np.ndarray:
    return make_arg_tensor(arg, 7, dist, "cpu").to(torch.float64).numpy()


def ks(a: np.ndarray, b: np.ndarray) -> float:
    """The two-sample Kolmogorov-Smirnov statistic: the largest gap between the empirical CDFs."""
    a, b = np.sort(a.ravel()), np.sort(b.ravel())
    grid = np.concatenate([a, b])
    gaps = np.searchsorted(a, grid, side="right") / a.size - np.searchsorted(b, grid, side="right") / b.size
    return float(np.abs(gaps).max())


def same_law(a: np.ndarray, b: np.ndarray, ks_limit: float = SAME_LAW) -> bool:
    """Two samples of one law: KS statistic, means and standard deviations as the module says."""
    spread = float(b.std())
    moments = abs(a.mean() - b.mean()) <= 0.05 * spread + 1e-12 and abs(a.std() - spread) <= 0.05 * spread
    return ks(a, b) < ks_limit and bool(moments)


def test_the_comparison_tells_laws_apart() -> None:
    rng = np.random.default_rng(1)
    normal = rng.standard_normal(N)
    assert same_law(normal, rng.standard_normal(N))
    assert not same_law(normal, normal + 0.1) and not same_law(normal, 1.1 * normal)


@pytest.mark.parametrize(
    ("dtype", "fields"),
    [
        ("float32", {}),
        ("float32", {"init": "normal", "mean": 2.0, "std": 0.5}),
        ("float16", {"init": "uniform", "low": -3.0, "high": 5.0}),
        ("bfloat16", {}),
        ("bfloat16", {"init": "uniform", "low": 1.0, "high": 2.0}),
        ("float64", {"init": "normal"}),
        ("int32", {}),
        ("int64", {"init": "randint", "low": -5, "high": 300}),
        ("uint8", {"init": "randint", "low": 0, "high": 256}),
        ("int8", {"init": "randint", "low": -128, "high": 127}),
        ("bool", {}),
        ("float32", {"init": "randint", "low": 0, "high": 10}),
    ],
)
def test_each_drawn_init_has_torchs_law_dtype_and_shape(dtype: str, fields: dict[str, Any]) -> None:
    arg = _arg(dtype, **fields)
    host = numpy_inputs.host_input(arg, 7)
    assert host.shape == arg.shape and host.dtype == numpy_inputs.HOST_DTYPES[dtype]
    assert host.itemsize == torch.empty(0, dtype=torch_dtype(dtype)).element_size()
    assert same_law(_as_float(host, dtype), _torch_values(arg))


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_each_vary_distribution_has_torchs_law(dist: str) -> None:
    arg = _arg("float16")
    host = numpy_inputs.host_input(arg, 3, dist)
    assert host.dtype == np.float16
    assert same_law(_as_float(host, "float16"), _torch_values(arg, dist))


def test_vary_false_and_non_float_inputs_keep_the_declared_init() -> None:
    fixed = _arg("float32", init="uniform", low=0.0, high=1.0, vary=False)
    assert numpy_inputs.host_input(fixed, 1, "shifted").max() < 1.0  # not re-drawn around 5
    ints = _arg("int32", init="randint", low=0, high=4)
    assert set(np.unique(numpy_inputs.host_input(ints, 1, "scaled"))) <= {0, 1, 2, 3}


@pytest.mark.parametrize(
    ("dtype", "fields"),
    [
        ("int32", {"init": "arange", "high": 7}),
        ("int64", {"init": "arange"}),
        ("float16", {"init": "ones"}),
        ("bfloat16", {"init": "full", "fill": -2.5}),
        ("float32", {"init": "zeros"}),
        ("uint8", {"init": "full", "fill": 3}),
    ],
)
def test_deterministic_inits_equal_torchs_values(dtype: str, fields: dict[str, Any]) -> None:
    arg = _arg(dtype, shape=(3, 1001), **fields)
    host = numpy_inputs.host_input(arg, 0)
    assert host.shape == (3, 1001)
    np.testing.assert_array_equal(_as_float(host, dtype), _torch_values(arg))


def test_chunks_make_the_same_values_whatever_the_thread_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(numpy_inputs, "CHUNK", 1000)
    arg = _arg("bfloat16", shape=(7, 1500), init="normal")
    monkeypatch.setattr(numpy_inputs, "MAX_THREADS", 1)
    one = numpy_inputs.host_input(arg, 5)
    monkeypatch.setattr(numpy_inputs, "MAX_THREADS", 4)
    four = numpy_inputs.host_input(arg, 5)
    np.testing.assert_array_equal(one, four)
    assert same_law(_as_float(four, "bfloat16"), _torch_values(arg), ks_limit=0.05)  # 10 500 draws
    counted = numpy_inputs.host_input(_arg("int64", shape=(2, 1500), init="arange"), 0)
    np.testing.assert_array_equal(counted.ravel(), np.arange(3000))  # chunk offsets carried over


def test_each_argument_and_seed_draws_its_own_values() -> None:
    x, y = _arg(name="x"), _arg(name="y")
    assert not np.array_equal(numpy_inputs.host_input(x, 0), numpy_inputs.host_input(y, 0))
    assert not np.array_equal(numpy_inputs.host_input(x, 0), numpy_inputs.host_input(x, 1))
    np.testing.assert_array_equal(numpy_inputs.host_input(x, 2), numpy_inputs.host_input(x, 2))


@pytest.mark.parametrize("dtype", sorted(numpy_inputs.HOST_DTYPES))
@pytest.mark.parametrize("which", [1, 2])
def test_poison_has_torchs_bytes(dtype: str, which: int) -> None:
    arg = _arg(dtype, shape=(4, 3))
    host = numpy_inputs.poisoned(arg, which)
    ours = torch.from_numpy(np.ascontiguousarray(host)).view(torch_dtype(dtype))
    theirs = poison_(torch.empty(arg.shape, dtype=torch_dtype(dtype)), which)
    if dtype == "bfloat16" and which == 2:  # truncated, torch rounds: at most one bf16 ulp apart
        torch.testing.assert_close(ours.float(), theirs.float(), rtol=2**-7, atol=0)
    else:
        assert torch.equal(ours.view(torch.uint8), theirs.view(torch.uint8))


def test_unserved_names_what_it_cannot_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    assert numpy_inputs.unserved(_arg("bfloat16")) is None
    monkeypatch.delitem(numpy_inputs.HOST_DTYPES, "bfloat16")
    assert numpy_inputs.unserved(_arg("bfloat16", name="w")) == "dtype bfloat16 of 'w'"
    monkeypatch.setattr(numpy_inputs, "SERVED_INITS", frozenset({"normal"}))
    assert numpy_inputs.unserved(_arg("float32", init="uniform")) == "init 'uniform' of 'x'"


def test_every_spec_dtype_and_init_is_drawn() -> None:
    """A dtype or init added to the spec format is either drawn here or falls back (``unserved``):
    today every one is drawn, so no launch spec needs the torch harness for its inputs."""
    from typing import get_args

    from perfagent.workloads.launch_spec import DType, InitKind

    assert set(get_args(DType)) == set(numpy_inputs.HOST_DTYPES)
    assert set(get_args(InitKind)) == numpy_inputs.SERVED_INITS
