"""The CPU emulations' precompiled includes (``emu_pch``): g++ really uses them, and the emulation header
the program includes again is the same file, read once."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import ModuleType

import pytest

from profilers.process import run_command
from tests.rewrite import cuda_blocks, cuda_cpu, cuda_lanes, emu_pch


@pytest.mark.parametrize("emulation", [cuda_cpu, cuda_blocks, cuda_lanes], ids=lambda m: m.__name__)
def test_each_emulation_builds_on_its_precompiled_includes(emulation: ModuleType, tmp_path: Path) -> None:
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ is not installed (the CPU emulation compiles the kernels as host C++)")
    folder = emu_pch.precompiled(gxx, emulation.INCLUDES, emulation.FLAGS)
    assert emu_pch.precompiled(gxx, emulation.INCLUDES, emulation.FLAGS) == folder  # built once
    # as a program is written: the precompiled header first, then the program's own includes again
    (tmp_path / "main.cpp").write_text(
        emu_pch.first_line() + emulation.INCLUDES + "int main() { return 0; }\n"
    )
    argv = [gxx, *emulation.FLAGS, "-H", "-fsyntax-only", "-I", str(folder), "main.cpp"]
    done = run_command(argv, cwd=tmp_path, timeout_s=300)
    assert done.ok, done.tail()
    # -H marks a precompiled header g++ used with '!' (and one it rejected with 'x')
    assert done.stderr.splitlines()[0] == f"! {folder / 'emu_headers.h.gch'}", done.stderr[:2000]
