"""Structured decisions over the wire: OpenAICompatibleRuntime sends the menu's JSON schema as a
response format on decision calls, falls back when the server refuses it, and remembers.

Each behaviour runs on the sync and the async path. The refusals are the ones real servers
send: llama-cpp-python 0.3.36 (the local model's server) validates ``response_format.type``
against ``'text' | 'json_object'`` and answers 500; OpenAI answers 400 naming
``response_format``. A local HTTP server on 127.0.0.1 plays llama-cpp-python's part end to end.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from _openai_server import OpenAIServer, Received, Reply

from pytest_opdecide import DecisionError, decision
from pytest_opdecide.runtimes import (
    AuthenticationError,
    BadRequestError,
    OpenAICompatibleRuntime,
    ServerError,
)

from ._samples import MockServer, completion, event_stream, json_response, sse, text_stream
from .test_openai_runtime import KEY, Twin, runtime_for

OPTIONS = {
    "search": ("SEARCH", "Look the answer up first."),
    "answer": ("ANSWER", "Answer now."),
}
SCHEMA = decision.response_schema(OPTIONS)
JSON_SCHEMA = {"type": "json_schema", "json_schema": {"name": "decision", "schema": SCHEMA}}
JSON_OBJECT = {"type": "json_object", "schema": SCHEMA}

LLAMA_CPP_PYTHON_REFUSAL = {
    "error": {
        "message": (
            "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
            "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
            "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"/venv/lib/python3.11/"
            'site-packages/llama_cpp/server/app.py", line 376, in create_chat_completion\n'
            "    POST /v1/chat/completions"
        ),
        "type": "internal_server_error",
        "param": None,
        "code": None,
    }
}
"""What llama-cpp-python 0.3.36's server answers (status 500) to a ``json_schema`` format."""

OPENAI_REFUSAL = {
    "error": {
        "message": (
            "Invalid schema for response_format 'decision': schema must be a JSON Schema of "
            "'type: \"object\"', got 'type: \"None\"'."
        ),
        "type": "invalid_request_error",
        "param": "response_format",
        "code": None,
    }
}
"""What OpenAI answers (status 400) to a schema it will not take."""

CONTEXT_EXCEEDED = {
    "error": {
        "message": "This model's maximum context length is 2048 tokens.",
        "type": "invalid_request_error",
    }
}


@pytest.fixture(params=["sync", "async"])
def twin(request: pytest.FixtureRequest) -> Twin:
    """The sync and the async path, one test each."""
    return Twin(request.param)


def pick(name: str, number: int = 1) -> httpx.Response:
    return json_response(completion(json.dumps({"call": name}), number=number))


# --- what is sent ------------------------------------------------------------------------------


def test_a_decision_sends_the_menus_schema_and_the_text_menu(twin: Twin) -> None:
    server = MockServer(pick("answer"))
    runtime = runtime_for(server)
    assert runtime.structured_decisions == "auto"
    assert runtime.decision_format == "json_schema"

    assert twin.make("Search first? Pick one.", OPTIONS, runtime) == "ANSWER"

    body = server.last.body
    assert body["response_format"] == JSON_SCHEMA
    # The text menu is still the prompt: the schema only narrows what the model can write.
    menu = decision.render_options(OPTIONS)
    assert body["messages"] == [{"role": "user", "content": f"Search first? Pick one.\n\n{menu}"}]
    assert runtime.last_call.response_schema == SCHEMA


def test_the_repick_sends_it_too(twin: Twin) -> None:
    server = MockServer(json_response(completion('{"call": "browse"}')), pick("search", number=2))
    runtime = runtime_for(server)
    assert twin.make("Pick one.", OPTIONS, runtime) == "SEARCH"
    assert [call.kind for call in runtime.calls] == ["turn", "repick"]
    assert [seen.body["response_format"] for seen in server.seen] == [JSON_SCHEMA, JSON_SCHEMA]


def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: shipped"


