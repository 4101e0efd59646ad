"""CUDA recipes on CUDA held in ``load_inline`` strings of KernelBench ``ModelNew`` files (perfagent/rewrite/embed).

Real parses (Python ``ast``, tree-sitter-cuda) and real nvcc compiles: the rewritten translation units are
compiled with the declaration-only torch stub in tests/data/kernelbench_inline/stub, so the C++ written
into the wrappers (dim3 casts, the locals for sizes and device attributes) is type-checked too.
"""

from __future__ import annotations

import ast
import subprocess
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from perfagent.rewrite.base import RewriteRequest
from perfagent.rewrite.embed.adapter import embedded_cuda
from perfagent.rewrite.embed.cpp_expr import EmbedError
from perfagent.rewrite.embed.device import device_code
from perfagent.rewrite.embed.literals import LiteralError, find_inline_sources, text_edits
from perfagent.rewrite.embed.wrapper import read_launch, write_launch
from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes_backend import RecipesRewriter
from perfagent.workloads.launch_spec import LaunchOverride
from tests.rewrite.helpers import ROOT, nvcc_or_skip

DATA = ROOT / "tests" / "data" / "kernelbench_inline"
STUB = DATA / "stub"
FILES = sorted(DATA.glob("*_inline.py"))


def _src(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def _req(source: str, transform: str = "launch-config", **extra: object) -> RewriteRequest:
    return RewriteRequest(source=source, language="python", transform=transform, path="m.py", **extra)  # type: ignore[arg-type]


def _compile(units: dict[str, str], tmp: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    nvcc = nvcc_or_skip()

    def one(name: str) -> tuple[str, subprocess.CompletedProcess[str]]:
        path = tmp / f"{name}.cu"
        path.write_text(units[name], encoding="utf-8")
        argv = [nvcc, "-arch=sm_90", "-std=c++17", "-c", "-o", "/dev/null", f"-I{STUB}", str(path)]
        return name, subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, list(units)))


def _launch(source: str, kernel: str) -> tuple[str, object]:
    [found] = find_inline_sources(source)
    return found.cuda_text, read_launch(_cuda.parse(found.cuda_text), kernel)


