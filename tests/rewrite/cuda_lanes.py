"""Run CUDA kernels on the CPU, lane by lane, and compare a rewrite with its original.

Both kernels are compiled as host C++ (g++ -std=c++20) behind a small CUDA prelude: ``threadIdx`` and
``blockIdx`` are thread-local, the lanes of a warp are real threads that run concurrently, and the
warps of a launch run one after another (the kernels compared here share nothing between warps).
Atomics are ``std::atomic_ref`` updates (the lanes really race). ``__shfl_xor_sync``, ``__shfl_up_sync``
and ``__shfl_sync`` exchange values through a barrier of the
warp's lanes; they count an error when the mask is not full, or when the partner lane has left the
kernel or is at another shuffle (undefined on a GPU), so a rewrite whose lanes disagree about their
control flow fails instead of passing by luck.

Every buffer is allocated with guard words on both sides (stores out of range fail the run), filled
with the same pseudo-random values for both kernels, and compared after the launches: floating-point
values within ``atol + rtol * |original|``, everything else bit for bit.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from profilers.process import run_command
from tests.rewrite import emu_pch

INCLUDES = r"""
#include <math.h>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>
"""
"""The program's includes: what ``emu_pch`` precompiles."""
FLAGS = ("-std=c++20", "-O1", "-ffp-contract=off", "-w", "-pthread")

