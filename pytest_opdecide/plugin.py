"""The pytest plugin (entry point ``opdecide``): options, markers, fixtures and hooks only.

Everything it offers is plain library code underneath (``_settings``, ``_guard``,
``_snapshots``, ``fake_runtimes``); heavy imports happen inside the fixtures that need them, so
loading the plugin costs pytest's start-up almost nothing.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_opdecide import hookspecs
from pytest_opdecide._guard import guard
from pytest_opdecide._settings import SETTINGS, SettingError, Settings, resolve

if TYPE_CHECKING:
    from pytest_opdecide._runtime import Runtime
    from pytest_opdecide._snapshots import MenuSnapshot

MARKER = "opdecide"
LIVE_MARKER = "opdecide_live"
LIVE_ENV = "OPDECIDE_LIVE_URL"
DATA_KEYS = frozenset({"script", "answers", "cassette"})
"""Marker keywords that carry test data rather than settings."""

_cli_key = pytest.StashKey[dict[str, Any]]()
_ini_key = pytest.StashKey[dict[str, Any]]()
_snapshots_key = pytest.StashKey[dict[str, set[str]]]()
_call_passed = pytest.StashKey[bool]()


# --- registration ------------------------------------------------------------------------------


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("opdecide", "opdecide: test LLM decision code offline")
    for setting in SETTINGS:
        if setting.cli:
            if setting.parse.__name__ == "parse_bool" and setting.name in {
                "live",
                "update_snapshots",
            }:
                group.addoption(
                    setting.flag,
                    action="store_const",
                    const=True,
                    default=None,
                    dest=setting.dest,
                    help=setting.help,
                )
            else:
                group.addoption(
                    setting.flag,
                    action="store",
                    default=None,
                    dest=setting.dest,
                    metavar="yes|no"
                    if setting.parse.__name__ == "parse_bool"
                    else setting.name.upper(),
                    help=setting.help,
                )
        if setting.ini:
            parser.addini(setting.ini_name, help=setting.help, type="string", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(script=[...], answers={{...}}, cassette=False, **settings): script the "
        "`runtime` / `decision_provider` fixtures, run against a cassette, or override settings "
        "(seed, strict, guard, record, cassette_dir, base_url, model, allow_unused, volatile, "
        "scrub_fields)",
    )
    config.addinivalue_line(
        "markers",
        f"{LIVE_MARKER}: needs the local real model server; runs only with --opdecide-live or "
        f"the {LIVE_ENV} environment variable set",
    )
    cli = {s.name: config.getoption(s.dest) for s in SETTINGS if s.cli}
    config.stash[_cli_key] = {k: v for k, v in cli.items() if v is not None}
    ini = {s.name: config.getini(s.ini_name) for s in SETTINGS if s.ini}
    config.stash[_ini_key] = {k: v for k, v in ini.items() if v not in (None, "")}
    state: dict[str, set[str]] = {"used": set(), "modules": set(), "deselected": set()}
    config.stash[_snapshots_key] = state
    try:
        base = settings_for(config, {}, {})
    except SettingError as exc:
        raise pytest.UsageError(str(exc)) from None
    if base.guard:
        guard.install()


def pytest_unconfigure(config: pytest.Config) -> None:
    guard.uninstall()


# --- per-test state ----------------------------------------------------------------------------


def marker_kwargs(node: pytest.Item | pytest.Function) -> dict[str, Any]:
    """The keywords of every ``opdecide`` marker on the test, the closest one winning."""
    merged: dict[str, Any] = {}
    for mark in reversed(list(node.iter_markers(MARKER))):
        if mark.args:
            raise pytest.UsageError(
                f"{node.nodeid}: @pytest.mark.{MARKER} takes keywords only, got {mark.args!r}"
            )
        merged.update(mark.kwargs)
    known = DATA_KEYS | {s.name for s in SETTINGS if s.marker}
    unknown = set(merged) - known
    if unknown:
        raise pytest.UsageError(
            f"{node.nodeid}: @pytest.mark.{MARKER} got unknown keywords {sorted(unknown)}; "
            f"known: {sorted(known)}"
        )
    return merged


def settings_for(
    config: pytest.Config, marker: dict[str, Any], fixture: dict[str, Any]
) -> Settings:
    """Resolve a test's settings from every source (the one precedence)."""
    settings_marker = {k: v for k, v in marker.items() if k not in DATA_KEYS}
    cli: dict[str, Any] = config.stash[_cli_key]
    ini: dict[str, Any] = config.stash[_ini_key]
    return resolve(cli=cli, marker=settings_marker, fixture=fixture, ini=ini)


def mode_of(marker: dict[str, Any], settings: Settings) -> str:
    """``fake`` (scripted), or for cassette tests ``replay``, ``record`` or ``live``."""
    if not marker.get("cassette"):
        return "fake"
    if settings.live:
        return "live"
    return "replay" if settings.record == "none" else "record"


def _guard_on(mode: str, settings: Settings) -> bool:
    return settings.guard and mode in ("fake", "replay")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    try:
        marker = marker_kwargs(item)
        settings = settings_for(item.config, marker, {})
        guard.active = _guard_on(mode_of(marker, settings), settings)
    except (SettingError, pytest.UsageError):
        guard.active = True  # the fixture reports the error; stay safe meanwhile
    guard.test_id = item.nodeid
    try:
        return (yield)
    finally:
        guard.active = False
        guard.test_id = ""


