"""The pure comparison functions, the static checks and the verdict (no subprocess)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from perfagent.verify import checks as C
from perfagent.verify.models import Check, Tolerance
from perfagent.verify.static_checks import static_checks
from perfagent.verify.verdict import decide
from perfagent.workloads.detect import detect_candidate, detect_reference

CANDIDATES = Path(__file__).parent / "candidates"
PROBLEM = CANDIDATES / "problem_add.py"


def test_tolerance_by_dtype_and_override() -> None:
    assert C.tolerance_for(torch.float32) == (1e-4, 1e-4)
    assert C.tolerance_for(torch.float16) == (1e-2, 1e-2)
    assert C.tolerance_for(torch.bfloat16) == (1e-2, 1e-2)
    assert C.tolerance_for(torch.int32) == (0.0, 0.0)
    assert C.tolerance_for(torch.float32, Tolerance(atol=1e-3)) == (1e-3, 1e-4)


def test_compare_reports_first_bad_index_and_errors() -> None:
    expected = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    got = expected.clone()
    got[1, 2] += 0.5
    got[2, 3] = float("nan")
    c = C.compare_tensors(got, expected, 1e-4, 1e-4)
    assert not c.ok and c.bad == 2 and c.first_bad == (1, 2)
    assert c.got_at_first_bad == 6.5 and c.expected_at_first_bad == 6.0
    assert c.max_abs == pytest.approx(0.5) and c.nonfinite == 1 and c.first_nonfinite == (2, 3)
    text = C.describe_mismatch("output", c, "seed 3")
    assert "2/12" in text and "output[1, 2]" in text and "got 6.5, expected 6" in text and "seed 3" in text


def test_compare_accepts_within_tolerance_and_matching_nan() -> None:
    expected = torch.tensor([1.0, float("nan"), float("inf"), 0.0])
    got = torch.tensor([1.00005, float("nan"), float("inf"), 5e-5])
    assert C.compare_tensors(got, expected, 1e-4, 1e-4).ok
    assert not C.compare_tensors(got, expected, 0.0, 0.0).ok


def test_integer_outputs_are_exact() -> None:
    assert C.compare_tensors(torch.tensor([1, 2]), torch.tensor([1, 2]), 0, 0).ok
    assert not C.compare_tensors(torch.tensor([1, 3]), torch.tensor([1, 2]), 0, 0).ok


def test_contract_problems() -> None:
    e = torch.zeros(4, 4)

    class Sub(torch.Tensor):
        pass

    assert "output-type" in C.contract_problems("out", e, torch.zeros(4, 4).as_subclass(Sub))
    assert "output-shape" in C.contract_problems("out", e, torch.zeros(16))
    assert "output-dtype" in C.contract_problems("out", e, torch.zeros(4, 4, dtype=torch.float64))
    assert "output-contiguity" in C.contract_problems("out", e, torch.zeros(4, 4).t())
    assert C.contract_problems("out", e, torch.ones(4, 4)) == {}
    assert "output-type" in C.contract_problems("out", e, [1, 2])


def test_structure_and_flatten() -> None:
    assert [p for p, _ in C.flatten_outputs((torch.zeros(1), [torch.ones(1), 3]))] == [
        "output[0]",
        "output[1][0]",
        "output[1][1]",
    ]
    assert C.structure_problem(torch.zeros(2), (torch.zeros(2), torch.zeros(2))) is not None
    assert C.structure_problem((torch.zeros(2),), [torch.zeros(2)]) is None


def test_changed_inputs() -> None:
    a = torch.randn(10)
    b = a.clone()
    b[3] = 0
    assert C.changed_inputs([a, 5], [a.clone(), 5]) == []
    msg = C.changed_inputs([a], [b])
    assert msg and "1/10" in msg[0] and "[3]" in msg[0]


def test_degenerate_reason() -> None:
    varied = [torch.randn(100, generator=torch.Generator().manual_seed(i)) for i in range(4)]
    assert C.degenerate_reason(varied) is None
    assert "within ±0.01" in (C.degenerate_reason([torch.zeros(100)] * 4) or "")
    const = [torch.full((100,), 3.0)] * 4
    assert "does not depend" in (C.degenerate_reason(const) or "")
    tiny_var = [torch.full((100,), 3.0) + 0.001 * i for i in range(4)]
    assert "varies by" in (C.degenerate_reason(tiny_var) or "")


def test_integral_outputs_are_identical_only_when_equal() -> None:
    # an integer maximum near 1e9 that moves by a few hundred between input sets depends on its inputs
    maxima = [torch.tensor([999_999_523.0]), torch.tensor([999_999_871.0]), torch.tensor([999_998_960.0])]
    assert C.degenerate_reason(maxima) is None
    same = [torch.tensor([999_999_523.0])] * 3
    assert "does not depend" in (C.degenerate_reason(same) or "")
    # a float output of that size within 1e-6 of itself is still the same output
    near = [torch.tensor([1.0e9 + 0.25]), torch.tensor([1.0e9 + 0.5])]
    assert "does not depend" in (C.degenerate_reason(near) or "")


def test_checkbook_aggregates_first_failure_and_count() -> None:
    book = C.CheckBook()
    book.ok("correctness")
    book.fail("correctness", "bad on seed 2")
    book.fail("correctness", "bad on seed 3")
    book.ok("inputs-unchanged")
    out = {c.name: c for c in book.checks()}
    assert not out["correctness"].passed and out["correctness"].detail.startswith("bad on seed 2")
    assert "failed 2 of 3" in out["correctness"].detail
    assert out["inputs-unchanged"].passed
    assert [c.name for c in book.checks()] == ["correctness", "inputs-unchanged"]


def test_verdict() -> None:
    ok = Check(name="correctness", passed=True)
    assert decide([ok])[0] == "pass"
    assert decide([ok, Check(name="static:x", passed=False, severity="warning")])[0] == "pass"
    assert decide(
        [ok, Check(name="reference-informative", passed=False, detail="constant", severity="inconclusive")]
    ) == ("inconclusive", "reference-informative: constant")
    verdict, reason = decide(
        [
            Check(name="correctness", passed=False, detail="max abs 3"),
            Check(name="reference-informative", passed=False, severity="inconclusive"),
        ]
    )
    assert verdict == "fail" and reason == "correctness: max abs 3"
    assert decide([])[0] == "inconclusive"


def _static(name: str) -> dict[str, Check]:
    ref = detect_reference(PROBLEM)
    cand = detect_candidate(CANDIDATES / name, ref)
    return {c.name: c for c in static_checks(cand, ref)}


@pytest.mark.parametrize(
    ("candidate", "check"),
    [
        ("cheat_stream.py", "static:no-streams"),
        ("cheat_thread.py", "static:no-threads"),
        ("cheat_timer_patch.py", "static:no-timer-patching"),
        ("cheat_patch_allclose.py", "static:no-monkey-patching"),
        ("cheat_subclass.py", "static:no-tensor-subclass"),
        ("cheat_fallback.py", "static:no-fallback"),
        ("cheat_not_launched.py", "static:kernel-launched"),
        ("cheat_reference_output.py", "static:no-harness-access"),
    ],
)
def test_static_checks_catch(candidate: str, check: str) -> None:
    found = _static(candidate)
    assert not found[check].passed and found[check].severity == "error", found[check]


def test_static_checks_pass_honest_candidate_and_warn_on_precision() -> None:
    honest = _static("honest_add_block256.py")
    assert all(c.passed for c in honest.values()), [c for c in honest.values() if not c.passed]
    fp16 = _static("cheat_fp16.py")
    assert (
        not fp16["static:precision-downgrade"].passed
        and fp16["static:precision-downgrade"].severity == "warning"
    )


def test_static_reference_call_and_plain_pytorch(tmp_path: Path) -> None:
    cand = tmp_path / "c.py"
    cand.write_text(
        "import torch\nfrom problem import Model\n\nclass ModelNew(torch.nn.Module):\n"
        "    def forward(self, a, b):\n        return Model()(a, b)\n"
    )
    ref = detect_reference(PROBLEM)
    found = {c.name: c for c in static_checks(detect_candidate(cand, ref), ref)}
    assert not found["static:no-reference-call"].passed
    assert not found["static:kernel-defined"].passed and found["static:kernel-defined"].severity == "warning"


def test_same_file_candidate_ignores_the_reference_parts(tmp_path: Path) -> None:
    both = tmp_path / "both.py"
    both.write_text(PROBLEM.read_text() + "\n\nclass ModelNew(Model):\n    pass\n")
    ref = detect_reference(both)
    cand = detect_candidate(None, ref)
    assert cand.path == ref.path and cand.class_name == "ModelNew"
    found = {c.name: c for c in static_checks(cand, ref)}
    assert found["static:torch-compute-ops"].passed  # Model's own `a + b` is not the candidate's
