"""CLI start-up: `import perfagent` and the diagnose command's import path load no heavy module.

No timing is asserted (the CI machines are shared); the modules loaded are. Timings are measured on the
GPU host by scripts/bench_profiling_cost.sh (`python3 -X importtime`).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "pandas",
    "numpy",
    "matplotlib",
    "openai",
    "textual",
    "torch",
    "triton",
    "ncu_report",
    "rich",
    "httpx",
    "mcp",
    "ray",
)


def loaded_after(code: str) -> set[str]:
    """Modules in ``sys.modules`` after running ``code`` in a fresh interpreter."""
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def heavy_in(modules: set[str], heavy: tuple[str, ...] = HEAVY) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in heavy)


def test_import_perfagent_loads_only_its_version() -> None:
    loaded = loaded_after("import perfagent")
    assert sorted(m for m in loaded if m.startswith("perfagent")) == ["perfagent", "perfagent._version"]
    assert heavy_in(loaded, (*HEAVY, "pydantic")) == []


def test_library_names_still_resolve_on_first_use() -> None:
    loaded = loaded_after("import perfagent\nassert perfagent.diagnose.__module__ == 'perfagent.api'")
    assert "perfagent.api" in loaded and "perfagent.optimize.api" not in loaded


@pytest.mark.parametrize("argv", [["diagnose", "--help"], ["diagnose", "x.cu", "--format", "bogus"]])
def test_diagnose_argument_parsing_imports_no_other_command_and_nothing_heavy(argv: list[str]) -> None:
    code = (
        "import contextlib, io\nfrom perfagent.cli import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        f"    main({argv!r})"
    )
    loaded = loaded_after(code)
    assert sorted(m for m in loaded if m.startswith("perfagent.commands.")) == [
        "perfagent.commands.common",
        "perfagent.commands.diagnose",
        "perfagent.commands.signals",  # the CLI's signal handling (stdlib only), not a command
    ]
    assert heavy_in(loaded, (*HEAVY, "pydantic")) == []


def test_the_diagnose_run_path_loads_no_heavy_module() -> None:
    loaded = loaded_after(
        "import perfagent.api, perfagent.render\nperfagent.render.OutputFormat('json').renderer()"
    )
    assert heavy_in(loaded) == []
    assert not any(
        m.startswith(("perfagent.optimize", "perfagent.rewrite", "perfagent.verify")) for m in loaded
    )
    # the optimize loop's workloads (launch specs, KernelBench, Triton inspection) load on first use
    assert not {"perfagent.workloads.launch_spec", "perfagent.workloads.kernelbench"} & loaded


def test_perfagent_optimize_is_still_the_library_function_after_its_subpackage_loads() -> None:
    code = (
        "import perfagent\nfrom perfagent.optimize import measure\nimport perfagent.optimize.api as api\n"
        "from profilers.core_errors import BadInput\n"
        "try:\n    perfagent.optimize('no/such/target.cu')\nexcept BadInput as exc:\n    print('BadInput', exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.startswith("BadInput")
