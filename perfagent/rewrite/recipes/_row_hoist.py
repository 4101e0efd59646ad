"""A row pass written one thread per *element*: every element recomputes its row's statistics.

The naive softmax / log-softmax / normalisation of many ``load_inline`` solutions gives each output
element a thread, decodes its row ``r = i / cols`` from the flat index, and walks the whole row for the
row's max and sum before writing its one element::

    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) {
        int r = i / cols;
        float mx = -INFINITY;  for (j) mx = fmaxf(mx, x[r * cols + j]);     // statistics: read r only
        float se = 0;          for (j) se += expf(x[r * cols + j] - mx);
        y[i] = x[i] - mx - logf(se);                                       // the element: reads i
    }

That is ``cols`` times the row's loads per element. ``normalise`` rewrites it one thread per row, the
statistics once, then the element statements in a loop over the row's columns (``i`` as
``r * cols + c``)::

    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) { <statistics>  for (int pa_col = 0; pa_col < cols; ++pa_col) { <element, i = r*cols+pa_col> } }

with grid ``ceil_div(rows, block)`` — the form cooperative-row reads, which then gives each row a warp
or a block. Precondition, on the tree: a flat index guarded by ``i < rows * cols`` whose only decoded
digits are the row (``i / cols``) and optionally the column (``i % cols``); the statements before the
first one that reads ``i`` or the column (the statistics) store nothing and contain a loop; the element
statements assign nothing the statistics declared and leave no loop early. The statistics are then the
same for every element of a row, so computing them once per row gives every element what it computed.
"""

from __future__ import annotations

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda, _matmul_decode, _poly
from perfagent.rewrite.recipes._flat_shape import decoded_digits, flat_shape, mono_text, spec_of
from perfagent.rewrite.recipes._thread_index import Rewrites, render
from perfagent.rewrite.recipes._variant import Source

__all__ = ["normalise"]

_LOOPS = ("for_statement", "while_statement", "do_statement")


def _stores(stmt: Node) -> bool:
    for node in _cuda.walk(stmt):
        if node.type in ("assignment_expression", "update_expression"):
            target = node.child_by_field_name("left") or node.child_by_field_name("argument")
            if target is not None and _cuda.strip(target).type in (
                "subscript_expression",
                "pointer_expression",
            ):
                return True
        if node.type == "call_expression" and _cuda.text(node).startswith("atomic"):
            return True
    return False


def _assigned(stmt: Node) -> set[str]:
    out = set()
    for node in _cuda.walk(stmt):
        if node.type in ("assignment_expression", "update_expression"):
            target = node.child_by_field_name("left") or node.child_by_field_name("argument")
            if target is not None and _cuda.strip(target).type == "identifier":
                out.add(_cuda.text(_cuda.strip(target)))
    return out


def _declared(stmts: list[Node]) -> set[str]:
    return {
        _cuda.text(d)
        for s in stmts
        for n in _cuda.walk(s)
        if n.type == "init_declarator" and (d := n.child_by_field_name("declarator")) is not None
    } | {
        _cuda.text(c)
        for s in stmts
        if s.type == "declaration"
        for c in s.named_children
        if c.type == "identifier"
    }


