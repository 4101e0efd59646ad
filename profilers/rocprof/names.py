"""Kernel names as the AMD tools print them, normalised for display, grouping and ``--kernel`` matching.

The same kernel is spelled differently by each tool (rocprof.md pitfall 4): rocprof v1 appends
``[clone .kd]``, rocprofv2/Omniperf ``(.kd)``, Triton and runtime kernels end in ``.kd``, rocprofv3
prints the demangled signature (``void addition_kernel<float>(float*, ...)``) and, with
``--mangled-kernels``, the Itanium mangling. ``display_name`` strips only the tool suffixes and keeps the
signature; ``base_name`` is the bare function name (no return type, namespaces, templates or
parameters), the same notion as ncu's base name.
"""

from __future__ import annotations

import re

_SUFFIXES = (
    re.compile(r"\s*\[clone\s+\.kd\]\s*$"),
    re.compile(r"\s*\(\.kd\)\s*$"),
    re.compile(r"\.kd\s*$"),
)
_RUNTIME_PREFIXES = ("__amd_rocclr_",)
_SOURCE_NAME = re.compile(r"(\d+)")


def display_name(raw: str) -> str:
    """The kernel name without tool suffixes (``[clone .kd]``, `` (.kd)``, ``.kd``) and outer quotes.

    Args:
        raw: the name as a profiler printed it.
    """
    name = raw.strip().strip('"').strip()
    changed = True
    while changed:
        changed = False
        for pattern in _SUFFIXES:
            stripped = pattern.sub("", name)
            if stripped != name:
                name, changed = stripped.rstrip(), True
    return name


def base_name(raw: str) -> str:
    """The bare function name: no return type, namespaces, template arguments or parameter list.

    ``void at::native::vectorized_elementwise_kernel<4, F>(int, F)`` -> ``vectorized_elementwise_kernel``;
    ``_Z7vecCopyPdS_S_ii`` -> ``vecCopy``; ``__amd_rocclr_fillBufferAligned.kd`` ->
    ``__amd_rocclr_fillBufferAligned``.
    """
    name = display_name(raw)
    if name.startswith("_Z"):
        demangled = _itanium_function_name(name)
        if demangled:
            return demangled
    name = _strip_trailing_group(name, "(", ")")
    name = _strip_balanced(name, "<", ">")
    name = name.strip()
    # Drop a leading return type ("void foo" -> "foo"): the function name is the last word.
    top = _split_top_level(name, " ")
    name = top[-1] if top else name
    parts = [p for p in _split_top_level(name, "::") if p]
    return parts[-1] if parts else name


def is_runtime_kernel(raw: str) -> bool:
    """True for ROCm runtime utility kernels (``__amd_rocclr_copyBuffer``, ``...fillBufferAligned``, ...).

    They appear in every HIP trace (pitfall 5); the reader keeps them but a ranking should skip them.
    """
    return base_name(raw).startswith(_RUNTIME_PREFIXES)


def matches(pattern: re.Pattern[str] | None, raw: str) -> bool:
    """Whether ``pattern`` (``--kernel REGEX``) finds the kernel by display or base name (None: all)."""
    if pattern is None:
        return True
    return bool(pattern.search(display_name(raw)) or pattern.search(base_name(raw)))


def _strip_trailing_group(name: str, open_ch: str, close_ch: str) -> str:
    """Remove a balanced ``(...)`` group that ends the string (the parameter list), if any."""
    name = name.rstrip()
    if not name.endswith(close_ch):
        return name
    depth = 0
    for index in range(len(name) - 1, -1, -1):
        ch = name[index]
        if ch == close_ch:
            depth += 1
        elif ch == open_ch:
            depth -= 1
            if depth == 0:
                head = name[:index].rstrip()
                # "(anonymous namespace)" or an operator() is not a parameter list ending the name.
                return head if head else name
    return name


def _strip_balanced(name: str, open_ch: str, close_ch: str) -> str:
    """Remove every balanced ``<...>`` group (template arguments), keeping ``operator<`` intact enough."""
    out: list[str] = []
    depth = 0
    for ch in name:
        if ch == open_ch:
            depth += 1
            continue
        if ch == close_ch and depth:
            depth -= 1
            continue
        if depth == 0:
            out.append(ch)
    return "".join(out)


def _split_top_level(name: str, sep: str) -> list[str]:
    """Split on ``sep`` outside parentheses (so '(anonymous namespace)' stays whole)."""
    parts: list[str] = []
    depth = 0
    start = 0
    index = 0
    while index < len(name):
        ch = name[index]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0 and name.startswith(sep, index):
            parts.append(name[start:index])
            index += len(sep)
            start = index
            continue
        index += 1
    parts.append(name[start:])
    return [p.strip() for p in parts]


def _itanium_function_name(mangled: str) -> str | None:
    """The function's own name from a simple Itanium mangling (``_Z<len><name>`` or ``_ZN...<len><name>E``).

    Covers plain and namespaced functions; returns None for anything fancier (the caller falls back to
    the raw string).
    """
    pos = 2
    nested = mangled.startswith("_ZN")
    if nested:
        pos = 3
        while pos < len(mangled) and mangled[pos] in "rVKL":
            pos += 1
    last: str | None = None
    while pos < len(mangled):
        match = _SOURCE_NAME.match(mangled, pos)
        if not match:
            break
        length = int(match.group(1))
        start = match.end()
        ident = mangled[start : start + length]
        if len(ident) != length:
            return None
        last = ident
        pos = start + length
        if not nested:
            break
        if pos < len(mangled) and mangled[pos] == "I":  # template args: stop at the name before them
            break
        if pos < len(mangled) and mangled[pos] == "E":
            break
    return last
