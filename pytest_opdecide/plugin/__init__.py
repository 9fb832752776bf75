"""The pytest plugin: the entry point ``opdecide``, its settings, guard, snapshots and live runs.

This module only declares options, markers, fixtures and hooks; what they offer is plain code
beside it in this room, or library code below it (``fake_runtimes``, the cassettes), imported
inside the fixtures that need it, so that loading the plugin costs pytest's start-up almost
nothing:

* ``_settings``: every setting and its one precedence; ``_markers`` reads a test's settings
  from the command line, its marker, the ``opdecide_config`` fixture and the ini file;
* ``_guard``: the real-call guard, decided before anything is sent;
* ``_cassette_fixtures`` and ``_real_components``: where a test's cassette lives, and the real
  runtime and provider that cassette and live tests use;
* ``_snapshots`` and ``_snapshot_usage``: menu snapshots, and which snapshot files a run leaves
  unused; ``_case_twins``: tests whose names differ only in case get files of their own;
* ``_live_runs``, ``_pass_rates`` and ``_live_report``: repeated live runs, their pass rates and
  the report;
* ``_ini_typos``: misspelt ini keys, refused with a "did you mean";
* ``_outcomes``: whether each test's body passed, for the checks made at teardown;
* ``_short_tracebacks``: the library's errors shown as the user's line and the message.
"""

from __future__ import annotations

import functools
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_opdecide import hookspecs

# Imported with the plugin, not in the fixture: the binding's context variable must be one object
# for the whole process. A pytest run inside a test (pytester's in-process runs) drops the
# modules it imported; a binding module imported again would be a second variable, unseen by
# the Agent classes that the package has already handed out.
from pytest_opdecide._nextstep._binding import bind_runtime, set_no_runtime_hint
from pytest_opdecide.plugin import _case_twins, _ini_typos, _snapshot_usage
from pytest_opdecide.plugin._guard import AllowedHosts, Scope, guard
from pytest_opdecide.plugin._live_runs import LiveRuns, single_run
from pytest_opdecide.plugin._markers import (
    LIVE_ENV,
    LIVE_MARKER,
    MARKER,
    command_line,
    marker_kwargs,
    marks_of,
    remember_sources,
    settings_for,
)
from pytest_opdecide.plugin._outcomes import call_passed, note_call
from pytest_opdecide.plugin._settings import SETTINGS, SettingError, Settings
from pytest_opdecide.plugin._short_tracebacks import message_only, ours, short_report, shorten
from pytest_opdecide.plugin._snapshots import MenuSnapshot, shown_in_file_name

if TYPE_CHECKING:
    from pytest_opdecide._nextstep._runtime import Runtime

PLUGIN_FIXTURES = frozenset({"runtime", "decision_provider", "opdecide_config"})
"""A test that uses one of these (or the ``opdecide`` marker) uses the plugin: the guard
covers all of its network traffic, not only the model calls of this project's runtimes."""

_marker_error = pytest.StashKey[str]()
_unmarked_at_start = pytest.StashKey[int]()
"""For a test without the marker as it started: how many markers of its own it had then."""
_guard_installed = pytest.StashKey[bool]()
_allowed_key = pytest.StashKey[AllowedHosts]()
_run_settings_key = pytest.StashKey[Settings]()
"""The run's settings (no marker, no fixture): those of every test without a marker."""


# --- registration ------------------------------------------------------------------------------


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("opdecide", "opdecide: test LLM decision code offline")
    for setting in SETTINGS:
        if setting.cli and setting.switch:
            group.addoption(
                setting.flag,
                action="store_const",
                const=True,
                default=None,
                dest=setting.dest,
                help=setting.help,
            )
        elif setting.cli:
            group.addoption(
                setting.flag,
                action="store",
                default=None,
                dest=setting.dest,
                metavar=setting.shown_value,
                help=setting.help,
            )
        if setting.ini:
            parser.addini(setting.ini_name, help=setting.help, type="string", default="")


