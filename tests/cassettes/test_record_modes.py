"""Record modes (``--opdecide-record``), replay without network, live runs, and the switch."""

from __future__ import annotations

import pytest
from _openai_server import OpenAIServer

from ._support import cassette, contents, dedent, error_text, interactions


def module(*prompts: str, marker: str = "cassette=True") -> str:
    """A test module whose one test asks ``decision.make`` once per prompt."""
    calls = "\n".join(f'    assert decision.make({p!r}, OPTIONS) == "A"' for p in prompts)
    return (
        dedent(
            f"""
            import pytest
            from fake_runtimes import pick
            from pytest_opdecide import decision

            OPTIONS = {{"alpha": "A", "beta": "B"}}

            @pytest.mark.opdecide({marker})
            def test_flow(runtime):
            """
        )
        + (calls or "    pass")
        + "\n"
    )


def prompts_of(project: pytest.Pytester) -> list[str]:
    """The first line of the prompt of each interaction in the cassette, in order."""
    found = interactions(cassette(project, "test_modes", "test_flow"))
    return [i["request"]["body"]["json"]["messages"][0]["content"].split("\n")[0] for i in found]


def ids_of(project: pytest.Pytester) -> list[str]:
    """The completion ids the server gave, in cassette order (they count the server's calls)."""
    found = interactions(cassette(project, "test_modes", "test_flow"))
    return [i["response"]["body"]["string"]["json"]["id"] for i in found]


def test_default_replays_only_and_needs_a_cassette(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    project.makepyfile(test_modes=module("First."))
    result = project.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*no cassette at */cassettes/test_modes/test_flow.yaml for test_modes.py::test_flow.",
            "*Record it once with the model server running at base_url (--opdecide-base-url=URL, "
            "or opdecide_base_url in the ini file):",
            "*pytest 'test_modes.py::test_flow' --opdecide-record=once",
        ]
    )
    assert server.received == []
    assert contents(project) == {}


