"""ThreadState.decide and decide(state, options): at rest and during execution, and never
touching messages, tools or turns."""

from __future__ import annotations

from collections.abc import Iterator, MutableSequence
from typing import Any, overload

import httpx
import pytest
from _questions_support import Backend, logprobs_reply

from pytest_opdecide.questions import (
    AbortController,
    BaseDecisionProvider,
    BooleanAnswer,
    ConfigSlot,
    DecideOptions,
    DecisionProviderFactory,
    DecisionRequest,
    DecisionResult,
    InvalidRequestError,
    ProviderError,
    ProviderFactoryConfig,
    ThreadState,
    decide,
    openai_compatible,
)


class SpyMessages(MutableSequence[Any]):
    """A message list that records every access."""

    def __init__(self, items: list[Any]) -> None:
        self._items = items
        self.accesses: list[str] = []

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> MutableSequence[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        self.accesses.append("getitem")
        return self._items[index]

    def __setitem__(self, index: Any, value: Any) -> None:
        self.accesses.append("setitem")
        self._items[index] = value

    def __delitem__(self, index: Any) -> None:
        self.accesses.append("delitem")
        del self._items[index]

    def __len__(self) -> int:
        self.accesses.append("len")
        return len(self._items)

    def __iter__(self) -> Iterator[Any]:
        self.accesses.append("iter")
        return iter(self._items)

    def insert(self, index: int, value: Any) -> None:
        self.accesses.append("insert")
        self._items.insert(index, value)


class Echo(BaseDecisionProvider):
    """Records the requests it gets; P(true) is 0.75."""

    name = "echo"

    def __init__(self) -> None:
        self.requests: list[DecisionRequest] = []

    async def decide_validated(self, request: DecisionRequest) -> DecisionResult:
        self.requests.append(request)
        return DecisionResult(
            model="echo-1", answers={q: BooleanAnswer(probability=0.75) for q in request.questions}
        )


def options(provider: Any) -> dict[str, Any]:
    return {
        "provider": provider,
        "model": "echo-1",
        "context": {"only": "this"},
        "questions": {"ok": {"type": "boolean", "instructions": "Is it ok?"}},
    }


def spied_state(execution: object | None) -> tuple[ThreadState, SpyMessages, list[str]]:
    events: list[str] = []
    messages = SpyMessages([{"role": "user", "content": "SECRET HISTORY"}])
    state = ThreadState(
        thread_id="t1",
        messages=messages,
        execution=execution,
        tools={"delete_everything": lambda **_: events.append("tool")},
        on_turn=lambda _state: events.append("turn"),
    )
    return state, messages, events


@pytest.mark.parametrize("execution", [None, object()], ids=["at rest", "during execution"])
async def test_decide_reads_and_changes_no_message_runs_no_tool_starts_no_turn(
    execution: object | None,
) -> None:
    state, messages, events = spied_state(execution)
    provider = Echo()
    result = await state.decide(options(provider))
    assert result.boolean("ok").probability == 0.75
    assert messages.accesses == []
    assert messages._items == [{"role": "user", "content": "SECRET HISTORY"}]
    assert events == []
    assert state.execution is execution
    (request,) = provider.requests
    assert request.context == {"only": "this"}
    assert "SECRET HISTORY" not in request.model_dump_json()


def test_the_spies_do_observe_the_explicit_apis() -> None:
    # The positive control: the hooks the test above watches do fire when used.
    state, messages, events = spied_state(None)
    state.add_message({"role": "assistant", "content": "answer: 0.75"})
    state.run_tool("delete_everything")
    state.start_turn()
    assert "insert" in messages.accesses
    assert events == ["tool", "turn"]


async def test_the_module_helper_equals_the_method() -> None:
    provider = Echo()
    state = ThreadState()
    by_method = await state.decide(options(provider))
    by_helper = await decide(state, options(provider))
    assert by_method == by_helper
    assert provider.requests[0] == provider.requests[1]


async def test_decide_options_object() -> None:
    provider = Echo()
    opts = DecideOptions(
        provider=provider,
        model="echo-1",
        context="text",
        questions={"ok": {"type": "boolean", "instructions": "?"}},  # type: ignore[dict-item]
    )
    result = await ThreadState().decide(opts)
    assert result.model == "echo-1"
    assert type(provider.requests[0]) is DecisionRequest
    assert "provider" not in opts.model_dump()


async def test_a_malformed_request_fails_before_the_provider_is_called() -> None:
    provider = Echo()
    bad = {**options(provider), "context": {"when": object()}}
    with pytest.raises(InvalidRequestError):
        await ThreadState().decide(bad)
    with pytest.raises(InvalidRequestError):
        await ThreadState().decide({**options(provider), "questions": {}})
    empty = DecideOptions(provider=provider, model="m", context="", questions={})
    with pytest.raises(InvalidRequestError):
        await ThreadState().decide(empty)
    assert provider.requests == []


async def test_an_aborted_signal_rejects_before_anything_else() -> None:
    controller = AbortController()
    controller.abort("gone")
    provider = Echo()
    with pytest.raises(ProviderError) as caught:
        await ThreadState().decide(
            {**options(provider), "questions": {}, "signal": controller.signal}
        )
    assert caught.value.code == "timeout"
    assert provider.requests == []


async def test_a_provider_is_required() -> None:
    data = options(Echo())
    del data["provider"]
    with pytest.raises(TypeError, match="needs a provider"):
        await ThreadState().decide(data)
    with pytest.raises(TypeError, match="must be a decision provider factory"):
        await ThreadState().decide({**data, "provider": 42})


async def test_a_factory_is_built_with_the_threads_resolved_config() -> None:
    built: list[ProviderFactoryConfig] = []

    def build(config: ProviderFactoryConfig) -> Echo:
        built.append(config)
        return Echo()

    factory = DecisionProviderFactory(
        build, config_slots={"api_key": ConfigSlot("secret", default_env="ECHO_KEY")}
    )
    state = ThreadState(environ={"ECHO_KEY": "from-env"})
    await state.decide(options(factory))
    assert built[0].api_key == "from-env"

    def plain(config: ProviderFactoryConfig) -> Echo:
        built.append(config)
        return Echo()

    await ThreadState(provider_config=ProviderFactoryConfig(base_url="http://x")).decide(
        options(plain)
    )
    assert built[-1].base_url == "http://x"


async def test_thread_overrides_do_not_carry_the_runtime_key_elsewhere() -> None:
    backend = Backend(lambda body: logprobs_reply([("yes", -0.1), ("no", -2.5)]))
    state = ThreadState(
        provider_config=ProviderFactoryConfig(
            api_key="runtime-secret", transport=backend.transport
        ),
        provider_overrides={"base_url": "http://user-chosen.test/v1"},
        environ={},
    )
    await state.decide(options(openai_compatible))
    (request,) = backend.requests
    assert request.url == httpx.URL("http://user-chosen.test/v1/chat/completions")
    assert "authorization" not in request.headers

    plain = ThreadState(
        provider_config=ProviderFactoryConfig(
            api_key="runtime-secret", base_url="http://runtime.test/v1", transport=backend.transport
        ),
        environ={},
    )
    await plain.decide(options(openai_compatible))
    assert backend.requests[-1].headers["authorization"] == "Bearer runtime-secret"
