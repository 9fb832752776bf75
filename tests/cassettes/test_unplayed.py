"""Recorded interactions that the test never replays fail it at teardown (configurable)."""

from __future__ import annotations

import pytest
from _openai_server import OpenAIServer

from ._support import dedent, error_text, write_ini


def module(count: int, marker: str = "cassette=True") -> str:
    calls = "\n".join(f'    decision.make("Ticket {i}.", OPTIONS)' for i in range(count))
    return (
        dedent(
            f"""
        import pytest
        from pytest_opdecide import decision

        OPTIONS = {{"alpha": "A", "beta": "B"}}

        @pytest.mark.opdecide({marker})
        def test_flow(runtime):
        """
        )
        + (calls or "    pass")
        + "\n"
    )


def test_unplayed_interactions_fail_at_teardown(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    project.makepyfile(test_unplayed=module(3))
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    project.makepyfile(test_unplayed=module(1))
    result = project.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_flow*"])
    message = error_text(result)
    assert "2 of 3 recorded interaction(s) in " in message
    assert "cassettes/test_unplayed/test_flow.yaml were never replayed:" in message
    assert "    #1: POST http://127.0.0.1:" in message
    assert "    #2: POST http://127.0.0.1:" in message
    assert "The code made fewer requests than when the cassette was recorded." in message
    assert "@pytest.mark.opdecide(allow_unused=True)" in message
    assert "--opdecide-record=rewrite" in message


@pytest.mark.parametrize("where", ["marker", "ini", "flag"])
def test_allow_unused(project: pytest.Pytester, server: OpenAIServer, where: str) -> None:
    project.makepyfile(test_unplayed=module(2))
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    marker = "cassette=True, allow_unused=True" if where == "marker" else "cassette=True"
    project.makepyfile(test_unplayed=module(1, marker))
    if where == "ini":
        write_ini(project, opdecide_base_url=server.url, opdecide_allow_unused="true")
    args = ["--opdecide-allow-unused=yes"] if where == "flag" else []
    project.runpytest(*args).assert_outcomes(passed=1)


def test_a_failing_test_reports_its_failure_not_the_unplayed_interactions(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    project.makepyfile(test_unplayed=module(2))
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    project.makepyfile(test_unplayed=module(1) + "    assert False, 'the real problem'\n")
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    assert "never replayed" not in result.stdout.str()
