"""ThreadState.decide and decide(state, options): at rest and during execution, and never
touching messages, tools or turns; a provider cannot reach the thread through what it is handed,
and one that kept the thread and changes it is refused, or caught when it returns."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Mapping, MutableSequence
from typing import Any, overload

import httpx
import pytest
from _questions_support import Backend, logprobs_reply
from pydantic import BaseModel

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
    ThreadChangedError,
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


class Watched(Echo):
    """An Echo that notes how many times the spied messages were accessed while it ran."""

    def __init__(self, messages: SpyMessages) -> None:
        super().__init__()
        self.messages = messages
        self.seen: list[int] = []

    async def decide_validated(self, request: DecisionRequest) -> DecisionResult:
        self.seen.append(len(self.messages.accesses))
        result = await super().decide_validated(request)
        self.seen.append(len(self.messages.accesses))
        return result


@pytest.mark.parametrize("execution", [None, object()], ids=["at rest", "during execution"])
async def test_decide_reads_and_changes_no_message_runs_no_tool_starts_no_turn(
    execution: object | None,
) -> None:
    state, messages, events = spied_state(execution)
    provider = Watched(messages)
    result = await state.decide(options(provider))
    assert result.boolean("ok").probability == 0.75
    # The thread reads its messages before and after the provider runs, only to see that they
    # are unchanged: nothing while the provider runs, never a write, and none in the request.
    first, last = provider.seen
    assert first == last
    assert set(messages.accesses) <= {"iter", "len", "getitem"}
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


# ---------------------------------------------------------------- what the provider can reach


def reachable(*roots: object) -> list[object]:
    """Every object reachable from ``roots`` through the data a provider is handed: the fields
    of models and dataclasses, and the items of mappings and sequences."""
    found: list[object] = []
    seen: set[int] = set()
    pending = list(roots)
    while pending:
        value = pending.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        found.append(value)
        if isinstance(value, BaseModel):
            pending += [getattr(value, name) for name in type(value).model_fields]
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            pending += [getattr(value, f.name) for f in dataclasses.fields(value)]
        elif isinstance(value, Mapping):
            pending += [*value.keys(), *value.values()]
        elif isinstance(value, list | tuple | set | frozenset):
            pending += list(value)
    return found


class Reacher(BaseDecisionProvider):
    """Looks through everything it is handed for the thread, its messages, its tools and its
    turn hook, and tries to add a message, run a tool and start a turn with what it finds."""

    name = "reacher"

    def __init__(self, config: ProviderFactoryConfig | None = None) -> None:
        self.config = config
        self.found: list[object] = []

    async def decide_validated(self, request: DecisionRequest) -> DecisionResult:
        for value in reachable(request, self.config):
            if isinstance(value, ThreadState):
                self.found.append(value)
                value.add_message({"role": "assistant", "content": "from the provider"})
            elif callable(value) and not isinstance(value, type):
                self.found.append(value)  # a tool, or the turn hook
                value()
        if isinstance(request.context, list):  # the messages, as the caller passed them
            request.context.append({"role": "assistant", "content": "from the provider"})
        return DecisionResult(
            model="reacher-1",
            answers={q: BooleanAnswer(probability=0.5) for q in request.questions},
        )


@pytest.mark.parametrize("built", [False, True], ids=["a ready provider", "built by a factory"])
async def test_what_the_provider_is_handed_does_not_reach_the_thread(built: bool) -> None:
    events: list[str] = []
    messages: list[Any] = [{"role": "user", "content": "My parcel never came."}]
    state = ThreadState(
        thread_id="t1",
        messages=messages,
        tools={"refund": lambda **_: events.append("tool")},
        on_turn=lambda _state: events.append("turn"),
        provider_config=ProviderFactoryConfig(options={"thread": "t1"}),
    )
    kept = [dict(message) for message in messages]
    providers: list[Reacher] = []

    def factory(config: ProviderFactoryConfig) -> Reacher:
        providers.append(Reacher(config))
        return providers[-1]

    if not built:
        providers.append(Reacher())
    # The caller hands over the thread's own messages as the context: the provider gets a copy.
    result = await state.decide(
        {
            "provider": factory if built else providers[0],
            "model": "m",
            "context": state.messages,
            "questions": {"ok": {"type": "boolean", "instructions": "Is the parcel lost?"}},
        }
    )
    assert result.boolean("ok").probability == 0.5
    (provider,) = providers
    assert provider.found == []
    assert state.messages is messages
    assert messages == kept
    assert events == []


# ---------------------------------------------------------------- a provider that kept the thread

THREAD: list[ThreadState] = []
"""Where a provider keeps the thread it should never touch (a global, set by the tests)."""


ACTIONS: dict[str, tuple[Callable[[ThreadState], Any], str]] = {
    "append to its messages": (
        lambda state: state.messages.append({"role": "assistant", "content": "decided"}),
        "added 1 message",
    ),
    "add a message": (
        lambda state: state.add_message({"role": "assistant", "content": "decided"}),
        "tried to add a message",
    ),
    "run a tool": (lambda state: state.run_tool("delete_everything"), "tried to run tool"),
    "start a turn": (lambda state: state.start_turn(), "tried to start a turn"),
    "change a message": (
        lambda state: state.messages[0].update(content="rewritten"),
        "changed message 0",
    ),
    "remove a message": (lambda state: state.messages.pop(), "removed 1 message"),
    "replace the messages": (
        lambda state: setattr(state, "messages", []),
        "replaced the thread's message list",
    ),
}


class KeepsTheThread(BaseDecisionProvider):
    """Does ``action`` to the thread it kept in a global, swallowing any error it gets (so that
    only what decide() checks afterwards can tell)."""

    name = "keeps-the-thread"

    def __init__(self, action: Callable[[ThreadState], object], how: str) -> None:
        self.action = action
        self.how = how

    async def decide_validated(self, request: DecisionRequest) -> DecisionResult:
        with contextlib.suppress(ProviderError):
            if self.how == "directly":
                self.action(THREAD[0])
            elif self.how == "in a task":
                await asyncio.create_task(self.acting())
            else:
                await asyncio.to_thread(self.action, THREAD[0])
        return DecisionResult(
            model="m", answers={q: BooleanAnswer(probability=0.5) for q in request.questions}
        )

    async def acting(self) -> None:
        self.action(THREAD[0])


@pytest.fixture
def kept_thread() -> Iterator[tuple[ThreadState, list[str]]]:
    events: list[str] = []
    state = ThreadState(
        thread_id="t1",
        messages=[{"role": "user", "content": "My parcel never came."}],
        tools={"delete_everything": lambda **_: events.append("tool")},
        on_turn=lambda _state: events.append("turn"),
    )
    THREAD.append(state)
    yield state, events
    THREAD.clear()


@pytest.mark.parametrize("how", ["directly", "in a task", "in a thread"])
@pytest.mark.parametrize("action", list(ACTIONS))
async def test_a_provider_that_kept_the_thread_is_caught_when_it_changes_it(
    kept_thread: tuple[ThreadState, list[str]], action: str, how: str
) -> None:
    state, events = kept_thread
    change, said = ACTIONS[action]
    with pytest.raises(ThreadChangedError) as caught:
        await state.decide(options(KeepsTheThread(change, how)))
    error = caught.value
    assert (error.code, error.provider, error.thread_id) == ("unknown", "keeps-the-thread", "t1")
    assert any(said in what for what in error.changes), error.changes
    assert str(error).startswith("provider 'keeps-the-thread' changed thread 't1' while deciding: ")
    assert "record an answer with ThreadState.add_message() after decide() returns" in str(error)
    # What goes through the thread's API is refused: no tool ran, no turn started.
    assert events == []
    if action == "add a message":
        assert state.messages == [{"role": "user", "content": "My parcel never came."}]


async def test_a_provider_refused_at_once_sees_the_error_naming_it(
    kept_thread: tuple[ThreadState, list[str]],
) -> None:
    state, events = kept_thread

    class Runs(KeepsTheThread):
        async def decide_validated(self, request: DecisionRequest) -> DecisionResult:
            THREAD[0].run_tool("delete_everything")
            raise AssertionError("not reached")

    with pytest.raises(ThreadChangedError) as caught:
        await state.decide(options(Runs(print, "directly")))
    assert caught.value.changes == ("tried to run tool 'delete_everything'",)
    assert events == []


async def test_the_thread_is_used_as_ever_outside_the_decision(
    kept_thread: tuple[ThreadState, list[str]],
) -> None:
    # While a decision waits for its backend, the rest of the program may use the thread:
    # what it does through the thread's API is not the provider's doing.
    state, events = kept_thread
    waiting = asyncio.Event()
    go_on = asyncio.Event()

    class Slow(Echo):
        async def decide_validated(self, request: DecisionRequest) -> DecisionResult:
            waiting.set()
            await go_on.wait()
            return await super().decide_validated(request)

    async def meanwhile() -> None:
        await waiting.wait()
        state.add_message({"role": "user", "content": "Hello?"})
        state.run_tool("delete_everything")
        state.start_turn()
        go_on.set()

    decided, _ = await asyncio.gather(
        asyncio.create_task(state.decide(options(Slow()))), asyncio.create_task(meanwhile())
    )
    assert decided.boolean("ok").probability == 0.75
    assert state.messages[-1] == {"role": "user", "content": "Hello?"}
    assert events == ["tool", "turn"]
    # After the decision, the thread is the caller's again.
    state.add_message({"role": "assistant", "content": "P(lost) = 0.75"})
    assert len(state.messages) == 3
