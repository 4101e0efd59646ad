"""What the model sent back: the structured reply schema, and turning a reply into a usable rewrite.

A reply is usable when it is a ``RewriteReply`` JSON object, or content holding the complete new source
in a fenced code block (the last block in the expected language that passes the source checks); a
launch-spec kernel's reply may carry a launch change (checked by ``launch_reply``). Anything else is
the problem with it in plain words, which ``perfagent.rewrite.llm`` sends back as a repair message.
``normalised`` and ``launch_key`` say when two samples are the same candidate.
"""

from __future__ import annotations

import copy
import io
import json
import re
import tokenize
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from perfagent.rewrite import launch_reply, prompt
from perfagent.rewrite.base import LaunchContext, TokenUsage
from perfagent.workloads.base import Language
from perfagent.workloads.launch_spec import LaunchOverride

_FENCE = re.compile(
    r"^(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+.-]*)[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S
)


_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_UNCLOSED_REASONING = re.compile(r"^\s*<(think|thinking|reasoning)>.*?$", re.S | re.I)
_LANGUAGE_FENCES: dict[str, tuple[str, ...]] = {
    "cuda": ("cuda", "cu", "cpp", "c++", "c", "cuh"),
    "triton": ("python", "py", "triton"),
    "python": ("python", "py"),
}
_REFUSAL = re.compile(
    r"^\s*(i('| a)m sorry|sorry,|i can(no|')t (help|assist|do)|i('m| am) (not able|unable) to|as an ai)", re.I
)


def strip_reasoning(text: str) -> str:
    """``text`` without reasoning-model thought blocks (``<think>…</think>``; DeepSeek-R1, Qwen3, …).

    A reply cut off inside its thoughts (``<think>`` never closed) has no answer at all: empty.
    """
    text = _REASONING.sub("", text)
    return "" if _UNCLOSED_REASONING.match(text) else text.strip()


class RewriteReply(BaseModel):
    """The structured reply the model is asked for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    new_source: str
    """The complete new source file."""
    explanation: str
    """What changed and which metric should move."""
    launch: dict[str, Any] | None = None
    """Launch-spec kernels: the new grid / block / shared_mem expressions (None: the current launch)."""


def reply_schema(*, launch: bool = False) -> dict[str, Any]:
    """The ``response_format`` payload for ``RewriteReply`` (strict JSON schema).

    ``launch``: the request is for a launch-spec kernel, and the reply may change its launch (the
    ``launch`` field, required but nullable as strict mode wants).
    """
    schema = copy.deepcopy(RewriteReply.model_json_schema())
    schema["properties"].pop("launch", None)
    if not launch:
        return {
            "type": "json_schema",
            "json_schema": {"name": "RewriteReply", "schema": schema, "strict": True},
        }
    schema["properties"]["launch"] = launch_reply.schema()
    schema["required"] = [*schema["required"], "launch"]
    return {
        "type": "json_schema",
        "json_schema": {"name": "RewriteReplyWithLaunch", "schema": schema, "strict": True},
    }


@dataclass(frozen=True)
class ParsedReply:
    """A usable reply: the complete new source, the explanation, and the launch change (if any)."""

    source: str
    explanation: str
    launch: LaunchOverride | None = None


def parse_reply(content: str | None, language: Language, original: str) -> tuple[str, str] | str:
    """(new source, explanation) from a reply's content, or the problem with it in plain words."""
    parsed = parse_full(content, language, original)
    return parsed if isinstance(parsed, str) else (parsed.source, parsed.explanation)


def parse_full(
    content: str | None,
    language: Language,
    original: str,
    launch: LaunchContext | None = None,
    kernel_language: str | None = None,
) -> ParsedReply | str:
    """The usable reply in ``content``, or the problem with it in plain words.

    ``launch``: the launch-spec kernel's current launch; the reply may then carry a launch change (the
    JSON ``launch`` object, or a ```toml block with ``[launch]``), which must pass
    ``launch_reply.check``. Without it a launch change is ignored.
    """
    if content is None or not content.strip():
        return "the reply was empty"
    text = strip_reasoning(content)
    if not text:
        return "the reply holds only the model's reasoning (<think> block), no answer"
    source: str | None = None
    explanation = ""
    change: LaunchOverride | None | str = None
    if text.startswith("{"):
        try:
            reply = RewriteReply.model_validate(json.loads(text))
        except (json.JSONDecodeError, ValidationError) as exc:
            first = str(exc).splitlines()[0]
            if "```" not in text:
                return f"the reply looks like JSON but is not a valid RewriteReply object ({first})"
        else:
            source, explanation = reply.new_source, reply.explanation
            inner = _fenced_blocks(source)
            if len(inner) == 1 and source.strip().startswith(("```", "~~~")):
                source = inner[0][1]
            if launch is not None:
                change = launch_reply.from_data(reply.launch, "launch")
    if source is None:
        picked = _pick_block(text, language, original)
        if isinstance(picked, str):
            return picked
        source = picked[0]
        explanation = _FENCE.sub("", text).strip()
        if launch is not None:
            change = _toml_launch(text)
    if isinstance(change, str):
        return change
    if change is not None and launch is not None:
        if launch_reply.same_as(change, launch):
            change = None
        else:
            problem = launch_reply.check(change, launch)
            if problem is not None:
                return problem
    problem = _check_source(source, language, original, launch_changed=change is not None)
    if problem is None and kernel_language is not None:
        problem = _check_first_kernel(source, kernel_language)
    if problem is not None:
        return problem
    return ParsedReply(
        source if source.endswith("\n") else source + "\n", " ".join(explanation.split()), change
    )


