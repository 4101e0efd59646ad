"""A candidate profiled under ncu runs its code: the whole ``ncu ... harness`` command goes inside the
confinement a worker gets (issue 25), the user's original does not.

The argv is read where it leaves perfagent (the runner ncu's backend hands it to); the confinement itself
is run for real with bubblewrap on this CPU machine, on a program that tries to leave.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import perfagent
from perfagent.optimize.reprofile import harness_command, profile_options
from perfagent.sandbox import confinement
from perfagent.sandbox.profiled import CANDIDATE_CODE, PROFILED_NOTE, profiler_launch
from perfagent.workloads.detect import resolve
from perfagent.workloads.harness_choice import TORCH_FREE_HARNESS
from profilers import confine
from profilers.base import Launch, ProfileRequest
from profilers.core_errors import BadInput
from profilers.errors import ProfilerError
from profilers.ncu.profiler import NcuProfiler
from profilers.process import CompletedCommand, run_command
from tests.workloads.cuda_stub import cuda_installed
from tests.workloads.test_torch_free_harness import KERNEL, SPEC

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KB = EXAMPLES / "kernelbench"
MAIN_CU = EXAMPLES / "cuda" / "01_transpose_naive" / "main.cu"
SECRET = ("PERFAGENT_LLM_API_KEY", "sk-perfagent-profiled-test")
__all__ = ["cuda_installed"]  # the fixture, used by name

LEAVES = """
import json, os, socket, sys
report, outside, key, port = sys.argv[1:5]
def attempt(action):
    try:
        action()
        return "ok"
    except OSError as exc:
        return type(exc).__name__
def connect():
    socket.create_connection(("127.0.0.1", int(port)), timeout=2).close()
print(json.dumps({
    "report": attempt(lambda: open(os.path.join(report, "rep.ncu-rep"), "w").write("r")),
    "outside": attempt(lambda: open(outside, "w").write("escaped")),
    "ssh": attempt(lambda: open(key).read()),
    "socket": attempt(connect),
    "secret": [k for k in os.environ if "API_KEY" in k],
    "home": os.environ["HOME"],
}))
"""


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's home with an SSH key, an API key in the environment, confinement not turned off."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv(*SECRET)
    monkeypatch.delenv(confinement.UNCONFINED_ENV, raising=False)
    return home


@pytest.fixture
def listener() -> Iterator[int]:
    """A real TCP server on this host's loopback, accepting in a thread: the port a confined program tries."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


def _needs_bubblewrap() -> None:
    if not confinement.status().confined:
        pytest.skip(f"this machine cannot confine: {confinement.status().reason}")


def test_the_whole_ncu_command_of_a_candidate_runs_inside_bwrap(tmp_path: Path, user_home: Path) -> None:
    _needs_bubblewrap()
    kb = resolve(KB / "01_vector_add_cuda.py", problem=KB / "01_vector_add.py")
    seen: list[tuple[list[str], dict[str, str]]] = []

    def recording(argv: list[str], *, timeout_s: float, env: dict[str, str]) -> CompletedCommand:
        seen.append((list(argv), env))
        return CompletedCommand(tuple(argv), 0, "", "", 0.0)

    report = tmp_path / "profile"
    options = profile_options(kb, kb.file, None, arch="sm_90", timeout_s=60, candidate=True)
    assert options["launcher"] is CANDIDATE_CODE
    with options["launcher"].launch(report) as launch:  # as ``perfagent.profile`` opens it
        request = ProfileRequest(
            command=options["command"],
            workdir=report,
            kernel_regex=options["kernel"],
            nvtx_include=options["nvtx_include"],
            launch=launch,
        )
        with pytest.raises(ProfilerError):  # the recording runner writes no report
            NcuProfiler(ncu=sys.executable, runner=recording).profile(request)
    (argv, env), prefix = seen[0], launch.prefix
    # bwrap first, then ncu, then the candidate's harness: ncu and its target share the sandbox
    assert argv[: len(prefix)] == prefix and prefix[-1] == "--" and "--unshare-all" in prefix
    assert argv[len(prefix)] == sys.executable
    assert argv[-len(request.command) :] == harness_command(kb, kb.file, None)
    binds = {tuple(prefix[i + 1 : i + 3]) for i, a in enumerate(prefix) if a == "--bind"}
    assert (str(report), str(report)) in binds
    assert ["--tmpfs", str(user_home / ".ssh")] == prefix[
        prefix.index("--tmpfs") : prefix.index("--tmpfs") + 2
    ]
    assert SECRET[0] not in env and env["HOME"] != str(user_home) and env["LC_ALL"] == "C"
    assert launch.note.startswith("sandbox: confined by bubblewrap") and launch.note.endswith(PROFILED_NOTE)


