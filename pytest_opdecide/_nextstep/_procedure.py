"""The next-step decision procedure: parse, validate, re-pick, resolve.

Formats (menu, prompts, messages) follow the reference implementation byte for byte; see
``docs/explanation/differences.md`` for where the behaviour is deliberately better.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pydantic

from pytest_opdecide._nextstep._binding import no_runtime_message
from pytest_opdecide._nextstep._content import content_blocks
from pytest_opdecide._nextstep._decision_errors import DecisionError, reply_text
from pytest_opdecide._nextstep._extract import CALL_KEYS, extract_action
from pytest_opdecide._nextstep._field_types import FieldSpec, slots_of
from pytest_opdecide._nextstep._messages import Message, ModelRequest
from pytest_opdecide._nextstep._options import Menu, Option
from pytest_opdecide._nextstep._steps import InvokeStep, ModelStep, Procedure
from pytest_opdecide._nextstep._validation import (
    ArgsValidator,
    ParseFailure,
    explain,
    safe_repr,
)

__all__ = [
    "CALL_KEYS",
    "DECISION_FINISH_INSTRUCTION",
    "check_context",
    "check_max_retries",
    "check_sync_callables",
    "function_kwargs",
    "make_procedure",
    "parse_once",
    "parse_procedure",
    "read_reply",
    "repick_prompt",
    "resolve_procedure",
    "schema_kwargs",
    "split_action",
    "text_block",
]

DECISION_FINISH_INSTRUCTION = (
    "\n\nDo whatever work you need to first. When you are finished, the LAST thing in your reply "
    "must be a single JSON object picking exactly one option from the menu below — in the format "
    "shown on that option's ``Call:`` line. Options:\n\n"
)
"""Appended (with the menu) by ``Runtime.exec(choices=...)``; never by ``decision.make``."""


NO_ACTION = "Reply contained no parseable JSON with a 'call' field."


def text_block(text: str) -> dict[str, str]:
    """A text content block."""
    return {"type": "text", "text": text}


def repick_prompt(reply: Any, problem: str, menu: str) -> str:
    """The prompt of a re-pick: the previous reply's head, the problem and the menu again."""
    return (
        f"Previous reply:\n{reply_text(reply)[:500]}\n\nProblem: {problem}\n\nOptions:\n{menu}\n\n"
        "Your previous reply failed to parse or validate. Re-pick an option from the list above, "
        "fixing the problem described. Reply with valid JSON in the format shown in that option's "
        "Call: example line — JSON only, no prose."
    )


def check_max_retries(max_retries: Any) -> int:
    """Validate ``max_retries``: a whole number >= 0."""
    if isinstance(max_retries, bool) or not isinstance(max_retries, int):
        raise TypeError(f"max_retries must be an int >= 0, got {type(max_retries).__name__}")
    if max_retries < 0:
        raise ValueError(f"max_retries must be >= 0, got {max_retries}")
    return max_retries


def check_context(menu: Menu, context: Mapping[str, Any] | None) -> None:
    """Fail before any model call when a context parameter cannot be filled."""
    if context is not None and not isinstance(context, Mapping):
        raise TypeError(f"context must be a mapping, got {type(context).__name__}")
    if not menu.needs_context:
        return
    for opt in menu.options:
        for f in opt.hidden:
            if (
                f.source == "context"
                and f.required
                and (context is None or f.context_key not in context)
            ):
                raise TypeError(_context_missing(opt, f))


def _context_missing(opt: Option, f: FieldSpec) -> str:
    return (
        f"Option '{opt.name}' fills parameter '{f.name}' from the context, but context has no "
        f"key '{f.context_key}': pass context={{'{f.context_key}': ...}} or give the parameter a "
        "default"
    )


def check_sync_callables(menu: Menu, api: str) -> None:
    """Async function options cannot run on the sync path: say so before any model call."""
    if menu.async_options:
        raise TypeError(
            f"Option '{menu.async_options[0]}' is an async function; use {api}_async "
            "(or a sync function)"
        )


