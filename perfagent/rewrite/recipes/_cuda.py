"""CUDA parse trees for the recipes: tree-sitter-cuda parsing, constant evaluation and byte-range edits.

Recipes find what to change on the parse tree and express every change as an ``Edit`` (a byte range of
the original source and its replacement). ``apply_edits`` applies them and re-parses the result; a
result with ERROR or MISSING nodes is refused, so a recipe can never hand back source that tree-sitter
cannot read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from tree_sitter import Node, Tree

from perfagent.rewrite.recipes._cuda_consts import Constant as Constant
from perfagent.rewrite.recipes._cuda_consts import constants as constants
from perfagent.rewrite.recipes._cuda_consts import evaluate as evaluate
from perfagent.rewrite.recipes._cuda_consts import int_constants as int_constants
from perfagent.rewrite.recipes._tree import Edit as Edit
from perfagent.rewrite.recipes._tree import ParseError as ParseError
from perfagent.rewrite.recipes._tree import apply_edits as apply_edits
from perfagent.rewrite.recipes._tree import first_error as first_error
from perfagent.rewrite.recipes._tree import line_of as line_of
from perfagent.rewrite.recipes._tree import parse as parse
from perfagent.rewrite.recipes._tree import require_clean as require_clean
from perfagent.rewrite.recipes._tree import splice as splice
from perfagent.rewrite.recipes._tree import text as text
from perfagent.rewrite.recipes._tree import walk as walk

ELEMENT_BYTES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "int8_t": 1, "uint8_t": 1, "bool": 1,
    "short": 2, "unsigned short": 2, "half": 2, "__half": 2, "__nv_bfloat16": 2, "int16_t": 2, "uint16_t": 2,
    "float": 4, "int": 4, "unsigned": 4, "unsigned int": 4, "int32_t": 4, "uint32_t": 4, "__half2": 4,
    "double": 8, "long long": 8, "unsigned long long": 8, "int64_t": 8, "uint64_t": 8, "float2": 8, "int2": 8,
    "float4": 16, "int4": 16, "uint4": 16, "double2": 16,
}  # fmt: skip
STATIC_SHARED_LIMIT = 48 * 1024
"""Largest static shared memory per block, byte (larger needs dynamic shared memory and an opt-in)."""


BUILTINS = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim"})
"""CUDA's thread-coordinate built-ins."""


def builtin_axis(node: Node) -> tuple[str, str] | None:
    """('threadIdx', 'x') for ``threadIdx.x``; None for anything else."""
    if node.type != "field_expression":
        return None
    obj, fld = node.child_by_field_name("argument"), node.child_by_field_name("field")
    if obj is None or fld is None or text(obj) not in BUILTINS:
        return None
    return text(obj), text(fld)


def strip(node: Node) -> Node:
    """``node`` without enclosing parentheses and casts."""
    while node.type in ("parenthesized_expression", "cast_expression"):
        inner = [c for c in node.named_children if c.type not in ("type_descriptor", "comment")]
        if not inner:
            break
        node = inner[-1]
    return node


# --------------------------------------------------------------------------- functions and kernels


def functions(tree: Tree) -> Iterator[Node]:
    """Every function_definition in the tree."""
    for node in walk(tree.root_node):
        if node.type == "function_definition":
            yield node


def function_name(fn: Node) -> str | None:
    decl = fn.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    if decl is None:
        return None
    name = decl.child_by_field_name("declarator")
    if name is None:
        return None
    return text(name).split("::")[-1]


def function_declarator(fn: Node) -> Node | None:
    decl = fn.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    return decl


def has_qualifier(fn: Node, qualifier: str) -> bool:
    """Whether the function carries ``__global__`` / ``__device__`` among its specifiers."""
    return any(
        child.type == qualifier or text(child) == qualifier
        for child in fn.children
        if child.type != "compound_statement"
    )


def is_kernel(fn: Node) -> bool:
    return has_qualifier(fn, "__global__")


def is_device_code(fn: Node) -> bool:
    return has_qualifier(fn, "__global__") or has_qualifier(fn, "__device__")


def kernels(tree: Tree, only: str | None = None) -> list[Node]:
    """The ``__global__`` function definitions (named ``only`` when given). A launch spec names a template
    kernel by its instantiation (``shuffle<double, 0, 2, 1>``): the definition is named without the
    arguments, so they are not part of the comparison."""
    bare = bare_name(only) if only is not None else None
    return [fn for fn in functions(tree) if is_kernel(fn) and (bare is None or function_name(fn) == bare)]


def bare_name(kernel: str) -> str:
    """A kernel's name without template arguments (``k<double, 2>`` -> ``k``), as definitions and
    launches (``launched_name``) are named."""
    return kernel.split("<", 1)[0].strip()


def target_kernel(source: str, name: str | None) -> Node | str:
    """The kernel a request is about (``name``, or the only one), or why there is none to edit.

    Raises:
        ParseError: the source does not parse cleanly (recipes only edit clean trees).
    """
    return select_kernel(require_clean(source), name)


def select_kernel(tree: Tree, name: str | None) -> Node | str:
    """``target_kernel`` on a tree already parsed cleanly."""
    found = kernels(tree, name)
    if not found:
        return f"no __global__ kernel{f' named {name}' if name else ''} in the source"
    if len(found) > 1 and name is None:
        return "several kernels and none named: which one the launch spec runs is unknown"
    return found[0]


