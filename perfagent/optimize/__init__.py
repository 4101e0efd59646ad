"""The optimize loop: diagnose → plan → propose → build → verify → time → re-profile → accept or reject.

``perfagent.optimize(target, ...)`` (``perfagent.optimize.api``) returns a ``RunRecord`` of kind
'optimize'. Modules: ``plan`` ranks (finding, transform) pairs, ``loop`` runs the iterations and
reports ``events``, ``outcome`` holds the accept rule, ``workload`` / ``measure`` resolve and run the
three workload kinds, ``rundir`` writes the run folder, ``record`` holds the saved models.

This package's ``__init__`` imports nothing eagerly: ``perfagent.models`` imports ``record`` from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from perfagent.optimize.api import optimize

__all__ = ["optimize"]


def __getattr__(name: str) -> Any:
    if name == "optimize":
        from perfagent.optimize.api import optimize

        return optimize
    raise AttributeError(f"module 'perfagent.optimize' has no attribute {name!r}")
