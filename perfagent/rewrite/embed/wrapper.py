"""The launch a KernelBench wrapper writes: read it as a ``LaunchContext``, write a recipe's change back.

``read_launch`` finds the one ``kernel<<<grid, block, smem, stream>>>(args)`` of the kernel in the
CUDA translation unit, in the host function that launches it, and translates grid, block, dynamic
shared memory and the scalar arguments into launch-spec expressions (``cpp_expr.Translator``); pointer
arguments taken from a tensor (``x.data_ptr<float>()``) become buffers of ``x.numel()`` elements.
``write_launch`` applies a recipe's ``LaunchOverride`` to the same launch: the changed ``<<<...>>>``
arguments are replaced by C++ (``dim3(...)`` of unsigned ints, ``size_t`` shared memory), and the
run-time values they use are declared as ``const`` locals just before the launch statement
(``const long long pa_x_numel = (long long)(x.numel());``, device attributes through
``cudaDeviceGetAttribute``), so the launch computes for the real sizes what the recipe reasoned about.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node, Tree

from perfagent.rewrite.base import LaunchArg, LaunchContext
from perfagent.rewrite.embed.cpp_expr import CppWriter, EmbedError, Leaf, Local, Translator
from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._cuda import Edit
from perfagent.workloads.launch_spec import LaunchOverride

__all__ = ["EmbedError", "WrapperLaunch", "read_launch", "write_launch"]

_PURE_CALLS = frozenset({"min", "max", "std::min", "std::max", "::min", "::max", "dim3"})
"""Calls known not to change a variable passed to them."""


@dataclass(frozen=True)
class WrapperLaunch:
    """A kernel's launch in its host wrapper, in launch-spec terms."""

    kernel: str
    function: str
    """The host function holding the launch."""
    context: LaunchContext
    """Grid, block, shared memory and arguments as launch-spec expressions; params = the leaves' nominal values."""
    leaves: dict[str, Leaf]
    defines: dict[str, int]
    line: int
    """Line of the launch in the CUDA text."""


def launches_of(tree: Tree, kernel: str) -> list[Node]:
    """Every launch of ``kernel`` (template launches included) in host code."""
    return [c for c in _cuda.launch_sites(tree) if _cuda.launched_name(c) == kernel]


def read_launch(tree: Tree, kernel: str) -> WrapperLaunch:
    """The launch context of ``kernel``'s only launch in ``tree``.

    Raises:
        EmbedError: no launch, several launches, or a launch that cannot be read (with the reason).
    """
    sites = launches_of(tree, kernel)
    if not sites:
        raise EmbedError(f"no {kernel}<<<...>>> launch in the CUDA source")
    if len(sites) > 1:
        lines = ", ".join(str(_cuda.line_of(s)) for s in sites)
        raise EmbedError(
            f"{kernel} is launched {len(sites)} times (lines {lines}): which launch to change is ambiguous"
        )
    call = sites[0]
    fn = _cuda.enclosing(call, "function_definition")
    if fn is None:
        raise EmbedError(f"the {kernel} launch on line {_cuda.line_of(call)} is not inside a function")
    translator = Translator(
        locals=_locals(fn, call), constants=_file_constants(tree), param_types=_param_types(fn)
    )
    config = _cuda.launch_config_args(call)
    if len(config) < 2:
        raise EmbedError(f"the {kernel} launch on line {_cuda.line_of(call)} has no block argument")
    grid, block = translator.dims(config[0]), translator.dims(config[1])
    shared = translator.expr(config[2]) if len(config) > 2 else "0"
    args = _kernel_args(tree, kernel, call, translator)
    context = LaunchContext(
        grid=[_number(g) for g in grid],
        block=[_number(b) for b in block],
        shared_mem=_number(shared),
        params={leaf.name: leaf.nominal for leaf in translator.leaves.values()},
        defines=dict(translator.defines),
        args=args,
    )
    return WrapperLaunch(
        kernel=kernel,
        function=_cuda.function_name(fn) or "?",
        context=context,
        leaves=dict(translator.leaves),
        defines=dict(translator.defines),
        line=_cuda.line_of(call),
    )


