"""argparse flags generated from ``OptimizeSettings``: the model holds each option's default, check and help.

Each field with a ``Flag`` becomes one flag in its group; the argparse type follows the field's own
constraint (``ge=1`` → ``positive_int`` ...), so that a bad value is refused by argparse (exit 2) with the
message it always gave. ``settings_from_args`` reads the parsed namespace back into the model.
"""

from __future__ import annotations

import argparse
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any

from annotated_types import Ge, Gt
from pydantic.fields import FieldInfo

from perfagent.commands.common import non_negative_int, positive_float, positive_int
from perfagent.optimize.settings import Flag, OptimizeSettings

__all__ = ["add_settings_args", "settings_from_args"]

Group = argparse._ArgumentGroup
"""What ``ArgumentParser.add_argument_group`` returns."""


def add_settings_args(parser: argparse.ArgumentParser, groups: Iterable[str]) -> dict[str, Group]:
    """Add the flags of the settings in ``groups`` (in field order); the argparse groups by name."""
    made: dict[str, Group] = {name: parser.add_argument_group(name) for name in groups}
    for name, info in OptimizeSettings.model_fields.items():
        flag = OptimizeSettings.flag(name)
        if flag is not None and flag.group in made:
            made[flag.group].add_argument(flag.name, dest=name, **_argparse_options(info, flag))
    return made


def settings_from_args(args: argparse.Namespace) -> OptimizeSettings:
    """The settings the parsed flags ask for (``--force`` comes from the output options)."""
    given: dict[str, Any] = {
        name: getattr(args, name)
        for name in OptimizeSettings.model_fields
        if OptimizeSettings.flag(name) is not None and hasattr(args, name)
    }
    given["transforms"] = tuple(given.get("transforms") or ())
    if given.get("llm_price") is not None:
        given["llm_price"] = tuple(given["llm_price"])
    return OptimizeSettings.build(**given, force=bool(getattr(args, "force", False)))


def _argparse_options(info: FieldInfo, flag: Flag) -> dict[str, Any]:
    options: dict[str, Any] = {"help": info.description}
    if flag.metavar is not None:
        options["metavar"] = flag.metavar
    base = _without_none(info.annotation)
    if base is bool:
        return {**options, "action": "store_true"}
    if flag.append:
        return {**options, "action": "append", "default": []}
    options["default"] = info.default
    if typing.get_origin(base) is typing.Literal:
        return {**options, "choices": typing.get_args(base)}
    if typing.get_origin(base) is tuple:
        return {**options, "nargs": len(typing.get_args(base)), "type": positive_float}
    check = _check(base, info)
    return {**options, "type": check} if check is not None else options


def _check(base: Any, info: FieldInfo) -> Callable[[str], Any] | None:
    """The argparse type that refuses what the field's constraint refuses."""
    ge = next((m.ge for m in info.metadata if isinstance(m, Ge)), None)
    gt = next((m.gt for m in info.metadata if isinstance(m, Gt)), None)
    if base is int and ge == 1:
        return positive_int
    if base is int and ge == 0:
        return non_negative_int
    if base is float and gt == 0:
        return positive_float
    return None


def _without_none(annotation: Any) -> Any:
    """``X | None`` → ``X`` (a union of several types is left as it is)."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        rest = [a for a in typing.get_args(annotation) if a is not type(None)]
        return rest[0] if len(rest) == 1 else annotation
    return annotation
