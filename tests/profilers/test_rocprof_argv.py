"""Exact argv for hipcc, rocprofv3 and rocprof-compute; counter passes within the per-block limits; and the
``profile()`` orchestration with the one subprocess helper replaced.

The fake ``run_command`` below never writes profiler output by hand: for the rocprofv3 calls it copies REAL
fixture files (../shared/fixtures/rocprof) to where rocprofv3 would write them. The fixture combination
(docs sample trace + gfx950 agent info) is plumbing only; its numbers are not interpreted here.
"""

from __future__ import annotations

import math
import shutil
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest

from knowledge.rocprof_metric_map import rocprof_metric_map
from profilers.base import ProfileRequest
from profilers.errors import (
    ApplicationFailed,
    BuildFailed,
    NoKernelsProfiled,
    ProfilerFailed,
    ProfilerUnavailable,
)
from profilers.process import CompletedCommand
from profilers.rocprof.argv import (
    hipcc_argv,
    rocprof_compute_analyze_argv,
    rocprof_compute_profile_argv,
    rocprofv3_counter_argv,
    rocprofv3_trace_argv,
)
from profilers.rocprof.passes import block_of, plan_passes
from profilers.rocprof.profiler import RocprofProfiler

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "rocprof"
LIMITS = rocprof_metric_map().block_limits


# --------------------------------------------------------------------------- argv


def test_hipcc_argv() -> None:
    assert hipcc_argv(Path("t.hip"), Path("w/t"), offload_arch="gfx942") == [
        "hipcc",
        "-O3",
        "--offload-arch=gfx942",
        "-o",
        "w/t",
        "t.hip",
    ]
    assert hipcc_argv(Path("t.hip"), Path("w/t")) == ["hipcc", "-O3", "-o", "w/t", "t.hip"]


def test_rocprofv3_kernel_trace_argv() -> None:
    assert rocprofv3_trace_argv(["./app", "-n", "1"], output_dir=Path("out/trace")) == [
        "rocprofv3",
        "--kernel-trace",
        "--output-format",
        "csv",
        "--output-directory",
        "out/trace",
        "--output-file",
        "trace",
        "--",
        "./app",
        "-n",
        "1",
    ]


def test_rocprofv3_counter_pass_argv_with_filter_and_rocpd() -> None:
    argv = rocprofv3_counter_argv(
        ["./app"],
        ["SQ_LDS_BANK_CONFLICT", "SQ_LDS_IDX_ACTIVE", "SQ_INSTS_LDS"],
        output_dir=Path("out/pass1"),
        prefix="pass1",
        kernel_regex="^transpose",
        iteration_range="[2-4]",
        formats=("csv", "rocpd"),
    )
    assert argv == [
        "rocprofv3",
        "--pmc",
        "SQ_LDS_BANK_CONFLICT",
        "SQ_LDS_IDX_ACTIVE",
        "SQ_INSTS_LDS",
        "--kernel-include-regex",
        "^transpose",
        "--kernel-iteration-range",
        "[2-4]",
        "--output-format",
        "csv",
        "rocpd",
        "--output-directory",
        "out/pass1",
        "--output-file",
        "pass1",
        "--",
        "./app",
    ]
    with pytest.raises(ValueError):
        rocprofv3_counter_argv(["./app"], [], output_dir=Path("o"), prefix="p")


def test_rocprof_compute_argv() -> None:
    assert rocprof_compute_profile_argv(
        ["./vcopy", "-n", "1048576"],
        name="vcopy",
        path=Path("wl/vcopy"),
        kernels=["vecCopy"],
        blocks=["SQ", "TCC"],
        roofline=False,
    ) == [
        "rocprof-compute",
        "profile",
        "--name",
        "vcopy",
        "--path",
        "wl/vcopy",
        "--kernel",
        "vecCopy",
        "--block",
        "SQ",
        "TCC",
        "--no-roof",
        "--",
        "./vcopy",
        "-n",
        "1048576",
    ]
    assert rocprof_compute_analyze_argv(
        Path("wl/vcopy/MI300X_A1"), save_dfs=Path("dfs"), kernel_ids=[0], metric_ids=["2"]
    ) == [
        "rocprof-compute",
        "analyze",
        "--path",
        "wl/vcopy/MI300X_A1",
        "--kernel",
        "0",
        "--block",
        "2",
        "--save-dfs",
        "dfs",
    ]


# --------------------------------------------------------------------------- pass planning


