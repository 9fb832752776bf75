"""The pytest side of repeated live runs: repeating, observing, counting, the verdict.

``--opdecide-runs=N`` (or ``runs=N`` on the marker) turns each live test into N tests at
collection, one per run, through an indirectly parametrised ``opdecide_run`` fixture: each run is
an ordinary pytest test, so every function-scoped fixture (the ``runtime``, the
``decision_provider``, the user's own) is fresh, and pytest-xdist spreads the runs like any
tests. A run that fails is reported as ``xfail`` (it is one sample); when all runs have been
reported, the test's *verdict* is one more report under the test's own node id, which fails
when the pass rate is below ``min_pass_rate``. Reports reach the controller process under
xdist, so the counting happens there: every run's record travels on its teardown report.

The counting, the intervals and the report are plain library code (:mod:`._pass_rates`,
:mod:`._live_report`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_opdecide._files import write_atomic
from pytest_opdecide.plugin import _markers as markers
from pytest_opdecide.plugin._live_report import (
    CHARTS_HINT,
    charts_available,
    render_html,
    render_json,
)
from pytest_opdecide.plugin._settings import SettingError, Settings

# The counting and the report (and the decision code they read picks with) are imported only
# when a live test runs: the plugin loads this module in every pytest run.
RunRecord = dict[str, Any]

__all__ = ["RUN_FIXTURE", "LiveRun", "LiveRuns", "single_run"]

RUN_FIXTURE = "opdecide_run"
_RECORD_ATTRIBUTE = "opdecide_run"


@dataclass(frozen=True)
class LiveRun:
    """One run of a repeated live test.

    Attributes:
        index: The run's number, from 0.
        count: How many runs the test has.
        base_seed: The ``seed`` setting (``--opdecide-seed``, the marker's ``seed=``, the ini
            key ``opdecide_seed``) the run's :attr:`seed` counts from.
    """

    index: int
    count: int
    base_seed: int = 0

    @property
    def seed(self) -> int:
        """A seed of this run's own: the ``seed`` setting plus the run's index. Give it to the
        runtime (``extra_body={"seed": run.seed}``) so that each run samples differently and a
        rerun samples the same."""
        return self.base_seed + self.index

    @property
    def id(self) -> str:
        """The run's part of the test id: ``run3of10``."""
        return f"run{self.index + 1}of{self.count}"


@dataclass
class _Observed:
    """What one run of a live test saw, filled in while it runs."""

    run: LiveRun
    test: str
    location: tuple[str, int | None, str]
    min_pass_rate: float
    expected: dict[str, Any]
    outcome: str = "passed"
    message: str | None = None
    failure: str | None = None
    duration: float = 0.0
    decisions: list[dict[str, Any]] = field(default_factory=list)
    questions: list[dict[str, Any]] = field(default_factory=list)
    answer: str | None = None
    sampling: dict[str, dict[str, Any]] = field(default_factory=dict)

    def failed(self, outcome: str, report: pytest.TestReport) -> None:
        self.outcome, self.message = outcome, _message(report)
        self.failure = report.longreprtext or self.message

    def record(self) -> RunRecord:
        return {
            "test": self.test,
            "location": list(self.location),
            "run": self.run.index + 1,
            "runs": self.run.count,
            "outcome": self.outcome,
            "message": self.message,
            "failure": self.failure,
            "duration": self.duration,
            "min_pass_rate": self.min_pass_rate,
            "expected": self.expected,
            "decisions": self.decisions,
            "questions": self.questions,
            "answer": self.answer,
            "sampling": self.sampling,
        }


_observed_key = pytest.StashKey[_Observed]()


def _is_live(node: Any, config: pytest.Config, marker: dict[str, Any], settings: Settings) -> bool:
    """Whether a test talks to the live model: marked ``opdecide_live`` (and live tests are
    on), or a ``cassette=True`` test run live."""
    if node.get_closest_marker(markers.LIVE_MARKER) is not None:
        return bool(config.getoption("opdecide_live") or os.environ.get(markers.LIVE_ENV))
    return bool(marker.get("cassette")) and settings.live


