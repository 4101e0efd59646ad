"""sequential-reduction: the interleaved tree forms on real parse trees, refusals, nvcc builds, and an
emulation of the original and rewritten trees over one block."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest
from perfagent.rewrite.recipes import sequential_reduction as rec
from tests.rewrite.helpers import assert_compiled, nvcc_compile

MODULO = """
#define B 256
extern "C" __global__ void r(const float* in, float* out, int n)
{
    __shared__ float sdata[B];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = i < n ? in[i] : 0.f;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}
"""

FORMS = {
    "modulo": MODULO,
    "bitand": MODULO.replace("if (tid % (2 * s) == 0)", "if ((tid & (2 * s - 1)) == 0)"),
    "strided-index-dynamic-smem": """
extern "C" __global__ void r(const int* d, int* total, int n)
{
    extern __shared__ int buf[];
    int t = threadIdx.x;
    int g = blockIdx.x * blockDim.x + t;
    buf[t] = g < n ? d[g] : 0;
    __syncthreads();
    for (int s = 1; s < blockDim.x; s <<= 1) {
        int index = 2 * s * t;
        if (index < blockDim.x) buf[index] += buf[index + s];
        __syncthreads();
    }
    if (t == 0) atomicAdd(total, buf[0]);
}
""",
    "max-combine": MODULO.replace(
        "sdata[tid] += sdata[tid + s];", "sdata[tid] = fmaxf(sdata[tid], sdata[tid + s]);"
    ),
    "plus-spelled-out": MODULO.replace(
        "sdata[tid] += sdata[tid + s];", "sdata[tid] = sdata[tid] + sdata[tid + s];"
    ),
    "threadIdx-directly": MODULO.replace(
        "if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];",
        "if (threadIdx.x % (2 * s) == 0) sdata[threadIdx.x] += sdata[threadIdx.x + s];",
    ),
    "stride-doubled-by-assignment": MODULO.replace("s *= 2", "s = s * 2"),
}

REFUSED = {
    "stride halves already": (
        MODULO.replace(
            "unsigned int s = 1; s < blockDim.x; s *= 2", "unsigned int s = blockDim.x / 2; s > 0; s >>= 1"
        ),
        "does not start at 1",
    ),
    "two statements in the guard": (
        MODULO.replace("sdata[tid] += sdata[tid + s];", "{ sdata[tid] += sdata[tid + s]; out[0] = 1; }"),
        "not one associative combine",
    ),
    "no barrier": (MODULO.replace("        __syncthreads();\n    }", "    }"), "__syncthreads"),
    "no shared memory": ('extern "C" __global__ void k(float* a) { a[threadIdx.x] = 1; }', "no __shared__"),
    "other test": (MODULO.replace("tid % (2 * s) == 0", "tid % 3 == 0"), "not one of the interleaved forms"),
}

LAUNCH = LaunchContext(grid=["ceil_div(n, 256)"], block=[256], params={"n": 1000})


def _req(source: str, launch: LaunchContext = LAUNCH) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform="sequential-addressing", launch=launch)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_forms_are_rewritten(name: str) -> None:
    req = _req(FORMS[name])
    assert rec.applies(req) is None, rec.applies(req)
    seq, shfl = rec.propose(req)
    assert "s_ >>= 1" in seq.source and "% (2 * s)" not in seq.source and "2 * s *" not in seq.source
    assert "__shfl_down_sync" in shfl.source and "s_ > 32" in shfl.source


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refusals(name: str) -> None:
    source, reason = REFUSED[name]
    why = rec.applies(_req(source))
    assert why is not None and reason in why, why


@pytest.mark.parametrize("block", [48, 32, 100])
def test_block_must_be_a_power_of_two_of_at_least_64(block: int) -> None:
    why = rec.applies(_req(MODULO, LaunchContext(grid=[1], block=[block])))
    assert why is not None and "power of two" in why


def _interleaved(values: list[int], combine: str) -> int:
    a = list(values)
    s = 1
    while s < len(a):
        for tid in range(len(a)):
            if tid % (2 * s) == 0:
                a[tid] = a[tid] + a[tid + s] if combine == "+" else max(a[tid], a[tid + s])
        s *= 2
    return a[0]


def _sequential(values: list[int], combine: str, warp_tail: bool) -> int:
    a = list(values)
    s = len(a) // 2
    while s > (32 if warp_tail else 0):
        for tid in range(s):
            a[tid] = a[tid] + a[tid + s] if combine == "+" else max(a[tid], a[tid + s])
        s //= 2
    if warp_tail:
        lanes = [a[t] + a[t + 32] if combine == "+" else max(a[t], a[t + 32]) for t in range(32)]
        off = 16
        while off:
            lanes = [
                (lanes[t] + lanes[t + off] if combine == "+" else max(lanes[t], lanes[t + off]))
                if t + off < 32
                else lanes[t]
                for t in range(32)
            ]
            off //= 2
        return lanes[0]
    return a[0]


@pytest.mark.parametrize("block", [64, 128, 256, 1024])
@pytest.mark.parametrize("combine", ["+", "max"])
def test_rewritten_trees_compute_the_same_result(block: int, combine: str) -> None:
    import random

    rng = random.Random(block)
    values = [rng.randint(-1000, 1000) for _ in range(block)]
    assert len(set(values)) > block // 4
    expected = sum(values) if combine == "+" else max(values)
    assert _interleaved(values, combine) == expected
    assert _sequential(values, combine, warp_tail=False) == expected
    assert _sequential(values, combine, warp_tail=True) == expected


@pytest.mark.parametrize("name", sorted(FORMS))
def test_candidates_compile(name: str, tmp_path: Path) -> None:
    cands = rec.propose(_req(FORMS[name]))
    assert_compiled(nvcc_compile({f"c{i}": c.source for i, c in enumerate(cands)}, tmp_path))
