"""``RuntimeTests``: the standard checks of a next-step ``Runtime``.

A runtime subclass implements one model call; the base class owns the tool loop, the decision
menu, re-picks and the trace. These checks prove that the two halves fit: the subclass sends
what the base class built (text, tools, tool results), returns what the model said (text, tool
calls, usage), and nothing else. Subclass ``RuntimeTests`` and implement
``scripted_runtime(replies)``; for a runtime that speaks OpenAI-compatible chat completions,
subclass :class:`OpenAICompatibleRuntimeTests` instead, which does it over an
``httpx.MockTransport``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, NoReturn

import httpx
import pytest

# The public names, as the runtime under test imports them: one class per name even when a
# test session (pytester) re-imports the private modules behind them.
from pytest_opdecide import DecisionError, ModelReply, ModelRequest, Runtime, ToolCall, Usage
from pytest_opdecide.conformance._failures import ConformanceRule, fail
from pytest_opdecide.conformance._network_watch import watch_network
from pytest_opdecide.conformance._openai_backend import ChatCompletionsScript
from pytest_opdecide.conformance._standard import check_standard_checks
from pytest_opdecide.decision import DECISION_FINISH_INSTRUCTION, make, render_options
from pytest_opdecide.runtimes import OpenAICompatibleRuntime

__all__ = [
    "OpenAICompatibleRuntimeTests",
    "RuntimeTests",
    "RuntimeUnderTest",
    "SentMessage",
    "SentRequest",
]

ORDER_STATUS: Final = "order A1: shipped on 2024-05-02"
PROMPT: Final = "A customer asks where order A1 is. Look it up, then choose the next step."


@dataclass(frozen=True)
class SentMessage:
    """One message of a model call, as the backend received it.

    Attributes:
        role: ``user``, ``assistant``, ``tool`` (or ``system``).
        text: Its text (text parts concatenated).
        tool_call_id: For a tool result: the id of the call it answers.
        tool_calls: For an assistant message: the names of the tools it called.
    """

    role: str
    text: str
    tool_call_id: str | None = None
    tool_calls: tuple[str, ...] = ()


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type", "text") == "text"
        )
    return "" if content is None else str(content)


@dataclass(frozen=True)
class SentRequest:
    """One model call, as the backend received it: the messages and the tools offered.

    Attributes:
        messages: The conversation sent, in order.
        tools: The names of the native tools offered (empty when none).
        raw: What the backend received, as it received it (not compared).
    """

    messages: tuple[SentMessage, ...]
    tools: tuple[str, ...] = ()
    raw: Any = field(default=None, compare=False)

    @property
    def last_user_text(self) -> str:
        """The text of the last user message."""
        for message in reversed(self.messages):
            if message.role == "user":
                return message.text
        return ""

    @property
    def tool_results(self) -> list[SentMessage]:
        """The tool-result messages."""
        return [message for message in self.messages if message.role == "tool"]

    @classmethod
    def from_model_request(cls, request: ModelRequest) -> SentRequest:
        """What an in-process model receives: the runtime's own request (for fakes)."""
        return cls(
            tuple(
                SentMessage(
                    m.role,
                    m.text,
                    m.tool_call_id,
                    tuple(call.name for call in m.tool_calls),
                )
                for m in request.messages
            ),
            tuple(request.tool_names),
            request,
        )

    @classmethod
    def from_chat_completions(cls, body: Mapping[str, Any]) -> SentRequest:
        """A chat-completions request body (``messages``, ``tools``)."""
        messages = []
        for message in body.get("messages") or ():
            if not isinstance(message, Mapping):
                continue
            calls = message.get("tool_calls") or ()
            names = tuple(
                str((call.get("function") or {}).get("name", ""))
                for call in calls
                if isinstance(call, Mapping)
            )
            call_id = message.get("tool_call_id")
            messages.append(
                SentMessage(
                    str(message.get("role", "")),
                    _text(message.get("content")),
                    call_id if isinstance(call_id, str) else None,
                    names,
                )
            )
        tools = tuple(
            str((tool.get("function") or tool).get("name", ""))
            for tool in body.get("tools") or ()
            if isinstance(tool, Mapping)
        )
        return cls(tuple(messages), tools, body)


@dataclass(frozen=True)
class RuntimeUnderTest:
    """A runtime whose model answers with scripted replies, and what its backend received.

    Attributes:
        runtime: The runtime.
        received: Returns what the backend received so far, one :class:`SentRequest` per call.
    """

    runtime: Runtime
    received: Callable[[], Sequence[SentRequest]]

    @property
    def sent(self) -> list[SentRequest]:
        """What the backend received so far, one entry per model call."""
        return list(self.received())

    @classmethod
    def from_trace(cls, runtime: Runtime) -> RuntimeUnderTest:
        """For an in-process model (a fake): what it received is the runtime's own requests."""
        return cls(
            runtime, lambda: [SentRequest.from_model_request(r.request) for r in runtime.trace]
        )