def _resolved(node: Any, config: pytest.Config) -> tuple[dict[str, Any], Settings] | None:
    try:
        marker = markers.marker_kwargs(node)
        return marker, markers.settings_for(config, marker, {})
    except (SettingError, pytest.UsageError):
        return None  # the test fails at setup with the message (see the plugin)


def single_run(node: Any, config: pytest.Config) -> LiveRun:
    """The run of a test that is not repeated: run 0 of 1, its seed the ``seed`` setting (as
    a repeated test's runs, read from the command line, the marker and the ini file)."""
    resolved = _resolved(node, config)
    return LiveRun(0, 1, resolved[1].seed if resolved is not None else 0)


def _run_of(item: pytest.Item) -> LiveRun | None:
    """The run an item is, when ``--opdecide-runs`` repeated its test."""
    callspec = getattr(item, "callspec", None)
    run = callspec.params.get(RUN_FIXTURE) if callspec is not None else None
    return run if isinstance(run, LiveRun) else None


def _message(report: pytest.TestReport) -> str:
    """The failure's message, every line of it (an assertion's explanation too): the crash
    message, or the text of a report that has none."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return str(crash.message).strip() or report.outcome
    return str(report.longrepr or report.outcome).strip() or report.outcome


def _without_run(text: str, run: LiveRun) -> str:
    """A node id or test name without the run's part of its parameter id."""
    head, bracket, ids = text.partition("[")
    if not bracket:
        return text
    kept = [part for part in ids.removesuffix("]").split("-") if part != run.id]
    return f"{head}[{'-'.join(kept)}]" if kept else head


_NOTHING = object()


class _ObservedProvider:
    """Wraps a provider's ``decide`` for the length of one run, to see what it answered."""

    def __init__(self, provider: Any) -> None:
        self.provider = provider
        self.calls: list[tuple[dict[str, str], Any, BaseException | None]] = []
        original = provider.decide

        async def decide(request: Any, *args: Any, **kwargs: Any) -> Any:
            types = _question_types(request)
            try:
                result = await original(request, *args, **kwargs)
            except Exception as error:
                self.calls.append((types, None, error))
                raise
            self.calls.append((types, getattr(result, "answers", None), None))
            return result

        own = getattr(provider, "__dict__", {})
        self.previous = own.get("decide", _NOTHING)  # a decide the instance itself holds
        self.installed = True
        try:
            provider.decide = decide
        except (AttributeError, TypeError):  # a provider that takes no attributes
            self.installed = False

    def remove(self) -> None:
        if not self.installed:
            return
        if self.previous is _NOTHING:
            del self.provider.decide
        else:
            self.provider.decide = self.previous


def _question_types(request: Any) -> dict[str, str]:
    questions = getattr(request, "questions", None)
    if questions is None and isinstance(request, dict):
        questions = request.get("questions")
    if not isinstance(questions, dict):
        return {}
    types = {}
    for name, question in questions.items():
        kind = getattr(question, "type", None)
        if kind is None and isinstance(question, dict):
            kind = question.get("type")
        types[str(name)] = str(kind)
    return types


_OBSERVER_NAME = "opdecide-live-run-observer"


