"""OpenAICompatibleRuntime against the real local model (opt-in).

Runs only when ``OPDECIDE_LIVE_URL`` names the server's base URL, or with ``--opdecide-live``
(the plugin skips ``opdecide_live`` tests otherwise)::

    scripts/local-model start
    OPDECIDE_LIVE_URL=$(scripts/local-model url) pytest tests/runtimes -m opdecide_live

The model is SmolLM2-135M: these tests check the shape of what comes back and the invariants
of the protocol, never that an answer is right. Where two replies are compared, each request
follows the same other request (:func:`settle`): llama.cpp reuses the cached prefix of the
previous prompt, so the same prompt twice in a row can get two different replies even at
temperature 0, while the same prompt after the same cache state gets the same reply.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_opdecide import Message, ModelRequest, decision, tool_spec
from pytest_opdecide.runtimes import OpenAICompatibleRuntime

pytestmark = pytest.mark.opdecide_live

PLAIN = "smollm2-135m-instruct"
TOOLS = "smollm2-135m-instruct-tools"
OPTIONS = {
    "search": ("SEARCH", "Look the answer up first."),
    "answer": ("ANSWER", "Answer now."),
}


def get_weather(city: str) -> str:
    """Get the current weather of a city."""
    return f"Sunny and 21 C in {city}."


@pytest.fixture
def live_url(opdecide_settings: Any) -> str:
    """The server's base URL, e.g. ``http://127.0.0.1:8765/v1``.

    The plugin's ``base_url`` setting: ``--opdecide-base-url``, else ``$OPDECIDE_LIVE_URL``,
    else the local model server's default URL.
    """
    url = opdecide_settings.base_url
    assert isinstance(url, str), "no base URL: set OPDECIDE_LIVE_URL or --opdecide-base-url"
    return url


@pytest.fixture
def runtime(live_url: str) -> Iterator[OpenAICompatibleRuntime]:
    """A runtime on the plain alias with short replies."""
    with OpenAICompatibleRuntime(
        live_url, model=PLAIN, timeout_s=120, extra_body={"max_tokens": 48}
    ) as live:
        yield live


def settle(live_url: str, model: str = PLAIN) -> None:
    """Bring the server's prompt cache to one known state before a request whose reply is
    compared with another's.

    After this request, the cache holds its prompt: the next prompt shares only the chat
    template's opening with it, so two requests that each follow :func:`settle` are evaluated
    from the same state and, at temperature 0, answer the same.
    """
    with OpenAICompatibleRuntime(
        live_url, model=model, timeout_s=120, extra_body={"max_tokens": 1}
    ) as other:
        other.exec("Reply with one word: ready.")


def _request(text: str, **kwargs: Any) -> ModelRequest:
    return ModelRequest(
        "turn",
        (Message("user", ({"type": "text", "text": text},)),),
        **kwargs,
    )


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def test_plain_reply(runtime: OpenAICompatibleRuntime) -> None:
    text = runtime.exec("Say hello in one short sentence.")
    assert isinstance(text, str)
    assert text.strip()
    reply = runtime.trace.calls[-1].reply
    assert reply is not None
    assert reply.usage.prompt_tokens > 0
    assert reply.usage.completion_tokens > 0
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    assert isinstance(reply.model, str)
    assert reply.raw["choices"][0]["message"]["role"] == "assistant"


async def test_plain_reply_async(live_url: str) -> None:
    async with OpenAICompatibleRuntime(
        live_url, model=PLAIN, timeout_s=120, extra_body={"max_tokens": 32}
    ) as live:
        text = await live.exec_async("Name one colour.")
    assert isinstance(text, str)
    assert text.strip()


def test_replies_are_repeatable_at_temperature_zero(
    runtime: OpenAICompatibleRuntime, live_url: str
) -> None:
    settle(live_url)
    first = runtime.exec("Say hello in one short sentence.")
    settle(live_url)
    second = runtime.exec("Say hello in one short sentence.")
    assert first == second


def test_decision_make_picks_an_option(runtime: OpenAICompatibleRuntime) -> None:
    prompt = (
        "You must decide whether to search before answering the question 'What is 2 + 2?'. "
        "Reply with JSON only."
    )
    # Structured decisions (the default) hold the reply to the menu: a valid pick, first time.
    assert decision.make(prompt, OPTIONS, runtime=runtime) in {"SEARCH", "ANSWER"}
    calls = runtime.trace.calls
    assert [record.kind for record in calls] == ["turn"]
    for record in calls:
        assert record.tools == []  # A pure decision never offers tools.
        assert record.options == ["search", "answer"]
        assert record.error is None


def test_structured_decisions_hold_the_model_to_the_menu(live_url: str) -> None:
    """With the menu's schema (the default), the server's grammar yields a valid pick; the
    local model's server takes the schema in its json_object form."""

    def refund(amount: float, reason: str) -> str:
        """Refund the customer."""
        return f"refunded {amount:.2f} ({reason})"

    options = {"refund": refund, **OPTIONS}
    with OpenAICompatibleRuntime(live_url, model=PLAIN, timeout_s=120) as live:
        outcome = decision.make(
            "The customer was charged twice for order A-1. Pick the next step.",
            options,
            runtime=live,
        )
        assert outcome in {"SEARCH", "ANSWER"} or outcome.startswith("refunded ")
        assert live.decision_format in ("json_schema", "json_object")
        assert [record.kind for record in live.calls] == ["turn"]  # no re-pick needed


