"""Data and small loaders: GPU specs, bottleneck taxonomy, transformation catalog, metric maps.

Files live under ``knowledge/data`` as TOML and are validated by pydantic when loaded. This
package imports nothing of the project.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict


class KnowledgeModel(BaseModel):
    """Base for knowledge records: immutable, unknown keys rejected (typos in data files fail loudly)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class KnowledgeError(ValueError):
    """A knowledge data file is missing or invalid."""


@cache
def load_toml(relative_path: str) -> dict[str, Any]:
    """Load ``knowledge/data/<relative_path>`` as TOML.

    Raises:
        KnowledgeError: the file is missing or not valid TOML.
    """
    try:
        text = resources.files("knowledge").joinpath("data", relative_path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise KnowledgeError(f"knowledge file data/{relative_path} is missing") from exc
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise KnowledgeError(f"knowledge file data/{relative_path} is not valid TOML: {exc}") from exc


def data_files(folder: str, suffix: str = ".toml") -> list[str]:
    """Relative paths of the data files in ``knowledge/data/<folder>`` (sorted)."""
    root = resources.files("knowledge").joinpath("data", folder)
    if not root.is_dir():
        return []
    return sorted(f"{folder}/{p.name}" for p in root.iterdir() if p.name.endswith(suffix))
