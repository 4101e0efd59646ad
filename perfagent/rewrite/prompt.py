"""The LLM prompt for one targeted rewrite: one transform (its catalog entry), the evidence behind it,
the profile's hot source lines, the hardware and its peaks, the launch (launch-spec kernels), the source,
and the earlier attempts with what was measured on them (time, speed-up, the targeted metric, verdict).

The system message fixes the rules (one transform, complete file, same interface, no benchmark
tricks: the anti-cheat rules of shared/reference/evaluation.md §3) and the reply format: a JSON object
matching ``RewriteReply`` when the server enforces the schema, else exactly one fenced code block
holding the complete new source.
"""

from __future__ import annotations

import json

from knowledge.gpus import GpuSpec, spec_for
from knowledge.transforms import Transform
from perfagent.rewrite import launch_reply
from perfagent.rewrite.base import WRITE_KERNEL, EarlierAttempt, LaunchContext, RewriteRequest
from perfagent.roofline import datasheet_peaks
from profilers.model import DeviceInfo, Finding

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
- Earlier attempts listed in the request come with what was measured on them; those marked REJECTED
  failed for the reasons given: do not repeat them."""

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
    return language if language in ("cuda", "diff") else "python"


def reply_format(language: str, *, structured: bool, launch: bool = False) -> str:
    """How to reply: JSON (structured output) or a fenced block; with a launch change when ``launch``."""
    if structured:
        return FORMAT_JSON_LAUNCH if launch else FORMAT_JSON
    fmt = FORMAT_FENCED_LAUNCH if launch else FORMAT_FENCED
    return fmt.format(fence_lang=fence_language(language))


def system_message(language: str, *, structured: bool, launch: bool = False) -> str:
    return f"{SYSTEM_RULES}\n\n{reply_format(language, structured=structured, launch=launch)}"


def format_hardware(device: DeviceInfo | None) -> str:
    """One paragraph about the device: what the profile says, completed from the GPU table
    (``knowledge/data/gpus``, the datasheet peaks the roofline uses) when the device is in it.

    A device nobody named (static analysis: the compile target's limits, ``--arch``) is not the GPU the
    kernel runs on: it reads "unknown" (``perfagent.rewrite.hardware``)."""
    if device is None or device.name is None:
        return (
            "Hardware: unknown (no profile recorded on a GPU and no --gpu given): write portable code for a "
            "recent NVIDIA GPU and do not rely on one architecture's features."
        )
    spec = spec_for(device.name)
    parts = [device.name or "unnamed device"]
    if device.arch or spec:
        parts.append(f"arch {device.arch or (spec.arch if spec else '')}")
    if device.compute_capability:
        parts.append(f"compute capability {device.compute_capability}")
    sm_count = device.sm_count or (spec.sm_count if spec else None)
    if sm_count:
        parts.append(f"{sm_count} {'CUs' if device.vendor == 'amd' else 'SMs'}")
    if device.max_shared_memory_per_sm_bytes:
        parts.append(f"{device.max_shared_memory_per_sm_bytes // 1024} KiB shared memory per SM")
    if device.l2_cache_bytes:
        parts.append(f"{device.l2_cache_bytes / 2**20:.0f} MiB L2")
    elif spec and spec.l2_cache_mib:
        parts.append(f"{spec.l2_cache_mib:g} MiB L2")
    if spec and spec.memory_gib:
        parts.append(f"{spec.memory_gib:g} GB memory")
    text = "Hardware: " + ", ".join(parts) + "."
    peaks = _peaks(device, spec)
    if peaks:
        text += f"\nPeaks ({peaks[1]}): " + ", ".join(peaks[0]) + "."
    return text


def _peaks(device: DeviceInfo, spec: GpuSpec | None) -> tuple[list[str], str] | None:
    """The device's peaks as text, and where they come from (measured clocks, the datasheet, or both)."""
    own = device.peaks
    sheet = datasheet_peaks(spec) if spec is not None else None
    dram = own.dram_bytes_per_s or (sheet.dram_bytes_per_s if sheet else None)
    l2 = own.l2_bytes_per_s or (sheet.l2_bytes_per_s if sheet else None)
    flops = dict(sheet.flops_per_s) if sheet else {}
    flops.update({k: v for k, v in own.flops_per_s.items() if v})
    parts = []
    if dram:
        parts.append(f"DRAM {dram / 1e9:.0f} GB/s")
    if l2:
        parts.append(f"L2 {l2 / 1e9:.0f} GB/s")
    for prec, value in sorted(flops.items()):
        parts.append(f"{prec} {value / 1e12:.1f} TFLOP/s")
    if not parts:
        return None
    measured = bool(own.dram_bytes_per_s or own.flops_per_s)
    if sheet is None:
        where = "as the profiler reported them"
    elif measured:
        where = f"the profiler's, completed from the datasheet table knowledge:{spec.id if spec else ''}"
    else:
        where = f"datasheet, knowledge:{spec.id if spec else ''}"
    return parts, where


def format_hot_lines(request: RewriteRequest, limit: int = 10) -> str | None:
    """The profile's hottest source lines (ncu source counters), or None when the profile has none."""
    lines = [sl for sl in request.hot_lines if sl.samples]
    if not lines:
        return None
    total = sum(sl.samples or 0.0 for sl in request.hot_lines)
    out = ["Hot source lines (ncu source counters: warp-state samples per line, hottest first):"]
    for sl in sorted(lines, key=lambda x: -(x.samples or 0.0))[:limit]:
        share = f", {100.0 * (sl.samples or 0.0) / total:.0f} % of the samples" if total else ""
        text = f": {sl.text.strip()}" if sl.text else ""
        note = f" — {sl.note}" if sl.note else ""
        out.append(f"- {sl.file.rsplit('/', 1)[-1]}:{sl.line} ({sl.samples:g} samples{share}){text}{note}")
    return "\n".join(out)


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


def format_launch(launch: LaunchContext, hardware: DeviceInfo | None = None) -> str:
    """How the launch spec launches the kernel, and how a reply may change it (device attributes in the
    evaluated launch are ``hardware``'s; with no GPU named, the ones used are said)."""
    lines = [
        "Launch: perfagent's harness allocates the arguments from the launch spec and launches the kernel "
        "(the source holds no host code).",
        f"- grid = {_expr(launch.grid)}, block = {_expr(launch.block)}, dynamic shared memory = "
        f"{_expr(launch.shared_mem)} bytes",
    ]
    known_sms = hardware.sm_count if hardware is not None and hardware.name else None
    params = {**launch.params, **({"sm_count": known_sms} if known_sms else {})}
    now = launch_reply.evaluated(launch, params)
    if now is not None:
        uses_sms = "sm_count" in json.dumps([launch.grid, launch.block, launch.shared_mem])
        sms = f"; sm_count = {known_sms}" if known_sms else "; sm_count assumed 132, the GPU is unknown"
        lines.append(
            f"  (at the params{sms if uses_sms else ''}: grid {tuple(now[0])}, block {tuple(now[1])}, "
            f"{now[2]} bytes)"
        )
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
    """Earlier attempts with what was measured on them (accepted ones too), then rejections known only by
    their reason; 'Earlier attempts: none.' when there are none."""
    listed = {a.candidate_id for a in request.history}
    rejected = [a for a in request.failed_attempts if a.candidate_id not in listed]
    if not request.history and not rejected:
        return "Earlier attempts: none."
    lines: list[str] = []
    if request.history:
        lines.append("Earlier attempts on this kernel, oldest first, with what was measured:")
        for a in request.history:
            lines.append(f"- {_attempt(a)}")
            if a.diff:  # proposed, not measured yet: the whole proposal, so the next one differs
                lines.append(f"  The proposal in full (a diff against its parent):\n{fenced(a.diff, 'diff')}")
        current = [a.candidate_id for a in request.history if a.accepted]
        if current:
            lines.append(f"The current source below is {current[-1]}'s (the best accepted so far).")
        if any(not a.accepted and a.verdict in REJECTED for a in request.history):
            lines.append("The REJECTED ones failed for the reasons given: do not repeat them.")
    if rejected:
        lines.append("Earlier attempts that were REJECTED (do not repeat them):")
        lines += [f"- {a.candidate_id}: {a.reason}" for a in rejected]
    return "\n".join(lines)


REJECTED = frozenset(
    {"incorrect", "inconclusive", "build-failed", "not-faster", "metric-unmoved", "implausible", "error"}
)
"""Verdicts that say the code was wrong or did not help (not 'not-timed': that is the machine)."""


def _attempt(a: EarlierAttempt) -> str:
    head = f"{a.candidate_id} ({a.transform}): {'ACCEPTED' if a.accepted else a.verdict}"
    if not a.accepted and a.verdict in REJECTED:
        head += ", REJECTED"
    parts = [head]
    if a.description:
        parts.append(f"changed: {' '.join(a.description.split())}")
    if a.time_s is not None:
        before = f" (was {a.time_s_before * 1e3:.4g} ms)" if a.time_s_before else ""
        speed = f", {a.speedup:.3g}x" if a.speedup is not None else ""
        parts.append(f"time {a.time_s * 1e3:.4g} ms{before}{speed}")
    if a.metric and (a.metric_before is not None or a.metric_after is not None):
        moved = {True: "moved as expected", False: "did not move enough", None: "not judged"}[a.metric_moved]
        parts.append(f"{a.metric} {_value(a.metric_before)} -> {_value(a.metric_after)} ({moved})")
    parts.append(f"verdict: {a.reason}")
    return "; ".join(parts)


def _value(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.4g}"


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
            *([hot] if (hot := format_hot_lines(request)) else []),
            *([format_reference_profile(request)] if request.reference_profile else []),
            "Catalog entry for the transform:\n" + entry.as_prompt(request.language),
            *([format_launch(request.launch, request.hardware)] if request.launch is not None else []),
            format_failures(request),
            "Current source:\n" + fenced(request.source, request.language),
        ]
    )


