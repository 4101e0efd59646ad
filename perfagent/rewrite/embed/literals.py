"""CUDA source held in Python string literals passed to ``torch.utils.cpp_extension.load_inline``.

``find_inline_sources`` walks the Python ``ast`` for ``load_inline(...)`` calls and resolves their
``cuda_sources`` / ``cpp_sources`` arguments to the string literals that hold them: a literal, a
name bound once (in the calling function or at module level) to a literal, or a list / tuple of
those. Each literal keeps a map from every character of its *value* to the byte offset in the Python
source where that character is written, so that an edit of the CUDA text becomes an exact edit of
the Python source (``text_edits``), escapes included (``"\\n"`` in a non-raw string is one character
of the value and two bytes of the source). f-strings, concatenations with ``+`` and names bound more
than once are refused with the line: the value would not be a fixed text.
"""

from __future__ import annotations

import ast
import difflib
import unicodedata
from dataclasses import dataclass
from typing import Literal

from perfagent.rewrite.recipes._cuda import Edit
from perfagent.rewrite.recipes._python import SourceMap, dotted
from perfagent.workloads.python_ast import parse_module

Role = Literal["cuda", "cpp"]
_SIMPLE_ESCAPES = {
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
}
_POSITIONAL = {1: "cpp", 2: "cuda"}
"""``load_inline(name, cpp_sources, cuda_sources, ...)``: positional slots of the sources."""


class LiteralError(ValueError):
    """A source argument is not a fixed string literal, or an edit cannot be written back into it."""


@dataclass(frozen=True)
class StringLiteral:
    """One Python string literal token: its value and where each value character is written."""

    value: str
    prefix: str
    """Lower-cased string prefix ('', 'r', 'u')."""
    quote: str
    """The delimiter: ', ", ''' or \"\"\"."""
    offsets: tuple[int, ...]
    """Byte offset in the Python source of each value character, plus one entry for the end of the body."""
    line: int

    @property
    def raw(self) -> bool:
        return "r" in self.prefix


@dataclass(frozen=True)
class InlineSources:
    """The sources of one ``load_inline`` call, in the order load_inline joins them."""

    index: int
    """Position among the file's load_inline calls with CUDA sources (stable across edits of the strings)."""
    line: int
    """Line of the call."""
    name: str | None
    """The extension's ``name=`` when it is a literal."""
    cuda: tuple[StringLiteral, ...]
    cpp: tuple[StringLiteral, ...]

    @property
    def cuda_text(self) -> str:
        """The CUDA translation unit as load_inline builds it (its own includes aside): values joined by newlines."""
        return "\n".join(s.value for s in self.cuda)


def find_inline_sources(source: str) -> list[InlineSources]:
    """Every ``load_inline`` call of ``source`` whose source arguments resolve to string literals.

    Raises:
        LiteralError: a call's ``cuda_sources`` is not a fixed literal (the message names the line).
        SyntaxError: the Python source does not parse.
    """
    tree = parse_module(source)
    smap = SourceMap(source)
    out: list[InlineSources] = []
    calls = sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda c: (c.lineno, c.col_offset)
    )
    for call in calls:
        if not dotted(call.func).endswith("load_inline"):
            continue
        args: dict[Role, ast.expr] = {}
        for index, arg in enumerate(call.args):
            if index in _POSITIONAL:
                args[_POSITIONAL[index]] = arg  # type: ignore[index]
        for kw in call.keywords:
            if kw.arg in ("cuda_sources", "cpp_sources"):
                args["cuda" if kw.arg == "cuda_sources" else "cpp"] = kw.value
        if "cuda" not in args or _is_none(args["cuda"]):
            continue
        scope = _enclosing_body(tree, call)
        cuda = _resolve(args["cuda"], tree, scope, smap, source)
        cpp = _resolve(args["cpp"], tree, scope, smap, source) if "cpp" in args else []
        name = next((k.value for k in call.keywords if k.arg == "name"), call.args[0] if call.args else None)
        label = name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else None
        out.append(InlineSources(len(out), call.lineno, label, tuple(cuda), tuple(cpp)))
    return out


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _enclosing_body(tree: ast.Module, target: ast.AST) -> list[ast.stmt]:
    """The statements of the innermost function holding ``target`` (the module's when none)."""
    best: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
            child is target for child in ast.walk(node)
        ):
            if best is None or node.lineno >= best.lineno:
                best = node
    return best.body if best is not None else tree.body


def _bindings(body: list[ast.stmt], name: str) -> list[ast.expr]:
    """Values assigned to ``name`` anywhere in ``body`` (nested blocks included, nested functions not)."""
    found: list[ast.expr] = []
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    found.append(node.value)
                elif any(isinstance(t, ast.Name) and t.id == name for t in ast.walk(target)):
                    found.append(ast.Constant(value=None))  # unpacked: not a fixed literal
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            if isinstance(node.target, ast.Name) and node.target.id == name:
                found.append(
                    node.value if isinstance(node, ast.AnnAssign) and node.value else ast.Constant(None)
                )
        stack.extend(ast.iter_child_nodes(node))
    return found


