"""Structure figures for the architecture issues (11, 28): lines, long functions, big modules, function-level
imports, and imports between perfagent's subpackages. Run from the repository root:

    python3 scripts/structure_stats.py [--list]

``--list`` names every function over 60 lines (the optimize loop and the recipes included), every module
over 500 lines, every recipe module over 400, and every function-level import without a comment saying why
(``tests/unit/test_function_imports.py`` fails on those).
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

PACKAGES = ("perfagent", "profilers", "knowledge", "tui")
WORKLOAD_KINDS = frozenset(
    "Workload OptimizeWorkload LaunchSpecTarget KernelBenchTarget TritonScriptTarget ProfileTarget ProfileWay "
    "RunnableWorkload KernelBenchModel LaunchSpecKernel CudaProgram TritonScript PythonScript "
    # the ProfileTarget family before issue 28's fourth step, so that an old checkout's count stays comparable
    "SavedRun RecordedReport NcuReport NcuCsv RocprofOutput CudaProgramSource CudaKernelSource HipProgramSource "
    "ScriptRun CommandLine".split()
)
"""The workload classes (perfagent/workloads/): a stage asks a workload what it can do, never tests its class."""


def kind_tests(tree: ast.AST) -> int:
    """``isinstance`` calls whose class argument names a workload class."""
    count = 0
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", None) == "isinstance"
            and len(node.args) == 2
        ):
            named = {getattr(n, "id", None) or getattr(n, "attr", None) for n in ast.walk(node.args[1])}
            count += bool(named & WORKLOAD_KINDS)
    return count


def long_outside_loop(path: Path, tree: ast.AST) -> int:
    """Functions over 60 lines outside the optimize loop and the recipes (issue 28's limit for new code)."""
    where = path.as_posix()
    if where.startswith("perfagent/optimize/") or "/rewrite/recipes/" in where:
        return 0
    return sum(
        (n.end_lineno or n.lineno) - n.lineno + 1 > 60
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    )


def functions_over_60(path: Path, tree: ast.AST) -> list[tuple[int, str]]:
    """(length, where) of every function over 60 lines, anywhere (issue 28's limit)."""
    return [
        (length, f"{path}:{n.lineno} {n.name}")
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        and (length := (n.end_lineno or n.lineno) - n.lineno + 1) > 60
    ]


def unexplained_import(lines: list[str], node: ast.Import | ast.ImportFrom) -> bool:
    """No comment ends the import's line or stands above it (past its block's imports and ``try:``)."""
    if "#" in lines[node.lineno - 1]:
        return False
    row = node.lineno - 2
    while row >= 0:
        text = lines[row].strip()
        if text.startswith("#"):
            return False
        if not (text.startswith(("import ", "from ", "try:", "except ")) or text.endswith((",", "("))):
            return True
        row -= 1
    return True


RECIPE_MODULE_LIMIT = 400


def main() -> None:
    show = "--list" in sys.argv
    lines = 0
    long_functions: list[tuple[int, str]] = []
    big_modules: list[tuple[int, str]] = []
    modules_over_500: list[tuple[int, str]] = []
    perfagent_modules: list[tuple[int, str]] = []
    local_imports: set[str] = set()
    unexplained: set[str] = set()
    long_anywhere: list[tuple[int, str]] = []
    recipe_modules: list[tuple[int, str]] = []
    edges: Counter[tuple[str, str]] = Counter()
    kind_isinstance = over_60 = 0
    for package in PACKAGES:
        for path in sorted(Path(package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            n = text.count("\n")
            lines += n
            if n > 600:
                big_modules.append((n, str(path)))
            if n > 500:
                modules_over_500.append((n, str(path)))
            if package == "perfagent":
                perfagent_modules.append((n, str(path)))
            tree = ast.parse(text)
            long_anywhere += functions_over_60(path, tree)
            if "/rewrite/recipes/" in path.as_posix() and n > RECIPE_MODULE_LIMIT:
                recipe_modules.append((n, str(path)))
            if not path.as_posix().startswith("perfagent/workloads/"):
                kind_isinstance += kind_tests(tree)
            over_60 += long_outside_loop(path, tree)
            parts = path.with_suffix("").parts
            here = ".".join(parts[:2]) if parts[0] == "perfagent" and len(parts) > 2 else ".".join(parts[:2])
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    length = (node.end_lineno or node.lineno) - node.lineno + 1
                    if length >= 80 or package == "perfagent":
                        long_functions.append((length, f"{path}:{node.lineno} {node.name}"))
                    for inner in ast.walk(node):
                        if isinstance(inner, (ast.Import, ast.ImportFrom)) and inner is not node:
                            local_imports.add(f"{path}:{inner.lineno}")
                            if unexplained_import(text.splitlines(), inner):
                                unexplained.add(f"{path}:{inner.lineno}")
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("perfagent."):
                    there = ".".join(node.module.split(".")[:2])
                    if there != here and parts[0] == "perfagent":
                        edges[(here, there)] += 1
    print(f"lines: {lines}")
    print(f"functions >= 80 lines: {sum(n >= 80 for n, _ in long_functions)}")
    print(f"modules > 600 lines: {len(big_modules)}")
    print(f"function-level imports: {len(local_imports)} ({len(unexplained)} without a comment saying why)")
    core = [(n, w) for n, w in long_functions if w.startswith("perfagent/")]
    print(f"modules > 500 lines: {len(modules_over_500)}")
    print(f"functions > 60 lines outside optimize/ and the recipes: {over_60}")
    print(f"functions > 60 lines anywhere: {len(long_anywhere)}")
    print(f"recipe modules > {RECIPE_MODULE_LIMIT} lines: {len(recipe_modules)}")
    print(f"isinstance tests on workload kinds outside workloads/: {kind_isinstance}")
    print("longest module of perfagent/: {} {}".format(*max(perfagent_modules)))
    print("longest function of perfagent/: {} {}".format(*max(core)) if core else "")
    if show:
        for length, where in sorted((f for f in long_functions if f[0] >= 80), reverse=True):
            print(f"  {length:4d} {where}")
        for length, where in sorted(long_anywhere, reverse=True):
            print(f"  function > 60 {length:4d} {where}")
        for length, where in sorted(modules_over_500, reverse=True):
            print(f"  module {length:4d} {where}")
        for length, where in sorted(recipe_modules, reverse=True):
            print(f"  recipe module {length:4d} {where}")
        for where in sorted(unexplained):
            print(f"  unexplained function-level import {where}")
        pairs = {(a, b) for a, b in edges}
        cycles = sorted((a, b) for a, b in pairs if (b, a) in pairs and a < b)
        print(f"subpackage pairs importing each other: {len(cycles)}")
        for a, b in cycles:
            print(f"  {a} <-> {b}")


if __name__ == "__main__":
    main()
