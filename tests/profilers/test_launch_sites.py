"""Launch configurations resolved from CUDA source with tree-sitter-cuda (no compiler needed)."""

from __future__ import annotations

from profilers.static.launch_sites import analyze_launches

SOURCE = r"""
#define BLOCK 128 // threads per block
#define BX 16
#define TWICE (BLOCK * 2)
#define LONG \
   (4 * 8)
constexpr int TILE = 64;
static const int T2 = 32;
const unsigned T3 = 2 * TILE;
int threads = 256;
int reassigned = 5;

__global__ void __launch_bounds__(256, 2) k1(float* a, int n) {}
__global__ void __launch_bounds__(TILE) k3(float* a) {}
template <int BS> __global__ void kt(float* a) {}

void host(int n, int dyn) {
  dim3 blk(BX, BX);
  dim3 grid(4);
  dim3 g2 = dim3(n / 256 + 1);
  reassigned = 7;
  k1<<<grid, blk, 4096, 0>>>(0, n);
  ns::k3<<<1, {32, 4, 1}>>>(0);
  k1<<<1, dim3(T2), sizeof(float) * T2>>>(0, n);
  kt<BLOCK><<<g2, BLOCK>>>(0);
  k1<<<3, threads, dyn>>>(0, n);
  k1<<<3, reassigned>>>(0, n);
  k1<<<3, TWICE + BX - LONG>>>(0, n);
  k1<<<3, n>>>(0, n);
  k1<<<3, T3>>>(0, n);
  k1<<<(1 << 10), 0x80>>>(0, n);
}
"""


def _sites() -> list[tuple[str, object, object, object]]:
    found = analyze_launches(SOURCE)
    return [(s.kernel, s.grid, s.block, s.dynamic_shared_bytes) for s in found.launches]


def test_launch_sites_resolve_constants() -> None:
    assert _sites() == [
        ("k1", (4, 1, 1), (16, 16, 1), 4096),  # dim3 variables from #define names
        ("k3", (1, 1, 1), (32, 4, 1), 0),  # namespace-qualified name, brace-initialised block
        ("k1", (1, 1, 1), (32, 1, 1), 128),  # static const + sizeof in the shared-memory argument
        ("kt", None, (128, 1, 1), 0),  # template kernel; grid depends on n
        ("k1", (3, 1, 1), (256, 1, 1), None),  # variable initialised once; dynamic smem unknown
        ("k1", (3, 1, 1), None, 0),  # reassigned variable: not a constant
        ("k1", (3, 1, 1), (240, 1, 1), 0),  # macros of macros, line continuation: 256 + 16 - 32
        ("k1", (3, 1, 1), None, 0),  # function parameter
        ("k1", (3, 1, 1), (128, 1, 1), 0),  # const computed from constexpr
        ("k1", (1024, 1, 1), (128, 1, 1), 0),  # shifts and hex literals
    ]


def test_launch_bounds_and_kernel_order() -> None:
    found = analyze_launches(SOURCE)
    assert found.launch_bounds == {"k1": 256, "k3": 64}
    assert found.kernels == ("k1", "k3", "kt")
    assert [s.line for s in found.sites_for("kt")] == [25]
    assert found.sites_for("kt")[0].block_text == "BLOCK"


def test_conflicting_definitions_are_not_guessed() -> None:
    source = """
#ifdef BIG
#define BLOCK 512
#else
#define BLOCK 256
#endif
void h() { k<<<1, BLOCK>>>(); }
"""
    (site,) = analyze_launches(source).launches
    assert site.block is None and site.block_text == "BLOCK"


def test_no_launches() -> None:
    found = analyze_launches("__global__ void k(float* a) { a[0] = 1.f; }")
    assert found.launches == () and found.kernels == ("k",)
