"""cooperative-scan: row-per-thread running sums scanned by a warp (perfagent/rewrite/recipes/cooperative_scan.py).

The forms are the shapes naive solutions of KernelBench level 1's scan problems take
(https://github.com/ScalingIntelligence/KernelBench, MIT: 89_cumsum, 90_cumprod, 91_cumsum_reverse,
92_cumsum_exclusive, 93_masked_cumsum; one thread per row walking the row with a running value), plus the
variations such kernels are written with (row offsets, size_t counters, ``<=`` bounds, both stores,
running maxima).
Written before the recipe; the refused forms are what it must not touch, each with its reason.
Every positive form is compiled with nvcc and emulated lane by lane against its original.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest
from perfagent.rewrite.embed.device import device_code
from perfagent.rewrite.embed.literals import find_inline_sources
from perfagent.rewrite.recipes import RECIPES, cooperative_scan
from perfagent.rewrite.recipes_backend import RecipesRewriter
from tests.rewrite.cuda_lanes import Buf, Case, assert_same
from tests.rewrite.helpers import ROOT, assert_compiled, nvcc_compile, nvcc_or_skip

CUMSUM = """
__global__ void cumsum_kernel(const float* x, float* out, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float sum = 0.0f;
    for (int j = 0; j < cols; j++) {
        sum += x[row * cols + j];
        out[row * cols + j] = sum;
    }
}
"""

FORMS = {
    "cumsum-inclusive": CUMSUM,
    "cumsum-exclusive": """
__global__ void cumsum_kernel(const float* x, float* out, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float sum = 0.0f;
        for (int j = 0; j < cols; ++j) {
            out[row * cols + j] = sum;
            sum += x[row * cols + j];
        }
    }
}
""",
    "masked-cumsum-index-local": """
__global__ void cumsum_kernel(const float* x, const bool* mask, float* out, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float running = 0.0f;
        for (int j = 0; j < cols; ++j) {
            int idx = row * cols + j;
            if (mask[idx]) {
                running += x[idx];
            }
            out[idx] = running;
        }
    }
}
""",
    "value-first-acc-equals-acc-plus-size_t-le": """
__global__ void cumsum_kernel(const double* __restrict__ in, double* __restrict__ out, size_t rows, size_t last) {
    size_t row = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const size_t base = row * (last + 1);
    double acc = 1.5;
    for (size_t k = 0; k <= last; ++k) {
        const double v = in[base + k] * 0.5;
        acc = v + acc;
        out[base + k] = acc;
    }
}
""",
    "int-count-of-positives": """
__global__ void cumsum_kernel(const float* x, int* out, int rows, int cols) {
    int row = threadIdx.x + blockIdx.x * blockDim.x;
    if (row >= rows) return;
    int count = 0;
    for (int j = 0; j < cols; j++) {
        if (x[row * cols + j] > 0.0f) count++;
        out[row * cols + j] = count;
    }
}
""",
    "both-stores-unbraced-if": """
__global__ void cumsum_kernel(const float* x, float* excl, float* incl, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float s = 0.f;
    for (int j = 0; j < cols; j++) {
        excl[row * cols + j] = s;
        if (x[row * cols + j] != 0.f) s = s + x[row * cols + j];
        incl[row * cols + j] = 2.f * s;
    }
}
""",
    "reverse-cumsum": CUMSUM.replace("for (int j = 0; j < cols; j++)", "for (int j = cols - 1; j >= 0; j--)"),
    "cumprod-times-equals": CUMSUM.replace("float sum = 0.0f;", "float sum = 1.0f;").replace(
        "sum += x[row * cols + j];", "sum *= x[row * cols + j];"
    ),
    "cumprod-exclusive-acc-times-e": """
__global__ void cumprod_kernel(const double* x, double* out, long long rows, long long cols) {
    long long row = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (row >= rows) return;
    double p = 1.0;
    for (long long j = 0; j < cols; ++j) {
        out[row * cols + j] = p;
        p = x[row * cols + j] * p;
    }
}
""",
    # row pointers declared before the loop (the shape of PyTorch's CPU cum kernels): each into one parameter
    "row-pointers-size-t-offsets": """
