"""The LLM prompt for one targeted rewrite: one transform, the evidence behind it, the hardware, the
source, and every earlier failed attempt with its reason.

The system message fixes the rules (one transform, complete file, same interface, no benchmark
tricks: the anti-cheat rules of shared/reference/evaluation.md §3) and the reply format: a JSON object
matching ``RewriteReply`` when the server enforces the schema, else exactly one fenced code block
holding the complete new source.
"""

from __future__ import annotations

import json

from knowledge.transforms import Transform
from perfagent.models import DeviceInfo, Finding
from perfagent.rewrite import launch_reply
from perfagent.rewrite.base import LaunchContext, RewriteRequest

SYSTEM_RULES = """\
You are a GPU performance engineer. You rewrite ONE kernel source file to apply ONE named optimisation
(a transform from a catalog), guided by profiler evidence. Rules:
- Apply only the requested transform (and what it strictly needs); do not make unrelated changes.
- Return the COMPLETE new file, not a diff or a fragment: it replaces the original as is.
- Keep every kernel's name, parameters, launch contract (unless the transform is about the launch),
  the host interface (for Python: the same functions/classes, e.g. ModelNew with the same forward
  signature) and the numerical result (within fp32 tolerance; do not lower precision unless the
  transform says so).
- No benchmark tricks: no caching of results between calls, no special-casing of input values or
  shapes, no work on other streams or threads, no skipping work, no calls to library kernels
  (torch/cuBLAS) in place of the kernel, no changes to timing functions.
- Earlier attempts listed in the request were rejected for the reasons given: do not repeat them."""

FORMAT_JSON = """\
Reply with a JSON object with two fields: "new_source" (the complete new file as a string) and
"explanation" (two or three sentences: what you changed and which metric should move)."""

FORMAT_FENCED = """\
Reply with exactly ONE fenced code block (```{fence_lang} ... ```) holding the complete new file,
followed by two or three sentences: what you changed and which metric should move. No other code blocks."""

FORMAT_JSON_LAUNCH = """\
Reply with a JSON object with three fields: "new_source" (the complete new file as a string),
"explanation" (two or three sentences: what you changed and which metric should move) and "launch":
null to keep the current launch, or {"grid": [...], "block": [...], "shared_mem": ...} with every
value an expression string of the launch spec's params (null for a part you keep)."""

FORMAT_FENCED_LAUNCH = """\
Reply with exactly ONE fenced code block (```{fence_lang} ... ```) holding the complete new file. If the
rewrite needs another launch, add ONE ```toml block after it with a [launch] table, e.g.
[launch]
grid = ["ceil_div(rows, 8)"]
block = ["32 * 8"]
(grid, block and shared_mem are expressions of the launch spec's params; leave out what you keep).
Then two or three sentences: what you changed and which metric should move. No other code blocks."""


def fence_language(language: str) -> str:
    return "cuda" if language == "cuda" else "python"


def reply_format(language: str, *, structured: bool, launch: bool = False) -> str:
    """How to reply: JSON (structured output) or a fenced block; with a launch change when ``launch``."""
    if structured:
        return FORMAT_JSON_LAUNCH if launch else FORMAT_JSON
    fmt = FORMAT_FENCED_LAUNCH if launch else FORMAT_FENCED
    return fmt.format(fence_lang=fence_language(language))


def system_message(language: str, *, structured: bool, launch: bool = False) -> str:
    return f"{SYSTEM_RULES}\n\n{reply_format(language, structured=structured, launch=launch)}"


def format_hardware(device: DeviceInfo | None) -> str:
    """One paragraph about the device (what the profile says; 'unknown' when it says nothing)."""
    if device is None or (device.name is None and device.arch is None):
        return "Hardware: unknown (static analysis or not reported)."
    parts = [device.name or "unnamed device"]
    if device.arch:
        parts.append(f"arch {device.arch}")
    if device.compute_capability:
        parts.append(f"compute capability {device.compute_capability}")
    if device.sm_count:
        parts.append(f"{device.sm_count} SMs")
    if device.max_shared_memory_per_sm_bytes:
        parts.append(f"{device.max_shared_memory_per_sm_bytes // 1024} KiB shared memory per SM")
    if device.l2_cache_bytes:
        parts.append(f"{device.l2_cache_bytes / 2**20:.0f} MiB L2")
    peaks = device.peaks
    if peaks.dram_bytes_per_s:
        parts.append(f"DRAM {peaks.dram_bytes_per_s / 1e9:.0f} GB/s")
    for prec, value in sorted(peaks.flops_per_s.items()):
        parts.append(f"{prec} {value / 1e12:.1f} TFLOP/s")
    return "Hardware: " + ", ".join(parts) + "."


def format_finding(finding: Finding | None) -> str:
    """The diagnosis behind the request: category, explanation, every piece of evidence."""
    if finding is None:
        return "Diagnosis: none given (the transform was requested directly)."
    lines = [
        f"Diagnosis ({finding.severity}, category {finding.category}): {finding.title}",
        finding.explanation.strip(),
    ]
    if finding.evidence:
        lines.append("Evidence:")
        for ev in finding.evidence:
            value = "n/a" if ev.value is None else ev.value
            unit = f" {ev.unit}" if ev.unit else ""
            rule = f" (threshold {ev.comparison or ''} {ev.threshold:g})" if ev.threshold is not None else ""
            note = f" — {ev.note}" if ev.note else ""
            lines.append(f"- {ev.metric} = {value}{unit}{rule}{note}")
    if finding.estimated_speedup is not None:
        formula = f" ({finding.speedup_formula})" if finding.speedup_formula else ""
        lines.append(f"Estimated speed-up bound (an estimate): {finding.estimated_speedup:.2f}x{formula}")
    if finding.source_lines:
        lines.append("Hot source lines:")
        for sl in finding.source_lines[:10]:
            text = f": {sl.text.strip()}" if sl.text else ""
            note = f" — {sl.note}" if sl.note else ""
            lines.append(f"- {sl.file}:{sl.line}{text}{note}")
    return "\n".join(lines)


