"""The harness-integrity snapshot tells torch's own lazy wrappers from a candidate's patches.

Found on the H200: importing torch._dynamo (Triton / load_inline paths) replaces torch.manual_seed
with a functools.wraps wrapper, which failed honest candidates with `runtime:harness-intact`.
"""

from __future__ import annotations

import functools

import pytest

torch = pytest.importorskip("torch")

from perfagent.sandbox.integrity import HarnessSnapshot  # noqa: E402


def test_torch_internal_wrapper_is_not_a_patch() -> None:
    snap = HarnessSnapshot.take()
    import torch._dynamo  # noqa: F401  (wraps torch.manual_seed on import)

    assert not [name for name in snap.changed() if name.endswith("manual_seed")]


def test_candidate_wrapper_is_still_a_patch() -> None:
    snap = HarnessSnapshot.take()
    original = torch.allclose

    @functools.wraps(original)
    def always_close(*args: object, **kwargs: object) -> bool:
        return True

    torch.allclose = always_close
    try:
        assert "torch.allclose" in snap.changed()
    finally:
        torch.allclose = original
