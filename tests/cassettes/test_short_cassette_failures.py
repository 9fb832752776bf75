"""The cassette mistakes fail in at most 25 lines under pytest's default ``--tb=auto``: a request
the cassette does not hold, interactions never replayed, no cassette at all (issue 21). The
user's line and the library's message are shown; the library's and httpx's frames are not."""

from __future__ import annotations

import pytest
from _failure_sections import check_short, sections

from ._support import dedent


def module(prompts: list[str]) -> str:
    calls = "\n".join(f"    route({prompt!r})" for prompt in prompts)
    return dedent(
        """
        import pytest
        from pytest_opdecide import decision

        OPTIONS = {"alpha": "A", "beta": "B"}


        def route(ticket):
            return decision.make(f"Route this ticket: {ticket}", OPTIONS)


        @pytest.mark.opdecide(cassette=True)
        def test_flow(runtime):
        """
    ) + (calls + "\n")


def test_a_request_the_cassette_does_not_hold(project: pytest.Pytester) -> None:
    project.makepyfile(test_flow=module(["late parcel"]))
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    project.makepyfile(test_flow=module(["early parcel"]))
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    section = sections(result)["test_flow"]
    check_short(section)
    text = "\n".join(section)
    assert "test_flow.py:8: in route" in text
    assert "    return decision.make(" in text
    assert "the test sent a request that is not in cassette" in text
    assert "--opdecide-record=rewrite" in text


def test_interactions_never_replayed(project: pytest.Pytester) -> None:
    project.makepyfile(test_flow=module(["one", "two", "three"]))
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    project.makepyfile(test_flow=module(["one"]))
    result = project.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    section = sections(result)["ERROR at teardown of test_flow"]
    check_short(section)
    text = "\n".join(section)
    assert "2 of 3 recorded interaction(s) in " in text
    assert "@pytest.mark.opdecide(allow_unused=True)" in text


def test_no_cassette(project: pytest.Pytester) -> None:
    project.makepyfile(test_flow=module(["one"]))
    result = project.runpytest()
    result.assert_outcomes(errors=1)
    section = sections(result)["ERROR at setup of test_flow"]
    check_short(section)
    assert any("--opdecide-record=once" in line for line in section)
