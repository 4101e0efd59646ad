"""The road a command takes to its first sandbox worker: the project's modules on the call stack.

Runs ``perfagent ARGS...`` in this process with ``subprocess.Popen`` watched. When the first process whose
command line names the sandbox starts (a verification or timing worker, or the fork server that starts
them), the call stack at that moment is printed: every project frame, then the modules in the order the
call passes them. A stack runs one way (each frame calls the next), so the road has no climbs back up by
construction; what it counts is how many modules a reader passes from the command to the worker.

    python3 scripts/road_to_worker.py optimize examples/kernelbench/01_vector_add_triton.py \
        --problem examples/kernelbench/01_vector_add.py --backend recipes --iterations 1 --out /tmp/road

Exit status: 0 when a worker started and its road was printed, 1 when none started.
"""

from __future__ import annotations

import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ("perfagent", "profilers", "knowledge")

_first_stack: list[traceback.FrameSummary] = []
_real_popen = subprocess.Popen


class _WatchedPopen(_real_popen):  # type: ignore[type-arg,misc]
    """``Popen`` that keeps the call stack of the first process naming the sandbox."""

    def __init__(self, args: Any, *rest: Any, **options: Any) -> None:
        words = args if isinstance(args, list | tuple) else [args]
        if not _first_stack and any("sandbox" in str(word) for word in words):
            _first_stack.extend(traceback.extract_stack()[:-1])
        super().__init__(args, *rest, **options)


def _project_path(filename: str) -> str | None:
    """``filename`` relative to the checkout when it is one of the project's modules, else None."""
    try:
        relative = Path(filename).resolve().relative_to(ROOT)
    except ValueError:
        return None
    return str(relative) if relative.parts[0] in PROJECT else None


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    subprocess.Popen = _WatchedPopen  # type: ignore[misc]
    from perfagent.cli import main as perfagent_main

    try:
        perfagent_main(argv)
    except SystemExit:
        pass
    finally:
        subprocess.Popen = _real_popen  # type: ignore[misc]
    if not _first_stack:
        print("road: no sandbox worker was started", file=sys.stderr)
        return 1
    road: list[str] = []
    print("\nthe call stack at the first worker's start (project frames):")
    for frame in _first_stack:
        path = _project_path(frame.filename)
        if path is None:
            continue
        print(f"  {path}:{frame.lineno} {frame.name}")
        if not road or road[-1] != path:
            road.append(path)
    print(f"\nmodules on the road: {len(road)} ({len(set(road))} distinct)")
    for path in road:
        print(f"  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
