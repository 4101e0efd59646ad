"""Run two kernels of one launch spec (a benchmark's slow form and its fix) on the CPU block emulator.

``cuda_blocks.py`` compares a kernel with its rewrite under one name and hand-written cases; a benchmark
entry instead has two files, two entry points and a launch spec (docs/verify.md). Here the spec is
resolved for one shape (``resolve_launch``, the function the GPU verify uses), the fix's entry point is
renamed to the slow one's inside its own namespace, and every buffer is filled as the spec says where the
fill carries meaning: ``randint`` bounds (indices stay in range), ``zeros`` / ``ones`` / ``full`` /
``arange`` (accumulators, counts); other buffers get the emulator's pseudo-random fill. Both launches use
their own resolved grid and block, and every buffer, inputs included, is compared afterwards.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest

from perfagent.workloads.launch_resolve import ResolvedArg, ResolvedLaunch, resolve_launch
from perfagent.workloads.launch_spec import load_launch_spec
from profilers.process import run_command
from tests.rewrite.cuda_blocks import PRELUDE, build, host_unit

C_TYPES = {
    "float32": "float",
    "float16": "__half",
    "bfloat16": "__nv_bfloat16",
    "float64": "double",
    "int8": "signed char",
    "int16": "short",
    "int32": "int",
    "int64": "long long",
    "uint8": "unsigned char",
    "uint32": "unsigned",
    "bool": "bool",
}

# a buffer reaches the kernel as whatever pointer type its parameter spells (int8_t*, char*, int64_t*...)
ANY_POINTER = """
struct perfagent_any_ptr {
    void *p;
    template <class T> operator T *() const { return static_cast<T *>(p); }
};
"""


def _fill(arg: ResolvedArg, name: str) -> str:
    """C++ that overwrites ``name``'s elements where the spec's fill carries meaning ('' keeps the random fill)."""
    count = f"{name}.n"
    if arg.init == "randint" and arg.high is not None:
        low = int(arg.low or 0)
        span = max(1, int(arg.high) - low)
        return f"for (size_t i = 0; i < {count}; ++i) {name}.data()[i] = ({low} + (long long)((size_t)(i * 2654435761u) % {span}));"
    constants = {"zeros": "0", "ones": "1", "full": repr(arg.fill or 0)}
    if arg.init in constants:
        return f"for (size_t i = 0; i < {count}; ++i) {name}.data()[i] = (float){constants[arg.init]};"
    if arg.init == "arange":
        return f"for (size_t i = 0; i < {count}; ++i) {name}.data()[i] = (float)i;"
    return ""


def _launch_line(launch: ResolvedLaunch, namespace: str, kernel: str, values: list[str]) -> str:
    (gx, gy, gz), (bx, by, bz) = launch.grid, launch.block
    call = f"{namespace}::{kernel}({', '.join(values)})"
    return f"    launch({gx}u, {gy}u, {gz}u, {bx}u, {by}u, {bz}u, [&] {{ {call}; }});"


def _with_defines(source: str, launch: ResolvedLaunch) -> str:
    return "".join(f"#define {k} {v}\n" for k, v in launch.defines.items()) + source


def program(slow: ResolvedLaunch, fixed: ResolvedLaunch, rtol: float, atol: float) -> str:
    """The C++ program that runs both launches on identical buffers and compares them (prints OK)."""
    fixed_text = re.sub(rf"\b{re.escape(fixed.kernel)}\b", slow.kernel, Path(fixed.source).read_text())
    lines = [
        PRELUDE,
        ANY_POINTER,
        host_unit(_with_defines(Path(slow.source).read_text(), slow), "slow_"),
        host_unit(_with_defines(fixed_text, fixed), "fixed_"),
        "int main() {",
    ]
    values: dict[str, list[str]] = {"s": [], "f": []}
    for a, arg in enumerate(slow.args):
        ctype = C_TYPES[arg.dtype]
        if arg.is_scalar:
            for side in values:
                values[side].append(f"({ctype})({arg.value!r})")
            continue
        for side in values:
            name = f"{side}{a}"
            lines.append(f"    Buffer<{ctype}> {name}({max(1, arg.numel)}, {a + 1}u);")
            if fill := _fill(arg, name):
                lines.append("    " + fill)
            values[side].append(f"perfagent_any_ptr{{{name}.data()}}")
    lines.append(_launch_line(slow, "slow_", slow.kernel, values["s"]))
    lines.append(_launch_line(fixed, "fixed_", slow.kernel, values["f"]))
    for a, arg in enumerate(slow.args):
        if not arg.is_scalar:
            lines.append(f'    compare("{arg.name}", s{a}, f{a}, {rtol!r}, {atol!r});')
    lines += [
        '    if (g_divergent) std::printf("%d rounds ended with threads at a barrier and threads returned\\n", g_divergent);',
        '    if (g_shuffle_errors) std::printf("%d shuffles read a lane that was not at the same shuffle\\n", g_shuffle_errors);',
        '    std::printf(g_failures || g_divergent || g_shuffle_errors ? "FAILED\\n" : "OK\\n");',
        "    return g_failures || g_divergent || g_shuffle_errors;",
        "}",
    ]
    return "\n".join(lines) + "\n"


def emulate_entry(tmp: Path, entry: Path, params: dict[str, float | int]) -> tuple[bool, str]:
    """Run ``entry``'s slow.cu and fixed.cu at ``params`` on the emulator; (agreed, output tail)."""
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ is not installed (the CPU emulation compiles the kernels as host C++)")
    [spec_path] = list(entry.glob("*.launch.toml"))
    spec = load_launch_spec(spec_path)
    shape = {**spec.params, **params}
    slow = resolve_launch(spec, spec_path, source=entry / "slow.cu", params=shape)
    fixed = resolve_launch(spec, spec_path, source=entry / "fixed.cu", params=shape)
    # the spec's tolerance, else the verify defaults' order (fp32 1e-4; fp16/bf16 outputs say 1e-2 in their specs)
    rtol = slow.rtol if slow.rtol is not None else 1e-4
    atol = slow.atol if slow.atol is not None else 1e-4
    built = build(gxx, tmp, program(slow, fixed, rtol, atol), "emulate")
    if not built.ok:
        return False, built.tail()
    ran = run_command([str(tmp / "emulate")], cwd=tmp, timeout_s=600)
    return ran.ok and ran.stdout.strip().endswith("OK"), ran.stdout[-3000:] + ran.stderr[-1000:]


