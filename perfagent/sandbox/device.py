"""Where candidate code runs: the one place a requested ``Device`` (``profilers.settings.DEVICES``) becomes the device a
process actually runs on (``ResolvedDevice``) and its name.

It is answered by a child process, the one that owns the GPU: the worker for ``verify``/``bench``, and, for
``optimize``, a short child (``python -m perfagent.sandbox.device auto``) whose answer the loop hands every
worker as 'cuda' or 'cpu', so that 'auto' is resolved once per run and perfagent's own process never holds
a CUDA context (ncu would see it). Importing this module does not import torch; ``resolve_device`` does.
"""

from __future__ import annotations

import json
import os
import platform
import sys

from profilers.settings import DEVICES, Device, ResolvedDevice


class NoCudaDevice(Exception):
    """'cuda' was asked for and torch sees no CUDA device."""


def resolve_device(requested: Device) -> tuple[ResolvedDevice, str]:
    """(the device this process runs on, its name). On the CPU, Triton runs through its interpreter.

    Raises:
        NoCudaDevice: ``requested`` is 'cuda' and torch sees no CUDA device.
    """
    if requested == "cpu":
        return _cpu()
    # torch takes seconds to import: only the child that resolves the device loads it
    import torch

    if torch.cuda.is_available():
        return "cuda", torch.cuda.get_device_name(0)
    if requested == "cuda":
        raise NoCudaDevice(
            "--device cuda was asked for but torch sees no CUDA device (CPU-only torch build, or no GPU)"
        )
    return _cpu()


def _cpu() -> tuple[ResolvedDevice, str]:
    os.environ["TRITON_INTERPRET"] = "1"
    return "cpu", platform.processor() or platform.machine()


def main(argv: list[str]) -> int:
    """Print ``{"device": ..., "name": ...}`` (or ``{"error": ...}``) for the device named in ``argv``."""
    requested = argv[0] if argv else "auto"
    if requested not in DEVICES:
        print(json.dumps({"error": f"unknown device '{requested}'"}))
        return 2
    try:
        device, name = resolve_device(requested)  # type: ignore[arg-type]  # checked against DEVICES above
    except (NoCudaDevice, ImportError) as exc:
        print(json.dumps({"error": str(exc)}))
        return 1
    print(json.dumps({"device": device, "name": name}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
