"""cooperative-row: give a row that one thread walks alone to a whole warp.

Row-per-thread kernels (GEMV, row sums and maxima, softmax, L2/layer norm) derive a row index from the
x thread coordinates and loop over the row: the 32 lanes of a warp read 32 addresses a row apart, and
for short grids there are few threads at all. The textbook fix lets the 32 lanes of a warp share the
row: lane-strided loops (coalesced), a butterfly of ``__shfl_xor_sync`` after each reduction loop (so
every lane holds the row's result, which later passes need), lane 0 alone for scalar stores, and a grid
32 times larger.

Precondition, proven on the parse tree of the kernel:
- a 1-D launch whose block is a multiple of 32, one index derived from the x thread coordinates (the
  row), no other use of threadIdx/blockIdx/blockDim, no shared memory, barriers or atomics;
- every loop of the kernel counts up from a start by one over an index that is not the row, and is
  either a reduction — one statement ``acc += e``, ``acc = acc + e``, ``acc = fmaxf(acc, e)`` (``max``,
  ``fminf``, ``min``) with ``e`` free of ``acc`` — or an element-wise pass whose stores are indexed by
  the loop variable and which reads no accumulator of a loop that has not finished;
- stores outside loops are scalar results (``out[row] = acc``).
The arithmetic per element is unchanged; only the summation order of reductions changes (the
verifier judges that with its tolerance).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

from perfagent.rewrite.base import Candidate, RewriteRequest, make_candidate
from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes.registry import Recipe
from perfagent.workloads.expr import ExpressionError, evaluate_int
from perfagent.workloads.launch_spec import LaunchOverride

NAME = "cooperative-row"
LANE = "coop_lane"
BUILTINS = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim"})
_COMBINE = {"fmaxf": "fmaxf", "max": "max", "fminf": "fminf", "min": "min", "fmax": "fmax", "fmin": "fmin"}
_FORBIDDEN = ("__shared__", "__syncthreads", "atomic", "__shfl", "__syncwarp")


@dataclass
class _Plan:
    row_init: Node
    loops: list[tuple[Node, str | None, str | None]] = field(default_factory=list)
    """(for statement, accumulator or None for an element-wise pass, combine: '+' or a function name)."""
    scalar_stores: list[Node] = field(default_factory=list)


def _builtin(node: Node) -> tuple[str, str] | None:
    if node.type != "field_expression":
        return None
    obj, fld = node.child_by_field_name("argument"), node.child_by_field_name("field")
    if obj is None or fld is None or _cuda.text(obj) not in BUILTINS:
        return None
    return _cuda.text(obj), _cuda.text(fld)


def _row(kernel: Node) -> tuple[str, Node] | str:
    """(row variable, its initialiser) or why there is none."""
    found: list[tuple[str, Node]] = []
    for n in _cuda.walk(kernel):
        if n.type != "init_declarator":
            continue
        decl, value = n.child_by_field_name("declarator"), n.child_by_field_name("value")
        if decl is None or value is None or decl.type != "identifier":
            continue
        axes = {b for v in _cuda.walk(value) if (b := _builtin(v))}
        if any(b == ("threadIdx", "x") for b in axes):
            if any(a[1] != "x" for a in axes):
                return f"the index on line {_cuda.line_of(n)} mixes x and y thread coordinates"
            found.append((_cuda.text(decl), value))
    if len(found) != 1:
        return (
            "no single row index derived from threadIdx.x"
            if not found
            else "several indices derive from threadIdx.x"
        )
    lo, hi = found[0][1].start_byte, found[0][1].end_byte
    for n in _cuda.walk(kernel):
        if _builtin(n) and not (lo <= n.start_byte and n.end_byte <= hi):
            return f"{_cuda.text(n)} on line {_cuda.line_of(n)} is used outside the row index"
    return found[0]


def _loop_var(loop: Node) -> tuple[str, Node] | str:
    """The loop's counter and its start value, when it counts up by one."""
    init, update = loop.child_by_field_name("initializer"), loop.child_by_field_name("update")
    if init is None or update is None:
        return f"the loop on line {_cuda.line_of(loop)} has no counter initialiser or update"
    decl = next((n for n in _cuda.walk(init) if n.type == "init_declarator"), None)
    if decl is None:
        return f"the loop on line {_cuda.line_of(loop)} does not declare its counter"
    name_node, start = decl.child_by_field_name("declarator"), decl.child_by_field_name("value")
    if name_node is None or start is None:
        return f"the loop on line {_cuda.line_of(loop)} has no start value"
    name = _cuda.text(name_node)
    step = _cuda.text(update).replace(" ", "")
    if step not in (f"{name}++", f"++{name}", f"{name}+=1", f"{name}={name}+1"):
        return f"the loop on line {_cuda.line_of(loop)} does not step by one ({_cuda.text(update)})"
    return name, start


