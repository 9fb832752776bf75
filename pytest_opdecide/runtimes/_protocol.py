"""The chat-completions wire format: request bodies out, replies (whole or streamed) back in.

Pure data translation with no I/O, shared by the sync and async paths of
:class:`~pytest_opdecide.runtimes.OpenAICompatibleRuntime`. What does not look like a chat
completion raises :class:`ProtocolProblem`, which the runtime turns into a
:class:`~pytest_opdecide.runtimes.MalformedResponseError` (or a
:class:`~pytest_opdecide.runtimes.ServerError` for an error body) naming the request.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_opdecide._http._error_answers import server_error_message
from pytest_opdecide._nextstep._messages import (
    ContentBlock,
    Message,
    ModelReply,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = [
    "ProtocolProblem",
    "StreamAccumulator",
    "TruncatedStream",
    "chat_messages",
    "parse_arguments",
    "parse_completion",
    "plain_json",
    "tool_definitions",
    "unfinished_stream",
]


class ProtocolProblem(Exception):
    """A reply that is not a chat completion.

    Attributes:
        description: What is wrong, e.g. ``"the body has no 'choices'"``.
        server_error: The body is an error report (``{"error": ...}``) rather than a reply.
        body: The text at fault (the body, or the streamed event), when there is one.
        fix: How to fix it, when the usual advice (check ``base_url``) does not apply.
    """

    def __init__(
        self, description: str, *, server_error: bool = False, body: str = "", fix: str = ""
    ) -> None:
        super().__init__(description)
        self.description = description
        self.server_error = server_error
        self.body = body
        self.fix = fix


def plain_json(value: Any) -> Any:
    """``value`` with every mapping turned into a ``dict`` and every tuple into a ``list``.

    Content blocks, tool schemas and ``response_format`` may be read-only mappings; the JSON
    encoder only takes dicts.
    """
    if isinstance(value, Mapping):
        return {str(key): plain_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain_json(item) for item in value]
    return value


# --- request ---------------------------------------------------------------------------------


def _is_text(block: ContentBlock) -> bool:
    return bool(block.get("type", "text") == "text")


def _user_content(blocks: Sequence[ContentBlock]) -> str | list[Any]:
    # A plain string when there is only text: every server takes it, and some chat templates
    # (llama.cpp's among them) print a list of parts as its Python repr.
    if all(_is_text(block) for block in blocks):
        return "".join(str(block.get("text", "")) for block in blocks)
    return [
        {"type": "text", "text": str(block.get("text", ""))}
        if _is_text(block)
        else plain_json(block)
        for block in blocks
    ]


def arguments_json(arguments: Mapping[str, Any] | str) -> str:
    """Tool-call arguments as the JSON string the protocol carries."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(plain_json(arguments), ensure_ascii=False)


