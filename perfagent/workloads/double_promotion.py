"""A float64 copy of a launch-spec kernel: its source promoted to double, its launch to float64 buffers.

The accuracy rule (``perfagent.verify.accuracy``) measures a candidate and the original against a float64
run of the original. A KernelBench problem gets one by casting its PyTorch model; a launch-spec kernel has
only its CUDA source, so ``promote_source`` rewrites that source on its tree-sitter-cuda parse tree:
``float`` -> ``double`` (scalars, pointers, casts, template arguments, ``sizeof``), ``float2/4`` ->
``double2/4``, ``1.0f`` -> ``1.0``, float math and intrinsics -> their double forms (``expf`` -> ``exp``,
``__expf`` -> ``exp``, ``__frcp_rn`` -> ``__drcp_rn``, ``__fdividef`` -> a double helper), ``FLT_MAX`` ->
``DBL_MAX``; ``__shfl*_sync`` and ``atomicAdd`` have double overloads and stay as they are.
``promote_launch`` then gives every float32 argument of the spec float64 and doubles the dynamic shared
memory a kernel declares as float.

Where the promotion cannot be shown complete the answer is a refusal (a one-line reason, with the source
line): half/bf16/fp8 arithmetic, inline PTX, textures and surfaces, unions, bit casts of floats
(``__float_as_int``), pointer casts to other element types, tensor-core fragments, quoted ``#include``
files (their code is not promoted), ``atomicExch`` (no double overload), a kernel parameter list that does
not match the spec's float arguments, dynamic shared memory of another element type. Torch-free: a pure
source transform (the worker compiles and launches the result).
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from functools import cache

import tree_sitter_cuda
from tree_sitter import Language, Node, Parser

from perfagent.workloads.cuda_math_names import (
    FLOAT_HELPERS,
    FLOAT_TO_DOUBLE,
    FLOATING_ARGUMENTS,
    VECTOR_TYPES,
)
from perfagent.workloads.launch_resolve import ResolvedArg, ResolvedLaunch

HELPER_PREFIX = "perfagent_f64_"
_FLOAT_TYPES = frozenset({"float", *VECTOR_TYPES})
_BYTE_TYPES = frozenset({"char", "int8_t", "uint8_t", "byte"})
"""Element types of a shared byte buffer that a kernel carves into arrays by byte offsets."""
_DOUBLE_TYPES = frozenset({"double", *VECTOR_TYPES.values()})
_NARROW = re.compile(
    r"^(?:__)?(?:half\d?|nv_bfloat16\d?|nv_fp8\w*|tf32)$"
    r"|^__nv_cvt|^__(?:half|bfloat16|float2half|floats2half|float2bfloat16|floats2bfloat16|nv_fp8|low2|high2|float_to_tf32"
    r"|h(?:add|sub|mul|div|fma|max|min|neg|abs|eq|ne|lt|le|gt|ge|sqrt|exp|log|rcp|rsqrt|sin|cos)\w*)"
)
"""Half, bf16, fp8 and tf32 types and intrinsics (their arithmetic has no double form here)."""
_REFUSED_NAMES = {
    "__float_as_int": "a bit cast of a float",
    "__float_as_uint": "a bit cast of a float",
    "__int_as_float": "a bit cast to a float",
    "__uint_as_float": "a bit cast to a float",
    "atomicExch": "atomicExch has no double overload",
    "bit_cast": "a bit cast",
    "__builtin_bit_cast": "a bit cast",
    "memcpy": "a byte copy",
    "memset": "a byte fill",
    "wmma": "tensor-core fragments",
    "nvcuda": "tensor-core fragments",
    "texture": "a texture",
    "cudaTextureObject_t": "a texture",
    "cudaSurfaceObject_t": "a surface",
}
_TEXTURE_CALL = re.compile(r"^(?:tex|surf)(?:1D|2D|3D|Cubemap)\w*$")
"""Texture fetches and surface reads/writes (``tex1Dfetch``, ``tex2DLayered``, ``surf2Dwrite``)."""
_FLOAT_LITERAL = re.compile(
    r"^[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?[fF]$|^[+-]?0[xX][0-9a-fA-F.]*[pP][+-]?\d+[fF]$"
)
_PREPROC_TOKEN = re.compile(
    r"[A-Za-z_]\w*|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?[fF]\b|0[xX][\w.]+(?:[pP][+-]?\d+)?\w*"
)


class PromotionRefused(ValueError):
    """The source (or its launch) cannot be promoted to double with a proof of completeness."""


@dataclass(frozen=True)
class PromotedSource:
    """The double-precision source and what the promotion found out about the kernel."""

    text: str
    parameters: tuple[str, ...]
    """The entry's parameters, in order: 'float*', 'float', 'double*', 'int', ... ('*' for any pointer)."""
    extern_shared: tuple[str, ...]
    """Element types of the ``extern __shared__`` arrays of the file (the dynamic shared memory)."""
    sites: int
    """How many tokens the promotion rewrote."""