def call_passed(item: Any) -> bool:
    """Whether the test body of ``item`` ran and passed (known from its teardown on)."""
    return bool(item.stash.get(_call_passed, False))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call":
        item.stash[_call_passed] = report.passed
    return report


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    import os

    config.stash[_snapshots_key]["modules"].update(str(item.path) for item in items)
    if config.getoption("opdecide_live") or os.environ.get(LIVE_ENV):
        return
    skip = pytest.mark.skip(
        reason=f"live test: run with --opdecide-live and {LIVE_ENV}=http://127.0.0.1:PORT/v1"
    )
    for item in items:
        if item.get_closest_marker(LIVE_MARKER) is not None:
            item.add_marker(skip)


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items:
        config = items[0].config
        config.stash[_snapshots_key]["deselected"].update(str(item.path) for item in items)


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
        settings = settings_for(request.config, marker_kwargs(request.node), opdecide_config)
    except (SettingError, pytest.UsageError) as exc:
        pytest.fail(str(exc), pytrace=False)
    guard.active = _guard_on(mode_of(marker_kwargs(request.node), settings), settings)
    return settings


@pytest.fixture
def runtime(request: pytest.FixtureRequest, opdecide_settings: Settings) -> Iterator[Runtime]:
    """The model runtime of this test, bound for the test's duration.

    A strict ``ScriptedRuntime`` built from ``@pytest.mark.opdecide(script=[...])``: unused
    steps fail the test at teardown. For ``cassette=True`` tests, the real runtime (from the
    ``pytest_opdecide_runtime`` hook, or an OpenAI-compatible runtime) replaying or recording
    a cassette, or talking to the live model. ``Agent`` methods and ``agent()`` called in the
    test without a runtime use it.
    """
    from pytest_opdecide._binding import use_runtime

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
        with use_runtime(fake):
            yield fake
        if opdecide_settings.strict and call_passed(request.node):
            fake.assert_complete()
        return
    from pytest_opdecide._real import real_runtime

    with real_runtime(request, opdecide_settings, mode) as real, use_runtime(real):
        yield real


@pytest.fixture
def decision_provider(request: pytest.FixtureRequest, opdecide_settings: Settings) -> Any:
    """The question-decision provider of this test.

    A deterministic ``FakeDecisionProvider`` built from
    ``@pytest.mark.opdecide(answers={...})`` and the ``seed`` setting; for ``cassette=True``
    tests, the real provider (from the ``pytest_opdecide_decision_provider`` hook, or an
    OpenAI-compatible one) against the cassette or the live model.
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
        return FakeDecisionProvider(answers=answers, seed=opdecide_settings.seed)
    from pytest_opdecide._real import real_decision_provider

    return real_decision_provider(request, opdecide_settings, mode)


@pytest.fixture
def menu_snapshot(
    request: pytest.FixtureRequest, opdecide_settings: Settings
) -> Generator[MenuSnapshot, None, None]:
    """Compare rendered menus with snapshot files stored next to the test.

    ``menu_snapshot.assert_match(options)`` renders the options and compares the text with
    ``<test dir>/__menus__/<module>/<test>.txt``; ``--opdecide-update-snapshots`` writes them.
    """
    from pytest_opdecide._snapshots import MenuSnapshot

    snapshot = MenuSnapshot(
        Path(request.node.path),
        request.node.name,
        opdecide_settings.snapshot_dir,
        opdecide_settings.update_snapshots,
    )
    yield snapshot
    request.config.stash[_snapshots_key]["used"].update(str(p) for p in snapshot.used)


# --- unused snapshots --------------------------------------------------------------------------


def _snapshot_files(config: pytest.Config, modules: set[str]) -> set[str]:
    settings = settings_for(config, {}, {})
    files: set[str] = set()
    for module in modules:
        path = Path(module)
        folder = path.parent / settings.snapshot_dir / path.stem
        if folder.is_dir():
            files.update(str(p) for p in folder.glob("*.txt"))
    return files


def _unused_snapshots(config: pytest.Config) -> list[str]:
    state = config.stash[_snapshots_key]
    complete = state["modules"] - state["deselected"]
    return sorted(_snapshot_files(config, complete) - state["used"])


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    state = config.stash[_snapshots_key]
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand our findings to the controller
        workeroutput["opdecide_snapshots"] = {k: sorted(v) for k, v in state.items()}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    output = getattr(node, "workeroutput", {}).get("opdecide_snapshots")
    if output:
        state = node.config.stash[_snapshots_key]
        for key, values in output.items():
            state[key].update(values)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if getattr(config, "workerinput", None) is not None:
        return
    unused = _unused_snapshots(config)
    if not unused:
        return
    update = bool(config.stash[_cli_key].get("update_snapshots"))
    if update:
        for name in unused:
            Path(name).unlink(missing_ok=True)
        terminalreporter.write_sep("-", f"opdecide: removed {len(unused)} unused menu snapshot(s)")
    else:
        terminalreporter.write_sep("-", f"opdecide: {len(unused)} unused menu snapshot(s)")
    for name in unused:
        terminalreporter.write_line(f"  {name}")
    if not update:
        terminalreporter.write_line(
            "  (no test of this run used them; --opdecide-update-snapshots removes them)"
        )
