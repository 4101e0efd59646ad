"""Parse the resource-usage report ptxas prints with ``-Xptxas -v`` (or nvcc ``--resource-usage``).

The format, as printed by CUDA 13.0 on stderr (one block per kernel; device functions that were not
inlined get a ``Function properties`` block of their own without an ``entry function`` line)::

    ptxas info    : 0 bytes gmem
    ptxas info    : Compiling entry function '_Z5spillPKfPfii' for 'sm_90'
    ptxas info    : Function properties for _Z5spillPKfPfii
        992 bytes stack frame, 1568 bytes spill stores, 1644 bytes spill loads
    ptxas info    : Used 32 registers, used 0 barriers, 992 bytes cumulative stack size, 49152 bytes smem
    ptxas info    : Compile time = 120.716 ms

Older toolkits and sm_8x targets add ``360 bytes cmem[0]`` and omit ``used N barriers``; every item of
the ``Used`` line is therefore matched on its own, not as one fixed pattern.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_ENTRY = re.compile(r"Compiling entry function '(?P<name>[^']+)' for '(?P<arch>[^']+)'")
_PROPERTIES = re.compile(r"Function properties for (?P<name>\S+)")
_FRAME = re.compile(
    r"(?P<stack>\d+) bytes stack frame, (?P<stores>\d+) bytes spill stores, (?P<loads>\d+) bytes spill loads"
)
_USED = re.compile(r"ptxas info\s*: Used (?P<regs>\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")
_CUMULATIVE_STACK = re.compile(r"(\d+) bytes cumulative stack size")
_CMEM = re.compile(r"(\d+) bytes cmem\[(\d+)\]")


@dataclass
class PtxasKernel:
    """Resource usage of one kernel (entry function) as ptxas reported it."""

    mangled_name: str
    arch: str
    registers: int | None = None
    barriers: int | None = None
    shared_static_bytes: int = 0
    """Static shared memory per block, byte."""
    stack_frame_bytes: int | None = None
    """The kernel's own stack frame per thread, byte."""
    cumulative_stack_bytes: int | None = None
    """Stack including called (non-inlined) functions per thread, byte; printed only when it differs."""
    spill_store_bytes: int | None = None
    spill_load_bytes: int | None = None
    constant_bytes: dict[int, int] = field(default_factory=dict)
    """Constant memory per bank, byte."""

    @property
    def local_memory_bytes(self) -> int | None:
        """Local memory per thread: the cumulative stack when printed, else the stack frame."""
        if self.cumulative_stack_bytes is not None:
            return max(self.cumulative_stack_bytes, self.stack_frame_bytes or 0)
        return self.stack_frame_bytes


def parse_ptxas_output(text: str) -> list[PtxasKernel]:
    """Kernels found in ptxas ``-v`` output, in the order ptxas compiled them.

    Args:
        text: nvcc's stderr (ptxas info lines may be interleaved with compiler warnings).

    Returns:
        One ``PtxasKernel`` per ``Compiling entry function`` line. Device functions are skipped. A
        kernel compiled twice (several targets) appears once per target.
    """
    kernels: list[PtxasKernel] = []
    current: PtxasKernel | None = None
    # Name of the last 'Function properties for' block: the frame line that follows belongs to it.
    properties_of: str | None = None
    for line in text.splitlines():
        if entry := _ENTRY.search(line):
            current = PtxasKernel(mangled_name=entry["name"], arch=entry["arch"])
            kernels.append(current)
            properties_of = None
        elif props := _PROPERTIES.search(line):
            properties_of = props["name"]
        elif frame := _FRAME.search(line):
            if current is not None and properties_of == current.mangled_name:
                current.stack_frame_bytes = int(frame["stack"])
                current.spill_store_bytes = int(frame["stores"])
                current.spill_load_bytes = int(frame["loads"])
            properties_of = None
        elif (used := _USED.search(line)) and current is not None:
            _read_used_line(current, line, int(used["regs"]))
            # A later 'Used' line can only belong to another entry function.
            current = None
    return kernels


def _read_used_line(kernel: PtxasKernel, line: str, registers: int) -> None:
    kernel.registers = registers
    if barriers := _BARRIERS.search(line):
        kernel.barriers = int(barriers[1])
    if smem := _SMEM.search(line):
        kernel.shared_static_bytes = int(smem[1])
    if stack := _CUMULATIVE_STACK.search(line):
        kernel.cumulative_stack_bytes = int(stack[1])
    kernel.constant_bytes = {int(bank): int(size) for size, bank in _CMEM.findall(line)}
