"""Async tests: the ``decision_provider`` fixture, and the ``runtime`` fixture from coroutines.

The projects run pytest-asyncio in auto mode (``asyncio_mode = auto`` in their ini); one runs
anyio's pytest plugin instead.
"""

from __future__ import annotations

import pytest

from .support import error_text, write_ini

QUESTIONS = """
REQUEST = {
    "model": "",
    "context": "My card was charged twice for order A1!",
    "questions": {
        "urgent": {
            "type": "choice",
            "instructions": "Is this urgent?",
            "options": {"yes": None, "no": None},
        },
        "anger": {
            "type": "score",
            "instructions": "How angry is the customer?",
            "levels": ["calm", "annoyed", "furious"],
        },
    },
}
"""


def test_decision_provider_answers_from_the_marker(project: pytest.Pytester) -> None:
    project.makepyfile(
        QUESTIONS
        + """
import pytest
from fake_runtimes import FakeDecisionProvider, choose


@pytest.mark.opdecide(answers={"urgent": choose("yes", 0.92)})
async def test_triage(decision_provider):
    assert isinstance(decision_provider, FakeDecisionProvider)
    result = await decision_provider.decide(REQUEST)
    urgent = result.answers["urgent"]
    assert (urgent.choice, urgent.probabilities) == ("yes", {"yes": 0.92, "no": 0.08})
    assert result.metadata["answered_by"] == {"urgent": "script", "anger": "seed"}
"""
    )
    project.runpytest().assert_outcomes(passed=1)


def test_decision_provider_follows_the_seed_setting(project: pytest.Pytester) -> None:
    project.makepyfile(
        QUESTIONS
        + """
import pytest

seen = {}


@pytest.mark.parametrize("seed", [1, 1, 2])
async def test_seeded(request, seed):
    request.applymarker(pytest.mark.opdecide(seed=seed))
    provider = request.getfixturevalue("decision_provider")
    assert provider.seed == seed
    result = await provider.decide(REQUEST)
    seen.setdefault(seed, []).append(result.answers["anger"].probabilities)


def test_same_seed_same_answers():
    assert seen[1][0] == seen[1][1]
    assert seen[1][0] != seen[2][0]


def test_default_seed(decision_provider):
    assert decision_provider.seed == 0


@pytest.mark.opdecide(seed=5)
def test_marker_seed(decision_provider):
    assert decision_provider.seed == 5
"""
    )
    project.runpytest().assert_outcomes(passed=6)


def test_unused_answers_fail_at_teardown(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
import pytest
from fake_runtimes import choose, score


@pytest.mark.opdecide(answers={"urgent": choose("yes"), "anger": [score(1), score(2)]})
def test_never_asks(decision_provider):
    pass


@pytest.mark.opdecide(strict=False, answers={"urgent": choose("yes")})
def test_lenient(decision_provider):
    pass
"""
    )
    result = project.runpytest("--tb=short")
    result.assert_outcomes(passed=2, errors=1)
    assert error_text(result) == (
        "fake_runtimes.UnusedSteps: FakeDecisionProvider: 3 scripted answers were "
        "never used:\n"
        "  answers['urgent']: choose('yes', p=1)\n"
        "  answers['anger'][0]: score(1)\n"
        "  answers['anger'][1]: score(2)\n"
        "The code made 0 decision requests; remove the unused answers, or find out why the "
        "code stopped early."
    )


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        ("['yes']", "@pytest.mark.opdecide(answers=...) must be a dict, got list"),
        (
            "{'urgent': 'yes'}",
            "@pytest.mark.opdecide(answers=...): answers['urgent'] is str 'yes': script "
            "choose(...), score(...)",
        ),
    ],
    ids=["list", "bad-answer"],
)
def test_bad_answers_fail_the_test_with_the_reason(
    project: pytest.Pytester, answers: str, message: str
) -> None:
    project.makepyfile(
        f"""
import pytest


@pytest.mark.opdecide(answers={answers})
def test_bad(decision_provider):
    pass
"""
    )
    result = project.runpytest()
    result.assert_outcomes(errors=1)
    assert message in result.stdout.str()


ASYNC_RUNTIME = """
import asyncio

import pytest
from fake_runtimes import pick
from pytest_opdecide import Agent, agent_async, current_runtime, decision


class Router(Agent):
    async def route(self, message: str) -> str:
        return await decision.make_async(f"Route: {message}", {"refund": "R", "close": "C"})


@pytest.mark.opdecide(script=[pick("refund"), "Summary."])
async def test_async_agent(runtime):
    assert current_runtime() is runtime
    assert await Router().route("charged twice") == "R"
    assert await agent_async("Summarise.") == "Summary."
    assert len(runtime.calls) == 2


@pytest.mark.opdecide(script=["one", "two"])
async def test_tasks_see_the_runtime(runtime):
    async def ask(prompt):
        return await agent_async(prompt)

    replies = await asyncio.gather(ask("a"), ask("b"))
    assert sorted(replies) == ["one", "two"]


@pytest.mark.opdecide(script=["never used"])
async def test_unused_step_in_an_async_test(runtime):
    pass
"""


def test_async_tests_use_the_runtime(project: pytest.Pytester) -> None:
    project.makepyfile(ASYNC_RUNTIME)
    result = project.runpytest()
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_unused_step_in_an_async_test*"])


def test_async_tests_under_anyio(pytester: pytest.Pytester) -> None:
    write_ini(pytester, asyncio_mode="strict")
    pytester.makepyfile(
        """
import pytest
from fake_runtimes import pick
from pytest_opdecide import decision


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.opdecide(script=[pick("close")])
async def test_anyio(runtime):
    assert await decision.make_async("Route.", {"refund": "R", "close": "C"}) == "C"
"""
    )
    pytester.runpytest().assert_outcomes(passed=1)