def test_a_native_turn_with_choices_sends_it_only_when_it_offers_no_tools(twin: Twin) -> None:
    tool_turn = json_response(
        {
            **completion(None),
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "lookup", "arguments": '{"order": "A1"}'},
                            }
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ],
        }
    )
    server = MockServer(tool_turn, pick("answer", 2), pick("search", 3))
    runtime = runtime_for(server, tool_turns="native")
    assert twin.exec(runtime, "Check, then pick.", tools=[lookup], choices=OPTIONS) == "ANSWER"
    # With native tools the model must stay free to call one, and servers disagree on grammars
    # and tool calls together: the menu's schema is not sent (the request still carries it).
    # (Structured turns, the default, are in test_structured_turns.py.)
    assert [("response_format" in seen.body) for seen in server.seen] == [False, False]
    assert runtime.calls[0].response_schema == SCHEMA

    assert twin.exec(runtime, "Pick.", toolset="none", choices=OPTIONS) == "SEARCH"
    assert server.last.body["response_format"] == JSON_SCHEMA


def test_a_call_without_choices_sends_none(twin: Twin) -> None:
    server = MockServer(json_response(completion("Hello!")))
    twin.exec(runtime_for(server), "Say hello.")
    assert "response_format" not in server.last.body


def test_the_callers_response_format_wins(twin: Twin) -> None:
    server = MockServer(pick("answer"))
    runtime = runtime_for(server)
    own = {"type": "json_object"}
    assert twin.exec(runtime, "Pick.", choices=OPTIONS, response_format=own) == "ANSWER"
    assert server.last.body["response_format"] == own


@pytest.mark.parametrize(
    ("extra", "sent"),
    [({"response_format": {"type": "json_object"}}, {"type": "json_object"}), ({}, None)],
    ids=["replaced", "removed"],
)
def test_extra_body_replaces_or_removes_it(twin: Twin, extra: dict[str, Any], sent: Any) -> None:
    server = MockServer(pick("answer"))
    body_extra = extra or {"response_format": None}
    runtime = runtime_for(server, extra_body=body_extra)
    assert twin.make("Pick.", OPTIONS, runtime) == "ANSWER"
    assert server.last.body.get("response_format") == sent


def test_never_sends_the_text_menu_alone(twin: Twin) -> None:
    server = MockServer(pick("answer"))
    runtime = runtime_for(server, structured_decisions="never")
    assert runtime.decision_format == "text"
    assert twin.make("Pick.", OPTIONS, runtime) == "ANSWER"
    assert "response_format" not in server.last.body
    assert runtime.last_call.response_schema == SCHEMA  # still on the request, unsent


def test_request_body_shows_what_goes_out() -> None:
    runtime = OpenAICompatibleRuntime("http://127.0.0.1:8765/v1")
    request = decision_request()
    assert runtime.request_body(request)["response_format"] == JSON_SCHEMA
    runtime.decision_format = "json_object"
    assert runtime.request_body(request)["response_format"] == JSON_OBJECT
    runtime.decision_format = "text"
    assert "response_format" not in runtime.request_body(request)


def decision_request() -> Any:
    """The request ``decision.make("Pick.", OPTIONS)`` sends, caught by a fake."""
    from fake_runtimes import ScriptedRuntime

    fake = ScriptedRuntime('{"call": "answer"}')
    decision.make("Pick.", OPTIONS, runtime=fake)
    return fake.last_call.request


@pytest.mark.parametrize("value", ["sometimes", "", None, True])
def test_a_bad_setting_is_refused(value: Any) -> None:
    with pytest.raises(ValueError, match="structured_decisions") as caught:
        OpenAICompatibleRuntime("http://127.0.0.1:8765/v1", structured_decisions=value)
    assert str(caught.value) == (
        f"structured_decisions must be 'auto', 'always' or 'never', got {value!r}"
    )


# --- refusals ----------------------------------------------------------------------------------


