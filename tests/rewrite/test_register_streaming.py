"""register-streaming: 3-D stencils written several ways (our own kernels: 7-point with an if-guard or
early exits, a linear index declared from the coordinates, a 9-point y-z box, two input arrays of two
types, a forward z difference, coefficients from memory), each candidate run against its original on
the CPU block emulator at the candidate's own launch, compiled with nvcc, and the shapes it cannot prove
refused with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest
from perfagent.rewrite.recipes import register_streaming as rec
from perfagent.workloads.expr import evaluate
from tests.rewrite import cuda_blocks
from tests.rewrite.cuda_blocks import Buf, Case
from tests.rewrite.helpers import assert_clean_cuda, assert_compiled, nvcc_compile

SEVEN_POINT = """
__global__ void heat7(const float *u, float *v, int n, float c0, float c1) {
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (z > 0 && z < n - 1 && y > 0 && y < n - 1 && x > 0 && x < n - 1) {
        v[(z * n + y) * n + x] = c0 * u[(z * n + y) * n + x]
            + c1 * (u[(z * n + y) * n + x - 1] + u[(z * n + y) * n + x + 1]
                  + u[(z * n + y - 1) * n + x] + u[(z * n + y + 1) * n + x]
                  + u[((z - 1) * n + y) * n + x] + u[((z + 1) * n + y) * n + x]);
    }
}
"""

# a box of three sizes, early exits, the linear index declared once, size_t arithmetic
EARLY_EXITS = """
extern "C" __global__ void lap(const double *__restrict__ f, double *__restrict__ g,
                               unsigned nx, unsigned ny, unsigned nz) {
    const unsigned kx = blockIdx.x * blockDim.x + threadIdx.x;
    if (kx < 1 || kx >= nx - 1) return;
    const unsigned kz = threadIdx.z + blockIdx.z * blockDim.z;
    const unsigned ky = blockDim.y * blockIdx.y + threadIdx.y;
    if (ky < 1 || ky >= ny - 1) return;
    if (kz < 1 || kz >= nz - 1) return;
    const size_t plane = (size_t)nx * ny;
    const size_t c = (size_t)kz * plane + (size_t)ky * nx + kx;
    double centre = f[c];
    g[c] = f[c - 1] + f[c + 1] + f[c - nx] + f[c + nx] + f[c - plane] + f[c + plane] - 6.0 * centre;
}
"""

# nine points of the y-z box at one x: three chains of three planes; weights read from memory
BOX_YZ = """
#define IDX(a, b, c) (((a) * N + (b)) * N + (c))
__global__ void box9(const float *in, const float *w, float *out, unsigned int N) {
    unsigned int i = blockIdx.z * blockDim.z + threadIdx.z;
    unsigned int j = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 1 && i + 1 < N && j >= 1 && j + 1 < N && k < N) {
        float s = w[0] * in[(i - 1) * N * N + (j - 1) * N + k] + w[1] * in[(i - 1) * N * N + j * N + k]
                + w[2] * in[(i - 1) * N * N + (j + 1) * N + k];
        s += w[3] * in[i * N * N + (j - 1) * N + k] + w[4] * in[i * N * N + j * N + k]
           + w[5] * in[i * N * N + (j + 1) * N + k];
        s += w[6] * in[(i + 1) * N * N + (j - 1) * N + k] + w[7] * in[(i + 1) * N * N + j * N + k]
           + w[8] * in[(i + 1) * N * N + (j + 1) * N + k];
        out[i * N * N + j * N + k] = s;
    }
}
"""

# two inputs of two types, each read on three planes; a forward difference on a third
TWO_ARRAYS = """
__global__ void mix(const float *a, const double *b, const float *h, double *o, int n) {
    int k = blockIdx.z * blockDim.z + threadIdx.z;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || j >= n) return;
    if (k < 1 || k > n - 2) return;
    int p = (k * n + j) * n + i;
    o[p] = (double)(a[p - n * n] + a[p] + a[p + n * n]) * b[p] - b[p - n * n] + 0.5 * b[p + n * n]
         + (double)(h[p + n * n] - h[p]);
}
"""

FORMS: dict[str, tuple[str, str, tuple[Buf | str, ...], dict[str, int], int]] = {
    # name: (source, kernel, args, spec params for the grid, arrays streamed)
    "seven-point-if-guard": (
        SEVEN_POINT,
        "heat7",
        (Buf("float", 19**3), Buf("float", 19**3), "19", "0.5f", "0.1f"),
        {"NX": 19, "NY": 19, "NZ": 19},
        1,
    ),
    "early-exits-linear-index": (
        EARLY_EXITS,
        "lap",
        (Buf("double", 23 * 10 * 37), Buf("double", 23 * 10 * 37), "23u", "10u", "37u"),
        {"NX": 23, "NY": 10, "NZ": 37},
        1,
    ),
    "nine-point-yz-box": (
        BOX_YZ,
        "box9",
        (Buf("float", 14**3), Buf("float", 9), Buf("float", 14**3), "14u"),
        {"NX": 14, "NY": 14, "NZ": 14},
        3,
    ),
    "two-arrays-and-a-difference": (
        TWO_ARRAYS,
        "mix",
        (Buf("float", 17**3), Buf("double", 17**3), Buf("float", 17**3), Buf("double", 17**3), "17"),
        {"NX": 17, "NY": 17, "NZ": 17},
        3,
    ),
}
BLOCK = (4, 4, 4)


def _launch() -> LaunchContext:
    return LaunchContext(
        grid=[f"ceil_div(NX, {BLOCK[0]})", f"ceil_div(NY, {BLOCK[1]})", f"ceil_div(NZ, {BLOCK[2]})"],
        block=list(BLOCK),
        params={"NX": 64, "NY": 64, "NZ": 64},
    )


def _request(source: str, kernel: str) -> RewriteRequest:
    return RewriteRequest(
        source=source, language="cuda", transform="register-tiling", kernel=kernel, launch=_launch()
    )


@pytest.mark.parametrize("name", sorted(FORMS))
def test_each_form_gets_a_register_window_and_a_2d_block(name: str) -> None:
    source, kernel, _args, _params, chains = FORMS[name]
    assert rec.applies(_request(source, kernel)) is None
    candidates = rec.propose(_request(source, kernel))
    assert len(candidates) == len(rec.GEOMETRIES)
    for cand in candidates:
        assert cand.source is not None and cand.launch is not None
        assert_clean_cuda(cand.source)
        assert (
            "zs_warm" in cand.source
            and f"zs_w{chains - 1}_" in cand.source
            and f"zs_w{chains}_" not in cand.source
        )
        assert cand.launch.block is not None and cand.launch.block[2] == 1
        assert "blockIdx.z * blockDim.z" not in cand.source and "threadIdx.z" not in cand.source


def _dims(exprs: list[object], params: dict[str, int]) -> tuple[int, ...]:
    return tuple(int(evaluate(str(e), params)) for e in exprs)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_every_geometry_computes_what_the_original_does(name: str, tmp_path: Path) -> None:
    source, kernel, args, params, _chains = FORMS[name]
    launch = _launch()
    original = (_dims(list(launch.grid), params), BLOCK)
    # the first two geometries: 32 planes (one z chunk at these sizes) and 16 (several chunks, so a
    # window starts cold again at every chunk); the others differ only in those two numbers
    for k, cand in enumerate(rec.propose(_request(source, kernel))[:2]):
        assert cand.source is not None and cand.launch is not None and cand.launch.grid is not None
        assert cand.launch.block is not None
        rewritten = (_dims(cand.launch.grid, params), _dims(cand.launch.block, params))
        case = Case(args=args, original=original, rewritten=rewritten, name=f"{name} {k}")
        # bit-identical: the same expressions over the same values
        cuda_blocks.assert_same(tmp_path / str(k), source, cand.source, kernel, [case], rtol=0.0, atol=0.0)


@pytest.fixture(autouse=True)
def _subdirs(tmp_path: Path) -> None:
    for k in range(len(rec.GEOMETRIES)):
        (tmp_path / str(k)).mkdir()


def test_every_candidate_compiles_with_nvcc(tmp_path: Path) -> None:
    sources = {
        f"{name}_{k}": cand.source or ""
        for name, (source, kernel, *_rest) in FORMS.items()
        for k, cand in enumerate(rec.propose(_request(source, kernel)))
    }
    assert_compiled(nvcc_compile(sources, tmp_path))


def test_the_emulation_catches_a_window_that_does_not_shift(tmp_path: Path) -> None:
    # the check has teeth: a window that keeps its lower plane reads a stale value two planes down
    source, kernel, args, params, _chains = FORMS["seven-point-if-guard"]
    cand = rec.propose(_request(source, kernel))[1]
    assert cand.source is not None and cand.launch is not None and cand.launch.grid is not None
    broken = cand.source.replace("zs_w0_m1 = zs_w0_p0;", "")
    case = Case(
        args=args,
        original=(_dims(list(_launch().grid), params), BLOCK),
        rewritten=(_dims(cand.launch.grid, params), (32, 8, 1)),
    )
    ok, out = cuda_blocks.run(tmp_path, source, broken, kernel, [case], rtol=0.0, atol=0.0)
    assert not ok and "differs" in out


REFUSED = {
    "shared-memory": (
        SEVEN_POINT.replace("    int z =", "    __shared__ float tile[64];\n    int z =").replace(
            "v[(z * n + y) * n + x] = c0", "tile[0] = 0.f;\n        v[(z * n + y) * n + x] = c0"
        ),
        "__shared__",
    ),
    "z-block-used-elsewhere": (
        SEVEN_POINT.replace("c0 * u[(z * n + y) * n + x]", "c0 * u[(z * n + y) * n + x] * blockIdx.z"),
        "blockIdx.z outside the global index",
    ),
    "no-z-neighbour": (
        SEVEN_POINT.replace("u[((z - 1) * n + y) * n + x] + u[((z + 1) * n + y) * n + x]", "0.0f"),
        "nothing to keep in registers",
    ),
    "z-read-only-under-a-condition": (
        SEVEN_POINT.replace(
            "u[((z - 1) * n + y) * n + x] + u[((z + 1) * n + y) * n + x]",
            "(c0 > 0.f ? u[((z - 1) * n + y) * n + x] : 0.f) + (c0 > 0.f ? u[((z + 1) * n + y) * n + x] : 0.f)",
        ).replace("c0 * u[(z * n + y) * n + x]", "c0"),
        "nothing to keep in registers",
    ),
    "input-written-in-place": (
        SEVEN_POINT.replace("const float *u, float *v", "float *u, float *v").replace(
            "v[(z * n + y) * n + x] = c0", "u[(z * n + y) * n + x] = c0"
        ),
        "nothing to keep in registers",
    ),
    "loop-in-the-work": (
        SEVEN_POINT.replace(
            "        v[(z * n + y) * n + x] = c0",
            "        for (int r = 0; r < 2; ++r) v[0] += 1.f;\n        v[(z * n + y) * n + x] = c0",
        ),
        "not straight-line code",
    ),
    "device-function-reads-the-thread-index": (
        "__device__ float wz(int n) { return (float)threadIdx.z / n; }\n"
        + SEVEN_POINT.replace("c0 * u[(z * n + y) * n + x]", "c0 * wz(n) * u[(z * n + y) * n + x]"),
        "wz reads threadIdx",
    ),
    "block-extent-as-a-literal": (
        SEVEN_POINT.replace("blockIdx.x * blockDim.x + threadIdx.x", "blockIdx.x * 4 + threadIdx.x"),
        "not blockDim.x",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_shapes_it_cannot_prove_are_refused(name: str) -> None:
    source, words = REFUSED[name]
    why = rec.applies(_request(source, "heat7"))
    assert why is not None and words in why, why


def test_a_2d_launch_is_not_marched() -> None:
    request = _request(SEVEN_POINT, "heat7").model_copy(
        update={"launch": LaunchContext(grid=["4", "4"], block=[16, 16])}
    )
    why = rec.applies(request)
    assert why is not None and "3-D" in why
