"""The measuring set (benchmarks/unseen2, read, never edited): entry 11 (Game of Life on a torus) gets
modulo-to-select's candidate for fast-math, entry 14 (TF's templated rank-3 shuffle) permute-tile's for
coalesce-access, and each candidate moves the same bytes as its original on the CPU block emulator.
The recipes were written and tested on our own kernels first (test_modulo_to_select.py,
test_permute_tile.py); this checks they reach the kernels they were meant for."""

from __future__ import annotations

import tomllib
from pathlib import Path

from perfagent.rewrite import get_rewriter
from perfagent.rewrite.base import RewriteRequest, launch_context
from tests.rewrite.cuda_blocks import Buf, Case, assert_same
from tests.rewrite.helpers import ROOT

UNSEEN2 = ROOT / "benchmarks" / "unseen2"


def _request(entry: str, transform: str) -> tuple[RewriteRequest, str]:
    folder = UNSEEN2 / entry
    spec = tomllib.loads(next(folder.glob("*.launch.toml")).read_text())
    source = (folder / spec["source"]).read_text()
    launch = launch_context({k: spec[k] for k in ("grid", "block", "args", "params") if k in spec})
    req = RewriteRequest(
        source=source, language="cuda", transform=transform, launch=launch, kernel=spec["kernel"]
    )
    return req, source


def test_life_on_a_torus_gets_modulo_to_select(tmp_path: Path) -> None:
    req, source = _request("11_life_torus_modulo", "fast-math")
    cands = get_rewriter("recipes").propose(req)
    [cand] = [c for c in cands if c.recipe == "modulo-to-select"]
    assert cand.source.count("perfagent_wrap<1>(") == 4 and "perfagent_rem0" in cand.source
    assert "% worldWidth" not in cand.source.split("simple_life_kernel", 1)[1].replace("% (worldWidth)", "")
    cases = [
        Case(
            (Buf("unsigned char", w * h), f"{w}u", f"{h}u", Buf("unsigned char", w * h)),
            ((g,), (256, 1)),
            ((g,), (256, 1)),
            f"{w}x{h}",
        )
        for w, h, g in ((1001, 7, 3), (5, 3, 1), (1, 1, 1), (64, 2, 2))
    ]
    assert_same(tmp_path, source, cand.source, "simple_life_kernel", cases, rtol=0.0, atol=0.0)


def test_the_templated_shuffle_gets_permute_tile(tmp_path: Path) -> None:
    req, source = _request("14_shuffle3_template_simple", "coalesce-access")
    cands = [c for c in get_rewriter("recipes").propose(req) if c.recipe == "permute-tile"]
    assert [c.launch.block if c.launch else None for c in cands] == [[32, 8], [32, 4]]
    cases = []
    for d0, d1, d2 in ((3, 101, 77), (2, 33, 40)):
        n = d0 * d1 * d2
        args = (str(n), Buf("double", n), str(d0), str(d1), str(d2), Buf("double", n))
        cases.append(
            Case(args, ((4,), (256, 1)), ((-(-d2 // 32), -(-d1 // 32), d0), (32, 8)), f"{d0}x{d1}x{d2}")
        )
    assert_same(
        tmp_path,
        source,
        cands[0].source,
        "shuffle_in_tensor3_simple<double, 0, 2, 1>",
        cases,
        rtol=0.0,
        atol=0.0,
    )