def test_auto_falls_back_to_the_text_menu_and_remembers(twin: Twin) -> None:
    server = MockServer(
        json_response(OPENAI_REFUSAL, status=400), pick("answer", 2), pick("search", 3)
    )
    runtime = runtime_for(server)
    assert twin.make("Pick.", OPTIONS, runtime) == "ANSWER"
    refused, accepted = server.seen
    assert refused.body["response_format"] == JSON_SCHEMA
    assert "response_format" not in accepted.body
    assert accepted.body["messages"] == refused.body["messages"]
    assert runtime.decision_format == "text"
    assert [call.kind for call in runtime.calls] == ["turn"]  # one model call, answered

    assert twin.make("Pick again.", OPTIONS, runtime) == "SEARCH"
    assert "response_format" not in server.last.body
    server.assert_done()


def test_llama_cpp_pythons_refusal_switches_to_its_json_object_form(twin: Twin) -> None:
    server = MockServer(
        json_response(LLAMA_CPP_PYTHON_REFUSAL, status=500),
        pick("answer", 2),
        pick("search", 3),
    )
    runtime = runtime_for(server)
    assert twin.make("Pick.", OPTIONS, runtime) == "ANSWER"
    assert [seen.body["response_format"] for seen in server.seen] == [JSON_SCHEMA, JSON_OBJECT]
    assert runtime.decision_format == "json_object"

    assert twin.make("Pick again.", OPTIONS, runtime) == "SEARCH"
    assert server.last.body["response_format"] == JSON_OBJECT
    server.assert_done()


def test_both_forms_refused_leave_the_text_menu(twin: Twin) -> None:
    server = MockServer(
        json_response(LLAMA_CPP_PYTHON_REFUSAL, status=500),
        json_response(OPENAI_REFUSAL, status=400),
        pick("answer", 3),
    )
    runtime = runtime_for(server)
    assert twin.make("Pick.", OPTIONS, runtime) == "ANSWER"
    assert [seen.body.get("response_format") for seen in server.seen] == [
        JSON_SCHEMA,
        JSON_OBJECT,
        None,
    ]
    assert runtime.decision_format == "text"


def test_always_raises_the_refusal(twin: Twin) -> None:
    server = MockServer(json_response(OPENAI_REFUSAL, status=400))
    runtime = runtime_for(server, structured_decisions="always")
    with pytest.raises(BadRequestError) as caught:
        twin.make("Pick.", OPTIONS, runtime)
    assert caught.value.server_message.startswith("Invalid schema for response_format 'decision'")
    assert runtime.decision_format == "json_schema"
    server.assert_done()


def test_always_still_takes_llama_cpp_pythons_form(twin: Twin) -> None:
    server = MockServer(
        json_response(LLAMA_CPP_PYTHON_REFUSAL, status=500),
        json_response(OPENAI_REFUSAL, status=400),
    )
    runtime = runtime_for(server, structured_decisions="always")
    with pytest.raises(BadRequestError):
        twin.make("Pick.", OPTIONS, runtime)
    assert [seen.body["response_format"] for seen in server.seen] == [JSON_SCHEMA, JSON_OBJECT]
    assert runtime.decision_format == "json_object"


@pytest.mark.parametrize(
    ("response", "error"),
    [
        (json_response(CONTEXT_EXCEEDED, status=400), BadRequestError),
        (json_response({"error": {"message": "upstream crashed"}}, status=500), ServerError),
        (
            json_response({"error": {"message": "no access to response_format"}}, status=401),
            AuthenticationError,
        ),
    ],
    ids=["400-other", "500-other", "401-naming-it"],
)
def test_other_failures_are_not_refusals(
    twin: Twin, response: httpx.Response, error: type[Exception]
) -> None:
    server = MockServer(response)
    runtime = runtime_for(server)
    with pytest.raises(error):
        twin.make("Pick.", OPTIONS, runtime)
    server.assert_done()  # no second request
    assert runtime.decision_format == "json_schema"


def test_a_server_that_ignores_it_is_read_as_text(twin: Twin) -> None:
    # Some servers take the format and ignore it: nothing to detect, the reply is parsed as
    # any reply is, and a bad one gets its re-pick.
    server = MockServer(
        json_response(completion("Searching first sounds wise.")),
        json_response(completion('I pick {"call": "search"}', number=2)),
    )
    runtime = runtime_for(server)
    assert twin.make("Pick.", OPTIONS, runtime) == "SEARCH"
    assert runtime.decision_format == "json_schema"


