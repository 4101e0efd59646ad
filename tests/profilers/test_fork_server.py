"""``run_forked``: a fresh child per call from a warm server, with ``run_command``'s contract (return
code, captured output, stdin, folder, environment, process group killed on timeout)."""

from __future__ import annotations

import os
import select
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from profilers.errors import ToolTimeout
from profilers.process import fork_server_available, run_forked

pytestmark = pytest.mark.skipif(not fork_server_available(), reason="no fork server on this platform")

TARGETS = """
import os, signal, subprocess, sys, time

LOADED_AT = time.time_ns()  # once per import: equal in every child when the server preloaded it
STATE = []


def echo(args):
    print(f"stdin={sys.stdin.readline().strip()} cwd={os.getcwd()} "
          f"mine={os.environ.get('MINE')} leaked={os.environ.get('LEAKED')} args={args}")
    print("on stderr", file=sys.stderr)
    return int(args[0]) if args else 0


def remember(args):
    STATE.append(args[0])
    print(f"{LOADED_AT} {os.getpid()} {STATE}")


def exits(args):
    sys.exit(3)


def underscore_exit(args):
    os._exit(7)


def raises(args):
    raise RuntimeError("boom from the child")


def segfault(args):
    os.kill(os.getpid(), signal.SIGSEGV)


def write_to(args):
    try:
        with open(args[0], "w") as f:
            f.write("x")
        print("wrote")
    except OSError as exc:
        print(f"refused {exc.errno}")
    with open("/proc/self/environ", "rb") as f:
        print("secret in environ" if b"sk-fork-test" in f.read() else "no secret in environ")


def hangs(args):
    child = subprocess.Popen(["sleep", "300"])
    with open(args[0], "w") as f:
        f.write(str(child.pid))
    time.sleep(300)
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("forked")
    (folder / "forked_targets.py").write_text(TARGETS, encoding="utf-8")
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(folder), "MINE": "yes"}


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def _ended(pid: int, within_s: float) -> bool:
    """Wait until process ``pid`` has ended (its pidfd becomes readable: an event, not a poll), at most
    ``within_s``; whether it has."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], within_s)[0]) or not _alive(pid)
    finally:
        os.close(fd)


def _pid_from_fifo(path: Path) -> int:
    """Block until the target opens the FIFO ``path`` and writes its grandchild's pid (the call is running)."""
    with open(path, encoding="utf-8") as fifo:
        return int(fifo.read())


def test_a_call_gets_its_stdin_folder_environment_and_output(env: dict[str, str], tmp_path: Path) -> None:
    os.environ["LEAKED"] = "from the parent"
    try:
        done = run_forked("forked_targets:echo", ["5"], env=env, cwd=tmp_path, stdin_text="nonce\n")
    finally:
        del os.environ["LEAKED"]
    assert done.returncode == 5
    assert f"stdin=nonce cwd={tmp_path} mine=yes leaked=None args=['5']" in done.stdout
    assert done.stderr.strip() == "on stderr"


@pytest.mark.parametrize(
    ("entry", "code", "said"),
    [
        ("exits", 3, ""),
        ("underscore_exit", 7, ""),
        ("raises", 1, "RuntimeError: boom from the child"),
        ("segfault", -11, ""),
    ],
)
def test_every_way_a_child_ends_is_its_return_code(
    env: dict[str, str], tmp_path: Path, entry: str, code: int, said: str
) -> None:
    done = run_forked(f"forked_targets:{entry}", [], env=env, cwd=tmp_path)
    assert done.returncode == code
    assert said in done.stderr


def test_each_call_is_a_new_process_of_one_preloaded_server(env: dict[str, str], tmp_path: Path) -> None:
    preload = ("forked_targets",)
    # the server imports the preload under its own environment: give it the targets' folder
    os.environ["PYTHONPATH"] = env["PYTHONPATH"] + os.pathsep + os.environ.get("PYTHONPATH", "")
    try:
        first = run_forked("forked_targets:remember", ["a"], env=env, cwd=tmp_path, preload=preload)
        second = run_forked("forked_targets:remember", ["b"], env=env, cwd=tmp_path, preload=preload)
    finally:
        os.environ["PYTHONPATH"] = os.environ["PYTHONPATH"].split(os.pathsep, 1)[1]
    loaded_a, pid_a, state_a = first.stdout.split(" ", 2)
    loaded_b, pid_b, state_b = second.stdout.split(" ", 2)
    assert loaded_a == loaded_b  # imported once, by the server, before either call
    assert pid_a != pid_b and pid_a != str(os.getpid())
    assert state_a.strip() == "['a']" and state_b.strip() == "['b']"  # nothing of call 1 reached call 2


