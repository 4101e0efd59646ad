"""Kernel names: demangle with the CUDA toolkit's ``cu++filt`` (or binutils ``c++filt``) and reduce a
demangled signature to its base name.

ptxas reports Itanium-mangled names ('_Z2k2IfEvPT_i'); people and launch sites use 'k2'.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence

from profilers.errors import ProfilerError
from profilers.process import run_command

# cu++filt ships with the CUDA toolkit (not with every nvcc install); c++filt demangles the same ABI.
DEMANGLERS = ("cu++filt", "c++filt")
_LENGTH_PREFIXED = re.compile(r"(\d+)")


DEMANGLE_TIMEOUT_S = 30.0
"""Limit of one cu++filt / c++filt run over a batch of names."""


def demangle(names: Sequence[str], *, timeout_s: float = DEMANGLE_TIMEOUT_S) -> dict[str, str]:
    """Demangled form of each name; a name no demangler can read maps to itself.

    Args:
        names: mangled (or already plain, e.g. ``extern "C"``) symbol names.
        timeout_s: limit for the demangler run, s.

    Returns:
        ``{mangled: demangled}`` for every name in ``names``.
    """
    result = {name: name for name in names}
    mangled = [name for name in names if name.startswith("_Z")]
    tool = next((t for t in DEMANGLERS if shutil.which(t)), None)
    if not mangled or tool is None:
        return result
    try:
        done = run_command([tool], stdin_text="\n".join(mangled) + "\n", timeout_s=timeout_s)
    except ProfilerError:
        return result
    lines = done.stdout.splitlines()
    if done.ok and len(lines) == len(mangled):
        result.update({name: line.strip() or name for name, line in zip(mangled, lines, strict=True)})
    return result


def base_name(name: str) -> str:
    """Function name without return type, scope, template arguments or parameters.

    Args:
        name: a demangled signature ('void ns::k2<float>(float*, int)'), a plain name, or a mangled
            name no demangler could read ('_ZN2ns2k2IfEEvPT_i').

    Returns:
        'k2' for the examples above.
    """
    if name.startswith("_Z"):
        return _mangled_base_name(name) or name
    text = _strip_trailing_group(name.strip(), "(", ")")
    text = _strip_trailing_group(text, "<", ">")
    text = text.rsplit("::", 1)[-1]
    return text.split()[-1] if text.split() else name


def _strip_trailing_group(text: str, opening: str, closing: str) -> str:
    """'f<int>(a, (b))' -> 'f<int>' for parentheses: drop the balanced group that ends the text."""
    if not text.endswith(closing):
        return text
    depth = 0
    for index in range(len(text) - 1, -1, -1):
        if text[index] == closing:
            depth += 1
        elif text[index] == opening:
            depth -= 1
            if depth == 0:
                return text[:index].rstrip()
    return text


def _mangled_base_name(name: str) -> str | None:
    """Last source-name of a mangled name: '_Z2k1Pfi' -> 'k1', '_ZN2ns1fILi3EEEvPi' -> 'f'."""
    position = 3 if name.startswith("_ZN") else 2
    last: str | None = None
    while match := _LENGTH_PREFIXED.match(name, position):
        length = int(match[1])
        start = match.end()
        last = name[start : start + length]
        position = start + length
        if not name.startswith("_ZN"):
            break
    return last
