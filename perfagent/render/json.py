"""JSON output: exactly ``RunRecord.model_dump_json(indent=2)``.

The model is the contract (``{"kernels": [{"name", "duration_s", "findings": [...]}, ...]}`` plus
every other field of the record); nothing is added or reshaped by hand, so ``RunRecord.model_validate_json``
reads the output back unchanged.
"""

from __future__ import annotations

from perfagent.records import RunRecord
from perfagent.render.base import Renderer

__all__ = ["JsonRenderer"]


class JsonRenderer(Renderer):
    """The record as indented JSON."""

    def render(self, record: RunRecord) -> str:
        """Serialise ``record`` (no trailing newline: ``write_output`` adds one)."""
        return record.model_dump_json(indent=2)