def test_a_streamed_call_falls_back_too(twin: Twin) -> None:
    server = MockServer(
        json_response(OPENAI_REFUSAL, status=400),
        event_stream(sse(text_stream(['{"call": ', '"answer"}']))),
    )
    runtime = runtime_for(server, stream=True)
    assert twin.make("Pick.", OPTIONS, runtime) == "ANSWER"
    assert [seen.body.get("response_format") for seen in server.seen] == [JSON_SCHEMA, None]
    assert all(seen.body["stream"] for seen in server.seen)


def test_the_key_stays_out_of_a_refusal(twin: Twin) -> None:
    echoed = {"error": {"message": f"response_format refused for key {KEY}"}}
    server = MockServer(json_response(echoed, status=400))
    runtime = runtime_for(server, structured_decisions="always")
    with pytest.raises(BadRequestError) as caught:
        twin.make("Pick.", OPTIONS, runtime)
    assert KEY not in str(caught.value)
    assert KEY not in caught.value.body


# --- a real HTTP server that validates the format as llama-cpp-python does ---------------------


def llama_cpp_python(request: Received) -> Reply:
    """llama-cpp-python 0.3.36's check of the format, then a pick its grammar would allow."""
    body = request.body if isinstance(request.body, dict) else {}
    form = body.get("response_format")
    if isinstance(form, dict) and form.get("type") not in ("text", "json_object"):
        return Reply(text=LLAMA_CPP_PYTHON_REFUSAL["error"]["message"], status=500)
    if isinstance(form, dict) and "schema" in form:
        allowed = [b["properties"]["call"]["enum"][0] for b in form["schema"]["anyOf"]]
        return Reply(text=json.dumps({"call": allowed[-1]}))
    return Reply(text="Well, it depends on what the customer wants.")


@pytest.fixture
def llama_server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as server:
        yield server


def decide_twice(twin: Twin, runtime: OpenAICompatibleRuntime) -> list[Any]:
    """Two decisions on one runtime, then its connections closed on the loop that opened them."""
    prompts = ["Pick one.", "Pick again."]

    def outcome(call: Any) -> Any:
        try:
            return call()
        except DecisionError as error:
            return error

    if twin.mode == "sync":
        with runtime:
            return [
                outcome(lambda p=p: decision.make(p, OPTIONS, runtime=runtime)) for p in prompts
            ]

    async def run() -> list[Any]:
        async with runtime:
            results = []
            for prompt in prompts:
                try:
                    results.append(await decision.make_async(prompt, OPTIONS, runtime=runtime))
                except DecisionError as error:
                    results.append(error)
            return results

    return asyncio.run(run())


def test_against_a_local_server_that_refuses_json_schema(
    twin: Twin, llama_server: OpenAIServer
) -> None:
    llama_server.script(*[llama_cpp_python] * 3)
    runtime = OpenAICompatibleRuntime(llama_server.url, model="local")
    assert decide_twice(twin, runtime) == ["ANSWER", "ANSWER"]
    forms = [r.body.get("response_format") for r in llama_server.completions]
    assert forms == [JSON_SCHEMA, JSON_OBJECT, JSON_OBJECT]
    assert runtime.decision_format == "json_object"


def test_against_a_local_server_with_the_text_menu_alone(
    twin: Twin, llama_server: OpenAIServer
) -> None:
    llama_server.script(*[llama_cpp_python] * 4)
    runtime = OpenAICompatibleRuntime(llama_server.url, model="local", structured_decisions="never")
    outcomes = decide_twice(twin, runtime)
    assert all(isinstance(outcome, DecisionError) for outcome in outcomes)
    assert [r.body.get("response_format") for r in llama_server.completions] == [None] * 4


# --- cassettes recorded before structured decisions --------------------------------------------

OLD_CASSETTE = Path(__file__).parent / "data" / "recorded_before_structured_decisions.yaml"
"""A cassette the runtime recorded against the local model before it sent the menu's schema."""

