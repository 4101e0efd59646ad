"""Batched matmul nests for smem-tiling and register-tiling: one 2-D problem per ``blockIdx.z``.

The strided-batched form (cuBLAS ``GemmStridedBatched``'s argument list, ``torch.bmm`` kernels) takes
the batch from ``blockIdx.z`` and reaches its operands through batch offsets:

    const int batch = blockIdx.z;
    const T *a = A + batch * strideA;                  // or &A[batch * strideA]
    ...  a[row * K + k] ... b[k * N + col] ...
    C[batch * strideC + row * N + col] = ...;          // the batch term of every subscript of C

``normalise`` proves that form and writes the 2-D problem: the batch declaration and the alias
declarations removed, the aliases' uses renamed to their pointer parameters, each parameter's batch
term dropped from its subscripts, and the launch's grid and block cut to x and y. The matmul recipes
match and plan on that; ``restore`` puts the batch back at the top of each rewritten kernel
(``batch = blockIdx.z``, then ``A += batch * strideA`` per operand: a parameter is a per-thread copy)
and gives the candidate's launch the original grid z. The offsets are the source's own expressions,
so every batch reads and writes exactly what it did.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda, _matmul_remap
from perfagent.rewrite.recipes._variant import Source, Variant
from perfagent.workloads.launch_spec import Expr

M = TypeVar("M")


@dataclass(frozen=True)
class Batched:
    source: Source
    """The 2-D problem (source and launch) the matmul recipes read."""
    kernel: str
    prologue: str
    z: Expr


def _sum_terms(node: Node) -> list[Node]:
    """The operands of a ``+`` chain, as written (no casts or parentheses removed)."""
    if node.type == "binary_expression" and _cuda.text(node.child_by_field_name("operator") or node) == "+":
        return [t for f in ("left", "right") if (c := node.child_by_field_name(f)) for t in _sum_terms(c)]
    return [node]


def _batch_decl(body: Node) -> tuple[Node, str, str] | None:
    """(statement, name, declared type) of the one top-level ``T batch = blockIdx.z;``."""
    found = []
    for stmt in body.named_children:
        inits = (
            [c for c in stmt.named_children if c.type == "init_declarator"]
            if stmt.type == "declaration"
            else []
        )
        value = inits[0].child_by_field_name("value") if len(inits) == 1 else None
        if value is not None and _cuda.builtin_axis(_cuda.strip(value)) == ("blockIdx", "z"):
            found.append(
                (
                    stmt,
                    _cuda.text(inits[0].child_by_field_name("declarator") or stmt),
                    _cuda.element_type(stmt),
                )
            )
    return found[0] if len(found) == 1 else None


def _alias(stmt: Node, params: dict[str, tuple[str, bool]], batch: str) -> tuple[str, str, str] | None:
    """(alias, pointer parameter, offset) of ``const T *a = P + X;`` or ``= &P[X]`` with X reading ``batch``."""
    inits = (
        [c for c in stmt.named_children if c.type == "init_declarator"] if stmt.type == "declaration" else []
    )
    if len(inits) != 1:
        return None
    declarator, value = inits[0].child_by_field_name("declarator"), inits[0].child_by_field_name("value")
    if declarator is None or value is None or declarator.type != "pointer_declarator":
        return None
    name = _cuda.text(declarator.child_by_field_name("declarator") or declarator)
    value = _cuda.strip(value)
    if value.type == "pointer_expression" and _cuda.text(value).startswith("&"):
        sub = _cuda.strip(value.child_by_field_name("argument") or value)
        index = sub.child_by_field_name("indices") if sub.type == "subscript_expression" else None
        base, offset = (
            sub.child_by_field_name("argument"),
            index.named_children[0] if index and index.named_children else None,
        )
    elif (
        value.type == "binary_expression"
        and _cuda.text(value.child_by_field_name("operator") or value) == "+"
    ):
        base, offset = value.child_by_field_name("left"), value.child_by_field_name("right")
    else:
        return None
    if base is None or offset is None or not params.get(_cuda.text(base), ("", False))[1]:
        return None
    if batch not in _cuda.identifiers_in(offset) or any(_cuda.builtin_axis(n) for n in _cuda.walk(offset)):
        return None
    p_type = params[_cuda.text(base)][0].replace("const", "").split()
    if _cuda.element_type(stmt).replace("const", "").split() != p_type:
        return None
    return name, _cuda.text(base), _cuda.text(offset)


def _term_edits(
    body: Node, pointer: str, batch: str, locals_: set[str]
) -> tuple[list[_cuda.Edit], str | None] | str:
    """Edits dropping the batch term from every subscript of ``pointer``, and that term (None: no subscript
    of ``pointer`` reads the batch, an operand every batch shares, ``torch.matmul``'s broadcast B)."""
    if all(
        batch not in _cuda.identifiers_in(n)
        for n in _cuda.walk(body)
        if n.type == "subscript_expression" and _cuda.text(n.child_by_field_name("argument") or n) == pointer
    ):
        return [], None
    edits: list[_cuda.Edit] = []
    seen: dict[str, str] = {}
    for n in _cuda.walk(body):
        if n.type != "subscript_expression" or _cuda.text(n.child_by_field_name("argument") or n) != pointer:
            continue
        index = n.child_by_field_name("indices")
        expr = index.named_children[0] if index is not None and len(index.named_children) == 1 else None
        terms = _sum_terms(expr) if expr is not None else []
        with_batch = [t for t in terms if batch in _cuda.identifiers_in(t)]
        if expr is None or len(with_batch) != 1 or len(terms) < 2:
            return f"line {_cuda.line_of(n)}: {pointer}[...] does not add one batch term to a 2-D index"
        moving = (_cuda.identifiers_in(with_batch[0]) - {batch}) & locals_
        if moving:
            # `(b * S + i) * D`: the term also holds the row; hoisted as the batch offset it would drop it
            return (
                f"line {_cuda.line_of(n)}: the batch term {_cuda.text(with_batch[0])} of {pointer}[...] "
                f"also reads {sorted(moving)[0]}: not a per-batch offset"
            )
        seen[_cuda.text(with_batch[0]).replace(" ", "")] = _cuda.text(with_batch[0])
        rest = " + ".join(_cuda.text(t) for t in terms if t is not with_batch[0])
        edits.append(_cuda.Edit(expr.start_byte, expr.end_byte, rest))
    if len(seen) != 1:
        return f"the subscripts of {pointer} add different batch terms"
    return edits, next(iter(seen.values()))


def _locals(body: Node) -> set[str]:
    """Names the kernel body declares (thread-varying in general, unlike the parameters)."""
    return {
        _cuda.text(d)
        for n in _cuda.walk(body)
        if n.type == "init_declarator" and (d := n.child_by_field_name("declarator")) is not None
    }


def normalise(src: Source) -> Batched | str | None:
    """The 2-D problem of a batched nest, why a batched kernel is not one, or None: not batched at all
    (no grid z, no single ``batch = blockIdx.z``)."""
    found = src.kernel_body
    if isinstance(found, str):
        return found
    kernel, body = found
    decl = _batch_decl(body)
    if src.launch is None or len(src.launch.grid) != 3 or decl is None:
        return None
    stmt, batch, batch_type = decl
    params = {n: (t, p) for n, t, p in _cuda.kernel_params(kernel)}
    edits = [_cuda.Edit(stmt.start_byte, stmt.end_byte, "")]
    offsets: list[tuple[str, str]] = []
    aliases: dict[str, str] = {}
    for s in body.named_children:
        alias = _alias(s, params, batch)
        if alias is not None:
            aliases[alias[0]] = alias[1]
            offsets.append((alias[1], alias[2]))
            edits.append(_cuda.Edit(s.start_byte, s.end_byte, ""))
    edits += [
        _cuda.Edit(n.start_byte, n.end_byte, aliases[_cuda.text(n)])
        for n in _cuda.walk(body)
        if n.type == "identifier"
        and _cuda.text(n) in aliases
        and n.parent is not None
        and n.parent.type != "pointer_declarator"
    ]
    for pointer in (p for p, (_t, ptr) in params.items() if ptr and p not in aliases.values()):
        uses = [n for n in _cuda.walk(body) if n.type == "identifier" and _cuda.text(n) == pointer]
        if not uses:
            continue
        dropped = _term_edits(body, pointer, batch, _locals(body))
        if isinstance(dropped, str):
            return dropped
        edits += dropped[0]
        if dropped[1] is not None:
            offsets.append((pointer, dropped[1]))
    text = _cuda.apply_edits(src.text, sorted(edits, key=lambda e: e.start))
    if batch in _cuda.identifiers_in(_cuda.require_clean(text).root_node):
        return f"{batch} (blockIdx.z) is used other than in the operands' batch offsets"
    launch = src.launch.model_copy(update={"grid": src.launch.grid[:2], "block": src.launch.block[:2]})
    request = src.request.model_copy(update={"source": text, "launch": launch})
    prologue = (
        f"\n    const {batch_type} {batch} = blockIdx.z;  // one 2-D problem per blockIdx.z\n"
        + "".join(f"    {p} += {off};\n" for p, off in offsets)
    )
    name = _cuda.function_name(kernel) or ""
    return Batched(Source(request), name, prologue, src.launch.grid[2])


def restore(b: Batched, variant: Variant) -> Variant:
    """``variant`` of the 2-D problem as a candidate for the batched kernel."""
    assert variant.source is not None, "the matmul recipes write whole sources"
    kernel = _cuda.select_kernel(_cuda.require_clean(variant.source), b.kernel)
    body = kernel.child_by_field_name("body") if not isinstance(kernel, str) else None
    assert body is not None, kernel
    at = body.start_byte + 1
    data = variant.source.encode()
    source = (data[:at] + b.prologue.encode() + data[at:]).decode()
    launch = variant.launch
    if launch is not None and launch.grid is not None:
        launch = launch.model_copy(
            update={"grid": [*launch.grid[:2], b.z], "block": (launch.block or [])[:2]}
        )
    return Variant(
        description=f"{variant.description}; batched: one 2-D problem per blockIdx.z, operands offset per batch",
        source=source,
        parameters={**variant.parameters, "batched": True},
        launch=launch,
        defines=variant.defines,
        notes=variant.notes,
        retune=variant.retune,
    )


Found = tuple[Batched | None, Source, M]
"""What the matmul recipes' ``match`` returns: (the batch, or None), the source planned on, the 2-D match."""


def match(src: Source, match_2d: Callable[[Source], M | str]) -> Found[M] | str:
    """``match_2d`` of the kernel, or of its 2-D problem when it is a batched nest (None: not batched)."""
    direct = match_2d(src)
    if not isinstance(direct, str):
        return None, src, direct
    batched = normalise(src)
    if batched is None:
        remapped = _matmul_remap.normalise(src)
        if remapped is None:
            return direct
        if isinstance(remapped, str):
            return f"{direct}; not a flat or 3-D map of a 2-D problem either: {remapped}"
        inner_found = match(remapped.source, match_2d)
        if isinstance(inner_found, str):
            return f"{direct}; with {remapped.form} given a 2-D thread map: {inner_found}"
        return inner_found
    if isinstance(batched, str):
        return f"{direct}; not a batch of 2-D problems either: {batched}"
    inner = match_2d(batched.source)
    if isinstance(inner, str):
        return f"{direct}; as a batch of 2-D problems: {inner}"
    return batched, batched.source, inner


def plan(found: Found[M], plan_2d: Callable[[Source, M], list[Variant]]) -> list[Variant]:
    b, src, m = found
    variants = plan_2d(src, m)
    return variants if b is None else [restore(b, v) for v in variants]