@cache
def _parser() -> Parser:
    return Parser(Language(tree_sitter_cuda.language()))


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8")


def _walk(node: Node) -> list[Node]:
    out, stack = [], [node]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(reversed(current.children))
    return out


def _line(node: Node) -> int:
    return node.start_point[0] + 1


def _refuse(node: Node, why: str) -> PromotionRefused:
    return PromotionRefused(f"line {_line(node)}: {why} ('{_text(node)[:60]}')")


def _check_name(node: Node, name: str) -> None:
    """Refuse an identifier whose float code has no double form this promotion can vouch for."""
    if name in _REFUSED_NAMES:
        raise _refuse(node, _REFUSED_NAMES[name])
    if _TEXTURE_CALL.match(name):
        raise _refuse(node, "a texture or surface access")
    if _NARROW.search(name):
        raise _refuse(node, "half/bf16/fp8/tf32 arithmetic has no double form here")
    if (
        name.startswith("__")
        and name.endswith("f")
        and name not in FLOAT_TO_DOUBLE
        and name not in FLOAT_HELPERS
    ):
        raise _refuse(node, f"no known double form of the float intrinsic {name}")
    if re.fullmatch(r"__f\w+_r[nzud]", name) and name not in FLOAT_TO_DOUBLE:
        raise _refuse(node, f"no known double form of the float intrinsic {name}")


def _cast_target(node: Node) -> str | None:
    """The base type a pointer or reference cast goes to ('int' for ``(int *)p``, ``(int &)f`` or
    ``reinterpret_cast<int*>``): such a cast reads the bits of what it points to as that type."""
    if node.type != "type_descriptor" or not any(
        c.type in ("abstract_pointer_declarator", "abstract_reference_declarator") for c in _walk(node)
    ):
        return None
    types = [
        c for c in node.children if c.type in ("primitive_type", "type_identifier", "sized_type_specifier")
    ]
    return _text(types[0]) if types else _text(node)


def _check_node(node: Node) -> None:
    """Refuse the constructs a token rewrite cannot make double-correct."""
    if node.type in ("gnu_asm_expression", "asm", "__asm__", "__asm"):
        raise _refuse(node, "inline PTX")
    if node.type == "union_specifier":
        raise _refuse(node, "a union (its float members alias other types)")
    if node.type == "preproc_include" and _text(node.child_by_field_name("path") or node).startswith('"'):
        raise _refuse(node, "a quoted #include: the included code is not promoted")
    if (
        node.type == "template_function"
        and _text(node.child_by_field_name("name") or node) == "reinterpret_cast"
    ):
        args = node.child_by_field_name("arguments")
        target = _cast_target(args.named_children[0]) if args is not None and args.named_children else None
        if target is None or target.split()[-1] not in _FLOAT_TYPES | _DOUBLE_TYPES:
            raise _refuse(node, "a reinterpret_cast to another element type")
    target = _cast_target(node)
    if target is not None and target.split()[-1] not in _FLOAT_TYPES | _DOUBLE_TYPES | {"void"}:
        raise _refuse(
            node.parent or node,
            f"a pointer or reference cast to {target}: element sizes would no longer match",
        )


def _constant_bit_cast(node: Node) -> str | None:
    """``__int_as_float(0xff800000)`` (a float constant spelled as its bits, e.g. -inf as the start of a
    max) as the same value in double, or None for anything else (a bit cast of a variable is refused)."""
    if node.type != "call_expression":
        return None
    callee, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
    if callee is None or args is None or _text(callee) not in ("__int_as_float", "__uint_as_float"):
        return None
    if len(args.named_children) != 1 or args.named_children[0].type != "number_literal":
        return None
    try:
        bits = int(_text(args.named_children[0]).rstrip("uUlL"), 0) & 0xFFFFFFFF
    except ValueError:
        return None
    value = struct.unpack("<f", struct.pack("<I", bits))[0]
    if math.isfinite(value):
        return f"({value!r})"  # repr round-trips: float -> double is exact
    wide = struct.unpack("<Q", struct.pack("<d", value))[0]
    return f"__longlong_as_double(0x{wide:016x}LL)"


def _double_arguments(node: Node) -> list[tuple[int, int, str]]:
    """``sqrtf(n)`` -> ``sqrt((double)(n))``: insertions that keep an integer argument of a float math
    call converted to floating point (``sqrt(int)`` would be the integer overload, not a conversion)."""
    if node.type != "call_expression":
        return []
    callee, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
    if callee is None or args is None or FLOAT_TO_DOUBLE.get(_text(callee)) not in FLOATING_ARGUMENTS:
        return []
    out = []
    for arg in args.named_children:
        if arg.type != "comment":
            out += [(arg.start_byte, arg.start_byte, "(double)("), (arg.end_byte, arg.end_byte, ")")]
    return out


