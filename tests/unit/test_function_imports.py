"""Every import inside a function says why it is there (issue 28).

An import belongs at the top of its module. One inside a function is kept only where it keeps a heavy or
optional module (torch, triton, textual, openai, matplotlib, ncu_report, cuda.core, landlock, a command's
whole stack) out of a light import, or where it breaks an import cycle; a comment on the line above it
(above its ``try:``, or above the first import of its block) or at the end of its line says which. A new
function-level import without one fails here: move it to the top of the module, or say why it cannot be.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("perfagent", "profilers", "knowledge", "tui")


def _explained(lines: list[str], node: ast.Import | ast.ImportFrom) -> bool:
    """A comment ends the import's first line, or stands above it (past the imports and ``try:`` /
    ``except ...:`` lines of the same block)."""
    if "#" in lines[node.lineno - 1]:
        return True
    row = node.lineno - 2
    while row >= 0:
        text = lines[row].strip()
        if text.startswith("#"):
            return True
        if text.startswith(("import ", "from ", "try:", "except ")) or text.endswith((",", "(")):
            row -= 1
            continue
        return False
    return False


def function_level_imports() -> list[tuple[str, int, bool]]:
    """(file, line, explained) for every import statement inside a function of the project's packages."""
    found: dict[tuple[str, int], bool] = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            lines = text.splitlines()
            for fn in ast.walk(ast.parse(text)):
                if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for node in ast.walk(fn):
                    if isinstance(node, ast.Import | ast.ImportFrom):
                        where = (str(path.relative_to(REPO)), node.lineno)
                        found[where] = _explained(lines, node)
    return [(f, n, ok) for (f, n), ok in sorted(found.items())]


def test_every_function_level_import_says_why() -> None:
    unexplained = [f"{f}:{n}" for f, n, ok in function_level_imports() if not ok]
    assert unexplained == [], (
        "imports inside functions without a comment saying why (move them to the top of the module, "
        "or add a one-line comment: which heavy or optional module they keep out, or which cycle they break): "
        + ", ".join(unexplained)
    )


def test_the_check_sees_a_bare_import_and_accepts_a_commented_one() -> None:
    bare = ast.parse("def f():\n    x = 1\n    import json\n").body[0]
    said = ast.parse(
        "def f():\n    x = 1\n    # torch: seconds to import\n    try:\n        import torch\n    except ImportError:\n        pass\n"
    ).body[0]
    assert isinstance(bare, ast.FunctionDef) and isinstance(said, ast.FunctionDef)
    bare_import = bare.body[1]
    said_import = said.body[1].body[0]  # type: ignore[attr-defined]
    assert isinstance(bare_import, ast.Import) and isinstance(said_import, ast.Import)
    assert not _explained(["def f():", "    x = 1", "    import json"], bare_import)
    said_lines = [
        "def f():",
        "    x = 1",
        "    # torch: seconds to import",
        "    try:",
        "        import torch",
    ]
    assert _explained(said_lines, said_import)
