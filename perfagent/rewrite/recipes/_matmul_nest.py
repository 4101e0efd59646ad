"""Find a naive matmul loop nest on the parse tree, or say why a kernel is not one.

The form (any names, any order of commutative operands, casts anywhere):

    row = blockIdx.a * blockDim.a + threadIdx.a;     // a, b: x and y, in either role
    col = blockIdx.b * blockDim.b + threadIdx.b;     //   (or a constant equal to the launch's block)
    if (row < M && col < N) {                        // or `if (row >= M || col >= N) return;`, or none
        float s = 0;                                 // pre: declarations that read no memory
        for (int k = 0; k < K; ++k)                  // k from 0 by 1 to a uniform bound
            s += A[row * lda + k] * B[k * ldb + col]; // (or s = s + ..., s = fmaf(a, b, s), temporaries)
        C[row * ldc + col] = alpha * s + beta * C[row * ldc + col];   // post: stores at (row, col) only
    }

``analyse`` proves each part on the tree and returns a ``MatmulNest`` with the nodes the rewrite
needs, or the first reason it does not hold (with its line).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._cuda import builtin_axis, strip
from perfagent.rewrite.recipes._matmul_guard import place
from perfagent.rewrite.recipes._matmul_loop import LoopBody, find_loop, loop_operands
from perfagent.rewrite.recipes._matmul_syntax import (
    CONVERSIONS,
    FORBIDDEN,
    Bound,
    KernelScan,
    Ref,
    element_type,
    factors,
    ident,
    subscript_index,
    terms,
    thread_axis,
)

__all__ = ["MatmulNest", "analyse"]
"""What the recipes use (smem-tiling, register-tiling)."""


@dataclass
class MatmulNest:
    """What the rewrite needs of a naive matmul kernel."""

    kernel: Node
    body: Node
    """The kernel's compound statement."""
    row: str
    col: str
    row_decl: Node
    """The initialiser of ``row`` (replaced by the tile's row map)."""
    col_decl: Node
    row_axis: str
    """'x' or 'y': the thread axis the original row came from."""
    loop: Node
    counter: str
    counter_type: str
    k_bound: Node
    a: Ref
    b: Ref
    a_kind: str
    """'a' (A[row * lda + k]) or 'at' (A[k * lda + row])."""
    b_kind: str
    """'b' (B[k * ldb + col]) or 'bt' (B[col * ldb + k])."""
    a_type: str
    b_type: str
    guard: str
    """'if' (the nest sits in ``if (cond) {...}``), 'return' (``if (...) return;`` before it) or 'none'."""
    guard_stmt: Node | None
    pre: list[Node]
    """Statements between the guard and the loop (hoisted out of the guard)."""
    post: list[Node]
    """Statements after the loop (kept under the guard)."""
    row_bound: Bound | None = None
    col_bound: Bound | None = None
    params: list[tuple[str, str, bool]] = field(default_factory=list)
    """Kernel parameters in order: (name, base type, is a pointer)."""


def _store_map(stores: list[Node], names: set[str], scan: KernelScan) -> tuple[str, str] | str:
    """(row, col) of the stores ``C[row * ldc + col]`` (all at the same element), else why not."""
    if not stores:
        return "the kernel stores nothing through a subscript: no C[row * ldc + col] to compute"
    found: set[tuple[str, str]] = set()
    for target in stores:
        idx = subscript_index(target) if target.type == "subscript_expression" else None
        pair: tuple[str, str] | None = None
        if idx is not None and len(terms(idx)) == 2:
            for unit, strided in (terms(idx), reversed(terms(idx))):
                fs = factors(strided)
                lead = [f for f in fs if ident(f) in names]
                if ident(unit) in names and len(fs) == 2 and len(lead) == 1:
                    other = fs[0] if fs[1] == lead[0] else fs[1]
                    if scan.uniform(other) and ident(lead[0]) != ident(unit):
                        pair = (ident(lead[0]) or "", ident(unit) or "")
        if pair is None:
            return f"line {_cuda.line_of(target)}: the store {_cuda.text(target)} is not `C[row * ldc + col]` with the thread's row and column"
        found.add(pair)
    if len(found) != 1:
        return "the kernel stores at more than one (row, col) element"
    return found.pop()


