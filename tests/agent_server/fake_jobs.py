"""A long-running stand-in for optimize, run by the MCP job worker in the cancellation tests.

It starts a child process in the worker's process group (as a compiler or a verify worker would be), reports both process ids as progress, then waits on an event that nothing sets: only the
server's cancellation can end it. No sleeps: the test waits for the progress message.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from perfagent.records import RunRecord

STARTED = "fake optimize started "


def blocking_optimize(
    progress: Callable[[str], None], *, target: str, out: str, **_options: object
) -> RunRecord:
    """Never returns on its own: blocks until the process is signalled."""
    Path(out).mkdir(parents=True, exist_ok=True)
    # a grandchild of the server that only a signal ends: it must die with the job's process group
    child = subprocess.Popen([sys.executable, "-c", "import signal; signal.pause()"])
    progress(STARTED + json.dumps({"worker": os.getpid(), "child": child.pid}))
    threading.Event().wait()
    raise AssertionError(f"unreachable: {target}")
