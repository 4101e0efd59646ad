"""Recipe ``vectorize-access``: 16-byte loads and stores for element-wise kernels, any element type.

Precondition (tree-sitter-cuda parse tree), on the ``__global__`` kernel named by the request (or the
only one in the file):

- the body is exactly ``<T> i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) <body>`` (operand
  order free, casts and parentheses allowed, ``n`` an integer scalar parameter), or a grid-stride loop
  ``for (<T> i = <that index>; i < n; i += <gridDim.x * blockDim.x or a variable holding it>) <body>``
  after optional declarations of that stride and of the index itself (``_vector_shape``);
- in ``<body>`` a pointer parameter appears only as ``p[i]``, ``i`` only inside those subscripts, and
  nothing depends on which thread runs which element (``_vector_body``);
- every pointer the body accesses is a single-level, non-volatile pointer to an element type with a
  16-byte vector form (``_vector_types``): ``float`` (float4), ``double`` (double2), ``int`` /
  ``unsigned`` (int4 / uint4), ``long long`` (longlong2), and through a typed view of a ``uint4``
  ``__half``, ``__nv_bfloat16``, ``__half2``, 1-, 2-, 4- and 8-byte integers; element sizes may be
  mixed while one group takes at most four vectors of an array (``__half`` in, ``float`` out);
- the kernel is not already vectorised (no CUDA vector type, no ``reinterpret_cast``).

The rewrite replaces the kernel body (the signature stays): a grid-stride loop over groups of
``16 / smallest element size`` elements (4 for float, 8 for __half, 16 for uint8, 2 for double) loads
each read array as 16-byte vectors, runs one copy of ``<body>`` per lane (each in its own braces, every
``p[i]`` turned into its lane), and stores each written array as 16-byte vectors (``_vector_emit``). It
runs only when every accessed pointer is 16-byte aligned (tested at run time), and when an in-place call
could reorder reads and writes only for distinct pointers; a scalar grid-stride loop over the original
``<body>`` handles the tail, and everything when a test fails. The result is grid-stride, so it is
correct under any launch grid.
"""

from __future__ import annotations

from tree_sitter import Node, Tree

from perfagent.rewrite.base import RewriteRequest
from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._thread_index import Rewrites, render
from perfagent.rewrite.recipes._vector_body import (
    Site,
    index_as_value,
    looping,
    order_sensitive,
    sites,
    written_everywhere,
)
from perfagent.rewrite.recipes._vector_emit import NAME, Plan, kernel_body
from perfagent.rewrite.recipes._vector_shape import Pointer, assigned_scalars, params, shape
from perfagent.rewrite.recipes._vector_types import (
    MAX_VECTORS,
    VECTOR_BYTES,
    VECTOR_TYPES,
    Layout,
    group_width,
)
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, register
from perfagent.workloads.launch_spec import LaunchOverride

__all__ = ["ALIGN_NOTE", "NAME", "RECIPE", "applies", "propose"]

ALIGN_NOTE = (
    "needs 16-byte aligned pointers for the vector path "
    "(checked at run time; misaligned pointers take the scalar path)"
)


def _kernel(tree: Tree, request: RewriteRequest) -> Node | str:
    fns = _cuda.kernels(tree, request.kernel)
    if not fns:
        return f"no __global__ function{' named ' + request.kernel if request.kernel else ''} in the source"
    if len(fns) > 1:
        names = ", ".join(_cuda.function_name(f) or "?" for f in fns)
        return f"{len(fns)} __global__ functions ({names}): name the one to vectorise"
    return fns[0]


def _not_element_wise(fn: Node, kname: str) -> str | None:
    """Why the kernel is not a plain scalar kernel: already vectorised, or shared memory."""
    for node in _cuda.walk(fn):
        name = _cuda.text(node) if node.type in ("identifier", "type_identifier") else ""
        if name in VECTOR_TYPES or name == "reinterpret_cast":
            return f"{kname} is already vectorised ({name} at line {_cuda.line_of(node)})"
        if node.type == "declaration" and _cuda.has_storage(node, "__shared__"):
            return (
                f"{kname} uses __shared__ memory (line {_cuda.line_of(node)}): "
                "its elements are not independent per thread"
            )
    return None


