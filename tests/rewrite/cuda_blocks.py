"""Run CUDA kernels (blocks of up to three dimensions) with ``__shared__`` memory and ``__syncthreads()`` on the CPU, block by block.

``cuda_cpu.py`` runs threads one after another and ``cuda_lanes.py`` one warp at a time; neither can run
a kernel whose threads meet at block barriers. Here every thread of a block is a fiber
(``ucontext``): the scheduler resumes each fiber until it reaches ``__syncthreads()`` or returns, and
starts the next round only when all of them have, so a barrier holds for the whole block exactly as on
a GPU. Rounds alternate the fiber order (forward, then backward), so a rewrite that reads a shared
tile before a barrier that should have protected it sees another thread's stale or future data.
A round that ends with some fibers at a barrier and others returned is a divergent barrier (undefined
on a GPU) and fails the run. ``__shared__`` arrays are function statics: blocks run one after another,
so one copy per kernel is one copy per block, and it is not cleared between blocks.

Kernels are compiled as host C++ (g++) on top of ``data/cuda_cpu_emu.h`` (built-ins, ``__half``,
``__nv_bfloat16``), with ``__half`` arithmetic operators that round every result to half as the
device does. Buffers have guard words on both sides (a store out of range fails the run), are filled
with the same pseudo-random values for both kernels (floats in [-1, 1], integers in [0, 997)), and are compared after both launches: floating
values within ``atol + rtol * |original|``, guard words bit for bit. Bool buffers (masks) are half true.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from profilers.process import CompletedCommand, run_command
from tests.rewrite import emu_pch

STUB_HEADERS = ("cuda_fp16.h", "cuda_bf16.h", "cuda_runtime.h", "cuda.h")

INCLUDES = r"""
#include "cuda_cpu_emu.h"
#include <ucontext.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <functional>
#include <memory>
#include <vector>
"""
"""The program's includes: what ``emu_pch`` precompiles."""
FLAGS = ("-std=c++17", "-O1", "-ffp-contract=off", "-w")
"""g++ flags of every program here (a precompiled header is used only with the flags it was built with)."""

