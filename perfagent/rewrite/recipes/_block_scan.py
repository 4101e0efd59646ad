"""warp-shuffle-scan's analysis: a Kogge-Stone (Hillis-Steele) block scan over a ``__shared__`` array.

The shape proven here (PMPP 4th ed. ch. 11, Fig. 11.3 and its common spellings), on the kernel's parse
tree with statements compared whitespace-free:

- ``for (T s = 1; s < L; s *= 2)`` (``s <<= 1``, ``s = s * 2``, ``s += s``; ``s <= L`` too) at the top
  level of the kernel body, with no ``return`` before it, so every thread of the block reaches it;
- a body, comments dropped, of ``[__syncthreads();] [T tmp;] READ __syncthreads(); WRITE
  [__syncthreads();]`` with a barrier at its start or its end (the write of one step must be seen by
  the next step's read), READ and WRITE one of the spellings of ``_block_scan_steps`` over a
  one-dimensional ``__shared__`` array ``A`` indexed by the thread index ``t`` (``threadIdx.x`` or a name
  declared equal to it and never assigned), ``op`` commutative and associative (``+ * | & ^``, max/min),
  so only the combination order of floating-point sums changes; or the double-buffered step of
  ``_block_scan_db``;
- ``tmp`` declared in the body (or used nowhere outside the loop), ``s`` declared by the loop;
- ``L`` evaluates (the launch's block size for ``blockDim.x``, the file's integer constants otherwise)
  to a bound whose strides reach the whole block (2 * largest stride >= block), or is an expression of
  never-assigned scalar parameters, tested at run time (the original loop runs where it fails).

Then the loop leaves ``A[t]`` = ``A[0] op ... op A[t]`` for every thread ``t`` of the block, and nothing
else changed: any code that computes the same is a drop-in replacement, whatever the kernel does
before (loads) and after (inclusive or exclusive stores, section sums for a second pass).
Not handled (refused, with the line): Brent-Kung up/down sweeps, scans guarded by anything else,
loops inside a branch or after a ``return``, double buffers read through the other selector.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _block_scan_db, _cuda
from perfagent.rewrite.recipes._block_scan_db import DoubleBuffer
from perfagent.rewrite.recipes._block_scan_steps import BARRIER, FUNCS, Step, step
from perfagent.rewrite.recipes._cuda_consts import Constant, evaluate
from perfagent.rewrite.recipes._variant import at

SCAN_TYPES = frozenset(
    {"int", "unsigned int", "unsigned", "long long", "unsigned long long", "float", "double", "long"}
)
"""Element types ``__shfl_up_sync`` moves as they are (one or two 32-bit registers)."""
_DOUBLING = re.compile(r"^(\w+)(\*=2|<<=1|=\1\*2|=2\*\1|=\1<<1|\+=\1)$")


@dataclass(frozen=True)
class BlockScan:
    """What the rewrite needs: the loop to replace, the array, its element type, the thread index, the combine."""

    loop: Node
    array: str
    element: str
    tid: str
    combine: str
    """'+', '*', '|', '&', '^' or a max/min function name."""
    double: DoubleBuffer | None = None
    """The double-buffered form's parts (None: the scan is in place, ``A[t]``)."""
    runtime: str | None = None
    """A test of the kernel's parameters that the strides span the block (None: they always do); where it
    fails the original loop runs."""
    own_before: bool = False
    """Before the loop every thread touches only its own slot ``A[t]``: no barrier is needed to read it."""
    own_after: bool = False
    """After the loop too: no barrier is needed after the scan's store."""


def _flat(node: Node) -> str:
    """The node's text with whitespace dropped except one space between two words (``float v=a[t];``)."""
    return re.sub(r"(?<=\W) | (?=\W)", "", re.sub(r"\s+", " ", _cuda.text(node).strip()))


def _statements(body: Node) -> list[Node]:
    if body.type != "compound_statement":
        return [body]
    return [c for c in body.named_children if c.type != "comment"]


def _thread_index(kernel: Node) -> set[str]:
    """``threadIdx.x`` and every name declared equal to it that is never assigned afterwards."""
    names = {"threadIdx.x"}
    for _decl, name, value in _cuda.initialisations(kernel):
        if _flat(value) in ("threadIdx.x", "(int)threadIdx.x", "(unsigned)threadIdx.x"):
            names.add(name)
    assigned = {
        _flat(left)
        for n in _cuda.walk(kernel)
        if n.type in ("assignment_expression", "update_expression")
        and (left := n.child_by_field_name("left") or n.child_by_field_name("argument")) is not None
    }
    return names - assigned


