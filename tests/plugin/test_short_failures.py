"""Each newcomer mistake fails in at most 25 lines under pytest's default ``--tb=auto``, showing
the user's line and the library's message, none of the library's frames (issue 21).

The cassette mistakes (mismatch, unplayed interactions, missing cassette) are pinned in
``tests/cassettes/test_short_cassette_failures.py``.
"""

from __future__ import annotations

import pytest
from _failure_sections import check_short, sections

from .support import write_ini

MISTAKES = """
import pytest

from fake_runtimes import pick
from pytest_opdecide import decision


def issue_refund(amount: int) -> str:
    \"\"\"Refund the customer.\"\"\"
    return f"refunded {amount}"


OPTIONS = {"refund": issue_refund, "close": ("CLOSED", "Pick when nothing is owed.")}


def route(ticket):
    return decision.make(f"Route this ticket: {ticket}", OPTIONS)


@pytest.mark.opdecide(script=[pick("refnd", amount=30)])
def test_misspelt_pick(runtime):
    assert route("late parcel") == "refunded 30"


@pytest.mark.opdecide(script=[pick("refund", amount="thirty")])
def test_wrong_argument_type(runtime):
    assert route("late parcel") == "refunded 30"


@pytest.mark.opdecide(script=[pick("refund", amount=30)])
def test_exhausted_script(runtime):
    route("late parcel")
    route("another one")


@pytest.mark.opdecide(script=[pick("refund", amount=30), pick("close")])
def test_unused_steps(runtime):
    assert route("late parcel") == "refunded 30"


@pytest.mark.opdecide(scirpt=[pick("close")])
def test_marker_typo(runtime):
    assert route("late parcel") == "CLOSED"


def test_the_users_own_error(runtime):
    raise KeyError("not ours")
"""


def test_each_scripted_mistake_fails_briefly_with_the_users_line(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_mistakes=MISTAKES)
    result = project.runpytest()
    result.assert_outcomes(failed=4, passed=1, errors=2)
    found = sections(result)
    expected = {
        "test_misspelt_pick": (
            "test_mistakes.py:16: in route",
            "Did you mean 'refund'?",
        ),
        "test_wrong_argument_type": (
            "test_mistakes.py:16: in route",
            "Field 'amount' must be int, got str ('thirty').",
        ),
        "test_exhausted_script": (
            '    route("another one")',
            "ScriptedRuntime ran out of steps: call #1 (turn) is not scripted.",
        ),
        "ERROR at teardown of test_unused_steps": (
            "E   fake_runtimes.UnusedSteps: ScriptedRuntime: 1 scripted step was never used:",
            "E     1. pick('close')",
        ),
        "ERROR at setup of test_marker_typo": (
            "unknown keyword 'scirpt' (did you mean 'script'?)",
            "It takes: allow_unused, answers,",
        ),
    }
    for title, shown in expected.items():
        section = found[title]
        check_short(section)
        text = "\n".join(section)
        for part in shown:
            assert part in text, f"{part!r} not in:\n{text}"
    # The user's own error is shown as pytest shows it.
    assert "KeyError" in "\n".join(found["test_the_users_own_error"])


def test_fulltrace_still_shows_every_frame(project: pytest.Pytester) -> None:
    project.makepyfile(test_mistakes=MISTAKES)
    result = project.runpytest("--fulltrace", "-k", "misspelt")
    text = "\n".join(sections(result)["test_misspelt_pick"])
    assert "fake_runtimes/_scripted.py" in text


@pytest.mark.parametrize("strict", [True, False])
def test_a_misspelt_ini_key_gets_a_did_you_mean(project: pytest.Pytester, strict: bool) -> None:
    write_ini(project, opdecide_cassete_dir="recorded")
    if not strict:
        project.makeini(
            "[pytest]\naddopts = -p no:cacheprovider\nopdecide_cassete_dir = recorded\n"
            "asyncio_default_fixture_loop_scope = function\n"
        )
    project.makepyfile(test_one="def test_one():\n    pass\n")
    result = project.runpytest("-W", "default")
    message = (
        "tox.ini: unknown opdecide ini key 'opdecide_cassete_dir' (did you mean "
        "'opdecide_cassette_dir'?). The plugin's keys: opdecide_allow_hosts,"
    )
    if strict:
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        assert any(line.startswith(f"ERROR: {message}") for line in result.errlines)
    else:
        result.assert_outcomes(passed=1)
        assert any(message in line for line in result.outlines)
