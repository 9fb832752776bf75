"""The plugin side of menu snapshots: which snapshot files a run shows to be unused.

The ``menu_snapshot`` fixture compares menus with files (:mod:`._snapshots`); this module keeps
what the run learns about them (files asserted, tests collected, deselected and passed, the
folders in use; xdist workers hand theirs to the controller) and, at the end of the run, lists
the files no test used, or removes them with ``--opdecide-update-snapshots``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pytest_opdecide.plugin._snapshots import MenuSnapshot, snapshot_path

__all__ = [
    "merge_worker_findings",
    "note_collected",
    "note_deselected",
    "note_passed",
    "note_used",
    "report_unused",
    "share_worker_findings",
    "start",
    "test_key",
]

_SNAPSHOT_STATE = ("used", "modules", "tests", "passed", "folders")
"""What the run learns about menu snapshots (sets of strings; xdist workers send theirs).

``used``: snapshot files asserted. ``modules``: test modules with a selected test.
``tests``: ``module<NUL>test key`` of every collected test, selected or deselected.
``passed``: the same, for tests whose body passed. ``folders``: ``module<NUL>snapshot_dir``
seen by the ``menu_snapshot`` fixture (``opdecide_config`` may change the directory).
"""
_SEP = "\0"
_state_key = pytest.StashKey[dict[str, set[str]]]()
_pending_key = pytest.StashKey[tuple[list[pytest.Item], list[pytest.Item]]]()
"""The tests collected and those that passed, as items: turned into ``modules``, ``tests`` and
``passed`` only when the record is read (:func:`_state`). A run with no snapshot then pays a
list append per passing test, not a string made for every test."""


def start(config: pytest.Config) -> None:
    """Start the run's record (from ``pytest_configure``)."""
    state: dict[str, set[str]] = {key: set() for key in _SNAPSHOT_STATE}
    config.stash[_state_key] = state
    config.stash[_pending_key] = ([], [])


def _state(config: pytest.Config) -> dict[str, set[str]]:
    """The run's record, with the tests noted since it was last read added to it."""
    state = config.stash[_state_key]
    collected, passed = config.stash[_pending_key]
    if collected:
        _modules(config)
        state["tests"].update(_test_ref(item) for item in collected)
        collected.clear()
    if passed:
        state["passed"].update(_test_ref(item) for item in passed)
        passed.clear()
    return state


def _modules(config: pytest.Config) -> set[str]:
    """The modules of the run's selected tests (without the record's other strings)."""
    modules = config.stash[_state_key]["modules"]
    modules.update(str(path) for path in {item.path for item in config.stash[_pending_key][0]})
    return modules


def test_key(item: Any) -> str:
    """The name of a test inside its module: ``test_x``, ``TestClass.test_x[param]``."""
    nodeid: str = item.nodeid
    _, sep, rest = nodeid.partition("::")
    return rest.replace("::", ".") if sep else str(item.name)


def _test_ref(item: Any) -> str:
    return f"{item.path}{_SEP}{test_key(item)}"


def note_collected(session: pytest.Session) -> None:
    """Record the run's selected tests and their modules (``pytest_collection_finish``)."""
    session.config.stash[_pending_key][0].extend(session.items)


def note_deselected(items: list[pytest.Item]) -> None:
    """Record deselected tests: their snapshots are not unused (``pytest_deselected``)."""
    if items:
        _state(items[0].config)["tests"].update(_test_ref(item) for item in items)


def note_passed(item: pytest.Item) -> None:
    """Record a test whose body passed (from ``pytest_runtest_makereport``)."""
    item.config.stash[_pending_key][1].append(item)


def note_used(config: pytest.Config, snapshot: MenuSnapshot) -> None:
    """Record what a test's ``menu_snapshot`` asserted, and its folder (at its teardown)."""
    state = _state(config)
    state["used"].update(str(p) for p in snapshot.used)
    state["folders"].add(f"{snapshot.test_file}{_SEP}{snapshot.snapshot_dir}")


def _partial_modules(config: pytest.Config) -> set[str]:
    """Modules named with ``::`` on the command line: not all of their tests were collected."""
    base = config.invocation_params.dir
    return {os.path.abspath(base / arg.partition("::")[0]) for arg in config.args if "::" in arg}


def _unused_snapshots(config: pytest.Config, default_dir: str) -> list[str]:
    """Snapshot files that this run shows to be unused.

    A file whose test ran and passed without asserting it is unused, and so is a file that
    belongs to no test of its module (a test renamed or removed), when the whole module was
    collected. Files of tests that were deselected, skipped, failed or not reached are kept.
    """
    modules = _modules(config)
    folders: dict[str, set[str]] = {module: {default_dir} for module in modules}
    for ref in config.stash[_state_key]["folders"]:
        module, _, folder = ref.partition(_SEP)
        folders.setdefault(module, set()).add(folder)
    directories = [
        (module, directory)
        for module in sorted(modules)
        for folder in sorted(folders[module])
        if (directory := Path(module).parent / folder / Path(module).stem).is_dir()
    ]
    if not directories:  # the common case: a run with no snapshots has nothing more to do
        return []
    state = _state(config)
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


def share_worker_findings(config: pytest.Config) -> None:
    """On an xdist worker, hand the run's record to the controller (``pytest_sessionfinish``)."""
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["opdecide_snapshots"] = {k: sorted(v) for k, v in _state(config).items()}


def merge_worker_findings(node: Any) -> None:
    """On the controller, add a finished worker's record (``pytest_testnodedown``)."""
    output = getattr(node, "workeroutput", {}).get("opdecide_snapshots")
    if output:
        state = _state(node.config)
        for key, values in output.items():
            state[key].update(values)


def report_unused(
    terminalreporter: Any, config: pytest.Config, *, default_dir: str, update: bool
) -> None:
    """List the snapshot files no test of the run used (``pytest_terminal_summary``); with
    ``update``, remove them.

    Args:
        terminalreporter: pytest's terminal reporter.
        config: The run's config.
        default_dir: The run's ``snapshot_dir`` setting (tests may change theirs).
        update: Whether the run updates snapshots (``--opdecide-update-snapshots``).
    """
    if getattr(config, "workerinput", None) is not None:
        return
    unused = _unused_snapshots(config, default_dir)
    if not unused:
        return
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
