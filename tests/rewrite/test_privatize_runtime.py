"""privatize-atomics widened (issue 23, after the unseen3 triage): accumulators whose size is a run-time
product of scalar arguments (a static copy sized for the launch spec's largest shape, used when the
run-time size fits, the original global atomics otherwise), pointers declared into the accumulator
(``float *slot = hist + (f * nbins + b) * 2; atomicAdd(slot, g); atomicAdd(slot + 1, h);``) and a
top-level early exit ``if (i >= n) return;`` (turned into a guarded block, so every thread reaches the
merge barrier). Kernels written here; refused forms say why.

Every candidate runs against its original on the block-synchronous CPU emulator — at a size that fits
the copy and at one that does not (the fallback) — and compiles with nvcc -arch=sm_90.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import Candidate, RewriteRequest, launch_context
from perfagent.rewrite.recipes import privatize_atomics
from tests.rewrite.cuda_blocks import Buf, Case, assert_same
from tests.rewrite.helpers import assert_compiled, nvcc_compile

KEYS = """
extern "C" __global__ void key_counts(const int *keys, int n, int nbins, unsigned int *counts)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(&counts[keys[i] % nbins], 1u);
}
"""

PAIRS = """
__global__ void feature_pairs(const unsigned char *codes, const float *g, const float *h, float *sums,
                              int rows, int feats, int levels)
{
    const int row = threadIdx.x + blockIdx.x * blockDim.x;
    if (row >= rows) { return; }
    for (int f = 0; f < feats; ++f) {
        float *cell = &sums[(f * levels + codes[row * feats + f] % levels) * 2];
        atomicAdd(cell, g[row]);
        atomicAdd(cell + 1, h[row]);
    }
}
"""

FORMS = {
    "runtime-bins-early-return": (
        KEYS,
        "key_counts",
        [["n"], None, None, ["nbins"]],
        {"n": 1000, "nbins": 300},
    ),
    "pointer-into-pairs-3-d-shape": (
        PAIRS,
        "feature_pairs",
        [["rows", "feats"], ["rows"], ["rows"], ["feats", "levels", 2], None, None, None],
        {"rows": 1000, "feats": 6, "levels": 40},
    ),
}
KERNEL_ARGS = {
    "key_counts": ["keys", "n", "nbins", "counts"],
    "feature_pairs": ["codes", "g", "h", "sums", "rows", "feats", "levels"],
}


def _request(name: str) -> RewriteRequest:
    source, kernel, shapes, params = FORMS[name]
    names = KERNEL_ARGS[kernel]
    args = [
        {"name": a, "shape": s} if s else {"name": a, "value": a} for a, s in zip(names, shapes, strict=True)
    ]
    launch = launch_context({"grid": ["ceil_div(n, 128)"], "block": [128], "params": params, "args": args})
    return RewriteRequest(source=source, language="cuda", transform="privatize-atomics", launch=launch)


def _candidate(name: str) -> Candidate:
    [cand] = privatize_atomics.propose(_request(name))  # a run-time size: one copy per block
    return cand


@pytest.mark.parametrize("name", sorted(FORMS))
def test_the_copy_is_sized_for_the_spec_and_guarded_at_run_time(name: str) -> None:
    cand = _candidate(name)
    capacity = {"runtime-bins-early-return": 320, "pointer-into-pairs-3-d-shape": 480}[name]
    assert f"perfagent_private[{capacity}];" in cand.source
    assert f"<= {capacity};" in cand.source and "perfagent_fits ? perfagent_private :" in cand.source
    assert (
        "return;" not in cand.source and "return; }" not in cand.source
    )  # the early exit became a guarded block
    assert cand.parameters["copies"] == "block"


def _cases(name: str) -> list[Case]:
    out = []
    if name == "runtime-bins-early-return":
        for n, nbins in ((37, 300), (1003, 7), (500, 997)):  # fits, fits, larger than the copy (fallback)
            args = (Buf("int", n), str(n), str(nbins), Buf("unsigned int", nbins))
            grid = -(-n // 128)
            out.append(Case(args, ((grid,), (128,)), ((grid,), (128,)), f"n={n} nbins={nbins}"))
        return out
    for rows, feats, levels in ((37, 6, 40), (300, 3, 5), (64, 7, 50)):  # the last: 700 > 480, the fallback
        args = (
            Buf("unsigned char", rows * feats),
            Buf("float", rows),
            Buf("float", rows),
            Buf("float", feats * levels * 2),
            str(rows),
            str(feats),
            str(levels),
        )
        grid = -(-rows // 128)
        out.append(Case(args, ((grid,), (128,)), ((grid,), (128,)), f"{rows}x{feats}x{levels}"))
    return out


@pytest.mark.parametrize("name", sorted(FORMS))
def test_the_candidate_matches_the_original_block_by_block(name: str, tmp_path: Path) -> None:
    source, kernel, _, _ = FORMS[name]
    tol = {"rtol": 1e-5, "atol": 1e-4} if "pairs" in name else {"rtol": 0.0, "atol": 0.0}
    assert_same(tmp_path, source, _candidate(name).source, kernel, _cases(name), **tol)


def test_the_emulation_catches_a_lost_merge(tmp_path: Path) -> None:
    """A copy that is never merged leaves the counts at zero where the size fits."""
    name = "runtime-bins-early-return"
    source = _candidate(name).source
    broken = source.replace("atomicAdd(&counts[perfagent_b], perfagent_count);", ";")
    assert broken != source
    from tests.rewrite.cuda_blocks import run

    ok, _ = run(tmp_path, FORMS[name][0], broken, FORMS[name][1], _cases(name)[:1], rtol=0.0, atol=0.0)
    assert not ok


REFUSED = {
    "pointer-read-back": (
        PAIRS.replace("atomicAdd(cell + 1, h[row]);", "atomicAdd(cell + 1, h[row] + cell[0]);"),
        "cell, a pointer into sums, is used other than as the target of atomicAdd",
    ),
    "size-reassigned": (
        KEYS.replace("if (i >= n) return;", "if (i >= n) return;\n    nbins = nbins + 1;"),
        "which the kernel assigns",
    ),
    "pointer-return-inside-the-loop": (
        PAIRS.replace(
            "atomicAdd(cell, g[row]);", "if (g[row] > 0.9f) return;\n        atomicAdd(cell, g[row]);"
        ),
        "a return inside the work",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_forms_say_why(name: str) -> None:
    source, why = REFUSED[name]
    base = "pointer-into-pairs-3-d-shape" if "pointer" in name else "runtime-bins-early-return"
    req = _request(base).model_copy(update={"source": source})
    found = privatize_atomics.applies(req)
    assert found is not None and why in found, found


def test_a_shape_dimension_that_is_no_argument_is_refused() -> None:
    req = _request("runtime-bins-early-return")
    assert req.launch is not None
    args = list(req.launch.args)
    args[3] = args[3].model_copy(update={"shape": ["nbins + 1"]})
    req = req.model_copy(update={"launch": req.launch.model_copy(update={"args": args})})
    found = privatize_atomics.applies(req)
    assert found is not None and "nbins + 1 is neither a constant nor a scalar argument" in found, found


def test_candidates_compile_for_sm_90(tmp_path: Path) -> None:
    assert_compiled(nvcc_compile({name: _candidate(name).source for name in FORMS}, tmp_path))