def _reduction(stmt: Node) -> tuple[str, str] | None:
    """(accumulator, combine) when ``stmt`` is one associative update of an accumulator."""
    expr = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_children else None
    if expr is None or expr.type != "assignment_expression":
        return None
    left, right, op = (
        expr.child_by_field_name("left"),
        expr.child_by_field_name("right"),
        expr.child_by_field_name("operator"),
    )
    if left is None or right is None or op is None or left.type != "identifier":
        return None
    acc, o = _cuda.text(left), _cuda.text(op)
    if o == "+=" and acc not in _cuda.identifiers_in(right):
        return acc, "+"
    if o != "=":
        return None
    if (
        right.type == "binary_expression"
        and _cuda.text(right.child_by_field_name("operator") or right) == "+"
    ):
        a, b = right.child_by_field_name("left"), right.child_by_field_name("right")
        if a is not None and b is not None and _cuda.text(a) == acc and acc not in _cuda.identifiers_in(b):
            return acc, "+"
    if right.type == "call_expression":
        fn, args = right.child_by_field_name("function"), right.child_by_field_name("arguments")
        names = list(args.named_children) if args is not None else []
        if fn is not None and _cuda.text(fn) in _COMBINE and len(names) == 2:
            first, second = names
            if _cuda.text(first) == acc and acc not in _cuda.identifiers_in(second):
                return acc, _COMBINE[_cuda.text(fn)]
    return None


def _body_statements(loop: Node) -> list[Node]:
    body = loop.child_by_field_name("body")
    if body is None:
        return []
    return list(body.named_children) if body.type == "compound_statement" else [body]


def analyse(kernel: Node) -> _Plan | str:
    """The kernel's cooperative plan, or why it does not apply."""
    whole = _cuda.text(kernel)
    for word in _FORBIDDEN:
        if word in whole:
            return f"the kernel uses {word}: its threads already cooperate"
    if LANE in whole:
        return f"the kernel already has a variable named {LANE}"
    row = _row(kernel)
    if isinstance(row, str):
        return row
    row_var, row_init = row
    plan = _Plan(row_init=row_init)
    loops = [n for n in _cuda.walk(kernel) if n.type in ("for_statement", "while_statement", "do_statement")]
    if not loops:
        return "the kernel has no loop over the row"
    for loop in loops:
        if loop.type != "for_statement":
            return f"the loop on line {_cuda.line_of(loop)} is not a counted for loop"
        if _cuda.enclosing(loop, "for_statement") is not None:
            return f"the loop on line {_cuda.line_of(loop)} is nested: only single loops over the row are rewritten"
    accumulators: set[str] = set()
    for loop in loops:
        var = _loop_var(loop)
        if isinstance(var, str):
            return var
        if var[0] == row_var:
            return f"the loop on line {_cuda.line_of(loop)} counts the row index itself"
        stmts = _body_statements(loop)
        red = _reduction(stmts[0]) if len(stmts) == 1 else None
        if red is not None:
            plan.loops.append((loop, red[0], red[1]))
            accumulators.add(red[0])
            continue
        assigned = {
            _cuda.text(left)
            for n in _cuda.walk(loop)
            if n.type in ("assignment_expression", "update_expression")
            and (left := n.child_by_field_name("left") or n.child_by_field_name("argument")) is not None
            and left.type == "identifier"
        }
        if assigned - {var[0]}:
            return f"the loop on line {_cuda.line_of(loop)} updates {', '.join(sorted(assigned - {var[0]}))}: not an associative reduction or an element-wise pass"
        plan.loops.append((loop, None, None))
    in_loops = [(lp.start_byte, lp.end_byte) for lp, _, _ in plan.loops]
    for n in _cuda.walk(kernel):
        if n.type == "assignment_expression" and (left := n.child_by_field_name("left")) is not None:
            outside = not any(lo <= n.start_byte < hi for lo, hi in in_loops)
            if outside and left.type == "subscript_expression":
                stmt = n.parent
                if stmt is None or stmt.type != "expression_statement":
                    return f"the store on line {_cuda.line_of(n)} is not a statement of its own"
                plan.scalar_stores.append(stmt)
    if not any(acc for _, acc, _ in plan.loops):
        return "no loop reduces over the row (nothing for a warp to share)"
    return plan


