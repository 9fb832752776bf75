"""A runtime built on the official ``openai`` client (which sends through ``httpx2``): recorded,
scrubbed, replayed streamed and not, sync and async, and failing with the diff on a mismatch.

vcrpy records and replays this client (it patches httpx2's transports); the cassette layer's
matching, scrubbing and diff apply to it as to this package's own runtimes.
"""

from __future__ import annotations

import pytest
from _openai_server import OpenAIServer

from ._support import KEY, dedent, error_text, interactions

openai = pytest.importorskip("openai")
httpx2 = pytest.importorskip("httpx2")

CONFTEST = dedent(
    f"""
    import openai
    import pytest
    from pytest_opdecide import ModelReply, Runtime

    KEY = {KEY!r}


    class OpenAIClientRuntime(Runtime):
        \"\"\"A user's runtime: the official client, streamed or not, sync and async.\"\"\"

        def __init__(self, base_url, model, stream):
            super().__init__(model=model)
            self.base_url, self.stream = base_url, stream

        def _body(self, request):
            return dict(
                model=request.model or self.model,
                messages=[{{"role": "user", "content": request.prompt}}],
                temperature=0,
            )

        def call_model(self, request):
            client = openai.OpenAI(base_url=self.base_url, api_key=KEY, max_retries=0)
            with client:
                if not self.stream:
                    completion = client.chat.completions.create(**self._body(request))
                    return ModelReply(text=completion.choices[0].message.content)
                chunks = client.chat.completions.create(**self._body(request), stream=True)
                return ModelReply(text="".join(
                    chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices
                ))

        async def call_model_async(self, request):
            client = openai.AsyncOpenAI(base_url=self.base_url, api_key=KEY, max_retries=0)
            async with client:
                if not self.stream:
                    completion = await client.chat.completions.create(**self._body(request))
                    return ModelReply(text=completion.choices[0].message.content)
                chunks = await client.chat.completions.create(**self._body(request), stream=True)
                parts = [
                    chunk.choices[0].delta.content or "" async for chunk in chunks if chunk.choices
                ]
                return ModelReply(text="".join(parts))


    @pytest.hookimpl
    def pytest_opdecide_runtime(request, settings):
        stream = "streamed" in request.node.name
        return OpenAIClientRuntime(settings.base_url, settings.model, stream)
    """
)

TESTS = dedent(
    """
    import pytest
    from pytest_opdecide import decision

    OPTIONS = {"refund": "REFUND", "wait": "WAIT"}

    @pytest.mark.opdecide(cassette=True)
    @pytest.mark.parametrize("kind", ["plain", "streamed"])
    def test_sync(runtime, kind):
        assert decision.make("Order A1 never came.", OPTIONS) == "REFUND"
        assert runtime.exec("Say hello.") == "Hello from the test server."

    @pytest.mark.opdecide(cassette=True)
    @pytest.mark.parametrize("kind", ["plain", "streamed"])
    async def test_async(runtime, kind):
        assert await decision.make_async("Order A1 never came.", OPTIONS) == "REFUND"
        assert await runtime.exec_async("Say hello.") == "Hello from the test server."
    """
)


def test_the_openai_client_sends_through_httpx2() -> None:
    """What the tests below prove holds for httpx2, the stack of current openai releases."""
    assert issubclass(openai.DefaultHttpxClient, httpx2.Client)
    assert issubclass(openai.DefaultAsyncHttpxClient, httpx2.AsyncClient)


@pytest.fixture
def openai_project(project: pytest.Pytester) -> pytest.Pytester:
    project.makeconftest(CONFTEST)
    project.makepyfile(test_client=TESTS)
    return project


def test_the_openai_client_records_and_replays(
    openai_project: pytest.Pytester, server: OpenAIServer
) -> None:
    openai_project.runpytest("--opdecide-record=once").assert_outcomes(passed=4)
    assert len(server.completions) == 8
    assert sum(bool(request.body.get("stream")) for request in server.completions) == 4

    folder = openai_project.path / "cassettes" / "test_client"
    for test in ("test_sync", "test_async"):
        (streamed,) = folder.glob(f"{test}-streamed-*.yaml")
        (plain,) = folder.glob(f"{test}-plain-*.yaml")
        for path in (streamed, plain):
            text = path.read_text(encoding="utf-8")
            assert KEY not in text  # the client's key is scrubbed
            assert "authorization: <REDACTED>" in text
        (first, _) = interactions(streamed)
        events = first["response"]["body"]["string"]["events"]
        assert events[-1] == {"data": "[DONE]"}  # stored event by event
        (first, _) = interactions(plain)
        assert first["request"]["body"]["json"]["messages"][0]["content"].startswith(
            "Order A1 never came."
        )

    server.stop()  # replay needs no server
    openai_project.runpytest().assert_outcomes(passed=4)


def test_a_changed_request_fails_with_the_diff(
    openai_project: pytest.Pytester, server: OpenAIServer
) -> None:
    openai_project.runpytest("--opdecide-record=once").assert_outcomes(passed=4)
    server.reset()
    openai_project.makepyfile(test_client=TESTS.replace("Order A1", "Order B2"))
    result = openai_project.runpytest()
    result.assert_outcomes(failed=4)
    message = error_text(result)
    assert "CassetteMismatch: the test sent a request that is not in cassette" in message
    assert "-    Order A1 never came." in message
    assert "+    Order B2 never came." in message
    assert KEY not in result.stdout.str()
    assert server.received == []


def test_replayed_interactions_count_as_played(
    openai_project: pytest.Pytester, server: OpenAIServer
) -> None:
    """Interactions replayed by vcrpy (the openai client) are not reported as unplayed, and
    those it never replayed are."""
    openai_project.runpytest("--opdecide-record=once").assert_outcomes(passed=4)
    fewer = TESTS.replace('assert runtime.exec("Say hello.")', "pass  #").replace(
        'assert await runtime.exec_async("Say hello.")', "pass  #"
    )
    assert fewer.count("pass  #") == 2
    openai_project.makepyfile(test_client=fewer)
    result = openai_project.runpytest()
    result.assert_outcomes(passed=4, errors=4)
    assert "1 of 2 recorded interaction(s) in " in error_text(result)
    assert "    #1: POST http://127.0.0.1:" in error_text(result)
