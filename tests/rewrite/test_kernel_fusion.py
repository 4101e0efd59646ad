"""kernel-fusion on programs and extension wrappers that launch two element-wise kernels back to back.

Accepted pairs are checked on the parse tree (one launch of the fused kernel, the shared argument
passed once), built with nvcc, and run on the CPU block by block (``cuda_blocks.py``'s prelude): the
original's two launches one after the other against the fused launch, every buffer compared.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from perfagent.rewrite.base import RewriteRequest
from perfagent.rewrite.recipes import kernel_fusion
from profilers.process import run_command
from tests.rewrite import cuda_blocks
from tests.rewrite.helpers import assert_clean_cuda, assert_compiled, nvcc_compile

SCALE_THEN_BIAS = """
#include <cuda_runtime.h>
__global__ void scale(const float *x, float *tmp, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    tmp[i] = s * x[i];
}
__global__ void add_bias(const float *tmp, const float *b, float *y, int n)
{
    const int i = threadIdx.x + blockDim.x * blockIdx.x;
    if (i < n) y[i] = tmp[i] + b[i % 16];
}
void forward(const float *x, float *tmp, const float *b, float *y, int n)
{
    const int threads = 256;
    scale<<<(n + threads - 1) / threads, threads>>>(x, tmp, 2.0f, n);
    add_bias<<<(n + threads - 1) / threads, threads>>>(tmp, b, y, n);
}
"""
DEQUANT_THEN_RELU_INPLACE = """
__global__ void dequant(const signed char *q, float scale, float *out, int count)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < count) out[idx] = scale * (float)q[idx];
}
__global__ void relu_(float *data, int count)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < count) data[idx] = data[idx] > 0.0f ? data[idx] : 0.0f;
}
int main()
{
    const int count = 1 << 20;
    signed char *q; float *out;
    cudaMalloc(&q, count); cudaMalloc(&out, count * sizeof(float));
    dim3 grid((count + 127) / 128), block(128);
    dequant<<<grid, block>>>(q, 0.05f, out, count);
    relu_<<<grid, block>>>(out, count);
    cudaDeviceSynchronize();
    return 0;
}
"""

ACCEPTED = {
    # name: (source, producer, consumer, fused call args as the harness passes them, buffers, n)
    "scale-then-bias": (SCALE_THEN_BIAS, "scale", "add_bias"),
    "dequant-then-relu-in-place": (DEQUANT_THEN_RELU_INPLACE, "dequant", "relu_"),
}


def _request(source: str) -> RewriteRequest:
    return RewriteRequest(
        source=textwrap.dedent(source).lstrip("\n"), language="cuda", transform="kernel-fusion"
    )


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_back_to_back_launches_become_one(name: str) -> None:
    source, producer, consumer = ACCEPTED[name]
    req = _request(source)
    assert kernel_fusion.applies(req) is None
    [cand] = kernel_fusion.propose(req)
    assert_clean_cuda(cand.source)
    fused = f"{producer}__{consumer}_fused"
    assert cand.source.count(f"{fused}<<<") == 1
    assert f"{producer}<<<" not in cand.source and f"{consumer}<<<" not in cand.source
    assert f"__global__ void {fused}(" in cand.source and cand.source.count("[&]() {") == 2


def test_fused_candidates_compile(tmp_path: Path) -> None:
    sources = {n: kernel_fusion.propose(_request(s))[0].source for n, (s, _p, _c) in ACCEPTED.items()}
    assert_compiled(nvcc_compile(sources, tmp_path))


HARNESS = """
int main() {
    const int n = 1000;
    Buffer<float> x0(n, 1u), t0(n, 2u), b0(16, 3u), y0(n, 4u);
    Buffer<float> x1(n, 1u), t1(n, 2u), b1(16, 3u), y1(n, 4u);
    launch(4u, 1u, 1u, 256u, 1u, [&] { original_::scale(x0.data(), t0.data(), 2.0f, n); });
    launch(4u, 1u, 1u, 256u, 1u, [&] { original_::add_bias(t0.data(), b0.data(), y0.data(), n); });
    launch(4u, 1u, 1u, 256u, 1u, [&] { rewritten_::scale__add_bias_fused(x1.data(), t1.data(), 2.0f, n, b1.data(), y1.data()); });
    compare("tmp", t0, t1, 0.0, 0.0);
    compare("y", y0, y1, 0.0, 0.0);
    std::printf(g_failures ? "FAILED\\n" : "OK\\n");
    return g_failures;
}
"""


def test_the_fused_kernel_computes_what_the_two_launches_do(tmp_path: Path) -> None:
    import shutil

    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ is not installed (the CPU emulation compiles the kernels as host C++)")
    [cand] = kernel_fusion.propose(_request(SCALE_THEN_BIAS))
    # the kernels only: the host wrapper's <<<...>>> is CUDA syntax (the harness launches them itself)
    original = textwrap.dedent(SCALE_THEN_BIAS).split("void forward(")[0]
    rewritten = cand.source.split("void forward(")[0]
    program = "\n".join(
        [
            cuda_blocks.PRELUDE,
            cuda_blocks.host_unit(original, "original_"),
            cuda_blocks.host_unit(rewritten, "rewritten_"),
            HARNESS,
        ]
    )
    built = cuda_blocks.build(gxx, tmp_path, program, "fused", flags=("-std=c++17", "-O1", "-w"))
    assert built.ok, built.tail()
    ran = run_command([str(tmp_path / "fused")], cwd=tmp_path, timeout_s=120)
    assert ran.ok and ran.stdout.strip().endswith("OK"), ran.stdout[-2000:]


REFUSED = {
    "different launch configurations": (
        SCALE_THEN_BIAS.replace(
            "add_bias<<<(n + threads - 1) / threads, threads>>>", "add_bias<<<(n + 127) / 128, 128>>>"
        ),
        "different launch configurations",
    ),
    "consumer reads a neighbour": (
        SCALE_THEN_BIAS.replace("y[i] = tmp[i] + b[i % 16];", "y[i] = tmp[i] + tmp[i + 1 < n ? i + 1 : i];"),
        "add_bias uses tmp other than as tmp[global index]",
    ),
    "consumer reduces in shared memory": (
        SCALE_THEN_BIAS.replace(
            "if (i < n) y[i] = tmp[i] + b[i % 16];",
            "__shared__ float s[256];\n    s[threadIdx.x] = i < n ? tmp[i] : 0.0f;\n    __syncthreads();\n    if (i < n) y[i] = s[0];",
        ),
        "(block-level cooperation)",
    ),
    "a copy between the launches": (
        SCALE_THEN_BIAS.replace(
            "    add_bias<<<", "    cudaMemcpy(y, x, n, cudaMemcpyDeviceToDevice);\n    add_bias<<<"
        ),
        "no two consecutive kernel launches",
    ),
    "nothing linked": (
        SCALE_THEN_BIAS.replace(
            "add_bias<<<(n + threads - 1) / threads, threads>>>(tmp, b, y, n);",
            "add_bias<<<(n + threads - 1) / threads, threads>>>(x, b, y, n);",
        ),
        "the consumer reads nothing the producer writes",
    ),
    "different block extents": (
        SCALE_THEN_BIAS.replace("threadIdx.x + blockDim.x * blockIdx.x", "threadIdx.x + 128 * blockIdx.x"),
        "global indices differ",
    ),
    "one kernel from a launch spec": (
        "__global__ void k(float *y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 0.0f; }",
        "no two consecutive kernel launches",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_pairs_say_why(name: str) -> None:
    source, reason = REFUSED[name]
    why = kernel_fusion.applies(_request(source))
    assert why is not None and reason in why, why
    assert kernel_fusion.propose(_request(source)) == []


def test_a_load_inline_wrapper_gets_its_two_launches_fused_in_the_python_source() -> None:
    from perfagent.rewrite.recipes_backend import RecipesRewriter

    path = Path(__file__).resolve().parents[1] / "data" / "kernel_fusion" / "scale_relu_load_inline.py"
    req = RewriteRequest(source=path.read_text(), language="python", transform="kernel-fusion")
    backend = RecipesRewriter()
    assert backend.applies(req) is None
    [cand] = backend.propose(req)
    assert "scale_kernel__relu_kernel_fused<<<grid, block>>>(" in cand.source
    assert "tmp.data_ptr<float>(), s, n, out.data_ptr<float>());" in cand.source  # tmp passed once
    compile(cand.source, "candidate.py", "exec")  # still Python, the CUDA spliced into its string
