"""cooperative-row beyond one loop per pass: the item loop, loop nests, and names private to an iteration.

- **The item loop**: a grid-stride loop over work items (``for (r = blockIdx.x * blockDim.x + threadIdx.x;
  r < n; r += blockDim.x * gridDim.x) { ... }``) is the row index of the form ``row = tid; if (row < n)``
  repeated: the rewrite divides its start and its step by the sharers per item, so a warp (or a block)
  walks the items a thread walked.
- **Nests**: a pass may be a perfect, rectangular nest (``for (n ...) for (i ...) body``: each loop's
  body is the next loop alone; no bound or start reads an outer counter). The sharers split the
  flattened iteration space (one counter over the product of the extents, the nest's counters derived
  from it), so a plane of H x W, or N planes of HW, is split as one long row. The flat counter has the
  counters' type (``long long`` when they differ): the product must fit it, as a serial walk of 2^31
  iterations per thread was never a kernel anyone ran.
- **Private names**: what the distributed body declares and then reassigns (``maxval``, ``maxidx``,
  a window start clamped with ``max``), and the counters of loops inside it (the pooling window), live in
  one iteration; the body may do anything with them. Only what it stores and what it accumulates across
  iterations is checked (``_coop_row_analysis``).
"""

from __future__ import annotations

import re

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._coop_row_syntax import (
    Level,
    Loop,
    Refused,
    bound_ok,
    is_written,
    loop_counter,
    names_read,
    normal_form,
    statements,
    subscript_index,
    unit_stride,
    unwrap,
)

FLAT = "coop_flat"
"""The flattened counter of a rewritten nest (a kernel that already has the name is refused)."""


def item_loop(kernel: Node) -> Node | None:
    """The grid-stride loop over items: its initialiser reads threadIdx.x and it steps by the grid's threads."""
    for node in _cuda.walk(kernel):
        if node.type != "for_statement":
            continue
        init, update = node.child_by_field_name("initializer"), node.child_by_field_name("update")
        if init is None or update is None:
            continue
        if not any(_cuda.builtin_axis(n) == ("threadIdx", "x") for n in _cuda.walk(init)):
            continue
        return node if grid_step(update) is not None else None
    return None


def grid_step(update: Node) -> Node | None:
    """The step of ``r += blockDim.x * gridDim.x`` (either order), or None."""
    if update.type != "assignment_expression":
        return None
    op, right = update.child_by_field_name("operator"), update.child_by_field_name("right")
    if op is None or right is None or _cuda.text(op) != "+=":
        return None
    step = unwrap(right)
    if step.type != "binary_expression" or _cuda.text(step.child_by_field_name("operator") or step) != "*":
        return None
    sides = {
        _cuda.text(unwrap(s))
        for s in (step.child_by_field_name("left"), step.child_by_field_name("right"))
        if s
    }
    return right if sides == {"blockDim.x", "gridDim.x"} else None


def levels(node: Node) -> list[Level]:
    """The perfect rectangular nest that starts at ``node`` (one level for a plain loop)."""
    out: list[Level] = []
    current: Node | None = node
    while current is not None and current.type == "for_statement":
        counter = loop_counter(current)
        if isinstance(counter, str):
            if not out:
                raise Refused(counter)
            break
        var, start = counter
        cond = current.child_by_field_name("condition")
        if bound_ok(current, var) is not None or cond is None:
            if not out:
                raise Refused(bound_ok(current, var) or "no condition")
            break
        cond = unwrap(cond)
        bound = cond.child_by_field_name(
            "right" if _cuda.text(unwrap(cond.child_by_field_name("left") or cond)) == var else "left"
        )
        op = _cuda.text(cond.child_by_field_name("operator") or cond)
        outer = {lv.var for lv in out}
        if bound is None or outer & (_cuda.identifiers_in(bound) | _cuda.identifiers_in(start)):
            break  # a triangular or data-dependent inner loop stays serial inside the iteration
        init = current.child_by_field_name("initializer")
        ctype = _cuda.element_type(init) if init is not None else "int"
        out.append(Level(current, var, start, bound, op in ("<=", ">="), ctype or "int"))
        body = current.child_by_field_name("body")
        inner = statements(body) if body is not None else []
        current = inner[0] if len(inner) == 1 else None
    return out


