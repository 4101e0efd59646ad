"""``OptimizeSettings``: the one model behind the CLI's flags and the library's keywords."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from perfagent.commands.optimize import OptimizeCommand
from perfagent.commands.settings_args import settings_from_args
from perfagent.optimize.settings import OptimizeSettings
from profilers.core_errors import BadInput


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    OptimizeCommand().prepare_parser(parser)
    return parser.parse_args(list(argv))


def test_the_flags_default_to_the_model() -> None:
    assert settings_from_args(_parse("k.cu")) == OptimizeSettings()


def test_flags_become_fields() -> None:
    settings = settings_from_args(
        _parse(
            "k.cu", "--transform", "a", "--transform", "b", "--candidates", "2", "--timeout", "5", "--apply"
        )
    )
    assert settings.transforms == ("a", "b") and settings.max_candidates == 2
    assert settings.timeout_s == 5.0 and settings.apply


def test_transform_and_transforms_fold_into_one_list() -> None:
    assert OptimizeSettings.build(transform="a", transforms=["b", "a"]).transforms == ("a", "b")
    base = OptimizeSettings.build(transforms=["x"])
    assert OptimizeSettings.build(base, transform="y").transforms == ("y",)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"iterations": 0}, "iterations must be at least 1"),
        ({"max_candidates": 0}, "candidates per iteration must be at least 1"),
        ({"repairs": -1}, "repairs must be 0 or more"),
        ({"language": "rust"}, "unknown kernel language 'rust'"),
        ({"backend": "magic"}, "unknown backend 'magic'"),
    ],
)
def test_a_bad_library_value_is_bad_input_naming_the_flag(options: dict[str, object], message: str) -> None:
    with pytest.raises(BadInput, match=message):
        OptimizeSettings.build(**options)


def test_an_unknown_option_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="bogus"):
        OptimizeSettings.build(bogus=1)


def test_the_parts_limits_carry_the_flags_given() -> None:
    """What the loop's parts read (``MeasureLimits``, ``LoopLimits``) is the settings' values, flag by flag:
    every field of the two limits has a namesake in the settings, and none is left at its default."""
    settings = settings_from_args(
        _parse(
            "k.cu",
            *("--arch", "sm_80", "--seeds", "3", "--runs", "7", "--warmup", "2", "--timeout", "9"),
            *("--compile-timeout", "99", "--profile-timeout", "77", "--verify-jobs", "3"),
            *("--iterations", "4", "--candidates", "2", "--repairs", "0", "--transform", "loop-unroll"),
            *("--finding", "memory", "--profile-best", "--time-budget", "30"),
        )
    ).with_changes(verify_seed=11)
    for limits in (settings.measure_limits(), settings.loop_limits()):
        for field in dataclasses.fields(limits):
            given = getattr(settings, field.name)
            assert getattr(limits, field.name) == given, field.name
            assert given != OptimizeSettings.model_fields[field.name].default, (
                f"{field.name} left at its default"
            )
