"""The build caches a worker is handed survive the worker: its ``$HOME`` and ``$TMPDIR`` are private, so a
cache that defaults to either would start cold in every worker.

Issue 26: TorchInductor's cache defaults to ``$TMPDIR/torchinductor_$USER``; every torch.compile baseline
(each ``bench``/``optimize`` of a KernelBench problem) recompiled its generated C++ from scratch
(34 s CPU cold against 14 s warm on a 2-core CPU).
"""

from __future__ import annotations

from pathlib import Path

from perfagent.sandbox.confinement import cache_dirs, worker_env


def test_the_inductor_cache_is_the_users_not_the_workers_private_tmp(tmp_path: Path) -> None:
    own = tmp_path / "worker"
    own.mkdir()
    base = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin"}
    env = worker_env(base, own)
    assert env["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "home" / ".cache" / "torchinductor")
    assert Path(env["TORCHINDUCTOR_CACHE_DIR"]).is_dir()  # Landlock allows writes only under existing folders
    for cache in cache_dirs(base).values():  # none of them is inside the worker's own (private) folders
        assert not cache.startswith(str(own)), cache
    chosen = str(tmp_path / "mine")
    assert worker_env(base | {"TORCHINDUCTOR_CACHE_DIR": chosen}, own)["TORCHINDUCTOR_CACHE_DIR"] == chosen
