"""The nvcc route of the launch path (NVRTC cannot include host headers such as <cfloat>)."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.workloads import nvcc_ptx

needs_nvcc = pytest.mark.skipif(nvcc_ptx.find_nvcc() is None, reason="nvcc is not on PATH")

KERNELS = """
#include <cfloat>
#include <math.h>
__global__ void row_max(const float* x, float* y, int n) {
    float m = -FLT_MAX;
    for (int i = 0; i < n; ++i) m = fmaxf(m, x[i]);
    y[threadIdx.x] = m + sqrtf(2.0f);
}
extern "C" __global__ void plain_c(float* y) { y[threadIdx.x] = -INFINITY; }
__global__ void twice(float* y) { y[0] = 1.0f; }
__global__ void twice(double* y) { y[0] = 1.0; }
"""


@needs_nvcc
def test_nvcc_builds_host_headers_and_finds_each_entry(tmp_path: Path) -> None:
    src = tmp_path / "k.cu"
    src.write_text(KERNELS)
    ptx = nvcc_ptx.build_ptx(src, tmp_path, "90", {"UNUSED": "1"}, [str(tmp_path)])
    assert nvcc_ptx.entry_symbol(ptx, "plain_c") == "plain_c"
    mangled = nvcc_ptx.entry_symbol(ptx, "row_max")
    assert mangled.startswith("_Z7row_max") and mangled in nvcc_ptx.ptx_entries(ptx)
    with pytest.raises(LookupError, match="several overloads"):
        nvcc_ptx.entry_symbol(ptx, "twice")
    with pytest.raises(LookupError, match="no kernel of that name"):
        nvcc_ptx.entry_symbol(ptx, "absent")


@needs_nvcc
def test_an_nvcc_error_is_one_line_with_the_first_error(tmp_path: Path) -> None:
    src = tmp_path / "bad.cu"
    src.write_text("__global__ void k(float* y) { y[0] = undefined_name; }\n")
    with pytest.raises(RuntimeError) as err:
        nvcc_ptx.build_ptx(src, tmp_path, "90", {}, [])
    message = str(err.value)
    assert "\n" not in message and "undefined_name" in message


def test_the_nvcc_command_carries_arch_defines_and_includes() -> None:
    argv = nvcc_ptx.nvcc_ptx_argv("nvcc", Path("k.cu"), Path("k.ptx"), "90", {"N": "4", "FLAG": ""}, ["/inc"])
    assert argv == [
        "nvcc",
        "-ptx",
        "-arch=sm_90",
        "-std=c++17",
        "-lineinfo",
        "-o",
        "k.ptx",
        "-DN=4",
        "-DFLAG",
        "-I/inc",
        "k.cu",
    ]


def test_the_first_error_line_is_kept() -> None:
    log = 'k.cu(3): warning: unused\nk.cu(5): error: identifier "x" is undefined\n1 error detected'
    assert nvcc_ptx.first_error(log) == 'k.cu(5): error: identifier "x" is undefined'
    assert nvcc_ptx.first_error("") == "no compiler output"
