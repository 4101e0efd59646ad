"""Candidate code is untrusted (issue 25): the worker is confined by the OS (bubblewrap + Landlock), sees no
secrets, and a candidate that tries to write outside its folder, read the user's home or reach the
network fails with ``sandbox-violation`` and the evidence, whether it swallows the error or not.

Real workers on the CPU (the Triton interpreter), both starts (warm fork server, fresh interpreter).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from perfagent.sandbox import confinement, runner
from perfagent.verify import VerificationResult, verify
from profilers import confine
from profilers.confine import Confinement, bwrap_argv, scrub_env
from profilers.core_errors import BadInput

CANDIDATES = Path(__file__).parent / "candidates"
ADD = CANDIDATES / "problem_add.py"
SECRETS = {
    "PERFAGENT_LLM_API_KEY": "sk-perfagent-test",
    "OPENAI_API_KEY": "sk-openai-test",
    "GITHUB_TOKEN": "ghp-test",
    "MY_APP_SECRET": "hunter2",
}

ESCAPE = """
import os, socket, torch, torch.nn as nn

def _quietly(action):
    try:
        action()
    except Exception:
        pass  # a cheat hides that it was stopped

class ModelNew(nn.Module):
    def forward(self, a, b):
        _quietly(lambda: open({outside!r}, "a").write("escaped"))
        _quietly(lambda: open({secret!r}).read())
        _quietly(lambda: socket.create_connection(("127.0.0.1", 9), timeout=1))
        return a + b
"""

LOOKS_FOR_SECRETS = f"""
import os, torch, torch.nn as nn

NAMES = {sorted(SECRETS)!r}
VALUES = {sorted(v.encode() for v in SECRETS.values())!r}

class ModelNew(nn.Module):
    def forward(self, a, b):
        seen = [n for n in NAMES if n in os.environ]
        with open("/proc/self/environ", "rb") as f:  # the process's initial environment block too
            block = f.read()
        seen += [v.decode() for v in VALUES if v in block]
        if seen:
            raise RuntimeError(f"the worker can see secrets: {{seen}}")
        if os.environ["HOME"] == {str(Path.home())!r}:
            raise RuntimeError("the worker's HOME is the user's")
        return a + b
