"""The package version, in a module of its own so that nothing below the package root imports the root."""

from __future__ import annotations

__version__ = "0.1.0"
