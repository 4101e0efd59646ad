"""A launch-spec argument's contents drawn with NumPy: the torch-free harness's inputs and poisoned outputs.

The profiling harness under ncu (``torch_free_harness``) needs inputs of the same law, dtype and shape as
torch's (``cuda_launch.make_arg_tensor``), not the same bits: a profile measures the kernel on data of the
declared distribution; verification and timing keep torch's draws. Every ``init`` kind and every ``vary``
distribution of ``inputs.DISTRIBUTIONS`` is drawn here, per argument from its own seed (``seed_for``, the
same mixing torch's draws use). NumPy has no bfloat16: a bfloat16 array is the top half of each float32
(``uint16`` words, truncated, at most one bf16 ulp towards zero); half is NumPy's float16.

Torch-free: no torch import here or below (the import-linter contract and ``tests/workloads``).
"""

from __future__ import annotations

import os
import sys
import zlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from perfagent.workloads.launch_resolve import ResolvedArg
from perfagent.workloads.launch_spec import FLOAT_DTYPES, ArgSpec

HOST_DTYPES: dict[str, Any] = {
    "float32": np.float32,
    "float16": np.float16,
    "bfloat16": np.uint16,  # the top 16 bits of a float32
    "float64": np.float64,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint32": np.uint32,
    "bool": np.bool_,
}
"""The NumPy array type holding each spec dtype's bytes, element for element."""
SERVED_INITS: frozenset[str] = frozenset({"normal", "uniform", "randint", "arange", "ones", "full", "zeros"})
"""The ``init`` kinds drawn here; a spec with another one is profiled through the torch harness."""
TOP_HALF = 1 if sys.byteorder == "little" else 0
"""Which of a float32's two uint16 words holds its sign, exponent and top mantissa bits (bfloat16)."""
BF16_MAX = 3.3895313892515355e38
"""torch.finfo(torch.bfloat16).max (the second poison of a bfloat16 output is -0.37 times it)."""
CHUNK = 1 << 22
"""Elements drawn per task (and per child seed)."""
MAX_THREADS = 16
"""A cap on the drawing threads (one per chunk, at most one per core of the host)."""
INT_POISON = {1: 0xFF, 2: 0x5A}
"""Byte patterns of poisoned integer outputs (first / second launch); ``cuda_launch.poison_`` fills the same."""


def seed_for(seed: int, name: str) -> int:
    """The seed of argument ``name`` in trial ``seed`` (arguments differ; torch's draws mix it the same way)."""
    return (seed * 1_000_003 + zlib.crc32(name.encode())) % (2**63)


def unserved(arg: ArgSpec | ResolvedArg) -> str | None:
    """Why tensor argument ``arg`` (of a spec, or resolved) cannot be drawn here (None: it can)."""
    if arg.dtype not in HOST_DTYPES:
        return f"dtype {arg.dtype} of {arg.name!r}"
    if arg.init is not None and arg.init not in SERVED_INITS:
        return f"init {arg.init!r} of {arg.name!r}"
    return None


def draw(shape: Sequence[int], dist: str, rng: np.random.Generator) -> np.ndarray:
    """A float32 array of ``shape`` from ``dist`` (one of ``inputs.DISTRIBUTIONS``), the laws of ``inputs.draw``."""
    shape = tuple(shape)
    if dist in ("normal", "shifted", "scaled", "lognormal"):
        values = rng.standard_normal(shape, dtype=np.float32)
        if dist == "shifted":
            values += 5.0
        elif dist == "scaled":
            values *= 10.0
        elif dist == "lognormal":
            values = np.exp(0.5 * values, dtype=np.float32)
        return values
    if dist == "uniform":
        return rng.random(shape, dtype=np.float32) * np.float32(2.0) - np.float32(1.0)
    if dist == "laplace":
        u = rng.random(shape, dtype=np.float32) - np.float32(0.5)
        laplace: np.ndarray = -np.sign(u) * np.log1p(-2.0 * np.minimum(np.abs(u), 0.4999999))
        return laplace.astype(np.float32)
    if dist == "exponential":
        u = np.minimum(rng.random(shape, dtype=np.float32), np.float32(0.9999999))
        exponential: np.ndarray = -np.log1p(-u)
        return exponential.astype(np.float32)
    raise ValueError(f"unknown distribution {dist!r}")