def _expr(value: object) -> str:
    return json.dumps(value) if isinstance(value, list) else str(value)


def format_launch(launch: LaunchContext) -> str:
    """How the launch spec launches the kernel, and how a reply may change it."""
    lines = [
        "Launch: perfagent's harness allocates the arguments from the launch spec and launches the kernel "
        "(the source holds no host code).",
        f"- grid = {_expr(launch.grid)}, block = {_expr(launch.block)}, dynamic shared memory = "
        f"{_expr(launch.shared_mem)} bytes",
    ]
    now = launch_reply.evaluated(launch)
    if now is not None:
        lines.append(f"  (at the params: grid {tuple(now[0])}, block {tuple(now[1])}, {now[2]} bytes)")
    if launch.params:
        lines.append("- params: " + ", ".join(f"{k} = {v}" for k, v in launch.params.items()))
    if launch.defines:
        lines.append(
            "- defines (-D macros, also usable in expressions): "
            + ", ".join(f"{k} = {v}" for k, v in launch.defines.items())
        )
    lines.extend(
        "- verification also runs: " + ", ".join(f"{k} = {v}" for k, v in extra.items())
        for extra in launch.check_params
    )
    if launch.args:
        lines.append("- arguments, in the kernel's parameter order:")
        for arg in launch.args:
            dtype = arg.dtype or ("float32" if arg.value is None else "")
            if arg.value is not None:
                lines.append(f"  - {arg.name}: {dtype} scalar = {arg.value}".replace(":  scalar", ": scalar"))
            else:
                shape = ", ".join(str(d) for d in arg.shape)
                lines.append(f"  - {arg.name}: {dtype}[{shape}] ({arg.role or 'input'})")
    lines.append(
        "The launch may change with the kernel (e.g. a warp per row needs 32 times the threads): give grid, "
        "block and shared_mem as expressions of the params, the defines and the device attributes "
        "(sm_count, max_threads_per_sm, max_threads_per_block, warp_size), with numbers, + - * / // % ** and "
        "min, max, ceil_div. Every dimension must be a whole number of at least 1 for every parameter set "
        "above, at most 1024 threads per block. The arguments and their order cannot change."
    )
    return "\n".join(lines)


def format_failures(request: RewriteRequest) -> str:
    if not request.failed_attempts:
        return "Earlier attempts: none."
    lines = ["Earlier attempts that were REJECTED (do not repeat them):"]
    lines += [f"- {a.candidate_id}: {a.reason}" for a in request.failed_attempts]
    return "\n".join(lines)


def fenced(source: str, language: str) -> str:
    """``source`` in a fence that its own content cannot close."""
    fence = "```"
    while fence in source:
        fence += "`"
    return f"{fence}{fence_language(language)}\n{source.rstrip()}\n{fence}"


def user_message(request: RewriteRequest, entry: Transform) -> str:
    target = f"kernel `{request.kernel}` in " if request.kernel else ""
    where = request.path or "the file below"
    return "\n\n".join(
        [
            f"Task: apply the transform `{entry.id}` to {target}{where} ({request.language}).",
            format_hardware(request.hardware),
            format_finding(request.finding),
            "Catalog entry for the transform:\n" + entry.as_prompt(request.language),
            *([format_launch(request.launch)] if request.launch is not None else []),
            format_failures(request),
            "Current source:\n" + fenced(request.source, request.language),
        ]
    )


def build_messages(request: RewriteRequest, entry: Transform, *, structured: bool) -> list[dict[str, str]]:
    """The chat messages for one rewrite request."""
    launch = request.launch is not None
    return [
        {"role": "system", "content": system_message(request.language, structured=structured, launch=launch)},
        {"role": "user", "content": user_message(request, entry)},
    ]


def repair_message(problem: str, language: str, *, structured: bool, launch: bool = False) -> str:
    """The follow-up user message after an unusable reply."""
    fmt = reply_format(language, structured=structured, launch=launch)
    return f"Your reply could not be used: {problem}. Try again.\n{fmt}"


FIX_LINES = 20
"""Most lines of compiler or verifier output quoted back in a repair request."""


def first_lines(text: str, limit: int = FIX_LINES) -> str:
    """The first ``limit`` lines of ``text`` (and how many more there were)."""
    lines = text.strip().splitlines()
    if len(lines) <= limit:
        return "\n".join(lines)
    return "\n".join([*lines[:limit], f"... ({len(lines) - limit} more lines)"])


def fix_message(feedback: str, request: RewriteRequest, *, structured: bool, launch: bool = False) -> str:
    """The user message asking to repair a candidate that failed to compile or verify."""
    fmt = reply_format(request.language, structured=structured, launch=launch)
    return (
        f"That rewrite was built and checked against the original, and it failed:\n{feedback.strip()}\n\n"
        f"Fix it: keep applying `{request.transform}`, change only what the failure needs, and send the "
        f"complete corrected file.\n{fmt}"
    )