"""


def _failed(result: VerificationResult) -> dict[str, str]:
    return {c.name: c.detail for c in result.checks if not c.passed}


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's home with an SSH key in it (the worker must not read it)."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv(confinement.UNCONFINED_ENV, raising=False)
    return home


@pytest.mark.parametrize("start", ["warm", "fresh"])
def test_an_escaping_candidate_is_stopped_and_fails_with_the_evidence(
    tmp_path: Path, user_home: Path, monkeypatch: pytest.MonkeyPatch, start: str
) -> None:
    if not confinement.status().confined:
        pytest.skip(f"this machine cannot confine: {confinement.status().reason}")
    monkeypatch.setenv(runner.WORKER_START_ENV, start)
    outside = tmp_path / "outside.txt"
    secret = user_home / ".ssh" / "id_ed25519"
    candidate = tmp_path / "cand" / "escape.py"
    candidate.parent.mkdir()
    candidate.write_text(ESCAPE.format(outside=str(outside), secret=str(secret)))

    result = verify(ADD, candidate, device="cpu", seeds=1, timeout_s=60)

    assert result.verdict == "fail"
    evidence = _failed(result)["sandbox-violation"]
    assert f"write {outside}" in evidence and f"read {secret}" in evidence and "connect" in evidence
    assert "stopped by the sandbox" in evidence and "during candidate" in evidence
    assert not outside.exists()  # stopped, not only reported
    assert any(n.startswith("sandbox: confined by bubblewrap") for n in result.notes)


@pytest.mark.parametrize("start", ["warm", "fresh"])
def test_no_secret_reaches_the_worker(
    tmp_path: Path, user_home: Path, monkeypatch: pytest.MonkeyPatch, start: str
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv(runner.WORKER_START_ENV, start)
    candidate = tmp_path / "look.py"
    candidate.write_text(LOOKS_FOR_SECRETS)

    result = verify(ADD, candidate, device="cpu", seeds=1, timeout_s=60)

    assert result.verdict == "pass", _failed(result)


def test_unconfined_is_refused_unless_accepted_and_then_said(
    tmp_path: Path, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = confine.ProbeResult(False, "no bwrap", "user namespaces are disabled")
    monkeypatch.setattr(confinement, "probe", lambda: broken)
    with pytest.raises(BadInput, match="--unconfined"):
        verify(ADD, CANDIDATES / "honest_add_block256.py", device="cpu", seeds=1)

    monkeypatch.setenv(confinement.UNCONFINED_ENV, "1")
    outside = tmp_path / "outside.txt"
    candidate = tmp_path / "escape.py"
    candidate.write_text(ESCAPE.format(outside=str(outside), secret=str(user_home / ".ssh" / "id_ed25519")))
    result = verify(ADD, candidate, device="cpu", seeds=1, timeout_s=60)
    assert any("UNCONFINED" in n for n in result.notes)
    # not stopped, but still caught: the record says so
    assert "NOT stopped" in _failed(result)["sandbox-violation"]


def test_secrets_are_scrubbed_by_name() -> None:
    env = {**SECRETS, "PATH": "/bin", "CUDA_VISIBLE_DEVICES": "0", "SSH_AUTH_SOCK": "/run/agent"}
    assert scrub_env(env) == {"PATH": "/bin", "CUDA_VISIBLE_DEVICES": "0"}


def test_the_bwrap_command_cuts_the_network_and_binds_only_the_given_folders(tmp_path: Path) -> None:
    secret = tmp_path / ".ssh"
    secret.mkdir()
    argv = bwrap_argv(
        Confinement(writable=(str(tmp_path / "work"),), hidden=(str(secret),)), executable="bwrap"
    )
    assert "--unshare-all" in argv and "--share-net" not in argv
    assert argv[argv.index("--ro-bind") + 1 : argv.index("--ro-bind") + 3] == ["/", "/"]
    assert ["--bind", str(tmp_path / "work"), str(tmp_path / "work")] == argv[-4:-1]
    assert ["--tmpfs", str(secret)] == argv[argv.index("--tmpfs") : argv.index("--tmpfs") + 2]
    assert (tmp_path / "work").is_dir() and os.access(tmp_path / "work", os.W_OK)


def test_unconfined_is_a_flag_of_the_commands_that_run_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    from perfagent.cli import RUNS_CANDIDATE_CODE, build_parser

    monkeypatch.delenv(confinement.UNCONFINED_ENV, raising=False)
    parser = build_parser()
    assert RUNS_CANDIDATE_CODE == {"verify", "bench", "optimize", "suite"}
    args = parser.parse_args(["verify", "p.py", "c.py", "--unconfined"])
    assert args.unconfined is True
    with pytest.raises(SystemExit):
        parser.parse_args(["diagnose", "x.cu", "--unconfined"])


@pytest.mark.parametrize(
    ("confined", "device", "expected"),
    [(True, "cuda", True), (True, "cuda:1", True), (True, "cpu", False), (False, "cuda", False)],
)
def test_gpu_workers_run_fresh_under_bubblewrap_alone(confined: bool, device: str, expected: bool) -> None:
    """A confined GPU worker takes the configuration measured to see the GPU on an H200 (fresh start,
    bubblewrap without Landlock); CPU workers keep the warm start and Landlock."""
    assert runner.gpu_confined_by_bubblewrap_alone(confined, device) is expected


def test_a_confined_cuda_request_starts_fresh_without_landlock(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, object] = {}

    def capture(work: Path, request: object, sandbox: object, **kwargs: object) -> None:
        seen.update(kwargs)

    monkeypatch.setattr(runner, "require", lambda: confinement.Status(True, "bubblewrap (test)"))
    monkeypatch.setattr(runner, "_run", capture)
    request = runner.WorkerRequest(job="verify-cuda-kernel", reference=_runnable(), device="cuda")
    runner.run_worker(request, backstop_s=5.0)
    assert seen["warm"] is False and seen["landlock"] is False
    runner.run_worker(request.model_copy(update={"device": "cpu"}), backstop_s=5.0)
    assert seen["landlock"] is True


def _runnable() -> object:
    from perfagent.workloads.model import KernelBenchModel

    problem = Path(__file__).resolve().parents[2] / "examples" / "kernelbench" / "01_vector_add.py"
    return KernelBenchModel(path=str(problem), class_name="Model")