def kernel_params(kernel: Node) -> list[tuple[str, str, bool]]:
    """(name, declared type as written, is a pointer) of every parameter of ``kernel``, in order."""
    decl = function_declarator(kernel)
    params = decl.child_by_field_name("parameters") if decl is not None else None
    out = []
    for p in params.named_children if params is not None else []:
        if p.type != "parameter_declaration":
            continue
        ident = next((n for n in walk(p) if n.type == "identifier"), None)
        pointer = any(n.type == "pointer_declarator" for n in walk(p))
        typ = p.child_by_field_name("type")
        out.append((text(ident) if ident else "", " ".join(text(typ).split()) if typ else "", pointer))
    return out


def is_extern_c(fn: Node) -> bool:
    parent = fn.parent
    while parent is not None:
        if parent.type == "linkage_specification":
            return True
        parent = parent.parent
    return False


def launch_bounds(fn: Node) -> Node | None:
    for child in fn.children:
        if child.type == "launch_bounds":
            return child
    return None


def launch_sites(tree: Tree) -> Iterator[Node]:
    """Every ``kernel<<<...>>>(...)`` call expression."""
    for node in walk(tree.root_node):
        if node.type == "call_expression" and any(c.type == "kernel_call_syntax" for c in node.children):
            yield node


def launched_name(call: Node) -> str:
    fn = call.child_by_field_name("function") or call.children[0]
    if fn.type == "template_function":
        fn = fn.child_by_field_name("name") or fn.children[0]
    return text(fn).split("::")[-1]


def launch_config_args(call: Node) -> list[Node]:
    """The expressions between <<< and >>> (grid, block, shared memory, stream)."""
    syntax = next(c for c in call.children if c.type == "kernel_call_syntax")
    return [c for c in syntax.named_children if c.type != "comment"]


def call_args(call: Node) -> list[Node]:
    args = call.child_by_field_name("arguments")
    if args is None:
        return []
    return [c for c in args.named_children if c.type != "comment"]


# --------------------------------------------------------------------------- integer constants


def initialisations(scope: Node) -> Iterator[tuple[Node, str, Node]]:
    """(init_declarator, name, value) of every ``T name = value;`` under ``scope``, in source order."""
    for n in walk(scope):
        if n.type != "init_declarator":
            continue
        decl, value = n.child_by_field_name("declarator"), n.child_by_field_name("value")
        if decl is not None and value is not None and decl.type == "identifier":
            yield n, text(decl), value


def init_declarators(scope: Node, name: str) -> list[Node]:
    """Every init_declarator of the plain variable ``name`` under ``scope``."""
    return [
        n
        for n in walk(scope)
        if n.type == "init_declarator"
        and (d := n.child_by_field_name("declarator")) is not None
        and d.type == "identifier"
        and text(d) == name
    ]


def identifiers_in(node: Node) -> set[str]:
    """Names under ``node`` (type_identifier too: ``dim3 block(THREADS)`` parses as a declaration)."""
    return {text(n) for n in walk(node) if n.type in ("identifier", "type_identifier")}


def needs_parentheses(node: Node) -> bool:
    """Whether ``node`` must be wrapped before appending `` + 1`` to it."""
    return node.type not in (
        "identifier",
        "number_literal",
        "parenthesized_expression",
        "call_expression",
        "subscript_expression",
    )


def element_type(decl: Node) -> str:
    """The declared type of a declaration, whitespace-normalised ('unsigned int')."""
    typ = decl.child_by_field_name("type")
    return " ".join(text(typ).split()) if typ is not None else ""


def has_storage(decl: Node, keyword: str) -> bool:
    return any(
        text(c) == keyword
        for c in decl.children
        if c.type in ("type_qualifier", "storage_class_specifier", keyword)
    )


def array_dims(declarator: Node) -> tuple[Node, list[Node | None]] | None:
    """(identifier, size nodes outermost-first as written: [d0, d1, ...]) of an array declarator."""
    sizes: list[Node | None] = []
    node = declarator
    if node.type == "init_declarator":
        node = node.child_by_field_name("declarator") or node
    if node.type != "array_declarator":
        return None
    while node.type == "array_declarator":
        sizes.append(node.child_by_field_name("size"))
        inner = node.child_by_field_name("declarator")
        if inner is None:
            return None
        node = inner
    if node.type != "identifier":
        return None
    sizes.reverse()
    return node, sizes


def shared_arrays(scope: Node) -> Iterator[tuple[Node, Node, Node, list[Node | None]]]:
    """(declaration, declarator, identifier, sizes) of every ``__shared__`` array under ``scope``."""
    for node in walk(scope):
        if node.type == "declaration" and has_storage(node, "__shared__"):
            for declarator in node.children_by_field_name("declarator"):
                dims = array_dims(declarator)
                if dims is not None:
                    yield node, declarator, dims[0], dims[1]


def static_shared_bytes(scope: Node, env: Mapping[str, Constant | int]) -> int | None:
    """Static shared memory of every ``__shared__`` array under ``scope`` with ``env`` (None if unknown)."""
    total = 0
    for decl, _declarator, _ident, sizes in shared_arrays(scope):
        if has_storage(decl, "extern"):
            continue
        elem = ELEMENT_BYTES.get(element_type(decl))
        if elem is None or any(s is None for s in sizes):
            return None
        count = 1
        for size in sizes:
            assert size is not None
            v = evaluate(text(size), env)
            if v is None:
                return None
            count *= v
        total += count * elem
    return total


def enclosing(node: Node, kind: str) -> Node | None:
    parent = node.parent
    while parent is not None and parent.type != kind:
        parent = parent.parent
    return parent


def line_start(data: bytes, offset: int) -> int:
    return data.rfind(b"\n", 0, offset) + 1
