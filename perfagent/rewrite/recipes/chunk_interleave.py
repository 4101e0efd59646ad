"""coalesce-access by chunk interleaving: a thread's CHUNK elements visited warp-contiguously.

A hand-coarsened element-wise kernel often gives each thread a contiguous chunk:
``first = (blockIdx.x * blockDim.x + threadIdx.x) * CHUNK`` and then ``first + k`` for ``k < CHUNK``.
At each step the 32 lanes of a warp touch 32 addresses ``CHUNK`` elements apart: one sector (or line)
per lane, a few bytes used of each. The block covers the same tile either way: thread ``t`` of block
``b`` visits ``b*B*C + t*C + k``; visiting ``b*B*C + k*B + t`` instead is a bijection on the block's
tile of ``B*C`` elements, and makes every step's warp access contiguous. The arithmetic per element
is unchanged, so when every element is independent of the others the result is identical.

Forms (on the tree-sitter parse tree of one kernel):
- counter loop: ``T first = G * C;`` (or ``G * C`` inline) and ``for (int k = 0; k < C; ++k)`` whose
  body uses ``first + k`` (directly or through ``T idx = first + k``);
- index loop: ``for (T i = first; i < first + C [&& i < n]; ++i)``;
where ``G`` is the global thread index (``blockIdx.x * blockDim.x + threadIdx.x``, any order and casts,
or a local holding it) and ``C`` is a literal, macro or unmodified name.

Precondition (element-wise, proven): no shared memory, atomics, barriers or warp intrinsics; no other
thread builtins; ``G``, ``first`` and the counter are used only to form the element index; every
subscript in the loop is indexed by that element index exactly; the loop assigns no variable declared
outside it (no per-thread running value); nothing follows the loop. Guards on the element index
(``if (idx < n)``, ``break``, ``return``) keep their meaning, since the visit order stays increasing.

The rewrite changes the index arithmetic only: ``G * C`` becomes ``(T)blockIdx.x * blockDim.x * C +
threadIdx.x`` and ``k`` becomes ``(T)k * blockDim.x`` (counter loop); the index loop steps by
``blockDim.x`` up to ``first + C * blockDim.x`` shifted the same way. The launch stays as it is.
"""

from __future__ import annotations

from tree_sitter import Node

from perfagent.rewrite.base import LaunchContext
from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._chunk_syntax import (
    GLOBAL_ID,
    Chunk,
    assigned,
    chunk_product,
    element_wise,
    ident,
    leaves,
    local_inits,
    operator,
    pointers,
    uses,
)
from perfagent.rewrite.recipes.framework import CudaRecipe, Source, Variant, register

NAME = "chunk-interleave"
_FORBIDDEN_CALLS = (
    "atomic",
    "__syncthreads",
    "__syncwarp",
    "__shfl",
    "__ballot",
    "__any",
    "__all",
    "cooperative",
)


def _forbidden(kernel: Node) -> str | None:
    if "__shared__" in _cuda.text(kernel):
        return "the kernel uses shared memory: threads share more than their own elements"
    for n in _cuda.walk(kernel):
        if n.type == "call_expression":
            fn = _cuda.text(n.child_by_field_name("function") or n)
            if fn.startswith(_FORBIDDEN_CALLS):
                return f"line {_cuda.line_of(n)}: {fn} ties threads together"
        if (axis := _cuda.builtin_axis(n)) and axis not in GLOBAL_ID:
            return f"line {_cuda.line_of(n)}: {axis[0]}.{axis[1]} is used (only a 1-D global index is interleaved)"
    return None


def _counter_loop(loop: Node, chunk: str) -> str | None:
    """The counter name of ``for (int k = 0; k < chunk; ++k | k++ | k += 1)``, else None."""
    init, cond, update = (loop.child_by_field_name(f) for f in ("initializer", "condition", "update"))
    if init is None or cond is None or update is None or init.type != "declaration":
        return None
    decl = next((c for c in init.named_children if c.type == "init_declarator"), None)
    if decl is None or _cuda.text(decl.child_by_field_name("value") or decl) != "0":
        return None
    k = ident(decl.child_by_field_name("declarator"))
    cond = _cuda.strip(cond)
    if k is None or cond.type != "binary_expression" or operator(cond) != "<":
        return None
    if (
        ident(cond.child_by_field_name("left")) != k
        or _cuda.text(_cuda.strip(cond.child_by_field_name("right") or cond)) != chunk
    ):
        return None
    step = _cuda.text(update).replace(" ", "")
    return k if step in (f"++{k}", f"{k}++", f"{k}+=1") else None


