"""Recipe ``async-copy``: cp.async double buffering of a shared-memory tiled loop (TMA-free).

Precondition (tree-sitter-cuda tree of the kernel): a ``for (T t = init; cond; update)`` loop whose
body is the PMPP tiled shape ``loads; __syncthreads(); compute; __syncthreads();`` where

- every load statement stores into a ``__shared__`` array S from a pointer parameter of the same
  4-, 8- or 16-byte element type: ``S[..] = G[..];``, ``S[..] = c ? G[..] : v;`` or
  ``if (c) S[..] = G[..]; else S[..] = v;`` (nested ``for`` loops of those too); an ``if`` without
  ``else`` would leave a stale element that double buffering makes older, so it refuses;
- S is written nowhere else and used nowhere outside the loop; ``t`` is not assigned in the body; the
  body has no ``break`` / ``continue`` / ``return`` of its own; ``init`` has no side effects;
- the doubled static shared memory stays within 48 KiB.

Rewrite: each S gets a leading stage dimension ``[2]``; the loads move into a lambda ``load(t, stage)``
issuing ``cp.async`` (inline PTX, so NVRTC needs no header; before sm_80 the helper copies
synchronously); the prologue loads tile ``init`` into stage 0; each iteration first issues the next
tile into the other stage, commits, waits for all but that newest group, synchronises, computes on the
current stage and flips it. The trailing barrier the original had still protects the stage the next
iteration overwrites.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda, _thread_index
from perfagent.rewrite.recipes._thread_index import Rewrites, render
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, register

NAME = "async-copy"
HELPERS = r"""#ifndef PERFAGENT_CP_ASYNC_HELPERS
#define PERFAGENT_CP_ASYNC_HELPERS
// cp.async (sm_80+) as inline PTX, so NVRTC needs no header; older targets copy synchronously
template <class T>
__device__ __forceinline__ void perfagent_cp_async(T *smem, const T *gmem)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16, "cp.async copies 4, 8 or 16 bytes");
    const unsigned dst = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(gmem), "n"(sizeof(T)) : "memory");
#else
    *smem = *gmem;