def _number(expr: str) -> str | int:
    return int(expr) if expr.lstrip("-").isdigit() else expr


def _file_constants(tree: Tree) -> dict[str, int]:
    """Integer macros and namespace-scope constants (a function's own constants are its locals)."""
    found = _cuda.constants(tree)
    out: dict[str, int] = {}
    for name, const in found.items():
        if const.kind == "constexpr" and _cuda.enclosing(const.value_node, "function_definition") is not None:
            continue
        value = _cuda.evaluate(const.expr, found)
        if value is not None:
            out[name] = value
    return out


def _param_types(fn: Node) -> dict[str, str]:
    decl = _cuda.function_declarator(fn)
    plist = decl.child_by_field_name("parameters") if decl is not None else None
    out: dict[str, str] = {}
    for p in plist.named_children if plist is not None else []:
        typ, ident = p.child_by_field_name("type"), p.child_by_field_name("declarator")
        if typ is not None and ident is not None and ident.type == "identifier":
            out[_cuda.text(ident)] = _cuda.text(typ)
    return out


def _locals(fn: Node, call: Node) -> dict[str, Local]:
    """Locals declared before the launch, each with whether it may be inlined."""
    body = fn.child_by_field_name("body") or fn
    declared: dict[str, list[Local]] = {}
    assigned: set[str] = set()
    for node in _cuda.walk(body):
        if node.type == "declaration" and node.start_byte < call.start_byte:
            for name, local in _declared(node, call):
                declared.setdefault(name, []).append(local)
        elif node.type == "assignment_expression":
            left = node.child_by_field_name("left")
            while left is not None and left.type in ("field_expression", "subscript_expression"):
                left = left.child_by_field_name("argument") or left.named_children[0]
            if left is not None and left.type == "identifier":
                assigned.add(_cuda.text(left))
        elif node.type in ("update_expression", "pointer_expression"):
            arg = node.child_by_field_name("argument")
            op = node.child_by_field_name("operator")
            writes = node.type == "update_expression" or (op is not None and _cuda.text(op) == "&")
            if writes and arg is not None and arg.type == "identifier":
                assigned.add(_cuda.text(arg))  # ++x, &x (cudaDeviceGetAttribute(&x, ...) writes it)
        elif node.type == "call_expression" and node.id != call.id:
            callee = node.child_by_field_name("function")
            if callee is None or _cuda.text(callee).replace(" ", "") not in _PURE_CALLS:
                # a bare variable handed to a function may be taken by reference and changed there
                assigned.update(_cuda.text(a) for a in _cuda.call_args(node) if a.type == "identifier")
    out: dict[str, Local] = {}
    for name, found in declared.items():
        local = found[-1]
        ok = len(found) == 1 and name not in assigned and local.inlinable
        out[name] = Local(local.type, local.value, local.args, ok)
    # an inlined initialiser must not read a local that changes (the launch would see another value)
    for name, local in list(out.items()):
        if local.inlinable and any(
            n in out and not out[n].inlinable
            for node in ([local.value] if local.value is not None else list(local.args))
            for n in _cuda.identifiers_in(node)
        ):
            out[name] = Local(local.type, local.value, local.args, False)
    return out