def test_none_fails_on_an_unrecorded_request(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    project.makepyfile(test_modes=module("First."))
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    before = contents(project)
    server.reset()
    project.makepyfile(test_modes=module("First.", "Second."))
    result = project.runpytest("--opdecide-record=none")
    result.assert_outcomes(failed=1)
    assert "CassetteMismatch" in result.stdout.str()
    assert "the test sent a request that is not in cassette" in error_text(result)
    assert server.received == []
    assert contents(project) == before


def test_once_records_then_replays(project: pytest.Pytester, server: OpenAIServer) -> None:
    project.makepyfile(test_modes=module("First.", "Second."))
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    assert len(server.completions) == 2
    assert prompts_of(project) == ["First.", "Second."]
    written = contents(project)

    server.reset()
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    project.runpytest().assert_outcomes(passed=1)
    assert server.received == []
    assert contents(project) == written

    # An existing cassette is not extended in "once" mode: a new request fails.
    project.makepyfile(test_modes=module("First.", "Second.", "Third."))
    result = project.runpytest("--opdecide-record=once")
    result.assert_outcomes(failed=1)
    assert "record mode once" in error_text(result)
    assert server.received == []
    assert contents(project) == written


def test_replay_needs_no_server(project: pytest.Pytester, server: OpenAIServer) -> None:
    project.makepyfile(test_modes=module("First."))
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    server.stop()
    project.runpytest().assert_outcomes(passed=1)


def test_new_episodes_replays_and_appends(project: pytest.Pytester, server: OpenAIServer) -> None:
    project.makepyfile(test_modes=module("First."))
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    server.reset()
    project.makepyfile(test_modes=module("First.", "Second."))
    project.runpytest("--opdecide-record=new_episodes").assert_outcomes(passed=1)
    assert len(server.completions) == 1  # only the new request reached the server
    assert prompts_of(project) == ["First.", "Second."]
    project.runpytest().assert_outcomes(passed=1)


def test_all_records_every_request_again(project: pytest.Pytester, server: OpenAIServer) -> None:
    project.makepyfile(test_modes=module("First.", "Old."))
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    assert ids_of(project) == ["chatcmpl-1", "chatcmpl-2"]
    project.makepyfile(test_modes=module("First.", "New."))
    project.runpytest("--opdecide-record=all").assert_outcomes(passed=1)
    assert len(server.completions) == 4  # nothing replayed
    # "First." is re-recorded in place of the old one; "Old." (not sent) is kept, as in vcrpy.
    assert sorted(zip(prompts_of(project), ids_of(project), strict=True)) == [
        ("First.", "chatcmpl-3"),
        ("New.", "chatcmpl-4"),
        ("Old.", "chatcmpl-2"),
    ]


def test_rewrite_keeps_only_what_the_test_sends_now(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    project.makepyfile(test_modes=module("First.", "Old."))
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    project.makepyfile(test_modes=module("First."))
    project.runpytest("--opdecide-record=rewrite").assert_outcomes(passed=1)
    assert prompts_of(project) == ["First."]
    assert ids_of(project) == ["chatcmpl-3"]
    project.runpytest().assert_outcomes(passed=1)


def test_a_test_without_requests_gets_an_empty_cassette(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    project.makepyfile(test_modes=module("First."))
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    # The code no longer calls the model: rewriting must not leave the old recording behind
    # (its replay would then fail on unplayed interactions, and re-recording could not fix it).
    project.makepyfile(test_modes=module())
    project.runpytest("--opdecide-record=rewrite").assert_outcomes(passed=1)
    assert interactions(cassette(project, "test_modes", "test_flow")) == []
    project.runpytest().assert_outcomes(passed=1)


def test_record_mode_from_ini_and_marker(project: pytest.Pytester, server: OpenAIServer) -> None:
    project.makepyfile(test_modes=module("First.", marker="cassette=True, record='once'"))
    project.runpytest().assert_outcomes(passed=1)
    assert len(server.completions) == 1
    assert cassette(project, "test_modes", "test_flow").is_file()


def test_live_writes_nothing(project: pytest.Pytester, server: OpenAIServer) -> None:
    project.makepyfile(test_modes=module("First."))
    project.runpytest("--opdecide-live").assert_outcomes(passed=1)
    assert len(server.completions) == 1
    assert contents(project) == {}

    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    written = contents(project)
    project.makepyfile(test_modes=module("First.", "Second."))
    project.runpytest("--opdecide-live").assert_outcomes(passed=1)
    assert len(server.completions) == 4
    assert contents(project) == written


def test_one_switch_moves_a_test_between_fake_cassette_and_live(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    """The same test body runs scripted, recorded, replayed and live: only the marker's
    ``cassette`` switch and the command line change."""
    script = "script=[pick('alpha'), pick('alpha')]"

    project.makepyfile(test_modes=module("First.", "Second.", marker=script))
    project.runpytest().assert_outcomes(passed=1)
    assert server.received == []  # scripted: no server, no file
    assert contents(project) == {}

    project.makepyfile(test_modes=module("First.", "Second.", marker=f"{script}, cassette=True"))
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    assert len(server.completions) == 2  # recorded
    written = contents(project)

    project.runpytest().assert_outcomes(passed=1)
    assert len(server.completions) == 2  # replayed: no request
    project.runpytest("--opdecide-live").assert_outcomes(passed=1)
    assert len(server.completions) == 4  # live: every request, nothing written
    assert contents(project) == written


ASYNC_TESTS = dedent(
    """
    import pytest
    from pytest_opdecide import decision

    OPTIONS = {"alpha": "A", "beta": "B"}

    @pytest.mark.opdecide(cassette=True)
    async def test_async_flow(runtime):
        assert await decision.make_async("First.", OPTIONS) == "A"
        assert await decision.make_async("Second.", OPTIONS) == "A"

    @pytest.mark.opdecide(cassette=True)
    @pytest.mark.parametrize("streamed", [False, True])
    async def test_async_agent(runtime, streamed):
        runtime.stream = streamed
        from pytest_opdecide import agent_async

        def lookup(order_id: str) -> str:
            \"\"\"Look up an order.\"\"\"
            return "found"

        assert await agent_async("Go.", tools=[lookup], choices=OPTIONS) == "A"
        assert [call.kind for call in runtime.calls] == ["turn", "tool_round"]
    """
)


def test_async_tests_record_and_replay(project: pytest.Pytester, server: OpenAIServer) -> None:
    """The async path of the real runtime records and replays too, and leaves no connection
    open (an unclosed socket would warn, and warnings are errors here)."""
    project.makepyfile(test_modes=ASYNC_TESTS)
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=3)
    assert len(server.completions) == 6
    server.stop()
    project.runpytest().assert_outcomes(passed=3)
    project.runpytest("--opdecide-live").assert_outcomes(failed=3)  # no server: live fails