#endif
}
__device__ __forceinline__ void perfagent_cp_async_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void perfagent_cp_async_wait_prior_1()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 1;\n" ::: "memory");
#endif
}
#endif
"""
_SYNC = "__syncthreads();"


@dataclass(frozen=True)
class _Loop:
    loop: Node
    var: str
    var_type: str
    init: Node
    loads: list[Node]
    compute: list[Node]
    last_sync: Node
    arrays: dict[str, Node]
    """Staged shared arrays: name -> declaration identifier."""


def _assignment(stmt: Node) -> Node | None:
    if stmt.type == "expression_statement" and stmt.named_children:
        inner = stmt.named_children[0]
        if (
            inner.type == "assignment_expression"
            and _cuda.text(inner.child_by_field_name("operator") or inner) == "="
        ):
            return inner
    return None


def _root_name(node: Node) -> str | None:
    node = _cuda.strip(node)
    while node.type == "subscript_expression":
        node = node.child_by_field_name("argument") or node
        if node.type != "subscript_expression":
            break
    return _cuda.text(node) if node.type == "identifier" else None


def _leaf_ok(
    stmt: Node, shared: dict[str, str], globals_: dict[str, str], found: dict[str, str]
) -> str | None:
    """None when ``stmt`` is a stageable store into a shared array (records it in ``found``), else why not."""
    assign = _assignment(stmt)
    if assign is None:
        return f"line {_cuda.line_of(stmt)} in the load phase is not a shared-memory store"
    left, right = assign.child_by_field_name("left"), assign.child_by_field_name("right")
    assert left is not None and right is not None
    target = _root_name(left)
    if target not in shared or _cuda.strip(left).type != "subscript_expression":
        return f"line {_cuda.line_of(stmt)} stores into something other than a __shared__ array element"
    value = _cuda.strip(right)
    sources = [value]
    if value.type == "conditional_expression":
        sources = [
            c
            for c in (value.child_by_field_name("consequence"), value.child_by_field_name("alternative"))
            if c
        ]
    for src in (_cuda.strip(s) for s in sources):
        if src.type == "number_literal":
            continue
        name = _root_name(src) if src.type == "subscript_expression" else None
        if name not in globals_:
            return f"line {_cuda.line_of(stmt)}: {_cuda.text(src)} is not an element of a pointer parameter"
        if globals_[name] != shared[target]:
            return f"line {_cuda.line_of(stmt)}: {globals_[name]} copied into {shared[target]} (cp.async copies bytes)"
    found[target] = shared[target]
    return None


def _load_ok(
    stmt: Node, shared: dict[str, str], globals_: dict[str, str], found: dict[str, str]
) -> str | None:
    if stmt.type == "compound_statement":
        return next((w for s in stmt.named_children if (w := _load_ok(s, shared, globals_, found))), None)
    if stmt.type == "for_statement":
        body = stmt.child_by_field_name("body")
        return _load_ok(body, shared, globals_, found) if body is not None else "empty loop"
    if stmt.type == "if_statement":
        then, other = stmt.child_by_field_name("consequence"), stmt.child_by_field_name("alternative")
        if other is None or then is None:
            return f"if without else on line {_cuda.line_of(stmt)}: a skipped element would be two tiles old"
        other = other.named_children[-1] if other.type == "else_clause" else other
        return _load_ok(then, shared, globals_, found) or _load_ok(other, shared, globals_, found)
    return _leaf_ok(stmt, shared, globals_, found)


def _is_sync(stmt: Node) -> bool:
    return _cuda.text(stmt).replace(" ", "") == _SYNC


def _shape(loop: Node, shared: dict[str, str], globals_: dict[str, str]) -> _Loop | str:
    where = f"loop on line {_cuda.line_of(loop)}"
    init, body = loop.child_by_field_name("initializer"), loop.child_by_field_name("body")
    if (
        init is None
        or body is None
        or body.type != "compound_statement"
        or loop.child_by_field_name("condition") is None
    ):
        return f"{where}: not for (T t = init; cond; update) {{...}}"
    decls = [c for c in init.children_by_field_name("declarator") if c.type == "init_declarator"]
    if init.type != "declaration" or len(decls) != 1:
        return f"{where}: the loop does not declare one counter"
    ident, value = decls[0].child_by_field_name("declarator"), decls[0].child_by_field_name("value")
    if (
        ident is None
        or value is None
        or any(n.type in ("call_expression", "assignment_expression") for n in _cuda.walk(value))
    ):
        return f"{where}: the counter's initial value has side effects"
    stmts = [c for c in body.named_children if c.type != "comment"]
    syncs = [k for k, s in enumerate(stmts) if _is_sync(s)]
    if len(syncs) < 2 or syncs[-1] != len(stmts) - 1 or syncs[0] == 0:
        return f"{where}: body is not loads; __syncthreads(); compute; __syncthreads();"
    found: dict[str, str] = {}
    for stmt in stmts[: syncs[0]]:
        why = _load_ok(stmt, shared, globals_, found)
        if why is not None:
            return f"{where}: {why}"
    compute = stmts[syncs[0] + 1 : -1]
    for stmt in compute:
        for node in _cuda.walk(stmt):
            if node.type in ("break_statement", "continue_statement", "return_statement", "goto_statement"):
                inner = _cuda.enclosing(node, "for_statement")
                if inner is None or inner.id == loop.id:
                    return f"{where}: {node.type.split('_')[0]} on line {_cuda.line_of(node)} would skip the stage flip"
            if (
                node.type == "assignment_expression"
                and _root_name(node.child_by_field_name("left") or node) in found
            ):
                return f"{where}: the compute phase writes a staged array on line {_cuda.line_of(node)}"
    name = _cuda.text(ident)
    moved = next((a for s in stmts if (a := _thread_index.assigns(s, name)) is not None), None)
    if moved is not None:
        return f"{where}: the counter {name} is assigned on line {_cuda.line_of(moved)}"
    return _Loop(
        loop,
        name,
        _cuda.element_type(init),
        value,
        stmts[: syncs[0]],
        compute,
        stmts[-1],
        dict.fromkeys(found, loop),
    )


def _find(src: Source) -> tuple[Node, _Loop] | str:
    found = src.kernel_body
    if isinstance(found, str):
        return found
    kernel, body = found
    shared = {
        _cuda.text(i): _cuda.element_type(d)
        for d, _x, i, _s in _cuda.shared_arrays(body)
        if not _cuda.has_storage(d, "extern")
    }
    if not shared:
        return "no static __shared__ array: nothing is staged"
    globals_ = {
        n: " ".join(t.replace("const", "").split()) for n, t, ptr in _cuda.kernel_params(kernel) if ptr
    }
    reasons = []
    for loop in (n for n in _cuda.walk(body) if n.type == "for_statement"):
        shape = _shape(loop, shared, globals_)
        if isinstance(shape, _Loop):
            return kernel, shape
        reasons.append(shape)
    return "; ".join(reasons) if reasons else "no for loop in the kernel"


def _outside_uses(kernel: Node, plan: _Loop) -> str | None:
    for node in _cuda.walk(kernel):
        if node.type == "identifier" and _cuda.text(node) in plan.arrays:
            inside = plan.loop.start_byte <= node.start_byte < plan.loop.end_byte
            if not inside and _cuda.enclosing(node, "declaration") is None:
                return f"{_cuda.text(node)} is used outside the tiled loop on line {_cuda.line_of(node)}"
    return None


def _matched(src: Source) -> tuple[Node, _Loop] | str:
    found = _find(src)
    if isinstance(found, str):
        return found
    kernel, plan = found
    outside = _outside_uses(kernel, plan)
    if outside is not None:
        return outside
    body = kernel.child_by_field_name("body")
    assert body is not None
    env: dict[str, _cuda.Constant | int] = dict(src.constants)
    now = _cuda.static_shared_bytes(body, env)
    staged = sum(
        _cuda.ELEMENT_BYTES.get(_cuda.element_type(d), 0) * _elements(s, env)
        for d, _x, i, s in _cuda.shared_arrays(body)
        if _cuda.text(i) in plan.arrays
    )
    if now is not None and now + staged > _cuda.STATIC_SHARED_LIMIT:
        return f"two stages need {now + staged} bytes of static shared memory (over 48 KiB)"
    return found


def _elements(sizes: list[Node | None], env: dict[str, _cuda.Constant | int]) -> int:
    count = 1
    for size in sizes:
        value = _cuda.evaluate(_cuda.text(size), env) if size is not None else None
        count *= value or 0
    return count


def _staged(node: Node, arrays: dict[str, Node], stage: str, async_leaf: bool) -> str:
    """``node``'s text with staged arrays indexed by ``stage`` (load leaves become cp.async)."""
    rewrites: Rewrites = {
        n.id: lambda n: f"{_cuda.text(n)}[{stage}]"
        for n in _cuda.walk(node)
        if n.type == "identifier" and _cuda.text(n) in arrays
    }
    if async_leaf:
        for stmt in _cuda.walk(node):
            if _assignment(stmt) is not None:
                rewrites[stmt.id] = partial(_load_leaf, rewrites=dict(rewrites))
    return render(node, rewrites)