# --------------------------------------------------------------------------------------------- literals


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_style_resolves_to_its_literal_values(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    [found] = find_inline_sources(source)
    assert "__global__" in found.cuda_text and len(found.cuda) == 1
    tree = ast.parse(source)
    literals = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert found.cuda[0].value in literals and all(c.value in literals for c in found.cpp)
    # every value character maps to the byte that writes it (escapes map to their backslash)
    data = source.encode("utf-8")
    lit = found.cuda[0]
    for i, ch in enumerate(lit.value):
        written = data[lit.offsets[i] : lit.offsets[i] + 1].decode("utf-8", errors="replace")
        assert written == ch or written == "\\", (i, ch, written)


def test_non_raw_escapes_survive_an_edit_of_their_line() -> None:
    source = _src("softmax_rows_inline.py")
    [found] = find_inline_sources(source)
    lit = found.cuda[0]
    assert "2-D tensor\\n" in lit.value and not lit.raw  # the source writes \\n: value backslash + n
    new = lit.value.replace("expected a 2-D tensor", "expected a 2-D 'float' \"tensor\"")
    edits = text_edits(lit, new)
    assert len(edits) == 1  # the changed line only
    data = source.encode()
    for e in sorted(edits, key=lambda e: -e.start):
        data = data[: e.start] + e.new.encode() + data[e.end :]
    [again] = find_inline_sources(data.decode())
    assert again.cuda_text == new


def test_single_quoted_and_triple_quote_text_is_escaped() -> None:
    source = 'from torch.utils.cpp_extension import load_inline\nsrc = "__global__ void k() {}\\n"\nm = load_inline("m", "", cuda_sources=src)\n'
    [found] = find_inline_sources(source)
    new = "const char* s = \"a'''b\";\n__global__ void k() {}\n"
    data = source.encode()
    for e in sorted(text_edits(found.cuda[0], new), key=lambda e: -e.start):
        data = data[: e.start] + e.new.encode() + data[e.end :]
    [again] = find_inline_sources(data.decode())
    assert again.cuda_text == new


def test_raw_string_cannot_hold_its_delimiter() -> None:
    [found] = find_inline_sources(_src("vector_add_inline.py"))
    with pytest.raises(LiteralError, match="cannot hold"):
        text_edits(found.cuda[0], found.cuda[0].value + '\n// """\n')


@pytest.mark.parametrize(
    ("snippet", "message"),
    [
        ('src = f"__global__ void k{1}() {{}}"', "f-string"),
        ('src = "__global__ void k() {}"\nsrc = "x"', "assigned 2 times"),
        ('a = "__global__ "\nsrc = a + "void k() {}"', "BinOp"),
        (
            'src = ("__global__ void k() {}\\n"\n       "__device__ int f() { return 1; }")',
            "implicit concatenation",
        ),
    ],
)
def test_sources_that_are_not_one_fixed_literal_are_refused(snippet: str, message: str) -> None:
    source = f"from torch.utils.cpp_extension import load_inline\n{snippet}\nm = load_inline(name='m', cpp_sources='', cuda_sources=src)\n"
    with pytest.raises(LiteralError, match=message):
        find_inline_sources(source)
    reason = RecipesRewriter().applies(_req(source, "restrict-pointers"))
    assert reason is not None and message.split()[0] in reason


# --------------------------------------------------------------------------------------------- reading the launch


def test_one_element_per_thread_wrapper() -> None:
    _, launch = _launch(_src("vector_add_inline.py"), "elementwise_add_kernel")
    ctx = launch.context  # type: ignore[attr-defined]
    assert ctx.grid == ["((a_numel + 256 - 1) // 256)"] and ctx.block == [256] and ctx.shared_mem == 0
    assert [(a.name, a.value, a.shape) for a in ctx.args] == [
        ("a", None, ["a_numel"]),
        ("b", None, ["b_numel"]),
        ("out", None, ["out_numel"]),
        ("size", "a_numel", []),
    ]
    assert launch.leaves["a_numel"].cpp == "a.numel()" and ctx.params["a_numel"] == 1 << 24  # type: ignore[attr-defined]


def test_stream_argument_and_sizes_from_dimensions() -> None:
    _, launch = _launch(_src("softmax_rows_inline.py"), "softmax_rows_kernel")
    ctx = launch.context  # type: ignore[attr-defined]
    assert ctx.grid == ["((x_size_0 + 128 - 1) // 128)"] and ctx.block == [128]
    assert {a.name: a.value for a in ctx.args if a.value is not None} == {
        "rows": "x_size_0",
        "cols": "x_size_1",
    }


def test_dim3_with_a_macro_and_block_components() -> None:
    _, launch = _launch(_src("matmul_naive_inline.py"), "matmul_naive_kernel")
    ctx = launch.context  # type: ignore[attr-defined]
    assert ctx.block == ["TILE", "TILE"] and ctx.defines == {"TILE": 16}
    assert ctx.grid == ["(A_size_0 + TILE - 1) // TILE", "(B_size_1 + TILE - 1) // TILE"]


def test_variables_written_elsewhere_stay_cpp() -> None:
    # sms is written through &sms: blocks, computed from it, is a leaf (C++ computes it); the float
    # argument is a leaf as a whole
    _, launch = _launch(_src("scale_gridstride_inline.py"), "scale_kernel")
    ctx = launch.context  # type: ignore[attr-defined]
    assert ctx.grid == ["blocks"] and launch.leaves["blocks"].cpp == "blocks" and ctx.block == [256]  # type: ignore[attr-defined]
    assert [a.value for a in ctx.args][2:] == ["float_alpha", "x_numel"]


def _wrapper(body: str, kernel_params: str = "const float* x, float* y, int n") -> str:
    return (
        f"__global__ void k({kernel_params}) {{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i]; }}\n"
        "torch::Tensor f(torch::Tensor x) {\n    auto y = torch::empty_like(x);\n    int n = x.numel();\n"
        + textwrap.indent(textwrap.dedent(body), "    ")
        + "    return y;\n}\n"
    )


def test_reassigned_local_and_float_arithmetic_are_leaves() -> None:
    text = _wrapper("""\
        int blocks = (n + 255) / 256;
        blocks = std::min(blocks, 1024);
        int threads = (int)ceil(n / 4096.0) * 32;
        k<<<blocks, threads, (int)(n * 0.5) + 4>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    """)
    launch = read_launch(_cuda.parse(text), "k")
    assert launch.context.grid == ["blocks"] and launch.leaves["blocks"].cpp == "blocks"
    # a float inside an inlined initialiser keeps the variable as it is; one in the launch, the whole argument
    assert launch.context.block == ["threads"] and launch.leaves["threads"].cpp == "threads"
    assert launch.context.shared_mem == "int_n_0_5_4"
    assert launch.leaves["int_n_0_5_4"].cpp == "(int)(n * 0.5) + 4"


def test_two_launches_of_the_kernel_are_ambiguous() -> None:
    text = _wrapper(
        "k<<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);\nk<<<2, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);\n"
    )
    with pytest.raises(EmbedError, match="launched 2 times"):
        read_launch(_cuda.parse(text), "k")


# --------------------------------------------------------------------------------------------- writing it back


def test_written_launches_compile(tmp_path: Path) -> None:
    units: dict[str, str] = {}
    text, launch = _launch(_src("matmul_naive_inline.py"), "matmul_naive_kernel")
    units["swap_2d"] = write_launch(
        text,
        launch,  # type: ignore[arg-type]
        LaunchOverride(grid=["ceil_div(B_size_1, TILE)", "ceil_div(A_size_0, TILE)"], block=["TILE", "TILE"]),
    )
    assert "dim3((unsigned int)((pa_B_size_1 + TILE - 1) / TILE)" in units["swap_2d"]
    text, launch = _launch(_src("scale_gridstride_inline.py"), "scale_kernel")
    units["waves"] = write_launch(
        text,
        launch,  # type: ignore[arg-type]
        LaunchOverride(grid=["4 * sm_count * (max_threads_per_sm // 256)"], shared_mem="4 * warp_size"),
    )
    assert "cudaDevAttrMultiProcessorCount" in units["waves"] and "cudaDevAttrWarpSize" in units["waves"]
    assert "pa_device" in units["waves"] and "(size_t)(4 * pa_warp_size)" in units["waves"]
    text = _wrapper(
        "if (n > 0)\n    k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);\n"
    )
    units["unbraced"] = "#include <torch/extension.h>\n" + write_launch(
        text,
        read_launch(_cuda.parse(text), "k"),
        LaunchOverride(grid=["ceil_div(x_numel, 512)"], block=[512]),
    )
    assert "if (n > 0)\n        {\n            const long long pa_x_numel" in units["unbraced"]
    for name, result in _compile(units, tmp_path).items():
        assert result.returncode == 0, f"{name}: {result.stderr[-1500:]}"


def test_launch_changes_without_a_cpp_meaning_are_refused() -> None:
    text, launch = _launch(_src("vector_add_inline.py"), "elementwise_add_kernel")
    with pytest.raises(EmbedError, match="-D macros"):
        write_launch(text, launch, LaunchOverride(grid=[1], defines={"X": 1}))  # type: ignore[arg-type]
    with pytest.raises(EmbedError, match="integer meaning"):
        write_launch(text, launch, LaunchOverride(grid=["a_numel / 256"]))  # type: ignore[arg-type]
    with pytest.raises(EmbedError, match="does not compute"):
        write_launch(text, launch, LaunchOverride(grid=["rows"]))  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------- the recipes backend


def test_device_code_compiles_without_torch(tmp_path: Path) -> None:
    units = {p.stem: device_code(find_inline_sources(p.read_text())[0].cuda_text) for p in FILES}
    for name, unit in units.items():
        assert "torch" not in unit and "__global__" in unit, name
    for name, result in _compile(units, tmp_path).items():
        assert result.returncode == 0, f"{name}: {result.stderr[-800:]}"


@pytest.mark.parametrize(
    ("name", "transform", "recipe"),
    [
        ("vector_add_inline.py", "increase-parallelism", "launch-geometry"),
        ("vector_add_inline.py", "vectorize-access", "vectorize-access"),
        ("softmax_rows_inline.py", "launch-config", "launch-config"),
        ("scale_gridstride_inline.py", "increase-parallelism", "launch-geometry"),
        ("matmul_naive_inline.py", "restrict-pointers", "restrict-pointers"),
    ],
)
def test_cuda_recipes_propose_complete_python_candidates(
    name: str, transform: str, recipe: str, tmp_path: Path
) -> None:
    source = _src(name)
    rewriter = RecipesRewriter()
    assert rewriter.applies(_req(source, transform)) is None
    cands = rewriter.propose(_req(source, transform))
    assert cands and all(c.recipe == recipe and c.launch is None and not c.defines for c in cands)
    units = {}
    for i, cand in enumerate(cands):
        compile(cand.source, name, "exec", dont_inherit=True)
        assert cand.id.startswith(f"{transform}/recipes/") and cand.diff.startswith("--- a/m.py")
        [found] = find_inline_sources(cand.source)
        assert found.cuda_text != find_inline_sources(source)[0].cuda_text
        units[f"{Path(name).stem}_{i}"] = found.cuda_text
        # only the CUDA string changed: the Python around it is byte-identical
        old, new = find_inline_sources(source)[0].cuda[0], found.cuda[0]
        before, after = source.encode(), cand.source.encode()
        assert after[: new.offsets[0]] == before[: old.offsets[0]]
        assert after[new.offsets[-1] :] == before[old.offsets[-1] :]
    for unit, result in _compile(units, tmp_path).items():
        assert result.returncode == 0, f"{unit}: {result.stderr[-1500:]}"


def test_launch_geometry_rewrites_the_wrapper_launch() -> None:
    [cand] = [
        c
        for c in RecipesRewriter().propose(_req(_src("vector_add_inline.py"), "increase-parallelism"))
        if c.parameters.get("block") == 512
    ]
    assert "const long long pa_a_numel = (long long)(a.numel());" in cand.source
    assert "<<<dim3((unsigned int)((pa_a_numel + 512 - 1) / 512)), dim3(512)>>>" in cand.source
    assert any("launch written in the wrapper elementwise_add_cuda()" in n for n in cand.notes)


def test_reasons_name_the_embedded_source_and_plain_python_is_unchanged() -> None:
    why = RecipesRewriter().applies(_req(_src("matmul_naive_inline.py"), "smem-padding"))
    assert why is not None and why.startswith("in the load_inline CUDA source (line 11):")
    plain = (ROOT / "examples" / "kernelbench" / "01_vector_add.py").read_text()
    assert "not python" in (RecipesRewriter().applies(_req(plain, "restrict-pointers")) or "")
    assert embedded_cuda(_req(plain)) is None


TWO_KERNELS = """
__global__ void row_sum(const float* x, float* s, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float acc = 0.f;
    for (int c = 0; c < cols; ++c) acc += x[r * cols + c];
    s[r] = acc;
}

__global__ void divide(float* y, const float* s, long total, int cols) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < total) y[i] /= s[i / cols];
}

torch::Tensor normalise(torch::Tensor x) {
    int rows = x.size(0);
    int cols = x.size(1);
    auto s = torch::zeros({rows}, x.options());
    auto y = x.contiguous();
    row_sum<<<(rows + 127) / 128, 128>>>(x.data_ptr<float>(), s.data_ptr<float>(), rows, cols);
    divide<<<(y.numel() + 255) / 256, 256>>>(y.data_ptr<float>(), s.data_ptr<float>(), y.numel(), cols);
    return y;
}
"""


def _module(cuda: str) -> str:
    """A ModelNew-style Python file holding ``cuda`` in one load_inline string."""
    return (
        "from torch.utils.cpp_extension import load_inline\n\n"
        f'source = """\n#include <torch/extension.h>\n{cuda}"""\n\n'
        'ext = load_inline(name="m", cpp_sources="torch::Tensor normalise(torch::Tensor x);", '
        'cuda_sources=source, functions=["normalise"])\n'
    )


def test_each_kernel_of_a_multi_kernel_unit_gets_its_own_launch(tmp_path: Path) -> None:
    """Several kernels and none named: a recipe the whole unit refuses is asked about each kernel,
    with that kernel's launch read from the wrapper, and its candidate changes that launch alone."""
    source = _module(TWO_KERNELS)
    embedded = embedded_cuda(_req(source, "cooperative-row"))
    assert embedded is not None and not isinstance(embedded, str)
    assert embedded.inner.launch is None and "2 kernels and none is named" in (embedded.launch_note or "")
    parts = embedded.each_kernel()
    assert [p.inner.kernel for p in parts] == ["row_sum", "divide"]
    assert [p.inner.launch.block if p.inner.launch else None for p in parts] == [[128], [256]]
    rewriter = RecipesRewriter()
    assert rewriter.applies(_req(source, "cooperative-row")) is None
    # a warp per row, then a block per row: each with 16-byte lanes first, then the scalar form
    candidates = rewriter.propose(_req(source, "cooperative-row"))
    assert [c.parameters.get("vector_lanes", False) for c in candidates] == [True, True, False, False]
    warp, block = candidates[0], candidates[1]
    text = find_inline_sources(warp.source)[0].cuda_text
    assert "row_sum<<<dim3((unsigned int)(32 * ((pa_x_size_0 + 127) / 128))), 128>>>" in text
    # the block-per-row variant's own block (256 threads per row), the grid one block per former thread
    assert "row_sum<<<dim3((unsigned int)((pa_x_size_0 + 127) / 128 * 128)), dim3(256)>>>" in (
        find_inline_sources(block.source)[0].cuda_text
    )
    assert "divide<<<(y.numel() + 255) / 256, 256>>>" in text  # the other launch is untouched
    named = rewriter.applies(_req(source, "cooperative-row", kernel="divide"))
    assert (
        named
        == "in the load_inline CUDA source (line 30): cooperative-row, cooperative-scan: the kernel has no loop over the row"
    )
    result = _compile({"two_kernels": text}, tmp_path)["two_kernels"]
    assert result.returncode == 0, result.stderr[-1500:]


def test_a_unit_that_fits_whole_is_not_split_per_kernel() -> None:
    # restrict-pointers edits every kernel of the unit in one candidate, as before
    cands = RecipesRewriter().propose(_req(_module(TWO_KERNELS), "restrict-pointers"))
    assert len(cands) == 1 and cands[0].parameters["kernels"] == "row_sum,divide"


def test_refusals_say_why_the_wrapper_launch_is_unknown() -> None:
    launched_twice = TWO_KERNELS.replace(
        "    return y;\n}",
        "    row_sum<<<1, 32>>>(x.data_ptr<float>(), s.data_ptr<float>(), rows, cols);\n    return y;\n}",
    )
    why = RecipesRewriter().applies(_req(_module(launched_twice), "cooperative-row"))
    assert why is not None
    assert (
        "kernel row_sum: cooperative-row, cooperative-scan: no launch spec: the grid is set in the source's own launch "
        "(the wrapper's launch is not read: the launch cannot be read from the wrapper: row_sum is launched "
        "2 times" in why
    ), why
