"""Run any CUDA recipe on the CUDA a KernelBench ``ModelNew`` holds in ``load_inline`` strings.

``embedded_cuda(request)`` turns a request on a Python source into a request on the CUDA translation
unit its ``load_inline`` call compiles (the ``cuda_sources`` strings joined as load_inline joins
them), with the kernel's launch read from the C++ wrapper as the request's ``LaunchContext``.
``Embedded.propose`` runs a recipe backend on that request and turns each CUDA candidate back into a
complete Python candidate: a launch change (``Candidate.launch``) is written into the wrapper's
``<<<...>>>`` (``wrapper.write_launch``), and the new CUDA text is spliced into the string literals it
came from (``literals.text_edits``), changed lines only, re-read afterwards to prove the Python file
now holds exactly the new CUDA text. The recipes themselves know nothing of Python.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field

from perfagent.rewrite.base import Candidate, RewriteRequest, make_candidate
from perfagent.rewrite.embed.cpp_expr import EmbedError
from perfagent.rewrite.embed.literals import InlineSources, LiteralError, find_inline_sources, text_edits
from perfagent.rewrite.embed.wrapper import WrapperLaunch, read_launch, write_launch
from perfagent.rewrite.recipes import _cuda, _python
from perfagent.rewrite.recipes._cuda import Edit

__all__ = ["Embedded", "embedded_cuda"]


@dataclass
class Embedded:
    """A Python request seen as a request on its load_inline CUDA."""

    request: RewriteRequest
    """The original (Python) request."""
    inner: RewriteRequest
    """The same request on the CUDA translation unit (language 'cuda', the wrapper's launch)."""
    sources: InlineSources
    launch: WrapperLaunch | None
    launch_note: str | None
    """Why there is no launch context (None when there is one)."""
    dropped: list[str] = field(default_factory=list)
    """CUDA candidates that could not be written back, with the reason."""

    @property
    def where(self) -> str:
        return f"the load_inline CUDA source (line {self.sources.line})"

    def explain(self, why: str | None) -> str | None:
        """A recipe's reason on the CUDA, said of the Python file (with why the launch was not read)."""
        return None if why is None else f"in {self.where}: {self.annotate(why)}"

    def annotate(self, why: str) -> str:
        """``why`` with the reason the wrapper's launch is unknown, when ``why`` is about the launch."""
        if self.inner.launch is None and self.launch_note and "launch spec" in why:
            return f"{why} (the wrapper's launch is not read: {self.launch_note})"
        return why

    def each_kernel(self) -> list[Embedded]:
        """One request per kernel, each with its own launch from the wrapper, when the CUDA defines
        several kernels and the request names none (a multi-kernel extension such as layer norm's
        statistics and apply kernels); else nothing: the request already stands for its kernel."""
        names = _kernel_names(self.sources.cuda_text)
        if self.request.kernel is not None or len(names) < 2:
            return []
        out = []
        for name in names:
            one = embedded_cuda(self.request.model_copy(update={"kernel": name}))
            assert isinstance(one, Embedded)  # the same source, now with a kernel named
            out.append(one)
        return out

    def propose(self, propose: Callable[[RewriteRequest], list[Candidate]]) -> list[Candidate]:
        """``propose`` on the CUDA request, each candidate written back into the Python source."""
        out: list[Candidate] = []
        for cand in propose(self.inner):
            try:
                out.append(self.to_python(cand))
            except (EmbedError, LiteralError, _cuda.ParseError, ValueError) as exc:
                self.dropped.append(f"{cand.recipe or cand.transform}: {exc}")
        if self.dropped and out:
            note = f"{len(self.dropped)} other candidate(s) could not be written back: {'; '.join(self.dropped[:2])}"
            out = [c.model_copy(update={"notes": [*c.notes, note]}) for c in out]
        return out

    def to_python(self, cand: Candidate) -> Candidate:
        """The Python candidate carrying ``cand``'s CUDA (and launch) in the load_inline strings.

        Raises:
            EmbedError: the launch change cannot be written in the wrapper.
            LiteralError: the new text cannot be written into the string literals.
            ParseError: the result does not parse (C++ or Python).
        """
        text = cand.source
        notes = list(cand.notes)
        launch = cand.launch
        if launch is not None and launch.model_dump(exclude_none=True):
            if self.launch is None:
                raise EmbedError(f"the candidate changes the launch, but {self.launch_note}")
            text = write_launch(text, self.launch, launch)
            notes = [n for n in notes if not n.startswith("source unchanged")]
            notes.append(
                f"launch written in the wrapper {self.launch.function}() (line {self.launch.line}) "
                "with the wrapper's own sizes"
            )
        python = _splice(self.request.source, self.sources, text)
        if cand.defines:
            macros = ", ".join(f"{k}={v}" for k, v in sorted(cand.defines.items()))
            notes.append(f"macros {macros} are written in the source (load_inline passes no -D)")
        notes.append(f"rewritten in {self.where}")
        return make_candidate(
            self.request,
            backend=cand.backend,
            source=python,
            description=cand.description,
            recipe=cand.recipe,
            parameters=dict(cand.parameters),
            tokens=cand.tokens,
            notes=notes,
        )


def embedded_cuda(request: RewriteRequest) -> Embedded | str | None:
    """The request on the load_inline CUDA of a Python source.

    Returns:
        None when the source is not Python or holds no load_inline CUDA (nothing embedded); a reason
        when it does but the CUDA cannot be edited; else the ``Embedded`` request.
    """
    if request.language != "python" or "load_inline" not in request.source:
        return None
    try:
        found = [s for s in find_inline_sources(request.source) if s.cuda]
    except LiteralError as exc:
        return str(exc)
    except SyntaxError as exc:
        return f"the Python source does not parse (line {exc.lineno}: {exc.msg})"
    with_kernels = [s for s in found if _kernel_names(s.cuda_text)]
    if request.kernel is not None:
        with_kernels = [s for s in with_kernels if request.kernel in _kernel_names(s.cuda_text)]
    if not with_kernels:
        return (
            None
            if not found
            else "the load_inline CUDA source defines no __global__ kernel"
            + (f" named {request.kernel}" if request.kernel else "")
        )
    if len(with_kernels) > 1:
        lines = ", ".join(str(s.line) for s in with_kernels)
        return f"several load_inline calls define kernels (lines {lines}): name the kernel to rewrite"
    sources = with_kernels[0]
    launch, note = _launch(sources.cuda_text, request.kernel)
    inner = request.model_copy(
        update={
            "source": sources.cuda_text,
            "language": "cuda",
            "path": f"{request.path or 'ModelNew'} (load_inline CUDA, line {sources.line})",
            "launch": launch.context if launch is not None else None,
        }
    )
    return Embedded(request=request, inner=inner, sources=sources, launch=launch, launch_note=note)


def _kernel_names(text: str) -> list[str]:
    tree = _cuda.parse(text)
    return [name for fn in _cuda.kernels(tree) if (name := _cuda.function_name(fn))]


def _launch(text: str, kernel: str | None) -> tuple[WrapperLaunch | None, str | None]:
    tree = _cuda.parse(text)
    if _cuda.first_error(tree) is not None:
        return None, "tree-sitter-cuda cannot parse the CUDA source cleanly"
    names = _kernel_names(text)
    name = kernel or (names[0] if len(names) == 1 else None)
    if name is None:
        return None, f"the CUDA source defines {len(names)} kernels and none is named"
    try:
        return read_launch(tree, name), None
    except EmbedError as exc:
        return None, f"the launch cannot be read from the wrapper: {exc}"


def _splice(python: str, sources: InlineSources, new_text: str) -> str:
    """``python`` with the CUDA strings of ``sources`` holding ``new_text`` (changed lines only).

    Raises:
        LiteralError: an edit spans two strings of a list, or cannot be written in its literal.
        ParseError: the Python result does not compile.
    """
    values = _split(sources, new_text)
    edits: list[Edit] = []
    for literal, value in zip(sources.cuda, values, strict=True):
        if value != literal.value:
            edits.extend(text_edits(literal, value))
    result = _python.apply_edits(python, edits)
    again = [s for s in find_inline_sources(result) if s.index == sources.index]
    if len(again) != 1 or again[0].cuda_text != new_text:
        raise LiteralError("the rewritten string literals do not read back as the new CUDA text")
    return result


def _split(sources: InlineSources, new_text: str) -> list[str]:
    """The new value of each CUDA string of ``sources`` (joined by newlines, they make ``new_text``)."""
    old = [s.value for s in sources.cuda]
    if len(old) == 1:
        return [new_text]

    old_text = "\n".join(old)
    bounds, pos = [], 0
    for value in old:
        bounds.append((pos, pos + len(value)))
        pos += len(value) + 1
    pieces: list[list[tuple[int, int, str]]] = [[] for _ in old]
    old_lines, new_lines = old_text.splitlines(keepends=True), new_text.splitlines(keepends=True)
    starts = [0]
    for line in old_lines:
        starts.append(starts[-1] + len(line))
    new_starts = [0]
    for line in new_lines:
        new_starts.append(new_starts[-1] + len(line))
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(
        None, old_lines, new_lines, autojunk=False
    ).get_opcodes():
        if op == "equal":
            continue
        a, b, repl = starts[i1], starts[i2], new_text[new_starts[j1] : new_starts[j2]]
        k = next(k for k, (s, e) in enumerate(bounds) if s <= a <= e)
        start, end = bounds[k]
        if b == end + 1 and repl.endswith("\n"):
            b, repl = end, repl[:-1]  # the separator newline is load_inline's, not the string's
        if b > end:
            raise LiteralError("a rewrite spans two strings of the load_inline source list: not written back")
        pieces[k].append((a - start, b - start, repl))
    out = []
    for value, edits in zip(old, pieces, strict=True):
        for a, b, repl in sorted(edits, reverse=True):
            value = value[:a] + repl + value[b:]
        out.append(value)
    if "\n".join(out) != new_text:
        raise LiteralError("the rewrite cannot be divided among the load_inline source list")
    return out
