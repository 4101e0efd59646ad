"""One way to build a KernelBench model and its inputs (perfagent/workloads/kernelbench_model.py).

Profiling (run_spec) and timing used to differ: one re-seeded before constructing the model and one did
not, so a problem whose ``get_init_inputs()`` draws random numbers ran with other weights when profiled
than when timed.
"""

from __future__ import annotations

import types

import torch

from perfagent.workloads import run_spec
from perfagent.workloads.kernelbench_model import build_model


def _problem() -> types.ModuleType:
    mod = types.ModuleType("problem_with_random_init")

    class Model(torch.nn.Module):
        def __init__(self, scale: float) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(8, 4)
            self.scale = scale

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.lin(x) * self.scale

    mod.Model = Model  # type: ignore[attr-defined]
    mod.get_init_inputs = lambda: [float(torch.rand(()).item())]  # type: ignore[attr-defined]  # draws from the RNG
    mod.get_inputs = lambda: [torch.randn(3, 8)]  # type: ignore[attr-defined]
    return mod


def test_weights_do_not_depend_on_what_get_init_inputs_draws() -> None:
    problem = _problem()
    model, inputs = build_model(problem, problem, "Model", seed=7, device="cpu")
    torch.manual_seed(7)
    expected = torch.nn.Linear(8, 4)  # the weights a fresh seed gives, whatever get_init_inputs drew
    assert torch.equal(model.lin.weight, expected.weight)
    again, inputs_again = build_model(problem, problem, "Model", seed=7, device="cpu")
    assert torch.equal(again.lin.weight, model.lin.weight) and torch.equal(inputs[0], inputs_again[0])
    other, _ = build_model(problem, problem, "Model", seed=8, device="cpu")
    assert not torch.equal(other.lin.weight, model.lin.weight)


def test_steps_run_through_the_guard_with_their_names() -> None:
    problem = _problem()
    seen: list[str] = []

    def guard(label: str, step):  # type: ignore[no-untyped-def]
        seen.append(label)
        return step()

    build_model(problem, problem, "Model", seed=0, device="cpu", guard=guard)
    assert seen == ["Model(*get_init_inputs())", "Model.to(device)"]


def test_the_profiling_runner_builds_through_it(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    calls: list[tuple[str, int]] = []
    real = run_spec.build_model

    def spy(problem, impl, cls_name, *, seed, device, **kw):  # type: ignore[no-untyped-def]
        calls.append((cls_name, seed))
        return real(problem, impl, cls_name, seed=seed, device=device, **kw)

    monkeypatch.setattr(run_spec, "build_model", spy)
    path = tmp_path / "problem.py"
    path.write_text(
        "import torch\n"
        "class Model(torch.nn.Module):\n"
        "    def forward(self, x):\n        return x * 2\n"
        "def get_inputs():\n    return [torch.randn(4)]\n"
        "def get_init_inputs():\n    return []\n"
    )
    line = run_spec.run_kernelbench(path, None, 2, "cpu")
    assert calls == [("Model", run_spec.SEED)] and "2 call(s) on cpu" in line
