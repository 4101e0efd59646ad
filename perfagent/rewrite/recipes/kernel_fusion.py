"""Recipe ``kernel-fusion``: fuse two back-to-back element-wise launches that stream the same array.

Precondition (tree-sitter-cuda tree of a CUDA program, or of the CUDA a ``load_inline`` extension
compiles, host wrapper included):

- two launch statements follow each other in one block, ``p<<<g, b>>>(...); c<<<g, b>>>(...);``,
  with the same launch configuration text, of two non-template ``__global__`` kernels of the file;
- an argument (the same expression in both calls) is written by the producer ``p`` and read by the
  consumer ``c``;
- every array the two calls share, and that either kernel writes, is subscripted in both kernels
  only as ``P[v]`` with ``v`` the global index ``blockIdx.a * blockDim.a + threadIdx.a`` (the same
  axis in both, never reassigned): each thread then reads only what it wrote itself, so the launch
  boundary orders nothing another thread needs;
- no block or warp cooperation and no ``gridDim`` in either kernel (a grid-stride walk would hand
  the same thread other elements in the two loops), equal ``__launch_bounds__`` if any.

Rewrite: a kernel ``p__c_fused`` after the later of the two, taking p's parameters then c's (renamed
where they collide), whose body runs p's body then c's, each in an immediately invoked lambda so
that an early ``return`` ends only its own part; the two launches become one launch of it. The
consumer's read of the linked array comes from the L1/L2 line the same thread just wrote instead of a
second pass over DRAM, and one launch replaces two. Distinct argument expressions are assumed not to
alias (as the original launches' separate calls do not tell).
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda, _thread_index
from perfagent.rewrite.recipes._thread_index import Rewrites, render
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, register

NAME = "kernel-fusion"


@dataclass(frozen=True)
class _Pair:
    first: Node
    """The producer's launch statement."""
    second: Node
    producer: Node
    consumer: Node
    linked: list[str]
    """Argument expressions the producer writes and the consumer reads."""


def _launch(stmt: Node) -> Node | None:
    if stmt.type != "expression_statement" or not stmt.named_children:
        return None
    call = stmt.named_children[0]
    ok = call.type == "call_expression" and any(c.type == "kernel_call_syntax" for c in call.children)
    return call if ok else None


def _config(call: Node) -> str:
    return "".join("".join(_cuda.text(a).split()) + "," for a in _cuda.launch_config_args(call))


def _written(kernel: Node, param: str) -> bool:
    for node in _cuda.walk(kernel):
        target = None
        if node.type == "assignment_expression":
            target = node.child_by_field_name("left")
        elif node.type == "update_expression":
            target = node.child_by_field_name("argument")
        elif node.type == "call_expression" and _cuda.text(node).startswith("atomic"):
            if any(param in _cuda.identifiers_in(a) for a in _cuda.call_args(node)[:1]):
                return True
        if target is not None and _root(target) == param:
            return True
    return False


def _root(node: Node) -> str | None:
    node = _cuda.strip(node)
    while node.type in ("subscript_expression", "pointer_expression"):
        node = _cuda.strip(node.child_by_field_name("argument") or node)
        if node.type not in ("subscript_expression", "pointer_expression"):
            break
    return _cuda.text(node) if node.type == "identifier" else None


def _per_thread(kernel: Node, param: str) -> str | None:
    """None when ``param`` is only subscripted by the kernel's global index, else why not."""
    body = kernel.child_by_field_name("body")
    assert body is not None
    indices = {g.name: g.axis for g in _thread_index.global_indices(body)}
    name = _cuda.function_name(kernel)
    for node in _cuda.walk(body):
        if node.type != "identifier" or _cuda.text(node) != param:
            continue
        parent = node.parent
        index = (
            parent.child_by_field_name("indices")
            if parent is not None and parent.type == "subscript_expression"
            else None
        )
        inner = index.named_children[0] if index is not None and index.named_children else None
        if inner is None or _cuda.text(_cuda.strip(inner)) not in indices:
            return f"{name} uses {param} other than as {param}[global index] on line {_cuda.line_of(node)}"
        var = _cuda.text(_cuda.strip(inner))
        moved = _thread_index.assigns(body, var)
        if moved is not None:
            return f"{name} assigns its index {var} on line {_cuda.line_of(moved)}"
    return None