def _toml_launch(text: str) -> LaunchOverride | None | str:
    """The launch change of a fenced reply: its one ```toml block (None: there is none)."""
    blocks = [body for lang, body in _fenced_blocks(text) if lang.lower() == "toml"]
    if not blocks:
        return None
    if len(blocks) > 1:
        return "the reply holds several toml blocks: send one [launch] table"
    return launch_reply.from_toml(blocks[0])


def _pick_block(text: str, language: Language, original: str) -> tuple[str] | str:
    """The one code block that is the complete new file, or why none is.

    Models often show a fragment of the original before the full rewrite, or add a usage example:
    among the blocks in the expected language, the ones that pass the source checks are the
    candidates, and the last of them (the conclusion of the reply) is taken.
    """
    blocks = _fenced_blocks(text)
    if not blocks:
        if _REFUSAL.match(text):
            return f"the model refused: {' '.join(text.split())[:160]}"
        return "the reply holds no fenced code block (and no JSON object with new_source)"
    accepted = _LANGUAGE_FENCES[language]
    tagged = [b for b in blocks if b[0].lower() in accepted]
    untagged = [b for b in blocks if not b[0]]
    pool = tagged or untagged
    if not pool:
        langs = ", ".join(sorted({b[0] for b in blocks}))
        return f"the reply's code is in {langs}, not {prompt.fence_language(language)}: send the complete {language} file"
    valid = [b for b in pool if _check_source(b[1], language, original) is None]
    if valid:
        return (valid[-1][1],)
    if len(pool) > 1:
        return f"the reply holds {len(blocks)} code blocks and none is the complete file"
    return (pool[0][1],)


def _fenced_blocks(text: str) -> list[tuple[str, str]]:
    return [(m.group("lang"), m.group("body")) for m in _FENCE.finditer(text)]


def _check_source(
    source: str, language: Language, original: str, *, launch_changed: bool = False
) -> str | None:
    if not source.strip():
        return "the code block is empty"
    if source.strip() == original.strip() and not launch_changed:
        return "the new source is identical to the original: the transform was not applied"
    if language == "cuda":
        if "__global__" in original and "__global__" not in source:
            return "the new source has no __global__ kernel: send the complete file, not a fragment"
    else:
        try:
            compile(source, "<candidate>", "exec", dont_inherit=True)
        except SyntaxError as exc:
            return f"the new Python source does not parse (line {exc.lineno}: {exc.msg})"
        if "def " in original and "def " not in source:
            return "the new source defines no function: send the complete file, not a fragment"
    return None


def _check_first_kernel(source: str, kernel_language: str) -> str | None:
    """A ``write-kernel`` reply must be a ModelNew file with a kernel in the asked-for language."""
    if not re.search(r"^class\s+ModelNew\b", source, re.M):
        return "the new file defines no class ModelNew: send the complete file"
    if kernel_language == "triton" and "@triton.jit" not in source:
        return "the new file has no @triton.jit kernel: write the computation as a Triton kernel"
    if kernel_language == "cuda" and ("load_inline" not in source or "__global__" not in source):
        return (
            "the new file has no CUDA kernel built with torch.utils.cpp_extension.load_inline "
            "(a __global__ kernel in cuda_sources)"
        )
    return None


_C_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def normalised(source: str, language: Language) -> str:
    """``source`` without comments and whitespace: two samples that differ only there are one candidate.

    CUDA: ``//`` and ``/* */`` comments go; Python: ``#`` comments and blank lines go, indentation is kept
    as the tokenizer's block markers (a source that does not tokenize loses ``#`` to the end of a line).
    """
    if language == "cuda":
        text = _C_COMMENTS.sub(" ", source)
    else:
        text = _python_without_comments(source)
    return "".join(text.split())


def _python_without_comments(source: str) -> str:
    markers = {tokenize.NEWLINE: ";", tokenize.INDENT: "{", tokenize.DEDENT: "}"}
    try:
        tokens = [
            markers.get(t.type, t.string)
            for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type not in (tokenize.COMMENT, tokenize.NL)
        ]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return re.sub(r"#[^\n]*", " ", source)
    return " ".join(tokens)


def launch_key(launch: LaunchOverride | None) -> str:
    """What a launch change adds to a sample's identity (same source, other launch: another candidate)."""
    return "" if launch is None else "\0" + launch.model_dump_json(exclude_none=True)


def response_usage(response: Any, wall_s: float) -> TokenUsage:
    """The tokens a chat-completions ``response`` reports (none when the server sends no usage), unpriced."""
    usage = TokenUsage(requests=1, wall_s=wall_s)
    if response.usage is None:
        return usage
    return usage.model_copy(
        update={
            "prompt_tokens": response.usage.prompt_tokens or 0,
            "completion_tokens": response.usage.completion_tokens or 0,
        }
    )


def response_choices(response: Any) -> list[tuple[str | None, str | None]]:
    """Each choice as (content, finish reason); a refusal with no content reads as a short apology."""
    choices: list[tuple[str | None, str | None]] = []
    for choice in response.choices:
        refusal = getattr(choice.message, "refusal", None)
        if refusal and not choice.message.content:
            choices.append((f"I'm sorry: {refusal}", "refusal"))
        else:
            choices.append((choice.message.content, choice.finish_reason))
    return choices
