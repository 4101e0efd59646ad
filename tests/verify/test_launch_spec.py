"""Launch specs: parsing, validation, resolution, variants, and argument construction on the CPU."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from perfagent.workloads.cuda_launch import is_poison, kernel_args, make_arg_tensor, poison_
from perfagent.workloads.detect import detect_candidate, detect_reference, find_spec_for
from perfagent.workloads.launch_resolve import param_sets, resolve_launch
from perfagent.workloads.launch_spec import LaunchSpec, choose_entry, kernels_in_source, load_launch_spec
from profilers.core_errors import BadInput

REPO = Path(__file__).resolve().parents[2]
KERNEL = 'extern "C" __global__ void scale(const float *x, float *y, int n, float a) { }\n'
SPEC = """
source = "k.cu"
kernel = "scale"
grid = ["ceil_div(n, BLOCK)"]
block = ["BLOCK"]
bytes = "2 * n * 4"
flops = "n"

[params]
n = 1000
a = 2.0

[[check_params]]
n = 77

[defines]
BLOCK = 128

[[args]]
name = "x"
shape = ["n"]

[[args]]
name = "y"
shape = ["n"]
role = "output"

[[args]]
name = "n"
dtype = "int32"
value = "n"

[[args]]
name = "a"
dtype = "float32"
value = "a"