def test_the_schema_converts_to_a_llama_cpp_grammar() -> None:
    """Every schema of the measurement set compiles with llama-cpp-python's own converter (a
    schema it cannot compile would be dropped for plain JSON without a word)."""
    root = Path(__file__).resolve().parents[2]
    python = root / ".local-model" / "venv" / "bin" / "python"
    if not python.exists():
        pytest.skip("no local model build (scripts/local-model build)")
    from benchmarks.decision_prompts import PROMPTS

    schemas = [decision.response_schema(item.options) for item in PROMPTS]
    check = (
        "import json, sys\n"
        "from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf\n"
        "for schema in json.load(sys.stdin):\n"
        "    LlamaGrammar.from_string(json_schema_to_gbnf(json.dumps(schema)), verbose=False)\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [str(python), "-c", check],
        input=json.dumps(schemas),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"


def test_a_forced_tool_call(live_url: str) -> None:
    forced = {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}
    with OpenAICompatibleRuntime(
        live_url, model=TOOLS, timeout_s=120, extra_body={"max_tokens": 48, **forced}
    ) as live:
        spec, _ = tool_spec(get_weather)
        reply = live.call_model(_request("What is the weather in Paris?", tools=(spec,)))
    [call] = reply.tool_calls
    assert call.name == "get_weather"  # Not the legacy "get_weather:".
    assert call.id
    if isinstance(call.arguments, str):
        # Kept as text only when it is not a JSON object (e.g. cut off by max_tokens).
        assert not _is_json_object(call.arguments)
    else:
        assert set(call.arguments) <= {"city"}


def test_a_native_tool_call_in_auto_mode(live_url: str) -> None:
    with OpenAICompatibleRuntime(
        live_url, model=TOOLS, timeout_s=120, extra_body={"max_tokens": 48}
    ) as live:
        spec, _ = tool_spec(get_weather)
        reply = live.call_model(
            _request("What is the weather in Paris? Use the tool.", tools=(spec,))
        )
    # The function-calling template of the tools alias answers with a native call.
    assert [call.name for call in reply.tool_calls] == ["get_weather"]
    body = live.request_body(_request("x", tools=(spec,)))
    assert body["tool_choice"] == "auto"


def test_an_agent_turn_with_tools_ends_in_a_valid_pick(live_url: str) -> None:
    seen: list[str] = []

    def weather(city: str) -> str:
        """Get the current weather of a city."""
        seen.append(city)
        return f"Heavy rain and 9 C in {city}."

    # The user's defaults (no max_tokens of ours, a structured turn) but for the time limit: a
    # shared machine under load can take more than 60 s to read the turn's prompt.
    with OpenAICompatibleRuntime(live_url, model=TOOLS, timeout_s=300) as live:
        outcome = live.exec(
            "We planned a picnic in Paris today. Check the weather, then decide.",
            tools=[weather],
            choices={"go": ("GO", "Have the picnic."), "stay": ("STAY", "Stay in.")},
            max_iterations=3,
        )
    assert outcome in {"GO", "STAY"}
    calls = live.trace.calls
    assert calls[0].kind == "turn"
    assert all(record.error is None for record in calls)
    assert len(seen) == sum(len(r.reply.tool_calls) for r in calls if r.reply is not None) <= 1


def test_streamed_reply(live_url: str) -> None:
    with OpenAICompatibleRuntime(
        live_url, model=PLAIN, timeout_s=120, stream=True, extra_body={"max_tokens": 32}
    ) as live:
        settle(live_url)
        reply = live.call_model(_request("Say hello in one short sentence."))
        settle(live_url)
        text = live.exec("Say hello in one short sentence.")
    assert reply.text.strip()
    assert reply.text == text  # the same request, from the same cache state
    assert isinstance(reply.raw, list)
    assert len(reply.raw) >= 2
    assert all(event["object"] == "chat.completion.chunk" for event in reply.raw)


def test_streamed_equals_unstreamed(live_url: str) -> None:
    prompt = "List three fruits."
    replies = []
    for stream in (False, True):
        with OpenAICompatibleRuntime(
            live_url, model=PLAIN, timeout_s=120, stream=stream, extra_body={"max_tokens": 32}
        ) as live:
            settle(live_url)
            replies.append(live.exec(prompt))
    assert replies[0] == replies[1]


def test_a_streamed_forced_tool_call(live_url: str) -> None:
    forced = {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}
    with OpenAICompatibleRuntime(
        live_url,
        model=TOOLS,
        timeout_s=120,
        stream=True,
        extra_body={"max_tokens": 48, **forced},
    ) as live:
        spec, _ = tool_spec(get_weather)
        request = _request("What is the weather in Paris?", tools=(spec,))
        settle(live_url, TOOLS)
        streamed = live.call_model(request)
    with OpenAICompatibleRuntime(
        live_url, model=TOOLS, timeout_s=120, extra_body={"max_tokens": 48, **forced}
    ) as live:
        settle(live_url, TOOLS)
        whole = live.call_model(request)
    [call] = streamed.tool_calls
    assert call.name == "get_weather"
    # The stream assembles the same arguments as the whole reply carries.
    assert call.arguments == whole.tool_calls[0].arguments
