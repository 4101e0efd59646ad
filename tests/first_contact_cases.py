"""The first-contact sweep's cases (issue 26): bad or unusual input for every command, with the exit
code a user should get. Shared by ``scripts/first_contact_sweep.py`` (which runs them all, before and
after, and writes ``tests/data/first_contact_sweep.md``) and ``tests/test_first_contact_sweep.py`` (which
keeps the quick ones as tests).

``{W}`` is a folder of the user's files made by ``make_workspace``; ``{R}`` the repository.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import NamedTuple


class Case(NamedTuple):
    id: str
    args: tuple[str, ...]
    expected: int
    why: str
    quick: bool = True
    """Runs in a few seconds on CPU (kept as a test); False: a worker, a build or a suite run."""
    env: tuple[tuple[str, str], ...] = ()


REPORT = "{R}/examples/reports/01_transpose_naive.ncu-rep"
REPORT2 = "{R}/examples/reports/02_transpose_bank_conflicts.ncu-rep"
KB = "{R}/examples/kernelbench"
SLOW = "{R}/examples/cuda/01_transpose_naive/slow.cu"
FIXED = "{R}/examples/cuda/01_transpose_naive/fixed.cu"
PROPOSE = ("--propose-only", "--transform", "smem-padding", "--force")


def _c(
    id: str, expected: int, why: str, *args: str, quick: bool = True, env: tuple[tuple[str, str], ...] = ()
) -> Case:
    return Case(id, tuple(args), expected, why, quick, env)


CASES: list[Case] = [
    # --- the command line itself
    _c("no-command", 2, "usage on stderr"),
    _c("version", 0, "version", "--version"),
    _c("unknown-command", 2, "argparse usage error", "bogus"),
    # --- diagnose
    _c("diagnose-no-target", 2, "no target", "diagnose"),
    _c("diagnose-missing-file", 2, "file not found", "diagnose", "{W}/missing.ncu-rep"),
    _c("diagnose-empty-report", 2, "not a report", "diagnose", "{W}/empty.ncu-rep"),
    _c("diagnose-text-file", 2, "unknown kind", "diagnose", "{W}/notes.txt"),
    _c("diagnose-plain-folder", 2, "not a run folder", "diagnose", "{W}/adir"),
    _c("diagnose-invalid-regex", 2, "bad --kernel regex", "diagnose", REPORT, "--kernel", "("),
    _c(
        "diagnose-regex-matches-nothing",
        2,
        "--kernel matches no recorded kernel",
        "diagnose",
        REPORT,
        "--kernel",
        "zzz",
        "--no-save",
    ),
    _c("diagnose-bad-format", 2, "choices", "diagnose", REPORT, "--format", "pdf"),
    _c(
        "diagnose-o-unwritable",
        2,
        "-o under /proc",
        "diagnose",
        REPORT,
        "-o",
        "/proc/nope/x.json",
        "--no-save",
    ),
    _c("diagnose-o-folder", 2, "-o is a folder", "diagnose", REPORT, "-o", "{W}/adir", "--no-save"),
    _c(
        "diagnose-o-exists",
        2,
        "-o exists without --force",
        "diagnose",
        REPORT,
        "-o",
        "{W}/exists.txt",
        "--no-save",
    ),
    _c("diagnose-launch-count-0", 2, "N >= 1", "diagnose", REPORT, "--launch-count", "0"),
    _c("diagnose-launch-skip-negative", 2, "N >= 0", "diagnose", REPORT, "--launch-skip", "-1"),
    _c("diagnose-timeout-0", 2, "positive", "diagnose", REPORT, "--timeout", "0"),
    _c("diagnose-timeout-text", 2, "a number", "diagnose", REPORT, "--timeout", "abc"),
    _c(
        "diagnose-timeout-huge",
        0,
        "a huge limit is fine",
        "diagnose",
        REPORT,
        "--timeout",
        "1e12",
        "--no-save",
    ),
    _c("diagnose-clock-control-bad", 2, "choices", "diagnose", REPORT, "--clock-control", "fast"),
    _c("diagnose-json", 0, "happy path", "diagnose", REPORT, "--no-save", "--format", "json"),
    _c(
        "diagnose-html-stdout",
        0,
        "happy path",
        "diagnose",
        REPORT,
        "--no-save",
        "--format",
        "html",
        "-o",
        "-",
    ),
    _c("diagnose-garbage-csv", 2, "not ncu CSV", "diagnose", "{W}/garbage.csv"),
    _c("diagnose-empty-csv", 2, "empty CSV", "diagnose", "{W}/empty.csv"),
    _c(
        "diagnose-static-regex-nothing",
        2,
        "no kernel matches",
        "diagnose",
        "{W}/k.cu",
        "--profiler",
        "static",
        "--kernel",
        "zzz",
        "--no-save",
        quick=False,
    ),
    _c(
        "diagnose-static-broken-cu",
        2,
        "nvcc error",
        "diagnose",
        "{W}/broken.cu",
        "--profiler",
        "static",
        "--no-save",
        quick=False,
    ),
    _c(
        "diagnose-static-no-kernel",
        2,
        "no __global__",
        "diagnose",
        "{W}/nokernel.cu",
        "--profiler",
        "static",
        "--no-save",
        quick=False,
    ),
    _c("diagnose-command-missing", 3, "no ncu/program here", "diagnose", "--", "/nonexistent/prog"),
    _c(
        "diagnose-run-dir-unwritable",
        2,
        "--run-dir under /proc",
        "diagnose",
        REPORT,
        "--run-dir",
        "/proc/nope",
    ),
    _c("diagnose-unknown-flag", 2, "argparse", "diagnose", REPORT, "--bogus"),
    _c(
        "diagnose-report-as-rocprof",
        2,
        "wrong profiler for the file",
        "diagnose",
        REPORT,
        "--profiler",
        "rocprof",
        "--no-save",
    ),
    # --- profile
    _c("profile-no-target", 2, "no target", "profile"),
    _c("profile-missing-file", 2, "file not found", "profile", "{W}/missing.ncu-rep"),
    _c("profile-regex-matches-nothing", 2, "--kernel matches nothing", "profile", REPORT, "--kernel", "zzz"),
    _c("profile-invalid-regex", 2, "bad regex", "profile", REPORT, "--kernel", "[a"),
    _c("profile-o-unwritable", 2, "-o under /proc", "profile", REPORT, "-o", "/proc/nope/x"),
    _c(
        "profile-save-report-folder",
        2,
        "--save-report is a folder",
        "profile",
        REPORT,
        "--save-report",
        "{W}/adir",
    ),
    _c("profile-json", 0, "happy path", "profile", REPORT, "--format", "json"),
    # --- report
    _c("report-no-run", 2, "no RUN", "report"),
    _c("report-missing", 2, "not found", "report", "{W}/missing"),
    _c("report-empty-folder", 2, "not a run", "report", "{W}/adir"),
    _c("report-bad-record", 2, "record.json invalid", "report", "{W}/badrun"),
    _c("report-ncu-rep", 2, "use diagnose for reports", "report", REPORT),
    _c("report-text-file", 2, "not a run", "report", "{W}/notes.txt"),
    _c("report-suite-html", 0, "suite rendered", "report", "{W}/suite_a", "--format", "html"),
    _c("report-suite-torn-tail", 0, "torn last row skipped", "report", "{W}/suite_torn"),
    _c("report-suite-empty-results", 0, "empty results.jsonl: zero entries", "report", "{W}/suite_empty"),
    _c("report-o-unwritable", 2, "-o under /proc", "report", "{W}/suite_a", "-o", "/proc/nope/x"),
    _c("report-bad-format", 2, "choices", "report", "{W}/suite_a", "--format", "pdf"),
    # --- doctor
    _c("doctor", 0, "reports", "doctor"),
    _c("doctor-json", 0, "reports", "doctor", "--format", "json"),
    _c("doctor-o-unwritable", 2, "-o under /proc", "doctor", "-o", "/proc/nope/x"),
    _c("doctor-unknown-flag", 2, "argparse", "doctor", "--bogus"),
    _c(
        "doctor-llm-unreachable",
        0,
        "says unreachable",
        "doctor",
        env=(("PERFAGENT_LLM_BASE_URL", "http://127.0.0.1:9/v1"), ("PERFAGENT_LLM_MODEL", "m")),
    ),
    _c(
        "doctor-llm-not-a-url",
        0,
        "says what is wrong",
        "doctor",
        env=(("PERFAGENT_LLM_BASE_URL", "not a url"),),
    ),
    # --- verify
    _c("verify-no-args", 2, "no reference", "verify"),
    _c("verify-missing-reference", 2, "not found", "verify", "{W}/missing.py"),
    _c(
        "verify-missing-candidate",
        2,
        "not found",
        "verify",
        f"{KB}/01_vector_add.py",
        "{W}/missing.py",
        "--device",
        "cpu",
    ),
    _c("verify-text-file", 2, "unknown kind", "verify", "{W}/notes.txt"),
    _c("verify-seeds-0", 2, "N >= 1", "verify", f"{KB}/01_vector_add.py", "--seeds", "0"),
    _c("verify-timeout-negative", 2, "positive", "verify", f"{KB}/01_vector_add.py", "--timeout", "-1"),
    _c("verify-tolerance-text", 2, "a number", "verify", f"{KB}/01_vector_add.py", "--tolerance", "abc"),
    _c("verify-format-md", 2, "choices text/json", "verify", f"{KB}/01_vector_add.py", "--format", "md"),
    _c(
        "verify-o-unwritable",
        2,
        "-o checked before the work",
        "verify",
        f"{KB}/01_vector_add.py",
        f"{KB}/01_vector_add_triton.py",
        "--device",
        "cpu",
        "-o",
        "/proc/nope/x.json",
    ),
    _c("verify-launch-spec-on-cpu", 2, "needs a GPU", "verify", SLOW, FIXED, "--device", "cpu"),
    _c(
        "verify-spec-unparsable-grid",
        2,
        "spec expression",
        "verify",
        "{W}/bad_grid/slow.cu",
        "{W}/bad_grid/fixed.cu",
        "--device",
        "cpu",
    ),
    _c(
        "verify-spec-missing-arg",
        2,
        "argument count",
        "verify",
        "{W}/bad_missing/slow.cu",
        "{W}/bad_missing/fixed.cu",
        "--device",
        "cpu",
    ),
    _c(
        "verify-spec-negative-size",
        2,
        "size below 1",
        "verify",
        "{W}/bad_neg/slow.cu",
        "{W}/bad_neg/fixed.cu",
        "--device",
        "cpu",
    ),
    _c(
        "verify-spec-8tb",
        2,
        "beyond GPU memory",
        "verify",
        "{W}/bad_huge/slow.cu",
        "{W}/bad_huge/fixed.cu",
        "--device",
        "cpu",
    ),
    _c(
        "verify-spec-broken-toml",
        2,
        "TOML syntax",
        "verify",
        "{W}/bad_toml/slow.cu",
        "{W}/bad_toml/fixed.cu",
        "--device",
        "cpu",
    ),
    _c(
        "verify-program-without-check-cmd",
        2,
        "a main() program needs --check-cmd",
        "verify",
        "{W}/prog.cu",
        "--device",
        "cpu",
    ),
    _c(
        "verify-sanitizer-on-cpu",
        2,
        "needs CUDA",
        "verify",
        f"{KB}/01_vector_add.py",
        f"{KB}/01_vector_add_triton.py",
        "--device",
        "cpu",
        "--sanitizer",
    ),
    _c(
        "verify-device-cuda-no-gpu",
        2,
        "no CUDA device",
        "verify",
        f"{KB}/01_vector_add.py",
        f"{KB}/01_vector_add_triton.py",
        "--device",
        "cuda",
        quick=False,
    ),
    _c(
        "verify-candidate-syntax-error",
        2,
        "not valid Python: bad input",
        "verify",
        f"{KB}/01_vector_add.py",
        "{W}/syntax_error.py",
        "--device",
        "cpu",
        "--seeds",
        "1",
        quick=False,
    ),
    _c(
        "verify-load-inline-without-cuda",
        3,
        "inconclusive: no CUDA torch/toolkit",
        "verify",
        f"{KB}/01_vector_add.py",
        f"{KB}/01_vector_add_cuda.py",
        "--device",
        "cpu",
        "--seeds",
        "1",
        quick=False,
    ),
    _c(
        "verify-triton-on-cpu",
        0,
        "happy path",
        "verify",
        f"{KB}/01_vector_add.py",
        f"{KB}/01_vector_add_triton.py",
        "--device",
        "cpu",
        "--seeds",
        "1",
        quick=False,
    ),
    # --- bench
    _c("bench-no-target", 2, "no target", "bench"),
    _c("bench-missing", 2, "not found", "bench", "{W}/missing.py"),
    _c("bench-launch-spec-on-cpu", 2, "needs a GPU", "bench", SLOW, "--device", "cpu"),
    _c("bench-runs-0", 2, "N >= 1", "bench", f"{KB}/01_vector_add.py", "--runs", "0"),
    _c(
        "bench-budget-negative", 2, "SECONDS >= 0", "bench", f"{KB}/01_vector_add.py", "--timing-budget", "-1"
    ),
    _c("bench-budget-nan", 2, "finite SECONDS", "bench", f"{KB}/01_vector_add.py", "--timing-budget", "nan"),
    _c(
        "bench-min-runs-2",
        2,
        "N >= 3",
        "bench",
        f"{KB}/01_vector_add.py",
        "--min-runs",
        "2",
        "--device",
        "cpu",
    ),
    _c("bench-o-unwritable", 2, "-o under /proc", "bench", f"{KB}/01_vector_add.py", "-o", "/proc/nope/x"),
    _c("bench-text-file", 2, "unknown kind", "bench", "{W}/notes.txt"),
    _c("bench-program", 2, "cannot time a program", "bench", "{W}/prog.cu", "--device", "cpu"),
    _c(
        "bench-spec-8tb",
        2,
        "beyond GPU memory",
        "bench",
        "{W}/bad_huge/slow.cu",
        "{W}/bad_huge/fixed.cu",
        "--device",
        "cpu",
    ),
    # --- optimize
    _c("optimize-no-target", 2, "no target", "optimize"),
    _c("optimize-missing", 2, "not found", "optimize", "{W}/missing.cu"),
    _c("optimize-text-file", 2, "unknown kind", "optimize", "{W}/notes.txt"),
    _c(
        "optimize-propose-unparsable-grid",
        2,
        "verify's message",
        "optimize",
        "{W}/bad_grid/slow.cu",
        *PROPOSE,
        "--out",
        "{W}/run_grid",
    ),
    _c(
        "optimize-propose-missing-arg",
        2,
        "verify's message",
        "optimize",
        "{W}/bad_missing/slow.cu",
        *PROPOSE,
        "--out",
        "{W}/run_missing",
    ),
    _c(
        "optimize-propose-negative-size",
        2,
        "verify's message",
        "optimize",
        "{W}/bad_neg/slow.cu",
        *PROPOSE,
        "--out",
        "{W}/run_neg",
    ),
    _c(
        "optimize-propose-8tb",
        2,
        "verify's message",
        "optimize",
        "{W}/bad_huge/slow.cu",
        *PROPOSE,
        "--out",
        "{W}/run_huge",
    ),
    _c("optimize-evaluate-empty-folder", 2, "not a run", "optimize", "--evaluate", "{W}/adir"),
    _c(
        "optimize-propose-and-evaluate",
        2,
        "one of the two",
        "optimize",
        "--propose-only",
        "--evaluate",
        "{W}/adir",
    ),
    _c("optimize-from-without-propose", 2, "needs --propose-only", "optimize", "--from", "{W}/adir"),
    _c("optimize-bad-backend", 2, "choices", "optimize", SLOW, "--backend", "nope"),
    _c("optimize-iterations-0", 2, "N >= 1", "optimize", SLOW, "--iterations", "0"),
    _c("optimize-out-is-file", 2, "--out is a file", "optimize", SLOW, "--out", "{W}/notes.txt"),
    _c("optimize-o-unwritable", 2, "-o under /proc", "optimize", SLOW, "-o", "/proc/nope/x"),
    _c(
        "optimize-invalid-regex",
        2,
        "bad regex",
        "optimize",
        SLOW,
        "--kernel",
        "(",
        *PROPOSE,
        "--out",
        "{W}/run_regex",
        quick=False,
    ),
    _c(
        "optimize-llm-without-endpoint",
        5,
        "no LLM endpoint",
        "optimize",
        f"{KB}/01_vector_add.py",
        "--backend",
        "llm",
        "--device",
        "cpu",
        "--out",
        "{W}/run_llm",
        quick=False,
    ),
    # --- suite
    _c("suite-no-args", 2, "argparse", "suite"),
    _c("suite-missing-manifest", 2, "not found", "suite", "{W}/missing.toml", "--out", "{W}/o1"),
    _c("suite-broken-toml", 2, "TOML syntax", "suite", "{W}/broken.toml", "--out", "{W}/o2"),
    _c("suite-empty-manifest", 2, "no entries", "suite", "{W}/empty.toml", "--out", "{W}/o3"),
    _c("suite-out-is-file", 2, "--out is a file", "suite", "{W}/suite.toml", "--out", "{W}/notes.txt"),
    _c(
        "suite-out-unwritable",
        2,
        "--out under /proc, before any work",
        "suite",
        "{W}/suite.toml",
        "--out",
        "/proc/nope/o",
    ),
    _c("suite-bad-jobs", 2, "unknown job", "suite", "{W}/suite.toml", "--jobs", "foo", "--out", "{W}/o4"),
    _c("suite-workers-0", 2, "N >= 1", "suite", "{W}/suite.toml", "--workers", "0", "--out", "{W}/o5"),
    _c("suite-cooldown-negative", 2, "≥ 0", "suite", "{W}/suite.toml", "--cooldown", "-1", "--out", "{W}/o6"),
    _c(
        "suite-out-holds-results", 2, "--resume or --force", "suite", "{W}/suite.toml", "--out", "{W}/suite_a"
    ),
    _c(
        "suite-device-cuda-no-gpu",
        2,
        "no GPU visible",
        "suite",
        "{W}/suite.toml",
        "--device",
        "cuda",
        "--out",
        "{W}/o7",
        env=(("CUDA_VISIBLE_DEVICES", ""),),
    ),
    _c(
        "suite-unknown-executor",
        2,
        "choices",
        "suite",
        "{W}/suite.toml",
        "--executor",
        "nope",
        "--out",
        "{W}/o8",
    ),
    _c(
        "suite-gpu-work-on-cpu",
        0,
        "skipped with why, not counted",
        "suite",
        "{W}/gpu_suite.toml",
        "--device",
        "cpu",
        "--jobs",
        "verify,bench",
        "--out",
        "{W}/o9",
        quick=False,
    ),
    _c(
        "suite-resume-torn-tail",
        0,
        "torn row dropped and reported",
        "suite",
        "{W}/suite.toml",
        "--device",
        "cpu",
        "--jobs",
        "diagnose",
        "--resume",
        "--out",
        "{W}/suite_torn_resume",
        quick=False,
    ),
    # --- compare
    _c("compare-no-args", 2, "argparse", "compare"),
    _c("compare-missing", 2, "not found", "compare", "{W}/missing", "{W}/missing2"),
    _c("compare-report-vs-suite", 2, "different kinds", "compare", REPORT, "{W}/suite_a"),
    _c("compare-same-report-gate", 0, "same within noise", "compare", REPORT, REPORT, "--gate"),
    _c("compare-renamed-kernels-gate", 0, "paired by position; faster", "compare", REPORT, REPORT2, "--gate"),
    _c(
        "compare-disjoint-suites-gate",
        1,
        "nothing compared fails",
        "compare",
        "{W}/suite_a",
        "{W}/suite_disjoint",
        "--gate",
    ),
    _c(
        "compare-missing-entry-gate",
        1,
        "a missing entry fails",
        "compare",
        "{W}/suite_a",
        "{W}/suite_fewer",
        "--gate",
    ),
    _c(
        "compare-cpu-timings-gate",
        0,
        "not comparable, not a regression",
        "compare",
        "{W}/suite_cpu1",
        "{W}/suite_cpu2",
        "--gate",
    ),
    _c(
        "compare-noisy-runs-gate",
        0,
        "within both runs' IQR (a field older versions do not read)",
        "compare",
        "{W}/suite_noisy1",
        "{W}/suite_noisy2",
        "--gate",
    ),
    _c("compare-max-regression-negative", 2, "≥ 0", "compare", REPORT, REPORT, "--max-regression", "-1"),
    _c("compare-o-unwritable", 2, "-o under /proc", "compare", REPORT, REPORT, "-o", "/proc/nope/x"),
    _c("compare-text-files", 2, "not runs", "compare", "{W}/notes.txt", "{W}/notes.txt"),
    _c(
        "compare-empty-suites-gate",
        1,
        "nothing compared fails",
        "compare",
        "{W}/suite_empty",
        "{W}/suite_empty",
        "--gate",
    ),
    # --- tui and mcp (start-up arguments only: both need a terminal or a client)
    _c("tui-help", 0, "help", "tui", "--help"),
    _c("tui-unknown-flag", 2, "argparse", "tui", "--bogus"),
    _c("mcp-help", 0, "help", "mcp", "--help"),
    _c("mcp-root-missing", 2, "--root must exist", "mcp", "--root", "{W}/missing"),
    _c("mcp-root-file", 2, "--root must be a folder", "mcp", "--root", "{W}/notes.txt"),
    _c("mcp-unknown-flag", 2, "argparse", "mcp", "--bogus"),
]


def _row(
    name: str,
    t: float,
    *,
    noise: float | None = 0.02,
    spread: float | None = None,
    flags: list[str] | None = None,
) -> str:
    row = {
        "name": name,
        "kind": "kernelbench",
        "target": name,
        "correct": True,
        "verdict": "pass",
        "baseline_s": t,
        "noise_threshold": noise,
        "spread": spread,
        "flags": flags or [],
        "jobs": [{"job": "bench", "ok": True, "elapsed_s": 1.0}],
    }
    # Unset fields are left out, so that an older perfagent (the sweep's "before") reads the same rows.
    return json.dumps({k: v for k, v in row.items() if v is not None})


def _suite(folder: Path, rows: list[str], tail: str = "") -> None:
    folder.mkdir(parents=True)
    (folder / "results.jsonl").write_text("".join(r + "\n" for r in rows) + tail, encoding="utf-8")


def _spec_variants(w: Path, repo: Path) -> None:
    example = repo / "examples" / "cuda" / "01_transpose_naive"
    edits = {
        "bad_grid": ('grid = ["ceil_div(width, TILE_DIM)"', 'grid = ["ceil_div(width,"'),
        "bad_missing": ('[[args]]\nname = "height"\ndtype = "int32"\nvalue = "height"\n', ""),
        "bad_neg": ("width = 8192", "width = -8192"),
        "bad_huge": ("width = 8192", "width = 1000000000000"),
        "bad_toml": ("[params]", "[params"),
    }
    for name, (old, new) in edits.items():
        shutil.copytree(example, w / name)
        spec = w / name / "transpose.launch.toml"
        text = spec.read_text(encoding="utf-8")
        assert old in text, (name, old)
        spec.write_text(text.replace(old, new, 1), encoding="utf-8")


def make_workspace(w: Path, repo: Path) -> None:
    """The user's files every case refers to as ``{W}``."""
    w.mkdir(parents=True, exist_ok=True)
    (w / "adir").mkdir()
    (w / "empty.ncu-rep").write_bytes(b"")
    (w / "notes.txt").write_text("not a kernel\n", encoding="utf-8")
    (w / "exists.txt").write_text("keep me\n", encoding="utf-8")
    (w / "garbage.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    (w / "empty.csv").write_text("", encoding="utf-8")
    (w / "k.cu").write_text("__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n", encoding="utf-8")
    (w / "broken.cu").write_text("__global__ void k(float* x) { x[threadIdx.x] = ; }\n", encoding="utf-8")
    (w / "nokernel.cu").write_text("int add(int a, int b) { return a + b; }\n", encoding="utf-8")
    (w / "prog.cu").write_text(
        "__global__ void k(float* x) { x[0] = 1; }\nint main() { return 0; }\n", encoding="utf-8"
    )
    (w / "syntax_error.py").write_text("class ModelNew(:\n", encoding="utf-8")
    (w / "badrun").mkdir()
    (w / "badrun" / "record.json").write_text('{"not": "a record"}', encoding="utf-8")
    (w / "broken.toml").write_text("[[entry]\nname = 'x'\n", encoding="utf-8")
    (w / "empty.toml").write_text("# nothing\n", encoding="utf-8")
    kb = repo / "examples" / "kernelbench"
    (w / "suite.toml").write_text(
        f'[[entry]]\nname = "vector_add"\ntarget = "{kb / "01_vector_add.py"}"\n'
        f'candidate = "{kb / "01_vector_add_triton.py"}"\n',
        encoding="utf-8",
    )
    cuda = repo / "examples" / "cuda" / "01_transpose_naive"
    (w / "gpu_suite.toml").write_text(
        f'[[entry]]\nname = "transpose"\ntarget = "{cuda / "slow.cu"}"\ncandidate = "{cuda / "fixed.cu"}"\n\n'
        f'[[entry]]\nname = "vector_add_cuda"\ntarget = "{kb / "01_vector_add.py"}"\n'
        f'candidate = "{kb / "01_vector_add_cuda.py"}"\n',
        encoding="utf-8",
    )
    _spec_variants(w, repo)
    _suite(w / "suite_a", [_row("x", 1e-3), _row("y", 2e-3)])
    _suite(w / "suite_disjoint", [_row("p", 1e-3), _row("q", 2e-3)])
    _suite(w / "suite_fewer", [_row("x", 1e-3)])
    _suite(w / "suite_torn", [_row("x", 1e-3)], tail=_row("y", 2e-3)[:40])
    _suite(w / "suite_torn_resume", [], tail=_row("vector_add", 2e-3)[:40])
    _suite(w / "suite_empty", [])
    _suite(w / "suite_cpu1", [_row("x", 1e-3, flags=["cpu-timing"])])
    _suite(w / "suite_cpu2", [_row("x", 1.39e-3, flags=["cpu-timing"])])
    _suite(w / "suite_noisy1", [_row("x", 1e-3, noise=None, spread=0.2)])
    _suite(w / "suite_noisy2", [_row("x", 1.3e-3, noise=None, spread=0.15)])


def expand(args: tuple[str, ...], w: Path, repo: Path) -> list[str]:
    return [a.replace("{W}", str(w)).replace("{R}", str(repo)) for a in args]