[variants."k2.cu"]
kernel = "scale_fast"
block = [256]
grid = ["ceil_div(n, 256)"]
"""


def write(tmp_path: Path, spec: str = SPEC, kernel: str = KERNEL) -> Path:
    (tmp_path / "k.cu").write_text(kernel)
    (tmp_path / "k2.cu").write_text(
        'extern "C" __global__ void scale_fast(const float *x, float *y, int n, float a) { }\n'
    )
    path = tmp_path / "scale.launch.toml"
    path.write_text(spec)
    return path


def test_resolve_reference_and_variant(tmp_path: Path) -> None:
    path = write(tmp_path)
    spec = load_launch_spec(path)
    ref = resolve_launch(spec, path)
    assert (ref.kernel, ref.grid, ref.block, ref.shared_mem) == ("scale", (8, 1, 1), (128, 1, 1), 0)
    assert ref.defines == {"BLOCK": "128"}
    assert [a.name for a in ref.args] == ["x", "y", "n", "a"]
    assert ref.args[0].role == "input" and ref.args[0].init == "normal" and ref.args[0].shape == (1000,)
    assert ref.args[1].role == "output" and ref.args[1].init is None
    assert ref.args[2].value == 1000 and ref.args[3].value == 2.0
    assert (ref.flops, ref.bytes) == (1000.0, 8000.0)
    variant = resolve_launch(spec, path, source=tmp_path / "k2.cu")
    assert (variant.kernel, variant.grid, variant.block) == ("scale_fast", (4, 1, 1), (256, 1, 1))
    small = resolve_launch(spec, path, params=param_sets(spec)[1])
    assert small.grid == (1, 1, 1) and small.args[0].shape == (77,)


def test_other_rewrite_uses_its_only_kernel(tmp_path: Path) -> None:
    path = write(tmp_path)
    other = tmp_path / "cand.cu"
    other.write_text('extern "C" __global__ void renamed(const float *x, float *y, int n, float a) {}')
    assert resolve_launch(load_launch_spec(path), path, source=other).kernel == "renamed"
    other.write_text("__global__ void a1() {}\n__global__ void a2() {}")
    with pytest.raises(BadInput, match="several kernels"):
        resolve_launch(load_launch_spec(path), path, source=other)


def test_device_attributes_in_expressions(tmp_path: Path) -> None:
    path = write(tmp_path, SPEC.replace('grid = ["ceil_div(n, BLOCK)"]', 'grid = ["8 * sm_count"]'))
    spec = load_launch_spec(path)
    assert resolve_launch(spec, path, device_attrs={"sm_count": 10}).grid == (80, 1, 1)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('role = "output"', 'role = "input"'), "nothing to compare"),
        (('name = "n"', 'name = "x"'), "duplicate argument names"),
        (
            (
                'shape = ["n"]\n\n[[args]]\nname = "y"',
                'shape = ["n"]\ninit = "zeros"\n\n[[args]]\nname = "y"',
            ),
            "degenerate",
        ),
        (('block = ["BLOCK"]', "block = [1, 2, 3, 4]"), "1 to 3 dimensions"),
        (('kernel = "scale"', 'kernel = "scale"\nunknown_key = 1'), "Extra inputs"),
        (('value = "a"', 'value = "a"\nshape = [1]'), "takes no shape"),
        (('source = "k.cu"', 'source = "missing.cu"'), "not found"),
    ],
)
def test_invalid_specs_are_bad_input(tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    old, new = edit
    assert old in SPEC
    path = write(tmp_path, SPEC.replace(old, new, 1))
    with pytest.raises(BadInput, match=message):
        load_launch_spec(path)


def test_bad_expression_is_bad_input(tmp_path: Path) -> None:
    path = write(tmp_path, SPEC.replace('grid = ["ceil_div(n, BLOCK)"]', 'grid = ["__import__(1)"]'))
    with pytest.raises(BadInput, match="only the functions"):
        resolve_launch(load_launch_spec(path), path)
    path = write(tmp_path, "not toml [")
    with pytest.raises(BadInput, match="not valid TOML"):
        load_launch_spec(path)


def test_kernels_in_source_handles_launch_bounds_and_comments() -> None:
    text = """
    // __global__ void commented_out(int) {}
    extern "C" __global__ void __launch_bounds__(256, 8)
    smooth(const float *in, float *out) {}
    template <int B> __global__ void tmpl(float* x) {}
    """
    assert kernels_in_source(text) == ["smooth", "tmpl"]


def test_choose_entry_keeps_a_template_instantiation_of_a_defined_kernel(tmp_path: Path) -> None:
    source = tmp_path / "k.cu"
    source.write_text(
        "template <typename T, int A> __global__ void shuffle(const T* x, T* y) {}\n"
        "template __global__ void shuffle<double, 1>(const double*, double*);\n"
    )
    spec = LaunchSpec.model_validate(
        {
            "source": "k.cu",
            "kernel": "shuffle<double, 1>",
            "grid": [1],
            "block": [32],
            "args": [{"name": "y", "shape": [4], "role": "output"}],
        }
    )
    assert choose_entry(spec, source, None, None) == "shuffle<double, 1>"
    other = spec.model_copy(update={"kernel": "other<double, 1>"})
    assert choose_entry(other, source, None, None) == "shuffle"  # the file's only kernel, as before


def test_argument_construction_on_cpu(tmp_path: Path) -> None:
    path = write(tmp_path)
    launch = resolve_launch(load_launch_spec(path), path)
    x_arg = launch.args[0]
    a = make_arg_tensor(x_arg, seed=1, dist=None, device="cpu")
    b = make_arg_tensor(x_arg, seed=1, dist=None, device="cpu")
    c = make_arg_tensor(x_arg, seed=2, dist=None, device="cpu")
    lap = make_arg_tensor(x_arg, seed=1, dist="exponential", device="cpu")
    assert a.dtype == torch.float32 and a.shape == (1000,)
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert bool((lap >= 0).all()) and not torch.equal(a, lap)
    y = poison_(torch.empty(1000), 1)
    assert bool(is_poison(y, 1).all())
    poison_(y, 2)
    assert bool(is_poison(y, 2).all()) and not bool(is_poison(y, 1).any())
    ints = poison_(torch.empty(5, dtype=torch.int32), 1)
    assert bool((ints == -1).all()) and bool(is_poison(ints, 1).all())
    args = kernel_args(launch, {"x": a, "y": y})
    assert args[0] == a.data_ptr() and args[1] == y.data_ptr()
    assert type(args[2]).__name__ == "int32" and int(args[2]) == 1000
    assert type(args[3]).__name__ == "float32" and float(args[3]) == 2.0


def test_init_kinds(tmp_path: Path) -> None:
    spec = SPEC.replace(
        'name = "x"\nshape = ["n"]', 'name = "x"\ndtype = "int32"\nshape = ["n"]\ninit = "arange"\nhigh = 10'
    )
    path = write(tmp_path, spec)
    arg = resolve_launch(load_launch_spec(path), path).args[0]
    t = make_arg_tensor(arg, seed=0, dist="normal", device="cpu")  # integers ignore distributions
    assert t.dtype == torch.int32 and t[:12].tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]


def test_detection_finds_the_spec_by_source_and_variant(tmp_path: Path) -> None:
    path = write(tmp_path)
    assert find_spec_for(tmp_path / "k.cu") == path.resolve()
    assert find_spec_for(tmp_path / "k2.cu") == path.resolve()
    ref = detect_reference(tmp_path / "k.cu")
    assert ref.kind == "cuda-kernel" and ref.spec_path == str(path.resolve())
    cand = detect_candidate(tmp_path / "k2.cu", ref)
    assert cand.kind == "cuda-kernel" and cand.spec_path == ref.spec_path
    via_toml = detect_reference(path)
    assert via_toml.path == str((tmp_path / "k.cu").resolve())


def test_program_and_bare_kernel_detection(tmp_path: Path) -> None:
    prog = tmp_path / "prog.cu"
    prog.write_text("__global__ void k() {}\nint main() { return 0; }\n")
    assert detect_reference(prog).kind == "cuda-program"
    bare = tmp_path / "bare.cu"
    bare.write_text("__global__ void k() {}\n")
    with pytest.raises(BadInput, match="without a launch spec"):
        detect_reference(bare)


def test_example_specs_resolve() -> None:
    specs = sorted((REPO / "examples" / "cuda").glob("*/*.launch.toml"))
    assert len(specs) >= 10
    for path in specs:
        spec = load_launch_spec(path)
        for source in ("slow.cu", "fixed.cu"):
            if source == "fixed.cu" and "fixed.cu" not in spec.variants:
                continue
            for params in param_sets(spec):
                launch = resolve_launch(spec, path, source=path.parent / source, params=params)
                assert launch.kernel in kernels_in_source((path.parent / source).read_text())
                assert all(d >= 1 for d in launch.grid + launch.block)
