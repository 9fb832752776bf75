"""What a runtime sends to a model and what comes back: plain, immutable data."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "CallKind",
    "ContentBlock",
    "Message",
    "ModelReply",
    "ModelRequest",
    "ToolCall",
    "ToolSpec",
    "Usage",
]

CallKind = Literal["turn", "tool_round", "repick"]
"""Why a model call was made: the first call of a turn, a call after tool results, a re-pick."""

ContentBlock = Mapping[str, Any]
"""A content block, e.g. ``{"type": "text", "text": "..."}``."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one model call (zeros when the backend reports nothing)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
        )


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A native tool call the model asked for.

    Attributes:
        name: The tool's name.
        arguments: The arguments, as an object or as the JSON text the model produced.
        id: The protocol's call id, echoed back with the result.
    """

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str = ""


@dataclass(frozen=True, slots=True, eq=False)
class ToolSpec:
    """A native tool offered to the model.

    Attributes:
        name: The tool's name.
        description: What it does (first paragraph of the docstring by default).
        parameters: The JSON schema of its arguments.
        function: The callable the runtime runs.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    function: Callable[..., Any]


@dataclass(slots=True)
class Message:
    """One message of a turn's conversation.

    Attributes:
        role: ``"user"``, ``"assistant"`` or ``"tool"``.
        content: Text blocks.
        tool_calls: For assistant messages: the tool calls it made.
        tool_call_id: For tool messages: the call this result answers.
        name: For tool messages: the tool's name.
    """

    role: Literal["user", "assistant", "tool"]
    content: tuple[ContentBlock, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    @property
    def text(self) -> str:
        """The message's text blocks, concatenated."""
        content = self.content
        if len(content) == 1 and type(content[0]) is dict:  # one block, the usual message
            block = content[0]
            if not block.get("type", "text") == "text":  # noqa: SIM201 - as the filter below
                return ""
            text = block.get("text", "")
            return text if type(text) is str else str(text)
        return "".join(
            str(b.get("text", "")) for b in self.content if b.get("type", "text") == "text"
        )


@dataclass(slots=True, eq=False)
class ModelRequest:
    """Everything one model call needs; what a :class:`~pytest_opdecide.Runtime` subclass reads.

    Treat it as read-only: the call trace keeps the very object that was sent.

    Attributes:
        kind: Why the call is made (``turn``, ``tool_round``, ``repick``).
        messages: The conversation so far; the last message(s) are what is new in this call.
        tools: Native tools offered; empty means the model must answer in text (always so for
            ``decision.make`` and re-picks).
        model: The model to use, or ``None`` for the runtime's default.
        response_format: Passed through from ``exec``.
        timeout_s: A time limit for the call, if any.
        menu: The rendered option menu when the call offers options, else ``None``.
        options: The option names offered (empty when no menu).
        choices: The normalised options behind ``menu`` (field types included), for runtimes
            that need more than the text, such as seeded fakes; ``None`` when no menu.

    The menu as a JSON schema, for a runtime that can hold the model's reply to it, is
    :attr:`response_schema`.
    """

    kind: CallKind
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    model: str | None = None
    response_format: Any = None
    timeout_s: float | None = None
    menu: str | None = None
    options: tuple[str, ...] = ()
    choices: Any = None

    @property
    def prompt(self) -> str:
        """The text new in this call: the last user message, or the tool results of a round."""
        if self.kind == "tool_round":
            results = []
            for message in reversed(self.messages):
                if message.role != "tool":
                    break
                results.append(message.text)
            return "\n".join(reversed(results))
        for message in reversed(self.messages):
            if message.role == "user":
                return message.text
        return ""

    @property
    def response_schema(self) -> dict[str, Any] | None:
        """The JSON schema of a valid pick when the call offers options, else ``None``.

        One branch per option, under ``anyOf``: ``call`` fixed to the option's name and
        ``args`` the option's argument schema (see "Structured decisions" in
        docs/decisions.md). Every decision call carries it: the pick of ``decision.make``, its
        re-picks, and each round of an ``exec(choices=...)`` turn. A runtime may send it to a
        server that holds the reply to it (``OpenAICompatibleRuntime`` does); the reply is
        parsed and validated all the same. Built once per menu; each access returns a new copy,
        free to change.
        """
        response_schema = getattr(self.choices, "response_schema", None)
        return None if response_schema is None else response_schema()

    @property
    def blocks(self) -> tuple[ContentBlock, ...]:
        """The content blocks of the last user message."""
        for message in reversed(self.messages):
            if message.role == "user":
                return message.content
        return ()

    @property
    def tool_names(self) -> list[str]:
        """Names of the native tools offered."""
        return [t.name for t in self.tools]


@dataclass(frozen=True, slots=True, eq=False)
class ModelReply:
    """One model reply.

    Attributes:
        text: The reply text (may be empty when the model only calls tools).
        tool_calls: Native tool calls the model asked for.
        usage: Token counts.
        model: The model that answered, if reported.
        raw: The backend's raw reply, for debugging.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    model: str | None = None
    raw: Any = None