WRITE_RULES = """\
You are a GPU performance engineer. You write the FIRST custom GPU kernel for a PyTorch reference (a
KernelBench problem): a complete Python file defining class ModelNew that computes what the reference's
class Model computes, with the work done in your own kernel(s). Rules:
- ModelNew(nn.Module) takes the same constructor arguments as Model (get_init_inputs()) and its forward the
  same arguments (get_inputs()); it returns the same outputs (shape, dtype, values within fp32 tolerance).
- {how}
- Include every import; do not define Model, get_inputs or get_init_inputs (they come from the reference).
- No benchmark tricks: no caching of results between calls, no special-casing of input values, no
  calls to Model or to torch/cuBLAS ops for the main computation (allocating outputs is fine), no other
  streams or threads, no changes to timing functions.
- Earlier attempts listed in the request come with what was measured on them; those marked REJECTED
  failed for the reasons given: do not repeat them."""

WRITE_HOW = {
    "cuda": "The kernel(s) are CUDA C++ built at import with torch.utils.cpp_extension.load_inline (cpp_sources "
    "holding the wrapper's declaration, cuda_sources the __global__ kernel and a wrapper that launches it on "
    "at::cuda::getCurrentCUDAStream()); forward calls the wrapper.",
    "triton": "The kernel(s) are Triton (@triton.jit, import triton and triton.language as tl); forward "
    "allocates the outputs and launches them with a grid from triton.cdiv.",
}