def _kernel(request: RewriteRequest) -> Node | str:
    tree = _cuda.require_clean(request.source)
    found = _cuda.kernels(tree, request.kernel)
    if not found:
        return "no __global__ kernel in the source"
    if len(found) > 1 and request.kernel is None:
        return "several kernels and none named"
    return found[0]


def _block_ok(request: RewriteRequest) -> str | None:
    assert request.launch is not None
    env = {
        **request.launch.params,
        **{k: v for k, v in request.launch.defines.items() if isinstance(v, int | float)},
    }
    try:
        block = evaluate_int(str(request.launch.block[0]), env)
    except ExpressionError:
        return f"the block size {request.launch.block[0]} cannot be evaluated from the spec's parameters"
    return None if block % 32 == 0 else f"the block ({block} threads) is not a multiple of 32"


def applies(request: RewriteRequest) -> str | None:
    if request.language != "cuda":
        return "not a CUDA source"
    if request.launch is None:
        return "no launch spec: the grid is set in the source's own launch"
    if len(request.launch.grid) != 1 or len(request.launch.block) != 1:
        return "the launch spec's grid or block has more than one dimension"
    kernel = _kernel(request)
    if isinstance(kernel, str):
        return kernel
    plan = analyse(kernel)
    return plan if isinstance(plan, str) else _block_ok(request)


def _shuffle(acc: str, combine: str, indent: int) -> str:
    step = (
        f"{acc} + __shfl_xor_sync(0xffffffffu, {acc}, o_)"
        if combine == "+"
        else (f"{combine}({acc}, __shfl_xor_sync(0xffffffffu, {acc}, o_))")
    )
    pad = " " * indent
    return (
        f"\n{pad}for (int o_ = 16; o_ > 0; o_ >>= 1) {acc} = {step};  // every lane now holds the row's value"
    )


def rewrite(source: str, plan: _Plan) -> str:
    """The warp-per-row source."""
    edits: list[_cuda.Edit] = []
    init = plan.row_init
    edits.append(_cuda.Edit(init.start_byte, init.end_byte, f"({_cuda.text(init)}) / 32"))
    decl = init.parent.parent if init.parent is not None else None  # init_declarator -> declaration
    if decl is not None and decl.type == "declaration":
        pad = " " * decl.start_point[1]
        edits.append(_cuda.Edit(decl.end_byte, decl.end_byte, f"\n{pad}const int {LANE} = threadIdx.x % 32;"))
    for loop, acc, combine in plan.loops:
        var = _loop_var(loop)
        assert not isinstance(var, str)
        name, start = var
        update = loop.child_by_field_name("update")
        assert update is not None
        first = LANE if _cuda.text(start).strip() == "0" else f"({_cuda.text(start)}) + {LANE}"
        edits.append(_cuda.Edit(start.start_byte, start.end_byte, first))
        edits.append(_cuda.Edit(update.start_byte, update.end_byte, f"{name} += 32"))
        if acc is not None and combine is not None:
            edits.append(
                _cuda.Edit(loop.end_byte, loop.end_byte, _shuffle(acc, combine, loop.start_point[1]))
            )
    edits.extend(_cuda.Edit(s.start_byte, s.start_byte, f"if ({LANE} == 0) ") for s in plan.scalar_stores)
    return _cuda.apply_edits(source, edits)


def propose(request: RewriteRequest) -> list[Candidate]:
    if applies(request) is not None:
        return []
    assert request.launch is not None
    kernel = _kernel(request)
    assert not isinstance(kernel, str)
    plan = analyse(kernel)
    assert not isinstance(plan, str)
    grid = str(request.launch.grid[0])
    reductions = [f"{acc} ({combine})" for _, acc, combine in plan.loops if acc]
    return [
        make_candidate(
            request,
            backend="recipes",
            recipe=NAME,
            source=rewrite(request.source, plan),
            description=(
                f"warp per row: lane-strided loops (coalesced), butterfly shuffles after the reductions of "
                f"{', '.join(reductions)}, lane 0 stores the scalars; grid x32. Summation order changes: "
                "results differ by rounding only"
            ),
            parameters={"rows_per_block": "block / 32", "reductions": len(reductions)},
            launch=LaunchOverride(grid=[f"32 * ({grid})"]),
        )
    ][: request.max_candidates]


RECIPE = Recipe(
    name=NAME,
    transforms=("cooperative-row",),
    languages=("cuda",),
    applies=applies,
    propose=propose,
    summary="row-per-thread reductions (GEMV, softmax, norms): a warp per row with lane-strided loops and shuffles",
)
