"""Plan only what fits: a transform whose catalog precondition the evidence contradicts is not proposed.

The catalog's ``preconditions`` are prose ("a tiled kernel whose K loop loads a tile ..."); the planner
ranks by measured indicators, which say a kernel *has a problem* a transform fixes, not that the code has
the *shape* the transform needs. Proposals that did not fit their kernel were seen with a real model:
fast-math on an integer bottleneck with no remainder by a runtime size, async-copy with no tiled loop, smem-tiling of an element-wise
op. Each check here reads the source (comments and strings of prose stripped) and, where measured, the
profile, and answers with the contradiction in plain words, or None when nothing contradicts the entry.
A transform the user named (``--transform``) is never dropped: the checks apply to planned ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from profilers.model import KernelProfile

__all__ = ["contradiction"]

_C_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_PY_COMMENT = re.compile(r"#[^\n]*")
_LOOP = re.compile(r"\bfor\s*\(|\bwhile\s*\(|^\s*for\s+\w+(\s*,\s*\w+)*\s+in\s|^\s*while\s", re.M)
_TRANSCENDENTAL = re.compile(
    r"\b(?:__)?(?:expf?|exp2f?|expm1f?|logf?|log2f?|log10f?|log1pf?|sinf?|cosf?|tanf?|tanhf?|sinhf?|coshf?|"
    r"powf?|sqrtf?|rsqrtf?|cbrtf?|erff?|erfcf?|atanf?|atan2f?|asinf?|acosf?|fdividef|sigmoid|softplus|gelu)\s*\("
)
_FLOAT_DIV = re.compile(r"\b(?:float|double|half|__half|bfloat16)\b[^;\n]*/|/\s*\(?\s*(?:float|double)\b")
_RUNTIME_REMAINDER = re.compile(r"%\s*\(?\s*[A-Za-z_]")
"""``i % W``: a remainder by a size known at run time (modulo-to-select's; a literal divisor is a multiply)."""
_SHARED = re.compile(r"__shared__|extern\s+__shared__|tl\.dot\b")
_SYNC_IN_LOOP = re.compile(r"\bfor\s*\([^)]*\)\s*\{[^{}]*(?:\{[^{}]*\}[^{}]*)*__syncthreads\(\)", re.S)
_REUSE = re.compile(r"\btl\.(?:dot|sum|max|min|reduce|cumsum|associative_scan)\b|\batomic\w*\(|__shfl")


def _code(source: str, language: str) -> str:
    """The source without comments (the C ones inside load_inline strings too)."""
    text = _C_COMMENT.sub("", source)
    return _PY_COMMENT.sub("", text) if language != "cuda" else text


def _fast_math(code: str, profile: KernelProfile | None) -> str | None:
    pipes = profile.metrics.pipe_utilization_pct if profile is not None else {}
    xu, fp64 = pipes.get("xu"), pipes.get("fp64")
    if fp64 is not None and fp64 >= 10.0:
        return None  # fp64 work (promotions of float data, demote-double's) is fast math's too
    if _RUNTIME_REMAINDER.search(code):
        # an integer remainder by a runtime size compiles to a multiply-and-correct sequence on the integer
        # and FMA pipes, not XU: an idle XU says nothing about it (unseen2/11 was skipped so, at 0.3 % XU)
        return None
    if xu is not None and xu < 10.0:
        return f"fast math speeds up transcendentals, and the XU pipe is idle ({xu:.3g} % busy)"
    if not (_TRANSCENDENTAL.search(code) or _FLOAT_DIV.search(code) or _RUNTIME_REMAINDER.search(code)):
        return (
            "fast math speeds up transcendentals, float division and integer remainders by a runtime size, "
            "and the source has none (a memory bottleneck is not helped)"
        )
    return None


def _async_copy(code: str, profile: KernelProfile | None) -> str | None:
    if not _LOOP.search(code):
        return "async copies pipeline the tiles of a loop, and the kernel has no loop"
    if "__global__" in code and not _SYNC_IN_LOOP.search(code):
        return "async copies pipeline a tiled loop (load a tile, __syncthreads, compute), and the kernel has none"
    return None


_FOR_HEADER = re.compile(r"\bfor\s*\(([^;]*);([^;]*);([^)]*)\)")
_GRID_NAME = re.compile(r"(\w+)\s*=[^;=]*\bgridDim\b")


def _data_loop(code: str) -> bool:
    """A loop that is not a grid-stride loop (those only hand each thread more elements: no reuse)."""
    if re.search(r"\bwhile\b|^\s*for\s+[\w, ]+\s+in\s", code, re.M):  # any while, any Python loop
        return True
    strides = {"gridDim", *_GRID_NAME.findall(code)}
    return any(not strides & set(re.findall(r"\w+", step)) for _, _, step in _FOR_HEADER.findall(code))


_STRIDED_INDEX = re.compile(r"\[[^\]]*\*[^\]]*\]|tl\.load\([^)]*\*")
"""A scaled index (``a[i * K + f]``, ``tl.load(p + offs * stride)``): strided or transposed access, which a
tile may re-order (the catalog's "or need a transposed access pattern")."""


def _smem_tiling(code: str, profile: KernelProfile | None) -> str | None:
    if _data_loop(code) or _SHARED.search(code) or _REUSE.search(code) or _STRIDED_INDEX.search(code):
        return None
    return (
        "shared-memory tiles pay off when threads reuse each other's data or need a transposed access, and "
        "the kernel is element-wise (no loop over data, no reduction, no shared data, no strided index): "
        "each element is read once"
    )


CHECKS: dict[str, Callable[[str, KernelProfile | None], str | None]] = {
    "fast-math": _fast_math,
    "async-copy": _async_copy,
    "smem-tiling": _smem_tiling,
}
"""Transform id -> the check of its catalog preconditions against the evidence."""


def contradiction(transform: str, source: str, language: str, profile: KernelProfile | None) -> str | None:
    """Why ``transform`` does not fit this kernel (the evidence against its catalog precondition), or None."""
    check = CHECKS.get(transform)
    if check is None:
        return None
    return check(_code(source, language), profile)
