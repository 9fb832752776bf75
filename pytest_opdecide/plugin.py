"""The pytest plugin (entry point ``opdecide``): options, markers, fixtures and hooks only.

Everything it offers is plain library code underneath (``_settings``, ``_guard``,
``_snapshots``, ``fake_runtimes``); heavy imports happen inside the fixtures that need them, so
loading the plugin costs pytest's start-up almost nothing.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_opdecide import hookspecs

# Imported with the plugin, not in the fixture: the binding's context variable must be one object
# for the whole process. A pytest run inside a test (pytester's in-process runs) drops the
# modules it imported; a binding module imported again would be a second variable, unseen by
# the Agent classes that the package has already handed out.
from pytest_opdecide._binding import use_runtime
from pytest_opdecide._guard import AllowedHosts, Scope, guard
from pytest_opdecide._settings import SETTINGS, SettingError, Settings, resolve

if TYPE_CHECKING:
    from pytest_opdecide._runtime import Runtime
    from pytest_opdecide._snapshots import MenuSnapshot

MARKER = "opdecide"
LIVE_MARKER = "opdecide_live"
LIVE_ENV = "OPDECIDE_LIVE_URL"
DATA_KEYS = frozenset({"script", "answers", "cassette"})
"""Marker keywords that carry test data rather than settings."""
PLUGIN_FIXTURES = frozenset({"runtime", "decision_provider", "opdecide_config"})
"""A test that uses one of these (or the ``opdecide`` marker) uses the plugin: the guard
covers all of its network traffic, not only the model calls of this project's runtimes."""

_cli_key = pytest.StashKey[dict[str, Any]]()
_ini_key = pytest.StashKey[dict[str, Any]]()
_snapshots_key = pytest.StashKey[dict[str, set[str]]]()
_call_passed = pytest.StashKey[bool]()
_marker_error = pytest.StashKey[str]()
_guard_installed = pytest.StashKey[bool]()
_allowed_key = pytest.StashKey[AllowedHosts]()


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
    marker_settings = ", ".join(s.name for s in SETTINGS if s.marker)
    config.addinivalue_line(
        "markers",
        f"{MARKER}(script=[...], answers={{...}}, cassette=False, **settings): script the "
        "`runtime` / `decision_provider` fixtures, run against a cassette, or override settings "
        f"({marker_settings})",
    )
    config.addinivalue_line(
        "markers",
        f"{LIVE_MARKER}: needs a real model server; runs only with --opdecide-live or "
        f"the {LIVE_ENV} environment variable set",
    )
    cli = {s.name: config.getoption(s.dest) for s in SETTINGS if s.cli}
    config.stash[_cli_key] = {k: v for k, v in cli.items() if v is not None}
    ini = {s.name: config.getini(s.ini_name) for s in SETTINGS if s.ini}
    config.stash[_ini_key] = {k: v for k, v in ini.items() if v not in (None, "")}
    state: dict[str, set[str]] = {key: set() for key in _SNAPSHOT_STATE}
    config.stash[_snapshots_key] = state
    try:
        run_settings = settings_for(config, {}, {})
    except SettingError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[_allowed_key] = AllowedHosts(run_settings.allow_hosts)
    # Installed even when the run's settings turn the guard off: a marker or the
    # opdecide_config fixture may turn it back on for one test (the one precedence).
    guard.install()
    config.stash[_guard_installed] = True


def pytest_unconfigure(config: pytest.Config) -> None:
    if config.stash.get(_guard_installed, False):
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


def uses_plugin(item: pytest.Item) -> bool:
    """Whether the test uses the plugin: the ``opdecide`` marker, or one of
    :data:`PLUGIN_FIXTURES` (a cassette comes with the marker)."""
    if item.get_closest_marker(MARKER) is not None:
        return True
    return not PLUGIN_FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))