def pytest_configure(config: pytest.Config) -> None:
    marker_settings = ", ".join(s.name for s in SETTINGS if s.marker)
    config.addinivalue_line(
        "markers",
        f"{MARKER}(script=[...], answers={{...}}, cassette=False, expected={{...}}, **settings): "
        "script the `runtime` / `decision_provider` fixtures, run against a cassette, give the "
        f"expected answers of live question decisions, or override settings ({marker_settings})",
    )
    config.addinivalue_line(
        "markers",
        f"{LIVE_MARKER}: needs a real model server; runs only with --opdecide-live or "
        f"the {LIVE_ENV} environment variable set",
    )
    _ini_typos.check(config, [s.ini_name for s in SETTINGS if s.ini])
    cli = {s.name: config.getoption(s.dest) for s in SETTINGS if s.cli}
    ini = {s.name: config.getini(s.ini_name) for s in SETTINGS if s.ini}
    remember_sources(config, cli, ini)
    _snapshot_usage.start(config)
    try:
        run_settings = settings_for(config, {}, {})
    except SettingError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[_run_settings_key] = run_settings
    config.stash[_allowed_key] = AllowedHosts(run_settings.allow_hosts)
    # Installed even when the run's settings turn the guard off: a marker or the
    # opdecide_config fixture may turn it back on for one test (the one precedence).
    guard.install()
    config.stash[_guard_installed] = True
    config.pluginmanager.register(LiveRuns(config), "opdecide-live-runs")


def pytest_unconfigure(config: pytest.Config) -> None:
    if config.stash.get(_guard_installed, False):
        guard.uninstall()


# --- per-test state ----------------------------------------------------------------------------


def mode_of(marker: dict[str, Any], settings: Settings) -> str:
    """``fake`` (scripted), or for cassette tests ``replay``, ``record`` or ``live``."""
    if not marker.get("cassette"):
        return "fake"
    if settings.live:
        return "live"
    return "replay" if settings.record == "none" else "record"


def uses_plugin(item: pytest.Item, marked: bool | None = None) -> bool:
    """Whether the test uses the plugin: the ``opdecide`` marker (``marked``, if known), or
    one of :data:`PLUGIN_FIXTURES` (a cassette comes with the marker)."""
    if marked if marked is not None else item.get_closest_marker(MARKER) is not None:
        return True
    return not PLUGIN_FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))


def guard_scope(
    item: pytest.Item,
    marker: dict[str, Any],
    settings: Settings,
    marks: tuple[bool, bool] | None = None,
) -> Scope:
    """What the guard refuses during ``item`` (see ``pytest_opdecide.plugin._guard``).

    Off when the ``guard`` setting is off, for tests that record a cassette or run against the
    live model, and for ``opdecide_live`` tests (they run only when asked to reach the live
    server). Otherwise everything outside the loopback for tests that use the plugin (and for
    every test with ``guard_all``), and only this project's own model calls for the others.

    ``marks``: whether the test has the ``opdecide`` and the ``opdecide_live`` marker, if known.
    """
    if not settings.guard or mode_of(marker, settings) in ("record", "live"):
        return "off"
    marked, live = marks if marks is not None else (None, None)
    if live if live is not None else item.get_closest_marker(LIVE_MARKER) is not None:
        return "off"
    return "all" if settings.guard_all or uses_plugin(item, marked) else "model_calls"


def _bring_in_marker_fixtures(item: pytest.Item, marker: dict[str, Any]) -> None:
    """Give a marked test the fixture its marker's data needs (:func:`needed_fixtures`) when
    it does not request it: set up after the test's fixtures of a wider scope, before those of
    its own (a fixture of the test that calls an Agent method finds the scripted runtime bound).

    Done as the test starts, for that test alone: the markers are all there by then (those a
    ``pytest_collection_modifyitems`` hook adds too), and the tests without the marker (most
    of a suite) carry no fixture of the plugin's, where an autouse fixture would cost every
    test of the run its share of pytest's fixture work. The list is replaced, not changed: the
    parametrized tests of a function share it."""
    names = getattr(item, "fixturenames", None)
    if names is None:  # not a test function (a doctest, another plugin's item)
        return
    needed = needed_fixtures(marker, names)
    if needed:
        at = _first_function_scoped(item, names)
        item.fixturenames = [*names[:at], *needed, *names[at:]]  # type: ignore[attr-defined]