# --- parsing -----------------------------------------------------------------------------------


class _NotJSON(str):
    """Arguments sent as text that is not JSON (``"arguments": "{oops"``)."""


def _json_arguments(text: str, *, blank: Any) -> Any:
    if not text.strip():
        return blank
    try:
        return json.loads(text)
    except ValueError:
        return _NotJSON(text)


def split_action(action: Mapping[str, Any]) -> tuple[Any, Any]:
    """The picked name and the arguments of an extracted action object, whichever call-key
    alias, argument key or form it uses.

    Arguments sent as JSON text are parsed; text that is not JSON comes back as it is (a
    ``str``), and a pick without arguments gives ``None``.
    """
    for key in CALL_KEYS:
        if key in action:
            break
    picked = action[key]
    if type(picked) is dict or (type(picked) is not str and isinstance(picked, Mapping)):
        # OpenAI style: {"function": {"name": ..., "arguments": "<json>"}}
        name = picked.get("name")
        args = picked.get("arguments", picked.get("args"))
        if isinstance(args, str):
            args = _json_arguments(args, blank=None)
        return name, args
    if "args" in action:
        return picked, action["args"]
    if "arguments" in action:
        args = action["arguments"]
        if isinstance(args, str):
            args = _json_arguments(args, blank=_NotJSON(args))
        return picked, args
    # Tolerance: arguments at the top level, {"call": "greet", "name": "ada"}.
    return picked, {k: v for k, v in action.items() if k not in CALL_KEYS}


def _validated(
    opt: Option, validator: ArgsValidator, args: Mapping[str, Any], reply: Any, label: str | None
) -> dict[str, Any]:
    """The option's arguments, validated and converted by its pydantic validator.

    ``reply`` is the reply text the arguments were parsed from (``None`` when they were not);
    ``label`` words missing arguments of a function option (``Call``, ``Tool``), ``None`` those
    of a schema option.
    """
    from_json = reply is not None
    plain = args if type(args) is dict else dict(args)
    try:
        if from_json:
            kwargs: dict[str, Any] = validator.validate_parsed(plain)
        else:
            kwargs = validator.validate(plain, from_json=False)
    except pydantic.ValidationError as exc:
        if label is None:
            missing = f"Option '{opt.name}' is missing required fields: "
        else:
            missing = f"{label} '{opt.name}' is missing required arguments: "
        # A copied placeholder explains the failure best ("<date YYYY-MM-DD>" is no date).
        raise validator.copied_placeholder(plain) or explain(
            exc, plain, validator, missing
        ) from None
    # A valid pick may still hold a copied "<str>" (or "str"): looked for only when the text
    # has a "<" or a word of a placeholder.
    if (
        not from_json
        or "<" in reply
        or "\\u003" in reply
        or _holds_a_mark(reply, validator.copy_marks)
    ):
        failure = validator.copied_placeholder(plain)
        if failure is not None:
            raise failure
    return kwargs


def _holds_a_mark(reply: str, marks: tuple[str, ...]) -> bool:
    """Whether the casefolded reply holds any of ``marks`` (casefolded once, not per mark)."""
    if not marks:
        return False
    folded = reply.casefold()
    return any(mark in folded for mark in marks)


def function_kwargs(
    opt: Option,
    args: Mapping[str, Any],
    context: Mapping[str, Any] | None,
    runtime: Any,
    *,
    label: str = "Call",
    reply: Any = None,
) -> dict[str, Any]:
    """Validated keyword arguments for a function option, with context and runtime injected.

    ``reply``: the reply text ``args`` was parsed from, if any (see :func:`_validated`).
    """
    validator = opt.validator
    kwargs = {} if validator is None else _validated(opt, validator, args, reply, label)
    for f in opt.hidden:
        # Hidden parameters never come from the model: the caller's context and runtime win.
        if f.source == "runtime":
            if runtime is not None or f.required:
                kwargs[f.name] = runtime
        elif context is not None and f.context_key in context:
            kwargs[f.name] = context[f.context_key]
        elif f.required:
            raise TypeError(_context_missing(opt, f))
    return kwargs


