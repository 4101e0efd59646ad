"""Run an element-wise CUDA kernel and its rewrite as host C++ and compare every buffer bit for bit.

The two kernels are compiled with g++ against ``data/cuda_cpu_emu.h`` (CUDA's built-ins, vector types,
``__half`` / ``__nv_bfloat16`` and a few intrinsics) and launched thread after thread — a valid schedule
for kernels without barriers. Every buffer is filled the same way on both sides, beyond ``n`` too, and
compared whole after the launch, so a write past the end shows. Each case runs over sizes around the
vector width, aligned and misaligned (one element off) base pointers, optionally two arguments aliased
(one buffer passed twice), and several grids for the rewrite.
"""

from __future__ import annotations

import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from profilers.process import run_command
from tests.rewrite import emu_pch

STUB_HEADERS = ("cuda_fp16.h", "cuda_bf16.h", "cuda_runtime.h", "cuda.h")
"""CUDA headers a kernel may include: empty, the emulation header defines what they would."""


@dataclass(frozen=True)
class Buf:
    """A buffer argument of element type ``ctype`` (as the kernel spells it)."""

    ctype: str


Arg = Buf | str
"""A buffer, or a C++ expression for a scalar argument (``n`` is the element count, a ``long``)."""

INCLUDES = r"""
#include "cuda_cpu_emu.h"
#include <cstdio>
#include <vector>
"""
"""The harness's includes: what ``emu_pch`` precompiles."""
FLAGS = ("-std=c++17", "-O1", "-ffp-contract=off", "-fno-strict-aliasing", "-w")

HARNESS = (
    INCLUDES
    + r"""#define @NAME@ original_kernel
#include "original.cu"
#undef @NAME@
#define @NAME@ rewritten_kernel
#include "rewritten.cu"
#undef @NAME@

template <class T>
static T *place(std::vector<unsigned char> &raw, long cap, int offset, int k) {
    raw.assign((cap + 2) * sizeof(T) + 32, 0);
    unsigned char *base = raw.data();
    while (reinterpret_cast<unsigned long long>(base) % 16) ++base;
    T *p = reinterpret_cast<T *>(base) + offset;
    for (long e = 0; e < cap; ++e) p[e] = perfagent_fill<T>(e, k);
    return p;
}

int main() {
    const long sizes[] = {@SIZES@};
    const unsigned block = 32;
    const long width = @WIDTH@;
    int failures = 0, cases = 0;
    for (long n : sizes)
        for (int offset = 0; offset < 2; ++offset)  // offset 1: misaligned, the scalar path
            for (int alias = 0; alias < @ALIASES@; ++alias) {
                const unsigned groups = (unsigned)((n + width * block - 1) / (width * block));
                const unsigned scalar = (unsigned)((n + block - 1) / block + 1);
                const unsigned grids[] = {1u, 3u, groups, scalar};
                for (unsigned g : grids) {
                    const long cap = n + 2 * width + 3;
                    std::vector<unsigned char> raw[2][@BUFS@];
@DECLARE@
                    if (alias) {
@ALIAS@
                    }
                    perfagent_launch(scalar, block, [&] { original_kernel(@ORIGINAL_CALL@); });
                    perfagent_launch(g, block, [&] { rewritten_kernel(@REWRITTEN_CALL@); });
                    ++cases;
                    for (int k = 0; k < @BUFS@; ++k)
                        if (raw[0][k] != raw[1][k]) {
                            std::printf("mismatch n=%ld offset=%d alias=%d grid=%u buffer=%d\n", n, offset, alias, g, k);
                            ++failures;
                        }
                }
            }
    std::printf("%d cases\n", cases);
    std::printf(failures ? "FAILED\n" : "OK\n");
    return failures != 0;
}
"""
)


def _call(args: list[Arg], side: int) -> str:
    out, k = [], 0
    for a in args:
        if isinstance(a, Buf):
            out.append(f"b{k}_{side}")
            k += 1
        else:
            out.append(a)
    return ", ".join(out)


def harness(name: str, args: list[Arg], width: int, alias: tuple[int, int] | None, sizes: list[int]) -> str:
    """The C++ main comparing ``original_kernel`` with ``rewritten_kernel``."""
    bufs = [a for a in args if isinstance(a, Buf)]
    declare = [
        f"{b.ctype} *b{k}_{v} = place<{b.ctype}>(raw[{v}][{k}], cap, offset, {k});"
        for k, b in enumerate(bufs)
        for v in (0, 1)
    ]
    aliased = []
    if alias is not None:
        src, dst = alias
        aliased = [f"b{dst}_{v} = reinterpret_cast<{bufs[dst].ctype} *>(b{src}_{v});" for v in (0, 1)]
    fill = {
        "@NAME@": name,
        "@SIZES@": ", ".join(map(str, sizes)),
        "@WIDTH@": str(width),
        "@BUFS@": str(len(bufs)),
        "@ALIASES@": "2" if alias else "1",
        "@DECLARE@": "\n".join(" " * 20 + line for line in declare),
        "@ALIAS@": "\n".join(" " * 24 + line for line in aliased),
        "@ORIGINAL_CALL@": _call(args, 0),
        "@REWRITTEN_CALL@": _call(args, 1),
    }
    text = HARNESS
    for key, value in fill.items():
        text = text.replace(key, value)
    return textwrap.dedent(text)


def default_sizes(width: int) -> list[int]:
    """Sizes around the width (empty, below, at, above, ragged) and one of several groups per thread."""
    return sorted({0, 1, 3, width - 1, width, width + 1, 2 * width + 3, 1027, 32 * width * 3 + width - 1})


def emulate(
    tmp: Path,
    original: str,
    rewritten: str,
    name: str,
    args: list[Arg],
    *,
    width: int,
    alias: tuple[int, int] | None = None,
    sizes: list[int] | None = None,
) -> str:
    """Build and run the comparison; fails the test on any differing byte. Returns the run's output."""
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ is not installed (the CPU emulation compiles the kernels as host C++)")
    for stub in STUB_HEADERS:
        (tmp / stub).write_text("#pragma once\n")
    (tmp / "original.cu").write_text(original)
    (tmp / "rewritten.cu").write_text(rewritten)
    # the emulation header is read from the precompiled folder (emu_pch): one copy is ever included
    headers = emu_pch.precompiled(gxx, INCLUDES, FLAGS)
    main = emu_pch.first_line() + harness(name, args, width, alias, sizes or default_sizes(width))
    (tmp / "main.cpp").write_text(main)
    argv = [gxx, *FLAGS, "-I", str(headers), "-I", str(tmp)]
    built = run_command([*argv, "main.cpp", "-o", "emulate"], cwd=tmp, timeout_s=180)
    assert built.ok, built.tail()
    ran = run_command([str(tmp / "emulate")], cwd=tmp, timeout_s=180)
    assert ran.ok and ran.stdout.strip().endswith("OK"), ran.stdout[-2000:]
    return ran.stdout
