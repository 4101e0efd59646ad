"""The reference's profile as prompt lines: what the PyTorch ``Model`` of a KernelBench problem launches
(each kernel, its time and share, its top finding), so a first kernel is written against what it must beat."""

from __future__ import annotations

from collections.abc import Sequence

from profilers.model import KernelDiagnosis

__all__ = ["reference_profile_lines"]

MAX_KERNELS = 8


def reference_profile_lines(kernels: Sequence[KernelDiagnosis], where: str) -> list[str]:
    """One line per kernel (longest first, at most ``MAX_KERNELS``), then where the profile comes from."""
    if not kernels:
        return []
    ranked = sorted(kernels, key=lambda k: -(k.duration_s or 0.0))
    lines = []
    for k in ranked[:MAX_KERNELS]:
        time = f"{k.duration_s * 1e6:.4g} us" if k.duration_s is not None else "time not measured"
        share = (
            f", {100.0 * k.share_of_total:.0f} % of the kernel time" if k.share_of_total is not None else ""
        )
        launch = k.profile.launch
        geometry = f", grid {launch.grid} block {launch.block}" if launch.grid and launch.block else ""
        top = next((f for f in k.findings if f.severity != "info"), k.findings[0] if k.findings else None)
        finding = f"; top finding: {top.category}: {top.title}" if top is not None else ""
        lines.append(f"{k.profile.base_name}: {time}{share}{geometry}{finding}")
    if len(ranked) > MAX_KERNELS:
        lines.append(f"... and {len(ranked) - MAX_KERNELS} shorter kernel(s)")
    lines.append(f"(from {where})")
    return lines
