"""The optimize walkthrough: finding → transform → run the loop (live log) → review candidates → accept/reject.

All work goes through ``tui.optimize_bridge``: the loop runs in a thread worker and reports through
Messages; this screen only shows them. Without the loop, a GPU or an LLM endpoint, it says so and keeps
what still works (choosing findings and transforms, the recipes backend, CPU verification).
"""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import (
    ContentSwitcher,
    Footer,
    Header,
    Label,
    OptionList,
    ProgressBar,
    RadioButton,
    RadioSet,
    Static,
)
from textual.widgets.option_list import Option
from textual.worker import Worker, get_current_worker

from perfagent.records import RunRecord
from perfagent.render.units import fmt_speedup
from profilers.core_errors import one_line
from profilers.model import Finding
from tui.candidate_view import Outcome, summary_counts
from tui.messages import (
    CapabilitiesProbed,
    OptimizeFailed,
    OptimizeFinished,
    OptimizeProgress,
)
from tui.optimize_bridge import (
    LOOP_UNAVAILABLE,
    Capabilities,
    OptimizeBridge,
    OptimizeCancelled,
    OptimizeRequest,
    OptimizeUnavailable,
    ProgressEvent,
    kernel_regex,
    progress_text,
    recipe_languages,
    source_languages,
)
from tui.viewmodels import severity_label, short_name
from tui.widgets import CandidateReview
from tui.widgets.findings import SEVERITY_STYLES

STAGES = (("choose", "1 Finding & transform"), ("run", "2 Run & review"))


def _category_text(category: str) -> str:
    # the knowledge tables (YAML, about 0.1 s) load when the walkthrough first needs them
    try:
        from knowledge.taxonomy import categories

        found = categories().get(category)
    except Exception:  # knowledge data missing in a partial install: the id alone still says enough
        found = None
    return f"{found.title}: {found.description}" if found else category