def guard_scope(item: pytest.Item, marker: dict[str, Any], settings: Settings) -> Scope:
    """What the guard refuses during ``item`` (see ``pytest_opdecide._guard``).

    Off when the ``guard`` setting is off, for tests that record a cassette or run against the
    live model, and for ``opdecide_live`` tests (they run only when asked to reach the live
    server). Otherwise everything outside the loopback for tests that use the plugin (and for
    every test with ``guard_all``), and only this project's own model calls for the others.
    """
    if not settings.guard or mode_of(marker, settings) in ("record", "live"):
        return "off"
    if item.get_closest_marker(LIVE_MARKER) is not None:
        return "off"
    return "all" if settings.guard_all or uses_plugin(item) else "model_calls"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    guard.refresh()
    scope: Scope
    try:
        marker = marker_kwargs(item)
        scope = guard_scope(item, marker, settings_for(item.config, marker, {}))
    except (SettingError, pytest.UsageError) as exc:
        item.stash[_marker_error] = str(exc)  # pytest_runtest_setup fails the test with it
        scope = "all"
    # Restored afterwards: a test may run a whole pytest session in-process (pytester).
    previous = guard.scope, guard.test_id, guard.allowed
    guard.scope, guard.test_id = scope, item.nodeid
    guard.allowed = item.config.stash[_allowed_key]
    try:
        return (yield)
    finally:
        guard.scope, guard.test_id, guard.allowed = previous


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    error = item.stash.get(_marker_error, None)
    if error is not None:  # also for tests that request none of the plugin's fixtures
        pytest.fail(error, pytrace=False)


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
        if report.passed:
            item.config.stash[_snapshots_key]["passed"].add(_test_ref(item))
    return report


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    import os

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
        config.stash[_snapshots_key]["tests"].update(_test_ref(item) for item in items)


def pytest_collection_finish(session: pytest.Session) -> None:
    state = session.config.stash[_snapshots_key]
    state["modules"].update(str(item.path) for item in session.items)
    state["tests"].update(_test_ref(item) for item in session.items)


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


@pytest.fixture(autouse=True)
def _opdecide_marker_fixtures(request: pytest.FixtureRequest) -> None:
    """Bring in the fixture a marker's ``script=``, ``answers=`` or ``cassette=True`` needs.

    A test marked ``@pytest.mark.opdecide(script=[...])`` gets its scripted ``runtime`` bound
    even when it does not ask for the fixture (its code under test reaches the runtime through
    an Agent method), the same for ``answers=`` and ``decision_provider``, and a cassette test
    gets its cassette: the marker's data is never ignored.
    """
    if request.node.get_closest_marker(MARKER) is None:
        return
    try:
        marker = marker_kwargs(request.node)
    except pytest.UsageError:
        return  # pytest_runtest_setup has failed the test with this error already
    for name in needed_fixtures(marker, request.fixturenames):
        request.getfixturevalue(name)


@pytest.fixture
def runtime(request: pytest.FixtureRequest, opdecide_settings: Settings) -> Iterator[Runtime]:
    """The model runtime of this test, bound for the test's duration.

    A strict ``ScriptedRuntime`` built from ``@pytest.mark.opdecide(script=[...])``: unused
    steps fail the test at teardown. For ``cassette=True`` tests, the real runtime (from the
    ``pytest_opdecide_runtime`` hook, or an OpenAI-compatible runtime) replaying or recording
    a cassette, or talking to the live model. ``Agent`` methods and ``agent()`` called in the
    test without a runtime use it.
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
        with use_runtime(fake):
            yield fake
        if opdecide_settings.strict and call_passed(request.node):
            fake.assert_complete()
        return
    from pytest_opdecide._real import real_runtime

    with real_runtime(request, opdecide_settings, mode) as real, use_runtime(real):
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
    from pytest_opdecide._real import real_decision_provider

    yield real_decision_provider(request, opdecide_settings, mode)


@pytest.fixture
def menu_snapshot(
    request: pytest.FixtureRequest, opdecide_settings: Settings
) -> Generator[MenuSnapshot, None, None]:
    """Compare rendered menus with snapshot files stored next to the test.

    ``menu_snapshot.assert_match(options)`` renders the options and compares the text with
    ``<test dir>/__menus__/<module>/<test>.txt``; ``--opdecide-update-snapshots`` writes them.
    """
    from pytest_opdecide._snapshots import MenuSnapshot

    module = Path(request.node.path)
    snapshot = MenuSnapshot(
        module,
        test_key(request.node),
        opdecide_settings.snapshot_dir,
        opdecide_settings.update_snapshots,
    )
    yield snapshot
    state = request.config.stash[_snapshots_key]
    state["used"].update(str(p) for p in snapshot.used)
    state["folders"].add(f"{module}{_SEP}{opdecide_settings.snapshot_dir}")


# --- unused snapshots ---------------------------------------------------------------------------

_SNAPSHOT_STATE = ("used", "modules", "tests", "passed", "folders")
"""What the run learns about menu snapshots (sets of strings; xdist workers send theirs).