def _shared(kernel: Node, dims: int) -> dict[str, str]:
    """``__shared__`` arrays (static or ``extern``) of up to ``dims`` dimensions and their element types."""
    return {
        _cuda.text(ident): _cuda.element_type(decl)
        for decl, _declarator, ident, sizes in _cuda.shared_arrays(kernel)
        if len(sizes) <= dims
    }


def _stride(loop: Node) -> tuple[str, str, str] | str:
    """(stride name, comparison, bound text) of a doubling loop from 1, or why not."""
    init, cond, update = (loop.child_by_field_name(f) for f in ("initializer", "condition", "update"))
    if init is None or cond is None or update is None or init.type != "declaration":
        return "not a for loop that declares its stride"
    decl = re.fullmatch(
        r"(?:unsigned int|unsigned|int|size_t|unsigned long|long) (\w+)=1[uU]?;?", _flat(init)
    )
    if decl is None:
        return "the stride does not start at 1"
    s = decl.group(1)
    dm = _DOUBLING.match(_flat(update))
    if dm is None or dm.group(1) != s:
        return "the stride does not double"
    cm = re.fullmatch(rf"{s}(<=?)(.+)", _flat(cond))
    if cm is None:
        return f"the loop does not run while {s} < a bound"
    return s, cm.group(1), cm.group(2)


def _body(loop: Node, s: str, arrays: dict[str, str], tids: set[str]) -> tuple[str, str, Step] | str:
    """(array, thread index, step) of the loop body, or why not."""
    body = loop.child_by_field_name("body")
    if body is None:
        return "the loop has no body"
    # declarations without a value (``float temp;``) hold nothing yet: the step is what is left
    flat = [f for f in (_flat(n) for n in _statements(body)) if not re.fullmatch(r"[\w ]+ \w+;", f)]
    lead = bool(flat) and flat[0] == BARRIER
    trail = len(flat) > 1 and flat[-1] == BARRIER
    core = flat[int(lead) : len(flat) - int(trail)]
    if not (lead or trail):
        return "no __syncthreads() between one step's write and the next step's read"
    for a in arrays:
        for t in tids:
            found = step(core, a, t, s)
            if found is not None:
                return a, t, found
    return (
        "the body is not one Kogge-Stone step (guarded read of A[t - s], __syncthreads(), guarded write "
        "of A[t]; or a double-buffered A[out][t] = A[in][t] op A[in][t - s]) over a __shared__ array "
        "indexed by the thread index"
    )


def _reaches_block(
    bound: str, cmp: str, block: int, consts: dict[str, Constant], uniform: set[str]
) -> tuple[str | None, str | None]:
    """(why the strides of ``s < bound`` (``<=``) cannot span a ``block``-thread block, the run-time test
    that they do when the bound is a kernel parameter expression); both None when they always do."""
    bound = re.sub(r"(?:\((?:int|unsigned)\))?blockDim\.x", str(block), bound)
    value = evaluate(bound, consts)
    # a power of two p is the largest stride; the scan spans the block when 2p >= block, i.e. when p is at
    # least half the block rounded up to a power of two
    half = 1
    while half * 2 < block:
        half *= 2
    if value is None:
        names = set(re.findall(r"[A-Za-z_]\w*", bound)) - set(consts)
        if names and names <= uniform:
            return None, f"({bound}) {'>=' if cmp == '<=' else '>'} {half}"
        return (
            f"the loop bound {bound} is neither a constant nor an expression of the kernel's parameters",
            None,
        )
    spans = value >= half if cmp == "<=" else value > half
    return (
        None if spans else f"the loop bound {bound} stops the strides short of the {block}-thread block"
    ), None


