"""The tools' input types: every property described, enums from perfagent's catalogs, minimums.

An agent reads the input schema, not perfagent's docs: ``kernel`` must say it is a regular
expression, ``backend`` must list ``auto``, a transform id must be one of the catalog's, and
``limit=-1`` must be refused rather than silently dropping a run.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from knowledge.transforms import catalog
from perfagent.optimize.settings import Backend, FirstKernelLanguage
from profilers.settings import Device

TRANSFORM_IDS: tuple[str, ...] = tuple(sorted(catalog()))
ProfilerName = Literal["auto", "ncu", "rocprof", "static"]
"""perfagent.api.PROFILERS (a test keeps the two equal)."""


def _known_transform(value: str) -> str:
    if value not in TRANSFORM_IDS:
        raise ValueError(f"unknown transform {value!r}; known: {', '.join(TRANSFORM_IDS)}")
    return value


TransformId = Annotated[
    str,
    AfterValidator(_known_transform),
    Field(
        description="A transform catalog id (list_targets lists them with what each fixes).",
        json_schema_extra={"enum": list(TRANSFORM_IDS)},
    ),
]

Target = Annotated[
    str,
    Field(
        description="Path under the server's root (relative to it, or absolute): a recorded report "
        "(.ncu-rep, ncu CSV, rocprof output), a saved run (folder, record.json or run id), a .cu kernel "
        "with its *.launch.toml spec (or the spec), a KernelBench problem / ModelNew .py, or a Triton script.",
        min_length=1,
    ),
]
ReportTarget = Annotated[
    str,
    Field(
        description="A recorded report (.ncu-rep, ncu CSV, rocprof output) or a saved run (folder, "
        "record.json) under the server's root; reading it runs nothing.",
        min_length=1,
    ),
]
RunRef = Annotated[
    str,
    Field(
        description='A saved run: its id (the folder name list_runs shows), "latest", or its folder / '
        "record.json path under the root.",
        min_length=1,
    ),
]
KernelRegex = Annotated[
    str | None,
    Field(
        description="A Python regular expression (re.search) over kernel names; only matching kernels "
        "are kept. Escape ( ) < > [ ] in C++ signatures, e.g. 'transpose_naive' or '^gemm'.",
    ),
]
Profiler = Annotated[
    ProfilerName,
    Field(
        description="auto: recorded reports by their tool, programs by ncu when usable; static needs no GPU."
    ),
]
DeviceArg = Annotated[
    Device, Field(description="Where candidate code runs: auto (a GPU when present), cpu, or cuda.")
]
BackendArg = Annotated[
    Backend,
    Field(
        description="Rewriter: recipes (deterministic), llm (an OpenAI-compatible endpoint), auto (llm when configured)."
    ),
]
LanguageArg = Annotated[
    FirstKernelLanguage,
    Field(description="llm backend, plain-PyTorch problem: the language of the first kernel written."),
]
Detail = Annotated[
    Literal["summary", "full"],
    Field(
        description="summary (default): the numbers to act on, a few KB; full: also the whole record "
        "(can exceed an agent host's reply cap for many kernels)."
    ),
]
TopK = Annotated[
    int, Field(ge=1, le=500, description="At most this many kernels (and candidates) in the summary.")
]
Limit = Annotated[int, Field(ge=1, le=1000, description="At most this many entries.")]
Budget = Annotated[
    float,
    Field(
        gt=0, le=86_400, description="Seconds the job may run; it is stopped (and its run kept) beyond that."
    ),
]