class WalkthroughScreen(Screen[None]):
    """Choose a finding and a transform, run the optimize loop, review and accept or reject candidates."""

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("r", "run", "Run loop"),
        Binding("a", "accept", "Accept"),
        Binding("x", "reject", "Reject"),
    ]

    def __init__(self, record: RunRecord, index: int, finding: int = 0) -> None:
        super().__init__()
        self.record = record
        self.index = index
        self.kernel = record.kernels[index]
        self.finding_index = min(finding, max(0, len(self.kernel.findings) - 1))
        self.capabilities: Capabilities | None = None
        self.outcome: Outcome | None = None
        self._run: Worker[None] | None = None
        self.languages = source_languages(record.target)
        """What the recipes would edit in the target: CUDA, Triton or Python (empty: not a source)."""

    # ----------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="wt-steps")
        yield Static(id="wt-capabilities")
        with ContentSwitcher(initial="choose", id="wt-stages"):
            with Horizontal(id="choose"):
                with Vertical(id="wt-left"):
                    yield Label("Finding", classes="section")
                    yield OptionList(id="wt-findings")
                    yield Static(id="wt-finding-text")
                with Vertical(id="wt-right"):
                    yield Label("Transform", classes="section")
                    yield OptionList(id="wt-transforms")
                    yield Label("Backend", classes="section")
                    with RadioSet(id="wt-backend"):
                        yield RadioButton("recipes (offline)", value=True, id="backend-recipes")
                        yield RadioButton("llm", id="backend-llm")
                    yield Static(id="wt-run-hint")
            with Vertical(id="run"):
                yield ProgressBar(id="wt-progress", show_eta=False)
                yield Static(id="wt-status")
                yield CandidateReview(with_log=True, id="wt-review")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = f"optimize {short_name(self.kernel)}"
        findings = self.query_one("#wt-findings", OptionList)
        for i, f in enumerate(self.kernel.findings):
            sev = Content.styled(f"{severity_label(f.severity):4}", SEVERITY_STYLES.get(f.severity, ""))
            findings.add_option(Option(Content.assemble(f"{i + 1} ", sev, " ", f.title), id=f"f{i}"))
        if self.kernel.findings:
            findings.highlighted = self.finding_index
        self._show_finding()
        self._show_stage("choose")
        self._show_capabilities()
        findings.focus()
        self._probe()

    # ----------------------------------------------------------------- state shown

    @property
    def finding(self) -> Finding | None:
        """The chosen finding, or None for a kernel without findings."""
        return self.kernel.findings[self.finding_index] if self.kernel.findings else None

    def _bridge(self) -> OptimizeBridge:
        bridge = getattr(self.app, "bridge", None)
        return bridge if isinstance(bridge, OptimizeBridge) else OptimizeBridge()

    def _show_stage(self, stage: str) -> None:
        self.query_one(ContentSwitcher).current = stage
        # The run stage needs the rows; the loop's own notes say what the machine lacked.
        self.query_one("#wt-capabilities").display = stage == "choose"
        parts: list[Content | str | tuple[str, str]] = [
            ("Optimize ", "bold"),
            (f"[{self.index + 1}] {short_name(self.kernel, 30)}", "bold $accent"),
            "  ",
        ]
        for i, (key, label) in enumerate(STAGES):
            if i:
                parts.append((" ▸ ", "$text-muted"))
            parts.append((label, "bold reverse $accent" if key == stage else "$text-muted"))
        self.query_one("#wt-steps", Static).update(Content.assemble(*parts))
        self.refresh_bindings()

    def _show_finding(self) -> None:
        text = self.query_one("#wt-finding-text", Static)
        transforms = self.query_one("#wt-transforms", OptionList)
        transforms.clear_options()
        f = self.finding
        if f is None:
            text.update(Content.styled("This kernel has no findings to act on.", "$text-muted"))
            return
        parts: list[Content | str | tuple[str, str]] = [
            (f.category, "$accent"),
            "\n",
            _category_text(f.category),
        ]
        if f.estimated_speedup is not None:
            parts += [
                "\n",
                (f"estimated speed-up ≈ {fmt_speedup(f.estimated_speedup)} (estimate)", "$success"),
            ]
        text.update(Content.assemble(*parts))
        offered = self._offered_transforms()
        if not offered:
            transforms.add_option(
                Option(
                    Content.styled("no transform suggested for this finding", "$text-muted"), disabled=True
                )
            )
            return
        transforms.add_options(
            [
                Option(Content.assemble(f"{i}. {t}", self._transform_note(t, f)), id=t)
                for i, t in enumerate(offered, 1)
            ]
        )
        # Pre-select what the default (recipes) backend can do on this file's language.
        transforms.highlighted = next((i for i, t in enumerate(offered) if self._has_recipe(t)), 0)

    def _has_recipe(self, transform: str) -> bool:
        """A deterministic recipe of ``transform`` edits this file's language."""
        return bool(recipe_languages(transform) & self.languages)

    def _transform_note(self, transform: str, finding: Finding) -> tuple[str, str]:
        """'(recipe)' for a catalog recipe the finding did not name; '(llm only)' when no recipe edits
        this file's language (a Triton-only recipe on a CUDA file)."""
        if self.languages and not self._has_recipe(transform):
            return (" (llm only)", "$text-muted")
        return ("", "") if transform in finding.transforms else (" (recipe)", "$text-muted")

    def _offered_transforms(self) -> list[str]:
        """The finding's transforms, then, when nothing was measured (static analysis), the catalog's
        transforms with a recipe for this file's language: the loop plans those on an unmeasured kernel
        and checks each recipe's precondition on the source itself (``perfagent.optimize.plan``, tier
        'recipe'); a recipe for another language would only be refused."""
        f = self.finding
        if f is None:
            return []
        offered = list(f.transforms)
        if self.record.mode != "counters":
            # the knowledge tables (YAML, about 0.1 s) load when the walkthrough first needs them
            try:
                from knowledge.transforms import catalog

                entries = catalog()
            except Exception:  # knowledge data missing in a partial install: the finding's own list only
                entries = {}
            offered += [t for t in entries if t not in offered and self._has_recipe(t)]
        return offered

    def _show_capabilities(self) -> None:
        caps = self.capabilities
        loop = self._bridge().unavailable_reason()
        lines: list[tuple[str, bool, str]] = [("loop", loop is None, loop or "available")]
        if caps is None:
            lines.append(("machine", True, "checking GPU and LLM endpoint …"))
        else:
            if caps.source:
                lines.append(("source", False, caps.source))
            lines.append(
                ("GPU", caps.gpu is None, caps.gpu or "available: candidates are timed and re-profiled")
            )
            lines.append(("LLM", caps.llm is None, caps.llm or "endpoint configured: llm backend available"))
        parts: list[Content | str | tuple[str, str]] = []
        for i, (what, ok, text) in enumerate(lines):
            if i:
                parts.append("\n")
            parts += [("✓ " if ok else "✗ ", "$success" if ok else "$warning"), (f"{what}: ", "bold"), text]
        self.query_one("#wt-capabilities", Static).update(Content.assemble(*parts))
        llm = self.query_one("#backend-llm", RadioButton)
        llm.disabled = caps is None or caps.llm is not None
        self._show_run_hint()

    def _run_blocker(self) -> str | None:
        """Why ``r`` cannot start a run now, or None."""
        loop = self._bridge().unavailable_reason()
        if loop is not None:
            return loop
        if self.capabilities is None:
            return "still checking this machine; try again in a moment"
        if self.capabilities.source is not None:
            return self.capabilities.source
        if not self._offered_transforms():
            return "choose a finding that suggests a transform"
        return None

    def _show_run_hint(self) -> None:
        blocker = self._run_blocker()
        hint = self.query_one("#wt-run-hint", Static)
        if blocker is None:
            hint.update(
                Content.assemble(("r", "bold $accent"), ": run the optimize loop with this transform")
            )
        elif blocker == LOOP_UNAVAILABLE:
            hint.update(
                Content.assemble(
                    ("Run: ", "bold"),
                    (LOOP_UNAVAILABLE, "$warning"),
                    ". Apply the suggested transform by hand; the finding's evidence says what should move.",
                )
            )
        else:
            hint.update(Content.assemble(("Run: ", "bold"), (blocker, "$warning")))

    def _backend(self) -> str:
        pressed = self.query_one("#wt-backend", RadioSet).pressed_button
        return "llm" if pressed is not None and pressed.id == "backend-llm" else "recipes"

    def _transform(self) -> str | None:
        transforms = self.query_one("#wt-transforms", OptionList)
        if transforms.highlighted is None or not self._offered_transforms():
            return None
        return transforms.get_option_at_index(transforms.highlighted).id

    # ----------------------------------------------------------------- events

    @on(OptionList.OptionHighlighted, "#wt-findings")
    def _finding_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.finding_index = event.option_index
        self._show_finding()
        self._show_run_hint()

    @on(OptionList.OptionSelected, "#wt-findings")
    def _finding_chosen(self) -> None:
        self.query_one("#wt-transforms", OptionList).focus()

    @on(OptionList.OptionSelected, "#wt-transforms")
    def _transform_chosen(self) -> None:
        self.action_run()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        stage = self.query_one(ContentSwitcher).current if self.is_mounted else "choose"
        if action == "run":
            return stage == "choose"
        if action in ("accept", "reject"):
            return stage == "run" and self.outcome is not None and bool(self.outcome.candidates)
        return True

    def action_back(self) -> None:
        if self.query_one(ContentSwitcher).current == "run":
            if self._run is not None and self._run.is_running:
                self._run.cancel()
                self.notify("Optimize run cancelled; it stops at its next step.", severity="warning")
            self._show_stage("choose")
            self.query_one("#wt-transforms", OptionList).focus()
            return
        self.app.pop_screen()

    # ----------------------------------------------------------------- probing

    @work(thread=True, exclusive=True, exit_on_error=False, group="probe")
    def _probe(self) -> None:
        caps = self._bridge().probe(self.record)
        if not get_current_worker().is_cancelled:
            self.post_message(CapabilitiesProbed(caps))

    def on_capabilities_probed(self, message: CapabilitiesProbed) -> None:
        self.capabilities = message.capabilities
        self._show_capabilities()

    # ----------------------------------------------------------------- running

    def action_run(self) -> None:
        blocker = self._run_blocker()
        transform = self._transform()
        if blocker is None and transform is None:
            blocker = "choose a transform first"
        if blocker is not None or transform is None or self.finding is None:
            self._show_run_hint()
            self.notify(blocker or "cannot run", title="Optimize", severity="warning")
            return
        request = OptimizeRequest(
            target=self.record.target,
            kernel_regex=kernel_regex(self.kernel.profile.base_name or self.kernel.name),
            finding=self.finding.category,
            transform=transform,
            backend=self._backend(),
        )
        self.outcome = None
        self.review.clear()
        self.query_one("#wt-progress", ProgressBar).update(total=None, progress=0)
        self.query_one("#wt-status", Static).update(
            Content.assemble(("Running ", "bold"), f"{transform} with the {request.backend} backend …")
        )
        self._log(f"optimize {short_name(self.kernel)}: {request.finding} → {transform} ({request.backend})")
        self._show_stage("run")
        self._run = self._optimize(request)

    @work(thread=True, exclusive=True, exit_on_error=False, group="optimize")
    def _optimize(self, request: OptimizeRequest) -> None:
        worker = get_current_worker()

        def progress(event: ProgressEvent) -> None:
            if worker.is_cancelled:
                raise OptimizeCancelled()
            self.post_message(OptimizeProgress(progress_text(event), event.step, event.total))

        try:
            outcome = self._bridge().run(request, progress)
        except OptimizeCancelled:
            return
        except OptimizeUnavailable as exc:
            self.post_message(OptimizeFailed(str(exc)))
        except Exception as exc:  # the loop's errors become one line in the log, as on the CLI
            self.post_message(OptimizeFailed(one_line(exc).removeprefix("perfagent: ")))
        else:
            if not worker.is_cancelled:
                self.post_message(OptimizeFinished(outcome))

    @property
    def review(self) -> CandidateReview:
        """The run stage's candidates, log, diff, checks and before/after."""
        return self.query_one(CandidateReview)

    def _log(self, line: str) -> None:
        self.review.write_log(line)

    def on_optimize_progress(self, message: OptimizeProgress) -> None:
        self._log(message.text)
        bar = self.query_one("#wt-progress", ProgressBar)
        if message.total:
            bar.update(total=message.total, progress=message.step or 0)

    def on_optimize_failed(self, message: OptimizeFailed) -> None:
        self._log(f"failed: {message.message}")
        bar = self.query_one("#wt-progress", ProgressBar)
        bar.update(total=1, progress=0)
        self.query_one("#wt-status", Static).update(
            Content.assemble(("Run failed: ", "$error bold"), message.message)
        )
        self.refresh_bindings()

    def on_optimize_finished(self, message: OptimizeFinished) -> None:
        self.outcome = message.outcome
        bar = self.query_one("#wt-progress", ProgressBar)
        bar.update(total=bar.total or 1, progress=bar.total or 1)
        candidates = message.outcome.candidates
        self._log(summary_counts(candidates))
        status: list[Content | str | tuple[str, str]] = [(summary_counts(candidates), "bold")]
        for note in message.outcome.notes:
            status += ["\n", ("note: ", "$warning"), note]
            self._log(f"note: {note}")
        if candidates:
            status += [
                "\n",
                ("a", "bold $accent"),
                ": accept (writes the file, keeps <file>.orig)  ",
                ("x", "bold $accent"),
                ": reject",
            ]
        self.query_one("#wt-status", Static).update(Content.assemble(*status))
        self.review.show(candidates)
        self.refresh_bindings()

    def action_accept(self) -> None:
        self.review.accept(self._bridge())

    def action_reject(self) -> None:
        self.review.reject()