def write_kernel_message(request: RewriteRequest, entry: Transform) -> str:
    """The user message of a ``write-kernel`` request: the reference, its inputs, the hardware, the entry."""
    lang = request.kernel_language or "cuda"
    where = request.path or "the reference below"
    inputs = "\n".join(f"- {line}" for line in request.inputs) or "- see get_inputs() in the reference"
    return "\n\n".join(
        [
            f"Task: write a first ModelNew with {'CUDA' if lang == 'cuda' else 'Triton'} kernel(s) for {where}.",
            format_hardware(request.hardware),
            "Inputs (dtypes and shapes):\n" + inputs,
            *([format_reference_profile(request)] if request.reference_profile else []),
            "Catalog entry for the transform:\n" + entry.as_prompt("cuda" if lang == "cuda" else "triton"),
            format_failures(request),
            "Reference (the oracle; candidates are verified against its Model):\n"
            + fenced(request.source, "python"),
        ]
    )


def format_reference_profile(request: RewriteRequest) -> str:
    """What the reference launches on the GPU (the profile a first kernel or a rewrite must beat)."""
    lines = "\n".join(f"- {line}" for line in request.reference_profile)
    return "Profile of the reference (its Model, as recorded on the GPU; the time to beat):\n" + lines


def build_messages(request: RewriteRequest, entry: Transform, *, structured: bool) -> list[dict[str, str]]:
    """The chat messages for one rewrite request."""
    if request.transform == WRITE_KERNEL:
        rules = WRITE_RULES.format(how=WRITE_HOW[request.kernel_language or "cuda"])
        return [
            {"role": "system", "content": f"{rules}\n\n{reply_format('python', structured=structured)}"},
            {"role": "user", "content": write_kernel_message(request, entry)},
        ]
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
