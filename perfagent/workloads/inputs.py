"""Seeded inputs of a workload: seeds, distributions, clones, allocator poisoning (worker side).

Verification, timing and the profiling harness (``run_spec``) all draw their inputs here, so that the
same seed gives the same tensors in each. Imports torch: only worker processes and tests import it.

A KernelBench problem's own ``get_inputs()`` fixes shapes and dtypes; verification draws it with
fresh seeds and also re-draws every floating-point tensor of the same shape from other
distributions (normal, uniform, laplace, exponential, lognormal), so that a candidate tuned to
one distribution (or one value range) shows. Integer and bool tensors (indices, masks, labels)
are kept as the problem drew them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

NATIVE = "get_inputs"
DISTRIBUTIONS: tuple[str, ...] = (
    "shifted",
    "scaled",
    "uniform",
    "laplace",
    "lognormal",
    "normal",
    "exponential",
)
"""The re-drawn input set of seed i uses entry i (cyclically). Shifted (``randn + 5``) and scaled
(``randn * 10``) come first: a candidate that only works on zero-mean unit-variance inputs (a LayerNorm
that is really a copy, a kernel that hard-codes the mean) fails already with 2 seeds."""
NAN_POISON_BYTES = 64 * 1024 * 1024
SENTINEL = -7.77e30
"""A second float poison, distinguishable from NaN, for the second poisoned launch of raw kernels."""


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (CPU and every CUDA device)."""
    random.seed(seed)
    torch.manual_seed(seed)
    np.random.seed(seed % (2**32))


def draw(shape: Sequence[int], dist: str, generator: torch.Generator) -> torch.Tensor:
    """A float32 tensor of ``shape`` from ``dist`` (one of ``DISTRIBUTIONS``), on the generator's device."""
    shape = tuple(shape)
    dev = generator.device
    if dist == "normal":
        return torch.randn(shape, generator=generator, device=dev)
    if dist == "shifted":
        return torch.randn(shape, generator=generator, device=dev) + 5.0
    if dist == "scaled":
        return torch.randn(shape, generator=generator, device=dev) * 10.0
    if dist == "uniform":
        return torch.rand(shape, generator=generator, device=dev) * 2.0 - 1.0
    if dist == "laplace":
        u = torch.rand(shape, generator=generator, device=dev) - 0.5
        return -torch.sign(u) * torch.log1p(-2.0 * u.abs().clamp(max=0.4999999))
    if dist == "exponential":
        return -torch.log1p(-torch.rand(shape, generator=generator, device=dev).clamp(max=0.9999999))
    if dist == "lognormal":
        return torch.exp(0.5 * torch.randn(shape, generator=generator, device=dev))
    raise ValueError(f"unknown distribution {dist!r}")


def redraw(values: Sequence[Any], dist: str, seed: int) -> list[Any]:
    """Replace every floating-point tensor in ``values`` by a same-shape draw from ``dist``."""
    gens: dict[str, torch.Generator] = {}
    out: list[Any] = []
    for v in values:
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            key = str(v.device)
            if key not in gens:
                gens[key] = torch.Generator(device=v.device).manual_seed(seed)
            gen = gens[key]
            fresh = draw(v.shape, dist, gen).to(dtype=v.dtype, device=v.device)
            if not v.is_contiguous():  # keep the problem's memory layout (e.g. a transposed input)
                try:
                    strided = torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device=v.device)
                    strided.copy_(fresh)
                    fresh = strided
                except RuntimeError:
                    pass
            out.append(fresh)
        else:
            out.append(v)
    return out


def to_device(values: Sequence[Any], device: str) -> list[Any]:
    """Move tensors to ``device`` (KernelBench problems return CPU tensors)."""
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def clone_all(values: Sequence[Any]) -> list[Any]:
    """Fresh copies of every tensor (new storage, new ``data_ptr``), other values as they are."""
    return [v.clone() if isinstance(v, torch.Tensor) else v for v in values]


def copy_into(buffers: Sequence[Any], values: Sequence[Any]) -> None:
    """Overwrite tensors in ``buffers`` with ``values`` in place (same ``data_ptr``, same ``id``)."""
    for b, v in zip(buffers, values, strict=True):
        if isinstance(b, torch.Tensor) and isinstance(v, torch.Tensor):
            with torch.no_grad():
                b.copy_(v)


def flatten_outputs(value: Any, path: str = "output") -> list[tuple[str, Any]]:
    """Leaves of a forward() result: tensors and numbers, with their path ('output[1]')."""
    if isinstance(value, tuple | list):
        leaves: list[tuple[str, Any]] = []
        for i, item in enumerate(value):
            leaves.extend(flatten_outputs(item, f"{path}[{i}]"))
        return leaves
    if isinstance(value, dict):
        leaves = []
        for key in sorted(value, key=str):
            leaves.extend(flatten_outputs(value[key], f"{path}[{key!r}]"))
        return leaves
    return [(path, value)]


def tensor_bytes(values: Any) -> int:
    """Bytes held by every tensor in ``values`` (a forward() result or an input list)."""
    return sum(
        v.numel() * v.element_size() for _, v in flatten_outputs(values) if isinstance(v, torch.Tensor)
    )


def poison_allocator(device: str, nbytes: int | None = None) -> None:
    """Fill freshly allocated memory with NaN and free it, so that memory a candidate does not
    write (``torch.empty`` outputs, reused blocks of the caching allocator) reads as NaN.

    On CUDA a large block (the caching allocator's large pool) plus small ones (its small pool);
    on the CPU a smaller amount (large CPU allocations come fresh from the OS, and
    ``enable_uninitialized_fill`` already makes ``torch.empty`` NaN).
    """
    cuda = device.startswith("cuda")
    size = nbytes if nbytes is not None else (NAN_POISON_BYTES if cuda else 2 * 1024 * 1024)
    big = torch.empty(size // 4, dtype=torch.float32, device=device)
    big.fill_(float("nan"))
    smalls = [
        torch.full((1 << 15,), float("nan"), dtype=torch.float32, device=device)
        for _ in range(32 if cuda else 8)
    ]
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    del big, smalls


def enable_uninitialized_fill() -> None:
    """Make ``torch.empty`` & co. fill new memory with NaN (floats) / max int, on CPU and CUDA.

    Uses ``torch.use_deterministic_algorithms(True, warn_only=True)``: ops without a deterministic
    implementation only warn.
    """
    c_api = torch._C
    if hasattr(c_api, "_set_deterministic_algorithms") and hasattr(
        c_api, "_set_deterministic_fill_uninitialized_memory"
    ):
        # The same switches without importing torch._inductor / torch._dynamo (1-2 s per worker).
        c_api._set_deterministic_algorithms(True, warn_only=True)
        c_api._set_deterministic_fill_uninitialized_memory(True)
        return
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True  # type: ignore[attr-defined]


def disable_uninitialized_fill() -> None:
    """Undo ``enable_uninitialized_fill``: torch's defaults (a timing that follows a verification in one
    process must not pay for a fill of every allocation, nor run the deterministic kernels)."""
    c_api = torch._C
    if hasattr(c_api, "_set_deterministic_algorithms") and hasattr(
        c_api, "_set_deterministic_fill_uninitialized_memory"
    ):
        c_api._set_deterministic_algorithms(False)
        c_api._set_deterministic_fill_uninitialized_memory(False)
        return
    torch.use_deterministic_algorithms(False)
    torch.utils.deterministic.fill_uninitialized_memory = False  # type: ignore[attr-defined]
