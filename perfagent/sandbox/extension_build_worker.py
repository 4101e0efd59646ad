"""The build worker: import one Python file so that its ``load_inline``/``load`` extensions build into its
build folder (``python -m perfagent.sandbox.extension_build_worker FILE FOLDER``; started confined by
``extension_build.prebuild``, with FOLDER its only writable folder besides its own temporary one).

On success it writes the folder's ``file-built`` marker; on any failure the one-line cause and the build
log's tail to ``build-failed.txt`` (what every later worker loading the file reports), and exits 1 —
unless the failure is this machine's (no CUDA toolkit, no ninja: ``harness.environment_gap``): then
nothing is kept (exit ``ENVIRONMENT_EXIT``) and the worker that loads the file reports the gap.
"""

from __future__ import annotations

import sys
import traceback
from datetime import UTC, datetime
from pathlib import Path

from perfagent.sandbox.harness import environment_gap
from perfagent.workloads import extension_builds as eb
from perfagent.workloads.kernelbench import load_module

LOG_TAIL_CHARS = 3000
"""How much of a failed build's log the failure keeps (the compiler's first errors are near its end)."""


def _cause(exc: BaseException) -> str:
    """One line: the exception and, for a compiler failure, its first error line."""
    text = str(exc)
    first_error = next((ln.strip() for ln in text.splitlines() if "error" in ln.lower()), "")
    head = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    line = f"building the extension failed: {type(exc).__name__}: {head}"
    if first_error and first_error not in line:
        line += f" — {first_error}"
    return line[:500]


def main(argv: list[str]) -> int:
    file, folder = Path(argv[0]), Path(argv[1])
    if eb.file_folder(file) != folder:  # the parent and the worker must agree on the key
        raise SystemExit(f"build folder mismatch: {eb.file_folder(file)} != {folder}")

    try:
        load_module(file, "perfagent_build_step")
    except BaseException as exc:  # any failure of the file's import is the build's failure
        detail = f"{exc}\n{traceback.format_exc()}"[-LOG_TAIL_CHARS:]
        gap = environment_gap(detail)
        if gap is not None:  # this machine's, not the file's: nothing is kept, the worker says it again
            print(f"cannot build here: {gap}", file=sys.stderr)
            return eb.ENVIRONMENT_EXIT
        (folder / eb.FAILED).write_text(f"{_cause(exc)}\n{detail}", encoding="utf-8")
        print(_cause(exc), file=sys.stderr)
        return 1
    (folder / eb.FILE_BUILT).write_text(datetime.now(UTC).isoformat(timespec="seconds") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