def _stores(nodes: list[Node], pointers: dict[str, str]) -> list[Node]:
    out = []
    for stmt in nodes:
        for n in _cuda.walk(stmt):
            if n.type in ("assignment_expression", "update_expression"):
                target = n.child_by_field_name("left") or n.child_by_field_name("argument")
                if target is not None:
                    target = strip(target)
                    if target.type == "subscript_expression" or target.type == "pointer_expression":
                        out.append(target)
    return out


def _safe(stmt: Node, scan: KernelScan) -> bool:
    """A declaration that reads no memory and calls nothing but conversions (safe for any thread)."""
    if (
        stmt.type != "declaration"
        or _cuda.has_storage(stmt, "__shared__")
        or _cuda.has_storage(stmt, "static")
    ):
        return False
    for n in _cuda.walk(stmt):
        if n.type in ("subscript_expression", "pointer_expression", "assignment_expression"):
            return False
        if n.type == "call_expression":
            fn = n.child_by_field_name("function")
            if fn is None or _cuda.text(fn) not in CONVERSIONS:
                return False
    return True


def analyse(kernel: Node, block: dict[str, int | None], constants: dict[str, int]) -> MatmulNest | str:
    """The kernel's matmul nest, or the first precondition that fails (with its line).

    Args:
        kernel: the ``__global__`` function definition.
        block: the launch's block size per axis ('x', 'y'), None where not a constant.
        constants: the file's integer constants by name.
    """
    body = _naive_body(kernel)
    if isinstance(body, str):
        return body
    scan = KernelScan(kernel, set(constants))
    found = find_loop(body, scan)
    if isinstance(found, str):
        return found
    loop, (counter, _, _), acc_body = found
    derived = _thread_map(kernel, body, block, constants, scan)
    if isinstance(derived, str):
        return derived
    names = {derived["x"][0], derived["y"][0]}
    mapped = _store_map(_stores([body], scan.pointers), names, scan)
    if isinstance(mapped, str):
        return mapped
    row, col = mapped
    operands = loop_operands(acc_body, loop, counter, row, col, scan)
    if isinstance(operands, str):
        return operands
    a, b, _, _ = operands
    if acc_body.acc in (row, col, counter) or acc_body.acc in scan.pointers:
        return f"the accumulator {acc_body.acc} is not a local scalar"
    nest = place(loop, body, row, col, scan)
    if isinstance(nest, str):
        return nest
    _, _, pre, post, _ = nest
    why = _stores_and_pre_checked(body, loop, pre, post, (a.pointer, b.pointer), scan)
    if why is not None:
        return why
    return _nest(kernel, body, scan, derived, mapped, found, operands, nest)


def _naive_body(kernel: Node) -> Node | str:
    """The kernel's compound statement, or why the kernel is not a naive nest (no body, or it already
    uses one of the optimisations the recipes would add)."""
    text = _cuda.text(kernel)
    for word in FORBIDDEN:
        if word in text:
            return f"the kernel already uses {word}: not a naive loop nest"
    body = kernel.child_by_field_name("body")
    return "the kernel has no body" if body is None else body