def _first_function_scoped(item: pytest.Item, names: list[str]) -> int:
    """Where the test's function-scoped fixtures begin in ``names`` (pytest orders a test's
    fixtures from the widest scope down); 0 when the fixture definitions cannot be read."""
    manager = item.config.pluginmanager.get_plugin("funcmanage")
    lookup = getattr(manager, "getfixturedefs", None)
    if lookup is None:
        return 0
    for index, name in enumerate(names):
        try:
            definitions = lookup(name, item)
        except (TypeError, AttributeError, ValueError):  # a pytest whose lookup differs
            return 0
        if not definitions or getattr(definitions[-1], "scope", "function") == "function":
            return index
    return len(names)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    guard.refresh()
    config = item.config
    scope: Scope
    try:
        ours, live = marks_of(item)
        if ours:
            marker = marker_kwargs(item, ours)
            settings = settings_for(config, marker, {})
            if mode_of(marker, settings) in ("replay", "record"):
                _load_cassette_layer()
            _bring_in_marker_fixtures(item, marker)
        else:  # most tests: the run's own settings, resolved once at configure
            item.stash[_unmarked_at_start] = len(item.own_markers)
            marker, settings = {}, config.stash[_run_settings_key]
        scope = guard_scope(item, marker, settings, (bool(ours), live))
    except (SettingError, pytest.UsageError) as exc:
        item.stash[_marker_error] = str(exc)  # pytest_runtest_setup fails the test with it
        scope = "all"
    # Restored afterwards: a test may run a whole pytest session in-process (pytester).
    previous = guard.scope, guard.test_id, guard.allowed
    guard.scope, guard.test_id = scope, item.nodeid
    guard.allowed = config.stash[_allowed_key]
    hint = set_no_runtime_hint(functools.partial(_no_runtime_in_test, item))
    try:
        return (yield)
    finally:
        set_no_runtime_hint(hint)
        guard.scope, guard.test_id, guard.allowed = previous


def _load_cassette_layer() -> None:
    """Load the cassette layer before the test's fixtures run: vcrpy and the direct transport
    keep httpx's and httpcore's own sending methods as they load, before a fixture of another
    HTTP mock (``httpx_mock``, ``respx_mock``) replaces them."""
    from pytest_opdecide.plugin._real_components import real_runtime

    del real_runtime  # loaded is all it takes


def _no_runtime_in_test(item: pytest.Item) -> str:
    """What a model call with no runtime is told in the test ``item``: the fixture and the
    marker that give it one."""
    name = getattr(item, "originalname", None) or item.name
    return (
        f"no runtime available in {item.nodeid}: the code under test made a model call, and "
        "the test gives it no runtime.\n"
        f"  - ask for the `runtime` fixture: def {name}(runtime): ...\n"
        '  - or script the model: @pytest.mark.opdecide(script=[pick("...")]) (it brings the '
        "`runtime` fixture along)\n"
        "  - or pass runtime= explicitly."
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    error = item.stash.get(_marker_error, None)
    if error is not None:  # also for tests that request none of the plugin's fixtures
        pytest.fail(error, pytrace=False)


def _refuse_late_marker(item: pytest.Item, report: pytest.TestReport) -> None:
    """Fail the setup of a test that got the ``opdecide`` marker while it was being set up,
    after :func:`pytest_runtest_protocol` read its markers (and brought in no fixture for
    them): its data would be ignored. (Checked on the setup's report: one hook less for every
    test.)"""
    start = item.stash.get(_unmarked_at_start, None)
    if (
        start is not None
        and len(item.own_markers) != start
        and item.get_closest_marker(MARKER) is not None
    ):
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} got its @pytest.mark.{MARKER} marker while it was being set up "
            "(from a setup hook or a fixture), after the plugin read the test's markers: its "
            "script, answers or cassette would be ignored. Add the marker at collection "
            "instead (in the test file, or from pytest_collection_modifyitems)."
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    # Before the report is made (it renders the traceback): the library's errors show the
    # user's line and the message, not the library's frames (see _short_tracebacks).
    excinfo = call.excinfo
    short = excinfo is not None and not item.config.getoption("fulltrace") and ours(excinfo)
    shortened = short and call.when == "call" and shorten(excinfo, item.path)  # type: ignore[arg-type]
    report = yield
    if shortened and item.config.getoption("tbstyle") == "auto":
        report.longrepr = short_report(excinfo)  # type: ignore[arg-type,assignment]
    elif short and call.when != "call" and report.failed:
        report.longrepr = message_only(excinfo)  # type: ignore[arg-type]
    if report.when == "call":
        note_call(item, report)
        if report.passed:
            _snapshot_usage.note_passed(item)
    elif report.when == "setup" and report.passed:
        _refuse_late_marker(item, report)
    return report


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    import os

    if config.getoption("opdecide_live") or os.environ.get(LIVE_ENV):
        return
    skip = pytest.mark.skip(
        reason=f"live test: run with --opdecide-live and {LIVE_ENV}=http://127.0.0.1:PORT/v1"
    )
    for item in items:
        if marks_of(item)[1]:
            item.add_marker(skip)


