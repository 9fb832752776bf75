"""The plugin under pytest-xdist (``-n 2``): fixtures, strict teardown, the guard, snapshots."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("xdist")

SUITE = """
import pytest
from fake_runtimes import choose, pick
from pytest_opdecide import decision
from pytest_opdecide.plugin._guard import RealCallBlocked

ROUTES = {"refund": "REFUND", "close": "CLOSED", "escalate": "ESCALATED"}


@pytest.mark.parametrize("option", list(ROUTES))
def test_scripted(runtime, option):
    runtime.add(pick(option))
    assert decision.make("Route.", ROUTES) == ROUTES[option]


@pytest.mark.parametrize("option", list(ROUTES))
def test_menu(menu_snapshot, option):
    menu_snapshot.assert_match({name: value for name, value in ROUTES.items() if name != option})


@pytest.mark.opdecide(answers={"urgent": choose("yes", 0.9)})
async def test_provider(decision_provider):
    result = await decision_provider.decide(
        {
            "model": "",
            "context": "Charged twice.",
            "questions": {
                "urgent": {
                    "type": "choice",
                    "instructions": "Urgent?",
                    "options": {"yes": None, "no": None},
                }
            },
        }
    )
    assert result.answers["urgent"].choice == "yes"


def test_guarded(runtime):  # a test that uses the plugin: the guard blocks any connection
    import socket

    with socket.socket() as sock, pytest.raises(RealCallBlocked):
        sock.connect(("192.0.2.1", 80))


@pytest.mark.opdecide(script=["unused"])
def test_unused_step(runtime):
    pass
"""


def test_the_plugin_under_xdist(project: pytest.Pytester) -> None:
    project.makepyfile(test_suite=SUITE)
    folder = project.path / "__menus__" / "test_suite"
    folder.mkdir(parents=True)
    (folder / "test_gone.txt").write_text("a menu of a test that was removed\n")

    result = project.runpytest_subprocess("-n", "2", "--opdecide-update-snapshots")
    result.assert_outcomes(passed=9, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_unused_step*",
            "*- opdecide: removed 1 unused menu snapshot(s) -*",
            f"  {folder / 'test_gone.txt'}",
        ]
    )
    written = sorted(path.name for path in folder.iterdir())
    assert written == ["test_menu_close.txt", "test_menu_escalate.txt", "test_menu_refund.txt"]
    assert "escalate()" not in (folder / "test_menu_escalate.txt").read_text()

    (folder / "test_menu_refund.txt").write_text("a menu that changed\n")
    (folder / "test_menu_close-old.txt").write_text("no longer asserted\n")
    result = project.runpytest_subprocess("-n", "2")
    result.assert_outcomes(passed=8, failed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*SnapshotMismatch: the menu differs from its snapshot*",
            "*- opdecide: 1 unused menu snapshot(s) -*",
            f"  {Path(folder / 'test_menu_close-old.txt')}",
        ]
    )
