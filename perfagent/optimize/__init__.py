"""The optimize loop: diagnose → plan → propose → build → verify → time → re-profile → accept or reject.

``perfagent.optimize(target, ...)`` (``perfagent.optimize.api``) returns a ``RunRecord`` of kind
'optimize'. Modules: ``settings`` holds every option once, ``plan`` ranks (finding, transform) pairs,
``loop`` runs the iterations and reports ``events`` (given its parts: a ``context``, a rewriter, an
evaluate step — ``evaluate``, or ``phase_steps`` across two machines — and the run writer), ``outcome``
holds the accept rule, ``baseline`` measures the original, ``measure`` runs the three workload kinds
(``perfagent.workloads.optimizable``), reached through the ``services`` handed to the loop, ``run_writer``
writes the run folder. The saved
models are in ``perfagent.records``.

This package's ``__init__`` imports nothing: importing one of its modules stays light.

The package is also the library function: ``perfagent.optimize`` names both this package (the import
system binds a subpackage on its parent) and ``perfagent.optimize.api.optimize``, which ``import
perfagent`` no longer imports eagerly (CLI start-up). So the package's module is callable and calls the
function, while every import form (``from perfagent.optimize import measure``, ``import
perfagent.optimize.api as api``) keeps working.
"""

from __future__ import annotations

import sys
import types
from typing import Any


class _CallablePackage(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # `import perfagent.optimize` stays light: the loop's stack loads on the first call
        from perfagent.optimize.api import optimize

        return optimize(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