def body_of(loop: Loop) -> Node | None:
    return loop.levels[-1].node.child_by_field_name("body")


def privates(loop: Loop) -> set[str]:
    """Names the distributed body declares and reassigns, and its inner loops' counters."""
    body = body_of(loop)
    if body is None:
        return set()
    declared: set[str] = set()
    assigned: set[str] = set()
    for n in _cuda.walk(body):
        if n.type == "init_declarator" or n.type == "declaration":
            decl = n.child_by_field_name("declarator")
            if decl is not None and decl.type == "identifier":
                declared.add(_cuda.text(decl))
            if n.type == "declaration":
                declared |= {
                    _cuda.text(c) for c in n.children_by_field_name("declarator") if c.type == "identifier"
                }
        target = None
        if n.type == "assignment_expression":
            target = n.child_by_field_name("left")
        elif n.type == "update_expression":
            target = n.child_by_field_name("argument")
        if target is not None and unwrap(target).type == "identifier":
            assigned.add(_cuda.text(unwrap(target)))
    counters = {
        c[0]
        for n in _cuda.walk(body)
        if n.type == "for_statement" and not isinstance(c := loop_counter(n), str)
    }
    return (declared & assigned) | counters


def outer_counter_why(index: Node, loop: Loop, locals_: dict[str, Node]) -> str | None:
    """Why a store index of a nest may name one element from two iterations, or None.

    The innermost counter enters with unit stride (checked by the caller); each outer counter must sit in
    a product with the innermost loop's bound (``(n * C + c) * HW + i``, ``ph * pooled_width + pw``): rows
    of the inner extent apart, so distinct iterations store distinct elements (the row layout the
    kernel's own serial order relied on).
    """
    if len(loop.levels) < 2:
        return None
    inner = loop.levels[-1]
    bound_names = _cuda.identifiers_in(inner.bound)
    outer = {lv.var for lv in loop.levels[:-1]}

    def scaled(node: Node, root: Node) -> bool:
        parent = node.parent
        while (
            parent is not None and root.start_byte <= parent.start_byte and parent.end_byte <= root.end_byte
        ):
            if (
                parent.type == "binary_expression"
                and _cuda.text(parent.child_by_field_name("operator") or parent) == "*"
            ):
                others = [
                    c for c in (parent.child_by_field_name("left"), parent.child_by_field_name("right")) if c
                ]
                if any(
                    not (o.start_byte <= node.start_byte < o.end_byte)
                    and bound_names <= _cuda.identifiers_in(o)
                    for o in others
                ):
                    return True
            parent = parent.parent
        return False

    def check(node: Node, seen: frozenset[str]) -> str | None:
        for n in _cuda.walk(node):
            if n.type != "identifier":
                continue
            word = _cuda.text(n)
            if word in locals_ and word not in seen:
                why = check(locals_[word], seen | {word})
                if why is not None:
                    return why
            elif word in outer and not scaled(n, node):
                return (
                    f"{_cuda.text(index)} on line {_cuda.line_of(index)} names the outer counter {word} outside a "
                    f"product with the inner bound {_cuda.text(inner.bound)}: two iterations could store one element"
                )
        return None

    return check(index, frozenset())  # a local's value is its own root: scaled() looks no further up


def check_store_index(n: Node, lp: Loop) -> None:
    """The stored index is offset + counter, through no per-iteration name and no outer counter
    that lanes would share."""
    index = subscript_index(n)
    assert index is not None
    if not unit_stride(index, lp):
        raise Refused(
            f"{_cuda.text(n)} on line {_cuda.line_of(n)} is stored in a loop but its index is not "
            f"offset + {lp.var}: lanes could store the same element"
        )
    private = names_read(index, lp) & lp.privates
    if private:
        raise Refused(
            f"{_cuda.text(n)} on line {_cuda.line_of(n)} is reached through {', '.join(sorted(private))}, "
            "which one iteration reassigns or counts: lanes could reach the same element"
        )
    why = outer_counter_why(index, lp, lp.locals)
    if why is not None:
        raise Refused(why)


def extent(level: Level) -> str:
    bound = f"({_cuda.text(level.bound)})"
    start = _cuda.text(level.start).strip()
    size = bound if start == "0" else f"({bound} - ({start}))"
    return f"({size} + 1)" if level.inclusive else size


