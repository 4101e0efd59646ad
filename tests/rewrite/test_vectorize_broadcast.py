"""vectorize-access on broadcast element-wise kernels: a flat index bounded by an expression of scalar
parameters (``rows * C``, ``(size_t)N * K``), read as a value to recover the broadcast coordinate
(``i % C``, ``i / K``), and read-only per-channel/per-row parameters gathered at it. Half, float and
uint8->bf16 data; guard and grid-stride forms; the CPU emulation (``cuda_cpu.py``: sizes around the
vector width, misaligned pointers) compares every byte with the original; nvcc builds each and its PTX
holds 128-bit accesses; strided reads and written gathers are refused with their line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchArg, LaunchContext, RewriteRequest
from perfagent.rewrite.recipes import vectorize_access
from profilers.process import run_command
from tests.rewrite.cuda_cpu import Arg, Buf, emulate
from tests.rewrite.helpers import nvcc_or_skip

T = "vectorize-access"
AFFINE_HALF_MODULO = """#include <cuda_fp16.h>
__global__ void channel_affine(const __half *act, const float *gamma, const float *beta, __half *res,
                               long long rows, long long C)
{
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < rows * C) {
        long long ch = e % C;
        res[e] = __float2half(__half2float(act[e]) * gamma[ch] + beta[ch]);
    }
}
"""
ROW_BIAS_FLOAT_GRID_STRIDE = """
__global__ void add_row_bias(float *out, const float *in, const float *bias, int n_rows, int n_cols)
{
    for (int k = threadIdx.x + blockIdx.x * blockDim.x; k < n_rows * n_cols; k += gridDim.x * blockDim.x) {
        const int r = k / n_cols;
        out[k] = in[k] + bias[r] * 0.5f;
    }
}
"""
DEQUANT_U8_BF16 = """#include <cuda_bf16.h>
__global__ void dequant_rows(const unsigned char *codes, const float *step, const int *offset,
                             __nv_bfloat16 *dst, int R, int L)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < (size_t)R * L) {
        int row = (int)(t / L);
        dst[t] = __float2bfloat16((float)((int)codes[t] - offset[row]) * step[row]);
    }
}
"""
FORMS: dict[str, tuple[str, str, int, list[Arg]]] = {
    # name: (source, kernel, width, arguments; n elements, C = 7 / L = 5 columns)
    "half_modulo_guard": (
        AFFINE_HALF_MODULO,
        "channel_affine",
        8,
        [Buf("__half"), Buf("float"), Buf("float"), Buf("__half"), "(long long)(n / 7)", "7LL"],
    ),
    "float_division_grid_stride": (
        ROW_BIAS_FLOAT_GRID_STRIDE,
        "add_row_bias",
        4,
        [Buf("float"), Buf("float"), Buf("float"), "(int)(n / 3)", "3"],
    ),
    "u8_to_bf16_division_guard": (
        DEQUANT_U8_BF16,
        "dequant_rows",
        16,
        [Buf("unsigned char"), Buf("float"), Buf("int"), Buf("__nv_bfloat16"), "(int)(n / 5)", "5"],
    ),
}


def _request(source: str, **fields: object) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform=T, **fields)  # type: ignore[arg-type]


def _one(source: str) -> str:
    [cand] = vectorize_access.propose(_request(source))
    return cand.source


def test_the_broadcast_forms_are_vectorised_with_a_lane_index() -> None:
    text = _one(AFFINE_HALF_MODULO)
    assert "const long long e = (long long)(perfagent_q * 8 + 3);" in text
    assert "const size_t perfagent_n = (rows * C) > 0 ? (size_t)(rows * C) : 0;" in text
    assert "gamma[ch] + beta[ch]" in text  # the broadcast parameters stay scalar loads
    # only the streamed arrays are vectorised (and tested for alignment)
    assert "(((unsigned long long)act | (unsigned long long)res) & 15ull) == 0ull" in text
    tail = text[text.index("for (size_t perfagent_i") :]
    assert "const long long e = (long long)perfagent_i;" in tail
    grid = _one(ROW_BIAS_FLOAT_GRID_STRIDE)
    assert "const int k = (int)(perfagent_q * 4 + 1);" in grid


def test_the_grid_follows_the_bound_expression_in_the_specs_names() -> None:
    launch = LaunchContext(
        grid=["ceil_div(R * L, 256)"],
        block=[256],
        args=[
            LaunchArg(name=name, value=value)
            for name, value in (
                ("codes", None),
                ("step", None),
                ("offset", None),
                ("dst", None),
                ("R", "R"),
                ("L", "L"),
            )
        ],
    )
    first, kept = vectorize_access.propose(_request(DEQUANT_U8_BF16, launch=launch))
    assert first.launch is not None and first.launch.grid == ["ceil_div(((R)) * (L), 16 * (256))"]
    assert kept.launch is None


@pytest.mark.parametrize("form", sorted(FORMS))
def test_cpu_emulation_matches_the_original_byte_for_byte(tmp_path: Path, form: str) -> None:
    source, kernel, width, args = FORMS[form]
    out = emulate(tmp_path, source, _one(source), kernel, args, width=width)
    assert int(out.split(" cases")[0].split()[-1]) > 0


WIDE = re.compile(r"(?:ld|st)\.global(?:\.nc)?(?:\.L1::\w+)?\.v4\.[bfsu]32\b")


def test_nvcc_builds_each_with_128_bit_accesses(tmp_path: Path) -> None:
    nvcc = nvcc_or_skip()
    for form, (source, _, _, _) in FORMS.items():
        cu, ptx = tmp_path / f"{form}.cu", tmp_path / f"{form}.ptx"
        cu.write_text(_one(source))
        done = run_command([nvcc, "-arch=sm_90", "-ptx", str(cu), "-o", str(ptx)], timeout_s=180)
        assert done.ok, done.tail()
        assert len(WIDE.findall(ptx.read_text())) >= 2, f"{form}: no 128-bit load and store in its PTX"


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (("__half2float(act[e])", "__half2float(act[e * 2])"), "'act[e * 2]' at line 8 is not act[e]"),
        (
            ("long long ch = e % C;", "long long ch = e % C; res[ch] = act[e];"),
            "'res[ch]' at line 7 is not res[e]",
        ),
        (
            ("long long ch = e % C;", "long long ch = e % C + (long long)(float)res[0];"),
            "res is written as res[e] and read at another index at line 7",
        ),
        (("e < rows * C", "e < rows % C"), "its bound 'rows % C' uses '%'"),
        (
            ("e < rows * C", "e < rows * (long long)gamma[0]"),
            "is not an integer expression of scalar parameters",
        ),
    ],
)
def test_forms_that_would_reorder_or_stride_are_refused(edit: tuple[str, str], reason: str) -> None:
    assert edit[0] in AFFINE_HALF_MODULO
    why = vectorize_access.applies(_request(AFFINE_HALF_MODULO.replace(edit[0], edit[1], 1)))
    assert why is not None and reason in why, why


ROW_PER_THREAD = """
__global__ void padded_row_sums(const float *a, const int *len, float *out, int rows, int W)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        const long base = (long)r * W;
        for (int j = 0; j < len[r]; j++)
            s += a[base + j];
        out[r] = s;
    }
}
"""


def test_a_row_per_thread_loop_is_not_taken_for_a_broadcast() -> None:
    why = vectorize_access.applies(_request(ROW_PER_THREAD))
    assert (
        why is not None
        and "a[base + j] is read at another index than r (line 9) inside a body that loops (line 8)" in why
    ), why
    valued = ROW_PER_THREAD.replace("a[base + j]", "(float)(r + j) * a[r]")
    why = vectorize_access.applies(_request(valued))
    assert why is not None and "reads its index r as a value in a body that loops (line 8)" in why, why
