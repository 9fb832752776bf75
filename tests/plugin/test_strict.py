"""Strict fakes through the ``runtime`` fixture: the failures users read, pinned in full.

Unused scripted steps fail the test at teardown, only when its body passed; a call after the
last step and a pick of an option that was not offered fail the test body.
"""

from __future__ import annotations

import pytest

from .support import error_text

HEADER = """
import pytest
from fake_runtimes import pick
from pytest_opdecide import decision

ROUTES = {"refund": "REFUND", "escalate": "ESCALATE"}
"""


def test_unused_steps_fail_at_teardown_naming_them(project: pytest.Pytester) -> None:
    project.makepyfile(
        HEADER
        + """
@pytest.mark.opdecide(script=[pick("refund"), pick("escalate"), "bye"])
def test_stops_early(runtime):
    assert decision.make("Decide.", ROUTES) == "REFUND"
"""
    )
    result = project.runpytest("--tb=short")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_stops_early*"])
    assert error_text(result) == (
        "fake_runtimes.UnusedSteps: ScriptedRuntime: 2 scripted steps were never used:\n"
        "  1. pick('escalate')\n"
        "  2. 'bye'\n"
        "The code made 1 model call; remove the unused steps, or find out why the code "
        "stopped early."
    )


@pytest.mark.parametrize(
    "body",
    [
        "assert False, 'the test itself failed'",
        "pytest.skip('not today')",
        "pytest.xfail('known bug')",
    ],
    ids=["failed", "skipped", "xfailed"],
)
def test_unused_steps_are_not_reported_when_the_body_did_not_pass(
    project: pytest.Pytester, body: str
) -> None:
    project.makepyfile(
        HEADER
        + f"""
@pytest.mark.opdecide(script=[pick("refund"), pick("escalate")])
def test_body(runtime):
    decision.make("Decide.", ROUTES)
    {body}
"""
    )
    result = project.runpytest()
    assert result.parseoutcomes().get("errors", 0) == 0
    assert "UnusedSteps" not in result.stdout.str()


@pytest.mark.parametrize(
    ("arguments", "marker"),
    [([], "strict=False, "), (["--opdecide-strict=no"], "")],
    ids=["marker", "command-line"],
)
def test_non_strict_runtimes_let_unused_steps_pass(
    project: pytest.Pytester, arguments: list[str], marker: str
) -> None:
    project.makepyfile(
        HEADER
        + f"""
@pytest.mark.opdecide({marker}script=[pick("refund"), pick("escalate")])
def test_lenient(runtime):
    assert runtime.strict is False
    decision.make("Decide.", ROUTES)
"""
    )
    project.runpytest(*arguments).assert_outcomes(passed=1)


def test_a_call_after_the_last_step_fails_with_the_script(project: pytest.Pytester) -> None:
    project.makepyfile(
        HEADER
        + """
@pytest.mark.opdecide(script=[pick("refund")])
def test_one_call_too_many(runtime):
    decision.make("Decide.", ROUTES)
    decision.make("Decide again.", ROUTES)
"""
    )
    result = project.runpytest("--tb=short")
    result.assert_outcomes(failed=1)
    assert error_text(result) == (
        "fake_runtimes.ScriptExhausted: ScriptedRuntime ran out of steps: call #1 "
        "(turn) is not scripted.\n"
        "It offered options ['refund', 'escalate'] and no tools.\n"
        "Prompt head: 'Decide again.'\n"
        "Scripted (1 step):\n"
        "  0. pick('refund')  -> call #0 (turn)\n"
        "Add a step for this call, or find out why the code made one more model call."
    )


def test_a_pick_of_an_option_not_offered_fails(project: pytest.Pytester) -> None:
    project.makepyfile(
        HEADER
        + """
@pytest.mark.opdecide(script=[pick("close")])
def test_wrong_option(runtime):
    decision.make("Decide.", ROUTES)
"""
    )
    result = project.runpytest("--tb=short")
    result.assert_outcomes(failed=1)
    assert error_text(result) == (
        "fake_runtimes.ScriptMismatch: ScriptedRuntime: step 0 picks 'close', but "
        "call #0 (turn) offered "
        "options ['refund', 'escalate'].\n"
        "To send a pick of an option that was not offered, script the raw reply text instead: "
        '\'{"call": "close"}\''
    )


def test_a_tool_call_of_a_tool_not_offered_fails(project: pytest.Pytester) -> None:
    project.makepyfile(
        HEADER
        + """
from fake_runtimes import tool_call


@pytest.mark.opdecide(script=[tool_call("cancel_order", order_id="A1")])
def test_wrong_tool(runtime):
    runtime.exec("Where is A1?")
"""
    )
    result = project.runpytest("--tb=short")
    result.assert_outcomes(failed=1)
    assert error_text(result) == (
        "fake_runtimes.ScriptMismatch: ScriptedRuntime: step 0 calls tool "
        "'cancel_order', but call #0 (turn) offered no tools.\n"
        "Offer the tool to the call (tools=[...] or a toolset), or script a reply that does not "
        "call it."
    )