def _close(runtime: Runtime) -> None:
    close = getattr(runtime, "close", None)
    if callable(close):
        close()


async def _aclose(runtime: Runtime) -> None:
    aclose = getattr(runtime, "aclose", None)
    if callable(aclose):
        closed = aclose()
        if inspect.isawaitable(closed):
            await closed


def _counts(usage: Usage) -> tuple[int, int, int]:
    return usage.prompt_tokens, usage.completion_tokens, usage.total_tokens


def _fail(rule: ConformanceRule, detail: str, *, value: object = None, fix: str = "") -> NoReturn:
    fail(rule, detail, value=value, fix=fix, subject="runtime")


class RuntimeTests:
    """The standard checks of a ``Runtime``: subclass it and implement ``scripted_runtime``.

    ``scripted_runtime(replies)`` returns a :class:`RuntimeUnderTest`: a fresh runtime whose
    model answers its calls with ``replies`` in order (each a ``ModelReply``: text, tool calls
    and usage to send back as your protocol does), and a way to read what the backend received.
    Each ``test_*`` method is a standard check; its docstring says what it verifies and how to
    fix a failure. Overriding one is allowed only with ``@pytest.mark.xfail(reason="...")``.
    """

    def scripted_runtime(self, replies: Sequence[ModelReply]) -> RuntimeUnderTest:
        """A fresh runtime whose model answers with ``replies``, in order.

        Raises:
            NotImplementedError: Always, in the base class: implement it in your subclass.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must implement scripted_runtime(self, replies) -> "
            "RuntimeUnderTest: build your runtime over a backend that answers each call with "
            "the next reply, and return RuntimeUnderTest(runtime, received)"
        )

    _handles: list[RuntimeUnderTest] | None = None

    @pytest.fixture(autouse=True)
    def _conformance_cleanup(self) -> Iterator[None]:
        self._handles = []
        try:
            yield
        finally:
            for handle in self._handles:
                _close(handle.runtime)
            self._handles = None

    def _scripted(self, *replies: ModelReply) -> RuntimeUnderTest:
        handle = self.scripted_runtime(list(replies))
        if not isinstance(handle, RuntimeUnderTest):
            raise TypeError(
                f"scripted_runtime() must return a RuntimeUnderTest, got {type(handle).__name__}"
            )
        if self._handles is not None:
            self._handles.append(handle)
        return handle

    def _call(self, fn: Callable[[], Any]) -> Any:
        with watch_network() as attempts:
            try:
                return fn()
            finally:
                if attempts:
                    fail(
                        ConformanceRule.TRANSPORT_BYPASS,
                        "the runtime reached the network outside its backend",
                        value=attempts.targets,
                        subject="runtime",
                        fix="send every call through the transport you were given",
                    )

    def _count(
        self, handle: RuntimeUnderTest, expected: int, rule: ConformanceRule
    ) -> list[SentRequest]:
        sent = handle.sent
        if len(sent) != expected:
            _fail(
                rule,
                f"the backend should have received {expected} call(s), it received {len(sent)}",
                value=[s.last_user_text[:80] for s in sent],
            )
        return sent

    # --- scenarios -------------------------------------------------------------------------

    @staticmethod
    def _options(picked: list[Any]) -> dict[str, Any]:
        def refund(amount: float) -> str:
            """Refund the customer.

            Args:
                amount: The amount in dollars.
            """
            picked.append(amount)
            return f"refunded {amount:.2f}"

        return {"refund": refund, "escalate": ("ESCALATED", "Hand the ticket to a human.")}

    @staticmethod
    def _lookup(looked_up: list[str]) -> Callable[[str], str]:
        def lookup_order(order_id: str) -> str:
            """Look up an order's status.

            Args:
                order_id: The order id, e.g. A1.
            """
            looked_up.append(order_id)
            return ORDER_STATUS

        return lookup_order

    _TOOL_REPLY: ClassVar[ModelReply] = ModelReply(
        tool_calls=(ToolCall("lookup_order", {"order_id": "A1"}, "call_lookup_1"),),
        usage=Usage(41, 9, 50),
    )

    def _full_turn_replies(self) -> list[ModelReply]:
        return [
            self._TOOL_REPLY,
            ModelReply(text="It shipped on May 2; nothing else to do.", usage=Usage(88, 11, 99)),
            ModelReply(text='{"call": "escalate"}', usage=Usage(120, 6, 126)),
        ]

    # --- the checks ------------------------------------------------------------------------

    def test_exec_returns_the_reply_text(self) -> None:
        """A plain ``exec(prompt)`` sends the prompt as the user message (no menu, no finish
        instruction) and returns the model's reply text unchanged.

        Fix: put the request's messages on the wire as they are, and return
        ``ModelReply(text=...)`` with the reply's text.
        """
        text = "Your refund of $12.50 is on its way."
        handle = self._scripted(ModelReply(text=text, usage=Usage(21, 9, 30)))
        prompt = "Tell the customer about their refund."
        result = self._call(lambda: handle.runtime.exec(prompt))
        if result != text:
            _fail(ConformanceRule.RUNTIME_EXEC, "exec() must return the reply text", value=result)
        (sent,) = self._count(handle, 1, ConformanceRule.RUNTIME_EXEC)
        if prompt not in sent.last_user_text:
            _fail(
                ConformanceRule.RUNTIME_EXEC,
                "the prompt did not reach the backend as the user message",
                value=sent.last_user_text,
            )
        if DECISION_FINISH_INSTRUCTION.strip() in sent.last_user_text:
            _fail(
                ConformanceRule.RUNTIME_EXEC,
                "a plain exec() must not carry the decision finish instruction",
                value=sent.last_user_text,
            )

    def test_exec_with_choices_appends_the_menu_and_resolves_the_pick(self) -> None:
        """``exec(prompt, choices=options)`` sends the prompt followed by
        ``DECISION_FINISH_INSTRUCTION`` and the rendered menu, and resolves the model's pick:
        the picked function runs with the model's arguments and its return value is returned.

        Fix: send every text block of the user message, in order, without rewording.
        """
        picked: list[Any] = []
        options = self._options(picked)
        menu = render_options(options)
        reply = 'A refund is fair here.\n{"call": "refund", "args": {"amount": 12.5}}'
        handle = self._scripted(ModelReply(text=reply, usage=Usage(64, 14, 78)))
        result = self._call(
            lambda: handle.runtime.exec("Handle the ticket.", choices=options, toolset="none")
        )
        if result != "refunded 12.50" or picked != [12.5]:
            _fail(
                ConformanceRule.RUNTIME_CHOICES,
                "the pick was not resolved: refund(amount=12.5) should have run and its "
                "return value been returned",
                value=result,
            )
        (sent,) = self._count(handle, 1, ConformanceRule.RUNTIME_CHOICES)
        text = sent.last_user_text
        if DECISION_FINISH_INSTRUCTION + menu not in text or not text.startswith(
            "Handle the ticket."
        ):
            _fail(
                ConformanceRule.RUNTIME_CHOICES,
                "the user message must be the prompt, then DECISION_FINISH_INSTRUCTION and the "
                "menu, verbatim",
                value=text,
                fix="join the text blocks of the user message in order, unchanged",
            )
        if sent.tools:
            _fail(
                ConformanceRule.RUNTIME_CHOICES,
                "toolset='none' must offer no tools",
                value=sent.tools,
            )

    def test_one_repick_after_a_bad_reply(self) -> None:
        """A reply that is not a valid pick gets exactly one re-pick (a tool-free call carrying
        the problem and the menu again); a second bad reply raises ``DecisionError`` with no
        third call.

        Fix: implement only the model call; the base class re-picks. Do not retry on your own.
        """
        picked: list[Any] = []
        options = self._options(picked)
        menu = render_options(options)
        bad = "A refund seems right to me."
        handle = self._scripted(
            ModelReply(text=bad, usage=Usage(40, 8, 48)),
            ModelReply(text='{"call": "refund", "args": {"amount": 3}}', usage=Usage(70, 9, 79)),
        )
        result = self._call(
            lambda: handle.runtime.exec("Handle the ticket.", choices=options, toolset="none")
        )
        if result != "refunded 3.00":
            _fail(
                ConformanceRule.RUNTIME_REPICK,
                "the re-picked option was not resolved",
                value=result,
            )
        _, second = self._count(handle, 2, ConformanceRule.RUNTIME_REPICK)
        if menu not in second.last_user_text or bad not in second.last_user_text:
            _fail(
                ConformanceRule.RUNTIME_REPICK,
                "the re-pick must carry the previous reply and the menu",
                value=second.last_user_text,
            )
        if second.tools:
            _fail(
                ConformanceRule.RUNTIME_REPICK, "a re-pick must offer no tools", value=second.tools
            )
        kinds = [record.kind for record in handle.runtime.trace]
        if kinds != ["turn", "repick"]:
            _fail(
                ConformanceRule.RUNTIME_REPICK,
                "the trace must show a turn then a re-pick",
                value=kinds,
            )

        twice = self._scripted(
            ModelReply(text=bad, usage=Usage(40, 8, 48)),
            ModelReply(text="Still thinking about it.", usage=Usage(70, 5, 75)),
        )
        try:
            self._call(
                lambda: twice.runtime.exec("Handle the ticket.", choices=options, toolset="none")
            )
        except DecisionError:
            pass
        else:
            _fail(ConformanceRule.RUNTIME_REPICK, "two bad replies must raise DecisionError")
        self._count(twice, 2, ConformanceRule.RUNTIME_REPICK)

    def test_native_tool_loop_feeds_results_back(self) -> None:
        """Tools offered to ``exec(tools=[...])`` reach the backend as native tools; a tool call
        in the reply runs the tool, and the next call carries the assistant's tool call and the
        tool's result (answering the call's id); the final reply text is returned.

        Fix: parse tool calls (name, arguments, id) into ``ModelReply.tool_calls`` and send
        ``assistant`` tool-call messages and ``tool`` results back as your protocol does.
        """
        looked_up: list[str] = []
        lookup = self._lookup(looked_up)
        final = "Your order shipped on May 2."
        handle = self._scripted(self._TOOL_REPLY, ModelReply(text=final, usage=Usage(77, 8, 85)))
        result = self._call(lambda: handle.runtime.exec(PROMPT, tools=[lookup]))
        if looked_up != ["A1"]:
            _fail(
                ConformanceRule.RUNTIME_TOOL_LOOP,
                "the tool call lookup_order(order_id='A1') did not run exactly once",
                value=looked_up,
            )
        if result != final:
            _fail(
                ConformanceRule.RUNTIME_TOOL_LOOP,
                "exec() must return the final reply",
                value=result,
            )
        first, second = self._count(handle, 2, ConformanceRule.RUNTIME_TOOL_LOOP)
        if first.tools != ("lookup_order",):
            _fail(
                ConformanceRule.RUNTIME_TOOL_LOOP,
                "the tool must be offered as a native tool",
                value=first.tools,
            )
        calls = [m for m in second.messages if m.role == "assistant" and m.tool_calls]
        if not calls or calls[-1].tool_calls != ("lookup_order",):
            _fail(
                ConformanceRule.RUNTIME_TOOL_LOOP,
                "the second call must carry the assistant's tool call",
                value=second.messages,
            )
        results = second.tool_results
        if [m.text for m in results] != [ORDER_STATUS] or results[
            0
        ].tool_call_id != "call_lookup_1":
            _fail(
                ConformanceRule.RUNTIME_TOOL_LOOP,
                "the second call must carry the tool's result, answering call id 'call_lookup_1'",
                value=results,
            )

    def test_call_trace_records_every_call(self) -> None:
        """Every model call is in ``runtime.trace`` with its kind and parent (a turn, its tool
        round, then a re-pick: parents ``None``, 0, 1), the tools and options it offered, and the
        usage the backend reported; ``trace.usage`` adds them up.

        Fix: return the reply's usage in ``ModelReply.usage`` (zeros only when the backend
        reports none).
        """
        looked_up: list[str] = []
        options = self._options([])
        replies = self._full_turn_replies()
        handle = self._scripted(*replies)
        result = self._call(
            lambda: handle.runtime.exec(PROMPT, tools=[self._lookup(looked_up)], choices=options)
        )
        if result != "ESCALATED":
            _fail(
                ConformanceRule.RUNTIME_TRACE,
                "the turn did not resolve to 'escalate'",
                value=result,
            )
        records = handle.runtime.trace.calls
        shape = [(r.kind, r.parent) for r in records]
        if shape != [("turn", None), ("tool_round", 0), ("repick", 1)]:
            _fail(
                ConformanceRule.RUNTIME_TRACE,
                "the trace must be turn (parent None), tool_round (parent 0), repick (parent 1)",
                value=shape,
            )
        usages = [_counts(r.usage) for r in records]
        if usages != [_counts(reply.usage) for reply in replies]:
            _fail(
                ConformanceRule.RUNTIME_TRACE,
                "each call's usage must be what the backend reported",
                value=usages,
            )
        total = _counts(handle.runtime.trace.usage)
        if total != (249, 26, 275):
            _fail(ConformanceRule.RUNTIME_TRACE, "trace.usage must add up the calls", value=total)
        offered = [(r.tools, r.options) for r in records]
        expected = [
            (["lookup_order"], ["refund", "escalate"]),
            (["lookup_order"], ["refund", "escalate"]),
            ([], ["refund", "escalate"]),
        ]
        if offered != expected:
            _fail(
                ConformanceRule.RUNTIME_TRACE,
                "the trace must show the tools and options each call offered",
                value=offered,
            )

    def test_decision_make_offers_no_tools(self) -> None:
        """``decision.make`` sends one tool-free call (even when the runtime has a default
        toolset): the backend sees no tools, and the pick is resolved.

        Fix: send tools only when ``request.tools`` is not empty (no empty ``tools`` list, no
        tools of your own).
        """
        handle = self._scripted(ModelReply(text='{"call": "escalate"}', usage=Usage(33, 6, 39)))
        runtime = handle.runtime
        runtime.toolsets["default"] = [self._lookup([])]
        result = self._call(lambda: make("Pick the next step.", self._options([]), runtime=runtime))
        if result != "ESCALATED":
            _fail(ConformanceRule.RUNTIME_DECISION_TOOLS, "the pick was not resolved", value=result)
        (sent,) = self._count(handle, 1, ConformanceRule.RUNTIME_DECISION_TOOLS)
        if sent.tools:
            _fail(
                ConformanceRule.RUNTIME_DECISION_TOOLS,
                "decision.make must offer the model no tools",
                value=sent.tools,
            )

    def test_async_twin_matches_sync(self) -> None:
        """``exec_async`` behaves as ``exec``: the same calls reach the backend, the same trace
        (kinds, parents, usage) is recorded and the same result comes back.

        Fix: make ``call_model_async`` send and parse exactly what ``call_model`` does.
        """
        options = self._options([])
        sync = self._scripted(*self._full_turn_replies())
        result = self._call(
            lambda: sync.runtime.exec(PROMPT, tools=[self._lookup([])], choices=options)
        )
        twin = self._scripted(*self._full_turn_replies())

        async def run() -> Any:
            try:
                return await twin.runtime.exec_async(
                    PROMPT, tools=[self._lookup([])], choices=options
                )
            finally:
                await _aclose(twin.runtime)

        awaited = self._call(lambda: asyncio.run(run()))
        if awaited != result:
            _fail(ConformanceRule.RUNTIME_ASYNC, f"exec() gave {result!r}", value=awaited)
        if twin.sent != sync.sent:
            _fail(
                ConformanceRule.RUNTIME_ASYNC,
                "the async calls sent differ from the sync ones",
                value=[(s.last_user_text[:60], s.tools) for s in twin.sent],
            )

        def shape(handle: RuntimeUnderTest) -> list[tuple[str, int | None, tuple[int, int, int]]]:
            return [(r.kind, r.parent, _counts(r.usage)) for r in handle.runtime.trace]

        if shape(twin) != shape(sync):
            _fail(
                ConformanceRule.RUNTIME_ASYNC,
                f"the async trace differs from the sync one {shape(sync)}",
                value=shape(twin),
            )

    def test_no_standard_check_removed(self) -> None:
        """No standard check is deleted (set to ``None``) or overridden without
        ``@pytest.mark.xfail(reason="...")``.

        Fix: keep the checks; mark one your runtime does not pass with an xfail and a reason.
        """
        check_standard_checks(type(self), RuntimeTests, subject="runtime")


class OpenAICompatibleRuntimeTests(RuntimeTests):
    """``RuntimeTests`` for runtimes that speak OpenAI-compatible chat completions.

    The model is an ``httpx.MockTransport`` answering each call with the next scripted reply
    as a ``chat.completion`` body. ``OpenAICompatibleRuntime`` is checked with an empty
    subclass; for your own runtime, override :meth:`make_runtime`.

    Attributes:
        base_url: The ``base_url`` the runtime is built with.
        runtime_model: The runtime's model name.
    """

    base_url: ClassVar[str] = "http://runtime.conformance.invalid/v1"
    runtime_model: ClassVar[str] = "conformance-model"

    def make_runtime(self, base_url: str, transport: httpx.MockTransport) -> Runtime:
        """Build the runtime under test over ``transport`` (sync and async)."""
        return OpenAICompatibleRuntime(base_url, model=self.runtime_model, transport=transport)

    def scripted_runtime(self, replies: Sequence[ModelReply]) -> RuntimeUnderTest:
        """The runtime over a chat-completions script of ``replies``."""
        script = ChatCompletionsScript(replies, model=self.runtime_model)
        runtime = self.make_runtime(self.base_url, script.transport)
        return RuntimeUnderTest(
            runtime, lambda: [SentRequest.from_chat_completions(body) for body in script.bodies]
        )
