"""The text ``block-aggregate-atomics`` writes: per-thread accumulators, and the block reduction at the end.

Each group of atomic statements with one (address, function, element type) gets an accumulator that
starts at the combine's identity; each statement becomes a local combine plus a "this thread had one"
flag. At the end of the kernel every thread of the block reduces: shuffles down within its warp (a
partial last warp uses a mask of the lanes that exist and takes no value from past its end), lane 0 of
each warp leaves its value in shared memory, ``__syncthreads_or`` of the flags doubles as the barrier,
and warp 0 reduces the warp values and issues ONE atomic — only when some thread of the block had one
(the original made none otherwise, and a block-dependent address may not even be valid then).
"""

from __future__ import annotations

from dataclasses import dataclass

from perfagent.rewrite.recipes._atomic_sites import Site
from perfagent.rewrite.recipes._threads import BLOCK_THREADS, FLAT_THREAD

_IDENTITY: dict[tuple[str, str], str] = {
    ("max", "int"): "(-2147483647 - 1)",
    ("max", "unsigned int"): "0u",
    ("max", "long long"): "(-9223372036854775807LL - 1)",
    ("max", "unsigned long long"): "0ull",
    ("min", "int"): "2147483647",
    ("min", "unsigned int"): "0xffffffffu",
    ("min", "long long"): "9223372036854775807LL",
    ("min", "unsigned long long"): "0xffffffffffffffffull",
    ("fmax", "float"): "__int_as_float(0xff800000)",  # -inf
    ("fmax", "double"): "__longlong_as_double(0xfff0000000000000ll)",
    ("fmin", "float"): "__int_as_float(0x7f800000)",  # +inf
    ("fmin", "double"): "__longlong_as_double(0x7ff0000000000000ll)",
}
_COMBINE = {
    "add": "{a} + {b}",
    "max": "({b} > {a} ? {b} : {a})",
    "min": "({b} < {a} ? {b} : {a})",
    "and": "{a} & {b}",
    "or": "{a} | {b}",
    "xor": "{a} ^ {b}",
    "fadd": "{a} + {b}",
    "fmax": "fmax{f}({a}, {b})",
    "fmin": "fmin{f}({a}, {b})",
}


@dataclass(frozen=True)
class Accumulator:
    """One per (address, atomic function, element type): the sites it replaces."""

    index: int
    function: str
    element: str
    address: str
    sites: tuple[Site, ...]

    @property
    def kind(self) -> str:
        return self.sites[0].kind

    @property
    def name(self) -> str:
        return f"perfagent_acc{self.index}"

    @property
    def flag(self) -> str:
        return f"perfagent_hit{self.index}"

    @property
    def identity(self) -> str:
        if self.kind == "and":
            return f"static_cast<{self.element}>(~0ull)"
        return _IDENTITY.get((self.kind, self.element), f"static_cast<{self.element}>(0)")

    def combine(self, a: str, b: str) -> str:
        return _COMBINE[self.kind].format(a=a, b=b, f="f" if self.element == "float" else "")


def accumulators(sites: list[Site]) -> list[Accumulator]:
    """The sites grouped by address (whitespace-insensitive), function and element type, in source order."""
    groups: dict[tuple[str, str, str], list[Site]] = {}
    for site in sites:
        key = ("".join(site.address.split()), site.function, site.element)
        groups.setdefault(key, []).append(site)
    return [
        Accumulator(k, first.function, first.element, first.address, tuple(group))
        for k, group in enumerate(groups.values())
        for first in [group[0]]
    ]


def declarations(accs: list[Accumulator]) -> str:
    lines = [f"    {a.element} {a.name} = {a.identity};\n    bool {a.flag} = false;\n" for a in accs]
    return "".join(lines)


def local_update(acc: Accumulator, value: str) -> str:
    """The statement that replaces one atomic: combine into the accumulator, note that this thread had one."""
    v = f"static_cast<{acc.element}>({value})"
    if acc.kind in ("max", "min"):
        return (
            f"{{ const {acc.element} perfagent_v = {v}; {acc.name} = {acc.combine(acc.name, 'perfagent_v')}; "
            f"{acc.flag} = true; }}"
        )
    return f"{{ {acc.name} = {acc.combine(acc.name, v)}; {acc.flag} = true; }}"


def _warp_reduce(acc: Accumulator, indent: str) -> str:
    return (
        f"{indent}for (unsigned perfagent_off = 16; perfagent_off > 0; perfagent_off >>= 1) {{\n"
        f"{indent}    const {acc.element} perfagent_other = "
        f"__shfl_down_sync(perfagent_mask, {acc.name}, perfagent_off);\n"
        f"{indent}    if (perfagent_lane + perfagent_off < perfagent_lanes)\n"
        f"{indent}        {acc.name} = {acc.combine(acc.name, 'perfagent_other')};\n"
        f"{indent}}}\n"
    )


def _block_reduce(acc: Accumulator) -> str:
    return (
        f"        __shared__ {acc.element} perfagent_warp{acc.index}[32];\n"
        + _warp_reduce(acc, "        ")
        + f"        if (perfagent_lane == 0) perfagent_warp{acc.index}[perfagent_warp] = {acc.name};\n"
        f"        if (__syncthreads_or({acc.flag}) && perfagent_warp == 0) {{\n"
        f"            {acc.name} = perfagent_lane < perfagent_warps ? perfagent_warp{acc.index}[perfagent_lane] "
        f": {acc.identity};\n"
        + _warp_reduce(acc, "            ")
        + f"            if (perfagent_lane == 0) {acc.function}({acc.address}, {acc.name});\n"
        "        }\n"
    )


def reduction(accs: list[Accumulator]) -> str:
    """The end of the kernel: every thread of the block takes part (no return may skip it)."""
    head = (
        "    {  // block-aggregate-atomics: warp shuffles, then one value per warp, then one atomic per block\n"
        f"        const unsigned perfagent_tid = {FLAT_THREAD};\n"
        f"        const unsigned perfagent_threads = {BLOCK_THREADS};\n"
        "        const unsigned perfagent_lane = perfagent_tid % 32u, perfagent_warp = perfagent_tid / 32u;\n"
        "        const unsigned perfagent_warps = (perfagent_threads + 31u) / 32u;\n"
        "        // the last warp of a block that is not a whole number of warps has fewer lanes\n"
        "        const unsigned perfagent_left = perfagent_threads - perfagent_warp * 32u;\n"
        "        const unsigned perfagent_lanes = perfagent_left < 32u ? perfagent_left : 32u;\n"
        "        const unsigned perfagent_mask = perfagent_lanes == 32u ? 0xffffffffu : (1u << perfagent_lanes) - 1u;\n"
    )
    return head + "".join(_block_reduce(a) for a in accs) + "    }\n"
