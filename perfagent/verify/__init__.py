"""Verification: is a candidate kernel correct against its reference (the oracle)?

``verify(reference, candidate, ...)`` → ``VerificationResult`` (``api``). The candidate runs in a
worker process of ``perfagent.sandbox``, whose job applies the protocol of ``kernelbench_protocol``
or ``cuda_protocol`` with the comparisons of ``checks``;
``static_checks`` reads the candidate's source for the cheats a numeric comparison cannot see;
``verdict`` turns checks into pass / fail / inconclusive. Importing this package does not import
torch: only the worker does.
"""

from __future__ import annotations

from perfagent.verify.api import verify
from perfagent.verify.models import Check, ErrorSummary, Tolerance, VerificationResult

__all__ = ["Check", "ErrorSummary", "Tolerance", "VerificationResult", "verify"]
