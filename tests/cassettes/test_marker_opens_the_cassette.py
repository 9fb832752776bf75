"""``cassette=True`` opens the test's cassette even when the test requests no fixture: the
marker brings in ``runtime``, which binds the real runtime for the code under test.

Before, such a test recorded nothing, passed, and then went to the network on replay.
"""

from __future__ import annotations

import pytest
from _openai_server import OpenAIServer

from ._support import cassette, dedent, interactions

MODULE = dedent(
    """
    import pytest
    from pytest_opdecide import Agent, decision

    class Router(Agent):
        def route(self, ticket):
            return decision.make(f"Route: {ticket}", {"alpha": "A", "beta": "B"})

    @pytest.mark.opdecide(cassette=True)
    def test_flow():
        assert Router().route("Thanks!") == "A"
    """
)


def test_a_cassette_test_without_fixtures_records_and_replays(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    project.makepyfile(test_bare=MODULE)
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    assert len(server.completions) == 1
    assert len(interactions(cassette(project, "test_bare", "test_flow"))) == 1

    project.runpytest().assert_outcomes(passed=1)
    assert len(server.completions) == 1  # replayed from the cassette: no request
