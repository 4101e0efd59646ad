"""``OptimizeSettings``: every option of an optimize run, spelled once.

The CLI (``perfagent optimize``: its flags are generated from these fields), the library
(``perfagent.optimize(target, **options)`` or ``settings=``), the two-machine phases and the TUI all build
this one model. Each field carries its default, its validation and its help text; the ``Flag`` in its
metadata says how the CLI spells it. A bad value raises ``BadInput`` naming the flag, as before.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import ErrorDetails

from perfagent.llm_client import LLMConfig, cassette_config
from perfagent.optimize.limits import LoopLimits, MeasureLimits
from profilers.core_errors import BadInput
from profilers.settings import TIMEOUTS, TIMING, Device

_View = TypeVar("_View", MeasureLimits, LoopLimits)

__all__ = ["LLM_GROUP", "LOOP_GROUP", "RESULTS_GROUP", "VERIFY_GROUP", "Flag", "OptimizeSettings"]

LOOP_GROUP = "loop"
VERIFY_GROUP = "verification and timing"
LLM_GROUP = "LLM (the API key only from PERFAGENT_LLM_API_KEY / OPENAI_API_KEY)"
RESULTS_GROUP = "results"

Backend = Literal["recipes", "llm", "auto"]
FirstKernelLanguage = Literal["cuda", "triton"]
"""What the write-kernel step writes a first ModelNew in (a narrower set than a source's ``Language``)."""


@dataclass(frozen=True)
class Flag:
    """How the CLI spells a setting (argparse details the model's own constraints do not give)."""

    name: str
    """The option string, '--iterations'."""
    group: str
    """The argparse group the flag is listed under."""
    metavar: str | tuple[str, ...] | None = None
    label: str = ""
    """How an error message names the setting ('candidates per iteration'); default: the field name."""
    example: str = ""
    """A good value for the error's hint ('e.g. --iterations 3')."""
    append: bool = False
    """Repeatable (argparse ``action='append'``)."""


class OptimizeSettings(BaseModel):
    """What to try, how to verify and time it, which rewriter, and where the run goes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: Annotated[Backend, Flag("--backend", LOOP_GROUP)] = Field(
        "auto",
        description="rewriter: recipes (deterministic, offline), llm (OpenAI-compatible endpoint), "
        "auto (default: recipes and llm together when an endpoint is configured, else recipes)",
    )
    transforms: Annotated[tuple[str, ...], Flag("--transform", LOOP_GROUP, metavar="ID", append=True)] = (
        Field(
            (),
            description="apply this catalog transform instead of the diagnosis' plan (repeatable)",
        )
    )
    finding: Annotated[str | None, Flag("--finding", LOOP_GROUP, metavar="CATEGORY")] = Field(
        None, description="plan only for findings of this category"
    )
    kernel: Annotated[str | None, Flag("--kernel", LOOP_GROUP, metavar="REGEX")] = Field(
        None, description="which kernel of the diagnosis to target (default: the rewritten one)"
    )
    iterations: Annotated[int, Flag("--iterations", LOOP_GROUP, metavar="N", example="3")] = Field(
        3, ge=1, description="rewrite rounds (default 3)"
    )
    max_candidates: Annotated[
        int,
        Flag("--candidates", LOOP_GROUP, metavar="N", label="candidates per iteration", example="2"),
    ] = Field(4, ge=1, description="candidates evaluated per round (default 4)")
    device: Annotated[Device, Flag("--device", LOOP_GROUP)] = Field(
        "auto", description="where candidates run (default auto: the GPU when there is one)"
    )
    problem: Annotated[str | Path | None, Flag("--problem", LOOP_GROUP, metavar="PATH")] = Field(
        None, description="KernelBench problem (the oracle) when TARGET is a ModelNew file"
    )
    spec: Annotated[str | Path | None, Flag("--spec", LOOP_GROUP, metavar="PATH")] = Field(
        None, description="launch spec of a .cu TARGET (default: found beside it)"
    )
    report: Annotated[str | Path | None, Flag("--report", LOOP_GROUP, metavar="PATH")] = Field(
        None, description="recorded report (.ncu-rep, ...) to diagnose from when nothing can be profiled here"
    )
    gpu: Annotated[str | None, Flag("--gpu", LOOP_GROUP, metavar="NAME")] = Field(
        None,
        description="the GPU the prompts describe when no report says (any GPU in knowledge/data/gpus, e.g. "
        "'NVIDIA H100 80GB HBM3' or h200); a report recorded on a GPU wins",
    )
    arch: Annotated[str, Flag("--arch", LOOP_GROUP)] = Field(
        "sm_90", description="architecture for nvcc builds and static analysis (default sm_90)"
    )
    seeds: Annotated[int, Flag("--seeds", VERIFY_GROUP, metavar="N", example="5")] = Field(
        5, ge=1, description="verification seeds (default 5)"
    )
    timeout_s: Annotated[float, Flag("--timeout", VERIFY_GROUP, metavar="SECONDS", example="60")] = Field(
        TIMEOUTS.call_s,
        gt=0,
        description=f"limit per call while verifying and timing (default {TIMEOUTS.call_s:g})",
    )
    compile_timeout_s: Annotated[
        float, Flag("--compile-timeout", VERIFY_GROUP, metavar="SECONDS", example="600")
    ] = Field(
        TIMEOUTS.compile_s,
        gt=0,
        description=f"limit for builds and first calls (default {TIMEOUTS.compile_s:g})",
    )
    profile_timeout_s: Annotated[
        float, Flag("--profile-timeout", VERIFY_GROUP, metavar="SECONDS", example="600")
    ] = Field(TIMEOUTS.profile_s, gt=0, description=f"limit of one ncu run (default {TIMEOUTS.profile_s:g})")
    verify_jobs: Annotated[int, Flag("--verify-jobs", VERIFY_GROUP, metavar="N", example="4")] = Field(
        0,
        ge=0,
        description="candidates of one iteration built and verified at once; timing and profiling stay one "
        "at a time (default 0: auto, one job per 4 CPU cores, at most 4)",
    )
    runs: Annotated[int, Flag("--runs", VERIFY_GROUP, metavar="N", example="50")] = Field(
        50,
        ge=1,
        description=f"interleaved timing rounds per candidate, at most (default 50; a slow kernel gets as many "
        f"as fill {TIMING.budget_s:g} s, at least {TIMING.min_runs}: profilers.settings.TIMING)",
    )
    warmup: Annotated[int, Flag("--warmup", VERIFY_GROUP, metavar="N", example="10")] = Field(
        10, ge=0, description="untimed calls first (default 10)"
    )
    llm_base_url: Annotated[str | None, Flag("--llm-base-url", LLM_GROUP, metavar="URL")] = Field(
        None, description="OpenAI-compatible endpoint (overrides PERFAGENT_LLM_BASE_URL)"
    )
    llm_model: Annotated[str | None, Flag("--llm-model", LLM_GROUP, metavar="NAME")] = Field(
        None, description="model name (overrides PERFAGENT_LLM_MODEL)"
    )
    llm_timeout_s: Annotated[float | None, Flag("--llm-timeout", LLM_GROUP, metavar="SECONDS")] = Field(
        None, gt=0, description="per-request timeout (overrides PERFAGENT_LLM_TIMEOUT)"
    )
    samples: Annotated[int, Flag("--samples", LLM_GROUP, metavar="N", example="4")] = Field(
        1,
        ge=1,
        description="LLM candidates per request (n when the server supports it, else N requests at rising "
        "temperatures); repeats, comments and whitespace aside, are dropped before any GPU time (default 1)",
    )
    repairs: Annotated[int, Flag("--repairs", LLM_GROUP, metavar="N", example="1")] = Field(
        1,
        ge=0,
        description="repair requests per LLM candidate that fails to compile (the compiler's first errors go "
        "back) or to verify (the failing check's detail goes back); 0: none (default 1)",
    )
    language: Annotated[FirstKernelLanguage, Flag("--language", LLM_GROUP, label="kernel language")] = Field(
        "cuda",
        description="plain-PyTorch KernelBench problem: the language of the first kernel the LLM writes "
        "(write-kernel step; cuda = torch.utils.cpp_extension.load_inline; default cuda)",
    )
    llm_record: Annotated[str | None, Flag("--llm-record", LLM_GROUP, metavar="DIR")] = Field(
        None, description="store every LLM request and reply in the cassette DIR (the key is never stored)"
    )
    llm_replay: Annotated[str | None, Flag("--llm-replay", LLM_GROUP, metavar="DIR")] = Field(
        None,
        description="answer every LLM request from the cassette DIR, no network (unrecorded request = exit 5)",
    )
    llm_price: Annotated[
        tuple[Annotated[float, Field(gt=0)], Annotated[float, Field(gt=0)]] | None,
        Flag("--llm-price", LLM_GROUP, metavar=("PROMPT", "COMPLETION")),
    ] = Field(
        None,
        description="price per 1M prompt / completion tokens: the record then gives each request's and the "
        "run's cost",
    )
    out: Annotated[str | Path | None, Flag("--out", RESULTS_GROUP, metavar="DIR")] = Field(
        None, description="run folder (default: a new one under .perfagent/runs)"
    )
    no_compile_baseline: Annotated[bool, Flag("--no-compile-baseline", VERIFY_GROUP)] = Field(
        False,
        description="KernelBench on a GPU: do not also time torch.compile(Model) (default: timed, and every "
        "speed-up is also given over it)",
    )
    profile_best: Annotated[bool, Flag("--profile-best", VERIFY_GROUP)] = Field(
        False,
        description="also re-profile the last iteration's winner with ncu, for the targeted-metric check of the "
        "final best (default: a winner is re-profiled only when a later iteration plans from its profile)",
    )
    time_budget_s: Annotated[float, Flag("--time-budget", LOOP_GROUP, metavar="SECONDS", example="60")] = (
        Field(
            0.0,
            ge=0,
            description="stop planning when another iteration would not fit this many seconds of wall time, the "
            "original's measurement included (the longest iteration so far is the estimate; the first always "
            "runs; a winner no later iteration can plan from is not re-profiled); default 0: no limit",
        )
    )
    apply: Annotated[bool, Flag("--apply", RESULTS_GROUP)] = Field(
        False,
        description="write the best candidate into TARGET after copying it to TARGET.orig (TARGET.orig.N when "
        "earlier backups exist; none is ever overwritten); a win that needs -D macros or launch geometry also "
        "writes them into STEM.launch.toml beside it (backed up the same way)",
    )
    force: bool = Field(
        False, description="reuse an ``out`` folder that already holds a run (the CLI's --force)"
    )
    verify_seed: int | None = Field(
        None,
        description="first verification seed of every candidate (None: a fresh random one per verification); "
        "set when an LLM conversation is recorded or replayed, so that repair prompts repeat",
    )

    @field_validator("kernel")
    @classmethod
    def _kernel_is_a_regex(cls, value: str | None) -> str | None:
        """``kernel`` is matched with ``re.search``: an invalid pattern is bad input before any work."""
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"{value!r} is not a valid regular expression ({exc})") from None
        return value

    @model_validator(mode="before")
    @classmethod
    def _fold_transform(cls, data: Any) -> Any:
        """``transform=`` (one id or several) is the library's older spelling of ``transforms``."""
        if not isinstance(data, dict) or "transform" not in data:
            return data
        data = dict(data)
        one = data.pop("transform")
        many = data.get("transforms") or ()
        first = [one] if isinstance(one, str) else list(one or ())
        extra = [many] if isinstance(many, str) else list(many)
        data["transforms"] = tuple(dict.fromkeys([*first, *extra]))
        return data

    @classmethod
    def build(cls, base: OptimizeSettings | None = None, **options: Any) -> OptimizeSettings:
        """``base`` (default: the defaults) with ``options`` over it, validated.

        Raises:
            BadInput: a value out of range or not one of the choices (the message names the flag).
            TypeError: an option that does not exist (as for any Python keyword).
        """
        unknown = sorted(set(options) - set(cls.model_fields) - {"transform"})
        if unknown:
            raise TypeError(f"unexpected optimize option(s): {', '.join(unknown)}")
        merged = {**(base.model_dump() if base is not None else {}), **options}
        if "transform" in options and "transforms" not in options:
            merged.pop("transforms", None)  # a new transform= replaces the base's list
        try:
            return cls.model_validate(merged)
        except ValidationError as exc:
            raise _bad_input(exc.errors()[0]) from None

    def with_changes(self, **changes: Any) -> OptimizeSettings:
        """A copy with ``changes``, validated like ``build``."""
        return OptimizeSettings.build(self, **changes)

    def measure_limits(self) -> MeasureLimits:
        """How the original and each candidate are built, verified, timed and re-profiled (the parts' view)."""
        return self._view(MeasureLimits)

    def loop_limits(self) -> LoopLimits:
        """What the loop plans and how far it goes (the loop's view)."""
        return self._view(LoopLimits)

    def _view(self, view: type[_View]) -> _View:
        """``view`` with each of its fields taken from the same-named setting (a list becomes a tuple:
        the views are frozen); a field the settings lack is a programming error, caught by the tests."""
        values: dict[str, Any] = {}
        for field in dataclasses.fields(view):
            value = getattr(self, field.name)
            values[field.name] = tuple(value) if isinstance(value, list) else value
        return view(**values)

    def llm_config(self) -> LLMConfig:
        """The LLM endpoint settings: the environment, overridden by the ``llm_*`` options and ``samples``."""
        config = cassette_config(
            LLMConfig.from_env(
                base_url=self.llm_base_url, model=self.llm_model, timeout_s=self.llm_timeout_s
            ),
            record=self.llm_record,
            replay=self.llm_replay,
        )
        if self.llm_price is not None:
            config = dataclasses.replace(config, price_per_million=self.llm_price)
        return self.with_samples(config)

    def with_samples(self, config: LLMConfig) -> LLMConfig:
        """``config`` asking for ``samples`` candidates per request when more than one was asked for."""
        return dataclasses.replace(config, samples=self.samples) if self.samples > 1 else config

    @staticmethod
    def flag(name: str) -> Flag | None:
        """The CLI spelling of field ``name`` (None: not a CLI option)."""
        info = OptimizeSettings.model_fields[name]
        return next((m for m in info.metadata if isinstance(m, Flag)), None)


def _bad_input(error: ErrorDetails) -> BadInput:
    """One validation error as the one-line ``BadInput`` the CLI prints (exit 2)."""
    name = str(error["loc"][0]) if error["loc"] else "option"
    flag = OptimizeSettings.flag(name) if name in OptimizeSettings.model_fields else None
    label = (flag.label if flag else "") or name
    spelled = flag.name if flag else name
    value = error.get("input")
    ctx = error.get("ctx") or {}
    if error["type"] == "literal_error":
        choices = ctx.get("expected", "").replace("'", "")
        return BadInput(f"unknown {label} '{value}'", hint=f"use one of: {choices}")
    hint = f"e.g. {spelled} {flag.example}" if flag and flag.example else f"check {spelled}"
    if error["type"] == "greater_than_equal":
        bound = ctx.get("ge")
        what = "at least 1" if bound == 1 else f"{bound} or more"
        return BadInput(f"{label} must be {what} (got {value})", hint=hint)
    if error["type"] == "greater_than":
        return BadInput(f"{label} must be more than {ctx.get('gt')} (got {value})", hint=hint)
    return BadInput(f"{label}: {error['msg']} (got {value!r})", hint=hint)
