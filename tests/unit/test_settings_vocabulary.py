"""One device vocabulary and one place for timeout defaults (``profilers.settings``), and the CLI unchanged.

Issue 28: the device choices were spelled in 10 places and the 60 s / 600 s defaults at 19 sites; a default
changed in one of them silently disagreed with the others.
"""

from __future__ import annotations

import argparse
import inspect
import re
from collections.abc import Callable
from pathlib import Path

from perfagent.cli import build_parser
from perfagent.llm_client import LLMConfig
from perfagent.optimize.settings import OptimizeSettings
from perfagent.sandbox.wire import WorkerRequest
from perfagent.suite.models import SuiteSettings
from perfagent.timing.bench import bench, bench_batch
from perfagent.verify.api import verify
from profilers.base import ProfileRequest
from profilers.settings import DEVICES, TIMEOUTS, Timeouts

REPO = Path(__file__).resolve().parents[2]
SOURCES = [p for pkg in ("perfagent", "profilers", "tui") for p in sorted((REPO / pkg).rglob("*.py"))]
HOME = REPO / "profilers" / "settings.py"


def _flags() -> dict[tuple[str, str], argparse.Action]:
    parser = build_parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {
        (command, option): action
        for command, sub_parser in sub.choices.items()
        for action in sub_parser._actions
        for option in action.option_strings
    }


def test_the_cli_flags_keep_their_defaults_and_take_them_from_the_settings() -> None:
    flags = _flags()
    expected = {
        ("diagnose", "--timeout"): 600.0,
        ("profile", "--timeout"): 600.0,
        ("verify", "--timeout"): 60.0,
        ("verify", "--compile-timeout"): 600.0,
        ("bench", "--timeout"): 60.0,
        ("bench", "--compile-timeout"): 600.0,
        ("optimize", "--timeout"): 60.0,
        ("optimize", "--compile-timeout"): 600.0,
        ("optimize", "--profile-timeout"): 600.0,
        ("suite", "--entry-timeout"): 900.0,
    }
    assert {key: flags[key].default for key in expected} == expected
    assert (TIMEOUTS.call_s, TIMEOUTS.compile_s, TIMEOUTS.profile_s) == (60.0, 600.0, 600.0)
    devices = {key: action for key, action in flags.items() if key[1] == "--device"}
    assert set(devices) == {
        ("verify", "--device"),
        ("bench", "--device"),
        ("optimize", "--device"),
        ("suite", "--device"),
    }
    for key, action in devices.items():
        assert tuple(action.choices or ()) == DEVICES == ("auto", "cpu", "cuda"), key
        assert action.default == "auto", key


def test_every_library_default_is_the_settings_default() -> None:
    settings = OptimizeSettings()
    assert (settings.timeout_s, settings.compile_timeout_s, settings.profile_timeout_s) == (
        TIMEOUTS.call_s,
        TIMEOUTS.compile_s,
        TIMEOUTS.profile_s,
    )
    for function in (verify, bench, bench_batch):
        parameters = inspect.signature(function).parameters
        assert parameters["timeout_s"].default == TIMEOUTS.call_s, function.__name__
        assert parameters["compile_timeout_s"].default == TIMEOUTS.compile_s, function.__name__
    worker = WorkerRequest.model_fields
    assert (worker["timeout_s"].default, worker["compile_timeout_s"].default) == (
        TIMEOUTS.call_s,
        TIMEOUTS.compile_s,
    )
    assert ProfileRequest.model_fields["timeout_s"].default == TIMEOUTS.profile_s
    assert SuiteSettings.model_fields["entry_timeout_s"].default == TIMEOUTS.suite_entry_s
    assert LLMConfig().timeout_s == TIMEOUTS.llm_request_s
    assert Timeouts() == TIMEOUTS


DEVICE_LIST = re.compile(r"""["'](auto|cpu|cuda)["'],\s*["'](auto|cpu|cuda)["']""")
"""Two device names side by side: a Literal, a choices tuple or a membership test spelling the vocabulary."""
TIMEOUT_NUMBER = re.compile(r"""(?i)\b(\w*timeout_s)\b\s*(:[^=]+)?\s=\s*\d""")
"""A timeout defined as a number (``timeout_s: float = 60.0``, ``PROBE_TIMEOUT_S = 20.0``); a call's
``timeout_s=...`` uses a limit, it does not define a default."""
OWN_LIMITS = {
    "DEVICE_PROBE_TIMEOUT_S",
    "DESCRIBE_TIMEOUT_S",
    "DEMANGLE_TIMEOUT_S",
    "NVCC_TIMEOUT_S",
    "PROBE_TIMEOUT_S",
    "READ_TIMEOUT_S",
    "SCAN_TIMEOUT_S",
    "VERSION_TIMEOUT_S",
    "_TIMEOUT_S",
}
"""Named limits of one internal tool call each (optimize's device child, a meta-device input description, a demangler run, an nvcc
PTX build, the LLM endpoint's reachability probe, a report read, a SASS scan, ``ncu --version``, the recipes'
compile check): constants beside their one use, not defaults anyone chooses."""


def _lines_outside_the_settings(keep: Callable[[str], bool]) -> list[str]:
    """'path:line: text' of every project source line ``keep`` takes, profilers/settings.py aside."""
    return [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for path in SOURCES
        if path != HOME
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if keep(line)
    ]


def _a_chosen_timeout_number(line: str) -> bool:
    match = TIMEOUT_NUMBER.search(line)
    return match is not None and match.group(1) not in OWN_LIMITS


def test_the_device_vocabulary_is_spelled_once() -> None:
    assert _lines_outside_the_settings(lambda line: DEVICE_LIST.search(line) is not None) == []


def test_no_timeout_default_is_a_number_outside_the_settings() -> None:
    assert _lines_outside_the_settings(_a_chosen_timeout_number) == []
