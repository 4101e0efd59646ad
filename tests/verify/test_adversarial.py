"""Adversarial suite (CPU): every cheating candidate must fail with its specific reason; honest
rewrites must pass; a degenerate reference must be inconclusive.

Candidates are KernelBench ``ModelNew`` files in ``tests/verify/candidates/`` (Triton kernels run
through the Triton interpreter on CPU tensors). Each verification spawns a worker process; they
run concurrently (module fixture) to keep the suite fast.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from perfagent.verify import VerificationResult, verify

HERE = Path(__file__).parent / "candidates"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "kernelbench"
ADD = HERE / "problem_add.py"
HANG_TIMEOUT_S = 3.0
CALL_TIMEOUT_S = 60.0

# candidate file -> (failing check that must be reported, text its detail must contain)
CHEATS: dict[str, tuple[str, str]] = {
    "cheat_partial_write.py": ("no-nan-inf", "NaN/Inf where the reference is finite"),
    "cheat_cache_data_ptr.py": ("fresh-results", "previous call's result"),
    "cheat_reused_output.py": ("fresh-results", "same output storage"),
    "cheat_cache_shape.py": ("correctness", "elements outside"),
    "cheat_input_mutation.py": ("inputs-unchanged", "elements changed"),
    "cheat_fp16.py": ("correctness", "atol=0.0001"),
    "cheat_nan.py": ("no-nan-inf", "output[7]"),
    "cheat_constant.py": ("correctness", "got 0"),
    "cheat_wrong_shape.py": ("output-shape", "expected shape (4096,), got (64, 64)"),
    "cheat_wrong_dtype.py": ("output-dtype", "got torch.float64"),
    "cheat_exit.py": ("candidate-runs", "exit status 139"),
    "cheat_segfault.py": ("candidate-runs", "SIGSEGV"),
    "cheat_hang.py": ("candidate-runs", "timeout"),
    "cheat_exception.py": ("candidate-runs", "RuntimeError: kernel exploded"),
    "cheat_reference_output.py": ("static:no-harness-access", "gc.get_objects"),
    "cheat_subclass.py": ("output-type", "not exactly torch.Tensor"),
    "cheat_thread.py": ("runtime:no-thread-injection", "still running"),
    "cheat_timer_patch.py": ("runtime:harness-intact", "elapsed_time"),
    "cheat_stream.py": ("static:no-streams", "torch.cuda.Stream"),
    "cheat_fallback.py": ("static:no-fallback", "try/except"),
    "cheat_not_launched.py": ("static:kernel-launched", "never launched"),
    "cheat_patch_allclose.py": ("runtime:harness-intact", "torch.allclose"),
    "cheat_alias_input.py": ("inputs-unchanged", "elements changed"),
}

# (name, reference, candidate, seeds)
HONEST: list[tuple[str, Path, Path | None, int]] = [
    ("triton-block-256", ADD, HERE / "honest_add_block256.py", 5),
    ("reassociated-rowsum", HERE / "problem_rowsum.py", HERE / "honest_rowsum_reassoc.py", 2),
    ("example-01-triton", EXAMPLES / "01_vector_add.py", EXAMPLES / "01_vector_add_triton.py", 2),
    ("example-02-matmul-relu", EXAMPLES / "02_matmul_relu.py", EXAMPLES / "02_matmul_relu_triton.py", 2),
    ("same-file-modelnew", HERE / "problem_with_modelnew.py", None, 2),
]


def _run(job: tuple[str, Path, Path | None, int]) -> tuple[str, VerificationResult | BaseException]:
    name, ref, cand, seeds = job
    # Only the hanging candidate gets the short per-call limit: on 2 loaded CI cores an honest call
    # (the Triton interpreter) can take longer than 3 s, which once failed an honest rewrite as "timeout".
    timeout_s = HANG_TIMEOUT_S if name == "cheat_hang.py" else CALL_TIMEOUT_S
    try:
        return name, verify(
            ref, cand, device="cpu", seeds=seeds, timeout_s=timeout_s, compile_timeout_s=60, seed=11
        )
    except BaseException as exc:  # reported by the test that asked for it
        return name, exc


@pytest.fixture(scope="module")
def results() -> dict[str, VerificationResult | BaseException]:
    jobs: list[tuple[str, Path, Path | None, int]] = [(name, ADD, HERE / name, 2) for name in CHEATS]
    jobs += HONEST
    jobs.append(
        (
            "degenerate",
            EXAMPLES / "03_degenerate_gemm_max_sub_gelu.py",
            EXAMPLES / "03_degenerate_zeros.py",
            2,
        )
    )
    jobs.append(("count-elements", HERE / "problem_count_elements.py", None, 1))
    jobs.sort(key=lambda j: j[0] != "cheat_hang.py")  # start the slowest first
    with ThreadPoolExecutor(max_workers=3) as pool:
        return dict(pool.map(_run, jobs))


def _get(results: dict[str, VerificationResult | BaseException], name: str) -> VerificationResult:
    value = results[name]
    if isinstance(value, BaseException):
        raise value
    return value


@pytest.mark.parametrize("candidate", sorted(CHEATS))
def test_cheat_fails_with_its_reason(
    results: dict[str, VerificationResult | BaseException], candidate: str
) -> None:
    result = _get(results, candidate)
    check_name, needle = CHEATS[candidate]
    assert result.verdict == "fail", f"{candidate} was not caught: {result.reason}"
    by_name = {c.name: c for c in result.checks}
    assert check_name in by_name, f"{candidate}: no {check_name} check; got {[c.name for c in result.checks]}"
    check = by_name[check_name]
    assert not check.passed, (
        f"{candidate}: {check_name} passed; failing: {[c.name for c in result.failed_checks]}"
    )
    assert needle in check.detail, f"{candidate}: {check_name} detail {check.detail!r} lacks {needle!r}"


def test_hang_is_killed_at_the_timeout(results: dict[str, VerificationResult | BaseException]) -> None:
    result = _get(results, "cheat_hang.py")
    assert f"within {HANG_TIMEOUT_S:g} s" in result.failed_checks[0].detail
    assert result.elapsed_s < 30


def test_precision_downgrade_is_also_warned(results: dict[str, VerificationResult | BaseException]) -> None:
    by_name = {c.name: c for c in _get(results, "cheat_fp16.py").checks}
    assert (
        not by_name["static:precision-downgrade"].passed
        and by_name["static:precision-downgrade"].severity == "warning"
    )


@pytest.mark.parametrize("name", [h[0] for h in HONEST])
def test_honest_rewrite_passes(results: dict[str, VerificationResult | BaseException], name: str) -> None:
    result = _get(results, name)
    assert result.verdict == "pass", f"{name}: {result.reason} / {[c for c in result.checks if not c.passed]}"
    assert result.input_sets >= 4 and len(result.distributions) >= 3
    # the scaled input set (randn x 10) makes a matmul's outputs ~100x larger, and its rounding with them
    assert result.errors.max_abs_error is not None and result.errors.max_abs_error <= 1e-2


def test_default_seeds_cover_five_distributions(
    results: dict[str, VerificationResult | BaseException],
) -> None:
    result = _get(results, "triton-block-256")
    assert len(result.seeds) == 5 and result.input_sets == 10
    assert set(result.distributions) == {
        "get_inputs",
        "shifted",
        "scaled",
        "uniform",
        "laplace",
        "lognormal",
    }


def test_degenerate_reference_is_inconclusive(results: dict[str, VerificationResult | BaseException]) -> None:
    result = _get(results, "degenerate")
    assert result.verdict == "inconclusive", result.reason
    assert result.reason.startswith("reference-informative")


def test_identical_reference_is_confirmed_on_more_input_sets(
    results: dict[str, VerificationResult | BaseException],
) -> None:
    """One seed gives two input sets; two sets of an integral output can agree by chance, so the reference
    alone is run on more sets before the problem is called input-independent."""
    result = _get(results, "count-elements")
    assert result.verdict == "inconclusive", result.reason
    assert "identical for 4 different input sets" in result.reason, result.reason
    assert result.input_sets == 2  # the reference-only sets are not counted as compared input sets