def _helper_name(float_name: str) -> str:
    """``__fdividef`` -> ``perfagent_f64_fdivide``: no trailing ``f`` that reads as a float function."""
    return HELPER_PREFIX + float_name.strip("_").removesuffix("f")


def _replacement(node: Node, helpers: set[str]) -> str | None:
    """The double form of one leaf token, or None when it stays."""
    text = _text(node)
    if node.type == "primitive_type" and text == "float":
        return "double"
    if node.type == "type_identifier" and text in VECTOR_TYPES:
        return VECTOR_TYPES[text]
    if node.type == "number_literal" and _FLOAT_LITERAL.match(text):
        return text[:-1]
    if node.type in ("identifier", "type_identifier", "namespace_identifier"):
        _check_name(node, text)
        if text in FLOAT_HELPERS:
            helpers.add(text)
            return _helper_name(text)
        return FLOAT_TO_DOUBLE.get(text)
    return None


def _promote_preproc(text: str, node: Node, helpers: set[str]) -> str:
    """A ``#define`` body is opaque to the parser: its tokens are promoted by the same tables."""

    def one(m: re.Match[str]) -> str:
        token = m.group(0)
        if token == "float":
            return "double"
        if token in VECTOR_TYPES:
            return VECTOR_TYPES[token]
        if _FLOAT_LITERAL.match(token):
            return token[:-1]
        if token in ("asm", "__asm__", "union"):
            raise _refuse(node, "inline PTX or a union in a macro")
        if token[0].isalpha() or token[0] == "_":
            _check_name(node, token)
            if token in FLOAT_HELPERS:
                helpers.add(token)
                return _helper_name(token)
            return FLOAT_TO_DOUBLE.get(token, token)
        return token

    return _PREPROC_TOKEN.sub(one, text)


def _function(root: Node, kernel: str) -> Node:
    """The definition of ``kernel``; a template instantiation (``scale<float, 4>``) names its template."""
    kernel = kernel.split("<", 1)[0].strip()
    for node in _walk(root):
        if node.type != "function_definition":
            continue
        decl = node.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        name = decl.child_by_field_name("declarator") if decl is not None else None
        if name is not None and _text(name) == kernel:
            return node
    raise PromotionRefused(
        f"no definition of the kernel {kernel} found by the parser (a template or a macro?)"
    )


def _template_types(fn: Node, kernel: str) -> dict[str, str]:
    """``{'T': 'float'}`` for the entry ``scale<float, 4>`` of ``template <typename T, int N> scale``."""
    holder = fn.parent
    _, bracket, rest = kernel.partition("<")
    if holder is None or holder.type != "template_declaration" or not bracket:
        return {}
    params = holder.child_by_field_name("parameters")
    names = [
        _text(p.named_children[-1]) if p.named_children else ""
        for p in (params.named_children if params is not None else [])
    ]
    values = [
        v.strip() for v in rest.rsplit(">", 1)[0].split(",")
    ]  # a nested template argument is refused below
    return dict(zip(names, values, strict=False)) if len(values) == len(names) else {}


def _parameters(fn: Node, types: dict[str, str]) -> tuple[str, ...]:
    """The entry's parameter types, template parameters replaced by the entry's arguments."""
    decl = fn.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    params = decl.child_by_field_name("parameters") if decl is not None else None
    out = []
    for p in params.named_children if params is not None else []:
        if p.type != "parameter_declaration":
            continue
        typ = p.child_by_field_name("type")
        base = _text(typ).split()[-1] if typ is not None else "?"
        base = types.get(base, base).split()[-1]
        pointer = any(n.type in ("pointer_declarator", "array_declarator") for n in _walk(p))
        out.append(base + ("*" if pointer else ""))
    return tuple(out)


def _extern_shared(root: Node) -> tuple[str, ...]:
    out = []
    for node in _walk(root):
        if node.type != "declaration":
            continue
        words = {_text(c) for c in node.children if c.type in ("storage_class_specifier", "type_qualifier")}
        typ = node.child_by_field_name("type")
        if {"extern", "__shared__"} <= words and typ is not None:
            out.append(_text(typ).split()[-1])
    return tuple(out)


