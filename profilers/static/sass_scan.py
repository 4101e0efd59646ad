"""Does a program certainly run no tensor-core instruction? Then its tensor-pipe counters need not be
collected: on an H100 they cost two of the targeted run's twenty replay passes (measured with
``scripts/gpu_profiling_groups.py``, BENCHMARKS.md).

"Certainly" means all of: the executable is an ELF file that carries SASS (``cuobjdump -sass`` lists
functions), none of that SASS is a tensor-core opcode, and ``ldd`` shows no CUDA library that brings its
own kernels (cuBLAS, cuDNN, ...). Anything else (a Python interpreter, PTX-only code that is compiled at
run time, a library that may use tensor cores, a tool that fails) answers "not certain": collect them.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from profilers.errors import ProfilerError
from profilers.process import run_command

SCAN_TIMEOUT_S = 30.0
_TENSOR_OPCODE = re.compile(r"^(?:@!?U?P[T0-9]+\s+)?[A-Z0-9]*MMA(?:\.|\s|;)")
"""HMMA, HGMMA, IMMA, IGMMA, DMMA, QMMA, BMMA, OMMA, UTC*MMA: every tensor-core SASS opcode ends in MMA
(the opcode, before its first '.': ``HFMA2.MMA`` is an FMA issued on another pipe, not a tensor op)."""
_KERNEL_LIBRARIES = re.compile(
    r"lib(?:cublas|cublasLt|cudnn|cufft|cusparse|cusolver|curand|nccl|torch|nvinfer|cutlass)"
)


def no_tensor_code(command: list[str]) -> str | None:
    """Why the program of ``command`` runs no tensor-core instruction, or None when that is not certain."""
    exe = _executable(command[0]) if command else None
    if exe is None or exe.read_bytes()[:4] != b"\x7fELF":
        return None
    cuobjdump, ldd = shutil.which("cuobjdump"), shutil.which("ldd")
    if cuobjdump is None or ldd is None:
        return None
    try:
        sass = run_command([cuobjdump, "-sass", str(exe)], timeout_s=SCAN_TIMEOUT_S)
        libs = run_command([ldd, str(exe)], timeout_s=SCAN_TIMEOUT_S)
    except ProfilerError:
        return None
    functions = sass.stdout.count("Function :")
    if not sass.ok or functions == 0 or has_tensor_instruction(sass.stdout):
        return None
    if _KERNEL_LIBRARIES.search(libs.stdout):
        return None
    return (
        f"{exe.name}'s SASS ({functions} kernels) has no tensor-core instruction and it links no CUDA library"
    )


def _executable(name: str) -> Path | None:
    path = Path(name) if "/" in name else (Path(found) if (found := shutil.which(name)) else None)
    return path if path is not None and path.is_file() else None


_SASS_LINE = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s*(?P<instruction>[^;]*;)")
"""One SASS line of ``cuobjdump -sass``: ``/*0160*/  HMMA.16816.F32 R16, R4, R12, RZ ;  /* 0x…c */``."""


def has_tensor_instruction(listing: str) -> bool:
    """``cuobjdump -sass`` text holds a tensor-core opcode (function names and comments do not count:
    a kernel may be named gemma)."""
    instructions = (m["instruction"] for line in listing.splitlines() if (m := _SASS_LINE.match(line)))
    return any(_TENSOR_OPCODE.match(text) for text in instructions)
