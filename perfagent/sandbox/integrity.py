"""What candidate code may have changed in the worker: harness functions and running threads.

- ``HarnessSnapshot``: identities of the functions the checker and timer rely on, taken before
  the candidate is imported; any later change is monkey-patching.
- ``new_threads``: threads a candidate started and left running (work deferred out of the timed call).
"""

from __future__ import annotations

import importlib
import inspect
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_WATCHED_MODULES = (
    "torch",
    "torch.cuda",
    "torch.nn.functional",
    "time",
    "numpy",
    "builtins",
    "math",
    "triton",
)
_WATCHED_CLASSES = ("torch.Tensor", "torch._C.TensorBase", "torch.cuda.Event", "torch.nn.Module")


@dataclass
class HarnessSnapshot:
    """Identities of module attributes and class methods the checker and timer use."""

    ids: dict[str, int]

    @classmethod
    def take(cls) -> HarnessSnapshot:
        ids: dict[str, int] = {}
        for name in _WATCHED_MODULES:
            module = sys.modules.get(name)
            if module is None:
                try:
                    module = importlib.import_module(name)
                except ImportError:
                    continue
            for attr, value in list(vars(module).items()):
                if callable(value) and not isinstance(value, type(sys)):
                    ids[f"{name}.{attr}"] = id(_canonical(value))
        for dotted in _WATCHED_CLASSES:
            obj = _resolve(dotted)
            if obj is None:
                continue
            for attr, value in list(vars(obj).items()):
                ids[f"{dotted}.{attr}"] = id(value)
        return cls(ids)

    def changed(self) -> list[str]:
        """Names whose object is no longer the one snapshotted (new names are ignored)."""
        now = HarnessSnapshot.take().ids
        return sorted(k for k, v in self.ids.items() if k in now and now[k] != v)


def _canonical(value: Any) -> Any:
    """The object a harness function really is.

    torch wraps some of its own functions lazily: importing ``torch._dynamo`` (which Triton and
    ``load_inline`` paths do) replaces ``torch.manual_seed`` by a ``functools.wraps`` wrapper. A wrapper
    whose code lives inside torch's own installation is unwrapped; a wrapper written anywhere else
    (a candidate patching the harness) is kept as the replacement it is.
    """
    code = getattr(value, "__code__", None)
    if code is None or not hasattr(value, "__wrapped__"):
        return value
    torch_dir = _torch_dir()
    if torch_dir and code.co_filename.startswith(torch_dir):
        return inspect.unwrap(value)
    return value


def _torch_dir() -> str | None:
    torch = sys.modules.get("torch")
    file = getattr(torch, "__file__", None)
    return str(Path(file).parent) if file else None


def _resolve(dotted: str) -> Any:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr, None)
            if obj is None:
                return None
        return obj
    return None


_LIBRARY_THREAD_MODULES = ("torch.", "triton.")


def _library_thread(t: threading.Thread) -> bool:
    """A thread whose target is a torch/triton function (their own pools), not user code."""
    target = getattr(t, "_target", None)
    module = getattr(target, "__module__", None) or ""
    return module.startswith(_LIBRARY_THREAD_MODULES)


def new_threads(before: set[threading.Thread], own: set[threading.Thread]) -> list[str]:
    """Names of live threads started since ``before`` (excluding the harness's own and torch/triton's)."""
    return sorted(
        t.name
        for t in threading.enumerate()
        if t not in before and t not in own and t.is_alive() and not _library_thread(t)
    )
