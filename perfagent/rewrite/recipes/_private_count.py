"""How many elements privatize-atomics' shared copy holds: the accumulator's size, from the launch spec.

Two cases:
- a compile-time size: the spec shapes the accumulator as a literal or a ``#define`` / ``constexpr`` of the
  source (``[4096]``, ``["BINS"]``): the copy is exactly that large;
- a run-time size: every dimension of the spec's shape is a literal or the value expression of a scalar
  argument the kernel never reassigns (``["num_features", "num_bins", 2]`` with ``int num_features`` and
  ``int num_bins`` passed as those values): the kernel computes the count from its own parameters, and
  the static copy is sized for the largest count among the spec's shapes (params and check_params,
  rounded up to 32). The rewrite tests ``count <= capacity`` at run time and, for a larger problem,
  keeps the original global atomics, so no size reads or writes out of bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda, _thread_index
from perfagent.rewrite.recipes._variant import Source
from perfagent.workloads.expr import ExpressionError, evaluate_int


@dataclass(frozen=True)
class Count:
    """The accumulator's element count as the kernel can spell it, and the copy's capacity."""

    spelled: str
    capacity: int
    """Elements of the static shared copy (the count itself when it is a compile-time constant)."""
    runtime: bool = False
    """The count is computed from kernel parameters at run time (the copy is used when it fits)."""


def count_of(src: Source, kernel: Node, array: str) -> Count | str:
    """The count of ``array``'s elements, or why it is unknown."""
    launch = src.launch
    if launch is None:
        return "no launch spec: the accumulator's size is unknown"
    names = [name for name, _, _ in _cuda.kernel_params(kernel)]
    index = names.index(array)
    if index >= len(launch.args) or not launch.args[index].shape:
        return f"the launch spec does not shape {array}"
    shape = [str(d).strip() for d in launch.args[index].shape]
    if len(shape) == 1 and (shape[0].isdigit() or shape[0] in src.constants):
        return _constant(src, array, shape[0])
    return _runtime(src, kernel, array, shape)


def _constant(src: Source, array: str, shape: str) -> Count | str:
    if shape.isdigit():
        return Count(shape, int(shape))
    assert src.launch is not None
    env: dict[str, _cuda.Constant | int] = dict(src.constants)
    env |= {k: int(v) for k, v in src.launch.defines.items() if str(v).lstrip("-").isdigit()}
    value = _cuda.evaluate(shape, env)
    if value is None or value <= 0:
        return f"the size of {array} ({shape}) does not evaluate to a positive integer"
    return Count(shape, value)


def _runtime(src: Source, kernel: Node, array: str, shape: list[str]) -> Count | str:
    """Each dimension a literal or a scalar argument's value expression (the kernel's name for it)."""
    assert src.launch is not None
    params = _cuda.kernel_params(kernel)
    by_value = {
        " ".join(str(arg.value).split()): params[i][0]
        for i, arg in enumerate(src.launch.args)
        if arg.value is not None and i < len(params) and not params[i][2]
    }
    spelled = []
    for dim in shape:
        name = dim if dim.isdigit() else by_value.get(" ".join(dim.split()))
        if name is None:
            return (
                f"{array} has {' x '.join(shape)} elements: {dim} is neither a constant nor a scalar argument"
            )
        if not name.isdigit() and _thread_index.assigns(kernel, name) is not None:
            return f"{array}'s size reads {name}, which the kernel assigns"
        spelled.append(name)
    largest = 0
    for params_ in (src.launch.params, *({**src.launch.params, **p} for p in src.launch.check_params)):
        try:
            size = 1
            for dim in shape:
                size *= evaluate_int(dim, params_, what=f"{array}'s size")
        except ExpressionError as exc:
            return f"{array}'s size does not evaluate: {exc}"
        largest = max(largest, size)
    if largest <= 0:
        return f"{array}'s size is not positive"
    return Count("(" + " * ".join(spelled) + ")", -(-largest // 32) * 32, runtime=True)