def _run_leaving(launch: Launch, report: Path, outside: Path, home: Path, port: int) -> dict[str, Any]:
    argv = [
        sys.executable,
        "-c",
        LEAVES,
        str(report),
        str(outside),
        str(home / ".ssh" / "id_ed25519"),
        str(port),
    ]
    request = ProfileRequest(command=argv, workdir=report, launch=launch)
    launched, env = request.launched(argv)
    done = run_command(launched, timeout_s=60, env=env)
    assert done.ok, done.tail()
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_confined_profiler_run_writes_only_its_report_folder_and_reaches_no_network(
    tmp_path: Path, user_home: Path, listener: int
) -> None:
    _needs_bubblewrap()
    report, outside = tmp_path / "profile", tmp_path / "outside.txt"
    with profiler_launch(report) as launch:
        seen = _run_leaving(launch, report, outside, user_home, listener)
    assert seen["report"] == "ok" and (report / "rep.ncu-rep").read_text() == "r"
    assert seen["outside"] != "ok" and not outside.exists()
    assert seen["ssh"] != "ok" and seen["socket"] != "ok"
    assert seen["secret"] == [] and seen["home"] != str(user_home)
    # the same program unconfined (--unconfined) leaves: the checks above can fail
    unconfined = Launch(env=launch.env, note="sandbox: UNCONFINED (test)")
    loose = _run_leaving(unconfined, report, outside, user_home, listener)
    assert loose["outside"] == "ok" and loose["ssh"] == "ok" and loose["socket"] == "ok"
    assert loose["secret"] == []  # the environment is scrubbed either way


def test_a_candidate_profile_is_refused_unconfined_unless_accepted_and_then_said(
    tmp_path: Path, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = confine.ProbeResult(False, "no bwrap", "user namespaces are disabled")
    monkeypatch.setattr(confinement, "probe", lambda: broken)
    with pytest.raises(BadInput, match="--unconfined"), profiler_launch(tmp_path / "p"):
        pass
    monkeypatch.setenv(confinement.UNCONFINED_ENV, "1")
    with profiler_launch(tmp_path / "p") as launch:
        assert launch.prefix == [] and "UNCONFINED" in launch.note
        assert launch.env is not None and SECRET[0] not in launch.env
        private_home = Path(launch.env["HOME"])
        assert private_home.is_dir()
    assert not private_home.exists()  # the private home goes with the run


def test_profile_opens_the_launcher_on_its_report_folder_and_says_how_it_ran(tmp_path: Path) -> None:
    """``perfagent.profile`` takes the policy as a value, opens it on its own report folder, and the
    profile's notes start with what the launch says (here ncu is missing: the static fallback)."""
    if shutil.which("nvcc") is None or shutil.which("ncu") is not None:
        pytest.skip("needs nvcc and no ncu (the static fallback of a program)")
    opened: list[Path] = []

    class Recording:
        @contextmanager
        def launch(self, workdir: Path) -> Iterator[Launch]:
            opened.append(workdir)
            yield Launch(note="sandbox: recorded by the test")

    work = tmp_path / "work"
    prof = perfagent.profile(MAIN_CU, workdir=work, launcher=Recording())
    assert opened == [work.absolute()]
    assert prof.notes[0] == "sandbox: recorded by the test" and prof.kernels
    assert perfagent.profile(MAIN_CU, profiler="static", workdir=work, launcher=Recording()).kernels
    assert opened == [work.absolute()]  # static analysis launches nothing: the policy is not opened


def test_the_torch_free_harness_of_a_launch_spec_candidate_runs_inside_bwrap(
    tmp_path: Path, user_home: Path, cuda_installed: None
) -> None:
    """The torch-free harness a launch-spec candidate is profiled through keeps the confinement: its whole
    command runs under bubblewrap, and there it reads its spec, draws its inputs and gets as far as the
    launch (this machine has no cuda.core: the harness says so, exit 1)."""
    _needs_bubblewrap()
    found = importlib.util.find_spec("cuda.core")  # the fixture's stub, or a real installation
    if found is not None and str(tmp_path) not in str(found.origin):
        pytest.skip("cuda.core is installed here: tests/gpu/test_torch_free_harness_gpu.py runs the harness")
    (tmp_path / "k.cu").write_text(KERNEL)
    spec = tmp_path / "k.launch.toml"
    spec.write_text(SPEC)
    cu = resolve(tmp_path / "k.cu")
    harness = cu.profile_harness(spec)
    options = profile_options(
        cu, tmp_path / "k.cu", spec, arch="sm_90", timeout_s=60, candidate=True, harness=harness
    )
    assert options["command"][3:5] == ["-m", TORCH_FREE_HARNESS] and options["launcher"] is CANDIDATE_CODE
    with options["launcher"].launch(tmp_path / "profile") as launch:
        request = ProfileRequest(command=options["command"], workdir=tmp_path / "profile", launch=launch)
        launched, env = request.launched(options["command"])
        done = run_command(launched, timeout_s=120, env=env)
    assert launched[: len(launch.prefix)] == launch.prefix and "--unshare-all" in launch.prefix
    assert done.returncode == 1 and "cuda.core is not installed" in done.stderr, done.tail()
