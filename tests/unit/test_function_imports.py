"""Every import inside a function says why it is there (issue 28).

An import belongs at the top of its module. One inside a function is kept only where it keeps a heavy or
optional module (torch, triton, textual, openai, matplotlib, ncu_report, cuda.core, landlock, a command's
whole stack) out of a light import, or where it breaks an import cycle; a comment on the line above it
(above its ``try:``, or above the first import of its block) or at the end of its line says which. A new
function-level import without one fails here: move it to the top of the module, or say why it cannot be.
The rule is ``scripts/structure_stats.py``'s ``unexplained_import``, which also counts them.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("perfagent", "profilers", "knowledge", "tui")


def _structure_stats() -> ModuleType:
    spec = importlib.util.spec_from_file_location("structure_stats", REPO / "scripts" / "structure_stats.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def unexplained_imports() -> list[str]:
    """``file:line`` of every import inside a function of the project's packages without a comment."""
    rule = _structure_stats().unexplained_import
    found: set[str] = set()
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            lines = text.splitlines()
            for fn in ast.walk(ast.parse(text)):
                if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                    found.update(
                        f"{path.relative_to(REPO)}:{node.lineno}"
                        for node in ast.walk(fn)
                        if isinstance(node, ast.Import | ast.ImportFrom) and rule(lines, node)
                    )
    return sorted(found)


def test_every_function_level_import_says_why() -> None:
    unexplained = unexplained_imports()
    assert unexplained == [], (
        "imports inside functions without a comment saying why (move them to the top of the module, "
        "or add a one-line comment: which heavy or optional module they keep out, or which cycle they break): "
        + ", ".join(unexplained)
    )


def test_the_rule_sees_a_bare_import_and_accepts_a_commented_one() -> None:
    rule = _structure_stats().unexplained_import
    bare = ["def f():", "    x = 1", "    import json"]
    above_try = [
        "def f():",
        "    x = 1",
        "    # torch: seconds to import",
        "    try:",
        "        import torch",
    ]
    trailing = ["def f():", "    import torch  # seconds to import"]
    second_of_block = [
        "def f():",
        "    # the command's stack",
        "    import a",
        "    from b import (",
        "        c,",
    ]
    assert rule(bare, _at(3))
    assert not rule(above_try, _at(5))
    assert not rule(trailing, _at(2))
    assert not rule(second_of_block, _at(4))


def _at(line: int) -> ast.Import:
    node = ast.Import(names=[])
    node.lineno = line
    return node
