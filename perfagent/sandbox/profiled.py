"""The confinement of a profiler run of candidate code (ncu, rocprof on the candidate's harness).

A candidate profiled under ncu runs its code as surely as a verification worker does, so the whole
``ncu ... harness`` command goes under the policy a GPU worker gets (``confinement.plan``: bubblewrap
alone, a fresh process): no network, a read-only file system but the report folder, a private
``$HOME``/``$TMPDIR`` and the build caches; credential folders hidden; secrets scrubbed from the
environment. The profiler goes inside with its target: ncu talks to the program it profiles over
loopback, which a network namespace around the target alone would cut. No Landlock here: it is the
worker's narrowing of itself (``watch.restrict``), and a GPU worker already goes without it.

The user's own program is not confined (``docs/verify.md``, "What runs confined"): it is theirs, and
it may read and write where it likes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

from perfagent.sandbox.confinement import cache_dirs, require, worker_env
from profilers.base import Launch
from profilers.confine import Confinement, bwrap_argv, hidden_secrets

PROFILED_NOTE = "; the profiler and the candidate under it, a fresh process under bubblewrap alone"
"""Added to the sandbox line of a confined profiler run (the policy of a GPU worker)."""


@contextmanager
def profiler_launch(report_dir: Path) -> Iterator[Launch]:
    """The ``Launch`` of a profiler run of candidate code writing its reports under ``report_dir``.

    Writable inside: ``report_dir`` (created), a private home and temporary folder (removed on exit),
    the build caches. Where bubblewrap cannot confine and ``--unconfined`` was given, the prefix is empty
    and the note says so (the environment is scrubbed all the same).

    Raises:
        BadInput: bubblewrap cannot confine here and ``--unconfined`` was not given.
    """
    sandbox = require()
    report_dir = report_dir.absolute()
    report_dir.mkdir(parents=True, exist_ok=True)
    base = dict(os.environ)
    own = Path(tempfile.mkdtemp(prefix="perfagent-profiled-"))
    try:
        env = worker_env(base, own)  # no secrets; $HOME and $TMPDIR in ``own``
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ beside the (read-only) candidate
        if not sandbox.confined:
            yield Launch(env=env, note=sandbox.describe())
            return
        home = os.path.abspath(base.get("HOME") or str(Path.home()))
        policy = Confinement(
            writable=(str(report_dir), str(own), *sorted(set(cache_dirs(base).values()))),
            hidden=hidden_secrets(home),
        )
        yield Launch(prefix=bwrap_argv(policy), env=env, note=sandbox.describe() + PROFILED_NOTE)
    finally:
        shutil.rmtree(own, ignore_errors=True)


@dataclass(frozen=True)
class CandidateConfinement:
    """The ``profilers.base.Launcher`` of candidate code: ``profiler_launch`` on the run's report folder."""

    def launch(self, workdir: Path) -> AbstractContextManager[Launch]:
        return profiler_launch(workdir)


CANDIDATE_CODE = CandidateConfinement()
"""Pass as ``launcher`` to ``perfagent.profile``/``diagnose`` when the profiled program is candidate code."""
