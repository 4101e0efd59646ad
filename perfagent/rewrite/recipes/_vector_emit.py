"""vectorize-access: the rewritten kernel body (vector groups in a grid-stride loop, then a scalar tail)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from tree_sitter import Node, Tree

from perfagent.rewrite.recipes import _cuda, _vector_divide
from perfagent.rewrite.recipes._vector_body import Site
from perfagent.rewrite.recipes._vector_shape import Pointer, statements
from perfagent.rewrite.recipes._vector_types import Layout

NAME = "vectorize-access"


class Arrays(Protocol):
    """What loading and storing a group needs (a ``Plan``, or the lane-strided loop's plan)."""

    @property
    def layouts(self) -> dict[str, Layout]: ...
    @property
    def loaded(self) -> list[str]: ...
    @property
    def stored(self) -> list[str]: ...


@dataclass(frozen=True)
class Plan:
    kernel: str
    fn: Node
    index: str
    """The original index variable (kept in the scalar loop so the body is reused verbatim)."""
    bound: str
    """The bound of the index as written: a scalar parameter or an integer expression of them."""
    bound_params: dict[str, int]
    """The parameters the bound reads, by position among the kernel's (launch-spec args match by position)."""
    bound_node: Node | None
    index_type: str
    """The index's declared type."""
    index_values: bool
    """The body reads the index as a value (``i % C``): each lane and the tail re-declare it."""
    form: str
    """'grid-stride loop' or 'guarded' (one element per thread)."""
    body: Node
    """The statement run per element."""
    pointers: list[Pointer]
    """Pointer parameters the body accesses, in parameter order."""
    layouts: dict[str, Layout]
    """How each of them is loaded and stored."""
    width: int
    """Elements per group (one 16-byte vector of the smallest element type)."""
    sites: list[Site]
    loaded: list[str]
    """Arrays loaded before the lanes: read ones, and written ones a lane might leave unset."""
    stored: list[str]
    distinct: list[tuple[str, str]]
    """Pointer pairs that must differ for the vector path (in place, it would reorder reads and writes)."""

    def vectors(self) -> str:
        """'float4', 'uint4 and float4': the vector types, for comments and descriptions."""
        names = list(dict.fromkeys(layout.element.vector for layout in self.layouts.values()))
        return " and ".join(names)


def indent_of(data: bytes, offset: int) -> str:
    start = _cuda.line_start(data, offset)
    line = data[start:offset].decode("utf-8")
    return line[: len(line) - len(line.lstrip())]


def render_moved(data: bytes, node: Node, repl: dict[int, tuple[int, str]], indent: str) -> str:
    """``node``'s text with byte ranges replaced, its later lines moved from its own indent to ``indent``."""
    out, pos = [], node.start_byte
    for start in sorted(repl):
        end, new = repl[start]
        out += [data[pos:start].decode("utf-8"), new]
        pos = end
    out.append(data[pos : node.end_byte].decode("utf-8"))
    own = indent_of(data, node.start_byte)
    lines = "".join(out).split("\n")
    moved = [
        indent + (ln[len(own) :] if ln.startswith(own) else ln.lstrip()) if ln.strip() else ""
        for ln in lines[1:]
    ]
    return "\n".join([lines[0], *moved])


def braced(data: bytes, body: Node, repl: dict[int, tuple[int, str]], indent: str, unit: str) -> str:
    """The body as a braced block starting at ``indent`` (its own braces, or new ones)."""
    if body.type == "compound_statement":
        return render_moved(data, body, repl, indent)
    inner = render_moved(data, body, repl, indent + unit)
    if "\n" not in inner:
        return "{ " + inner + " }"
    return "{\n" + indent + unit + inner + "\n" + indent + "}"


def names_for(tree: Tree, pointers: list[Pointer], suffix: str) -> dict[str, str]:
    """A variable per array: ``x_v``, or ``perfagent_x_v`` when the file already uses that name."""
    taken = _cuda.identifiers_in(tree.root_node) | set(_cuda.constants(tree))
    return {
        p.name: (f"{p.name}{suffix}" if f"{p.name}{suffix}" not in taken else f"perfagent_{p.name}{suffix}")
        for p in pointers
    }


def load(plan: Arrays, p: Pointer, var: str, view: str) -> list[str]:
    """The declaration of ``p``'s vector (loaded or not) and of its typed view."""
    layout = plan.layouts[p.name]
    vec, count = layout.element.vector, layout.vectors
    const = "const " if p.name not in plan.stored else ""
    decl = var if count == 1 else f"{var}[{count}]"
    if p.name not in plan.loaded:
        lines = [f"{vec} {decl};"]
    elif count == 1:
        lines = [f"{const}{vec} {var} = reinterpret_cast<const {vec} *>({p.name})[perfagent_q];"]
    else:
        parts = ", ".join(
            f"reinterpret_cast<const {vec} *>({p.name})[perfagent_q * {count} + {j}]" for j in range(count)
        )
        lines = [f"{const}{vec} {decl} = {{{parts}}};"]
    if not layout.element.fields:
        typ = f"{const}{layout.element.spelling} *"
        lines.append(f"{typ}{view} = reinterpret_cast<{typ}>({'&' if count == 1 else ''}{var});")
    return lines


def store(plan: Arrays, p: str, var: str) -> list[str]:
    layout = plan.layouts[p]
    vec, count = layout.element.vector, layout.vectors
    if count == 1:
        return [f"reinterpret_cast<{vec} *>({p})[perfagent_q] = {var};"]
    return [
        f"reinterpret_cast<{vec} *>({p})[perfagent_q * {count} + {j}] = {var}[{j}];" for j in range(count)
    ]


def _condition(plan: Plan) -> str:
    """Every accessed pointer 16-byte aligned, and the order-sensitive pairs distinct."""
    aligned = " | ".join(f"(unsigned long long){p.name}" for p in plan.pointers)
    cond = f"(({aligned}) & 15ull) == 0ull"
    div = _vector_divide.divisions(plan.fn, plan.body, plan.index) if plan.index_values else None
    cond += _vector_divide.guard(div) if div is not None else ""
    return cond + "".join(f" && (const void *){a} != (const void *){b}" for a, b in plan.distinct)


def static_asserts(plan: Arrays) -> list[str]:
    """Sizes the vector path assumes for platform-dependent types (``long``: 8 bytes on LP64)."""
    elements = {o.element.spelling: o.element for o in plan.layouts.values() if o.element.platform}
    return [
        f'static_assert(sizeof({e.spelling}) == {e.size}, "{NAME}: {e.per_vector} {e.spelling} per 16 bytes");'
        for e in elements.values()
    ]


def _vector_path(data: bytes, tree: Tree, plan: Plan, i2: str, unit: str) -> list[str]:
    """The aligned branch: a grid-stride loop over groups, each loaded, run lane by lane, stored."""
    i3 = i2 + unit
    var, view = names_for(tree, plan.pointers, "_v"), names_for(tree, plan.pointers, "_e")
    w = plan.width
    lines = [i2 + line for line in static_asserts(plan)]
    lines += [
        f"{i2}const size_t perfagent_groups = perfagent_n / {w};",
        f"{i2}for (size_t perfagent_q = perfagent_tid; perfagent_q < perfagent_groups; "
        "perfagent_q += perfagent_stride) {",
    ]
    for p in plan.pointers:
        lines += [i3 + line for line in load(plan, p, var[p.name], view[p.name])]
    div = _vector_divide.divisions(plan.fn, plan.body, plan.index) if plan.index_values else None
    if div is not None:
        lines += [i3 + line for line in _vector_divide.setup(div, plan.index_type, f"perfagent_q * {w}")]
    for k in range(w):
        repl = {
            s.node.start_byte: (
                s.node.end_byte,
                plan.layouts[s.pointer].lane(var[s.pointer], view[s.pointer], k),
            )
            for s in plan.sites
        }
        if div is not None:
            repl.update(_vector_divide.replacements(div))
        block = braced(data, plan.body, repl, i3 + (unit if plan.index_values else ""), unit)
        if plan.index_values:  # the lane's own index, in the original type
            block = (
                f"{{\n{i3 + unit}const {plan.index_type} {plan.index} = ({plan.index_type})(perfagent_q * {w} + {k});"
                f"\n{i3 + unit}{block}\n{i3}}}"
            )
        lines.append(i3 + block)
        if div is not None and k + 1 < w:
            lines.append(i3 + _vector_divide.step(div))
    for name in plan.stored:
        lines += [i3 + line for line in store(plan, name, var[name])]
    return [*lines, f"{i2}}}", f"{i2}perfagent_done = perfagent_groups * {w};"]


def kernel_body(source: str, plan: Plan) -> str:
    """The new kernel body: the vector path behind its run-time tests, then the scalar loop."""
    data = source.encode("utf-8")
    tree = _cuda.parse(data)
    base = indent_of(data, plan.fn.start_byte)
    first = statements(plan.fn.child_by_field_name("body") or plan.fn)
    unit = (indent_of(data, first[0].start_byte)[len(base) :] if first else "") or "    "
    i1, i2 = base + unit, base + unit * 2
    n = plan.bound
    lines = [
        "{",
        f"{i1}// {NAME}: groups of {plan.width} elements ({plan.vectors()}, 16 bytes per access) in a "
        "grid-stride loop,",
        f"{i1}// then a scalar loop for the tail (and for every element when a pointer is not 16-byte aligned).",
        f"{i1}const size_t perfagent_tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;",
        f"{i1}const size_t perfagent_stride = (size_t)gridDim.x * blockDim.x;",
        f"{i1}const size_t perfagent_n = ({n}) > 0 ? (size_t)({n}) : 0;",
        f"{i1}size_t perfagent_done = 0;",
        f"{i1}if ({_condition(plan)}) {{",
        *_vector_path(data, tree, plan, i2, unit),
        f"{i1}}}",
    ]
    i = "perfagent_i" if plan.index_values else plan.index
    head = f"for (size_t {i} = perfagent_done + perfagent_tid; {i} < perfagent_n; {i} += perfagent_stride)"
    if plan.index_values:
        own = f"const {plan.index_type} {plan.index} = ({plan.index_type}){i};"
        lines += [f"{i1}{head} {{", f"{i2}{own}", i2 + render_moved(data, plan.body, {}, i2), f"{i1}}}"]
    elif plan.body.type == "compound_statement":
        lines.append(f"{i1}{head} {render_moved(data, plan.body, {}, i1)}")
    else:
        lines += [f"{i1}{head}", i2 + render_moved(data, plan.body, {}, i2)]
    lines.append(base + "}")
    return "\n".join(lines)