def promote_source(source: str, kernel: str) -> PromotedSource:
    """``source`` with every float computation in double (see the module docstring).

    Raises:
        PromotionRefused: the source does not parse cleanly, or holds a construct the promotion cannot
            vouch for (the message says which, with its line).
    """
    tree = _parser().parse(source.encode("utf-8"))
    root = tree.root_node
    if root.has_error:
        bad = next((n for n in _walk(root) if n.type == "ERROR" or n.is_missing), root)
        raise _refuse(bad, "tree-sitter-cuda cannot parse the source cleanly")
    fn = _function(root, kernel)
    helpers: set[str] = set()
    edits: list[tuple[int, int, str]] = []
    done_until = -1  # the end of a node replaced whole: its descendants are not edited again
    for node in _walk(root):
        if node.start_byte < done_until or node.type in ("comment", "string_literal"):
            continue
        constant = _constant_bit_cast(node)
        if constant is not None:
            edits.append((node.start_byte, node.end_byte, constant))
            done_until = node.end_byte
            continue
        _check_node(node)
        edits += _double_arguments(node)
        if node.type == "preproc_arg":
            new = _promote_preproc(_text(node), node, helpers)
            if new != _text(node):
                edits.append((node.start_byte, node.end_byte, new))
        elif node.child_count == 0 or node.type in ("number_literal", "primitive_type", "type_identifier"):
            replacement = _replacement(node, helpers)
            if replacement is not None:
                edits.append((node.start_byte, node.end_byte, replacement))
    data = source.encode("utf-8")
    for start, end, new in sorted(edits, reverse=True):
        data = data[:start] + new.encode("utf-8") + data[end:]
    prelude = "".join(
        FLOAT_HELPERS[name].replace("{name}", _helper_name(name)) + "\n" for name in sorted(helpers)
    )
    return PromotedSource(
        text=prelude + data.decode("utf-8"),
        parameters=_parameters(fn, _template_types(fn, kernel)),
        extern_shared=_extern_shared(root),
        sites=len(edits),
    )


def promote_launch(resolved: ResolvedLaunch, promoted: PromotedSource, source_path: str) -> ResolvedLaunch:
    """``resolved`` for the promoted kernel in ``source_path``: float32 arguments as float64 (buffers
    and scalars), the dynamic shared memory doubled when the kernel declares it float.

    Raises:
        PromotionRefused: the spec's arguments do not match the kernel's parameters one for one (float
            data the spec types otherwise, half/bf16 data), or the dynamic shared memory holds another
            element type (its byte size cannot be scaled).
    """
    params = promoted.parameters
    if len(params) != len(resolved.args):
        raise PromotionRefused(
            f"the spec lists {len(resolved.args)} arguments and {resolved.kernel} has {len(params)} parameters"
        )
    args = []
    for param, arg in zip(params, resolved.args, strict=True):
        _check_argument(param, arg)
        args.append(arg.model_copy(update={"dtype": "float64"}) if arg.dtype == "float32" else arg)
    shared = resolved.shared_mem
    kinds = set(promoted.extern_shared)
    # Every extern __shared__ array starts at the same address: all float doubles the bytes, all of
    # other element types (ints) keeps them; a mix or a byte buffer carved up by offsets cannot be scaled.
    if shared and kinds and not (kinds <= _FLOAT_TYPES or kinds.isdisjoint(_FLOAT_TYPES | _BYTE_TYPES)):
        raise PromotionRefused(
            f"the dynamic shared memory ({shared} bytes) is declared {', '.join(sorted(kinds))}: "
            "its byte size cannot be scaled to double"
        )
    if shared and kinds and kinds <= _FLOAT_TYPES:
        shared *= 2
    update = {
        "source": source_path,
        "args": args,
        "shared_mem": shared,
        "kernel": promote_entry(resolved.kernel),
    }
    return resolved.model_copy(update=update)


def promote_entry(kernel: str) -> str:
    """The entry's name for the promoted source: ``scale<float, 4>`` instantiates ``scale<double, 4>``."""
    name, bracket, rest = kernel.partition("<")
    if not bracket:
        return kernel
    promoted = re.sub(r"\bfloat(\d?)\b", lambda m: VECTOR_TYPES.get(m.group(0), "double"), rest)
    return f"{name}<{promoted}"


def _check_argument(param: str, arg: ResolvedArg) -> None:
    """The spec's dtype of one argument and the kernel's parameter agree on what is float."""
    base, pointer = param.rstrip("*"), param.endswith("*")
    if arg.dtype in ("float16", "bfloat16"):
        raise PromotionRefused(f"argument {arg.name} is {arg.dtype}: half/bf16 data has no double run here")
    float_param = base in _FLOAT_TYPES
    float_arg = arg.dtype == "float32"
    if float_param != float_arg or (float_arg and pointer == arg.is_scalar):
        raise PromotionRefused(
            f"argument {arg.name} is {arg.dtype}{'' if arg.is_scalar else ' data'} in the spec and "
            f"'{param}' in the kernel: which values are float cannot be told"
        )
