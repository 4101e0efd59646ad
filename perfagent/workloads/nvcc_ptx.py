"""Build a launch-spec kernel with nvcc when NVRTC cannot: PTX from nvcc, the entry's symbol found in it.

NVRTC compiles device code without the host compiler's headers, so ordinary kernels that include
``<cfloat>``, ``<math.h>`` or ``<cstdint>`` (most public code does) fail there while ``nvcc`` builds
them. The launch path therefore falls back to ``nvcc -ptx`` and loads the PTX through ``cuda.core``;
this module does the part that needs no GPU: the nvcc command, and finding the entry's (possibly
C++-mangled) name among the PTX's ``.entry`` symbols. A template entry (``f<float, 2>``) is not
instantiated by nvcc unless the source does so; it stays NVRTC's (name expressions).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from profilers.process import run_command

NVCC_TIMEOUT_S = 300.0
"""Wall-clock limit of one nvcc build of one kernel file, s."""

_ENTRY = re.compile(r"^\s*\.(?:visible\s+|weak\s+)*\.entry\s+([A-Za-z_$][\w$]*)\s*\(", re.MULTILINE)


def find_nvcc() -> str | None:
    """The nvcc to use: ``$CUDA_HOME/bin/nvcc`` when set, else the one on PATH (None: none)."""
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")):
        if root and (Path(root) / "bin" / "nvcc").is_file():
            return str(Path(root) / "bin" / "nvcc")
    return shutil.which("nvcc")


def nvcc_ptx_argv(
    nvcc: str, source: Path, out: Path, arch: str, defines: dict[str, str], include_paths: list[str]
) -> list[str]:
    """The nvcc command that writes ``source``'s PTX for ``sm_<arch>`` to ``out``."""
    argv = [nvcc, "-ptx", f"-arch=sm_{arch}", "-std=c++17", "-lineinfo", "-o", str(out)]
    argv += [f"-D{k}={v}" if v != "" else f"-D{k}" for k, v in defines.items()]
    argv += [f"-I{p}" for p in include_paths]
    return [*argv, str(source)]


def ptx_entries(ptx: str) -> list[str]:
    """The kernel symbols (``.entry``) a PTX module defines, in order."""
    return _ENTRY.findall(ptx)


def entry_symbol(ptx: str, entry: str) -> str:
    """The PTX symbol of kernel ``entry``: itself (``extern "C"``) or its one C++-mangled form.

    Raises:
        LookupError: no symbol, or more than one overload, matches ``entry``.
    """
    symbols = ptx_entries(ptx)
    if entry in symbols:
        return entry
    base = entry.split("<", 1)[0].split("::")[-1]
    mangled = [s for s in symbols if re.match(rf"_Z(?:N.*?)?{len(base)}{re.escape(base)}", s)]
    if len(mangled) == 1:
        return mangled[0]
    found = ", ".join(symbols) or "none"
    why = "several overloads match" if mangled else "no kernel of that name"
    raise LookupError(f"{why} for '{entry}' in nvcc's PTX (kernels: {found})")


def build_ptx(
    source: Path, workdir: Path, arch: str, defines: dict[str, str], include_paths: list[str]
) -> str:
    """Compile ``source`` to PTX with nvcc and return it.

    Raises:
        RuntimeError: nvcc is missing or the build failed (the message carries nvcc's first error).
    """
    nvcc = find_nvcc()
    if nvcc is None:
        raise RuntimeError("nvcc is not on PATH (set CUDA_HOME or install the CUDA toolkit)")
    out = workdir / f"{source.stem}.ptx"
    done = run_command(
        nvcc_ptx_argv(nvcc, source, out, arch, defines, include_paths), timeout_s=NVCC_TIMEOUT_S
    )
    if not done.ok or not out.is_file():
        raise RuntimeError(f"nvcc could not build {source.name}: {first_error(done.stderr or done.stdout)}")
    return out.read_text()


def first_error(log: str) -> str:
    """The compiler log's first error line (else its first non-empty line), for a one-line message."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for line in lines:
        if "error" in line.lower():
            return line
    return lines[0] if lines else "no compiler output"
