"""Kernel-name normalisation across the AMD tools (rocprof.md pitfall 4). Names are as the fixtures and the
tools print them."""

from __future__ import annotations

import re

import pytest

from profilers.rocprof.names import base_name, display_name, is_runtime_kernel, matches


@pytest.mark.parametrize(
    ("raw", "display", "base"),
    [
        # rocprofv2 / Omniperf (MI300X pmc_perf fixture)
        (
            "vecCopy(double*, double*, double*, int, int) (.kd)",
            "vecCopy(double*, double*, double*, int, int)",
            "vecCopy",
        ),
        # rocprof v1 style
        ("compute_fd_x_kernel [clone .kd]", "compute_fd_x_kernel", "compute_fd_x_kernel"),
        ("foo(int, float*) [clone .kd]", "foo(int, float*)", "foo"),
        # runtime / Triton kernels
        (
            "__amd_rocclr_fillBufferAligned.kd",
            "__amd_rocclr_fillBufferAligned",
            "__amd_rocclr_fillBufferAligned",
        ),
        ("triton_poi_fused_add_0.kd", "triton_poi_fused_add_0", "triton_poi_fused_add_0"),
        # rocprofv3 demangled signatures, with return type and templates
        (
            "void addition_kernel<float>(float*, float const*, float const*, int, int)",
            "void addition_kernel<float>(float*, float const*, float const*, int, int)",
            "addition_kernel",
        ),
        (
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<unsigned int>, "
            "std::array<char*, 1ul> >(int, at::native::FillFunctor<unsigned int>, std::array<char*, 1ul>)",
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<unsigned int>, "
            "std::array<char*, 1ul> >(int, at::native::FillFunctor<unsigned int>, std::array<char*, 1ul>)",
            "vectorized_elementwise_kernel",
        ),
        ("micro_tk(micro_globals)", "micro_tk(micro_globals)", "micro_tk"),
        (
            "void (anonymous namespace)::scan<128>(int*)",
            "void (anonymous namespace)::scan<128>(int*)",
            "scan",
        ),
        # --mangled-kernels
        ("_Z7vecCopyPdS_S_ii", "_Z7vecCopyPdS_S_ii", "vecCopy"),
        ("_ZN2at6native13reduce_kernelEv", "_ZN2at6native13reduce_kernelEv", "reduce_kernel"),
        # quotes and stray whitespace
        ('  "matmul_kernel"  ', "matmul_kernel", "matmul_kernel"),
    ],
)
def test_normalisation(raw: str, display: str, base: str) -> None:
    assert display_name(raw) == display
    assert base_name(raw) == base


def test_suffix_forms_of_one_kernel_group_together() -> None:
    spellings = ["vecCopy(double*) (.kd)", "vecCopy(double*) [clone .kd]", "vecCopy(double*)"]
    assert len({display_name(s) for s in spellings}) == 1


def test_runtime_kernels() -> None:
    assert is_runtime_kernel("__amd_rocclr_copyBuffer")
    assert is_runtime_kernel("__amd_rocclr_fillBufferAligned.kd")
    assert not is_runtime_kernel("micro_tk(micro_globals)")


def test_kernel_regex_matches_display_or_base_name() -> None:
    raw = "void addition_kernel<float>(float*, float const*, float const*, int, int) (.kd)"
    assert matches(re.compile("^addition_kernel$"), raw)
    assert matches(re.compile(r"float const\*"), raw)
    assert not matches(re.compile("^subtract"), raw)
    assert matches(None, raw)
