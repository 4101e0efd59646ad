"""``static:library-stand-in``: a library call doing the work of the kernel the task asks for.

A candidate can write a Triton kernel for the easy part (a ReLU, a copy) and hand the operation the
task is about to the library: ``torch.matmul`` (cuBLAS), ``scaled_dot_product_attention`` (cuDNN /
flash), ``conv2d`` (cuDNN). It is then fast and correct, and none of it is the candidate's. The check
fails when the reference's heavy operation belongs to a family below, the candidate (outside its
kernels) calls the same family, and none of its Triton kernels contains that family's instruction
(``tl.dot``). CUDA-source candidates are not judged here (their source is not parsed for the
operation); the runtime kernel list on a GPU names what ran.
"""

from __future__ import annotations

import ast
import re

from perfagent.sandbox.wire import Check

CHECK = "static:library-stand-in"
FAMILIES: dict[str, re.Pattern[str]] = {
    "matmul (cuBLAS)": re.compile(
        r"\b(?:torch\.|F\.|nn\.functional\.)?(?:matmul|mm|bmm|addmm|baddbmm|linear|einsum)\s*\(|\bnn\.Linear\b|\w\)?\s@\s"
    ),
    "attention (SDPA)": re.compile(r"\bscaled_dot_product_attention\b|\bMultiheadAttention\b|\bflash_attn"),
    "convolution (cuDNN)": re.compile(r"\bconv(?:_transpose)?[123]d\s*\(|\bnn\.Conv(?:Transpose)?[123]d\b"),
}
"""Operations a library runs far better than a first kernel: what a task is usually about."""
OWN_INSTRUCTION = re.compile(r"\btl\.dot\b|\btl\.dot_scaled\b")
"""What a Triton kernel doing any of the families contains."""


def _text_without(tree: ast.Module, names: set[str]) -> str:
    body = [n for n in tree.body if not (isinstance(n, ast.FunctionDef) and n.name in names)]
    return ast.unparse(ast.Module(body=body, type_ignores=[]))


def _kernel_text(tree: ast.Module, names: set[str]) -> str:
    return "\n".join(ast.unparse(n) for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names)


def _reference_families(ref_text: str) -> list[str]:
    try:
        tree = ast.parse(ref_text)
    except SyntaxError:
        return []
    # the reference's own Model only: a ModelNew in the same file is the candidate
    body = [n for n in tree.body if not (isinstance(n, ast.ClassDef) and n.name == "ModelNew")]
    text = ast.unparse(ast.Module(body=body, type_ignores=[]))
    return [name for name, pattern in FAMILIES.items() if pattern.search(text)]


def library_stand_in_check(tree: ast.Module, jits: list[str], ref_text: str) -> Check:
    """The check for a Triton candidate (``jits``: its kernels' names) against the reference source."""
    if not jits:
        return Check(name=CHECK, passed=True, detail="no Triton kernels: not judged")
    outside = _text_without(tree, set(jits))
    own = _kernel_text(tree, set(jits))
    standing_in = [
        name
        for name in _reference_families(ref_text)
        if FAMILIES[name].search(outside) and not OWN_INSTRUCTION.search(own)
    ]
    if standing_in:
        return Check(
            name=CHECK,
            passed=False,
            detail=f"the task's {', '.join(standing_in)} is done by a library call outside the candidate's "
            f"kernels ({', '.join(jits)} contain no tl.dot): the speed and the result are the library's",
        )
    return Check(name=CHECK, passed=True)
