"""What ``torch.utils.cpp_extension.load_inline`` needs here: a CUDA build of torch and a CUDA toolkit.

``find_cuda_home`` looks where torch's own ``_find_cuda_home`` looks, in the same order (``CUDA_HOME``,
``CUDA_PATH``, the folder above ``nvcc`` on PATH, ``/usr/local/cuda``), so that what ``doctor`` says and
what a build does agree. A CPU build of torch never looks at all (its ``cpp_extension.CUDA_HOME`` is None
and the build fails with "CUDA_HOME environment variable is not set" even with nvcc installed): that, not
the variable, is then the cause to report.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

from profilers.model import Frozen


class CudaHome(Frozen):
    """The CUDA toolkit found (or not) and how."""

    path: str | None
    how: str
    """'CUDA_HOME', 'CUDA_PATH', 'nvcc on PATH (…)', '/usr/local/cuda', or why none was found."""


def find_cuda_home() -> CudaHome:
    """The toolkit root torch would use (torch.utils.cpp_extension's search order)."""
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        value = os.environ.get(variable)
        if value:
            if Path(value, "bin").is_dir():
                return CudaHome(path=value, how=variable)
            return CudaHome(path=None, how=f"{variable}={value} has no bin/ folder")
    nvcc = shutil.which("nvcc")
    if nvcc is not None:
        root = Path(nvcc).resolve().parent.parent
        return CudaHome(path=str(root), how=f"nvcc on PATH ({nvcc})")
    if Path("/usr/local/cuda/bin").is_dir():
        return CudaHome(path="/usr/local/cuda", how="/usr/local/cuda")
    return CudaHome(path=None, how="CUDA_HOME is unset, no nvcc on PATH and no /usr/local/cuda")


def torch_cuda_version() -> tuple[str | None, str | None]:
    """(torch's version, the CUDA it was built with); (None, None) without torch, (v, None) for a CPU build."""
    if importlib.util.find_spec("torch") is None:
        return None, None
    # torch takes seconds to import: only a build or a check that needs it loads it
    import torch

    return str(torch.__version__), torch.version.cuda


def load_inline_gap() -> str | None:
    """Why a ``load_inline`` CUDA candidate cannot be built and run here (None: it can be)."""
    version, cuda = torch_cuda_version()
    if version is None:
        return "torch is not installed (load_inline is part of torch)"
    if cuda is None:
        return (
            f"this torch build ({version}) has no CUDA: load_inline needs a CUDA build of torch "
            "(and a CUDA toolkit), whatever CUDA_HOME says"
        )
    home = find_cuda_home()
    if home.path is None:
        return f"no CUDA toolkit for load_inline: {home.how}"
    return None