def normalise(src: Source) -> Source | str | None:
    """The row-per-thread kernel (module docstring) with its launch, why an element-per-thread row pass
    cannot be hoisted, or None: not an element-per-thread kernel that decodes only a row."""
    found = src.kernel_body
    if isinstance(found, str) or src.launch is None or len(src.launch.block) != 1:
        return None
    kernel, body = found
    shape = flat_shape(body)
    if shape is None or isinstance(shape, str) or shape.total is None or shape.flat != shape.index.name:
        return None
    decoded = decoded_digits(shape)
    if isinstance(decoded, str):
        return None
    digits, types, rest = decoded
    rows_named = [n for n, d in digits.items() if d.high is None]
    cols_named = [n for n, d in digits.items() if d.low == _matmul_decode.ONE]
    if len(rows_named) != 1 or len(digits) != 1 + len(cols_named) or len(cols_named) > 1:
        return None
    row = rows_named[0]
    cols = digits[row].low
    if cols_named and digits[cols_named[0]].high != cols:
        return None
    element = {shape.flat, *cols_named}
    first = next((k for k, s in enumerate(rest) if _cuda.identifiers_in(s) & element), None)
    if first is None or not any(n.type in _LOOPS for s in rest[:first] for n in _cuda.walk(s)):
        return None  # no loop over the row before the element: nothing to hoist
    bound = _poly.poly(shape.total, {}, frozenset({shape.flat, *digits}))
    rows = _matmul_decode.quotient(bound, cols) if bound is not None else None
    if rows is None:
        return "the flat guard's bound is not rows x the row's length"
    stats, tail = rest[:first], rest[first:]
    why = _checked(stats, tail, row)
    if why is not None:
        return why
    params = [p[0] for p in _cuda.kernel_params(kernel)]
    rows_spec, rows_text, cols_text = spec_of(rows, src, params), mono_text(rows), mono_text(cols)
    if rows_spec is None or rows_text is None or cols_text is None:
        return "the rows or the row's length are not sizes the launch can name"
    text = _cuda.apply_edits(
        src.text,
        [
            _cuda.Edit(
                body.start_byte,
                body.end_byte,
                _body(row, types[row], (rows_text, cols_text), stats, tail, shape.flat, cols_named),
            )
        ],
    )
    block = src.launch.block[0]
    launch = src.launch.model_copy(update={"grid": [f"ceil_div({rows_spec}, {block})"]})
    return Source(src.request.model_copy(update={"source": text, "launch": launch}))


def _checked(stats: list[Node], tail: list[Node], row: str) -> str | None:
    """Why the statistics cannot run once per row (None: they can)."""
    for stmt in stats:
        if _stores(stmt):
            return f"line {_cuda.line_of(stmt)}: a store before the element's statements: it would run once per row"
    exits = ("return_statement", "break_statement", "continue_statement", "goto_statement")
    for stmt in tail:
        for node in _cuda.walk(stmt):
            if node.type in exits and not any(a.type in _LOOPS for a in _ancestors(node, stmt)):
                return f"line {_cuda.line_of(node)}: the element's statements leave early"
    shared = (_declared(stats) | {row}) & set().union(*(_assigned(s) for s in tail))
    if shared:
        return f"the element's statements change {sorted(shared)[0]}, which the row's statistics computed"
    return None


def _ancestors(node: Node, stop: Node) -> list[Node]:
    out = []
    parent = node.parent
    while parent is not None and parent.id != stop.id:
        out.append(parent)
        parent = parent.parent
    return out


def _body(
    row: str, typ: str, sizes: tuple[str, str], stats: list[Node], tail: list[Node], flat: str, col: list[str]
) -> str:
    """The row-per-thread body: the statistics once, the element's statements per column."""
    rows, cols = sizes
    counter = "pa_col"
    as_flat = f"({row} * {cols} + {counter})"

    def use(node: Node) -> str:
        return as_flat if _cuda.text(node) == flat else counter

    uses: Rewrites = {
        n.id: use
        for s in tail
        for n in _cuda.walk(s)
        if n.type == "identifier" and _cuda.text(n) in {flat, *col}
    }
    pad = "        "
    stats_text = "\n".join(pad + _cuda.text(s) for s in stats)
    tail_text = "\n".join(pad + "    " + render(s, uses) for s in tail)
    return (
        "{\n"
        f"    {typ} {row} = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    if ({row} < {rows}) {{\n{stats_text}\n"
        f"{pad}for ({typ} {counter} = 0; {counter} < {cols}; ++{counter}) {{\n{tail_text}\n{pad}}}\n"
        "    }\n}"
    )
