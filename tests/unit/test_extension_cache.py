"""load_inline/load builds go to one folder per content (perfagent.workloads.extension_cache).

Without it, a ModelNew and its rewrites share ``<root>/<name>``: each switch rebuilds, and two processes
loading different sources of one name at once import each other's builds.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")

from perfagent.workloads import extension_cache  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


class _Recorder:
    """Stands in for torch's builder: keeps the arguments of each call."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def load_inline(  # same parameters as torch's, as far as the wrapper reads them
        self,
        name: str,
        cpp_sources: Any,
        cuda_sources: Any = None,
        functions: Any = None,
        extra_cuda_cflags: Any = None,
        build_directory: str | None = None,
        verbose: bool = False,
    ) -> str:
        self.calls.append({"name": name, "build_directory": build_directory, "verbose": verbose})
        return str(build_directory)

    def load(self, name: str, sources: Any, build_directory: str | None = None) -> str:
        self.calls.append({"name": name, "build_directory": build_directory})
        return str(build_directory)


@pytest.fixture
def ext_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "ext"))
    return tmp_path / "ext"


def test_same_source_same_folder_other_source_other_folder(ext_root: Path) -> None:
    rec = _Recorder()
    load_inline = extension_cache._with_cached_folder(rec.load_inline, None)
    a = load_inline("ext", "int f();", "__global__ void k(){}", functions=["f"])
    again = load_inline(
        name="ext", cpp_sources="int f();", cuda_sources="__global__ void k(){}", functions=["f"]
    )
    b = load_inline("ext", "int f();", "__global__ void k(){ }", functions=["f"])
    flags = load_inline(
        "ext", "int f();", "__global__ void k(){}", functions=["f"], extra_cuda_cflags=["-O3"]
    )
    assert a == again  # positional or keyword: the same build
    assert len({a, b, flags}) == 3  # one changed character or flag: another folder
    for folder in (a, b, flags):
        assert Path(folder).is_dir() and Path(folder).name.startswith("ext-")
        assert str(ext_root) in folder  # under torch's root (TORCH_EXTENSIONS_DIR honoured)


def test_verbosity_does_not_change_the_folder(ext_root: Path) -> None:
    rec = _Recorder()
    load_inline = extension_cache._with_cached_folder(rec.load_inline, None)
    assert load_inline("ext", "int f();") == load_inline("ext", "int f();", verbose=True)


def test_a_folder_the_caller_names_is_kept(ext_root: Path, tmp_path: Path) -> None:
    rec = _Recorder()
    load_inline = extension_cache._with_cached_folder(rec.load_inline, None)
    mine = str(tmp_path / "mine")
    assert load_inline("ext", "int f();", build_directory=mine) == mine


def test_load_hashes_the_source_files_contents(ext_root: Path, tmp_path: Path) -> None:
    rec = _Recorder()
    load = extension_cache._with_cached_folder(rec.load, "sources")
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k(){}\n")
    first = load("ext", [str(src)])
    assert load("ext", str(src)) == first  # a str and a one-item list name the same file
    src.write_text("__global__ void k(){ /* changed */ }\n")
    assert load("ext", [str(src)]) != first  # same path, new content: rebuilt elsewhere


def test_install_is_idempotent() -> None:
    import torch.utils.cpp_extension as cpp

    assert extension_cache.install()
    patched = cpp.load_inline
    assert extension_cache.install()
    assert cpp.load_inline is patched
    assert getattr(patched, "__wrapped__", None) is not None


_MODULE = """
from torch.utils.cpp_extension import load_inline
ext = load_inline("pa_cache_probe", cpp_sources="int probe(int x) {{ return x + {add}; }}", functions=["probe"])
"""

_LOADER = """
import sys, time
from perfagent.workloads.kernelbench import load_module
t = time.monotonic()
m = load_module(sys.argv[1], "probe_module")
print(m.ext.probe(40), round(time.monotonic() - t, 2))
"""


@pytest.mark.slow
def test_real_builds_are_reused_and_never_mixed_up(tmp_path: Path) -> None:
    """Two sources of one extension name: each builds once, in its own folder, and each process gets its own."""
    ext = tmp_path / "ext"
    env = {**os.environ, "TORCH_EXTENSIONS_DIR": str(ext), "PYTHONPATH": str(REPO)}
    files = {}
    for add in (1, 2):
        files[add] = tmp_path / f"model_{add}.py"
        files[add].write_text(textwrap.dedent(_MODULE.format(add=add)))

    def run(add: int) -> tuple[int, float]:
        out = subprocess.run(
            [sys.executable, "-c", _LOADER, str(files[add])],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        ).stdout.split()
        return int(out[0]), float(out[1])

    assert run(1)[0] == 41
    assert run(2)[0] == 42  # before: the shared folder's build of "+ 1" could be imported here
    folders = sorted(p.name for p in ext.rglob("pa_cache_probe-*") if p.is_dir())
    assert len(folders) == 2
    libraries = {p: p.stat().st_mtime_ns for p in ext.rglob("pa_cache_probe*.so")}
    assert len(libraries) == 2
    value, _ = run(1)  # back to the first source: its build is reused, not redone
    assert value == 41
    assert {p: p.stat().st_mtime_ns for p in ext.rglob("pa_cache_probe*.so")} == libraries
