"""`perfagent verify` / `perfagent bench` on the command line: exit codes 0 / 4 / 2, pure JSON on stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from perfagent.cli import main
from perfagent.commands import verify as verify_command  # the name the command calls
from perfagent.verify.models import Check, VerificationResult

REPO = Path(__file__).resolve().parents[2]
CANDIDATES = Path(__file__).parent / "candidates"
ADD = CANDIDATES / "problem_add.py"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(Path.home())}
    return subprocess.run(
        [sys.executable, "-m", "perfagent", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=300,
    )


def test_pass_exits_0_with_pure_json() -> None:
    done = run_cli(
        "verify",
        str(ADD),
        str(CANDIDATES / "honest_add_block256.py"),
        "--device",
        "cpu",
        "--seeds",
        "1",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)  # nothing but JSON on stdout
    assert data["verdict"] == "pass"
    assert all(set(c) >= {"name", "passed", "detail"} for c in data["checks"])
    assert "running the verify worker" in done.stderr  # progress goes to stderr


def test_fail_exits_4_and_says_what_was_seen() -> None:
    done = run_cli(
        "verify",
        str(ADD),
        str(CANDIDATES / "cheat_nan.py"),
        "--device",
        "cpu",
        "--seeds",
        "1",
        "--format",
        "json",
    )
    assert done.returncode == 4
    data = json.loads(done.stdout)
    assert data["verdict"] == "fail"
    failing = {c["name"]: c["detail"] for c in data["checks"] if not c["passed"]}
    assert "output[7]" in failing["no-nan-inf"]
    assert "verification fail" in done.stderr


def test_reference_that_raises_is_bad_input(tmp_path: Path) -> None:
    ref = tmp_path / "broken.py"
    ref.write_text(
        "import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        raise ValueError('broken reference')\n\n"
        "def get_inputs():\n    return [torch.randn(4)]\n"
    )
    done = run_cli(
        "verify", str(ref), str(CANDIDATES / "honest_add_block256.py"), "--device", "cpu", "--seeds", "1"
    )
    assert done.returncode == 2
    assert "broken reference" in done.stderr and "Traceback" not in done.stderr


def test_bench_cpu_json() -> None:
    done = run_cli("bench", str(ADD), "--device", "cpu", "--runs", "5", "--warmup", "1", "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["timer"] == "perf_counter" and "cpu-timing" in data["flags"]
    assert data["baseline"]["timing"]["n"] == 5 and data["baseline_repeat"]["n"] == 5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["verify", "missing.py", "other.py"], "does not exist"),
        (["verify", str(CANDIDATES / "honest_add_block256.py"), str(ADD)], "defines ModelNew but no Model"),
        (["verify", str(ADD)], "no class ModelNew"),
        (
            ["verify", str(ADD), str(CANDIDATES / "honest_add_block256.py"), "--seeds", "0"],
            "expected an integer >= 1",
        ),
        (["bench", "missing.py"], "does not exist"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_program_needs_check_cmd_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prog = tmp_path / "prog.cu"
    prog.write_text("__global__ void k() {}\nint main() { return 0; }\n")
    cand = tmp_path / "cand.cu"
    cand.write_text(prog.read_text())
    assert main(["verify", str(prog), str(cand)]) == 2
    assert "--check-cmd" in capsys.readouterr().err
    ok = f"{sys.executable} -c \"import sys; sys.exit(0 if sys.argv[1].endswith('cand.cu') else 1)\" {{candidate}}"
    assert main(["verify", str(prog), str(cand), "--check-cmd", ok, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"] == "pass" and data["kind"] == "cuda-program"
    assert any("only what the check command tests" in n for n in data["notes"])
    bad = f'{sys.executable} -c "import sys; sys.exit(3)"'
    assert main(["verify", str(prog), str(cand), "--check-cmd", bad]) == 4


def test_bad_launch_spec_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "k.cu").write_text('extern "C" __global__ void k(float* x) {}\n')
    spec = tmp_path / "k.launch.toml"
    spec.write_text(
        'source = "k.cu"\nkernel = "k"\ngrid = [1]\nblock = [1]\n[[args]]\nname = "x"\nshape = [4]\n'
    )
    assert main(["verify", str(spec), str(tmp_path / "k.cu"), "--device", "cuda"]) == 2
    assert "nothing to compare" in capsys.readouterr().err


def _canned(verdict: str) -> VerificationResult:
    check = Check(
        name="reference-informative", passed=verdict == "pass", detail="constant", severity="inconclusive"
    )
    return VerificationResult(
        verdict=verdict,
        reason="reason",
        checks=[Check(name="correctness", passed=verdict != "fail"), check],  # type: ignore[arg-type]
        reference="r.py:Model",
        candidate="c.py:ModelNew",
        kind="kernelbench",
        device="cpu",
    )


@pytest.mark.parametrize(("verdict", "code"), [("pass", 0), ("fail", 4), ("inconclusive", 4)])
def test_exit_code_per_verdict(
    verdict: str, code: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(verify_command, "verify", lambda *a, **k: _canned(verdict))
    assert main(["verify", str(ADD), "--format", "json"]) == code
    assert json.loads(capsys.readouterr().out)["verdict"] == verdict


def test_output_file_and_force(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(verify_command, "verify", lambda *a, **k: _canned("pass"))
    out = tmp_path / "result.json"
    assert main(["verify", str(ADD), "--format", "json", "-o", str(out)]) == 0
    assert json.loads(out.read_text())["verdict"] == "pass"
    assert main(["verify", str(ADD), "-o", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert main(["verify", str(ADD), "-o", str(out), "--force"]) == 0
    assert out.read_text().startswith("verdict: PASS")


def test_ambiguous_rewrite_is_bad_input_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "k.cu").write_text('extern "C" __global__ void k(float* x) {}\n')
    (tmp_path / "k.launch.toml").write_text(
        'source = "k.cu"\nkernel = "k"\ngrid = [1]\nblock = [1]\n[[args]]\nname = "x"\nshape = [4]\nrole = "output"\n'
    )
    two = tmp_path / "two.cu"
    two.write_text('extern "C" __global__ void a(float* x) {}\nextern "C" __global__ void b(float* x) {}\n')
    assert main(["verify", str(tmp_path / "k.cu"), str(two)]) == 2
    assert "--kernel NAME" in capsys.readouterr().err
    assert main(["verify", str(tmp_path / "k.cu"), str(two), "--kernel", "a", "--device", "cpu"]) == 2
    assert "only on a CUDA GPU" in capsys.readouterr().err