def _find(kernel: Node, block: str | None = None) -> Chunk | str:
    """The chunked loop and what to edit, or why the kernel is not of the form."""
    body = kernel.child_by_field_name("body")
    if body is None:
        return "the kernel has no body"
    decls = local_inits(kernel)
    env = {name: value for name, (value, _) in decls.items()}
    products = [p for n in _cuda.walk(body) if (p := chunk_product(n, env, block)) is not None]
    # the outermost product only (a product inside another is part of the same expression)
    products = [p for p in products if not any(q[0] != p[0] and _inside(p[0], q[0]) for q in products)]
    if not products:
        return "no chunk base 'global thread index * CHUNK' (each thread does not own a contiguous chunk)"
    if len(products) > 1:
        return f"line {_cuda.line_of(products[1][0])}: more than one chunk base"
    product, chunk = products[0]
    written = assigned(kernel)
    if chunk in written:
        return f"the chunk size {chunk} is assigned in the kernel"
    loops = [n for n in body.named_children if n.type == "for_statement"]
    if len(loops) != 1:
        return "not one top-level loop over the chunk"
    loop = loops[0]
    after = body.named_children[body.named_children.index(loop) + 1 :]
    if any(n.type != "comment" for n in after):
        return f"line {_cuda.line_of(after[0])}: code after the chunk loop"
    base_var = next((name for name, v in env.items() if _cuda.strip(v) == product), None)
    base_type = decls[base_var][1] if base_var else ""
    if base_var is not None and base_var in written:
        return f"the chunk base {base_var} is assigned in the kernel"
    gid = ident(
        next(
            (
                f
                for f in (product.child_by_field_name("left"), product.child_by_field_name("right"))
                if f is not None and ident(f) in env
            ),
            None,
        )
    )
    if gid is not None and len(uses(body, gid)) != 1:
        return f"the global index {gid} is used for more than the chunk base"
    k = _counter_loop(loop, chunk)
    if k is not None:
        return _counter_form(loop, product, chunk, k, base_var, base_type, decls, written)
    return _index_form(loop, product, chunk, base_var, base_type)


def _inside(node: Node, outer: Node) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def _sum_of(node: Node, a: str | Node, b: str) -> bool:
    """``node`` is ``a + b`` in either order (``a`` a name or the product node)."""
    node = _cuda.strip(node)
    if node.type != "binary_expression" or operator(node) != "+":
        return False
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    assert left is not None and right is not None

    def is_a(x: Node) -> bool:
        return ident(x) == a if isinstance(a, str) else _cuda.strip(x) == a

    return (is_a(left) and ident(right) == b) or (is_a(right) and ident(left) == b)


def _counter_form(
    loop: Node,
    product: Node,
    chunk: str,
    k: str,
    base_var: str | None,
    base_type: str,
    decls: dict[str, tuple[Node, str]],
    written: set[str],
) -> Chunk | str:
    base: str | Node = base_var if base_var is not None else product
    sums = [n for n in _cuda.walk(loop) if _sum_of(n, base, k)]
    uses_k = uses(loop.child_by_field_name("body") or loop, k)
    k_in_sums = [u for u in uses_k if any(_inside(u, s) for s in sums)]
    if not sums or len(k_in_sums) != len(uses_k):
        return f"the counter {k} is used for more than 'base + {k}'"
    if base_var is not None:
        outside = [u for u in uses(loop.parent or loop, base_var) if not any(_inside(u, s) for s in sums)]
        if outside:
            return f"the chunk base {base_var} is used for more than '{base_var} + {k}'"
    elif not any(_inside(product, s) for s in sums):
        return "the chunk base is not used as 'base + counter'"
    index_names = {
        name
        for name, (value, _) in decls.items()
        if any(_cuda.strip(value) == s for s in sums) and name not in written
    }
    why = element_wise(loop, index_names, [_cuda.strip(s) for s in sums], pointers(loop))
    if why is not None:
        return why
    index_type = base_type or next((t for name, (_, t) in decls.items() if name in index_names), "")
    return Chunk(product, chunk, index_type, loop, "counter", k_in_sums)


