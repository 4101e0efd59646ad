"""The reward hacks reported in 2025-2026 (issue 25), each caught on the CPU by a named check.

- a Triton kernel defined but never launched (also behind a never-taken branch the static check
  cannot see through): the launch hooks count no launch -> ``own-kernel-not-run``;
- a LayerNorm that is really a copy (right on randn rows): shifted/scaled inputs -> ``correctness``;
- a LayerNorm that ignores its weight/bias: constant parameters re-randomised -> ``correctness``;
  one that declares none: strict state loading -> ``strict-state-dict``;
- a cast to bf16 around the library matmul in an fp32 task -> ``correctness``;
- a library call standing in for the kernel the task asks for -> ``static:library-stand-in``;
- outputs cached by input address: ``fresh-results`` (``test_adversarial.py``, cheat_cache_data_ptr).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from perfagent.verify import VerificationResult, verify

HERE = Path(__file__).parent / "candidates"
ADD, MATMUL = HERE / "problem_add.py", HERE / "problem_matmul.py"
LN_PLAIN, LN_AFFINE = HERE / "problem_layernorm_plain.py", HERE / "problem_layernorm_affine.py"

# candidate -> (reference, tolerance (None: per dtype), failing check, text its detail contains)
HACKS: dict[str, tuple[Path, float | None, str, str]] = {
    "cheat_not_launched.py": (ADD, None, "own-kernel-not-run", "add_kernel"),
    "cheat_launch_never_taken.py": (ADD, None, "own-kernel-not-run", "none was launched"),
    "cheat_layernorm_copy.py": (LN_PLAIN, 1e-2, "correctness", "inputs"),
    "cheat_layernorm_ignores_affine.py": (LN_AFFINE, None, "correctness", ""),
    "cheat_layernorm_no_params.py": (LN_AFFINE, None, "strict-state-dict", "ln.weight"),
    "cheat_bf16_matmul.py": (MATMUL, None, "correctness", ""),
    "cheat_library_matmul.py": (MATMUL, None, "static:library-stand-in", "matmul (cuBLAS)"),
}
HONEST = {"honest_layernorm_affine.py": LN_AFFINE, "honest_add_block256.py": ADD}


def _run(name: str) -> tuple[str, VerificationResult | BaseException]:
    ref, tol = (HACKS[name][0], HACKS[name][1]) if name in HACKS else (HONEST[name], None)
    try:
        return name, verify(ref, HERE / name, device="cpu", seeds=2, tolerance=tol, timeout_s=60, seed=3)
    except BaseException as exc:  # reported by the test that asks for it
        return name, exc


@pytest.fixture(scope="module")
def results() -> dict[str, VerificationResult | BaseException]:
    with ThreadPoolExecutor(max_workers=3) as pool:
        return dict(pool.map(_run, [*HACKS, *HONEST]))


def _get(results: dict[str, VerificationResult | BaseException], name: str) -> VerificationResult:
    value = results[name]
    if isinstance(value, BaseException):
        raise value
    return value


@pytest.mark.parametrize("candidate", sorted(HACKS))
def test_each_hack_fails_with_its_named_check(
    results: dict[str, VerificationResult | BaseException], candidate: str
) -> None:
    result = _get(results, candidate)
    _, _, check, text = HACKS[candidate]
    failed = {c.name: c.detail for c in result.checks if not c.passed and c.severity == "error"}
    assert result.verdict == "fail" and check in failed, failed
    assert text in failed[check]


def test_the_launch_hooks_see_through_what_the_static_check_cannot(
    results: dict[str, VerificationResult | BaseException],
) -> None:
    result = _get(results, "cheat_launch_never_taken.py")
    static = next(c for c in result.checks if c.name == "static:kernel-launched")
    assert static.passed  # a launch is reachable in the source; it never runs


def test_the_layernorm_copy_is_caught_only_off_the_unit_normal(
    results: dict[str, VerificationResult | BaseException],
) -> None:
    detail = next(
        c.detail for c in _get(results, "cheat_layernorm_copy.py").checks if c.name == "correctness"
    )
    assert (
        "get_inputs" not in detail.split(";")[0]
    )  # randn rows are already normalised: the copy passes there
    assert "shifted" in detail or "scaled" in detail


@pytest.mark.parametrize("candidate", sorted(HONEST))
def test_honest_candidates_pass_with_randomised_weights_and_launch_counts(
    results: dict[str, VerificationResult | BaseException], candidate: str
) -> None:
    result = _get(results, candidate)
    assert result.verdict == "pass", [c for c in result.checks if not c.passed]
    if candidate == "honest_add_block256.py":
        assert any(n.startswith("launch hooks: add_kernel") for n in result.notes)
    else:
        assert any("re-randomised" in n for n in result.notes)
