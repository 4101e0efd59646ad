"""Source-level anti-cheat checks on a candidate (evaluation reference §3-4, check 8).

They read the candidate's source (never run it) and catch what a numeric comparison cannot: work
moved to another stream or thread (invisible to CUDA-event timing), monkey-patched timers or
harness functions, tensor subclasses that compute inside the checker, ``try/except`` fallbacks to
PyTorch, calls back into the reference, a kernel defined but never launched, and (as warnings)
PyTorch ops that may still do the replaced work and precision downgrades.

When the candidate lives in the problem file itself, the reference parts (``Model``,
``get_inputs``, ``get_init_inputs``) are cut out before checking.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Iterable
from pathlib import Path

from perfagent.verify.library_standin import library_stand_in_check
from perfagent.verify.models import Check
from perfagent.workloads.kernelbench import inspect_python
from perfagent.workloads.launch_spec import kernels_in_source
from perfagent.workloads.model import RunnableWorkload
from perfagent.workloads.triton_script import jit_kernels, launched_kernels

_REFERENCE_PARTS = {"Model", "get_inputs", "get_init_inputs"}

_STREAM_RE = re.compile(
    r"torch\.cuda\.Stream\b|torch\.cuda\.stream\b|torch\.cuda\.set_stream|torch\.Stream\b|ExternalStream|"
    r"cudaStreamCreate|getStreamFromPool|cudaStreamNonBlocking|setCurrentCUDAStream|cudaStreamPerThread|"
    r"cuStreamCreate|cudaStreamBeginCapture|torch\.cuda\.graphs?\b|CUDAGraph"
)
_THREAD_RE = re.compile(
    r"\bimport\s+threading\b|\bfrom\s+threading\b|\bthreading\.|concurrent\.futures|\bmultiprocessing\b|"
    r"\bimport\s+_thread\b|\bimport\s+asyncio\b|\basyncio\.|std::thread|std::async|pthread_create|\bos\.fork\b|"
    r"\bimport\s+subprocess\b|\bsubprocess\.|\bos\.system\b"
)
_HARNESS_RE = re.compile(
    r"\bgc\.get_objects\b|\bgc\.get_referrers\b|\bsys\._getframe\b|\binspect\.stack\b|\binspect\.currentframe\b|"
    r"\bsys\.argv\b|['\"]__main__['\"]|\bsys\.modules\b|\bf_back\b|\bf_locals\b|\bimport\s+perfagent|\bfrom\s+perfagent"
)
_SUBCLASS_RE = re.compile(
    r"_make_subclass|_make_wrapper_subclass|__torch_function__|__torch_dispatch__|TorchDispatchMode|TorchFunctionMode"
)
_TIMER_NAMES = {
    "elapsed_time",
    "synchronize",
    "perf_counter",
    "perf_counter_ns",
    "time",
    "time_ns",
    "monotonic",
    "monotonic_ns",
    "Event",
    "record",
    "do_bench",
    "do_bench_cudagraph",
    "process_time",
    "sleep",
}
_PATCHABLE_ROOTS = {
    "torch",
    "time",
    "triton",
    "numpy",
    "np",
    "builtins",
    "gc",
    "sys",
    "os",
    "math",
    "random",
    "F",
    "nn",
    "tl",
}
_COMPUTE_OP_RE = re.compile(
    r"\btorch\.(matmul|mm|bmm|einsum|addmm|baddbmm|conv\w*|softmax|log_softmax|layer_norm|batch_norm|"
    r"group_norm|cumsum|cumprod|sort|topk|linalg\.\w+)\s*\(|"
    r"\b(F|functional)\.(linear|conv\w*|softmax|log_softmax|layer_norm|batch_norm|group_norm|instance_norm|"
    r"scaled_dot_product_attention|max_pool\w*|avg_pool\w*|interpolate|cross_entropy|gelu|relu|silu)\s*\(|"
    r"\bnn\.(Linear|Conv\w*|LayerNorm|BatchNorm\w*|GroupNorm|MultiheadAttention|LSTM|GRU)\s*\("
)
_LOW_PRECISION_TOKENS = (
    ".half()",
    "torch.float16",
    "torch.half",
    "torch.bfloat16",
    ".bfloat16()",
    "tl.float16",
    "tl.bfloat16",
    "__float2half",
    "__half",
    "half2",
    "__nv_bfloat16",
    "allow_tf32",
    "set_float32_matmul_precision",
    "input_precision",
    "tf32",
    "autocast",
    "float8",
    "fp8",
)


def static_checks(candidate: RunnableWorkload, reference: RunnableWorkload) -> list[Check]:
    """Every static check for ``candidate`` (names start with ``static:``)."""
    if candidate.runner == "kernelbench":
        return _python_checks(candidate, reference)
    if candidate.runner == "launch-spec":
        return _cuda_file_checks(Path(candidate.path))
    return []


def _pruned_tree(tree: ast.Module, same_file: bool) -> ast.Module:
    if not same_file:
        return tree
    body = [
        n
        for n in tree.body
        if not (isinstance(n, ast.ClassDef | ast.FunctionDef) and n.name in _REFERENCE_PARTS)
    ]
    return ast.Module(body=body, type_ignores=[])


def _without_docstrings(tree: ast.Module) -> ast.Module:
    """A copy of ``tree`` without docstrings (prose must not trigger the regex checks)."""
    clone = copy.deepcopy(tree)
    for node in ast.walk(clone):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if (
                isinstance(value, ast.Constant)
                and isinstance(value.value, str)
                and "__global__" not in value.value
            ):
                node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    return clone


def _python_checks(candidate: RunnableWorkload, reference: RunnableWorkload) -> list[Check]:
    info = inspect_python(candidate.path)
    same_file = Path(candidate.path).resolve() == Path(reference.path).resolve()
    tree = _pruned_tree(info.tree, same_file)
    code = ast.unparse(_without_docstrings(tree))
    ref_text = Path(reference.path).read_text(errors="replace")
    jits = jit_kernels(tree)
    checks = _kernel_checks(tree, jits, info.backend)
    checks.append(
        _regex_check(
            "static:no-streams",
            _STREAM_RE,
            code,
            "work on a non-default stream or a CUDA graph escapes event timing",
        )
    )
    checks.append(
        _regex_check(
            "static:no-threads", _THREAD_RE, code, "work deferred to another thread or process escapes timing"
        )
    )
    checks.append(
        _regex_check(
            "static:no-harness-access",
            _HARNESS_RE,
            code,
            "the candidate inspects the harness (frames, gc, argv, modules)",
        )
    )
    checks.append(_subclass_check(tree, code))
    timer, other = _patching(tree)
    checks.append(
        Check(name="static:no-timer-patching", passed=not timer, detail="; ".join(timer) if timer else "")
    )
    checks.append(
        Check(name="static:no-monkey-patching", passed=not other, detail="; ".join(other) if other else "")
    )
    checks.append(_fallback_check(tree))
    checks.append(_reference_call_check(tree))
    checks.append(_compute_ops_check(tree, jits, code))
    checks.append(_precision_check(code, ref_text))
    checks.append(library_stand_in_check(tree, jits, ref_text))
    return checks


def _kernel_checks(tree: ast.Module, jits: list[str], backend: str) -> list[Check]:
    """``static:kernel-defined`` and (when one is) ``static:kernel-launched``: CUDA source in a
    string, else ``@triton.jit`` kernels, else a C++ extension without a kernel or plain PyTorch."""
    cuda_src = "\n".join(
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and "__global__" in n.value
    )
    if cuda_src:
        launched = "<<<" in cuda_src or "cudaLaunchKernel" in cuda_src or "cuLaunchKernel" in cuda_src
        return [
            Check(
                name="static:kernel-defined",
                passed=True,
                detail="CUDA kernel(s): " + ", ".join(kernels_in_source(cuda_src)),
            ),
            Check(
                name="static:kernel-launched",
                passed=launched,
                detail="a <<<...>>> launch is present"
                if launched
                else "the CUDA source defines __global__ functions but never launches one (<<<...>>>)",
            ),
        ]
    if jits:
        defined = Check(
            name="static:kernel-defined", passed=True, detail="Triton kernel(s): " + ", ".join(jits)
        )
        return [defined, _triton_launch_check(tree, jits)]
    if backend == "cuda":
        return [
            Check(
                name="static:kernel-defined",
                passed=False,
                detail="load_inline/cpp_extension is used but no __global__ kernel is defined (a C++ wrapper around torch ops?)",
            )
        ]
    return [
        Check(
            name="static:kernel-defined",
            passed=False,
            severity="warning",
            detail="no custom kernel (neither __global__ nor @triton.jit): a plain-PyTorch candidate",
        )
    ]


def _triton_launch_check(tree: ast.Module, jits: list[str]) -> Check:
    """Some ``@triton.jit`` kernel is launched from ``ModelNew.forward`` (or anywhere, without one)."""
    reachable = _reachable_from_forward(tree)
    if reachable is None:  # no ModelNew.forward to start from: any launch site counts
        launched_set = launched_kernels(tree, jits)
        where = "anywhere"
    else:
        launched_set = launched_kernels(ast.Module(body=reachable, type_ignores=[]), jits)
        where = "from ModelNew.forward"
    roots = [k for k in jits if k in launched_set]
    if not roots:
        return Check(
            name="static:kernel-launched",
            passed=False,
            detail=f"@triton.jit kernel(s) {', '.join(jits)} are defined but never launched {where} (kernel[grid](...)): PyTorch does the work",
        )
    return Check(name="static:kernel-launched", passed=True, detail=f"launched {where}: " + ", ".join(roots))


def _reachable_from_forward(tree: ast.Module) -> list[ast.stmt] | None:
    """Function bodies reachable from ``ModelNew.forward`` through calls of module-level
    functions, ``self.method`` calls and ``SomeClass.method`` calls (e.g. autograd.Function.apply).
    None when there is no ``ModelNew.forward``."""
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    model = classes.get("ModelNew")
    if model is None:
        return None
    methods = {n.name: n for n in model.body if isinstance(n, ast.FunctionDef)}
    if "forward" not in methods:
        return None
    seen: set[int] = set()
    stack: list[ast.FunctionDef] = [methods["forward"]]
    reached: list[ast.stmt] = []
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        reached.append(fn)
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Name) and func.id in functions:
                stack.append(functions[func.id])
            elif isinstance(func, ast.Attribute):
                owner = func.value
                if isinstance(owner, ast.Name) and owner.id == "self" and func.attr in methods:
                    stack.append(methods[func.attr])
                elif isinstance(owner, ast.Name) and owner.id in classes:
                    stack.extend(n for n in classes[owner.id].body if isinstance(n, ast.FunctionDef))
            elif isinstance(func, ast.Name) and func.id in classes:
                stack.extend(n for n in classes[func.id].body if isinstance(n, ast.FunctionDef))
    return reached


def _regex_check(name: str, pattern: re.Pattern[str], code: str, why: str) -> Check:
    hits = sorted({m.group(0).strip() for m in pattern.finditer(code)})
    if hits:
        return Check(name=name, passed=False, detail=f"found {', '.join(hits)}: {why}")
    return Check(name=name, passed=True)


def _subclass_check(tree: ast.Module, code: str) -> Check:
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                text = ast.unparse(base)
                if text in (
                    "torch.Tensor",
                    "Tensor",
                    "torch._C.TensorBase",
                    "torch.nn.Parameter",
                    "nn.Parameter",
                ):
                    found.append(f"class {node.name}({text})")
    found += sorted({m.group(0) for m in _SUBCLASS_RE.finditer(code)})
    if found:
        return Check(
            name="static:no-tensor-subclass",
            passed=False,
            detail=f"found {', '.join(found)}: a tensor subclass can compute lazily inside the checker",
        )
    return Check(name="static:no-tensor-subclass", passed=True)


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _module_aliases(tree: ast.Module) -> set[str]:
    aliases = set(_PATCHABLE_ROOTS)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            aliases.update(a.asname or a.name for a in node.names if a.name[:1].islower())
    return aliases


def _patching(tree: ast.Module) -> tuple[list[str], list[str]]:
    """(timer patches, other module-attribute patches) as 'line N: target = ...'."""
    aliases = _module_aliases(tree)
    timer: list[str] = []
    other: list[str] = []

    def note(target: ast.expr, lineno: int) -> None:
        if not isinstance(target, ast.Attribute):
            return
        root = _root_name(target)
        if root is None or root not in aliases:
            return
        text = f"line {lineno}: assigns {ast.unparse(target)}"
        (timer if target.attr in _TIMER_NAMES else other).append(text)

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                for leaf in t.elts if isinstance(t, ast.Tuple) else [t]:
                    note(leaf, node.lineno)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            note(node.target, node.lineno)
        elif isinstance(node, ast.Delete):
            for t in node.targets:
                note(t, node.lineno)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("setattr", "delattr")
        ):
            if node.args:
                root = _root_name(node.args[0])
                if root in aliases:
                    attr = (
                        node.args[1].value
                        if len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
                        else "?"
                    )
                    text = f"line {node.lineno}: {node.func.id}({ast.unparse(node.args[0])}, {attr!r}, ...)"
                    (timer if attr in _TIMER_NAMES else other).append(text)
    # Benign configuration switches are not patches of functions.
    other = [o for o in other if not re.search(r"backends\.|\.benchmark\b|\.deterministic\b|allow_tf32", o)]
    return timer, other


def _fallback_check(tree: ast.Module) -> Check:
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Try):
            only_imports = all(isinstance(s, ast.Import | ast.ImportFrom) for s in node.body)
            import_errors = all(
                h.type is not None and ast.unparse(h.type) in ("ImportError", "ModuleNotFoundError")
                for h in node.handlers
            )
            if only_imports and import_errors:
                continue
            found.append(f"line {node.lineno}")
    if found:
        return Check(
            name="static:no-fallback",
            passed=False,
            detail=f"try/except at {', '.join(found)}: an exception handler can silently fall back to PyTorch",
        )
    return Check(name="static:no-fallback", passed=True)


def _reference_call_check(tree: ast.Module) -> Check:
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            text = ast.unparse(func)
            if text in ("Model", "Model.forward") or text.endswith(".Model"):
                found.append(f"line {node.lineno}: {text}(...)")
            if (
                isinstance(func, ast.Attribute)
                and func.attr == "forward"
                and isinstance(func.value, ast.Call)
            ):
                inner = ast.unparse(func.value.func)
                if inner == "super":
                    found.append(f"line {node.lineno}: super().forward(...)")
    if found:
        return Check(
            name="static:no-reference-call", passed=False, detail="calls the reference: " + "; ".join(found)
        )
    return Check(name="static:no-reference-call", passed=True)


def _compute_ops_check(tree: ast.Module, jits: Iterable[str], code: str) -> Check:
    jit_set = set(jits)
    body = [n for n in tree.body if not (isinstance(n, ast.FunctionDef) and n.name in jit_set)]
    text = ast.unparse(ast.Module(body=body, type_ignores=[]))
    hits = sorted({m.group(0).rstrip("( ") for m in _COMPUTE_OP_RE.finditer(text)})
    matmul_op = any(
        isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult)
        for n in ast.walk(ast.Module(body=body, type_ignores=[]))
    )
    if matmul_op:
        hits.append("@ (matmul)")
    if hits:
        return Check(
            name="static:torch-compute-ops",
            passed=False,
            severity="warning",
            detail=f"PyTorch ops outside the kernels: {', '.join(hits)} (the replaced work may still run in PyTorch)",
        )
    return Check(name="static:torch-compute-ops", passed=True, severity="warning")


def _precision_check(code: str, reference_text: str) -> Check:
    new = [t for t in _LOW_PRECISION_TOKENS if t in code and t not in reference_text]
    if new:
        return Check(
            name="static:precision-downgrade",
            passed=False,
            severity="warning",
            detail=f"lower-precision types/modes not in the reference: {', '.join(new)}",
        )
    return Check(name="static:precision-downgrade", passed=True, severity="warning")


def _cuda_file_checks(path: Path) -> list[Check]:
    text = path.read_text(errors="replace")
    code = re.sub(r"//[^\n]*", " ", re.sub(r"/\*.*?\*/", " ", text, flags=re.S))
    kernels = kernels_in_source(text)
    checks = [
        Check(
            name="static:kernel-defined",
            passed=bool(kernels),
            detail=("kernels: " + ", ".join(kernels))
            if kernels
            else f"{path.name} defines no __global__ function",
        ),
        _regex_check("static:no-streams", _STREAM_RE, code, "work on another stream escapes timing"),
        _regex_check("static:no-threads", _THREAD_RE, code, "host threads escape timing"),
    ]
    return checks