def test_a_timeout_kills_the_childs_whole_process_group(env: dict[str, str], tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    started = time.monotonic()
    with pytest.raises(ToolTimeout, match="ran past its 2 s limit"):
        run_forked("forked_targets:hangs", [str(pid_file)], env=env, cwd=tmp_path, timeout_s=2)
    # the limit ended it, not the target's own 300 s sleep (a bound far from both, so that load cannot
    # make it fail: issue 26)
    assert time.monotonic() - started < 150
    grandchild = int(pid_file.read_text())
    assert _ended(grandchild, within_s=60), "the grandchild outlived its killed process group"


def test_calls_from_several_threads_each_get_their_own_result(env: dict[str, str], tmp_path: Path) -> None:
    def call(i: int) -> tuple[int, str]:
        done = run_forked("forked_targets:echo", [str(i)], env=env, cwd=tmp_path, stdin_text=f"n{i}\n")
        return done.returncode, done.stdout

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(call, range(8)))
    assert [code for code, _ in results] == list(range(8))
    assert all(f"stdin=n{i} " in out for i, (_, out) in enumerate(results))


def test_a_server_that_dies_mid_call_is_reported_and_replaced(env: dict[str, str], tmp_path: Path) -> None:
    from profilers import process
    from profilers.errors import ProfilerUnavailable

    pid_file = tmp_path / "grandchild.pid"
    os.mkfifo(pid_file)  # the target's write of its grandchild's pid is the event that the call is running
    server = process._server(())
    killer = threading.Thread(target=lambda: (_pid_from_fifo(pid_file), os.kill(server._proc.pid, 9)))
    killer.start()
    with pytest.raises(ProfilerUnavailable, match="fork server ended"):
        run_forked("forked_targets:hangs", [str(pid_file)], env=env, cwd=tmp_path, timeout_s=30)
    killer.join()
    done = run_forked("forked_targets:echo", ["0"], env=env, cwd=tmp_path, stdin_text="again\n")
    assert done.returncode == 0 and "stdin=again" in done.stdout  # a new server took over


def test_a_server_under_a_confinement_confines_every_child(env: dict[str, str], tmp_path: Path) -> None:
    """The warm server can run under bubblewrap (``wrapper``): its children write only where it may,
    and a child's initial environment block is the server's (``server_env``), not the caller's."""
    from profilers.confine import Confinement, bwrap_argv, probe

    if not probe().works:
        pytest.skip(probe().reason)
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    wrapper = bwrap_argv(Confinement(writable=(str(allowed),)))
    os.environ["MY_API_KEY"] = "sk-fork-test"
    try:
        inside = run_forked(
            "forked_targets:write_to",
            [str(allowed / "f")],
            env=env,
            cwd=allowed,
            wrapper=wrapper,
            server_env=env,
            io_root=allowed,
        )
        escaped = run_forked(
            "forked_targets:write_to",
            [str(outside)],
            env=env,
            cwd=allowed,
            wrapper=wrapper,
            server_env=env,
            io_root=allowed,
        )
    finally:
        del os.environ["MY_API_KEY"]
    assert inside.stdout.splitlines() == ["wrote", "no secret in environ"]
    assert escaped.stdout.splitlines()[0].startswith("refused") and not outside.exists()


def test_a_server_that_dies_without_answering_is_not_waited_on_forever(tmp_path: Path) -> None:
    """A server can end after taking a request while a process it started still holds its stdin and
    stdout: the reader then never sees EOF. The caller must notice the death, not wait for an answer
    (the full suite once hung here). The wrapper below starts such a holder and exits at once."""
    import signal

    from profilers.fork_server import ForkServer

    holder = "exec 3<&0; sleep 600 <&3 >&1 & exit 0"  # fd 3: a background job's stdin is /dev/null
    server = ForkServer((), dict(os.environ), ("sh", "-c", holder, "sh"))
    try:
        server._proc.wait(timeout=30)  # the wrapper exited; its sleeping child keeps both pipes open
        done = threading.Event()
        calls = []

        def ask() -> None:
            calls.append(server.start("forked_targets:echo", [], str(tmp_path), dict(os.environ), []))
            done.set()

        threading.Thread(target=ask, daemon=True).start()
        assert done.wait(60), "start() waited forever on a dead server"
        assert calls[0].pid is None and calls[0].ended.is_set()
    finally:
        os.killpg(server._proc.pid, signal.SIGKILL)