def host_input(arg: ResolvedArg, seed: int, dist: str | None = None) -> np.ndarray:
    """``arg``'s contents as ``make_arg_tensor`` declares them (float inputs with ``vary`` from ``dist``
    instead, when given), as an array of ``HOST_DTYPES[arg.dtype]``.

    Drawn in chunks of ``CHUNK`` elements, each from its own child of the argument's seed, on a thread
    pool (NumPy's generators and casts release the GIL): 2^26 normal draws take ~3 s on one core, the
    better part of the torch import this harness saves. The chunking is fixed, so the values do not
    depend on the number of cores.
    """
    is_float = arg.dtype in FLOAT_DTYPES
    init = arg.init or ("normal" if is_float else "randint")
    law = dist if dist is not None and is_float and arg.vary and init in ("normal", "uniform") else None
    out = np.empty(arg.numel, dtype=HOST_DTYPES[arg.dtype])
    chunks = max(1, -(-arg.numel // CHUNK))
    children = np.random.SeedSequence(seed_for(seed, arg.name)).spawn(chunks)

    def fill(index: int) -> None:
        start, stop = index * CHUNK, min(arg.numel, (index + 1) * CHUNK)
        rng = np.random.default_rng(children[index])
        values = draw((stop - start,), law, rng) if law else _declared(arg, init, rng, start, stop)
        out[start:stop] = to_dtype(values, arg.dtype)

    if chunks == 1:
        fill(0)
    else:
        with ThreadPoolExecutor(max_workers=min(chunks, os.cpu_count() or 1, MAX_THREADS)) as pool:
            list(pool.map(fill, range(chunks)))
    return out.reshape(arg.shape)


def _declared(arg: ResolvedArg, init: str, rng: np.random.Generator, start: int, stop: int) -> np.ndarray:
    """Elements ``start:stop`` of the declared ``init``, drawn in float32 (int64 for randint and arange), as
    torch draws before its cast."""
    count = stop - start
    if init == "normal":
        values = rng.standard_normal(count, dtype=np.float32)
        if arg.std is not None:
            values *= np.float32(arg.std)
        values += np.float32(arg.mean or 0.0)
        return values
    if init == "uniform":
        low = arg.low if arg.low is not None else 0.0
        high = arg.high if arg.high is not None else 1.0
        values = rng.random(count, dtype=np.float32)
        values *= np.float32(high - low)
        values += np.float32(low)
        return values
    if init == "randint":
        low_i = int(arg.low) if arg.low is not None else 0
        high_i = int(arg.high) if arg.high is not None else (2 if arg.dtype == "bool" else 100)
        return rng.integers(low_i, high_i, size=count, dtype=np.int64)
    if init == "arange":
        flat = np.arange(start, stop, dtype=np.int64)
        if arg.high is not None:
            flat %= int(arg.high)
        return flat
    if init in ("ones", "full", "zeros"):
        fill = {"ones": 1.0, "zeros": 0.0}.get(init, arg.fill if arg.fill is not None else 0.0)
        return np.full(count, fill, dtype=np.float32)
    raise ValueError(f"unknown init {init!r}")


def to_dtype(values: np.ndarray, dtype: str) -> np.ndarray:
    """``values`` cast to the host array of spec ``dtype`` (bfloat16: a float32's top half, truncated)."""
    if dtype == "bfloat16":
        words = values.astype(np.float32, copy=False).reshape(-1).view(np.uint16)
        return words[TOP_HALF::2].reshape(values.shape)
    if dtype == "bool":
        nonzero: np.ndarray = values != 0
        return nonzero
    return values.astype(HOST_DTYPES[dtype], copy=False)


def poisoned(arg: ResolvedArg, which: int) -> np.ndarray:
    """An output of ``arg``'s shape filled with poison ``which`` (1 or 2) as ``cuda_launch.poison_`` fills:
    NaN, then -0.37 times the dtype's largest value, for floats; True, then False, for bool; the byte
    pattern ``INT_POISON[which]`` for integers."""
    if arg.dtype in FLOAT_DTYPES:
        bf16 = arg.dtype == "bfloat16"
        largest = BF16_MAX if bf16 else float(np.finfo(HOST_DTYPES[arg.dtype]).max)
        value = float("nan") if which == 1 else -0.37 * largest
        return to_dtype(
            np.full(arg.shape, value, dtype=np.float32 if bf16 else HOST_DTYPES[arg.dtype]), arg.dtype
        )
    if arg.dtype == "bool":
        return np.full(arg.shape, which == 1, dtype=np.bool_)
    host = np.empty(arg.shape, dtype=HOST_DTYPES[arg.dtype])
    host.view(np.uint8)[...] = INT_POISON[which]
    return host
