"""The reference's weights, given to the candidate: re-randomised where constant, loaded strictly.

A LayerNorm whose weight is 1 and bias 0, or any zero-initialised bias, lets a candidate that ignores
them pass; loading only the parameters whose names match (``strict=False``) lets a candidate that
declares none run on weights of its own. So: constant-initialised parameters of ``Model`` are redrawn
first, and every parameter and buffer of ``Model`` must load into ``ModelNew`` by name, shape and dtype
(``strict-state-dict`` fails otherwise; a candidate may add tensors of its own).
"""

from __future__ import annotations

import torch


def load_reference_state(ref: torch.nn.Module, cand: torch.nn.Module, seed: int) -> tuple[str, str | None]:
    """Redraw ``ref``'s constant parameters, copy its state into ``cand``.

    Returns:
        (a note on what was copied, the ``strict-state-dict`` failure or None).
    """
    redrawn = randomise_constant_parameters(ref, seed)
    ref_state = ref.state_dict()
    cand_state = cand.state_dict()
    bad = {
        k
        for k, v in ref_state.items()
        if k not in cand_state or cand_state[k].shape != v.shape or cand_state[k].dtype != v.dtype
    }
    wrong = [
        f"{k} {tuple(ref_state[k].shape)} {ref_state[k].dtype} "
        + (
            f"(ModelNew has {tuple(cand_state[k].shape)} {cand_state[k].dtype})"
            if k in cand_state
            else "(missing in ModelNew)"
        )
        for k in sorted(bad)
    ]
    problem = None
    if wrong:
        problem = (
            f"Model's state does not load into ModelNew: {'; '.join(wrong[:4])}"
            f"{' ...' if len(wrong) > 4 else ''} (keep the reference's parameter names, shapes and dtypes)"
        )
    common = {k: v for k, v in ref_state.items() if k in cand_state and k not in bad}
    note = ""
    if common:
        with torch.no_grad():
            cand.load_state_dict(common, strict=False)
        note = f"{len(common)} parameter/buffer tensor(s) copied from Model to ModelNew by name"
        if redrawn:
            note += (
                f"; {len(redrawn)} constant-initialised one(s) ({', '.join(redrawn[:4])}) re-randomised first"
            )
    return note, problem


def randomise_constant_parameters(model: torch.nn.Module, seed: int) -> list[str]:
    """Redraw every floating parameter whose elements are all one value: ``c·(1 ± 25 %)`` elementwise
    (each keeps its sign, so that a scale stays a scale), or ``0.1·randn`` for zeros. Returns their names."""
    gen = torch.Generator(device="cpu").manual_seed(seed)
    names = []
    with torch.no_grad():
        for name, p in model.named_parameters():
            if not p.is_floating_point() or p.numel() == 0:
                continue
            first = p.detach().flatten()[0]
            if not bool((p == first).all()):
                continue
            if float(first) == 0.0:
                fresh = 0.1 * torch.randn(p.shape, generator=gen)
            else:
                fresh = float(first) * (1.0 + 0.25 * (2 * torch.rand(p.shape, generator=gen) - 1))
            p.copy_(fresh.to(device=p.device, dtype=p.dtype))
            names.append(name)
    return names