def _load_leaf(stmt: Node, rewrites: Rewrites) -> str:
    """A load statement ``S[..] = G[..]`` (or ``= c ? G[..] : v``) as cp.async into the staged element."""
    assign = _assignment(stmt)
    assert assign is not None
    left, right = assign.child_by_field_name("left"), assign.child_by_field_name("right")
    assert left is not None and right is not None
    dst = render(left, rewrites)
    value = _cuda.strip(right)
    if value.type == "conditional_expression":
        cond = _cuda.text(value.child_by_field_name("condition") or value)
        yes, no = value.child_by_field_name("consequence"), value.child_by_field_name("alternative")
        assert yes is not None and no is not None
        return f"if ({cond}) {_leaf(dst, yes)} else {_leaf(dst, no)}"
    return _leaf(dst, value)


def _leaf(dst: str, value: Node) -> str:
    value = _cuda.strip(value)
    if value.type == "number_literal":
        return f"{dst} = {_cuda.text(value)};"
    return f"perfagent_cp_async(&{dst}, &{_cuda.text(value)});"


def _edits(text: str, kernel: Node, plan: _Loop) -> list[Edit]:
    loop, var, typ = plan.loop, plan.var, plan.var_type
    cond = _cuda.text(loop.child_by_field_name("condition") or loop)
    update = _cuda.text(loop.child_by_field_name("update") or loop)
    init = _cuda.text(plan.init)
    data = text.encode("utf-8")
    pad = data[_cuda.line_start(data, loop.start_byte) : loop.start_byte].decode()
    loads = "\n".join(f"{pad}    {_staged(s, plan.arrays, 'perfagent_stage', True)}" for s in plan.loads)
    compute = "\n".join(f"{pad}    {_staged(s, plan.arrays, 'perfagent_stage', False)}" for s in plan.compute)
    new = (
        f"auto perfagent_more = [&]({typ} {var}) -> bool {{ return {cond}; }};\n"
        f"{pad}auto perfagent_step = [&]({typ} {var}) -> {typ} {{ {update}; return {var}; }};\n"
        f"{pad}auto perfagent_load = [&]({typ} {var}, int perfagent_stage) {{\n{loads}\n{pad}}};\n"
        f"{pad}int perfagent_stage = 0;\n"
        f"{pad}if (perfagent_more({init})) perfagent_load({init}, 0);\n"
        f"{pad}perfagent_cp_async_commit();\n"
        f"{pad}for ({typ} {var} = {init}; {cond}; {update}) {{\n"
        f"{pad}    if (perfagent_more(perfagent_step({var}))) perfagent_load(perfagent_step({var}), perfagent_stage ^ 1);\n"
        f"{pad}    perfagent_cp_async_commit();\n"
        f"{pad}    perfagent_cp_async_wait_prior_1();  // this tile landed; the next one is in flight\n"
        f"{pad}    __syncthreads();\n{compute}\n"
        f"{pad}    __syncthreads();\n"
        f"{pad}    perfagent_stage ^= 1;\n{pad}}}"
    )
    edits = [Edit(loop.start_byte, loop.end_byte, new), Edit(0, 0, HELPERS)]
    body = kernel.child_by_field_name("body")
    assert body is not None
    for _decl, _declarator, ident, _sizes in _cuda.shared_arrays(body):
        if _cuda.text(ident) in plan.arrays:
            edits.append(Edit(ident.end_byte, ident.end_byte, "[2]"))
    return edits


class _AsyncCopy(CudaRecipe[tuple[Node, _Loop]]):
    name = NAME
    transforms = ("async-copy",)
    summary = "tiled loop (loads; sync; compute; sync) -> two shared stages filled by cp.async one tile ahead"

    def match(self, src: Source) -> tuple[Node, _Loop] | str:
        return _matched(src)

    def plan(self, src: Source, m: tuple[Node, _Loop]) -> list[Variant]:
        kernel, loop = m
        names = ", ".join(sorted(loop.arrays))
        return [
            Variant(
                edits=_edits(src.text, kernel, loop),
                description=(
                    f"double-buffered {names} with cp.async: the next tile of the loop on line "
                    f"{_cuda.line_of(loop.loop)} is in flight while the current one is computed on"
                ),
                parameters={"stages": 2, "arrays": names},
                notes=["cp.async needs sm_80+; older GPUs get a synchronous copy through the same helper"],
            )
        ]


RECIPE = register(_AsyncCopy())
applies, propose = RECIPE.applies, RECIPE.propose
