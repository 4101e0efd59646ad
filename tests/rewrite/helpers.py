"""Shared helpers for the recipe tests: requests on real files, clean re-parse, nvcc, Triton interpreter."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from perfagent.rewrite.base import Candidate, RewriteRequest
from perfagent.rewrite.recipes import _cuda
from profilers.process import CompletedCommand, run_command

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = ROOT / "examples"


def request(path: Path, transform: str, language: str = "cuda", **fields: Any) -> RewriteRequest:
    """A request for ``transform`` on the file at ``path``."""
    return RewriteRequest(
        source=path.read_text(encoding="utf-8"),
        path=str(path.relative_to(ROOT)),
        language=language,  # type: ignore[arg-type]
        transform=transform,
        **fields,
    )


def assert_clean_cuda(source: str) -> None:
    tree = _cuda.parse(source)
    assert not tree.root_node.has_error, (
        f"ERROR node at line {(_cuda.first_error(tree) or tree.root_node).start_point[0] + 1}"
    )


def nvcc_or_skip() -> str:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    return nvcc


def nvcc_compile(
    sources: dict[str, str], tmp: Path, defines: dict[str, dict[str, int]] | None = None
) -> dict[str, CompletedCommand]:
    """Compile each source with ``nvcc -arch=sm_90 -cubin -Xptxas -v`` in parallel; results by name.

    ``-cubin``: nvcc's front end parses and type-checks the whole file (a wrong call or an undeclared name in
    a host function fails the build) and ptxas reports each kernel's resources, as with ``-c``; the host
    compiler's pass over the front end's host translation, 60 % of each build (1.9 s against 0.76 s CPU,
    issue 26), is what is left out (the recipes rewrite device code and launches, which the front end checks)."""
    nvcc = nvcc_or_skip()

    def one(name: str) -> tuple[str, CompletedCommand]:
        src = tmp / f"{name}.cu"
        src.write_text(sources[name], encoding="utf-8")
        flags = [f"-D{k}={v}" for k, v in (defines or {}).get(name, {}).items()]
        argv = [
            nvcc,
            "-arch=sm_90",
            "-cubin",
            "-Xptxas",
            "-v",
            *flags,
            str(src),
            "-o",
            str(tmp / f"{name}.cubin"),
        ]
        return name, run_command(argv, timeout_s=180)

    with ThreadPoolExecutor(max_workers=min(8, len(sources) or 1)) as pool:
        return dict(pool.map(one, sorted(sources)))


def assert_compiled(results: dict[str, CompletedCommand]) -> None:
    failed = {name: r.tail() for name, r in results.items() if not r.ok}
    assert not failed, failed


def smem_bytes(result: CompletedCommand, kernel: str) -> int:
    """Static shared memory ptxas reports for ``kernel`` (its ``-v`` lines)."""
    lines = result.stderr.splitlines()
    for i, line in enumerate(lines):
        if "Compiling entry function" in line and kernel in line:
            for follow in lines[i + 1 : i + 6]:
                if "bytes smem" in follow:
                    return int(follow.split("bytes smem")[0].split(",")[-1].strip())
    raise AssertionError(f"no smem line for {kernel} in:\n{result.stderr}")


def write_candidates(candidates: list[Candidate], tmp: Path, stem: str) -> list[Path]:
    paths = []
    for i, cand in enumerate(candidates):
        path = tmp / f"{stem}_{i}.py"
        path.write_text(cand.source, encoding="utf-8")
        paths.append(path)
    return paths


def run_interpreted(paths: list[Path], check: str, timeout_s: float = 240) -> list[dict[str, Any]]:
    """Import each Python file in a child process with TRITON_INTERPRET=1 and run ``check``.

    ``check`` is the body of ``def check(mod) -> dict`` (JSON-able result); the child prints one JSON
    line per file.
    """
    script = textwrap.dedent(
        """
        import importlib.util, json, sys, traceback
        import torch
        torch.manual_seed(0)
        def check(mod):
        {body}
        for i, path in enumerate(sys.argv[1:]):
            try:
                spec = importlib.util.spec_from_file_location(f"cand_{{i}}", path)
                mod = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(mod)
                result = check(mod)
            except Exception:
                result = {{"error": traceback.format_exc(limit=3)}}
            print(json.dumps({{"path": path, **result}}), flush=True)
        """
    ).format(body=textwrap.indent(textwrap.dedent(check), "    "))
    env = {**os.environ, "TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run(
        [sys.executable, "-c", script, *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env=env,
        cwd=str(ROOT),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