class _Observer:
    """The per-test hooks of live runs: registered only in a run with a test to observe (see
    :meth:`LiveRuns.pytest_collection_modifyitems`), so that the other runs' tests pay nothing
    for them."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        observed = item.stash.get(_observed_key, None)
        if observed is None:
            return
        expected = markers.marker_kwargs(item).get("expected")
        if expected is not None and not isinstance(expected, dict):
            pytest.fail(
                f"@pytest.mark.{markers.MARKER}(expected=...) must be a dict from question ids "
                f"to expected answers, got {type(expected).__name__}",
                pytrace=False,
            )

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        observed = item.stash.get(_observed_key, None)
        funcargs: dict[str, Any] = getattr(item, "funcargs", {})
        if observed is None:
            return (yield)
        runtime = funcargs.get("runtime")
        trace = getattr(runtime, "trace", None)
        start = len(trace) if trace is not None else 0
        provider = funcargs.get("decision_provider")
        watched = _ObservedProvider(provider) if provider is not None else None
        from pytest_opdecide.plugin._pass_rates import (
            decision_observations,
            question_observations,
            run_answer,
            sampling_of,
        )

        if runtime is not None:
            observed.sampling["runtime"] = sampling_of(runtime)
        if provider is not None:
            observed.sampling["decision_provider"] = sampling_of(provider)
        try:
            return (yield)
        finally:
            if watched is not None:
                watched.remove()
            calls = trace.calls[start:] if trace is not None else None
            observed.answer = run_answer(
                calls,
                [(answers, error) for _, answers, error in watched.calls] if watched else None,
            )
            if calls is not None:
                observed.decisions = decision_observations(calls)
            if watched is not None:
                try:
                    observed.questions = [
                        seen
                        for position, (types, answers, error) in enumerate(watched.calls, 1)
                        for seen in question_observations(
                            position, types, answers, error, observed.expected
                        )
                    ]
                except ValueError as error:
                    pytest.fail(
                        f"@pytest.mark.{markers.MARKER}(expected=...): {error}", pytrace=False
                    )

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        observed = item.stash.get(_observed_key, None)
        if observed is None:
            return report
        observed.duration += report.duration
        if report.when == "setup":
            if report.failed:
                observed.failed("error", report)
            elif report.skipped:
                observed.outcome = "skipped"
        elif report.when == "call":
            if report.failed:
                observed.failed("failed", report)
                if observed.run.count > 1:
                    # One sample of the test: the verdict on all runs decides.
                    first = (observed.message or "").splitlines()[0]
                    report.outcome = "skipped"
                    report.wasxfail = f"{observed.run.id} failed, counted in the pass rate: {first}"
            elif report.skipped:
                if hasattr(report, "wasxfail"):
                    observed.outcome, observed.message = "failed", "xfailed"
                else:
                    observed.outcome = "skipped"
        else:
            if report.failed and observed.outcome == "passed":
                observed.failed("error", report)
            setattr(report, _RECORD_ATTRIBUTE, observed.record())
        return report


class LiveRuns:
    """The plugin object of repeated live runs (registered by the opdecide plugin)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.groups: dict[str, list[RunRecord]] = {}
        self.written: list[Path] = []

    @functools.cached_property
    def _runs_requested(self) -> int:
        """``runs`` from the command line or the ini file (markers may still ask for more)."""
        try:
            return self._settings().runs
        except SettingError:
            return 1

    @property
    def _worker(self) -> bool:
        return getattr(self.config, "workerinput", None) is not None

    def _settings(self) -> Settings:
        return markers.settings_for(self.config, {}, {})

    # --- collection ---------------------------------------------------------------------------

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        # Most runs repeat nothing: decide that without resolving every test's settings.
        if self._runs_requested < 2 and not any(
            "runs" in mark.kwargs for mark in markers.marks_of(metafunc.definition)[0]
        ):
            return
        resolved = _resolved(metafunc.definition, metafunc.config)
        if resolved is None:
            return
        marker, settings = resolved
        if settings.runs < 2:
            return
        if not _is_live(metafunc.definition, metafunc.config, marker, settings):
            return
        if RUN_FIXTURE not in metafunc.fixturenames:
            metafunc.fixturenames.append(RUN_FIXTURE)
        runs = [LiveRun(index, settings.runs, settings.seed) for index in range(settings.runs)]
        metafunc.parametrize(RUN_FIXTURE, runs, indirect=True, ids=[run.id for run in runs])

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        report_wanted = self._report_path() is not None
        observing = False
        if self._runs_requested < 2 and not report_wanted:
            items = [item for item in items if _run_of(item) is not None]
        for item in items:
            run = _run_of(item)
            if run is None and not report_wanted:
                continue
            resolved = _resolved(item, item.config)
            if resolved is None:
                continue
            marker, settings = resolved
            if run is None:
                if not _is_live(item, item.config, marker, settings):
                    continue
                run = LiveRun(0, 1)
            expected = marker.get("expected") or {}
            path, line, name = item.location
            item.stash[_observed_key] = _Observed(
                run,
                _without_run(item.nodeid, run),
                (path, line, _without_run(name, run)),
                settings.min_pass_rate,
                dict(expected) if isinstance(expected, dict) else {},
            )
            observing = True
        manager = self.config.pluginmanager
        if observing and not manager.has_plugin(_OBSERVER_NAME):
            manager.register(_Observer(), _OBSERVER_NAME)

    # --- counting (in the controller under xdist) ---------------------------------------------

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = getattr(report, _RECORD_ATTRIBUTE, None)
        if record is None or self._worker or report.when != "teardown":
            return
        self.groups.setdefault(record["test"], []).append(record)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        result = yield
        if not self._worker:
            for test, records in sorted(self.groups.items()):
                if max(r["runs"] for r in records) > 1:
                    self._verdict(session, test, records)
        return result

    def _verdict(self, session: pytest.Session, test: str, records: list[RunRecord]) -> None:
        from pytest_opdecide.plugin._pass_rates import summarize, verdict_text

        summary = summarize(test, records)
        if summary["verdict"] != "failed":
            return
        path, line, name = records[0]["location"]
        verdict = pytest.TestReport(
            nodeid=test,
            location=(path, line, name),
            keywords={},
            outcome="failed",
            longrepr=verdict_text(summary),
            when="call",
            duration=sum(r["duration"] for r in records),
        )
        session.config.hook.pytest_runtest_logreport(report=verdict)

    # --- the summary and the report -----------------------------------------------------------

    def _report_path(self) -> Path | None:
        try:
            path = self._settings().report
        except SettingError:
            return None
        if not path:
            return None
        chosen = Path(path)
        if chosen.suffix in (".json", ".html"):
            chosen = chosen.with_suffix("")
        return Path(self.config.invocation_params.dir, chosen)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        base = self._report_path()
        if base is None or self._worker:
            return
        from pytest_opdecide.plugin._pass_rates import report

        data = report(self.groups)
        json_path, html_path = (
            base.with_name(base.name + ".json"),
            base.with_name(base.name + ".html"),
        )
        write_atomic(json_path, render_json(data))
        write_atomic(html_path, render_html(data))
        self.written = [json_path, html_path]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self._worker:
            return
        requested = self._settings().runs
        if self.groups:
            # Loaded here, not at the top: a run with no live runs never pays for it.
            from pytest_opdecide.plugin._pass_rates import summarize, text_lines

            terminalreporter.write_sep("-", "opdecide live runs")
            for test in sorted(self.groups):
                for line in text_lines(summarize(test, self.groups[test])):
                    terminalreporter.write_line(line)
        elif requested > 1:
            terminalreporter.write_sep("-", "opdecide live runs")
            terminalreporter.write_line(
                f"--opdecide-runs={requested} repeated no test: none ran live (run with "
                f"--opdecide-live, and mark tests @pytest.mark.{markers.MARKER}(cassette=True) "
                f"or @pytest.mark.{markers.LIVE_MARKER})"
            )
        for path in self.written:
            terminalreporter.write_line(f"opdecide: live-run report written to {path}")
        if self.written and not charts_available():
            terminalreporter.write_line(f"opdecide: the report has tables only. {CHARTS_HINT}")