def pytest_deselected(items: list[pytest.Item]) -> None:
    _snapshot_usage.note_deselected(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    _snapshot_usage.note_collected(session)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    # Every collector's report, also those of a module named with ``::`` (which pytest hands
    # to no other hook when they pass).
    report = yield
    _case_twins.note_children(collector.config, report)
    return report


# --- fixtures ----------------------------------------------------------------------------------


@pytest.fixture
def opdecide_config() -> dict[str, Any]:
    """Project-wide defaults: override this fixture in ``conftest.py``.

    Return a dict of settings (``seed``, ``strict``, ``guard``, ``record``, ``cassette_dir``,
    ``base_url``, ``model``, ``allow_unused``, ``snapshot_dir``). They beat the ini file and
    lose to markers and the command line.
    """
    return {}


@pytest.fixture
def opdecide_settings(request: pytest.FixtureRequest, opdecide_config: dict[str, Any]) -> Settings:
    """The resolved settings of this test (command line > marker > fixture > ini > default)."""
    if not isinstance(opdecide_config, dict):
        pytest.fail(
            f"the opdecide_config fixture must return a dict, got {type(opdecide_config).__name__}",
            pytrace=False,
        )
    try:
        marker = marker_kwargs(request.node)
        settings = settings_for(request.config, marker, opdecide_config)
    except (SettingError, pytest.UsageError) as exc:
        pytest.fail(str(exc), pytrace=False)
    guard.scope = guard_scope(request.node, marker, settings)
    return settings


def needed_fixtures(marker: dict[str, Any], requested: Iterable[str]) -> list[str]:
    """The fixtures the marker's data needs that the test did not request.

    ``script=`` needs ``runtime``, ``answers=`` needs ``decision_provider``, and ``cassette=True``
    needs one of them to open the cassette (``runtime``, which also binds the real runtime for
    the test's Agent methods). With ``cassette=True`` the script and answers rest unused, by
    design: the switch moves the same test between its fakes and the real model.
    """
    names = set(requested)
    wanted: list[str] = []
    if "script" in marker:
        wanted.append("runtime")
    if "answers" in marker:
        wanted.append("decision_provider")
    if marker.get("cassette") and not wanted and not names & {"runtime", "decision_provider"}:
        wanted.append("runtime")
    return [name for name in wanted if name not in names]


@pytest.fixture
def runtime(request: pytest.FixtureRequest, opdecide_settings: Settings) -> Iterator[Runtime]:
    """The model runtime of this test, bound for the test's duration.

    A strict ``ScriptedRuntime`` built from ``@pytest.mark.opdecide(script=[...])``: unused
    steps fail the test at teardown. For ``cassette=True`` tests, the real runtime (from the
    ``pytest_opdecide_runtime`` hook, or an OpenAI-compatible runtime) replaying or recording
    a cassette, or talking to the live model. ``Agent`` methods and ``agent()`` called in the
    test without a runtime use it, and so do Agents built with a runtime of their own
    (``Agent(runtime=...)``), unless the ``override_runtimes`` setting is off.
    """
    marker = marker_kwargs(request.node)
    mode = mode_of(marker, opdecide_settings)
    if mode == "fake":
        from fake_runtimes import ScriptedRuntime

        script = marker.get("script", ())
        if isinstance(script, str) or not isinstance(script, list | tuple):
            pytest.fail(
                f"@pytest.mark.opdecide(script=...) must be a list of steps, got "
                f"{type(script).__name__}",
                pytrace=False,
            )
        try:
            fake = ScriptedRuntime(*script, strict=opdecide_settings.strict)
        except TypeError as exc:
            pytest.fail(f"@pytest.mark.opdecide(script=...): {exc}", pytrace=False)
        with bind_runtime(fake, override=opdecide_settings.override_runtimes):
            yield fake
        if opdecide_settings.strict and call_passed(request.node):
            fake.assert_complete()
        return
    from pytest_opdecide.plugin._real_components import real_runtime

    override = opdecide_settings.override_runtimes
    with (
        real_runtime(request, opdecide_settings, mode) as real,
        bind_runtime(real, override=override),
    ):
        yield real


@pytest.fixture
def decision_provider(request: pytest.FixtureRequest, opdecide_settings: Settings) -> Iterator[Any]:
    """The question-decision provider of this test.

    A deterministic ``FakeDecisionProvider`` built from
    ``@pytest.mark.opdecide(answers={...})`` and the ``seed`` setting: strict, so scripted
    answers never used fail the test at teardown. For ``cassette=True`` tests, the real
    provider (from the ``pytest_opdecide_decision_provider`` hook, or an OpenAI-compatible one)
    against the cassette or the live model.
    """
    marker = marker_kwargs(request.node)
    mode = mode_of(marker, opdecide_settings)
    if mode == "fake":
        from fake_runtimes import FakeDecisionProvider

        answers = marker.get("answers")
        if answers is not None and not isinstance(answers, dict):
            pytest.fail(
                f"@pytest.mark.opdecide(answers=...) must be a dict, got {type(answers).__name__}",
                pytrace=False,
            )
        try:
            fake = FakeDecisionProvider(answers=answers, seed=opdecide_settings.seed)
        except (TypeError, ValueError) as exc:
            pytest.fail(f"@pytest.mark.opdecide(answers=...): {exc}", pytrace=False)
        yield fake
        if opdecide_settings.strict and call_passed(request.node):
            fake.assert_complete()
        return
    from pytest_opdecide.plugin._real_components import real_decision_provider

    yield real_decision_provider(request, opdecide_settings, mode)


@pytest.fixture
def opdecide_run(request: pytest.FixtureRequest) -> Any:
    """This run of a live test repeated with ``--opdecide-runs``: ``.index`` (from 0),
    ``.count`` (``0`` of ``1`` when the test is not repeated) and ``.seed`` (the ``seed``
    setting plus ``.index``)."""

    return getattr(request, "param", None) or single_run(request.node, request.config)


@pytest.fixture
def menu_snapshot(
    request: pytest.FixtureRequest, opdecide_settings: Settings
) -> Generator[MenuSnapshot, None, None]:
    """Compare rendered menus with snapshot files stored next to the test.

    ``menu_snapshot.assert_match(options)`` renders the options and compares the text with
    ``<test dir>/__menus__/<module>/<test>.txt``; ``--opdecide-update-snapshots`` writes them.
    """
    module = Path(request.node.path)
    snapshot = MenuSnapshot(
        module,
        _snapshot_usage.test_key(request.node),
        opdecide_settings.snapshot_dir,
        opdecide_settings.update_snapshots,
        within=request.config.rootpath,
        distinct=_case_twins.needs_digest(request.node, shown_in_file_name),
    )
    yield snapshot
    _snapshot_usage.note_used(request.config, snapshot)


# --- the end of the run ------------------------------------------------------------------------


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _snapshot_usage.share_worker_findings(session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    _snapshot_usage.merge_worker_findings(node)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    _snapshot_usage.report_unused(
        terminalreporter,
        config,
        default_dir=settings_for(config, {}, {}).snapshot_dir,
        update=bool(command_line(config).get("update_snapshots")),
    )
