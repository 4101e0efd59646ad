"""The nvcc build cache (profilers/build_cache.py) with the real nvcc: a second build of the same bytes is
taken from the cache, any change to the source, a local header or the flags builds again, and a
turned-off cache always builds."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from profilers import build_cache
from profilers.build import build_program, compile_cubin
from profilers.errors import BuildFailed

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")

KERNEL = """#include "scale.h"
__global__ void scale(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= FACTOR; }
int main() { return 0; }
"""


@pytest.fixture
def program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PERFAGENT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PERFAGENT_BUILD_CACHE", raising=False)
    (tmp_path / "scale.h").write_text("#define FACTOR 2.0f\n")
    source = tmp_path / "scale.cu"
    source.write_text(KERNEL)
    return source


def test_a_second_build_of_the_same_bytes_comes_from_the_cache(program: Path, tmp_path: Path) -> None:
    first = compile_cubin(program, tmp_path / "a.cubin", "sm_90", timeout_s=300)
    second = compile_cubin(program, tmp_path / "a.cubin", "sm_90", timeout_s=300)
    assert first.elapsed_s > 0 and second.elapsed_s == 0.0  # 0.0: nvcc did not run
    assert second.stderr == first.stderr and "registers" in second.stderr  # ptxas -v kept for static analysis
    assert (tmp_path / "a.cubin").read_bytes()[:4] == b"\x7fELF"


def test_a_changed_header_flag_or_source_builds_again(program: Path, tmp_path: Path) -> None:
    out = tmp_path / "bin" / "prog"
    key0 = build_cache.build_key(["nvcc", "-O3", "-o", str(out), str(program)], program, out)
    build_program(program, out, "sm_90", timeout_s=300)
    (tmp_path / "scale.h").write_text("#define FACTOR 3.0f\n")
    key1 = build_cache.build_key(["nvcc", "-O3", "-o", str(out), str(program)], program, out)
    key2 = build_cache.build_key(["nvcc", "-O2", "-o", str(out), str(program)], program, out)
    assert len({key0, key1, key2}) == 3
    # the same build written to another output path is the same entry
    assert key1 == build_cache.build_key(["nvcc", "-O3", "-o", "x", str(program)], program, Path("x"))
    rebuilt = compile_cubin(program, tmp_path / "b.cubin", "sm_90", timeout_s=300)
    assert rebuilt.elapsed_s > 0


def test_the_cache_can_be_turned_off_and_failures_are_never_cached(
    program: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERFAGENT_BUILD_CACHE", "0")
    assert build_cache.cache_root() is None
    compile_cubin(program, tmp_path / "c.cubin", "sm_90", timeout_s=300)
    assert compile_cubin(program, tmp_path / "c.cubin", "sm_90", timeout_s=300).elapsed_s > 0
    monkeypatch.delenv("PERFAGENT_BUILD_CACHE")
    program.write_text("__global__ void broken( {}\n")
    for _ in range(2):
        with pytest.raises(BuildFailed):
            compile_cubin(program, tmp_path / "d.cubin", "sm_90", timeout_s=300)