__global__ void rowwise_prefix(const float *values, float *prefix, int n_rows, int width) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < n_rows) {
        const float *in_row = values + (size_t)r * width;
        float *out_row = prefix + (size_t)r * width;
        float total = 0.0f;
        for (int k = 0; k < width; ++k) {
            total += in_row[k];
            out_row[k] = total;
        }
    }
}
""",
    "row-pointers-address-of-exclusive-double": """
__global__ void cumsum_rows(const double *in, double *out, int rows, int len) {
    const int r = threadIdx.x + blockIdx.x * blockDim.x;
    if (r >= rows) return;
    const double *x = &in[r * len];
    double *y = &out[r * len];
    double acc = 0.0;
    for (int k = 0; k < len; ++k) {
        y[k] = acc;
        acc += x[k];
    }
}
""",
    "running-max-fmaxf-reverse": CUMSUM.replace("float sum = 0.0f;", "float sum = -INFINITY;")
    .replace("for (int j = 0; j < cols; j++)", "for (int j = cols - 1; j >= 0; --j)")
    .replace("sum += x[row * cols + j];", "sum = fmaxf(x[row * cols + j], sum);"),
}

ROW_POINTERS = FORMS["row-pointers-size-t-offsets"]
REFUSED = {
    "row-pointer-and-its-parameter": (
        ROW_POINTERS.replace(
            "out_row[k] = total;", "out_row[k] = total + prefix[(size_t)r * width + k + 1];"
        ),
        "both reach the buffer prefix",
    ),
    "two-row-pointers-into-one-buffer": (
        ROW_POINTERS.replace(
            "float total = 0.0f;",
            "float *next = prefix + (size_t)r * width + 1;\n        float total = 0.0f;",
        ).replace("out_row[k] = total;", "out_row[k] = total + next[k];"),
        "both reach the buffer prefix",
    ),
    "row-pointer-moved": (
        ROW_POINTERS.replace("float total = 0.0f;", "out_row += 1;\n        float total = 0.0f;"),
        "the pointer out_row is used",
    ),
    "row-pointer-from-a-local-array": (
        ROW_POINTERS.replace(
            "float *out_row = prefix + (size_t)r * width;", "float tmp[4];\n        float *out_row = tmp;"
        ),
        "is not a parameter plus an offset",
    ),
    "running-max-of-ints": (
        CUMSUM.replace("const float* x, float* out", "const int* x, int* out")
        .replace("float sum = 0.0f;", "int sum = -1000000;")
        .replace("sum += x[row * cols + j];", "sum = max(sum, x[row * cols + j]);"),
        "for float and double only",
    ),
    "step-by-two": (
        CUMSUM.replace("for (int j = 0; j < cols; j++)", "for (int j = 0; j < cols; j += 2)"),
        "does not step by one",
    ),
    "counts-up-bounded-from-below": (
        CUMSUM.replace("for (int j = 0; j < cols; j++)", "for (int j = 0; j > -cols; j++)"),
        "bounds it the other way",
    ),
    "division": (
        CUMSUM.replace("sum += x[row * cols + j];", "sum /= x[row * cols + j];"),
        "one running-value update",
    ),
    "plain-reduction": (
        CUMSUM.replace("out[row * cols + j] = sum;", "").replace("    }\n}", "    }\n    out[row] = sum;\n}"),
        "stores no running value",
    ),
    "total-read-after-loop": (
        CUMSUM.replace("    }\n}", "    }\n    out[rows * cols + row] = sum;\n}"),
        "is read on line",
    ),
    "strided-store": (
        CUMSUM.replace("out[row * cols + j] = sum;", "out[j * rows + row] = sum;"),
        "is not offset + j",
    ),
    "two-loops": (
        CUMSUM.replace(
            "    }\n}", "    }\n    for (int j = 0; j < cols; j++) out[row * cols + j] *= 2.f;\n}"
        ),
        "more than one loop",
    ),
    "reads-a-neighbour-of-the-output": (
        CUMSUM.replace("out[row * cols + j] = sum;", "out[row * cols + j] = sum + out[row * cols + j + 1];"),
        "lanes would share its elements",
    ),
    "two-updates": (
        CUMSUM.replace("sum += x[row * cols + j];", "sum += x[row * cols + j];\n        sum += 1.f;"),
        "2 running-value updates",
    ),
    "shared-memory": (
        CUMSUM.replace("float sum = 0.0f;", "__shared__ float t[32];\n    float sum = 0.0f;"),
        "uses __shared__",
    ),
    "store-outside-the-loop": (
        CUMSUM.replace("float sum = 0.0f;", "out[row * cols] = 0.f;\n    float sum = 0.0f;"),
        "reached as",
    ),
    "counter-updated-in-body": (
        CUMSUM.replace("out[row * cols + j] = sum;", "out[row * cols + j] = sum;\n        j += 1;"),
        "assigns its counter j",
    ),
}

LAUNCH = LaunchContext(grid=["ceil_div(rows, 256)"], block=[256], params={"rows": 1000})


def _request(source: str, launch: LaunchContext = LAUNCH) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform="cooperative-row", launch=launch)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_positive_forms(name: str) -> None:
    req = _request(FORMS[name])
    assert cooperative_scan.applies(req) is None, cooperative_scan.applies(req)
    cand, blocked = cooperative_scan.propose(req)
    assert cand.recipe == blocked.recipe == "cooperative-scan" and "__shfl_up_sync" in cand.source
    assert "__syncthreads()" in blocked.source and "__shfl" not in blocked.source
    assert blocked.launch is not None and blocked.launch.grid == ["(ceil_div(rows, 256)) * (256)"]
    assert "coop_lane = threadIdx.x % 32" in cand.source
    assert ("coop_base -= 32" in cand.source) == ("reverse" in name)  # a reverse scan walks down the row
    assert cand.launch is not None and cand.launch.grid == ["32 * (ceil_div(rows, 256))"]
    assert ("coop_excl" in cand.source) == ("exclusive" in str(cand.parameters["scan"]))


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_forms(name: str) -> None:
    source, reason = REFUSED[name]
    why = cooperative_scan.applies(_request(source))
    assert why is not None and reason in why, why
    assert cooperative_scan.propose(_request(source)) == []


def test_cooperative_row_and_the_scan_split_the_kernels_between_them() -> None:
    """A running sum goes to the scan, a reduction to cooperative-row: never both, never neither."""
    from perfagent.rewrite.recipes import cooperative_row

    for source in FORMS.values():
        assert cooperative_row.applies(_request(source)) is not None
    reduction = REFUSED["plain-reduction"][0]
    assert cooperative_row.applies(_request(reduction)) is None
    assert cooperative_scan.applies(_request(reduction)) is not None


def test_block_must_be_a_multiple_of_32() -> None:
    odd = LaunchContext(grid=["ceil_div(rows, 48)"], block=["B"], params={"rows": 100, "B": 48})
    assert "multiple of 32" in (cooperative_scan.applies(_request(CUMSUM, odd)) or "")


def test_registered_under_cooperative_row_and_in_the_catalog() -> None:
    from knowledge.transforms import transform

    assert RECIPES["cooperative-scan"].transforms == ("cooperative-row",)
    assert "cooperative-scan" in transform("cooperative-row").recipes


def test_candidates_compile(tmp_path: Path) -> None:
    sources = {
        f"{name}-{i}": cand.source
        for name, src in FORMS.items()
        for i, cand in enumerate(cooperative_scan.propose(_request(src)))
    }
    assert len(sources) == 2 * len(FORMS)  # a warp per row and a block per row
    assert_compiled(nvcc_compile(sources, tmp_path))


F = "float"
EMULATED = {
    # form: (arguments for rows x cols); kernel cumsum_kernel, launched with blocks of 64
    "cumsum-inclusive": lambda r, c: (Buf(F, r * c), Buf(F, r * c), f"{r}", f"{c}"),
    "cumsum-exclusive": lambda r, c: (Buf(F, r * c), Buf(F, r * c), f"{r}", f"{c}"),
    "masked-cumsum-index-local": lambda r, c: (
        Buf(F, r * c),
        Buf("bool", r * c, "mask"),
        Buf(F, r * c),
        f"{r}",
        f"{c}",
    ),
    "value-first-acc-equals-acc-plus-size_t-le": lambda r, c: (
        Buf("double", r * c),
        Buf("double", r * c),
        f"(size_t){r}",
        f"(size_t){c - 1}",
    ),
    "int-count-of-positives": lambda r, c: (Buf(F, r * c), Buf("int", r * c), f"{r}", f"{c}"),
    "both-stores-unbraced-if": lambda r, c: (Buf(F, r * c), Buf(F, r * c), Buf(F, r * c), f"{r}", f"{c}"),
    "reverse-cumsum": lambda r, c: (Buf(F, r * c), Buf(F, r * c), f"{r}", f"{c}"),
    "cumprod-times-equals": lambda r, c: (Buf(F, r * c), Buf(F, r * c), f"{r}", f"{c}"),
    "cumprod-exclusive-acc-times-e": lambda r, c: (
        Buf("double", r * c),
        Buf("double", r * c),
        f"{r}LL",
        f"{c}LL",
    ),
    "running-max-fmaxf-reverse": lambda r, c: (Buf(F, r * c), Buf(F, r * c), f"{r}", f"{c}"),
    "row-pointers-size-t-offsets": lambda r, c: (Buf(F, r * c), Buf(F, r * c), f"{r}", f"{c}"),
    "row-pointers-address-of-exclusive-double": lambda r, c: (
        Buf("double", r * c),
        Buf("double", r * c),
        f"{r}",
        f"{c}",
    ),
}
KERNEL = {
    "cumprod-exclusive-acc-times-e": "cumprod_kernel",
    "row-pointers-size-t-offsets": "rowwise_prefix",
    "row-pointers-address-of-exclusive-double": "cumsum_rows",
}
"""Kernel names other than cumsum_kernel."""
SHAPES = [(3, 1), (3, 100), (70, 33), (5, 64)]
"""rows x cols: a row shorter than a warp, rows not a multiple of 32 wide, 70 rows over two original
blocks of 64 (a partial block whose warps return whole), rows exactly two chunks wide."""


def test_every_positive_form_is_emulated() -> None:
    assert sorted(EMULATED) == sorted(FORMS)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_rewrite_matches_the_original_lane_by_lane(name: str, tmp_path: Path) -> None:
    cand = cooperative_scan.propose(_request(FORMS[name]))[0]
    cases = []
    for rows, cols in SHAPES:
        grid = -(-rows // 64)
        cases.append(
            Case(EMULATED[name](rows, cols), (grid, 64), (32 * grid, 64), f"rows={rows} cols={cols}")
        )
    kernel = KERNEL.get(name, "cumsum_kernel")
    # a product of 100 factors rounds ~100 times: another order moves it by up to ~1e-5 relative
    rtol = 1e-4 if "cumprod" in name else 1e-5
    assert_same(tmp_path, FORMS[name], cand.source, kernel, cases, rtol=rtol, atol=1e-5)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_block_per_row_matches_the_original_block_by_block(name: str, tmp_path: Path) -> None:
    """The block version on the block-synchronous emulator (threads meet at every barrier), blocks of 64."""
    from tests.rewrite import cuda_blocks

    blocked = cooperative_scan.propose(_request(FORMS[name]))[1]
    cases = []
    for rows, cols in SHAPES:
        grid = -(-rows // 64)
        args = tuple(
            cuda_blocks.Buf(a.ctype, a.size) if isinstance(a, Buf) else a for a in EMULATED[name](rows, cols)
        )
        cases.append(
            cuda_blocks.Case(args, ((grid, 1), (64, 1)), ((grid * 64, 1), (64, 1)), f"{rows}x{cols}")
        )
    kernel = KERNEL.get(name, "cumsum_kernel")
    rtol = 1e-4 if "cumprod" in name else 1e-5
    cuda_blocks.assert_same(tmp_path, FORMS[name], blocked.source, kernel, cases, rtol=rtol, atol=1e-5)


def test_the_block_emulation_catches_a_missing_barrier(tmp_path: Path) -> None:
    from tests.rewrite import cuda_blocks

    blocked = cooperative_scan.propose(_request(CUMSUM))[1]
    wrong = blocked.source.replace(
        "__syncthreads();  // the next chunk overwrites", "// the next chunk overwrites"
    )
    assert wrong != blocked.source
    args = tuple(
        cuda_blocks.Buf(a.ctype, a.size) if isinstance(a, Buf) else a
        for a in EMULATED["cumsum-inclusive"](3, 300)
    )
    cases = [cuda_blocks.Case(args, ((1, 1), (64, 1)), ((64, 1), (64, 1)), "3x300")]
    ok, out = cuda_blocks.run(tmp_path, CUMSUM, wrong, "cumsum_kernel", cases)
    assert not ok and "differs" in out


def test_the_emulation_catches_a_carry_taken_from_the_wrong_lane(tmp_path: Path) -> None:
    cand = cooperative_scan.propose(_request(CUMSUM))[0]
    wrong = cand.source.replace("coop_incl, 31)", "coop_incl, 30)")
    assert wrong != cand.source
    from tests.rewrite.cuda_lanes import run

    cases = [Case(EMULATED["cumsum-inclusive"](3, 100), (1, 64), (32, 64), "3x100")]
    ok, out = run(tmp_path, CUMSUM, wrong, "cumsum_kernel", cases)
    assert not ok and "differs" in out


# ------------------------------------------------------------------------------------- KernelBench solution

SOLUTION = ROOT / "examples" / "unseen" / "kernelbench" / "05_masked_cumsum_solution.py"


def _solution() -> RewriteRequest:
    return RewriteRequest(
        source=SOLUTION.read_text(encoding="utf-8"),
        language="python",
        transform="cooperative-row",
        path=str(SOLUTION.relative_to(ROOT)),
    )


def _cuda_of(python: str) -> str:
    [found] = find_inline_sources(python)
    return found.cuda_text


def test_kernelbench_masked_cumsum_is_scanned_and_its_launch_rewritten(tmp_path: Path) -> None:
    rewriter = RecipesRewriter()
    assert rewriter.applies(_solution()) is None
    cand, blocked = rewriter.propose(_solution())
    assert cand.recipe == blocked.recipe == "cooperative-scan"
    assert "/ 256 * 256" in _cuda_of(blocked.source)  # the wrapper's grid: a block of 256 per former thread
    unit = _cuda_of(cand.source)
    assert "32 * (" in unit  # the wrapper's grid, written back
    original, rewritten = device_code(_cuda_of(_solution().source)), device_code(unit)
    args = EMULATED["masked-cumsum-index-local"]
    cases = [
        Case(args(9, 300), (1, 256), (32, 256), "the wrapper's block of 256"),
        Case(args(70, 33), (1, 256), (32, 256), "70 rows"),
    ]
    # running sums of 300 values in [-3, 3] reach tens: another summation order moves them by ~1e-5
    assert_same(tmp_path, original, rewritten, "masked_cumsum_kernel", cases, rtol=1e-5, atol=1e-4)
    from tests.rewrite import cuda_blocks

    block_args = tuple(cuda_blocks.Buf(a.ctype, a.size) if isinstance(a, Buf) else a for a in args(9, 300))
    block_case = cuda_blocks.Case(
        block_args, ((1, 1), (256, 1)), ((256, 1), (256, 1)), "block per row, 9x300"
    )
    blocks = tmp_path / "blocks"
    blocks.mkdir()
    block_unit = device_code(_cuda_of(blocked.source))
    cuda_blocks.assert_same(
        blocks, original, block_unit, "masked_cumsum_kernel", [block_case], rtol=1e-5, atol=1e-4
    )
    nvcc = nvcc_or_skip()
    stub = ROOT / "tests" / "data" / "kernelbench_inline" / "stub"
    path = tmp_path / "unit.cu"
    path.write_text(unit, encoding="utf-8")
    argv = [nvcc, "-arch=sm_90", "-std=c++17", "-c", "-o", "/dev/null", f"-I{stub}", str(path)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-1500:]
