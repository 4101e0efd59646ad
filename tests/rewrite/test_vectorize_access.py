"""vectorize-access (float -> float4) on parse trees of real kernels: precondition, rewrite, launch, build, CPU run.

Other element types (__half, bf16, int8/uint8, int, int64, double, mixed sizes): test_vectorize_types.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchArg, LaunchContext, RewriteRequest
from perfagent.rewrite.recipes import vectorize_access
from perfagent.rewrite.recipes_backend import RecipesRewriter
from perfagent.workloads.launch_spec import load_launch_spec
from tests.rewrite.cuda_cpu import Arg, Buf, emulate
from tests.rewrite.helpers import EXAMPLES, assert_clean_cuda, assert_compiled, nvcc_compile, request

CUDA = EXAMPLES / "cuda"
SAXPY = CUDA / "04_small_grid" / "slow.cu"
SAXPY_SPEC = CUDA / "04_small_grid" / "saxpy.launch.toml"
T = "vectorize-access"

GUARDED = """\
extern "C" __global__ void scale_bias(const float *__restrict__ in, float *__restrict__ out, int n, float a, float b)
{
    const int i = threadIdx.x + blockDim.x * blockIdx.x;
    if (i < n) out[i] = a * in[i] + b;
}
"""
INOUT = """\
extern "C" __global__ void scale_add(float *z, const float *x, unsigned int n, float a)
{
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int stride = blockDim.x * gridDim.x;
    for (unsigned int i = tid; n > i; i += stride) {
        z[i] = z[i] * a;
        if (z[i] > 0.0f) {
            float t = x[i];  // a local per lane
            z[i] += t;
        }
    }
}
"""
CONDITIONAL = """\
extern "C" __global__ void relu_copy(const float *x, float *out, long n)
{
    const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if ((long)i < n) {
        if (x[i] > 0.0f)
            out[i] = x[i];
    }
}
"""
ORDERED = """\
extern "C" __global__ void set_then_add(float *x, float *z, int n)
{
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { z[i] = 1.0f; x[i] = x[i] + z[i]; }
}
"""

REPEATED = """\
extern "C" __global__ void repeat_add(const float *x, float *z, int n, int reps)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        for (int k = 0; k < reps; ++k) z[i] += x[i];
}
"""


def inline(source: str, **fields: object) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform=T, **fields)  # type: ignore[arg-type]


def saxpy_context() -> LaunchContext:
    """The launch context the optimize loop builds from the real 04 launch spec."""
    spec = load_launch_spec(SAXPY_SPEC)
    return LaunchContext(
        grid=list(spec.grid),
        block=list(spec.block),
        shared_mem=spec.shared_mem,
        params=dict(spec.params),
        defines=dict(spec.defines),
        args=[LaunchArg(name=a.name, value=a.value, shape=list(a.shape or [])) for a in spec.args],
    )


def kernel_text(source: str, name: str) -> str:
    return source[source.index(name) :]


# ------------------------------------------------------------------ precondition on the examples


def test_the_grid_stride_saxpy_example_is_vectorised() -> None:
    req = request(SAXPY, T)
    assert vectorize_access.applies(req) is None
    [cand] = vectorize_access.propose(req)
    src = cand.source
    assert_clean_cuda(src)
    assert cand.recipe == T and cand.parameters == {"width": 4} and cand.launch is None
    assert "saxpy_gridstride_small_grid(const float *x, const float *y, float *z, int n, float a)\n{" in src
    assert "((unsigned long long)x | (unsigned long long)y | (unsigned long long)z) & 15ull) == 0ull" in src
    assert "const float4 x_v = reinterpret_cast<const float4 *>(x)[perfagent_q];" in src
    assert "float4 z_v;\n" in src  # written only, and by a top-level '=': no load
    for lane in "xyzw":
        assert f"{{ z_v.{lane} = a * x_v.{lane} + y_v.{lane}; }}" in src
    assert "reinterpret_cast<float4 *>(z)[perfagent_q] = z_v;" in src
    assert "const size_t perfagent_n = (n) > 0 ? (size_t)(n) : 0;" in src
    # The tail (and the misaligned path) runs the original body verbatim on the original index name.
    assert (
        "for (size_t i = perfagent_done + perfagent_tid; i < perfagent_n; i += perfagent_stride)\n"
        "        z[i] = a * x[i] + y[i];\n}" in src
    )
    assert "const size_t stride" not in src  # the old body is gone, the comments above it stay
    assert src.startswith(SAXPY.read_text()[: SAXPY.read_text().index("extern")])
    assert vectorize_access.ALIGN_NOTE in cand.notes
    assert any("about n/4 threads" in n for n in cand.notes)


@pytest.mark.parametrize(
    ("example", "reason"),
    [
        ("05_low_occupancy_smem", "scale_bias_smem_oversized uses __shared__ memory (line 12)"),
        ("08_vector_copy_near_peak", "scale_copy_float4 is already vectorised (float4 at line 12)"),
        (
            "11_strided_access",
            "'particles[i * PARTICLE_FIELDS + 0]' at line 15 is not particles[i]",
        ),
    ],
)
def test_examples_that_do_not_apply_say_why(example: str, reason: str) -> None:
    req = request(CUDA / example / "slow.cu", T)
    why = vectorize_access.applies(req)
    assert why is not None and reason in why, why
    assert vectorize_access.propose(req) == []


# ------------------------------------------------------------------ precondition on small kernels


def test_a_straight_line_guarded_kernel_becomes_grid_stride() -> None:
    assert vectorize_access.applies(inline(GUARDED)) is None
    [cand] = vectorize_access.propose(inline(GUARDED))
    assert "guarded" in cand.description
    for lane in "xyzw":
        assert f"{{ out_v.{lane} = a * in_v.{lane} + b; }}" in cand.source
    assert "        out[i] = a * in[i] + b;\n}" in cand.source
    assert "if (i < n)" not in cand.source
    assert_clean_cuda(cand.source)


def test_an_inout_array_is_loaded_stored_and_read_through_its_lane() -> None:
    [cand] = vectorize_access.propose(inline(INOUT))
    src = cand.source
    assert "    float4 z_v = reinterpret_cast<const float4 *>(z)[perfagent_q];" in src  # not const: written
    assert "const float4 x_v" in src
    assert "reinterpret_cast<float4 *>(z)[perfagent_q] = z_v;" in src
    assert "reinterpret_cast<float4 *>(x)" not in src  # a const pointer is only read
    for lane in "xyzw":
        assert f"z_v.{lane} = z_v.{lane} * a;" in src and f"float t = x_v.{lane};  // a local per lane" in src
    assert src.count("float t =") == 5  # four lanes in their own braces, and the tail
    assert "z[i] += t;" in src and "(unsigned int i" not in src  # the tail reuses the body on size_t i
    assert_clean_cuda(src)


def test_a_conditionally_written_array_is_loaded_first() -> None:
    [cand] = vectorize_access.propose(inline(CONDITIONAL))
    assert "float4 out_v = reinterpret_cast<const float4 *>(out)[perfagent_q];" in cand.source
    assert "                if (x_v.w > 0.0f)\n                    out_v.w = x_v.w;" in cand.source


def test_a_read_after_another_write_needs_distinct_buffers() -> None:
    [cand] = vectorize_access.propose(inline(ORDERED))
    assert "& 15ull) == 0ull && (const void *)z != (const void *)x) {" in cand.source
    assert any("distinct buffers for z/x" in n for n in cand.notes)
    # A read inside the written expression comes first in the scalar code too: no check needed.
    [plain] = vectorize_access.propose(inline(GUARDED.replace("__restrict__ ", "")))
    assert "const void" not in plain.source
    # Unless a loop repeats them: the second read of x follows the first write of z.
    [looped] = vectorize_access.propose(inline(REPEATED))
    assert "(const void *)z != (const void *)x" in looped.source
    for lane in "xyzw":
        assert f"{{ for (int k = 0; k < reps; ++k) z_v.{lane} += x_v.{lane}; }}" in looped.source


SAXPY_BODY = (
    "    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (size_t)n; i += stride)\n"
)


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (("z[i] = a * x[i] + y[i];", "z[i] = a * x[i] + threadIdx.x;"), "threadIdx at line 10"),
        # the index read as a value, x[i + 1], a literal bound: vectorised now (test_vectorize_broadcast.py)
        (("z[i] = a * x[i] + y[i];", "z[i] = x[i * 2];"), "'x[i * 2]' at line 10 is not x[i]"),
        (("z[i] = a * x[i] + y[i];", "{ z[i] = y[i]; y[i % 7] = 0; }"), "'y[i % 7]' at line 10 is not y[i]"),
        (
            ("z[i] = a * x[i] + y[i];", "{ float t = z[0]; z[i] = t; }"),
            "z is written as z[i] and read at another index at line 10",
        ),
        (("z[i] = a * x[i] + y[i];", "*(z + i) = y[i];"), "'z + i' at line 10 is not z[i]"),
        (("z[i] = a * x[i] + y[i];", "atomicAdd(&z[i], y[i]);"), "atomicAdd at line 10"),
        (("z[i] = a * x[i] + y[i];", "{ if (x[i] < 0) return; z[i] = y[i]; }"), "'return;' at line 10"),
        (("z[i] = a * x[i] + y[i];", "{ if (x[i] < 0) break; z[i] = y[i]; }"), "'break;' at line 10"),
        (("z[i] = a * x[i] + y[i];", "z[i] = a * x[i] + y[i] * stride;"), "'stride' at line 10"),
        (("z[i] = a * x[i] + y[i];", "g(&z[i]);"), "takes the address of z[i] at line 10"),
        (("i += stride", "i += blockDim.x"), "steps by 'i += blockDim.x'"),
        (("i < (size_t)n", "i < (size_t)n * a"), "its bound '(size_t)n * a' reads a, a float"),
        (("i < (size_t)n", "i < n % 7"), "its bound 'n % 7' uses '%'"),
        (("z[i] = a * x[i] + y[i];", "{ n = 4; z[i] = y[i]; }"), "assigns n"),
        (("int n, float a", "float n, float a"), "its bound n is a float, not an integer"),
        (
            ("z[i] = a * x[i] + y[i];", "{ a = a * 2; z[i] = a * x[i]; }"),
            "'a = a * 2' at line 10 assigns a declared outside",
        ),
        (("z[i] = a * x[i] + y[i];", "{ n--; z[i] = y[i]; }"), "'n--' at line 10 assigns n declared outside"),
        (
            ("float *z,", "Particle *z,"),
            "parameter 3 of saxpy_gridstride_small_grid ('Particle *z', line 6) points to Particle, "
            "which has no 16-byte vector form",
        ),
        (("float *z,", "volatile float *z,"), "('volatile float *z', line 6) is volatile"),
        (
            ("(size_t)blockIdx.x * blockDim.x + threadIdx.x; i", "threadIdx.x; i"),
            "does not declare its variable as",
        ),
        (
            ("    const size_t stride", "    float acc = 0;\n    const size_t stride"),
            "unexpected statement at line 8: 'float acc = 0;'",
        ),
    ],
)
def test_small_kernels_that_do_not_apply_name_the_part(edit: tuple[str, str], reason: str) -> None:
    source = SAXPY.read_text()
    assert edit[0] in source
    why = vectorize_access.applies(inline(source.replace(edit[0], edit[1], 1)))
    assert why is not None and reason in why, why


def test_break_inside_a_nested_loop_and_a_named_kernel_are_fine() -> None:
    body = "{ float s = 0; for (int k = 0; k < 3; ++k) { if (s > a) break; s += x[i]; } z[i] = s; }"
    source = SAXPY.read_text().replace("z[i] = a * x[i] + y[i];", body)
    two = source + '\nextern "C" __global__ void other(float *p) { p[0] = 1; }\n'
    assert "2 __global__ functions" in (vectorize_access.applies(inline(two)) or "")
    req = inline(two, kernel="saxpy_gridstride_small_grid")
    assert vectorize_access.applies(req) is None
    [cand] = vectorize_access.propose(req)
    assert "void other(float *p) { p[0] = 1; }" in cand.source
    assert "float4 y_v" not in cand.source  # y is no longer accessed: neither loaded nor alignment-tested
    assert_clean_cuda(cand.source)


# ------------------------------------------------------------------ launch geometry


def test_the_04_launch_spec_gives_one_float4_per_thread_then_the_current_grid() -> None:
    req = request(SAXPY, T, launch=saxpy_context())
    first, second = vectorize_access.propose(req)
    assert first.launch is not None and first.launch.grid == ["ceil_div(n, 4 * (256))"]
    assert first.launch.block is None and first.launch.shared_mem is None
    assert second.launch is None and second.source == first.source and second.id != first.id
    assert any("grid set to ceil_div(n, 4 * (256))" in n for n in first.notes)
    for cand in (first, second):
        assert vectorize_access.ALIGN_NOTE in cand.notes
    [only] = vectorize_access.propose(request(SAXPY, T, launch=saxpy_context(), max_candidates=1))
    assert only.id == first.id


def test_the_bound_is_matched_by_position_not_by_name() -> None:
    ctx = saxpy_context()
    args = [
        a if a.name != "n" else a.model_copy(update={"name": "count", "value": "N_ELEMS"}) for a in ctx.args
    ]
    two_d = ctx.model_copy(update={"args": args, "block": ["BLOCK"]})
    first, _ = vectorize_access.propose(request(SAXPY, T, launch=two_d))
    assert first.launch is not None and first.launch.grid == ["ceil_div(N_ELEMS, 4 * (BLOCK))"]
    [cand] = vectorize_access.propose(request(SAXPY, T, launch=ctx.model_copy(update={"block": [32, 8]})))
    assert cand.launch is None and any("not 1-D" in n for n in cand.notes)


def test_the_recipes_backend_returns_the_candidates() -> None:
    rw = RecipesRewriter()
    req = request(SAXPY, T, launch=saxpy_context())
    assert rw.applies(req) is None
    cands = rw.propose(req)
    assert [c.recipe for c in cands] == [T, T]
    assert cands[0].id.startswith("vectorize-access/recipes/")
    why = rw.applies(request(CUDA / "11_strided_access" / "slow.cu", T))
    assert why is not None and why.startswith("vectorize-access: particles_advance_aos")


# ------------------------------------------------------------------ build and run


def test_nvcc_compiles_the_rewrites(tmp_path: Path) -> None:
    sources = {
        "saxpy": vectorize_access.propose(request(SAXPY, T))[0].source,
        "guarded": vectorize_access.propose(inline(GUARDED))[0].source,
        "inout": vectorize_access.propose(inline(INOUT))[0].source,
        "repeated": vectorize_access.propose(inline(REPEATED))[0].source,
        "ordered": vectorize_access.propose(inline(ORDERED))[0].source,
    }
    assert_compiled(nvcc_compile(sources, tmp_path))


F = Buf("float")


@pytest.mark.parametrize(
    ("source", "name", "args", "alias"),
    [
        (SAXPY.read_text(), "saxpy_gridstride_small_grid", [F, F, F, "(int)n", "2.5f"], (0, 2)),
        (GUARDED, "scale_bias", [F, F, "(int)n", "1.5f", "-0.25f"], None),
        (INOUT, "scale_add", [F, F, "(unsigned)n", "0.75f"], (0, 1)),
        (CONDITIONAL, "relu_copy", [F, F, "(long)n"], None),
        (ORDERED, "set_then_add", [F, F, "(int)n"], (0, 1)),  # in place: the run-time check keeps it right
        (REPEATED, "repeat_add", [F, F, "(int)n", "3"], (0, 1)),
    ],
    ids=["saxpy-04", "guarded", "inout", "conditional", "ordered", "repeated"],
)
def test_cpu_emulation_matches_the_original(
    tmp_path: Path, source: str, name: str, args: list[Arg], alias: tuple[int, int] | None
) -> None:
    """Original and rewrite as host C++, every buffer compared bit for bit over sizes, grids, offsets."""
    [cand] = vectorize_access.propose(inline(source))
    emulate(tmp_path, source, cand.source, name, args, width=4, alias=alias)
