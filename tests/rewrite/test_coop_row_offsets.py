"""cooperative-row with one buffer stored at two offsets of the counter in a pass (``_coop_row_offsets``):
the rotate-half of a rotary embedding (``y[b + j]`` and ``y[b + j + half]`` for ``j < half``, a run-time
``half``) and a Q4-style nibble unpack (``y[i * QK + j]`` and ``y[i * QK + j + QK / 2]`` for ``j < QK / 2``,
macros). Written here after the unseen3 triage (entry 15 was refused: "lanes would share its elements");
the offsets must be proven at least the trip count, else the form stays refused with the reason.
Every candidate runs against its original on the block-synchronous CPU emulator and compiles with nvcc.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import Candidate, LaunchContext, RewriteRequest
from perfagent.rewrite.recipes import cooperative_row
from perfagent.workloads.expr import evaluate_int
from tests.rewrite.cuda_blocks import Buf, Case, assert_same
from tests.rewrite.helpers import assert_compiled, nvcc_compile

ROPE = """
__global__ void rope_rows(const float *x, const float *cs, const float *sn, float *y, int rows, int half) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    for (int j = 0; j < half; ++j) {
        const float a = x[r * 2 * half + j];
        const float b = x[r * 2 * half + j + half];
        y[r * 2 * half + j] = a * cs[j] - b * sn[j];
        y[r * 2 * half + j + half] = b * cs[j] + a * sn[j];
    }
}
"""

NIBBLES = """
#define QK 32
extern "C" __global__ void unpack_nibbles(const unsigned char *q, const float *scale, float *y, long blocks)
{
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < blocks) {
        for (int j = 0; j < QK / 2; ++j) {
            const int lo = (q[i * (QK / 2) + j] & 15) - 8;
            const int hi = (q[i * (QK / 2) + j] >> 4) - 8;
            y[i * QK + j] = lo * scale[i];
            y[i * QK + j + QK / 2] = hi * scale[i];
        }
    }
}
"""

FORMS = {"rope-rotate-half-runtime": (ROPE, "rope_rows"), "nibbles-macro-halves": (NIBBLES, "unpack_nibbles")}
LAUNCH = {
    "rope-rotate-half-runtime": LaunchContext(grid=["ceil_div(rows, 64)"], block=[64], params={"rows": 1000}),
    "nibbles-macro-halves": LaunchContext(grid=["ceil_div(blocks, 64)"], block=[64], params={"blocks": 1000}),
}


def _candidates(name: str, source: str | None = None) -> list[Candidate]:
    req = RewriteRequest(
        source=source or FORMS[name][0], language="cuda", transform="cooperative-row", launch=LAUNCH[name]
    )
    return cooperative_row.propose(req)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_both_offsets_are_split_among_the_lanes(name: str) -> None:
    cands = _candidates(name)
    assert cands and all(c.recipe == "cooperative-row" for c in cands)
    assert any("warp per row" in c.description for c in cands)


def _cases(name: str, cand: Candidate) -> list[Case]:
    out = []
    for items, half in ((37, 5), (70, 16), (3, 40)):
        if name == "nibbles-macro-halves":
            args: tuple[Buf | str, ...] = (
                Buf("unsigned char", items * 16),
                Buf("float", items),
                Buf("float", items * 32),
                f"{items}L",
            )
            names = {"blocks": items}
        else:
            n = items * 2 * half
            args = (
                Buf("float", n),
                Buf("float", half),
                Buf("float", half),
                Buf("float", n),
                str(items),
                str(half),
            )
            names = {"rows": items}
        launch = cand.launch
        grid = evaluate_int(str(launch.grid[0]) if launch and launch.grid else LAUNCH[name].grid[0], names)
        block = int(launch.block[0]) if launch and launch.block else 64
        out.append(Case(args, ((-(-items // 64),), (64,)), ((grid,), (block,)), f"{items}x{half}"))
    return out


@pytest.mark.parametrize("name", sorted(FORMS))
def test_every_candidate_matches_the_original_block_by_block(name: str, tmp_path: Path) -> None:
    source, kernel = FORMS[name]
    for k, cand in enumerate(_candidates(name)):
        (tmp_path / str(k)).mkdir()
        assert_same(tmp_path / str(k), source, cand.source, kernel, _cases(name, cand), rtol=1e-6, atol=1e-6)


REFUSED = {
    "overlapping-halves": (
        "rope-rotate-half-runtime",
        ROPE.replace("j < half; ++j", "j < half + 1; ++j"),
        "not proven at least the loop's trip count",
    ),
    "unrelated-shift": (
        "rope-rotate-half-runtime",
        ROPE.replace("int rows, int half)", "int rows, int half, int shift)").replace(
            "y[r * 2 * half + j + half] =", "y[r * 2 * half + j + shift] ="
        ),
        "not proven at least the loop's trip count",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_offsets_not_proven_apart_stay_refused(name: str) -> None:
    form, source, why = REFUSED[name]
    req = RewriteRequest(source=source, language="cuda", transform="cooperative-row", launch=LAUNCH[form])
    found = cooperative_row.applies(req)
    assert found is not None and why in found, found


def test_candidates_compile_for_sm_90(tmp_path: Path) -> None:
    sources = {f"{name}-{k}": c.source for name in FORMS for k, c in enumerate(_candidates(name))}
    assert_compiled(nvcc_compile(sources, tmp_path))
