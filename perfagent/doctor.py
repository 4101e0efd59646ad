"""Environment probes for `perfagent doctor`: what is here, what will be used, and why not."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

from pydantic import Field

from perfagent.llm_client import ENV_BASE_URL, LLMConfig, check_endpoint
from perfagent.sandbox import confinement
from perfagent.sandbox.watch import landlock_line
from perfagent.workloads.cuda_toolkit import find_cuda_home, load_inline_gap
from profilers import get_profiler
from profilers.core_errors import BadInput
from profilers.errors import ProfilerError
from profilers.model import Frozen
from profilers.process import run_command
from profilers.settings import TIMEOUTS

PROBE_TIMEOUT_S = TIMEOUTS.probe_s


class Probe(Frozen):
    """One checked item."""

    name: str
    ok: bool
    detail: str


class DoctorReport(Frozen):
    """Everything `perfagent doctor` found."""

    probes: list[Probe] = Field(default_factory=list)
    will_use: str
    """Which profiler a `perfagent diagnose prog.cu` would use here, and why."""


def run_probes() -> DoctorReport:
    """Probe the GPU, driver, profilers, counter permission, compilers and the LLM endpoint."""
    probes = [_gpu(), _counter_permission()]
    probes.extend(_profiler(name) for name in ("ncu", "static", "rocprof"))
    probes.append(_python_module("ncu_report", "reads .ncu-rep files without a GPU"))
    probes.append(_python_module("torch", "KernelBench problems, verification, timing"))
    probes.append(_python_module("triton", "Triton kernels (TRITON_INTERPRET=1 on CPU)"))
    probes.append(_load_inline())
    probes.append(_llm())
    probes.append(_sandbox())
    by_name = {p.name: p for p in probes}
    if by_name["profiler ncu"].ok and by_name["GPU"].ok:
        will_use = "ncu (hardware counters) for programs and commands; recorded reports are read directly"
    elif by_name["profiler static"].ok:
        will_use = "static analysis (nvcc/ptxas) for .cu files — no GPU profiling here; recorded reports are read directly"
    else:
        will_use = "recorded reports only (no ncu, no nvcc)"
    return DoctorReport(probes=probes, will_use=will_use)


def _gpu() -> Probe:
    if shutil.which("nvidia-smi") is None:
        return Probe(name="GPU", ok=False, detail="nvidia-smi not found: no NVIDIA driver here")
    try:
        done = run_command(
            ["nvidia-smi", "--query-gpu=name,driver_version,compute_cap", "--format=csv,noheader"],
            timeout_s=PROBE_TIMEOUT_S,
        )
    except ProfilerError as exc:
        return Probe(name="GPU", ok=False, detail=exc.message)
    if not done.ok or not done.stdout.strip():
        return Probe(name="GPU", ok=False, detail=f"nvidia-smi failed: {done.tail(2)}")
    gpus = [line.strip() for line in done.stdout.strip().splitlines()]
    return Probe(name="GPU", ok=True, detail="; ".join(f"{g} (name, driver, CC)" for g in gpus))


def _counter_permission() -> Probe:
    params = Path("/proc/driver/nvidia/params")
    if not params.exists():
        return Probe(
            name="counter permission",
            ok=False,
            detail="no NVIDIA kernel driver (/proc/driver/nvidia/params absent)",
        )
    text = params.read_text(errors="replace")
    admin_only = "RmProfilingAdminOnly: 1" in text
    root = os.geteuid() == 0
    if admin_only and not root:
        return Probe(
            name="counter permission",
            ok=False,
            detail="counters are admin-only (RmProfilingAdminOnly=1) and you are not root: ncu will fail with "
            "ERR_NVGPUCTRPERM; perfagent falls back to timing-only. Fix: NVreg_RestrictProfilingToAdminUsers=0",
        )
    return Probe(name="counter permission", ok=True, detail="root" if root else "counters open to all users")


def _profiler(name: str) -> Probe:
    try:
        p = get_profiler(name)
    except ModuleNotFoundError as exc:
        return Probe(name=f"profiler {name}", ok=False, detail=f"backend not installed ({exc.name})")
    reason = p.availability()
    if reason is not None:
        return Probe(name=f"profiler {name}", ok=False, detail=reason)
    return Probe(name=f"profiler {name}", ok=True, detail=p.version() or "version unknown")


def _python_module(module: str, purpose: str) -> Probe:

    found = importlib.util.find_spec(module) is not None
    return Probe(name=f"python {module}", ok=found, detail=purpose if found else f"not installed ({purpose})")


def _load_inline() -> Probe:
    """The CUDA toolkit (CUDA_HOME, as torch finds it) and CUDA torch that every load_inline candidate needs."""
    home = find_cuda_home()
    toolkit = f"CUDA toolkit {home.path} (from {home.how})" if home.path else f"no CUDA toolkit ({home.how})"
    gap = load_inline_gap()
    if gap is None:
        return Probe(name="load_inline (CUDA C++ candidates)", ok=True, detail=toolkit)
    return Probe(
        name="load_inline (CUDA C++ candidates)",
        ok=False,
        detail=f"{gap}; {toolkit} — such candidates are verified and timed as inconclusive here",
    )


def _sandbox() -> Probe:
    """Whether candidate code runs confined here (bubblewrap, Landlock), or why not."""
    st = confinement.status()
    detail = st.describe() + f"; {landlock_line()}"
    if st.confined:
        detail += "; candidate code under ncu too (optimize's re-profiles, MCP diagnose/profile of a program)"
    else:
        detail += "; verify/bench/optimize/suite (and their ncu re-profiles) refuse candidate code without --unconfined"
    return Probe(name="sandbox", ok=st.confined, detail=detail)


def _llm() -> Probe:
    """The LLM endpoint, contacted (one cheap request with a short timeout), the key never shown."""
    try:
        config = LLMConfig.from_env()
    except BadInput as exc:
        return Probe(name="LLM endpoint", ok=False, detail=exc.message)
    if config.endpoint is None:
        return Probe(
            name="LLM endpoint",
            ok=False,
            detail=f"{ENV_BASE_URL} not set: optimize uses the offline `recipes` backend only",
        )
    key = f"key from {config.key_source}" if config.key_source else "no key"
    if not config.model:
        return Probe(
            name="LLM endpoint",
            ok=False,
            detail=f"{config.endpoint}: PERFAGENT_LLM_MODEL not set ({key}); set it to the model's name",
        )
    check = check_endpoint(config)
    state = (
        "reachable, model found"
        if check.ok
        else "reachable, model NOT found"
        if check.reachable and check.model_found is False
        else "reachable, error"
        if check.reachable
        else "unreachable"
    )
    return Probe(name="LLM endpoint", ok=check.ok, detail=config.redact(f"{state}: {check.detail} ({key})"))
