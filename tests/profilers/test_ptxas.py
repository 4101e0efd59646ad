"""ptxas resource-usage parsing, on output recorded from real nvcc 13.0 runs (tests/data/ptxas/)."""

from __future__ import annotations

from pathlib import Path

from profilers.static.demangle import base_name
from profilers.static.ptxas import parse_ptxas_output

DATA = Path(__file__).resolve().parents[1] / "data" / "ptxas"


def test_spilling_kernel() -> None:
    (kernel,) = parse_ptxas_output((DATA / "spill.sm_90.txt").read_text())
    assert kernel.mangled_name == "_Z11spill_heavyPKfPfii"
    assert kernel.arch == "sm_90"
    assert kernel.registers == 32
    assert (kernel.spill_store_bytes, kernel.spill_load_bytes) == (1568, 1644)
    assert kernel.stack_frame_bytes == 992 and kernel.cumulative_stack_bytes == 992
    assert kernel.local_memory_bytes == 992
    assert kernel.barriers == 0 and kernel.shared_static_bytes == 0


def test_device_functions_are_not_kernels_sm90() -> None:
    kernels = parse_ptxas_output((DATA / "device_function.sm_90.txt").read_text())
    assert [k.mangled_name for k in kernels] == ["_ZN2ns4fillILi3EEEvPi", "_Z11uses_helperPf"]
    uses_helper = kernels[1]
    assert uses_helper.registers == 26
    assert uses_helper.shared_static_bytes == 128
    assert uses_helper.stack_frame_bytes == 64
    assert uses_helper.local_memory_bytes == 64
    assert uses_helper.constant_bytes == {}


def test_constant_memory_items_sm80() -> None:
    kernels = parse_ptxas_output((DATA / "device_function.sm_80.txt").read_text())
    assert {k.arch for k in kernels} == {"sm_80"}
    uses_helper = next(k for k in kernels if k.mangled_name == "_Z11uses_helperPf")
    assert uses_helper.registers == 26 and uses_helper.shared_static_bytes == 128
    assert uses_helper.constant_bytes == {0: 360}


def test_no_kernels_in_unrelated_text() -> None:
    assert parse_ptxas_output("a.cu(3): warning #549-D: variable used before set\n") == []


def test_base_names() -> None:
    assert base_name("void k2<float>(float*, int)") == "k2"
    assert base_name("void ns::fill<3>(int*)") == "fill"
    assert base_name("spill_heavy(float const*, float*, int, int)") == "spill_heavy"
    assert base_name("(anonymous namespace)::k(float*)") == "k"
    assert base_name("void f<(int)3>(int (*)[4])") == "f"
    assert base_name("plain_extern_c") == "plain_extern_c"
    # Mangled names no demangler could read still give a base name.
    assert base_name("_Z2k1Pfi") == "k1"
    assert base_name("_ZN2ns4fillILi3EEEvPi") == "fill"