def _nest(
    kernel: Node,
    body: Node,
    scan: KernelScan,
    derived: dict[str, tuple[str, Node]],
    mapped: tuple[str, str],
    found: tuple[Node, tuple[str, str, Node], LoopBody],
    operands: tuple[Ref, Ref, str, str],
    placed: tuple[str, Node | None, list[Node], list[Node], dict[str, Bound]],
) -> MatmulNest:
    """The ``MatmulNest`` assembled from the parts ``analyse`` proved: the thread map, the loop with its
    counter, the operands (whose order fixes row and column) and where the nest sits."""
    loop, (counter, ctype, k_bound), _ = found
    a, b, a_kind, b_kind = operands
    guard, guard_stmt, pre, post, bounds = placed
    row, col = mapped
    row_axis = "x" if derived["x"][0] == row else "y"
    col_axis = "y" if row_axis == "x" else "x"
    return MatmulNest(
        kernel=kernel,
        body=body,
        row=row,
        col=col,
        row_decl=derived[row_axis][1],
        col_decl=derived[col_axis][1],
        row_axis=row_axis,
        loop=loop,
        counter=counter,
        counter_type=ctype,
        k_bound=k_bound,
        a=a,
        b=b,
        a_kind=a_kind,
        b_kind=b_kind,
        a_type=element_type(scan.pointers[a.pointer]),
        b_type=element_type(scan.pointers[b.pointer]),
        guard=guard,
        guard_stmt=guard_stmt,
        pre=pre,
        post=post,
        row_bound=bounds.get(row) if bounds else None,
        col_bound=bounds.get(col) if bounds else None,
        params=scan.params,
    )


def _thread_map(
    kernel: Node, body: Node, block: dict[str, int | None], constants: dict[str, int], scan: KernelScan
) -> dict[str, tuple[str, Node]] | str:
    """axis -> (variable, its initialiser): two variables, each blockIdx.a * blockDim.a + threadIdx.a on
    its own axis, never reassigned, and no other use of the thread built-ins."""
    derived: dict[str, tuple[str, Node]] = {}
    spans: list[tuple[int, int]] = []
    for n in _cuda.walk(body):
        if n.type != "init_declarator":
            continue
        name, value = n.child_by_field_name("declarator"), n.child_by_field_name("value")
        if name is None or value is None or name.type != "identifier":
            continue
        axis = thread_axis(value, block, constants)
        if axis is not None:
            if axis in derived:
                return f"line {_cuda.line_of(n)}: two variables derive from the {axis} thread coordinates"
            derived[axis] = (_cuda.text(name), value)
            spans.append((value.start_byte, value.end_byte))
    if set(derived) != {"x", "y"}:
        return "the kernel does not derive its row and column as blockIdx * blockDim + threadIdx on x and y"
    for n in _cuda.walk(kernel):
        if builtin_axis(n) and not any(lo <= n.start_byte and n.end_byte <= hi for lo, hi in spans):
            return f"{_cuda.text(n)} on line {_cuda.line_of(n)} is used outside the row/column derivations"
    names = {derived["x"][0], derived["y"][0]}
    if names & scan.assigned:
        return f"the row/column index {sorted(names & scan.assigned)[0]} is reassigned"
    return derived


def _stores_and_pre_checked(
    body: Node, loop: Node, pre: list[Node], post: list[Node], operands: tuple[str, str], scan: KernelScan
) -> str | None:
    """Why the statements around the loop rule the tiling out (None: they do not): what precedes the loop
    must be safe for out-of-range threads, the result is stored after it, never into an operand."""
    for stmt in pre:
        if not _safe(stmt, scan):
            return (
                f"line {_cuda.line_of(stmt)}: a statement between the guard and the loop is not a declaration "
                "free of memory reads: it cannot run for the tile's out-of-range threads"
            )
    if not _stores(post, scan.pointers):
        return "no store after the loop: the result is not written to a (row, col) element"
    for target in _stores([body], scan.pointers):
        arr = target.child_by_field_name("argument")
        if arr is not None and _cuda.text(arr) in operands:
            return f"line {_cuda.line_of(target)}: the kernel stores into the operand {_cuda.text(arr)}"
    for stmt in [*pre, loop]:
        if _stores([stmt], scan.pointers):
            return f"line {_cuda.line_of(stmt)}: a store before the end of the loop"
    return None
