"""Tensor-core FLOPs of a kernel from its SASS opcode counts, when a report has no tensor FLOP counter.

ncu's own count is preferred (``sm__ops_path_tensor_src_<type>...``, the numerators of its tensor roofline
chart; the metric map lists them per chip family). Reports recorded without those counters but with the
InstructionStats section (``--set full``) still hold ``sass__inst_executed_per_opcode_with_modifier_all``:
warp-level instructions executed per SASS opcode with its modifiers (``HMMA.16816.F32``,
``HGMMA.64x128x16.F32.BF16``, ...). This module prices those instructions; the ``.ncu-rep`` reader adds the
result to a launch's raw values as ``SASS_TENSOR_FLOP``, which the map tries after the counters.

FLOPs per counted instruction (an FMA counts 2, as in ncu's ``ops`` and the datasheet TFLOP/s):

- ``HMMA.<MNK>`` / ``DMMA.<MNK>`` (``mma.sync``, warp-wide, CC 7.5 and later): ``2·M·N·K`` per warp
  instruction. The shape is written run together: ``16816`` = m16n8k16, ``1688`` = m16n8k8, ``1684`` =
  m16n8k4, ``16832`` = m16n8k32; ``DMMA.884`` = m8n8k4.
- ``HGMMA.<M>x<N>x<K>`` / ``QGMMA...`` (``wgmma``, Hopper, one instruction per warpgroup of 4 warps):
  ``2·M·N·K / 4`` per counted instruction, because each of the 4 warps executes (and is counted for) the
  warpgroup's instruction.
- ``IMMA`` / ``IGMMA`` / ``BMMA`` / ``BGMMA``: integer and binary MMAs, 0 FLOP (not floating point; ncu's
  int paths are kept out of the tensor FLOPs likewise).

Checked on real reports: the A100 fixture ``a100_mmaptx_full_tensorcore_ncu2023.3.1_full.ncu-rep``
(17.28e9 ``HMMA.16816.F32`` × 4096 FLOP over 233 ms = 304 TFLOP/s, 98.9 % of the A100-PCIe peak at the
profiled 1.39 GHz, matching its 98.95 % tensor-pipe utilisation) and ``examples/reports/tensor_mma_h100.ncu-rep``
(H100, ncu 2025.3.1: a 2048³ matmul as ``HMMA.16816.F32``, ``HGMMA.64x128x16.F32``,
``HGMMA.64x128x16.F32.BF16`` and ``HGMMA.64x128x8.F32.TF32``; every one prices to 2·2048³ FLOP, equal to
ncu's ``sm__ops_path_tensor_src_*.sum`` of the same launch).

Not priced, so that no partial count passes for a whole one (the function returns None): Volta's
``HMMA.884`` (quad-pair steps, CC 7.0), sparse variants (``.SP``), and any MMA opcode or shape not above.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from profilers.model import Metrics

__all__ = [
    "SASS_OPCODE_METRIC",
    "SASS_TENSOR_FLOP",
    "TENSOR_PIPE_BUSY_PCT",
    "tensor_flop_from_opcodes",
    "uncounted_tensor_work",
]

SASS_OPCODE_METRIC = "sass__inst_executed_per_opcode_with_modifier_all"
"""Instanced ncu metric: warp instructions executed per SASS opcode with modifiers (InstructionStats)."""
SASS_TENSOR_FLOP = "derived__perfagent_tensor_flop_from_sass"
"""Raw value the ``.ncu-rep`` reader derives with ``tensor_flop_from_opcodes`` (not an ncu metric)."""

_WARP_MMA = re.compile(r"^(?P<op>HMMA|DMMA)\.(?P<shape>\d+)(?P<mods>(?:\.[A-Z0-9_]+)*)$")
_GROUP_MMA = re.compile(r"^(?P<op>HGMMA|QGMMA)\.(?P<m>\d+)x(?P<n>\d+)x(?P<k>\d+)(?P<mods>(?:\.[A-Z0-9_]+)*)$")
_INTEGER_MMA = re.compile(r"^(IMMA|IGMMA|BMMA|BGMMA)(\.|$)")
_ANY_MMA = re.compile(r"^[A-Z]*MMA(\.|$)")
_WARP_SHAPES: dict[str, dict[str, tuple[int, int, int]]] = {
    "HMMA": {"16816": (16, 8, 16), "1688": (16, 8, 8), "1684": (16, 8, 4), "16832": (16, 8, 32)},
    "DMMA": {"884": (8, 8, 4), "1684": (16, 8, 4), "1688": (16, 8, 8), "16816": (16, 8, 16)},
}
_WARPS_PER_WARPGROUP = 4
TENSOR_PIPE_BUSY_PCT = 1.0
"""Tensor-pipe utilisation (%) from which a kernel without a tensor FLOP count is said to have uncounted
tensor work. Below it the pipe's cycles are usually not MMAs: on the H200 examples, kernels with FP16 work but
no MMA (``HFMA2.MMA`` runs on that pipe) show 0.9 %, a Triton fp16 matmul 5.4 %."""


def uncounted_tensor_work(metrics: Metrics) -> float | None:
    """The tensor-pipe utilisation (%) of a kernel that used the tensor pipe but has no tensor FLOP count
    (a report without the counters, e.g. Hopper reports recorded before ``sm__ops_path_tensor_src_fp16`` was
    collected); None when its tensor FLOPs are counted or its tensor pipe was (about) idle."""
    if "tensor" in metrics.flops:
        return None
    busy = metrics.pipe_utilization_pct.get("tensor")
    return busy if busy is not None and busy >= TENSOR_PIPE_BUSY_PCT else None


def tensor_flop_from_opcodes(counts: Mapping[str, float]) -> float | None:
    """Tensor-core FLOPs of one launch from its per-opcode warp-instruction counts.

    Args:
        counts: ``{opcode with modifiers: warp instructions executed}``, e.g. ``{"HMMA.16816.F32": 4194304}``.

    Returns:
        The FLOPs (0.0 when no floating-point MMA ran); None when ``counts`` is empty or holds an MMA whose
        FLOPs per instruction are not known (see the module docstring).
    """
    if not counts:
        return None
    total = 0.0
    for opcode, count in counts.items():
        if not count or not _ANY_MMA.match(opcode):
            continue
        if _INTEGER_MMA.match(opcode):
            continue
        per_instruction = _flop_per_instruction(opcode)
        if per_instruction is None:
            return None
        total += per_instruction * float(count)
    return total


def _flop_per_instruction(opcode: str) -> float | None:
    warp = _WARP_MMA.match(opcode)
    if warp:
        if ".SP" in warp["mods"]:
            return None
        shape = _WARP_SHAPES[warp["op"]].get(warp["shape"])
        if shape is None:
            return None
        m, n, k = shape
        return 2.0 * m * n * k
    group = _GROUP_MMA.match(opcode)
    if group:
        if ".SP" in group["mods"]:
            return None
        m, n, k = int(group["m"]), int(group["n"]), int(group["k"])
        return 2.0 * m * n * k / _WARPS_PER_WARPGROUP
    return None