def _kernel_ok(kernel: Node) -> str | None:
    name = _cuda.function_name(kernel)
    if kernel.parent is not None and kernel.parent.type == "template_declaration":
        return f"{name} is a template"
    body = kernel.child_by_field_name("body")
    if body is None:
        return f"{name} has no body"
    why = _thread_index.cooperation(body)
    if why is not None:
        return f"{name}: {why}"
    grid = next((n for n in _cuda.walk(body) if (b := _cuda.builtin_axis(n)) and b[0] == "gridDim"), None)
    return f"{name}: gridDim on line {_cuda.line_of(grid)} (a grid-stride walk)" if grid is not None else None


def _index_forms(kernel: Node) -> set[tuple[str, str]]:
    """(axis, block extent as written) of the kernel's global indices: one element per thread in both
    kernels only when these agree."""
    body = kernel.child_by_field_name("body")
    indices = _thread_index.global_indices(body) if body is not None else []
    return {(g.axis, _cuda.text(g.scale) if g.scale is not None else "blockDim") for g in indices}


def _pair(first: Node, second: Node, kernels: dict[str, Node]) -> _Pair | str:
    a, b = _launch(first), _launch(second)
    assert a is not None and b is not None
    where = f"launches on lines {_cuda.line_of(first)}-{_cuda.line_of(second)}"
    pname, cname = _cuda.launched_name(a), _cuda.launched_name(b)
    if pname not in kernels or cname not in kernels or pname == cname:
        return f"{where}: not two different kernels defined in this file"
    if _config(a) != _config(b):
        return f"{where}: different launch configurations"
    producer, consumer = kernels[pname], kernels[cname]
    for k in (producer, consumer):
        why = _kernel_ok(k)
        if why is not None:
            return f"{where}: {why}"
    bounds = [_cuda.launch_bounds(k) for k in (producer, consumer)]
    if any(bounds) and (None in bounds or len({_cuda.text(x) for x in bounds if x is not None}) != 1):
        return f"{where}: the kernels' __launch_bounds__ differ"
    if len(_index_forms(producer) | _index_forms(consumer)) != 1:
        return f"{where}: the kernels' global indices differ (axis or block extent)"
    pargs = [_cuda.text(x) for x in _cuda.call_args(a)]
    cargs = [_cuda.text(x) for x in _cuda.call_args(b)]
    pparams = [p[0] for p in _cuda.kernel_params(producer)]
    cparams = [p[0] for p in _cuda.kernel_params(consumer)]
    if len(pargs) != len(pparams) or len(cargs) != len(cparams):
        return f"{where}: argument count differs from a kernel's parameters"
    linked = []
    for i, arg in enumerate(pargs):
        for j, other in enumerate(cargs):
            if arg != other or not _cuda.kernel_params(producer)[i][2]:
                continue
            p_writes, c_writes = _written(producer, pparams[i]), _written(consumer, cparams[j])
            if not (p_writes or c_writes):
                continue
            why = _per_thread(producer, pparams[i]) or _per_thread(consumer, cparams[j])
            if why is not None:
                return f"{where}: {why}"
            if p_writes:
                linked.append(arg)
    if not linked:
        return f"{where}: the consumer reads nothing the producer writes"
    return _Pair(first, second, producer, consumer, linked)


def _find(src: Source) -> _Pair | str:
    tree = src.tree
    kernels = {_cuda.function_name(k) or "": k for k in _cuda.kernels(tree)}
    reasons = []
    for block in (n for n in _cuda.walk(tree.root_node) if n.type == "compound_statement"):
        stmts = [c for c in block.named_children if c.type != "comment"]
        for first, second in zip(stmts, stmts[1:], strict=False):
            if _launch(first) is not None and _launch(second) is not None:
                pair = _pair(first, second, kernels)
                if isinstance(pair, _Pair):
                    return pair
                reasons.append(pair)
    return (
        "; ".join(reasons)
        or "no two consecutive kernel launches in the source (a launch spec runs one kernel)"
    )


def _renamed_body(kernel: Node, renames: dict[str, str]) -> str:
    body = kernel.child_by_field_name("body")
    assert body is not None
    rewrites: Rewrites = {
        n.id: lambda n: renames[_cuda.text(n)]
        for n in _cuda.walk(body)
        if n.type == "identifier" and _cuda.text(n) in renames
    }
    return render(body, rewrites)