``used``: snapshot files asserted. ``modules``: test modules with a selected test.
``tests``: ``module<NUL>test key`` of every collected test, selected or deselected.
``passed``: the same, for tests whose body passed. ``folders``: ``module<NUL>snapshot_dir``
seen by the ``menu_snapshot`` fixture (``opdecide_config`` may change the directory).
"""
_SEP = "\0"


def test_key(item: Any) -> str:
    """The name of a test inside its module: ``test_x``, ``TestClass.test_x[param]``."""
    nodeid: str = item.nodeid
    _, sep, rest = nodeid.partition("::")
    return rest.replace("::", ".") if sep else str(item.name)


def _test_ref(item: Any) -> str:
    return f"{item.path}{_SEP}{test_key(item)}"


def _partial_modules(config: pytest.Config) -> set[str]:
    """Modules named with ``::`` on the command line: not all of their tests were collected."""
    import os

    base = config.invocation_params.dir
    return {os.path.abspath(base / arg.partition("::")[0]) for arg in config.args if "::" in arg}


def _unused_snapshots(config: pytest.Config) -> list[str]:
    """Snapshot files that this run shows to be unused.

    A file whose test ran and passed without asserting it is unused, and so is a file that
    belongs to no test of its module (a test renamed or removed), when the whole module was
    collected. Files of tests that were deselected, skipped, failed or not reached are kept.
    """
    state = config.stash[_snapshots_key]
    default_dir = settings_for(config, {}, {}).snapshot_dir
    folders: dict[str, set[str]] = {module: {default_dir} for module in state["modules"]}
    for ref in state["folders"]:
        module, _, folder = ref.partition(_SEP)
        folders.setdefault(module, set()).add(folder)
    directories = [
        (module, directory)
        for module in sorted(state["modules"])
        for folder in sorted(folders[module])
        if (directory := Path(module).parent / folder / Path(module).stem).is_dir()
    ]
    if not directories:  # the common case: a run with no snapshots has nothing more to do
        return []
    from pytest_opdecide._snapshots import snapshot_path

    with_snapshots = {module for module, _ in directories}
    stems: dict[str, set[str]] = {}
    passed: set[tuple[str, str]] = set()
    for ref in state["tests"]:
        module, _, key = ref.partition(_SEP)
        if module not in with_snapshots:
            continue
        stem = snapshot_path(Path(module), key, "", None).stem
        stems.setdefault(module, set()).add(stem)
        if ref in state["passed"]:
            passed.add((module, stem))
    partial = _partial_modules(config)
    unused: list[str] = []
    for module, directory in directories:
        for file in directory.glob("*.txt"):
            if str(file) in state["used"]:
                continue
            owner = _owner(file.stem, stems.get(module, set()))
            if owner is None:
                if module not in partial:
                    unused.append(str(file))
            elif (module, owner) in passed:
                unused.append(str(file))
    return sorted(unused)


def _owner(stem: str, test_stems: set[str]) -> str | None:
    """The test a snapshot file belongs to: ``<test>.txt`` or ``<test>-<name>.txt``."""
    parts = stem.split("-")
    for end in range(len(parts), 0, -1):
        candidate = "-".join(parts[:end])
        if candidate in test_stems:
            return candidate
    return None


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
