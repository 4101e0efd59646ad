"""``ast.parse`` behind one process-wide lock.

CPython 3.11 keeps the AST constructor's recursion depth in interpreter-wide state; two threads that
parse at once can corrupt it and one of them fails with ``SystemError: AST constructor recursion depth
mismatch`` (python/cpython#106905, seen here in a CI run). perfagent parses Python sources in threads:
an optimize iteration builds and verifies its candidates at once (``--verify-jobs``), and library users
and the tests verify from thread pools. Every parse of perfagent's own goes through here.
"""

from __future__ import annotations

import ast
import threading

__all__ = ["parse_expression", "parse_module"]

_LOCK = threading.Lock()


def parse_module(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)`` (mode 'exec'), one thread at a time."""
    with _LOCK:
        return ast.parse(source, filename=filename)


def parse_expression(source: str) -> ast.Expression:
    """``ast.parse(source, mode='eval')``, one thread at a time."""
    with _LOCK:
        return ast.parse(source, mode="eval")
