"""Fixtures: hand-built run records (see records.py)."""

from __future__ import annotations

import pytest

from perfagent.records import RunRecord
from tests.render.records import copy_kernel_record, counters_record, static_record, timing_only_record


@pytest.fixture
def counters() -> RunRecord:
    return counters_record()


@pytest.fixture
def static() -> RunRecord:
    return static_record()


@pytest.fixture
def timing_only() -> RunRecord:
    return timing_only_record()


@pytest.fixture
def with_copy() -> RunRecord:
    return copy_kernel_record()