def _shared_params(pair: _Pair) -> dict[int, int]:
    """Consumer parameter index -> producer parameter index, where both launches pass the same argument
    expression to parameters of one type (const aside): the fused kernel takes it once, so the
    consumer's read is visibly the producer's store (the compiler may forward the value)."""
    a, b = _launch(pair.first), _launch(pair.second)
    assert a is not None and b is not None
    pargs, cargs = [_cuda.text(x) for x in _cuda.call_args(a)], [_cuda.text(x) for x in _cuda.call_args(b)]
    ptypes = [(p[1].replace("const", "").split(), p[2]) for p in _cuda.kernel_params(pair.producer)]
    ctypes = [(p[1].replace("const", "").split(), p[2]) for p in _cuda.kernel_params(pair.consumer)]
    return {
        j: pargs.index(arg)
        for j, arg in enumerate(cargs)
        if arg in pargs and ptypes[pargs.index(arg)] == ctypes[j]
    }


def _fused(pair: _Pair, name: str) -> tuple[str, list[int]]:
    """The fused kernel's text, and the consumer argument positions it still takes."""
    pparams, cparams = _cuda.kernel_params(pair.producer), _cuda.kernel_params(pair.consumer)
    shared = _shared_params(pair)
    taken = {p[0] for p in pparams}
    renames = {cparams[j][0]: pparams[i][0] for j, i in shared.items()}
    renames.update({p[0]: f"{p[0]}_2" for j, p in enumerate(cparams) if j not in shared and p[0] in taken})
    kept = [j for j in range(len(cparams)) if j not in shared]
    params = [_cuda.text(p) for p in _param_nodes(pair.producer)]
    for j in kept:
        node = _param_nodes(pair.consumer)[j]
        ident = next((n for n in _cuda.walk(node) if n.type == "identifier"), None)
        text = _cuda.text(node)
        if ident is not None and _cuda.text(ident) in renames:
            lo, hi = ident.start_byte - node.start_byte, ident.end_byte - node.start_byte
            raw = node.text or b""
            text = (raw[:lo] + renames[_cuda.text(ident)].encode() + raw[hi:]).decode("utf-8")
        params.append(text)
    bounds = _cuda.launch_bounds(pair.producer)
    head = (
        f"__global__ void {_cuda.text(bounds) + ' ' if bounds is not None else ''}{name}({', '.join(params)})"
    )
    first = _renamed_body(pair.producer, {}).replace("\n", "\n    ")
    second = _renamed_body(pair.consumer, renames).replace("\n", "\n    ")
    text = (
        f"\n\n// {_cuda.function_name(pair.producer)} then {_cuda.function_name(pair.consumer)}, one thread per element in"
        f" both: each part in its own lambda so an early return ends only that part\n{head}\n{{\n"
        f"    [&]() {first}();\n    [&]() {second}();\n}}"
    )
    return text, kept


def _param_nodes(kernel: Node) -> list[Node]:
    decl = _cuda.function_declarator(kernel)
    plist = decl.child_by_field_name("parameters") if decl is not None else None
    return [
        p for p in (plist.named_children if plist is not None else []) if p.type == "parameter_declaration"
    ]


def _variant(pair: _Pair) -> Variant:
    pname, cname = _cuda.function_name(pair.producer), _cuda.function_name(pair.consumer)
    name = f"{pname}__{cname}_fused"
    later = max(pair.producer, pair.consumer, key=lambda k: k.end_byte)
    a, b = _launch(pair.first), _launch(pair.second)
    assert a is not None and b is not None
    syntax = next(c for c in a.children if c.type == "kernel_call_syntax")
    fused, kept = _fused(pair, name)
    args = [_cuda.text(x) for x in _cuda.call_args(a)] + [_cuda.text(_cuda.call_args(b)[j]) for j in kept]
    launch = f"{name}{_cuda.text(syntax)}({', '.join(args)});"
    return Variant(
        edits=[
            Edit(later.end_byte, later.end_byte, fused),
            Edit(pair.first.start_byte, pair.second.end_byte, launch),
        ],
        description=(
            f"fused {pname} -> {cname} ({', '.join(pair.linked)} stays in cache between them): one launch, "
            "one pass over the data"
        ),
        parameters={"producer": pname, "consumer": cname},
        notes=["assumes the two launches' distinct pointer arguments do not alias"],
    )


class _Fusion(CudaRecipe[_Pair]):
    name = NAME
    transforms = ("kernel-fusion",)
    summary = "two back-to-back element-wise launches sharing an array (same config) -> one fused kernel, one launch"

    def match(self, src: Source) -> _Pair | str:
        return _find(src)

    def plan(self, src: Source, m: _Pair) -> list[Variant]:
        return [_variant(m)]


RECIPE = register(_Fusion())
applies, propose = RECIPE.applies, RECIPE.propose
