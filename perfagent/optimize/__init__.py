"""The optimize loop: diagnose → plan → propose → build → verify → time → re-profile → accept or reject.

``perfagent.optimize(target, ...)`` (``perfagent.optimize.api``) returns a ``RunRecord`` of kind
'optimize'. Modules: ``settings`` holds every option once, ``plan`` ranks (finding, transform) pairs,
``loop`` runs the iterations and reports ``events``, ``outcome`` holds the accept rule, ``baseline``
measures the original, ``measure`` runs the three workload kinds (``perfagent.workloads.optimizable``),
``run_writer`` writes the run folder. The saved
models are in ``perfagent.records``.

This package's ``__init__`` imports nothing: importing one of its modules stays light.
"""