PRELUDE = (
    INCLUDES
    + r"""#define __restrict__ __restrict
#define __shared__ static
using std::fma; using std::fmaf; using std::fmaxf; using std::fminf;
#ifndef __expf
#define __expf(x) expf(x)
#define __logf(x) logf(x)
#define __fdividef(a, b) ((a) / (b))
#define __powf(a, b) powf(a, b)
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
#define __tanf(x) tanf(x)
#define __exp10f(x) exp10f(x)
#define __log2f(x) log2f(x)
#define __log10f(x) log10f(x)
#endif
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
template <class T> static inline T __ldg(const T *p) { return *p; }  // the read-only cache path: a load
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
// fibers switch only at __syncthreads(), so a plain read-modify-write is atomic here
template <class T, class U> static inline T atomicAdd(T *p, U v) { T old = *p; *p = (T)(*p + v); return old; }
template <class T, class U> static inline T atomicSub(T *p, U v) { T old = *p; *p = (T)(*p - v); return old; }
template <class T, class U> static inline T atomicMax(T *p, U v) { T old = *p; if ((T)v > *p) *p = (T)v; return old; }
template <class T, class U> static inline T atomicMin(T *p, U v) { T old = *p; if ((T)v < *p) *p = (T)v; return old; }
template <class T, class U> static inline T atomicAnd(T *p, U v) { T old = *p; *p = (T)(*p & v); return old; }
template <class T, class U> static inline T atomicOr(T *p, U v) { T old = *p; *p = (T)(*p | v); return old; }
template <class T, class U> static inline T atomicXor(T *p, U v) { T old = *p; *p = (T)(*p ^ v); return old; }
static inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
static inline int __float_as_int(float f) { int u; std::memcpy(&u, &f, 4); return u; }
static inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
static inline float __int_as_float(int u) { float f; std::memcpy(&f, &u, 4); return f; }
static inline long long __double_as_longlong(double d) { long long u; std::memcpy(&u, &d, 8); return u; }
static inline double __longlong_as_double(long long u) { double d; std::memcpy(&d, &u, 8); return d; }
template <class T, class C, class V> static inline T atomicCAS(T *p, C compare, V value) { T old = *p; if (old == (T)compare) *p = (T)value; return old; }
template <class A, class B> static inline std::common_type_t<A, B> min(A a, B b) { return b < a ? b : a; }
template <class A, class B> static inline std::common_type_t<A, B> max(A a, B b) { return a < b ? b : a; }

static inline __half operator*(__half a, __half b) { return __half((float)a * (float)b); }
static inline __half operator+(__half a, __half b) { return __half((float)a + (float)b); }
static inline __half &operator+=(__half &a, __half b) { a = __half((float)a + (float)b); return a; }
static inline __nv_bfloat16 operator*(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat16((float)a * (float)b); }
static inline __nv_bfloat16 operator+(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat16((float)a + (float)b); }
static inline __nv_bfloat16 &operator+=(__nv_bfloat16 &a, __nv_bfloat16 b) { a = __nv_bfloat16((float)a + (float)b); return a; }

struct Fiber {
    ucontext_t ctx;
    std::vector<char> stack;
    perfagent_dim3 tid;
    bool done = false;
    bool at_barrier = false;
    int barriers = 0;  // barriers passed: names the block-wide round of __syncthreads_or
    int shuffles = 0;  // warp shuffles made: the lanes of one shuffle must agree on it
};
static ucontext_t g_main;
static std::vector<Fiber> g_fibers;
static int g_current = 0;
static std::function<void()> g_body;
static int g_divergent = 0;

static std::map<int, int> g_or;  // barrier number -> OR of the predicates of __syncthreads_or there
static unsigned long long g_lane_value[2][1024];
static int g_lane_shuffle[2][1024];
static int g_shuffle_errors = 0;

static void __syncthreads() {
    Fiber &f = g_fibers[g_current];
    ++f.barriers;
    f.at_barrier = true;
    swapcontext(&f.ctx, &g_main);
}
static int __syncthreads_or(int predicate) {
    const int round = g_fibers[g_current].barriers;
    g_or[round] |= predicate != 0;
    __syncthreads();
    return g_or[round];
}
// a warp shuffle: every lane leaves its value, yields once (each live fiber runs once per round, so the
// whole warp has left its value before anyone reads), then reads its partner's; two slots alternate so a
// fast lane's next shuffle does not overwrite a value a slow lane has yet to read
template <class T> static T perfagent_shuffle(unsigned mask, T v, int src_lane) {
    const int t = g_current, lane = t % 32, slot = g_fibers[t].shuffles % 2, seq = g_fibers[t].shuffles++;
    std::memcpy(&g_lane_value[slot][t], &v, sizeof(T));
    g_lane_shuffle[slot][t] = seq;  // a lane that has left keeps an old number: reading it is an error
    if (!((mask >> lane) & 1u)) ++g_shuffle_errors;  // a lane outside its own mask
    swapcontext(&g_fibers[t].ctx, &g_main);
    if (src_lane < 0 || src_lane >= 32 || !((mask >> src_lane) & 1u)) return v;
    const int src = t - lane + src_lane;
    if (src >= (int)g_fibers.size() || g_lane_shuffle[slot][src] != seq) {
        ++g_shuffle_errors;  // the partner lane is not at this shuffle: undefined on a GPU
        return v;
    }
    T out;
    std::memcpy(&out, &g_lane_value[slot][src], sizeof(T));
    return out;
}
template <class T> static T __shfl_down_sync(unsigned mask, T v, unsigned delta) {
    return perfagent_shuffle(mask, v, (int)(g_current % 32) + (int)delta);
}
template <class T> static T __shfl_up_sync(unsigned mask, T v, unsigned delta) {
    return perfagent_shuffle(mask, v, (int)(g_current % 32) - (int)delta);  // below lane 0: its own value
}
template <class T> static T __shfl_xor_sync(unsigned mask, T v, int bits) {
    return perfagent_shuffle(mask, v, (g_current % 32) ^ bits);
}
template <class T> static T __shfl_sync(unsigned mask, T v, int src_lane) {
    return perfagent_shuffle(mask, v, src_lane & 31);  // a broadcast from one lane of the warp
}
static void fiber_entry() {
    g_body();
    g_fibers[g_current].done = true;
    swapcontext(&g_fibers[g_current].ctx, &g_main);
}

template <class F> static void launch(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, F body) {
    gridDim = {gx, gy, gz};
    blockDim = {bx, by, bz};
    g_body = body;
    const int n = (int)(bx * by * bz);
    g_fibers.assign(n, Fiber{});
    for (auto &f : g_fibers) f.stack.resize(64 * 1024);
    for (unsigned b = 0; b < gx * gy * gz; ++b) {
        blockIdx = {b % gx, (b / gx) % gy, b / (gx * gy)};
        for (int t = 0; t < n; ++t) {
            Fiber &f = g_fibers[t];
            f.done = false;
            f.at_barrier = false;
            f.barriers = f.shuffles = 0;
            f.tid = {(unsigned)t % bx, ((unsigned)t / bx) % by, (unsigned)t / (bx * by)};
            getcontext(&f.ctx);
            f.ctx.uc_stack.ss_sp = f.stack.data();
            f.ctx.uc_stack.ss_size = f.stack.size();
            f.ctx.uc_link = nullptr;
            makecontext(&f.ctx, fiber_entry, 0);
        }
        g_or.clear();
        for (auto &slot : g_lane_shuffle) std::fill(slot, slot + 1024, -1);
        for (int round = 0;; ++round) {
            // a barrier opens when every live thread is at it (threads at a shuffle run on meanwhile);
            // one that threads which returned never reach is divergent
            int live = 0, at_barrier = 0, done = 0;
            for (auto &f : g_fibers) {
                if (f.done) ++done; else { ++live; at_barrier += f.at_barrier; }
            }
            if (live == 0) break;
            const bool open = at_barrier == live;
            if (open && done) ++g_divergent;
            for (int i = 0; i < n; ++i) {
                int t = (round % 2 == 0) ? i : n - 1 - i;
                Fiber &f = g_fibers[t];
                if (f.done || (f.at_barrier && !open)) continue;
                f.at_barrier = false;
                g_current = t;
                threadIdx = f.tid;
                swapcontext(&g_main, &f.ctx);
            }
        }
    }
}

template <class F> static void launch(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, F body) {
    launch(gx, gy, gz, bx, by, 1u, body);
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
    Buffer(size_t n_, unsigned seed) : mem(n_ + 2 * GUARD), n(n_) {
        for (size_t i = 0; i < mem.size(); ++i) {
            unsigned h = (unsigned)(i * 2654435761u) ^ (seed * 40503u);
            h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
            // integers spread over [0, 997) (a float in [-1, 1] would truncate to 0 almost always);
            // bools half true, half false (a mask)
            if constexpr (std::is_same_v<T, bool>) mem[i] = (h % 2u) == 0u;
            else if constexpr (std::is_integral_v<T>) mem[i] = T(h % 997u);
            else mem[i] = T((float)((double)(h % 2001u) / 1000.0 - 1.0));
        }
    }
    T *data() { return mem.data() + GUARD; }
};

static int g_failures = 0;
template <class T> static void compare(const char *what, Buffer<T> &a, Buffer<T> &b, double rtol, double atol) {
    int shown = 0;
    for (size_t i = 0; i < a.mem.size(); ++i) {
        bool guard = i < (size_t)GUARD || i >= a.n + GUARD;
        double x = (double)(float)a.mem[i], y = (double)(float)b.mem[i];
        if (std::is_same_v<T, double>) { x = (double)a.mem[i]; y = (double)b.mem[i]; }
        bool same = guard ? std::memcmp(&a.mem[i], &b.mem[i], sizeof(T)) == 0
                          : (x == y || (std::isnan(x) && std::isnan(y)) || std::fabs(x - y) <= atol + rtol * std::fabs(x));  // x == y: equal infinities
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
    """A buffer argument: element type and element count."""

    ctype: str
    size: int


@dataclass(frozen=True)
class Case:
    """One comparison: kernel arguments (``Buf`` or C++ scalar text) and both launches ((gx, gy[, gz]), (bx, by[, bz]))."""

    args: tuple[Buf | str, ...]
    original: tuple[tuple[int, ...], tuple[int, ...]]
    rewritten: tuple[tuple[int, ...], tuple[int, ...]]
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
                for side in ("o", "r"):
                    lines.append(f"        Buffer<{arg.ctype}> {side}{a}({arg.size}, {c * 31 + a}u);")
                    call[side].append(f"{side}{a}.data()")
            else:
                call["o"].append(arg)
                call["r"].append(arg)
        for side, (grid, block) in (("o", case.original), ("r", case.rewritten)):
            ns = "original_" if side == "o" else "rewritten_"
            gx, gy, gz = (*grid, 1, 1)[:3]
            bx, by, bz = (*block, 1, 1)[:3]
            lines.append(
                f"        launch({gx}u, {gy}u, {gz}u, {bx}u, {by}u, {bz}u, [&] {{ {ns}::{kernel}({', '.join(call[side])}); }});"
            )
        for a, arg in enumerate(case.args):
            if isinstance(arg, Buf):
                lines.append(f'        compare("{label}, argument {a}", o{a}, r{a}, {rtol!r}, {atol!r});')
        lines.append("    }")
    lines += [
        '    if (g_divergent) std::printf("%d rounds ended with threads at a barrier and threads returned\\n", g_divergent);',
        '    if (g_shuffle_errors) std::printf("%d shuffles read a lane that was not at the same shuffle\\n", g_shuffle_errors);',
        '    std::printf(g_failures || g_divergent || g_shuffle_errors ? "FAILED\\n" : "OK\\n");',
        "    return g_failures || g_divergent || g_shuffle_errors;",
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
    atol: float = 1e-5,
) -> tuple[bool, str]:
    """Build and run the comparison; (every case agreed, the program's output)."""
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ is not installed (the CPU emulation compiles the kernels as host C++)")
    built = build(gxx, tmp, program(original, rewritten, kernel, cases, rtol, atol), "emulate")
    assert built.ok, built.tail()
    ran = run_command([str(tmp / "emulate")], cwd=tmp, timeout_s=300)
    return ran.ok and ran.stdout.strip().endswith("OK"), ran.stdout[-3000:] + ran.stderr[-1000:]


def build(gxx: str, tmp: Path, source: str, output: str, flags: tuple[str, ...] = FLAGS) -> CompletedCommand:
    """Build ``source`` (a program starting with ``PRELUDE``) in ``tmp`` as ``output``, its includes
    precompiled (``emu_pch``: the emulation header is read from there, so one copy is ever included)."""
    for stub in STUB_HEADERS:
        (tmp / stub).write_text("#pragma once\n")
    headers = emu_pch.precompiled(gxx, INCLUDES, flags)
    (tmp / "main.cpp").write_text(emu_pch.first_line() + source)
    return run_command(
        [gxx, *flags, "-I", str(headers), "-I", str(tmp), "main.cpp", "-o", output], cwd=tmp, timeout_s=300
    )


def assert_same(
    tmp: Path, original: str, rewritten: str, kernel: str, cases: list[Case], **tol: float
) -> None:
    """The rewrite computes what the original computes, in every case (within the tolerance)."""
    ok, out = run(tmp, original, rewritten, kernel, cases, **tol)
    assert ok, out