PRELUDE = (
    INCLUDES
    + r"""

struct dim3 { unsigned x = 1, y = 1, z = 1; };
// CUDA's 16-byte vector types (a vectorised rewrite loads and stores through them)
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) double2 { double x, y; };
struct alignas(16) int4 { int x, y, z, w; };
struct alignas(16) uint4 { unsigned int x, y, z, w; };
struct alignas(16) longlong2 { long long x, y; };
struct alignas(16) ulonglong2 { unsigned long long x, y; };
static thread_local dim3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __expf(x) expf(x)
#define __logf(x) logf(x)
#define __fdividef(a, b) ((a) / (b))
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
template <class A, class B> static inline std::common_type_t<A, B> min(A a, B b) { return b < a ? b : a; }
template <class A, class B> static inline std::common_type_t<A, B> max(A a, B b) { return a < b ? b : a; }

struct Warp {
    explicit Warp(int n) : bar(n) {}
    std::barrier<> bar;
    unsigned long long slot[32] = {};
    std::atomic<int> phase[32] = {};
    std::atomic<bool> alive[32] = {};
};
static thread_local Warp *tl_warp = nullptr;
static thread_local int tl_lane = 0;
static std::atomic<int> g_shuffle_errors{0};

// One exchange through the warp's barrier: every lane publishes its value, then reads the partner's
// (partner < 0: this lane keeps its own value, as __shfl_up_sync does below lane `delta`).
template <class T> static T exchange_(unsigned mask, T value, int partner) {
    static_assert(sizeof(T) <= 8, "shuffled values are at most 8 bytes");
    Warp &w = *tl_warp;
    if (mask != 0xffffffffu) g_shuffle_errors++;
    std::memcpy(&w.slot[tl_lane], &value, sizeof(T));
    int mine = ++w.phase[tl_lane];
    w.bar.arrive_and_wait();
    T out = value;
    if (partner >= 0) {
        if (!w.alive[partner] || w.phase[partner] != mine) g_shuffle_errors++;
        else std::memcpy(&out, &w.slot[partner], sizeof(T));
    }
    w.bar.arrive_and_wait();
    return out;
}
template <class T> static T __shfl_xor_sync(unsigned mask, T value, int offset) {
    return exchange_(mask, value, tl_lane ^ (offset & 31));
}
template <class T> static T __shfl_up_sync(unsigned mask, T value, unsigned delta) {
    return exchange_(mask, value, tl_lane >= (int)delta ? tl_lane - (int)delta : -1);
}
template <class T> static T __shfl_sync(unsigned mask, T value, int src) { return exchange_(mask, value, src & 31); }

// lanes are real threads: atomics are std::atomic_ref read-modify-writes (max/min: compare-exchange loops)
template <class T, class U> static T atomicAdd(T *p, U v) { return std::atomic_ref<T>(*p).fetch_add((T)v); }
template <class T, class U> static T atomicSub(T *p, U v) { return std::atomic_ref<T>(*p).fetch_sub((T)v); }
template <class T, class U> static T atomicAnd(T *p, U v) { return std::atomic_ref<T>(*p).fetch_and((T)v); }
template <class T, class U> static T atomicOr(T *p, U v) { return std::atomic_ref<T>(*p).fetch_or((T)v); }
template <class T, class U> static T atomicXor(T *p, U v) { return std::atomic_ref<T>(*p).fetch_xor((T)v); }
template <class T, class U> static T atomicMax(T *p, U v) {
    std::atomic_ref<T> r(*p); T old = r.load();
    while ((T)v > old && !r.compare_exchange_weak(old, (T)v)) {}
    return old;
}
template <class T, class U> static T atomicMin(T *p, U v) {
    std::atomic_ref<T> r(*p); T old = r.load();
    while ((T)v < old && !r.compare_exchange_weak(old, (T)v)) {}
    return old;
}

template <class F> static void launch(unsigned grid, unsigned block, F body) {
    gridDim = {grid, 1, 1};
    blockDim = {block, 1, 1};
    for (unsigned b = 0; b < grid; ++b)
        for (unsigned first = 0; first < block; first += 32) {
            int lanes = block - first < 32 ? block - first : 32;
            Warp warp(lanes);
            for (int l = 0; l < lanes; ++l) warp.alive[l] = true;
            std::vector<std::thread> threads;
            for (int l = 0; l < lanes; ++l)
                threads.emplace_back([&, l] {
                    blockIdx = {b, 0, 0};
                    threadIdx = {first + l, 0, 0};
                    tl_warp = &warp;
                    tl_lane = l;
                    body();
                    warp.alive[l] = false;
                    warp.bar.arrive_and_drop();
                });
            for (auto &t : threads) t.join();
        }
}

static const int GUARD = 16;
template <class T> struct Cells {  // std::vector<bool> packs bits: no T* into it, so own the array
    std::unique_ptr<T[]> p;
    size_t count;
    explicit Cells(size_t n) : p(new T[n]()), count(n) {}
    size_t size() const { return count; }
    T &operator[](size_t i) { return p[i]; }
    T *data() { return p.get(); }
};
template <class T> struct Buffer {
    Cells<T> mem;
    size_t n;
    Buffer(size_t n_, unsigned seed, int fill) : mem(n_ + 2 * GUARD), n(n_) {
        for (size_t i = 0; i < mem.size(); ++i) {
            unsigned h = (unsigned)(i * 2654435761u) ^ (seed * 40503u);
            h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
            if (fill == 1) mem[i] = (T)((h % 2u) == 0u);
            else mem[i] = (T)((double)(h % 6001u) / 1000.0 - 3.0);
        }
    }
    T *data() { return mem.data() + GUARD; }
};

static int g_failures = 0;
template <class T> static void compare(const char *what, Buffer<T> &a, Buffer<T> &b, double rtol, double atol) {
    int shown = 0;
    for (size_t i = 0; i < a.mem.size(); ++i) {
        bool guard = i < (size_t)GUARD || i >= a.n + GUARD;
        double x = (double)a.mem[i], y = (double)b.mem[i];
        bool same;
        if (guard || !std::is_floating_point<T>::value) same = std::memcmp(&a.mem[i], &b.mem[i], sizeof(T)) == 0;
        else same = (std::isnan(x) && std::isnan(y)) || std::fabs(x - y) <= atol + rtol * std::fabs(x);
        if (!same) {
            if (shown++ < 5)
                std::printf("%s: element %lld%s differs: original %.9g rewritten %.9g\n", what,
                            (long long)i - GUARD, guard ? " (guard)" : "", x, y);
            ++g_failures;
        }
    }
}
"""
)


