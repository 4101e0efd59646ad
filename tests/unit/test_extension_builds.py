"""One build per distinct extension file (perfagent.sandbox.extension_build, perfagent.workloads.extension_builds).

Real builds on CPU: ``torch.utils.cpp_extension.load`` of a plain C++ file (``is_python_module=False``:
no torch headers, so a build takes seconds, not the minutes a ``load_inline`` of torch/extension.h takes
on this machine), through the confined build step, then loaded by a confined process that sees the
build folder read-only.
"""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from perfagent.sandbox.confinement import cache_dirs, worker_env  # noqa: E402
from perfagent.sandbox.extension_build import _visible_indices, prebuild  # noqa: E402
from perfagent.workloads import extension_builds as eb  # noqa: E402
from profilers.confine import Confinement, bwrap_argv, probe  # noqa: E402
from profilers.process import run_command  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
MODULE = """
from pathlib import Path
from torch.utils.cpp_extension import load

LIB = load(name="{name}", sources=[str(Path(__file__).with_name("{cpp}"))], is_python_module=False)
"""
GOOD_CPP = 'extern "C" int answer() { return 42; }\n'
BAD_CPP = 'extern "C" int answer() { return 42 }\n'  # missing ';': the compiler's error is the cause
USE = textwrap.dedent(
    """
    import ctypes, os, sys, time
    from perfagent.workloads.kernelbench import load_module
    t = time.monotonic()
    try:
        m = load_module(sys.argv[1], "ext_user")
    except Exception as exc:
        print(f"RAISED {type(exc).__name__}: {exc}")
        sys.exit(0)
    print("ANSWER", ctypes.CDLL(m.LIB).answer(), round(time.monotonic() - t, 2))
    try:
        open(os.path.join(os.path.dirname(m.LIB), "poison"), "w").write("x")
        print("WROTE")
    except OSError as exc:
        print("READ-ONLY", exc.errno)
    """
)


@pytest.fixture
def builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "builds"
    monkeypatch.setenv(eb.BUILDS_ENV, str(root))
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "worker-ext"))
    return root


def _module(folder: Path, name: str, cpp: str, comment: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.cpp").write_text(cpp)
    path = folder / f"{name}_mod.py"
    path.write_text(MODULE.format(name=name, cpp=f"{name}.cpp") + comment)
    return path


def _confined_use(file: Path, tmp_path: Path) -> str:
    """Import ``file`` the way a worker does: confined, writable only its own folder and the caches."""
    own = tmp_path / "worker-own"
    own.mkdir(exist_ok=True)
    base = dict(os.environ)
    env = worker_env(base, own)
    env["PYTHONPATH"] = str(REPO)
    writable = (str(own), *sorted(set(cache_dirs(base).values())))
    prefix = bwrap_argv(Confinement(writable=writable)) if probe().works else []
    done = run_command([*prefix, sys.executable, "-c", USE, str(file)], timeout_s=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_key_follows_the_bytes_and_the_toolchain(tmp_path: Path) -> None:
    a = tmp_path / "a.py"
    a.write_text("load_inline(name='x')\n")
    b = tmp_path / "b.py"
    b.write_text("load_inline(name='x')\n")
    env = {"TORCH_CUDA_ARCH_LIST": "9.0"}
    assert eb.source_key(a, env) == eb.source_key(b, env)  # content-addressed: the path does not count
    assert eb.source_key(a, env) != eb.source_key(a, {"TORCH_CUDA_ARCH_LIST": "8.0"})
    b.write_text("load_inline(name='x')  # changed\n")
    assert eb.source_key(a, env) != eb.source_key(b, env)
    assert eb.builds_extensions(a) and not eb.builds_extensions(tmp_path / "missing.py")


def test_the_builds_root_is_not_a_writable_cache(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    root = eb.builds_root(env)
    for cache in cache_dirs(env).values():  # inside one of them it would be writable in every worker
        assert not str(root).startswith(cache.rstrip("/") + "/") and str(root) != cache


def test_visible_gpus_pick_the_architectures() -> None:
    assert _visible_indices(None, 3) == [0, 1, 2]
    assert _visible_indices("2", 4) == [2]
    assert _visible_indices("", 2) == []
    assert _visible_indices("GPU-1234", 2) == [0, 1]  # UUIDs: every device's architecture


@pytest.mark.slow
def test_built_once_then_loaded_read_only(builds: Path, tmp_path: Path) -> None:
    file = _module(tmp_path / "src", "kbcost_good", GOOD_CPP)
    first = prebuild([file, file], timeout_s=300)
    assert [s.state for s in first] == ["built"], first  # one build for the file, however often named
    assert prebuild([file], timeout_s=300)[0].state == "cached"

    out = _confined_use(file, tmp_path)
    assert "ANSWER 42" in out, out
    if probe().works:  # the build folder is read-only for the worker: a candidate cannot poison it
        assert "READ-ONLY" in out, out
    assert not list((tmp_path / "worker-ext").rglob("*.so"))  # the worker built nothing of its own

    twin = _module(tmp_path / "elsewhere", "kbcost_good", GOOD_CPP)  # same bytes, another path
    assert prebuild([twin], timeout_s=300)[0].state == "cached"


@pytest.mark.slow
def test_a_changed_source_builds_again(builds: Path, tmp_path: Path) -> None:
    file = _module(tmp_path / "src", "kbcost_edit", GOOD_CPP)
    assert prebuild([file], timeout_s=300)[0].state == "built"
    before = eb.file_folder(file)
    file.write_text(file.read_text() + "# a rewrite\n")
    step = prebuild([file], timeout_s=300)[0]
    assert step.state == "built" and Path(step.folder) != before


@pytest.mark.slow
def test_a_build_failure_is_reported_once(builds: Path, tmp_path: Path) -> None:
    file = _module(tmp_path / "src", "kbcost_bad", BAD_CPP)
    first = prebuild([file], timeout_s=300)[0]
    assert first.state == "failed" and "error" in first.detail.lower(), first
    again = prebuild([file], timeout_s=300)[0]
    assert again.state == "failed" and again.seconds == 0.0 and again.detail == first.detail

    out = _confined_use(file, tmp_path)  # the worker raises the recorded cause, it does not rebuild
    assert "RAISED ExtensionBuildFailed" in out and first.detail in out, out
    assert not list((tmp_path / "worker-ext").rglob("*.so"))


@pytest.mark.slow
def test_a_worker_without_a_build_step_still_builds(builds: Path, tmp_path: Path) -> None:
    file = _module(tmp_path / "src", "kbcost_nostep", GOOD_CPP)
    out = _confined_use(file, tmp_path)  # no prebuild: its own writable cache, as before
    assert "ANSWER 42" in out, out
    assert list((tmp_path / "worker-ext").rglob("*.so")) and not eb.file_folder(file).exists()


@pytest.mark.slow
def test_the_optimize_build_stage_reports_the_compiler_error(builds: Path, tmp_path: Path) -> None:
    from perfagent.optimize.measure import extension_build

    bad = extension_build(_module(tmp_path / "src", "kbcost_stage_bad", BAD_CPP), 300)
    assert bad.ok is False and "error" in bad.detail.lower(), bad
    good = extension_build(_module(tmp_path / "src", "kbcost_stage_good", GOOD_CPP), 300)
    assert good.ok is True and "built once" in good.detail, good
    plain = tmp_path / "plain.py"
    plain.write_text("import torch\n")
    assert extension_build(plain, 300).ok is True  # nothing to build: it parsed, that is all