OLD_TEST = """
import pytest

from pytest_opdecide import DecisionError, decision

OPTIONS = {
    "refund": ("REFUND", "Give the customer their money back."),
    "close": ("CLOSE", "Nothing is left to do."),
    "escalate": ("ESCALATE", "Ask a human to look."),
}


@pytest.mark.opdecide(cassette=True)
def test_repick(runtime):
    with pytest.raises(DecisionError):
        decision.make(
            "A customer was charged twice for order 1234. Which step comes next?", OPTIONS
        )
    assert [call.kind for call in runtime.calls] == ["turn", "repick"]
"""

OLD_CONFTEST = """
import pytest


@pytest.hookimpl
def pytest_opdecide_runtime(request, settings):
    from pytest_opdecide.runtimes import OpenAICompatibleRuntime

    return OpenAICompatibleRuntime(
        settings.base_url,
        model=settings.model,
        extra_body={"max_tokens": 64},
        structured_decisions=settings.structured_decisions,
    )
"""


@pytest.fixture
def old_project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv("OPDECIDE_LIVE_URL", raising=False)
    pytester.makeini(
        "[pytest]\naddopts = --strict-markers --strict-config -p no:cacheprovider\n"
        "filterwarnings = error\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makeconftest(OLD_CONFTEST)
    pytester.makepyfile(test_old=OLD_TEST)
    folder = pytester.path / "cassettes" / "test_old"
    folder.mkdir(parents=True)
    shutil.copy(OLD_CASSETTE, folder / "test_repick.yaml")
    return pytester


def test_an_old_cassette_fails_with_the_diff_and_both_fixes(old_project: pytest.Pytester) -> None:
    result = old_project.runpytest()
    result.assert_outcomes(failed=1)
    text = " ".join(result.stdout.str().split())
    assert "the test sent a request that is not in cassette" in text
    assert "+response_format:" in result.stdout.str()
    assert (
        "The request now carries a response_format that the recording lacks: the runtime sends "
        "the menu's JSON schema with decision calls (structured decisions). To replay the "
        "recording as it is, send the text menu alone: --opdecide-structured-decisions=never "
        "(opdecide_structured_decisions = never in the ini file, or "
        "OpenAICompatibleRuntime(structured_decisions='never'))."
    ) in text
    assert "pytest 'test_old.py::test_repick' --opdecide-record=rewrite" in text


@pytest.mark.parametrize(
    "how",
    [
        ["--opdecide-structured-decisions=never"],
        ["-o", "opdecide_structured_decisions=never"],
    ],
    ids=["command-line", "ini"],
)
def test_an_old_cassette_replays_with_the_text_menu_alone(
    old_project: pytest.Pytester, how: list[str]
) -> None:
    old_project.runpytest(*how).assert_outcomes(passed=1)


# --- a real server, recorded -------------------------------------------------------------------


def refund(amount: float, reason: Literal["late", "lost", "damaged"]) -> str:
    """Refund the customer for an order.

    Args:
        amount: Amount to refund, in EUR.
    """
    return f"refunded {amount:.2f} ({reason})"


REAL_OPTIONS = {
    "refund": refund,
    "close": ("CLOSED", "Nothing is left to do."),
    "escalate": ("ESCALATED", "Ask a human to look."),
}


@pytest.mark.opdecide(cassette=True)
def test_the_local_model_is_held_to_the_menu(runtime: Any) -> None:
    """Recorded from llama-cpp-python (``scripts/local-model``): it refuses ``json_schema`` with
    a 500, takes the schema in its ``json_object`` form, and its grammar yields valid picks."""
    first = decision.make(
        "Order A-1002 arrived broken; the customer paid 30 EUR. Pick the next step.",
        REAL_OPTIONS,
    )
    second = decision.make(
        "The customer says thanks, all is well. Pick the next step.", REAL_OPTIONS
    )
    assert runtime.decision_format == "json_object"
    for outcome in (first, second):
        assert outcome in ("CLOSED", "ESCALATED") or outcome.startswith("refunded ")
    calls = runtime.calls
    assert [call.kind for call in calls] == ["turn", "turn"]  # no re-pick was needed
    assert all(call.response_schema == decision.response_schema(REAL_OPTIONS) for call in calls)