def schema_kwargs(opt: Option, args: Mapping[str, Any], *, reply: Any = None) -> dict[str, Any]:
    """Validated fields of a schema option (every field is required)."""
    validator = opt.validator
    return {} if validator is None else _validated(opt, validator, args, reply, None)


def _no_action_message(reply: Any, menu: Menu) -> str:
    """Why nothing was picked: :data:`NO_ACTION`, and what was copied when the reply holds a
    slot of the menu's ``Call:`` examples (``<int>``, which is no JSON value)."""
    text = reply if type(reply) is str else None
    if text is None or "<" not in text:
        return NO_ACTION
    for opt in menu.options:
        for f in opt.fields:
            if f.type.choices is None:
                for slot in slots_of(f.type.placeholder()):
                    if slot.text in text:
                        return (
                            f"{NO_ACTION[:-1]}: it copies {slot.text} from the Call: example "
                            f"of '{opt.name}', a placeholder and no JSON value; write "
                            f"{slot.wanted} in its place."
                        )
    return NO_ACTION


_read_before: tuple[str, Menu, Option, dict[str, Any]] | None = None
"""The pick :func:`read_reply` found last, for a decision that reads the very same reply text
against the very same menu next: a strict fake checks a scripted pick so before it sends it, and
the pick is not read twice. Kept only for a pick that no hidden parameter reads and whose
arguments are all ``str``, ``int``, ``float``, ``bool`` or ``None`` (nothing a caller could change
in place), by the identity of the text and the menu (both held here, so no other object can
take their ids), and given out once."""

_SCALARS = frozenset({str, int, float, bool, type(None)})


def read_reply(
    reply: Any, menu: Menu, context: Mapping[str, Any] | None
) -> tuple[Option, dict[str, Any]]:
    """:func:`parse_once` without a runtime (``options.parse_reply``), its pick kept for the
    next read of the same reply against the same menu (see :data:`_read_before`)."""
    global _read_before
    opt, kwargs = parse_once(reply, menu, context, None)
    if type(reply) is str and not opt.hidden and _SCALARS.issuperset(map(type, kwargs.values())):
        _read_before = (reply, menu, opt, kwargs.copy())
    return opt, kwargs


def parse_once(
    reply: Any, menu: Menu, context: Mapping[str, Any] | None, runtime: Any
) -> tuple[Option, dict[str, Any]]:
    """Parse and validate one reply against the menu, or raise :class:`ParseFailure`."""
    global _read_before
    before = _read_before
    if before is not None and before[0] is reply and before[1] is menu:
        _read_before = None  # given out once: the pick of a check read again by the decision
        return before[2], before[3]
    action = extract_action(reply)
    if action is None:
        raise ParseFailure("no_action", _no_action_message(reply, menu))
    # A pick read from text holds only what JSON makes (exact str, int, float, bool, None,
    # list, dict): validated as JSON input.
    if type(reply) is str:
        text: str | None = reply
    else:
        text = reply_text(reply) if isinstance(reply, str | bytes | bytearray) else None
    name, args = split_action(action)
    # An exact str: subclasses may hash or compare in surprising ways.
    opt = menu.by_name.get(name) if type(name) is str else None
    if opt is None:
        raise ParseFailure(
            "unknown_call",
            f"Picked {safe_repr(name)}, which is not an available option. "
            f"Valid options: {list(menu.names)!r}",
        )
    if args is None:
        args = {}
    elif type(args) is _NotJSON:
        raise ParseFailure("bad_args", "args must be an object, got str (not valid JSON)")
    elif type(args) is not dict and not isinstance(args, Mapping):
        raise ParseFailure("bad_args", f"args must be an object, got {type(args).__name__}")
    if opt.kind == "function":
        return opt, function_kwargs(opt, args, context, runtime, reply=text)
    if opt.kind == "schema":
        return opt, schema_kwargs(opt, args, reply=text)
    return opt, {}


