"""The HIP examples are well-formed: both kernels present with matching signatures, and (when nvcc is on
PATH) they compile through examples/hip/cuda_shim. They are never run here: no AMD GPU."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

HIP = Path(__file__).resolve().parents[2] / "examples" / "hip"
EXAMPLES = {
    "01_transpose_lds_conflicts": ("transpose_lds_conflicts", "transpose_lds_padded"),
    "02_atomics_histogram": ("histogram_global_atomics", "histogram_lds_privatized"),
}


def _signature(source: str, kernel: str) -> str:
    match = re.search(rf'extern "C" __global__ void {kernel}\(([^)]*)\)', source)
    assert match, f"{kernel} not found"
    return match.group(1)


@pytest.mark.parametrize("folder", sorted(EXAMPLES))
def test_example_layout(folder: str) -> None:
    path = HIP / folder
    for name in ("main.hip", "slow.hip", "fixed.hip", "README.md"):
        assert (path / name).is_file(), name
    slow, fixed = EXAMPLES[folder]
    assert _signature((path / "slow.hip").read_text(), slow) == _signature(
        (path / "fixed.hip").read_text(), fixed
    )
    main = (path / "main.hip").read_text()
    assert '#include "slow.hip"' in main and '#include "fixed.hip"' in main
    assert "<<<" in main and "hip/hip_runtime.h" in main
    assert "Nothing in this folder has been run on an AMD GPU" in (path / "README.md").read_text()


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("nvcc") is None, reason="nvcc not on PATH: the CUDA-shim syntax check needs it"
)
@pytest.mark.parametrize("folder", sorted(EXAMPLES))
def test_example_compiles_through_cuda_shim(folder: str, tmp_path: Path) -> None:
    argv = ["nvcc", "-x", "cu", "-I", str(HIP / "cuda_shim"), "-O3", "-c", "-o", str(tmp_path / "main.o")]
    result = subprocess.run(
        [*argv, str(HIP / folder / "main.hip")], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