def chat_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The ``messages`` of a chat-completions body.

    User messages become a plain string (text only) or a list of content parts; assistant
    messages carry their text (``""`` when there is none) and their ``tool_calls`` with
    JSON-string arguments; tool messages answer a call
    by ``tool_call_id``. A tool call without an id (a scripted fake's, or a server that gave
    none) gets a stable one, ``call_<message>_<call>``, echoed by the tool message answering it.
    """
    result: list[dict[str, Any]] = []
    unanswered: list[str] = []  # Ids made up for id-less calls, in the order results come back.
    for position, message in enumerate(messages):
        if message.role == "user":
            result.append({"role": "user", "content": _user_content(message.content)})
        elif message.role == "assistant":
            # Always a string, "" when the model only called tools: llama-cpp-python's server
            # rejects null and its function-calling template fails when the key is missing.
            entry: dict[str, Any] = {"role": "assistant", "content": message.text}
            if message.tool_calls:
                calls = []
                for number, call in enumerate(message.tool_calls):
                    call_id = call.id
                    if not call_id:
                        call_id = f"call_{position}_{number}"
                        unanswered.append(call_id)
                    calls.append(
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {
                                "name": call.name,
                                "arguments": arguments_json(call.arguments),
                            },
                        }
                    )
                entry["tool_calls"] = calls
            result.append(entry)
        else:
            call_id = message.tool_call_id or (unanswered.pop(0) if unanswered else "")
            result.append({"role": "tool", "tool_call_id": call_id, "content": message.text})
    return result


def tool_definitions(specs: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """The ``tools`` of a chat-completions body: ``{"type": "function", "function": ...}``."""
    tools = []
    for spec in specs:
        function: dict[str, Any] = {"name": spec.name}
        if spec.description:
            function["description"] = spec.description
        function["parameters"] = plain_json(spec.parameters)
        tools.append({"type": "function", "function": function})
    return tools


# --- reply -----------------------------------------------------------------------------------


def parse_arguments(arguments: Any) -> Mapping[str, Any] | str:
    """Tool-call arguments as an object when they are a JSON object, else the text as sent.

    Text that is not a JSON object is kept as it came: the runtime's tool loop reports it back
    to the model, which can then correct itself.
    """
    if arguments is None:
        return {}
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if not isinstance(arguments, str):
        return json.dumps(arguments)
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return arguments
    return parsed if isinstance(parsed, dict) else arguments


def _usage(value: Any) -> Usage:
    if not isinstance(value, Mapping):
        return Usage()

    def count(key: str) -> int:
        number = value.get(key)
        return number if isinstance(number, int) and not isinstance(number, bool) else 0

    prompt, completion = count("prompt_tokens"), count("completion_tokens")
    return Usage(prompt, completion, count("total_tokens") or prompt + completion)


def _content_text(content: Any, where: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        # Some servers answer with content parts, like the ones a request may send.
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type", "text") == "text"
        )
    raise ProtocolProblem(f"{where} is a {type(content).__name__}, not text")


def _tool_call(entry: Any, where: str) -> ToolCall:
    if not isinstance(entry, Mapping) or not isinstance(entry.get("function"), Mapping):
        raise ProtocolProblem(f"{where} is not a function call: {_head(entry)}")
    function = entry["function"]
    name = function.get("name")
    call_id = entry.get("id")
    return ToolCall(
        name if isinstance(name, str) else "",
        parse_arguments(function.get("arguments")),
        call_id if isinstance(call_id, str) else "",
    )


def _legacy_name(name: str) -> str:
    # llama.cpp's server ends the legacy function_call name with the ":" of its template.
    return name[:-1] if name.endswith(":") else name


def _head(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=repr)
    return text if len(text) <= limit else text[:limit] + "..."


def parse_completion(data: Any) -> ModelReply:
    """A ``chat.completion`` body (parsed JSON) as a :class:`ModelReply`.

    Reads ``choices[0].message``: its text (or its refusal, when there is no text), its
    ``tool_calls`` (the legacy ``function_call`` only when there are none), plus ``usage`` and
    ``model``. ``raw`` is the whole body.

    Raises:
        ProtocolProblem: The body is not a chat completion.
    """
    if not isinstance(data, Mapping):
        raise ProtocolProblem(f"the JSON body is a {type(data).__name__}, not an object")
    choices = data.get("choices")
    if "error" in data and not choices:
        reported = server_error_message(data) or _head(data.get("error"))
        raise ProtocolProblem(f"the body reports an error: {reported}", server_error=True)
    if not isinstance(choices, list) or not choices:
        keys = ", ".join(repr(key) for key in list(data)[:8]) or "none"
        raise ProtocolProblem(f"the body has no 'choices' (its keys: {keys})")
    choice = choices[0]
    message: Any = choice.get("message") if isinstance(choice, Mapping) else None
    if not isinstance(message, Mapping):
        raise ProtocolProblem(f"choices[0] has no 'message': {_head(choice)}")
    text = _content_text(message.get("content"), "choices[0].message.content")
    refusal = message.get("refusal")
    if not text and isinstance(refusal, str):
        text = refusal
    calls: list[ToolCall] = []
    tool_calls = message.get("tool_calls")
    if tool_calls is not None and not isinstance(tool_calls, list):
        raise ProtocolProblem("choices[0].message.tool_calls is not a list")
    for number, entry in enumerate(tool_calls or ()):
        calls.append(_tool_call(entry, f"choices[0].message.tool_calls[{number}]"))
    legacy = message.get("function_call")
    if not calls and isinstance(legacy, Mapping) and isinstance(legacy.get("name"), str):
        calls.append(
            ToolCall(_legacy_name(legacy["name"]), parse_arguments(legacy.get("arguments")))
        )
    model = data.get("model")
    return ModelReply(
        text=text,
        tool_calls=tuple(calls),
        usage=_usage(data.get("usage")),
        model=model if isinstance(model, str) else None,
        raw=data,
    )


# --- streamed reply --------------------------------------------------------------------------


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    object_arguments: Mapping[str, Any] | None = None

    def add(self, delta: Mapping[str, Any]) -> None:
        call_id = delta.get("id")
        if isinstance(call_id, str) and not self.id:
            self.id = call_id
        function = delta.get("function", delta)
        if not isinstance(function, Mapping):
            return
        name = function.get("name")
        # The name comes once in OpenAI's stream; llama.cpp repeats it in every chunk.
        if isinstance(name, str) and name and not self.name:
            self.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            self.arguments.append(arguments)
        elif isinstance(arguments, Mapping):
            self.object_arguments = arguments

    @property
    def text(self) -> str:
        return "".join(self.arguments)

    def tool_call(self, name: str | None = None) -> ToolCall:
        arguments: Any = self.object_arguments if self.object_arguments is not None else self.text
        return ToolCall(self.name if name is None else name, parse_arguments(arguments), self.id)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


class TruncatedStream(ProtocolProblem):
    """A streamed reply that ended before the server finished it (no ``[DONE]``, no
    ``finish_reason``): what came is a part of the reply, not the reply."""

    def __init__(self, count: int, body: str) -> None:
        events = f"{count} event came" if count == 1 else f"{count} events came"
        super().__init__(
            f"the stream ended before the server finished it: {events}, with no "
            "finish_reason and no [DONE]",
            body=body,
            fix="The server (or a proxy in between) cut the reply short: retry, or look at "
            "the server's log for why it stopped.",
        )
        self.count = count


class StreamAccumulator:
    """Builds one :class:`ModelReply` from the lines of a server-sent event stream.

    Feed it every line (without its line ending, blank lines included) with :meth:`feed_line`
    until :attr:`done`, then call :meth:`reply`. Text deltas are concatenated; tool-call deltas
    are merged by their ``index`` (argument fragments concatenated); ``usage`` is taken from the
    chunk that carries it (the last one, when the server sends it at all).

    A stream is whole once the server said so: the ``[DONE]`` event, or a ``finish_reason`` on
    the first choice (some servers send no ``[DONE]``). One that ends before either is cut off:
    what came is not the reply, and :meth:`reply` raises.

    Attributes:
        events: Every event's parsed JSON, in order (the reply's ``raw``).
        done: The ``[DONE]`` event arrived.
        finished: A ``finish_reason`` arrived for the first choice.
    """

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.done = False
        self.finished = False
        self._data: list[str] = []
        self._event = ""
        self._text: list[str] = []
        self._refusal: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self._legacy = _PartialCall()
        self._usage: Usage | None = None
        self._model: str | None = None

    def feed_line(self, line: str) -> None:
        """Take one line of the stream (``data: {...}``, ``event: ...``, ``: comment`` or blank).

        Raises:
            ProtocolProblem: An event is not JSON, or reports an error.
        """
        if self.done:
            return
        if not line:
            self._dispatch()
            return
        if line.startswith(":"):
            return  # A comment: servers send them to keep the connection open.
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value

    def _dispatch(self) -> None:
        data, event = "\n".join(self._data), self._event
        self._data, self._event = [], ""
        if not data:
            return
        if data.strip() == "[DONE]":
            self.done = True
            return
        try:
            chunk = json.loads(data)
        except ValueError:
            raise ProtocolProblem(
                f"a streamed event is not JSON: {_head(data)}", body=data
            ) from None
        self.events.append(chunk)
        if not isinstance(chunk, Mapping):
            raise ProtocolProblem(
                f"a streamed event is not a JSON object: {_head(data)}", body=data
            )
        if event == "error" or ("error" in chunk and not chunk.get("choices")):
            message = server_error_message(chunk) or _head(chunk)
            raise ProtocolProblem(
                f"the stream reported an error: {message}", server_error=True, body=data
            )
        self._apply(chunk)

    def _apply(self, chunk: Mapping[str, Any]) -> None:
        model = chunk.get("model")
        if isinstance(model, str) and model:
            self._model = model
        if isinstance(chunk.get("usage"), Mapping):
            self._usage = _usage(chunk["usage"])
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if not isinstance(choice, Mapping) or choice.get("index", 0) != 0:
                continue
            if isinstance(choice.get("finish_reason"), str) and choice["finish_reason"]:
                self.finished = True
            delta = choice.get("delta")
            if not isinstance(delta, Mapping):
                continue
            if isinstance(delta.get("content"), str):
                self._text.append(delta["content"])
            if isinstance(delta.get("refusal"), str):
                self._refusal.append(delta["refusal"])
            tool_calls = delta.get("tool_calls")
            for position, call in enumerate(tool_calls if isinstance(tool_calls, list) else ()):
                if not isinstance(call, Mapping):
                    continue
                index = call.get("index")
                key = index if isinstance(index, int) else position
                self._calls.setdefault(key, _PartialCall()).add(call)
            if isinstance(delta.get("function_call"), Mapping):
                self._legacy.add(delta["function_call"])

    def _so_far(self) -> str:
        """What the events added up to, each field whole: the text (a secret the server sent
        in pieces is whole here, for a message's redaction to find), then each tool call."""
        parts = ["".join(self._text) or "".join(self._refusal)]
        for _, partial in sorted(self._calls.items()):
            parts.append(f"{partial.name}({partial.text})")
        if self._legacy.name:
            parts.append(f"{_legacy_name(self._legacy.name)}({self._legacy.text})")
        return "\n".join(part for part in parts if part)

    def reply(self) -> ModelReply:
        """The reply the stream carried.

        Raises:
            ProtocolProblem: The stream ended before the server finished it (no ``[DONE]``,
                no ``finish_reason``), or the server finished it with no event at all.
        """
        self._dispatch()  # A last event the server did not end with a blank line.
        if not (self.done or self.finished):
            raise TruncatedStream(len(self.events), self._so_far())
        if not self.events:
            raise ProtocolProblem("the streamed reply carried no events")
        calls = [partial.tool_call() for _, partial in sorted(self._calls.items())]
        if len(calls) == 1 and self._legacy.name:
            # llama.cpp's server puts the first fragment of a streamed call's arguments only in
            # the legacy function_call delta: take the complete copy when only it is JSON.
            only = self._calls[min(self._calls)]
            legacy_text = self._legacy.text
            if (
                _legacy_name(self._legacy.name) == only.name
                and not _is_json(only.text)
                and _is_json(legacy_text)
            ):
                calls = [ToolCall(only.name, parse_arguments(legacy_text), only.id)]
        if not calls and self._legacy.name:
            calls = [self._legacy.tool_call(_legacy_name(self._legacy.name))]
        text = "".join(self._text) or "".join(self._refusal)
        return ModelReply(
            text=text,
            tool_calls=tuple(calls),
            usage=self._usage or Usage(),
            model=self._model,
            raw=list(self.events),
        )


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def unfinished_stream(text: str) -> str | None:
    """Why a recorded event-stream body is not a whole chat-completion stream (it ended before
    the server finished it), as :meth:`StreamAccumulator.reply` says it; ``None`` when it is
    whole, or is broken in another way (which replay reports as it came)."""
    accumulator = StreamAccumulator()
    try:
        for line in _LINE_BREAK.split(text):  # the line breaks httpx's iter_lines splits on
            accumulator.feed_line(line)
            if accumulator.done:
                break
        accumulator.reply()
    except TruncatedStream as problem:
        return problem.description
    except ProtocolProblem:
        return None
    return None