@dataclass(frozen=True)
class Buf:
    """A buffer argument: element type, element count, and fill ('random' in [-3, 3] or 'mask': 0/1)."""

    ctype: str
    size: int
    fill: str = "random"


@dataclass(frozen=True)
class Case:
    """One comparison: the kernel arguments (``Buf`` or C++ scalar text) and both launches (grid, block)."""

    args: tuple[Buf | str, ...]
    original: tuple[int, int]
    rewritten: tuple[int, int]
    name: str = ""


_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[^\n]*\n?", re.M)


def host_unit(cuda: str, namespace: str) -> str:
    """``cuda`` as host C++ in ``namespace``: includes dropped (the prelude has them), no C linkage."""
    body = _INCLUDE.sub("", cuda).replace('extern "C"', "")
    return f"namespace {namespace} {{\n{body}\n}}  // namespace {namespace}\n"


def program(original: str, rewritten: str, kernel: str, cases: list[Case], rtol: float, atol: float) -> str:
    """The C++ program comparing the two kernels over ``cases`` (prints OK when every case agrees)."""
    lines = [PRELUDE, host_unit(original, "original_"), host_unit(rewritten, "rewritten_"), "int main() {"]
    for c, case in enumerate(cases):
        label = case.name or f"case {c}"
        lines.append("    {")
        call: dict[str, list[str]] = {"o": [], "r": []}
        for a, arg in enumerate(case.args):
            if isinstance(arg, Buf):
                fill = 1 if arg.fill == "mask" else 0
                for side in ("o", "r"):
                    lines.append(f"        Buffer<{arg.ctype}> {side}{a}({arg.size}, {c * 31 + a}u, {fill});")
                    call[side].append(f"{side}{a}.data()")
            else:
                call["o"].append(arg)
                call["r"].append(arg)
        (og, ob), (rg, rb) = case.original, case.rewritten
        lines.append(f"        launch({og}, {ob}, [&] {{ original_::{kernel}({', '.join(call['o'])}); }});")
        lines.append(f"        launch({rg}, {rb}, [&] {{ rewritten_::{kernel}({', '.join(call['r'])}); }});")
        for a, arg in enumerate(case.args):
            if isinstance(arg, Buf):
                what = f'"{label}, argument {a}"'
                lines.append(f"        compare({what}, o{a}, r{a}, {rtol!r}, {atol!r});")
        lines.append("    }")
    lines += [
        '    if (g_shuffle_errors) std::printf("%d shuffles with a partial warp or a mask\\n", (int)g_shuffle_errors);',
        '    std::printf(g_failures || g_shuffle_errors ? "FAILED\\n" : "OK\\n");',
        "    return g_failures || g_shuffle_errors;",
        "}",
    ]
    return "\n".join(lines) + "\n"


def run(
    tmp: Path,
    original: str,
    rewritten: str,
    kernel: str,
    cases: list[Case],
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> tuple[bool, str]:
    """Build and run the comparison; (every case agreed, the program's output)."""
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ is not installed (the CPU emulation compiles the kernels as host C++)")
    headers = emu_pch.precompiled(gxx, INCLUDES, FLAGS)
    (tmp / "main.cpp").write_text(
        emu_pch.first_line() + program(original, rewritten, kernel, cases, rtol, atol)
    )
    built = run_command(
        [gxx, *FLAGS, "-I", str(headers), "main.cpp", "-o", "emulate"], cwd=tmp, timeout_s=300
    )
    assert built.ok, built.tail()
    ran = run_command([str(tmp / "emulate")], cwd=tmp, timeout_s=300)
    return ran.ok and ran.stdout.strip().endswith("OK"), ran.stdout[-3000:] + ran.stderr[-1000:]


def assert_same(
    tmp: Path, original: str, rewritten: str, kernel: str, cases: list[Case], **tol: float
) -> None:
    """The rewrite computes what the original computes, in every case (within the tolerance)."""
    ok, out = run(tmp, original, rewritten, kernel, cases, **tol)
    assert ok, out
