"""The ``pytest_opdecide_scrub_interaction`` hook: project-specific scrubbing before writing."""

from __future__ import annotations

import pytest
from _openai_server import OpenAIServer

from ._support import cassette, dedent, interactions

TESTS = dedent(
    """
    import pytest
    from pytest_opdecide import decision

    @pytest.mark.opdecide(cassette=True)
    def test_pick(runtime):
        assert decision.make("Customer 4711 asks.", {"alpha": "A", "beta": "B"}) == "A"
    """
)

CONFTEST = dedent(
    """
    import json

    import pytest
    from pytest_opdecide.runtimes import OpenAICompatibleRuntime

    @pytest.hookimpl
    def pytest_opdecide_runtime(request, settings):
        return OpenAICompatibleRuntime(
            settings.base_url, model=settings.model, default_headers={"x-customer-id": "4711"}
        )

    SEEN = []

    @pytest.hookimpl
    def pytest_opdecide_scrub_interaction(interaction, settings):
        # In place: drop a header the built-in scrubbing does not know.
        SEEN.append(settings.record)
        interaction["request"]["headers"].pop("x-customer-id", None)

    class Masking:
        @pytest.hookimpl(trylast=True)
        def pytest_opdecide_scrub_interaction(self, interaction, settings):
            # A replacement: the interaction with the customer number masked everywhere.
            # Bodies come as the cassette stores them: JSON as data, under "json".
            assert interaction["request"]["body"]["json"]["model"] == settings.model
            text = json.dumps(interaction).replace("4711", "CUSTOMER")
            return json.loads(text)

    def pytest_configure(config):
        config.pluginmanager.register(Masking(), "masking")

    def pytest_sessionfinish(session):
        print("SCRUB CALLS", SEEN)
    """
)


def test_the_hook_scrubs_what_it_is_told(project: pytest.Pytester, server: OpenAIServer) -> None:
    project.makeconftest(CONFTEST)
    project.makepyfile(test_hook=TESTS)
    result = project.runpytest("--opdecide-record=once", "-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*SCRUB CALLS ?'once'?"])
    assert server.completions[0].headers["x-customer-id"] == "4711"
    path = cassette(project, "test_hook", "test_pick")
    assert "4711" not in path.read_text()
    (interaction,) = interactions(path)
    assert "x-customer-id" not in interaction["request"]["headers"]
    assert interaction["request"]["body"]["json"]["messages"][0]["content"].startswith(
        "Customer CUSTOMER asks."
    )
    # What the hook wrote is what replay matches against: the body now differs from the
    # request the test sends, so this replay fails, naming the difference.
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*-    Customer CUSTOMER asks.", "*+    Customer 4711 asks."])