# --- procedures --------------------------------------------------------------------------------


def parse_procedure(
    reply: Any,
    menu: Menu,
    *,
    context: Mapping[str, Any] | None,
    max_retries: int,
    runtime: Any,
    parent: int | None,
    model: str | None = None,
    timeout_s: float | None = None,
    failure: ParseFailure | None = None,
) -> Procedure[tuple[Option, dict[str, Any], int | None]]:
    """Parse ``reply``; on failure re-pick up to ``max_retries`` times through ``runtime``.

    Returns the option, its validated keyword arguments, and the id of the call whose reply was
    accepted (``parent`` when it was the first reply). ``failure``, when given, is what parsing
    ``reply`` already raised (so the reply is not parsed twice).
    """
    replies = [reply]
    while True:
        if failure is None:
            try:
                opt, kwargs = parse_once(reply, menu, context, runtime)
            except ParseFailure as exc:
                failure = exc
            else:
                return opt, kwargs, parent
        if len(replies) > max_retries:
            raise DecisionError(failure.kind, failure.message, replies, len(replies)) from None
        if runtime is None:
            raise RuntimeError(no_runtime_message()) from None
        request = ModelRequest(
            "repick",
            (Message("user", (text_block(repick_prompt(reply, failure.message, menu.text)),)),),
            model=model,
            timeout_s=timeout_s,
            menu=menu.text,
            options=menu.names,
            choices=menu,
        )
        record = yield ModelStep(request, parent)
        parent = record.id
        reply = record.reply.text
        replies.append(reply)
        failure = None


def call_args(opt: Option, kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Split keyword arguments into positional-only ones and the rest."""
    if not opt.positional:
        return (), kwargs
    rest = dict(kwargs)
    positional = []
    for name in opt.positional:
        if name not in rest:
            break
        positional.append(rest.pop(name))
    return tuple(positional), rest


def resolve_procedure(
    reply: Any,
    menu: Menu,
    *,
    context: Mapping[str, Any] | None,
    max_retries: int,
    runtime: Any,
    parent: int | None,
    model: str | None = None,
    timeout_s: float | None = None,
) -> Procedure[Any]:
    """Parse (with re-picks) and resolve into the next step's result."""
    # The first reply is parsed here directly: a good pick (the common case) then needs no
    # further generator; only a failure enters the re-pick loop.
    try:
        opt, kwargs = parse_once(reply, menu, context, runtime)
    except ParseFailure as failure:
        opt, kwargs, parent = yield from parse_procedure(
            reply,
            menu,
            context=context,
            max_retries=max_retries,
            runtime=runtime,
            parent=parent,
            model=model,
            timeout_s=timeout_s,
            failure=failure,
        )
    if opt.kind == "function":
        assert opt.handler is not None
        args, kw = call_args(opt, kwargs)
        return (yield InvokeStep(opt.handler, args, kw, parent))
    if opt.kind == "schema":
        return {"decision": opt.name, **kwargs}
    return opt.value


def make_procedure(
    prompt: Any,
    menu: Menu,
    *,
    context: Mapping[str, Any] | None,
    max_retries: int,
    runtime: Any,
    parent: int | None,
) -> Procedure[Any]:
    """``decision.make``: one tool-free call with the prompt and the menu, then resolve."""
    if isinstance(prompt, str):
        blocks: tuple[Mapping[str, Any], ...] = (text_block(f"{prompt}\n\n{menu.text}"),)
    else:
        blocks = (*content_blocks(prompt), text_block(f"\n\n{menu.text}"))
    request = ModelRequest(
        "turn", (Message("user", blocks),), menu=menu.text, options=menu.names, choices=menu
    )
    record = yield ModelStep(request, parent)
    return (
        yield from resolve_procedure(
            record.reply.text,
            menu,
            context=context,
            max_retries=max_retries,
            runtime=runtime,
            parent=record.id,
        )
    )