def test_block_of() -> None:
    assert block_of("TCC_EA0_RDREQ_sum") == "TCC"
    assert block_of("SQC_ICACHE_HITS") == "SQ"
    assert block_of("GRBM_GUI_ACTIVE") == "GRBM"


def test_passes_respect_limits_and_are_minimal() -> None:
    for arch in ("gfx90a", "gfx942", "gfx950"):
        counters = rocprof_metric_map().collect_for(arch)
        passes = plan_passes(counters, LIMITS)
        assert sorted(c for p in passes for c in p) == sorted(counters)
        for group in passes:
            for block, used in Counter(block_of(c) for c in group).items():
                assert used <= LIMITS[block], (arch, block, group)
        per_block = Counter(block_of(c) for c in counters)
        assert len(passes) == max(math.ceil(n / LIMITS[b]) for b, n in per_block.items())


def test_gfx942_plan_is_four_passes() -> None:
    passes = plan_passes(rocprof_metric_map().collect_for("gfx942"), LIMITS)
    # 25 SQ counters at 8 per pass -> 4 passes; TCC 9 at 4 -> 3; TCP 6 at 4 -> 2; TA 3 at 2 -> 2.
    assert len(passes) == 4
    assert passes[0][:3] == ["GRBM_GUI_ACTIVE", "SQ_WAVES", "SQ_INSTS"]


def test_small_plans() -> None:
    assert plan_passes([], LIMITS) == []
    assert plan_passes(["TA_A", "TA_B", "TA_C", "SQ_X"], LIMITS) == [["TA_A", "TA_B", "SQ_X"], ["TA_C"]]
    assert plan_passes(["ZZ_UNKNOWN_1", "ZZ_UNKNOWN_2"], LIMITS) == [["ZZ_UNKNOWN_1"], ["ZZ_UNKNOWN_2"]]


# --------------------------------------------------------------------------- profile() orchestration


class FakeTools:
    """Stands in for ``run_command``: records argv, copies real fixture files where rocprofv3 writes."""

    def __init__(self, *, trace_rc: int = 0, hipcc_rc: int = 0, write_trace: bool = True) -> None:
        self.calls: list[list[str]] = []
        self.trace_rc = trace_rc
        self.hipcc_rc = hipcc_rc
        self.write_trace = write_trace

    def __call__(self, argv: Sequence[str | Path], **_: object) -> CompletedCommand:
        args = [str(a) for a in argv]
        self.calls.append(args)
        rc, err = 0, ""
        if args[0] == "hipcc":
            rc = self.hipcc_rc
            err = "t.hip:3:1: error: unknown type name 'foo'" if rc else ""
            if rc == 0:
                Path(args[args.index("-o") + 1]).touch()
        elif args[:2] in (["rocprofv3", "--version"], ["rocprofv3", "--list-avail"]):
            rc = 1  # unknown output formats are not imitated: the probes report nothing
        elif args[0] == "rocprofv3":
            out = Path(args[args.index("--output-directory") + 1])
            prefix = args[args.index("--output-file") + 1]
            out.mkdir(parents=True, exist_ok=True)
            if "--kernel-trace" in args:
                rc = self.trace_rc
                err = "Segmentation fault in the application" if rc else ""
                if self.write_trace and rc == 0:
                    shutil.copyfile(
                        FIXTURES / "rocprofv3_sdk_docs_kernel_trace.csv", out / f"{prefix}_kernel_trace.csv"
                    )
                    shutil.copyfile(
                        FIXTURES / "rocprofv3_gfx950_agent_info.csv", out / f"{prefix}_agent_info.csv"
                    )
            else:
                shutil.copyfile(
                    FIXTURES / "rocprofv3_sdk_docs_counter_collection.csv",
                    out / f"{prefix}_counter_collection.csv",
                )
        return CompletedCommand(argv=tuple(args), returncode=rc, stdout="", stderr=err, elapsed_s=0.01)


@pytest.fixture
def tools(monkeypatch: pytest.MonkeyPatch) -> FakeTools:
    if not FIXTURES.is_dir():
        pytest.skip(f"shared rocprof fixtures not found at {FIXTURES} (../shared is absent)")
    fake = FakeTools()
    monkeypatch.setattr("profilers.rocprof.profiler.run_command", fake)
    monkeypatch.setattr("profilers.rocprof.profiler.shutil.which", lambda name: f"/opt/rocm/bin/{name}")
    return fake


