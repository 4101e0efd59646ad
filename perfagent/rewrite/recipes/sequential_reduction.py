"""sequential-addressing: rewrite a shared-memory tree reduction's interleaved loop as a sequential one.

The classic interleaved trees (Harris, "Optimizing Parallel Reduction in CUDA", kernels 1 and 2) double
the stride ``s`` from 1: either the thread test ``tid % (2*s) == 0`` / ``(tid & (2*s - 1)) == 0``
(divergent warps, slow modulo) or the strided index ``index = 2*s*tid`` (shared-memory bank conflicts).
Sequential addressing halves ``s`` from half the block and lets the first ``s`` threads combine
``a[tid]`` with ``a[tid + s]``: no divergence inside active warps, conflict-free, same tree depth, the
result still lands in ``a[0]``. A second candidate finishes the last 32 elements with warp shuffles.

Precondition, proven on the parse tree: a ``for`` loop whose stride starts at 1 and doubles
(``s *= 2``, ``s <<= 1``, ``s = s * 2``) while ``s < blockDim.x`` (or the launch's block size); a body of
exactly one guarded combine of a ``__shared__`` array, ``a[i] += a[i + s]`` / ``a[i] = a[i] + a[i + s]`` /
``a[i] = fmaxf(a[i], a[i + s])`` (``max``, ``fminf``, ``min``), with ``i`` the thread index under one of
the three tests above, and a ``__syncthreads()``; a 1-D block whose size is a power of two. What the
kernel does before and after the loop (loads, per-block partials, atomics) is kept as it is; only the
combination order changes (the verifier's tolerance judges floating-point sums).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.base import LaunchContext
from perfagent.rewrite.recipes import _cuda, _launch
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, register

NAME = "sequential-reduction"
_FUNCS = ("fmaxf", "fminf", "max", "min", "fmax", "fmin")


@dataclass(frozen=True)
class _Tree:
    loop: Node
    array: str
    tid: str
    """The thread index expression as written (``tid``, ``t``, ``threadIdx.x``)."""
    combine: str
    """'+' or a function name."""
    limit: str


def _shared_arrays(kernel: Node) -> set[str]:
    return {_cuda.text(ident) for _decl, _declarator, ident, _dims in _cuda.shared_arrays(kernel)} | {
        m.group(1)
        for m in re.finditer(r"extern\s+__shared__\s+[\w\s]+?\s(\w+)\s*\[\s*\]", _cuda.text(kernel))
    }


def _thread_aliases(kernel: Node) -> set[str]:
    """Names equal to threadIdx.x (``int tid = threadIdx.x;``), and threadIdx.x itself."""
    names = {"threadIdx.x"}
    for n in _cuda.walk(kernel):
        if n.type == "init_declarator":
            d, v = n.child_by_field_name("declarator"), n.child_by_field_name("value")
            if (
                d is not None
                and v is not None
                and d.type == "identifier"
                and _cuda.text(v).replace(" ", "") == "threadIdx.x"
            ):
                names.add(_cuda.text(d))
    return names


_DOUBLING = re.compile(r"^(\w+)(\*=2|<<=1|=\1\*2|=2\*\1|=\1<<1)$")


def _combine(stmt: str, array: str, index: str) -> str | None:
    """'+' or the function, when ``stmt`` combines ``array[index]`` with ``array[index + s]``."""
    a, i = re.escape(array), re.escape(index)
    lhs = rf"{a}\[{i}\]"
    rhs = rf"{a}\[{i}\+(\w+)\]"
    if re.fullmatch(rf"{lhs}\+={rhs};", stmt) or re.fullmatch(rf"{lhs}={lhs}\+{rhs};", stmt):
        return "+"
    m = re.fullmatch(rf"{lhs}=(\w+)\({lhs},{rhs}\);", stmt)
    return m.group(1) if m and m.group(1) in _FUNCS else None


def _match(loop: Node, arrays: set[str], tids: set[str]) -> _Tree | str:
    init, cond, update, body = (
        loop.child_by_field_name(f) for f in ("initializer", "condition", "update", "body")
    )
    if init is None or cond is None or update is None or body is None:
        return "not a counted loop"
    d = next((n for n in _cuda.walk(init) if n.type == "init_declarator"), None)
    value = d.child_by_field_name("value") if d is not None else None
    name = d.child_by_field_name("declarator") if d is not None else None
    if value is None or name is None or _cuda.text(value).strip() != "1":
        return "the stride does not start at 1"
    s = _cuda.text(name)
    m = _DOUBLING.match(_cuda.text(update).replace(" ", ""))
    if m is None or m.group(1) != s:
        return "the stride does not double"
    cm = re.fullmatch(rf"{s}<(.+)", _cuda.text(cond).replace(" ", ""))
    if cm is None:
        return f"the loop does not run while {s} < the block size"
    stmts = (
        [c for c in body.named_children if c.type != "comment"]
        if body.type == "compound_statement"
        else [body]
    )
    flat = [_cuda.text(c).replace(" ", "").replace("\n", "") for c in stmts]
    if len(flat) < 2 or flat[-1] != "__syncthreads();":
        return "the loop body does not end with __syncthreads()"
    tid_alt = "|".join(re.escape(t) for t in sorted(tids, key=len, reverse=True))
    index, guard = None, None
    if len(flat) == 2:
        g = re.fullmatch(
            rf"if\((?:\(({tid_alt})%\(2\*{s}\)\)|({tid_alt})%\(2\*{s}\)|\(({tid_alt})&\(2\*{s}-1\)\))==0\)(.*)",
            flat[0],
        )
        if g:
            index, guard = g.group(1) or g.group(2) or g.group(3), g.group(4)
    elif len(flat) == 3:
        dm = re.fullmatch(rf"(?:const)?(?:unsigned)?(?:int|unsigned)?(\w+)=2\*{s}\*({tid_alt});", flat[0])
        if dm:
            var = dm.group(1)
            g = re.fullmatch(rf"if\({var}<{re.escape(cm.group(1))}\)(.*)", flat[1])
            if g:
                index, guard = var, g.group(1)
    if index is None or guard is None:
        return (
            "the loop body is not one of the interleaved forms (tid % (2*s), tid & (2*s-1), index = 2*s*tid)"
        )
    guard = guard.strip("{}")
    for arr in arrays:
        combine = _combine(guard, arr, index)
        if combine is not None:
            tid = index if index in tids else next(t for t in tids if t in flat[0])
            return _Tree(loop=loop, array=arr, tid=tid, combine=combine, limit=cm.group(1))
    return "the guarded statement is not one associative combine of a __shared__ array"


def analyse(kernel: Node) -> _Tree | str:
    arrays = _shared_arrays(kernel)
    if not arrays:
        return "no __shared__ array: not a shared-memory tree reduction"
    tids = _thread_aliases(kernel)
    reasons = []
    for loop in (n for n in _cuda.walk(kernel) if n.type == "for_statement"):
        found = _match(loop, arrays, tids)
        if isinstance(found, _Tree):
            return found
        reasons.append(f"line {_cuda.line_of(loop)}: {found}")
    return "; ".join(reasons) or "no loop in the kernel"


def _block(launch: LaunchContext) -> int | str:
    block = _launch.block_size(launch)
    if block is None:
        return f"the block size {launch.block[0]} cannot be evaluated"
    if block < 64 or block & (block - 1):
        return f"the block ({block} threads) is not a power of two of at least 64"
    return block


def _step(t: _Tree, left: str, right: str) -> str:
    return f"{left} += {right};" if t.combine == "+" else f"{left} = {t.combine}({left}, {right});"


def _loops(t: _Tree, indent: str) -> tuple[str, str]:
    a, tid = t.array, t.tid
    seq = (
        f"for (unsigned int s_ = ({t.limit}) / 2; s_ > 0; s_ >>= 1) {{  // sequential addressing\n"
        f"{indent}    if ({tid} < s_) {_step(t, f'{a}[{tid}]', f'{a}[{tid} + s_]')}\n"
        f"{indent}    __syncthreads();\n{indent}}}"
    )
    shuffle_step = (
        "v_ += __shfl_down_sync(0xffffffffu, v_, o_);"
        if t.combine == "+"
        else f"v_ = {t.combine}(v_, __shfl_down_sync(0xffffffffu, v_, o_));"
    )
    shfl = (
        f"for (unsigned int s_ = ({t.limit}) / 2; s_ > 32; s_ >>= 1) {{  // sequential addressing down to a warp\n"
        f"{indent}    if ({tid} < s_) {_step(t, f'{a}[{tid}]', f'{a}[{tid} + s_]')}\n"
        f"{indent}    __syncthreads();\n{indent}}}\n"
        f"{indent}if ({tid} < 32) {{  // the last 64 values: one warp, shuffles\n"
        f"{indent}    auto v_ = {a}[{tid}];\n"
        f"{indent}    {'v_ += ' + a + '[' + tid + ' + 32];' if t.combine == '+' else 'v_ = ' + t.combine + '(v_, ' + a + '[' + tid + ' + 32]);'}\n"
        f"{indent}    for (int o_ = 16; o_ > 0; o_ >>= 1) {shuffle_step}\n"
        f"{indent}    if ({tid} == 0) {a}[0] = v_;\n{indent}}}\n"
        f"{indent}__syncthreads();"
    )
    return seq, shfl


class _SequentialReduction(CudaRecipe[_Tree]):
    name = NAME
    transforms = ("sequential-addressing", "warp-shuffle-reduction")
    summary = "interleaved shared-memory tree reductions (tid % 2s, tid & (2s-1), index = 2*s*tid) -> sequential addressing (+ warp shuffles)"
    needs_launch = True
    no_launch = "needs a launch spec with a 1-D block"

    def match(self, src: Source) -> _Tree | str:
        assert src.launch is not None
        if len(src.launch.block) != 1:
            return self.no_launch
        kernel = src.kernel
        if isinstance(kernel, str):
            return kernel
        tree = analyse(kernel)
        if isinstance(tree, str):
            return tree
        block = _block(src.launch)
        return block if isinstance(block, str) else tree

    def plan(self, src: Source, m: _Tree) -> list[Variant]:
        seq, shfl = _loops(m, " " * m.loop.start_point[1])
        return [
            Variant(
                edits=[Edit(m.loop.start_byte, m.loop.end_byte, code)],
                description=(
                    f"{label} for the {m.array} tree (combine {m.combine}): no divergent warps or bank conflicts; "
                    "the result contract after the loop is unchanged; the combination order differs"
                ),
                parameters={"form": label, "combine": m.combine},
            )
            for label, code in (
                ("sequential addressing", seq),
                ("sequential addressing + warp shuffles for the last warp", shfl),
            )
        ]


RECIPE = register(_SequentialReduction())
applies, propose = RECIPE.applies, RECIPE.propose