def _index_form(loop: Node, product: Node, chunk: str, base_var: str | None, base_type: str) -> Chunk | str:
    init, cond, update = (loop.child_by_field_name(f) for f in ("initializer", "condition", "update"))
    if init is None or cond is None or update is None or init.type != "declaration":
        return "the chunk loop is neither 'for (k = 0; k < CHUNK; ++k)' nor 'for (i = base; i < base + CHUNK; ++i)'"
    decl = next((c for c in init.named_children if c.type == "init_declarator"), None)
    i = ident(decl.child_by_field_name("declarator")) if decl is not None else None
    value = decl.child_by_field_name("value") if decl is not None else None
    base: str | Node = base_var if base_var is not None else product
    if (
        i is None
        or value is None
        or not (ident(value) == base if isinstance(base, str) else _cuda.strip(value) == base)
    ):
        return "the chunk loop does not start at the chunk base"
    if _cuda.text(update).replace(" ", "") not in (f"++{i}", f"{i}++", f"{i}+=1"):
        return f"the chunk loop does not step {i} by one"
    bounds = leaves(cond, "&&")
    limit = [
        c
        for c in bounds
        if operator(c) == "<"
        and ident(c.child_by_field_name("left")) == i
        and _sum_of(c.child_by_field_name("right") or c, base if isinstance(base, str) else product, chunk)
    ]
    others = [c for c in bounds if c not in limit]
    if len(limit) != 1 or any(
        i not in _cuda.identifiers_in(c) or ident(c.child_by_field_name("left")) != i for c in others
    ):
        return f"the chunk loop's condition is not '{i} < base + {chunk}' (and bounds on {i})"
    if base_var is not None:
        if len(uses(loop.parent or loop, base_var)) != 2:
            return f"the chunk base {base_var} is used for more than the loop's start and bound"
    body = loop.child_by_field_name("body")
    if body is not None and i in assigned(body):
        return f"the loop index {i} is assigned in the body"
    why = element_wise(loop, {i}, [], pointers(loop))
    if why is not None:
        return why
    bound = limit[0].child_by_field_name("right")
    assert bound is not None
    index_type = base_type or (_cuda.text(init.child_by_field_name("type") or init) if init else "")
    return Chunk(product, chunk, index_type, loop, "index", [], (bound, update))


def analyse(kernel: Node, block: str | None = None) -> Chunk | str:
    """The chunked loop, or why not; ``block``: the launch spec's block size as written, if any."""
    why = _forbidden(kernel)
    return why if why is not None else _find(kernel, block)


def _spec_block(launch: LaunchContext | None) -> str | None:
    return str(launch.block[0]) if launch is not None and len(launch.block) == 1 else None


def _cast_type(declared: str) -> str:
    words = declared.replace("const", "").replace("auto", "").split()
    return " ".join(words) or "long long"


class _ChunkInterleave(CudaRecipe[Chunk]):
    name = NAME
    transforms = ("coalesce-access",)
    summary = "element-wise kernels where each thread walks a contiguous chunk: visit the block's tile interleaved (coalesced)"

    def match(self, src: Source) -> Chunk | str:
        kernel = src.kernel
        return kernel if isinstance(kernel, str) else analyse(kernel, _spec_block(src.launch))

    def plan(self, src: Source, c: Chunk) -> list[Variant]:
        t = _cast_type(c.index_type)
        tile = f"({t})blockIdx.x * blockDim.x * ({c.chunk})"
        edits = [_cuda.Edit(c.product.start_byte, c.product.end_byte, f"({tile} + threadIdx.x)")]
        if c.form == "counter":
            edits += [
                _cuda.Edit(u.start_byte, u.end_byte, f"({t}){_cuda.text(u)} * blockDim.x")
                for u in c.counter_uses
            ]
        else:
            assert c.index_loop is not None
            bound, update = c.index_loop
            i = (
                ident(update.child_by_field_name("argument"))
                or _cuda.text(update).strip("+ ").split("+=")[0].strip()
            )
            chunk_node = next(
                n
                for n in _cuda.walk(bound)
                if _cuda.text(n) == c.chunk and n.type in ("identifier", "number_literal")
            )
            edits += [
                _cuda.Edit(chunk_node.start_byte, chunk_node.end_byte, f"({t})({c.chunk}) * blockDim.x"),
                _cuda.Edit(update.start_byte, update.end_byte, f"{i} += blockDim.x"),
            ]
        return [
            Variant(
                edits=edits,
                description=(
                    f"chunk interleave: each thread's {c.chunk} elements visited {c.chunk} steps of blockDim.x apart "
                    f"(line {_cuda.line_of(c.loop)}), so every step's warp access is contiguous; same tile per block, same launch"
                ),
                parameters={"chunk": c.chunk, "form": c.form},
            )
        ]


RECIPE = register(_ChunkInterleave())
applies, propose = RECIPE.applies, RECIPE.propose