def _declared(decl: Node, call: Node) -> list[tuple[str, Local]]:
    typ = decl.child_by_field_name("type")
    type_text = " ".join(_cuda.text(typ).split()) if typ is not None else ""
    quals = " ".join(_cuda.text(c) for c in decl.children if c.type == "type_qualifier")
    full = f"{quals} {type_text}".strip()
    scope = decl.parent
    in_scope = scope is not None and scope.start_byte <= call.start_byte < scope.end_byte
    out: list[tuple[str, Local]] = []
    for child in decl.named_children:
        if child.type == "init_declarator":
            ident, value = child.child_by_field_name("declarator"), child.child_by_field_name("value")
            if ident is None or ident.type != "identifier" or value is None:
                continue
            args = _ctor_args(value)
            scalar = None if args is not None else value
            out.append((_cuda.text(ident), Local(full, scalar, tuple(args or ()), in_scope)))
        elif child.type == "function_declarator" and type_text == "dim3":  # dim3 block(TILE, TILE)
            ident = child.child_by_field_name("declarator")
            params = child.child_by_field_name("parameters")
            if ident is not None and params is not None:
                nodes = tuple(_parse_expr(_cuda.text(p)) for p in params.named_children)
                out.append((_cuda.text(ident), Local(full, None, nodes, in_scope)))
        elif child.type == "identifier":
            out.append((_cuda.text(child), Local(full, None, (), False)))  # declared without a value
    return out


def _ctor_args(value: Node) -> list[Node] | None:
    """Constructor arguments of ``T x(a, b)``, ``T x{a, b}`` or ``T x = dim3(a, b)``; None for a scalar value."""
    if value.type in ("argument_list", "initializer_list"):
        return [a for a in value.named_children if a.type != "comment"]
    if value.type == "call_expression":
        fn, args = value.child_by_field_name("function"), value.child_by_field_name("arguments")
        if fn is not None and args is not None and _cuda.text(fn) == "dim3":
            return [a for a in args.named_children if a.type != "comment"]
    return None


def _parse_expr(text: str) -> Node:
    """An expression node for ``text`` (``dim3 block(TILE, TILE)`` parses its arguments as parameter types)."""
    tree = _cuda.parse(f"void pa_expr() {{ ({text}); }}")
    for node in _cuda.walk(tree.root_node):
        if node.type == "parenthesized_expression":
            return node.named_children[0]
    raise EmbedError(f"cannot read {text!r} as an expression")


def _kernel_args(tree: Tree, kernel: str, call: Node, translator: Translator) -> list[LaunchArg]:
    """The launch's arguments by the kernel's parameter names: buffers (with a tensor's size) and scalars."""
    found = _cuda.kernels(tree, kernel)
    params: list[tuple[str, bool]] = []
    if found:
        decl = _cuda.function_declarator(found[0])
        plist = decl.child_by_field_name("parameters") if decl is not None else None
        for p in plist.named_children if plist is not None else []:
            idents = [n for n in _cuda.walk(p) if n.type == "identifier"]
            pointer = any(
                n.type in ("pointer_declarator", "abstract_pointer_declarator") for n in _cuda.walk(p)
            )
            params.append((_cuda.text(idents[-1]) if idents else "", pointer))
    out: list[LaunchArg] = []
    for i, arg in enumerate(_cuda.call_args(call)):
        name, pointer = params[i] if i < len(params) else (f"arg{i}", False)
        if pointer:
            tensor = _tensor_of(arg)
            shape = [translator.leaf(f"{tensor}.numel()")] if tensor is not None else []
            out.append(LaunchArg(name=name or f"arg{i}", shape=list(shape)))
        else:
            try:
                value: str | int | None = _number(translator.expr(arg))
            except EmbedError:
                value = None
            out.append(LaunchArg(name=name or f"arg{i}", value=value))
    return out


def _tensor_of(arg: Node) -> str | None:
    """``x`` of ``x.data_ptr<T>()`` / ``(T*)x.data_ptr()`` / ``x.data<T>()`` (casts allowed)."""
    node = arg
    while node.type in ("cast_expression", "parenthesized_expression"):
        node = node.child_by_field_name("value") or node.named_children[-1]
    if node.type != "call_expression":
        return None
    fn = node.child_by_field_name("function")
    if fn is None or fn.type != "field_expression":
        return None
    fld, obj = fn.child_by_field_name("field"), fn.child_by_field_name("argument")
    method = _cuda.text(fld).split("<")[0] if fld is not None else ""
    if obj is None or method not in ("data_ptr", "data", "mutable_data_ptr", "const_data_ptr"):
        return None
    return _cuda.text(obj)


