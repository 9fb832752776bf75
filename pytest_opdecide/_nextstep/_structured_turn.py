"""A structured turn: an ``exec(choices=..., tools=[...])`` round as one reply held to a schema.

A server's native tool calls can run away with a small model: llama-cpp-python's
function-calling format ignores ``max_tokens`` for tool arguments, and SmolLM2-135M writes
1,400-1,700 tokens of arguments until the call times out or the context is full. A structured
turn asks for one JSON reply instead, held by a JSON schema (a grammar on the server) to
either *call one of the offered tools* or *pick one option of the menu*, in the one format of
the menu's ``Call:`` lines::

    {"call": "lookup_order", "args": {"order_id": "1234"}}     <- a tool: its result comes back
    {"call": "refund"}                                          <- an option: the turn is over

The tools are rendered as a second menu, in the menu's own format, after the options
(:func:`tools_text`); their arguments are bounded as every field of a structured decision is
(text lengths, see ``_response_schema``). A reply that calls a tool becomes a native
:class:`~._messages.ToolCall` (:func:`tool_call_of`), so the runtime's tool loop runs it as
any other; the conversation that follows is sent as text (:func:`turn_messages`), since no
native ``tools`` were offered. So that the turn ends, the tools are offered for as many rounds
as there are tools (:func:`tools_left`): the round after that offers the options alone.

Nothing here sends anything: ``runtimes._openai_runtime`` builds the body from these pieces.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_opdecide._nextstep._extract import extract_action
from pytest_opdecide._nextstep._field_types import json_dumps
from pytest_opdecide._nextstep._messages import Message, ModelReply, ModelRequest, ToolCall
from pytest_opdecide._nextstep._options import Menu, normalize_options
from pytest_opdecide._nextstep._procedure import split_action
from pytest_opdecide._nextstep._response_schema import menu_schema

__all__ = [
    "LAST_ROUND",
    "TOOLS_INTRO",
    "rounds_so_far",
    "tool_call_of",
    "tool_menu",
    "tools_left",
    "tools_text",
    "turn_messages",
    "turn_schema",
]

TOOLS_INTRO = (
    "\n\nTools: before you pick, you may call one of these tools instead, one per reply, in the "
    "format shown on its Call: line; its result comes back to you, then you pick (or call "
    "another tool). Tools:\n\n"
)
"""Put before the tools' menu, after the options' menu (a structured turn only)."""

LAST_ROUND = (
    "No more tool calls: pick one option from the menu now, in the format shown on its Call: line."
)
"""The user message that closes a structured turn whose tools are used up."""


def tool_menu(request: ModelRequest) -> Menu | None:
    """The offered tools as a menu, or ``None`` when the request is no structured turn: no
    tools, no options, or a tool named like an option (a reply could not tell them apart)."""
    menu = request.choices
    if not request.tools or not isinstance(menu, Menu):
        return None
    names = [spec.name for spec in request.tools]
    if set(names) & set(menu.names) or len(set(names)) != len(names):
        return None
    entries: dict[str, Any] = {
        spec.name: (spec.function, spec.description) if spec.description else spec.function
        for spec in request.tools
    }
    return normalize_options(entries)


def tools_left(request: ModelRequest) -> bool:
    """Whether this round still offers the tools: fewer tool rounds so far than tools."""
    return rounds_so_far(request.messages) < len(request.tools)


def turn_schema(menu: Menu, tools: Menu | None) -> dict[str, Any]:
    """One reply that picks an option of ``menu`` or calls a tool of ``tools``."""
    return menu_schema((*menu.options, *(tools.options if tools is not None else ())))


def tools_text(tools: Menu) -> str:
    """What the model reads of the tools, after the options' menu."""
    return TOOLS_INTRO + tools.text


def turn_messages(request: ModelRequest, tools: Menu, *, offered: bool) -> list[dict[str, Any]]:
    """The chat messages of a structured turn, as text.

    The first user message ends with the tools' menu; a tool call the model made is its own
    JSON reply again, and each tool's result a user message (``Result of lookup_order:
    ...``). When the tools are used up (``offered`` is false), a last user message says to pick.
    """
    result: list[dict[str, Any]] = []
    first = True
    for message in request.messages:
        if message.role == "user":
            text = message.text
            if first:
                text += tools_text(tools)
                first = False
            result.append({"role": "user", "content": text})
        elif message.role == "assistant":
            said = [
                json_dumps({"call": call.name, "args": _arguments(call.arguments)})
                for call in message.tool_calls
            ]
            result.append({"role": "assistant", "content": "\n".join(said) or message.text})
        else:
            name = message.name or "the tool"
            result.append({"role": "user", "content": f"Result of {name}:\n{message.text}"})
    if not offered:
        result.append({"role": "user", "content": LAST_ROUND})
    return result


def _arguments(arguments: Mapping[str, Any] | str) -> Any:
    return dict(arguments) if isinstance(arguments, Mapping) else arguments


def tool_call_of(reply: ModelReply, tools: Menu, menu: Menu) -> ModelReply:
    """``reply`` as a native tool call when its JSON calls one of ``tools``, else unchanged
    (a pick, or anything else, which the decision then parses as always).

    The call has no id: none was sent, and the conversation that follows is text.
    """
    if reply.tool_calls or not isinstance(reply.text, str):
        return reply
    action = extract_action(reply.text)
    if action is None:
        return reply
    name, args = split_action(action)
    if type(name) is not str or name not in tools.by_name or name in menu.by_name:
        return reply
    # Arguments that are no object go to the tool loop as they are: it tells the model so.
    arguments: Mapping[str, Any] | str = (
        dict(args) if isinstance(args, Mapping) else {} if args is None else json_dumps(args)
    )
    call = ToolCall(name, arguments)
    return ModelReply(
        text="", tool_calls=(call,), usage=reply.usage, model=reply.model, raw=reply.raw
    )


def rounds_so_far(messages: Sequence[Message]) -> int:
    """How many tool rounds the conversation holds."""
    return sum(1 for message in messages if message.tool_calls)