def test_profile_builds_traces_and_collects_counter_passes(tools: FakeTools, tmp_path: Path) -> None:
    source = tmp_path / "transpose.hip"
    source.write_text("// HIP source (not compiled: hipcc is faked)\n")
    request = ProfileRequest(
        source=source,
        command=["--size", "4096"],
        workdir=tmp_path / "work",
        kernel_regex="addition",
        arch="gfx950",
    )
    profile = RocprofProfiler().profile(request)

    binary = str(tmp_path / "work" / "build" / "transpose")
    out = tmp_path / "work" / "rocprof"
    app = [binary, "--size", "4096"]
    passes = plan_passes(rocprof_metric_map().collect_for("gfx950"), LIMITS)
    expected = [
        ["hipcc", "-O3", "--offload-arch=gfx950", "-o", binary, str(source)],
        rocprofv3_trace_argv(app, output_dir=out / "trace"),
        ["rocprofv3", "--list-avail"],
        *[
            rocprofv3_counter_argv(
                app, group, output_dir=out / f"pass{i}", prefix=f"pass{i}", kernel_regex="addition"
            )
            for i, group in enumerate(passes, start=1)
        ],
        ["rocprofv3", "--version"],
    ]
    assert tools.calls == [[str(a) for a in argv] for argv in expected]
    assert len(passes) == 4

    assert profile.tool == "rocprofv3" and profile.mode == "counters"
    assert profile.command == " ".join(app)
    assert [k.base_name for k in profile.kernels] == ["addition_kernel"]
    assert profile.kernels[0].invocations == 4 and profile.kernels[0].raw_metric_count == 1
    assert any("collected in 4 replay passes" in n for n in profile.notes)


def test_profile_command_without_source(tools: FakeTools, tmp_path: Path) -> None:
    profiler = RocprofProfiler(collect_counters=False)
    profile = profiler.profile(ProfileRequest(command=["./app"], workdir=tmp_path))
    assert [c[0] for c in tools.calls] == ["rocprofv3", "rocprofv3"]  # trace + version probe
    assert tools.calls[0][-2:] == ["--", "./app"]
    assert profile.mode == "timing-only"


def test_launch_skip_and_count_per_kernel(tools: FakeTools, tmp_path: Path) -> None:
    request = ProfileRequest(command=["./app"], workdir=tmp_path, launch_skip=1, launch_count=2)
    profile = RocprofProfiler(collect_counters=False).profile(request)
    counts = {k.base_name: k.invocations for k in profile.kernels}
    assert counts == {"addition_kernel": 2, "subtract_kernel": 1}  # multiply had one dispatch: skipped


def test_build_failure(tools: FakeTools, tmp_path: Path) -> None:
    tools.hipcc_rc = 1
    source = tmp_path / "t.hip"
    source.write_text("")
    with pytest.raises(BuildFailed, match="unknown type name"):
        RocprofProfiler().profile(ProfileRequest(source=source, workdir=tmp_path))


def test_application_failure(tools: FakeTools, tmp_path: Path) -> None:
    tools.trace_rc = 139
    with pytest.raises(ApplicationFailed) as info:
        RocprofProfiler().profile(ProfileRequest(command=["./app"], workdir=tmp_path))
    assert info.value.returncode == 139


def test_no_kernels(tools: FakeTools, tmp_path: Path) -> None:
    tools.write_trace = False
    with pytest.raises(NoKernelsProfiled):
        RocprofProfiler().profile(ProfileRequest(command=["./app"], workdir=tmp_path))


def test_nothing_to_run(tools: FakeTools, tmp_path: Path) -> None:
    with pytest.raises(ProfilerFailed):
        RocprofProfiler().profile(ProfileRequest(workdir=tmp_path))


def test_unavailable_without_rocprofv3(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("profilers.rocprof.profiler.shutil.which", lambda name: None)
    profiler = RocprofProfiler()
    assert (
        profiler.availability() == "rocprofv3 not on PATH (install ROCm >= 6.2 or add /opt/rocm/bin to PATH)"
    )
    assert profiler.version() is None
    with pytest.raises(ProfilerUnavailable):
        profiler.profile(ProfileRequest(command=["./app"], workdir=tmp_path))


def test_protocol_attributes() -> None:
    from profilers import get_profiler
    from profilers.base import Profiler

    profiler = get_profiler("rocprof")
    assert isinstance(profiler, Profiler)
    assert (profiler.name, profiler.vendor, profiler.measures_time) == ("rocprof", "amd", True)