# ---------------------------------------------------------------------------------------------- write back


def write_launch(text: str, launch: WrapperLaunch, override: LaunchOverride) -> str:
    """``text`` (the CUDA unit, possibly with the kernel rewritten) with ``override`` applied to the launch.

    Raises:
        EmbedError: the launch is gone or ambiguous, the override needs ``-D`` macros, or an expression
            has no C++ form over the wrapper's values.
    """
    if override.defines:
        raise EmbedError("the candidate needs -D macros, which load_inline's sources do not carry")
    tree = _cuda.require_clean(text)
    sites = launches_of(tree, launch.kernel)
    if len(sites) != 1:
        raise EmbedError(f"{launch.kernel} is launched {len(sites)} times in the rewritten source")
    call = sites[0]
    fn = _cuda.enclosing(call, "function_definition")
    writer = CppWriter(
        leaves=launch.leaves, defines=launch.defines, taken=_cuda.identifiers_in(fn or tree.root_node)
    )
    config = _cuda.launch_config_args(call)
    edits: list[Edit] = []
    for index, dims in ((0, override.grid), (1, override.block)):
        if dims:
            parts = ", ".join(_unsigned(writer.write(d)) for d in dims)
            edits.append(Edit(config[index].start_byte, config[index].end_byte, f"dim3({parts})"))
    if override.shared_mem is not None:
        written = writer.write(override.shared_mem)
        smem = (
            written
            if written.isdigit()
            else f"(size_t){written}"
            if _enclosed(written)
            else f"(size_t)({written})"
        )
        if len(config) > 2:
            edits.append(Edit(config[2].start_byte, config[2].end_byte, smem))
        else:
            edits.append(Edit(config[1].end_byte, config[1].end_byte, f", {smem}"))
    if override.kernel and override.kernel != launch.kernel:
        head = call.child_by_field_name("function") or call.children[0]
        name = head.child_by_field_name("name") if head.type == "template_function" else head
        assert name is not None
        edits.append(Edit(name.start_byte, name.end_byte, override.kernel))
    if not edits:
        return text
    changed = _cuda.apply_edits(text, edits)
    return _declare(changed, override.kernel or launch.kernel, writer)


def _unsigned(cpp: str) -> str:
    """A dim3 component: literals as they are, expressions cast (dim3 takes unsigned int)."""
    if cpp.isdigit():
        return cpp
    return f"(unsigned int){cpp}" if _enclosed(cpp) else f"(unsigned int)({cpp})"


def _enclosed(cpp: str) -> bool:
    """The whole text is one parenthesised group: ``(a + b) / c`` is not, ``((a + b) / c)`` is."""
    if not cpp.startswith("("):
        return False
    depth = 0
    for i, ch in enumerate(cpp):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0:
            return i == len(cpp) - 1
    return False


def _declare(text: str, kernel: str, writer: CppWriter) -> str:
    """Insert the locals the new launch uses right before its statement (in braces when it has none)."""
    if not writer.local_names:
        return text
    tree = _cuda.parse(text)
    [call] = launches_of(tree, kernel)
    stmt = _cuda.enclosing(call, "expression_statement")
    if stmt is None:
        raise EmbedError(f"the {kernel} launch is not a statement of its own")
    data = text.encode("utf-8")
    start = _cuda.line_start(data, stmt.start_byte)
    indent = data[start : stmt.start_byte].decode("utf-8")
    if stmt.parent is not None and stmt.parent.type == "compound_statement" and not indent.strip():
        edit = Edit(start, start, writer.declarations(indent))
    else:
        body = _cuda.text(stmt)
        edit = Edit(
            stmt.start_byte,
            stmt.end_byte,
            "{\n" + writer.declarations(indent + "    ") + indent + "    " + body + "\n" + indent + "}",
        )
    return _cuda.apply_edits(text, [edit])
