"""Run scripts/tui_tmux_smoke.sh: the real `perfagent tui` driven with keys in a detached tmux session."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from tui_support import REPO, SGEMM_JSON


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install -y tmux)")
def test_tmux_smoke() -> None:
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "tui_tmux_smoke.sh"), str(SGEMM_JSON)],
        cwd=REPO,
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tui_tmux_smoke: OK" in done.stdout