def _layouts(used: list[Pointer]) -> tuple[int, dict[str, Layout]] | str:
    """(elements per group, each array's vectors per group), or why the element types do not fit."""
    for p in used:
        if p.element is None:
            return p.refusal()
    elements = [p.element for p in used if p.element is not None]
    width = group_width(elements)
    layouts = {p.name: Layout(e, width * e.size // VECTOR_BYTES) for p, e in zip(used, elements, strict=True)}
    crowded = [
        f"{p.name} ({p.spelling}, {layouts[p.name].vectors})"
        for p in used
        if layouts[p.name].vectors > MAX_VECTORS
    ]
    if crowded:
        small = min(elements, key=lambda e: e.size)
        return (
            f"mixed element types: a group of {width} {small.spelling} elements takes more than "
            f"{MAX_VECTORS} 16-byte vectors of {', '.join(crowded)}"
        )
    return width, layouts


def _distinct(found: list[Site], used: list[Pointer], body: Node) -> list[tuple[str, str]]:
    """Pointer pairs an in-place call would make the vector path read and write in another order."""
    restrict = {p.name for p in used if p.restrict}
    distinct: list[tuple[str, str]] = []
    for a in found:
        for b in found:
            pair = (a.pointer, b.pointer)
            if (
                a.kind != "read"
                and a.pointer != b.pointer
                and not {a.pointer, b.pointer} <= restrict
                and pair not in distinct
                and pair[::-1] not in distinct
                and order_sensitive(a, b, body)
            ):
                distinct.append(pair)
    return distinct


def _plan(src: Source) -> Plan | str:
    fn = _kernel(src.tree, src.request)
    if isinstance(fn, str):
        return fn
    kname = _cuda.function_name(fn) or "?"
    why = _not_element_wise(fn, kname)
    parameters = params(fn, kname) if why is None else why
    if isinstance(parameters, str):
        return parameters
    pointers, scalars = parameters
    where = shape(fn, kname, scalars)
    if isinstance(where, str):
        return where
    found = sites(where.body, where.index, pointers, where.dropped)
    if isinstance(found, str):
        return f"{kname}, {where.form} body at line {_cuda.line_of(where.body)}: {found}"
    changed = assigned_scalars(fn, _cuda.identifiers_in(where.bound_node or where.body) & set(scalars))
    if changed:
        return f"{kname} assigns {changed[0]}, which its bound {where.bound} reads: the bound is not loop-invariant"
    valued = index_as_value(where.body, where.index, pointers)
    loop = looping(where.body) if valued else None
    if loop is not None:
        return (
            f"{kname} reads its index {where.index} as a value in a body that loops (line "
            f"{_cuda.line_of(loop)}): a row-per-thread kernel, not element-wise"
        )
    used = [p for p in pointers if any(s.pointer == p.name for s in found)]
    fit = _layouts(used)
    if isinstance(fit, str):
        return f"{kname}: {fit}"
    read = {s.pointer for s in found if s.kind != "write"}
    written = {s.pointer for s in found if s.kind != "read"}
    return Plan(
        kernel=kname,
        fn=fn,
        index=where.index,
        bound=where.bound,
        bound_params={
            name: scalars[name][0] for name in _cuda.identifiers_in(where.bound_node or fn) if name in scalars
        },
        bound_node=where.bound_node,
        index_type=where.index_type,
        index_values=valued,
        form=where.form,
        body=where.body,
        pointers=used,
        layouts=fit[1],
        width=fit[0],
        sites=found,
        loaded=[p.name for p in used if p.name in read or not written_everywhere(where.body, p.name)],
        stored=[p.name for p in used if p.name in written],
        distinct=_distinct(found, used, where.body),
    )


def _grid(request: RewriteRequest, plan: Plan) -> str | None:
    """``ceil_div(V, W * (B))``: one group per thread, V the bound in the spec's names (each parameter
    replaced by the value the spec passes, casts dropped), B the spec's block."""
    launch = request.launch
    if launch is None or len(launch.grid) != 1 or len(launch.block) != 1 or plan.bound_node is None:
        return None
    values = {}
    for name, position in plan.bound_params.items():
        value = launch.args[position].value if position < len(launch.args) else None
        if value is None:
            return None
        values[name] = value
    rewrites: Rewrites = {}

    def uncast(node: Node) -> str:  # the spec's expressions have no C casts
        value = node.child_by_field_name("value")
        return _cuda.text(node) if value is None else f"({render(value, rewrites)})"

    for node in _cuda.walk(plan.bound_node):
        if node.type == "identifier" and _cuda.text(node) in values:
            rewrites[node.id] = lambda n: f"({values[_cuda.text(n)]})"
        elif node.type == "cast_expression":
            rewrites[node.id] = uncast
    single = plan.bound_node.type == "identifier"
    total = values[_cuda.text(plan.bound_node)] if single else render(plan.bound_node, rewrites)
    return f"ceil_div({total}, {plan.width} * ({launch.block[0]}))"


def _arrays(plan: Plan, names: list[str]) -> str:
    """'x (float4), in (uint4 as 8 __half), out (2 float4)'."""
    parts = []
    for name in names:
        layout = plan.layouts[name]
        e = layout.element
        vec = e.vector if layout.vectors == 1 else f"{layout.vectors} {e.vector}"
        parts.append(f"{name} ({vec}{'' if e.fields else f' as {e.per_vector} {e.spelling}'})")
    return ", ".join(parts) or "nothing"


def _launches(request: RewriteRequest, plan: Plan) -> list[tuple[LaunchOverride | None, list[str]]]:
    """One group per thread when the launch spec gives the bound, then the current grid (the kernel is
    grid-stride: these two are its launch sweep, so it declares no ``Retune``)."""
    grid = _grid(request, plan)
    if grid is not None:
        return [
            (
                LaunchOverride(grid=[grid]),
                [f"grid set to {grid}: one group of {plan.width} elements per thread"],
            ),
            (None, ["current grid kept: correct under any grid (grid-stride)"]),
        ]
    why = (
        "no launch spec"
        if request.launch is None
        else f"the launch spec is not 1-D or gives no value for the parameters of the bound {plan.bound}"
    )
    w, n = plan.width, plan.bound
    return [
        (
            None,
            [
                f"grid unchanged ({why}): the kernel is grid-stride and correct under any grid, but is "
                f"fastest with about {n}/{w} threads (ceil_div({n}, {w} * block) blocks)"
            ],
        )
    ]


class _VectorizeAccess(CudaRecipe[Plan]):
    name = NAME
    transforms = ("vectorize-access",)
    summary = (
        "16-byte loads/stores (float4, double2, int4, uint4 views for __half/bf16/int8/uint8...) for "
        "element-wise kernels indexed by blockIdx.x * blockDim.x + threadIdx.x (guarded or grid-stride), "
        "with a run-time alignment test and a scalar tail"
    )
    wrong_language = (
        "vectorize-access edits CUDA sources (Triton vectorises on its own given contiguity hints)"
    )

    def match(self, src: Source) -> Plan | str:
        return _plan(src)

    def plan(self, src: Source, m: Plan) -> list[Variant]:
        """The vectorised kernel with one group per thread (when the launch spec allows), then the current grid."""
        body = m.fn.child_by_field_name("body")
        assert body is not None
        edit = Edit(body.start_byte, body.end_byte, kernel_body(src.text, m))
        w = m.width
        description = (
            f"Vectorise {m.kernel} ({m.form}): 16-byte loads of {_arrays(m, m.loaded)} and 16-byte "
            f"stores of {_arrays(m, m.stored)} in a grid-stride loop over groups of {w} elements "
            f"(each lane runs the original body), a scalar loop over the {m.bound} % {w} tail."
        )
        notes = [ALIGN_NOTE]
        if m.distinct:
            pairs = ", ".join(f"{a}/{b}" for a, b in m.distinct)
            notes.append(
                f"the vector path also needs distinct buffers for {pairs} "
                "(checked at run time; an in-place call takes the scalar path)"
            )
        return [
            Variant(
                edits=[edit],
                description=description,
                parameters={"width": w},
                launch=launch,
                notes=notes + extra,
            )
            for launch, extra in _launches(src.request, m)
        ]


RECIPE = register(_VectorizeAccess())
applies, propose = RECIPE.applies, RECIPE.propose