def _resolve(
    node: ast.expr, tree: ast.Module, scope: list[ast.stmt], smap: SourceMap, source: str, depth: int = 0
) -> list[StringLiteral]:
    """The string literals ``node`` stands for, in order."""
    where = f"line {getattr(node, 'lineno', '?')}"
    if depth > 8:
        raise LiteralError(f"the load_inline source at {where} is bound through too many names")
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [_literal(node, smap, source)]
    if isinstance(node, ast.List | ast.Tuple):
        return [lit for elt in node.elts for lit in _resolve(elt, tree, scope, smap, source, depth + 1)]
    if isinstance(node, ast.Name):
        values = _bindings(scope, node.id) or (
            _bindings(tree.body, node.id) if scope is not tree.body else []
        )
        if len(values) != 1:
            how = "never" if not values else f"{len(values)} times"
            raise LiteralError(
                f"{node.id} (the load_inline source at {where}) is assigned {how}: not a fixed text"
            )
        return _resolve(values[0], tree, scope, smap, source, depth + 1)
    kind = "an f-string" if isinstance(node, ast.JoinedStr) else type(node).__name__
    raise LiteralError(f"the load_inline source at {where} is {kind}, not a string literal: not edited")


def _literal(node: ast.Constant, smap: SourceMap, source: str) -> StringLiteral:
    """Decode one literal token and map its value characters to source bytes."""
    start, end = smap.span(node)
    token = smap.data[start:end].decode("utf-8")
    lower = token.lower()
    plen = 0
    while plen < len(lower) and lower[plen] in "rub":
        plen += 1
    prefix, rest = lower[:plen], token[plen:]
    quote = rest[:3] if rest[:3] in ('"""', "'''") else rest[:1]
    if not rest.endswith(quote) or len(rest) < 2 * len(quote):
        raise LiteralError(
            f"the string at line {node.lineno} is an implicit concatenation of literals: not edited"
        )
    body_start = start + plen + len(quote)
    body = rest[len(quote) : len(rest) - len(quote)]
    value, offsets = _decode(body, body_start, raw="r" in prefix)
    if value != node.value:
        raise LiteralError(
            f"the string at line {node.lineno} is an implicit concatenation of literals: not edited"
        )
    return StringLiteral(value, prefix, quote, tuple(offsets), node.lineno)


def _decode(body: str, base: int, *, raw: bool) -> tuple[str, list[int]]:
    """(value, byte offset of each value character + the end) of a literal body starting at byte ``base``."""
    out: list[str] = []
    offsets: list[int] = []
    pos = base
    i = 0
    while i < len(body):
        ch = body[i]
        if raw or ch != "\\" or i + 1 >= len(body):
            out.append(ch)
            offsets.append(pos)
            pos += len(ch.encode("utf-8"))
            i += 1
            continue
        length, produced = _escape(body, i)
        for k, char in enumerate(produced):
            out.append(char)
            offsets.append(pos + (k if len(produced) > 1 else 0))
        pos += len(body[i : i + length].encode("utf-8"))
        i += length
    offsets.append(pos)
    return "".join(out), offsets


def _escape(body: str, i: int) -> tuple[int, str]:
    """(characters consumed, value produced) of the escape at ``body[i]`` (a backslash)."""
    nxt = body[i + 1]
    if nxt == "\n":
        return 2, ""
    if nxt in _SIMPLE_ESCAPES:
        return 2, _SIMPLE_ESCAPES[nxt]
    if nxt in "01234567":
        j = i + 1
        while j < len(body) and j < i + 4 and body[j] in "01234567":
            j += 1
        return j - i, chr(int(body[i + 1 : j], 8))
    widths = {"x": 2, "u": 4, "U": 8}
    if nxt in widths:
        digits = body[i + 2 : i + 2 + widths[nxt]]
        return 2 + widths[nxt], chr(int(digits, 16))
    if nxt == "N" and i + 2 < len(body) and body[i + 2] == "{":
        close = body.index("}", i)
        return close + 1 - i, unicodedata.lookup(body[i + 3 : close])
    return 2, "\\" + nxt  # an unknown escape keeps both characters


def encode(text: str, literal: StringLiteral) -> str:
    """``text`` written for the body of ``literal`` (escapes added where its quoting needs them)."""
    if literal.raw:
        return text
    out = text.replace("\\", "\\\\")
    q = literal.quote[0]
    if len(literal.quote) == 1:
        out = out.replace(q, "\\" + q).replace("\n", "\\n").replace("\r", "\\r")
    else:
        out = out.replace(q * 3, (q * 2) + "\\" + q)
    return out


def text_edits(literal: StringLiteral, new_value: str) -> list[Edit]:
    """Byte edits of the Python source that turn ``literal``'s value into ``new_value``.

    Changed lines only (a line diff of the two values), each written with ``encode``; unchanged text
    keeps its original spelling.

    Raises:
        LiteralError: the new text cannot be written in this literal (a raw string cannot hold its
            own delimiter or end in a backslash).
    """
    old_lines = literal.value.splitlines(keepends=True)
    new_lines = new_value.splitlines(keepends=True)
    starts = [0]
    for line in old_lines:
        starts.append(starts[-1] + len(line))
    edits: list[Edit] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        chunk = "".join(new_lines[j1:j2])
        if literal.raw and (literal.quote in chunk or (len(literal.quote) == 1 and "\n" in chunk)):
            raise LiteralError(
                f"the raw string at line {literal.line} cannot hold {literal.quote} or a new line"
            )
        edits.append(Edit(literal.offsets[starts[i1]], literal.offsets[starts[i2]], encode(chunk, literal)))
    if literal.raw and new_value.endswith("\\"):
        raise LiteralError(f"the raw string at line {literal.line} cannot end in a backslash")
    return edits
