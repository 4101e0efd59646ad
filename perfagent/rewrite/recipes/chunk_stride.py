"""coalesce-access for per-thread contiguous chunks folded into a private partial: stride by the block.

The first parallel reduction many write (a row sum, a block's partial of a dot product) gives thread
``t`` of the block the contiguous range ``[t * C, min(t * C + C, N))`` and folds it into a register,
then combines the block's partials. At every step the 32 lanes of a warp read 32 addresses ``C``
elements apart: one sector per lane, a few bytes used of each (PMPP 4th ed. ch. 10.7; the Best
Practices Guide, "Coalesced Access to Global Memory"). Visiting ``k = t, t + B, t + 2B, ...`` up to
``min(N, B * C)`` instead covers exactly the same elements across the block (the union of the chunks),
with every step's warp access contiguous; only the order in which a thread folds its elements changes,
which a commutative fold (``+=``, ``|=``, ``&=``, ``^=``, ``max``/``min``) tolerates (floating sums
round differently, within the verifier's tolerance).

Precondition (proven on the tree-sitter parse tree of the kernel):
- a loop ``for (T k = B0; k < E; ++k | k++ | k += 1)`` where ``B0`` is ``threadIdx.x * C`` (either
  order; directly or through a local) and ``E`` is ``min(B0 + C, N)`` (either order; directly or through
  a local), or the condition is ``k < B0 + C && k < N``;
- ``C`` and ``N`` do not depend on the thread (no ``threadIdx`` in them or in the locals they read);
- every thread of the block reaches the loop: it is not under an ``if``, no ``return`` comes before it,
  and the loops around it do not read ``threadIdx`` in their headers;
- the body only folds into locals declared outside the loop (``acc op= e``, ``acc = max(acc, e)``;
  ``if`` without ``else`` around folds allowed), declares loop-local temporaries, and writes no memory;
  ``e`` reads no accumulator; ``k`` is not assigned in the body.

The rewrite changes the loop header only; the launch stays as it is. A first variant also moves 16
bytes per thread and step (``_lane_vector``: groups of consecutive elements dealt block-strided, a
scalar tail, a run-time alignment test), the scalar variant follows.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._chunk_syntax import assigned, ident, local_inits, operator
from perfagent.rewrite.recipes._lane_vector_emit import vectorize_lanes
from perfagent.rewrite.recipes.framework import CudaRecipe, Source, Variant, at, collect, register
from perfagent.rewrite.recipes.vectorize_access import ALIGN_NOTE

NAME = "chunk-stride"
_FOLDS = {"+=", "|=", "&=", "^="}
_FOLD_CALLS = {"max", "min", "fmaxf", "fminf", "fmax", "fmin"}
_TIED = ("atomic", "__syncthreads", "__syncwarp", "__shfl", "__ballot", "__any", "__all")


@dataclass(frozen=True)
class _Chunked:
    loop: Node
    counter: tuple[str, str]
    """(name, declared type) of the loop counter."""
    chunk: str
    bound: str


def _thread_free(node: Node, inits: dict[str, tuple[Node, str]], seen: frozenset[str] = frozenset()) -> bool:
    """``node`` reads no ``threadIdx``, directly or through the locals it reads."""
    for n in _cuda.walk(node):
        if (axis := _cuda.builtin_axis(n)) and axis[0] == "threadIdx":
            return False
        name = _cuda.text(n) if n.type == "identifier" else None
        if name in inits and name not in seen and not _thread_free(inits[name][0], inits, seen | {name}):
            return False
    return True


def _through(node: Node | None, inits: dict[str, tuple[Node, str]], changed: set[str]) -> Node | None:
    """``node`` with one local (never reassigned) replaced by its initialiser."""
    if node is None:
        return None
    node = _cuda.strip(node)
    name = ident(node)
    return _cuda.strip(inits[name][0]) if name in inits and name not in changed else node


def _chunk_of(start: Node | None, inits: dict[str, tuple[Node, str]], changed: set[str]) -> Node | None:
    """``C`` of ``threadIdx.x * C`` (either order, or ``tid * C`` with ``tid = threadIdx.x``)."""
    start = _through(start, inits, changed)
    if start is None or operator(start) != "*":
        return None
    left, right = (_cuda.strip(start.child_by_field_name(f) or start) for f in ("left", "right"))
    for t, c in ((left, right), (right, left)):
        if _cuda.builtin_axis(_through(t, inits, changed) or t) == ("threadIdx", "x"):
            return c
    return None


def _end_bound(
    cond: Node, k: str, start: Node, chunk: str, inits: dict[str, tuple[Node, str]], changed: set[str]
) -> Node | None:
    """``N`` of ``k < min(start + C, N)`` (through a local) or ``k < start + C && k < N``."""
    cond = _cuda.strip(cond)
    start_text = {_cuda.text(start), _cuda.text(_through(start, inits, changed) or start)}

    def is_chunk_end(n: Node) -> bool:
        n = _cuda.strip(n)
        if operator(n) != "+":
            return False
        sides = [_cuda.text(_cuda.strip(n.child_by_field_name(f) or n)) for f in ("left", "right")]
        return sides[1] == chunk and sides[0] in start_text or sides[0] == chunk and sides[1] in start_text

    if operator(cond) == "&&":
        parts = [_cuda.strip(cond.child_by_field_name(f) or cond) for f in ("left", "right")]
        if any(operator(p) != "<" or ident(p.child_by_field_name("left")) != k for p in parts):
            return None
        rights = [p.child_by_field_name("right") for p in parts]
        if rights[0] is not None and rights[1] is not None:
            for a, b in ((rights[0], rights[1]), (rights[1], rights[0])):
                if is_chunk_end(a):
                    return b
        return None
    if operator(cond) != "<" or ident(cond.child_by_field_name("left")) != k:
        return None
    end = _through(cond.child_by_field_name("right"), inits, changed)
    if (
        end is None
        or end.type != "call_expression"
        or _cuda.text(end.child_by_field_name("function") or end) != "min"
    ):
        return None
    args = [a for a in (end.child_by_field_name("arguments") or end).named_children if a.type != "comment"]
    if len(args) == 2:
        for a, b in ((args[0], args[1]), (args[1], args[0])):
            if is_chunk_end(a):
                return b
    return None


def _folds(stmt: Node, accumulators: set[str], own: set[str]) -> str | None:
    """Why ``stmt`` is not a fold into ``accumulators`` (collected) or a loop-local declaration."""
    if stmt.type == "compound_statement":
        return next(
            (w for s in stmt.named_children if s.type != "comment" and (w := _folds(s, accumulators, own))),
            None,
        )
    if stmt.type == "if_statement":
        if stmt.child_by_field_name("alternative") is not None:
            return at(stmt, "an if with an else in the chunk loop")
        return _folds(stmt.child_by_field_name("consequence") or stmt, accumulators, own)
    if stmt.type == "declaration":
        own |= {
            _cuda.text(d.child_by_field_name("declarator") or d)
            for d in stmt.named_children
            if d.type == "init_declarator"
        }
        return None
    expr = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_children else None
    if expr is None or expr.type != "assignment_expression":
        return at(stmt, "not a fold 'acc += ...' or a loop-local declaration")
    target, value = ident(expr.child_by_field_name("left")), expr.child_by_field_name("right")
    if target is None or value is None:
        return at(stmt, "the loop writes memory: not a fold into a local")
    if target in own:
        return None
    op = operator(expr)
    value = _cuda.strip(value)
    if (
        op == "="
        and value.type == "call_expression"
        and _cuda.text(value.child_by_field_name("function") or value) in _FOLD_CALLS
    ):
        args = [
            a for a in (value.child_by_field_name("arguments") or value).named_children if a.type != "comment"
        ]
        if len(args) == 2 and target in (ident(args[0]), ident(args[1])):
            accumulators.add(target)
            return None
    if op in _FOLDS:
        accumulators.add(target)
        return None
    return at(stmt, f"'{_cuda.text(expr)}' is not a commutative fold into {target}")


def _fold_body(loop: Node, k: str) -> str | None:
    body = loop.child_by_field_name("body")
    if body is None:
        return at(loop, "the loop has no body")
    for n in _cuda.walk(body):
        if n.type == "call_expression" and _cuda.text(n.child_by_field_name("function") or n).startswith(
            _TIED
        ):
            return at(n, "threads meet inside the chunk loop")
        if n.type in ("update_expression", "return_statement", "break_statement", "goto_statement"):
            return at(n, "the loop body steps, returns or breaks")
    accumulators: set[str] = set()
    why = _folds(body, accumulators, set())
    if why is not None:
        return why
    if k in accumulators:
        return at(loop, f"the counter {k} is assigned in the body")
    for n in _cuda.walk(body):
        if n.type == "assignment_expression":
            value = n.child_by_field_name("right")
            reads = _cuda.identifiers_in(value) if value is not None else set()
            others = reads & accumulators - {ident(n.child_by_field_name("left"))}
            if others:
                return at(n, f"a fold reads another accumulator ({', '.join(sorted(others))})")
    return None if accumulators else at(loop, "the loop folds nothing")


def _reached_by_all(loop: Node, kernel: Node) -> str | None:
    for n in _cuda.walk(kernel):
        if n.type == "return_statement" and n.start_byte < loop.start_byte:
            return at(n, "a return before the chunk loop: not every thread of the block folds its chunk")
    up = loop.parent
    while up is not None and up.type != "function_definition":
        if up.type in ("if_statement", "while_statement", "do_statement", "switch_statement"):
            return at(loop, "the chunk loop is under a condition: not every thread of the block reaches it")
        if up.type == "for_statement" and any(
            (axis := _cuda.builtin_axis(n)) and axis[0] == "threadIdx"
            for f in ("initializer", "condition", "update")
            if (part := up.child_by_field_name(f)) is not None
            for n in _cuda.walk(part)
        ):
            return at(up, "the loop around the chunk loop depends on the thread")
        up = up.parent
    return None


def _analyse(
    loop: Node, kernel: Node, inits: dict[str, tuple[Node, str]], changed: set[str]
) -> _Chunked | str:
    init, cond, update = (loop.child_by_field_name(f) for f in ("initializer", "condition", "update"))
    inner = (
        [c for c in init.named_children if c.type == "init_declarator"]
        if init is not None and init.type == "declaration"
        else []
    )
    if len(inner) != 1 or cond is None or update is None:
        return at(loop, "not 'for (T k = start; k < end; ++k)'")
    k = _cuda.text(inner[0].child_by_field_name("declarator") or inner[0])
    start = inner[0].child_by_field_name("value")
    step = _cuda.text(update).replace(" ", "")
    if step not in (f"++{k}", f"{k}++", f"{k}+=1"):
        return at(loop, f"{k} does not step by one")
    chunk = _chunk_of(start, inits, changed)
    if chunk is None or start is None:
        return at(loop, f"{k} does not start at threadIdx.x * C: not a per-thread chunk")
    bound = _end_bound(cond, k, start, _cuda.text(chunk), inits, changed)
    if bound is None:
        return at(loop, f"the end is not min(start + {_cuda.text(chunk)}, N): not one chunk per thread")
    for name, part in (("chunk", chunk), ("bound", bound)):
        if not _thread_free(part, inits):
            return at(loop, f"the {name} ({_cuda.text(part)}) depends on the thread")
    why = _reached_by_all(loop, kernel) or _fold_body(loop, k)
    if why is not None:
        return why
    return _Chunked(
        loop,
        (k, _cuda.element_type(init) if init is not None else "int"),
        _cuda.text(chunk),
        _cuda.text(bound),
    )


class _ChunkStride(CudaRecipe[list[_Chunked]]):
    name = NAME
    transforms = ("coalesce-access",)
    summary = (
        "per-thread contiguous chunks folded into a register partial: visit them block-strided (coalesced)"
    )

    def match(self, src: Source) -> list[_Chunked] | str:
        kernel = src.kernel
        if isinstance(kernel, str):
            return kernel
        loops = [n for n in _cuda.walk(kernel) if n.type == "for_statement"]
        if not loops:
            return "no for loop: no per-thread chunk"
        inits, changed = local_inits(kernel), assigned(kernel)
        found = collect(_analyse(loop, kernel, inits, changed) for loop in loops)
        return found if isinstance(found, str) else found[0]

    def plan(self, src: Source, m: list[_Chunked]) -> list[Variant]:
        edits = []
        for c in m:
            k, typ = c.counter
            init, update = (c.loop.child_by_field_name(f) for f in ("initializer", "update"))
            assert init is not None and update is not None
            header = (
                f"{typ} {k} = threadIdx.x; {k} < min(({typ})({c.bound}), ({typ})blockDim.x * ({c.chunk})); "
                f"{k} += blockDim.x"
            )
            edits.append(_cuda.Edit(init.start_byte, update.end_byte, header))
        lines = ", ".join(str(_cuda.line_of(c.loop)) for c in m)
        scalar = _cuda.apply_edits(src.text, edits)
        name = _cuda.function_name(src.kernel) if not isinstance(src.kernel, str) else None
        # the block-strided loop deals its elements to the threads; dealing groups of 16 bytes is
        # another such deal (``_lane_vector``): one vectorised variant first, the scalar one after
        done = vectorize_lanes(scalar, name, "threadIdx.x", "blockDim.x")
        vectorised = (
            []
            if isinstance(done, str)
            else [
                Variant(
                    source=done[0],
                    description=(
                        f"chunk stride with 16-byte lanes: the per-thread chunk loop{'s' if len(m) > 1 else ''} "
                        f"(line {lines}) visit the block's chunks block-strided, each thread a group of "
                        f"consecutive elements per step ({'; '.join(done[1])}); same elements, same launch"
                    ),
                    parameters={"loops": len(m), "vector_lanes": True},
                    notes=[ALIGN_NOTE],
                )
            ]
        )
        return vectorised + [
            Variant(
                edits=edits,
                description=(
                    f"chunk stride: the per-thread chunk loop{'s' if len(m) > 1 else ''} (line {lines}) visit the block's "
                    "chunks block-strided, so every warp step reads contiguous elements; same elements, same launch"
                ),
                parameters={"loops": len(m)},
            )
        ]


RECIPE = register(_ChunkStride())
applies, propose = RECIPE.applies, RECIPE.propose
