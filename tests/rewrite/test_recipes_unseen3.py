"""The third held-out set (benchmarks/unseen3, read, never edited): the two recipes widened after its CPU
triage reach the entries they were refused on — 01 (PyTorch-CPU-style row cumsum through row pointers):
cooperative-scan; 18 (LightGBM-style feature histograms: a run-time bin count, a pointer into the
histogram, an early return): privatize-atomics; 15 (ggml Q4_0 dequantisation, two stores per byte half a
block apart): cooperative-row — and every candidate computes what slow.cu computes at
the spec's ragged check shape on the CPU block emulator, launched as the candidate says.
The widenings were written and tested on our own kernels first (test_cooperative_scan.py,
test_privatize_runtime.py, test_coop_row_offsets.py)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from perfagent.rewrite import get_rewriter
from perfagent.rewrite.base import RewriteRequest, launch_context
from perfagent.workloads.launch_spec import load_launch_spec
from tests.rewrite.helpers import ROOT
from tests.rewrite.spec_emulation import candidate_entry, emulate_entry

UNSEEN3 = ROOT / "benchmarks" / "unseen3"
CASES = {
    "01_cumsum_rows_thread_per_row": ("cooperative-row", "cooperative-scan"),
    "15_dequantize_q4_0_block_per_thread": ("cooperative-row", "cooperative-row"),
    "18_gbdt_feature_histograms_global_atomics": ("privatize-atomics", "privatize-atomics"),
}


@pytest.mark.parametrize("entry", sorted(CASES))
def test_the_widened_recipe_reaches_the_entry_and_is_correct(entry: str, tmp_path: Path) -> None:
    folder = UNSEEN3 / entry
    spec_path = next(folder.glob("*.launch.toml"))
    data = tomllib.loads(spec_path.read_text())
    transform, recipe = CASES[entry]
    request = RewriteRequest(
        source=(folder / "slow.cu").read_text(),
        language="cuda",
        transform=transform,
        launch=launch_context(
            {k: data[k] for k in ("grid", "block", "args", "params", "check_params") if k in data}
        ),
        kernel=data["kernel"],
    )
    cands = [c for c in get_rewriter("recipes").propose(request) if c.recipe == recipe]
    assert cands, f"{recipe} proposes nothing for {entry}"
    check = load_launch_spec(spec_path).check_params[0]
    for n, cand in enumerate(cands[:2]):
        launch = cand.launch.model_dump() if cand.launch is not None else {}
        work = tmp_path / str(n)
        work.mkdir()
        entry_copy = candidate_entry(folder, cand.source, launch, work)
        (work / "run").mkdir()
        agreed, output = emulate_entry(work / "run", entry_copy, check)
        assert agreed, f"{entry}, candidate {n} ({cand.description[:80]}):\n{output}"