def candidate_entry(entry: Path, source: str, launch: dict[str, Any], work: Path) -> Path:
    """A copy of ``entry`` under ``work`` whose fixed.cu is ``source`` (a rewrite of slow.cu, same entry
    point), launched as ``launch`` says (a candidate's grid / block / shared_mem / defines; missing: the spec's)."""
    folder = work / "entry"
    shutil.copytree(entry, folder)
    (folder / "fixed.cu").write_text(source)
    spec_path = next(folder.glob("*.launch.toml"))
    spec = tomllib.loads(spec_path.read_text())
    variant: dict[str, Any] = {"kernel": launch.get("kernel") or spec["kernel"]}
    for key in ("grid", "block", "shared_mem", "defines"):
        if launch.get(key) not in (None, {}, []):
            variant[key] = launch[key]
    head = re.split(r'^\[variants\."fixed\.cu"\]', spec_path.read_text(), flags=re.M)[0]
    lines = ['[variants."fixed.cu"]'] + [
        f"{k} = {json.dumps(v)}" for k, v in variant.items() if k != "defines"
    ]
    if variant.get("defines"):
        lines.append('[variants."fixed.cu".defines]')
        lines += [f"{k} = {json.dumps(v)}" for k, v in variant["defines"].items()]
    spec_path.write_text(head.rstrip() + "\n\n" + "\n".join(lines) + "\n")
    return folder