def _scope_ok(kernel: Node, loop: Node, names: tuple[str, ...]) -> str | None:
    """Why the loop is not a whole block's step (inside a branch, after a return, names used outside it)."""
    body = kernel.child_by_field_name("body")
    if loop.parent != body:
        return "the scan loop is inside a branch or another loop: not every thread may reach it"
    for n in _cuda.walk(kernel):
        if n.type == "return_statement" and n.start_byte < loop.start_byte:
            return at(n, "a return before the scan loop: a warp may be partial at its shuffles")
    # a name the loop declares (its stride, a temporary declared in the body) is its own; one declared
    # outside must be read nowhere else, since the rewrite no longer assigns it
    own = {_cuda.text(d) for n in _cuda.walk(loop) if n.type == "declaration" for d in _declared(n)}
    outside = [
        n
        for n in _cuda.walk(kernel)
        if n.type == "identifier"
        and _cuda.text(n) in set(names) - own
        and not (loop.start_byte <= n.start_byte < loop.end_byte)
        and (n.parent is None or n.parent.type != "declaration")
    ]
    return at(outside[0], f"{_cuda.text(outside[0])} is used outside the scan loop") if outside else None


def _declared(decl: Node) -> list[Node]:
    """The identifiers a declaration declares (``float a, b = 0;``)."""
    out = []
    for d in decl.children_by_field_name("declarator"):
        inner = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
        if inner is not None and inner.type == "identifier":
            out.append(inner)
    return out


def _own_slot_only(kernel: Node, loop: Node, array: str, tid: str, *, before: bool) -> bool:
    """Every use of ``array`` before (after) the loop is the subscript ``array[tid]``: a thread's own slot."""
    for n in _cuda.walk(kernel):
        if n.type != "identifier" or _cuda.text(n) != array:
            continue
        if (n.start_byte >= loop.start_byte) if before else (n.start_byte < loop.end_byte):
            continue
        parent = n.parent
        if parent is not None and parent.type == "array_declarator":
            continue  # the declaration
        index = _block_scan_db.subscript_text(parent) if parent is not None else None
        if index != tid:
            return False
    return True


def _uniform(kernel: Node) -> set[str]:
    """Scalar parameters the kernel never assigns: the same value in every thread."""
    return {
        name
        for name, _typ, pointer in _cuda.kernel_params(kernel)
        if not pointer
        and not any(
            n.type in ("assignment_expression", "update_expression")
            and _flat(n.child_by_field_name("left") or n.child_by_field_name("argument") or n) == name
            for n in _cuda.walk(kernel)
        )
    }


def analyse(kernel: Node, block: int, consts: dict[str, Constant]) -> BlockScan | str:
    """The block scan of ``kernel`` launched with ``block`` threads, or why there is none (with the line)."""
    arrays, arrays_2d = _shared(kernel, 1), _shared(kernel, 2)
    if not arrays_2d:
        return "no one- or two-dimensional __shared__ array: not a shared-memory block scan"
    tids = _thread_index(kernel)
    reasons: list[str] = []
    for loop in (n for n in _cuda.walk(kernel) if n.type == "for_statement"):
        stride = _stride(loop)
        if isinstance(stride, str):
            reasons.append(at(loop, stride))
            continue
        found = _body(loop, stride[0], arrays, tids)
        double = (
            None
            if not isinstance(found, str)
            else _block_scan_db.match(kernel, loop, stride[0], arrays_2d, tids, FUNCS)
        )
        if double is not None:
            found = (double[0], double[1], Step("", double[2].combine))
        if isinstance(found, str):
            reasons.append(at(loop, found))
            continue
        array, tid, step = found
        short, runtime = _reaches_block(stride[2], stride[1], block, consts, _uniform(kernel))
        why = (
            _scope_ok(kernel, loop, (step.tmp, stride[0]) if double is None else ())
            or short
            or (
                None
                if arrays_2d[array] in SCAN_TYPES
                else f"{array}'s element type {arrays_2d[array]} is not shuffled as is"
            )
        )
        if why is not None:
            reasons.append(why if why.startswith("line ") else at(loop, why))
            continue
        own = double is None  # the double-buffered result goes through a selector: keep both barriers
        return BlockScan(
            loop,
            array,
            arrays_2d[array],
            tid,
            step.combine,
            None if double is None else double[2],
            runtime,
            own_before=own and _own_slot_only(kernel, loop, array, tid, before=True),
            own_after=own and _own_slot_only(kernel, loop, array, tid, before=False),
        )
    return "; ".join(reasons) or "no for loop: not a Kogge-Stone block scan"