def flat_header(loop: Loop, me: str, width: str) -> tuple[str, str]:
    """The text that replaces a nest's headers (up to its innermost body) and what closes it."""
    types = {lv.ctype for lv in loop.levels}
    ctype = types.pop() if len(types) == 1 else "long long"
    extents = [extent(lv) for lv in loop.levels]
    total = " * ".join(extents)
    decls = []
    for k, lv in enumerate(loop.levels):
        below = " * ".join(extents[k + 1 :])
        value = f"{FLAT} / ({below})" if below else FLAT
        if k > 0:
            value = f"({value}) % {extents[k]}"
        start = _cuda.text(lv.start).strip()
        decls.append(f"const {lv.ctype} {lv.var} = {'' if start == '0' else f'({start}) + '}{value};")
    pad = " " * loop.node.start_point[1]
    head = (
        f"for ({ctype} {FLAT} = {me}; {FLAT} < {total}; {FLAT} += {width}) {{  // the nest, flattened\n"
        + "".join(f"{pad}    {d}\n" for d in decls)
        + f"{pad}    "
    )
    return head, f"\n{pad}}}"


def gathered_written(body: Node, pointers: dict[str, str], offset_reads: dict[str, Node]) -> str | None:
    """Why a buffer a row pointer's offset reads (the gathered index) is stored by the kernel, or None."""
    for buffer, node in offset_reads.items():
        for n in _cuda.walk(body):
            base = n.child_by_field_name("argument") if n.type == "subscript_expression" else None
            if base is not None and pointers.get(_cuda.text(base)) == buffer and is_written(n):
                return (
                    f"{buffer} is read on line {_cuda.line_of(node)} to place a row and stored on line "
                    f"{_cuda.line_of(n)}: the item's rows would move while it is walked"
                )
    return None


def shape(loop: Loop) -> str:
    """What decides which sharer takes which element: the start (one loop), every start and bound (a nest)."""
    if len(loop.levels) < 2:
        return normal_form(loop.start, None)
    return " ; ".join(f"{normal_form(lv.start, None)} {normal_form(lv.bound, None)}" for lv in loop.levels)


def stores(loop: Loop) -> bool:
    """Whether the pass stores to memory (a map or copy pass has something to split even without a reduction)."""
    return any(
        (n.type == "subscript_expression" and is_written(n))
        or (
            n.type == "call_expression"
            and _cuda.text(n.child_by_field_name("function") or n).startswith("atomic")
        )
        for n in _cuda.walk(loop.node)
    )


def expand_loop_macros(source: str) -> str:
    """``source`` with every use of a function-like macro that expands to a ``for`` header written out
    (Caffe's ``CUDA_KERNEL_LOOP(i, n)``: the grid-stride item loop hides behind it); unchanged without one.

    The definition stays (unused); each use is replaced on its own line, so line numbers are kept."""
    tree = _cuda.parse(source)
    macros: dict[str, tuple[list[str], str]] = {}
    for node in _cuda.walk(tree.root_node):
        if node.type != "preproc_function_def":
            continue
        name, params = node.child_by_field_name("name"), node.child_by_field_name("parameters")
        value = node.child_by_field_name("value")
        body = " ".join(_cuda.text(value).replace("\\\n", " ").split()) if value is not None else ""
        if name is not None and params is not None and body.startswith("for"):
            args = [_cuda.text(p) for p in params.named_children if p.type == "identifier"]
            macros[_cuda.text(name)] = (args, body)
    out = source
    for macro, (formals, body) in macros.items():

        def expand(m: re.Match[str], formals: list[str] = formals, body: str = body) -> str:
            args = [a.strip() for a in m.group(1).split(",")]
            if len(args) != len(formals):
                return m.group(0)
            table = dict(zip(formals, args, strict=True))
            return re.sub(r"\b[A-Za-z_]\w*\b", lambda w: table.get(w.group(0), w.group(0)), body)

        lines = out.split("\n")
        use = re.compile(rf"\b{re.escape(macro)}\s*\(([^()]*)\)")
        out = "\n".join(ln if ln.lstrip().startswith("#") else use.sub(expand, ln) for ln in lines)
    return out
