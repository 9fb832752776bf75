"""The next-step decision: offer options, let the model pick, resolve the pick into a result.

``make(prompt, options)`` renders the options as a menu, asks the model (with no tools), parses
the JSON pick from its reply, validates it, re-asks once on a bad reply, and returns the next
step's result: a picked function's return value, a value option's value, or
``{"decision": name, **fields}`` for a schema option.

Example:
    >>> from pytest_opdecide import decision
    >>> print(decision.render_options({"done": ("DONE", "Pick when finished.")}), end="")
    done()
        Pick when finished.
        Call: {"call": "done"}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pytest_opdecide._nextstep._adapter import as_runtime, user_runtime
from pytest_opdecide._nextstep._annotations import FromContext, Param
from pytest_opdecide._nextstep._binding import current_parent, current_runtime, no_runtime_message
from pytest_opdecide._nextstep._decision_errors import DecisionError
from pytest_opdecide._nextstep._extract import extract_action as extract_raw_action
from pytest_opdecide._nextstep._options import Menu, Option, normalize_options
from pytest_opdecide._nextstep._procedure import (
    DECISION_FINISH_INSTRUCTION,
    check_context,
    check_max_retries,
    check_sync_callables,
    make_procedure,
    parse_procedure,
    resolve_procedure,
    split_action,
)
from pytest_opdecide._nextstep._runtime import Runtime, drive, drive_async
from pytest_opdecide._nextstep._steps import Procedure

__all__ = [
    "DECISION_FINISH_INSTRUCTION",
    "DecisionError",
    "FromContext",
    "Param",
    "extract_action",
    "extract_raw_action",
    "make",
    "make_async",
    "parse_args",
    "parse_args_async",
    "render_options",
    "resolve_decision",
    "resolve_decision_async",
    "response_schema",
]


def extract_action(text: object) -> dict[str, Any] | None:
    """The model's pick in a reply, normalised: ``{"call": name, "args": {...}}``.

    The pick is the last JSON object in the reply that carries a call key (see
    :func:`extract_raw_action`, which returns it as the reply wrote it). Whichever alias names
    the option (``call``, ``action``, ``function``, ``tool``) and wherever the arguments are
    (``args``, ``arguments`` as an object or as JSON text, OpenAI's
    ``{"function": {"name": ..., "arguments": "..."}}``, or at the top level next to the call
    key), the result has the same two keys. Missing or ``null`` arguments give ``{}``;
    arguments that are no object are kept as sent (``parse_args`` then says so).

    Returns:
        ``{"call": name, "args": args}``, or ``None`` when the reply holds no pick. Never
        raises.

    Example:
        >>> decision.extract_action('Done. {"action": "greet", "name": "ada"}')
        {'call': 'greet', 'args': {'name': 'ada'}}
        >>> decision.extract_action("no pick here") is None
        True
    """
    action = extract_raw_action(text)
    if action is None:
        return None
    name, args = split_action(action)
    if args is None:
        args = {}
    elif isinstance(args, str):
        args = str(args)  # arguments sent as text that is not JSON, as a plain string
    return {"call": name, "args": args}


def render_options(options: Any) -> str:
    """Render options (dict or list form) as the menu text the model reads.

    Raises:
        TypeError: The options are malformed.
        ValueError: The options are empty or a name repeats.
    """
    return normalize_options(options).text


def response_schema(options: Any) -> dict[str, Any]:
    """The menu as a JSON schema: what a valid pick from ``options`` looks like.

    One branch per option under ``anyOf`` (a menu of one option is that branch alone): ``call``
    fixed to the option's name, ``args`` the option's argument schema, required as the option
    requires; an option without arguments has no ``args``. Every decision call carries it as
    ``ModelRequest.response_schema``; ``OpenAICompatibleRuntime`` sends it as a
    ``json_schema`` response format (see "Structured decisions" in docs/decisions.md).

    Raises:
        TypeError: The options are malformed.
        ValueError: The options are empty or a name repeats.

    Example:
        >>> decision.response_schema({"done": "DONE"})["properties"]["call"]
        {'type': 'string', 'enum': ['done']}
    """
    return normalize_options(options).response_schema()


def _prepare(options: Any, context: Mapping[str, Any] | None, max_retries: int) -> Menu:
    menu = normalize_options(options)
    check_max_retries(max_retries)
    check_context(menu, context)
    return menu


def _driver(runtime: Any) -> Runtime | None:
    """The runtime that makes the model calls: the given one, else the bound one (wrapped
    when it is an object with ``exec``)."""
    given = runtime if runtime is not None else current_runtime()
    return None if given is None else as_runtime(given)


def _make(
    prompt: Any,
    options: Any,
    runtime: Any,
    context: Mapping[str, Any] | None,
    max_retries: int,
    api: str | None,
) -> tuple[Procedure[Any], Runtime]:
    menu = _prepare(options, context, max_retries)
    if api is not None:
        check_sync_callables(menu, api)
    given = runtime if runtime is not None else current_runtime()
    if given is None:
        raise RuntimeError(no_runtime_message())
    chosen = as_runtime(given)
    procedure = make_procedure(
        prompt,
        menu,
        context=context,
        max_retries=max_retries,
        runtime=given if chosen is given else user_runtime(chosen),
        parent=current_parent(chosen.trace),
    )
    return procedure, chosen


def make(
    prompt: str,
    options: Any,
    *,
    runtime: Any = None,
    context: Mapping[str, Any] | None = None,
    max_retries: int = 1,
) -> Any:
    """Ask the model to pick one option and return the next step's result.

    Sends one text block, ``f"{prompt}\\n\\n{menu}"``, with no tools (a pure decision): your
    prompt must tell the model to pick. A bad reply is re-picked up to ``max_retries`` times.

    Args:
        prompt: What the model decides about.
        options: Dict form ``{name: handler}`` or list form (see the docs).
        runtime: The runtime to ask: a ``Runtime``, or any object with an ``exec`` method
            (see :func:`~pytest_opdecide.as_runtime`); defaults to the one bound by the
            enclosing Agent call.
        context: Values for parameters marked ``FromContext`` (never taken from the model).
        max_retries: Re-picks allowed after a reply that fails to parse or validate (0: none).

    Returns:
        A picked function's return value, a value option's value, or
        ``{"decision": name, **fields}`` for a schema option.

    Raises:
        DecisionError: No valid pick after every re-pick.
        RuntimeError: No runtime passed and none bound.
        TypeError: Malformed options, a parameter type pydantic cannot validate, or a
            ``runtime`` that is no runtime (raised before any model call).
        ValueError: Empty options or a repeated name (raised before any model call).
    """
    procedure, chosen = _make(prompt, options, runtime, context, max_retries, "decision.make")
    return drive(procedure, chosen)


async def make_async(
    prompt: str,
    options: Any,
    *,
    runtime: Any = None,
    context: Mapping[str, Any] | None = None,
    max_retries: int = 1,
) -> Any:
    """The asyncio twin of :func:`make`; async function options are awaited."""
    procedure, chosen = _make(prompt, options, runtime, context, max_retries, None)
    return await drive_async(procedure, chosen)


def _chosen(option: Option) -> Callable[..., Any] | str:
    if option.kind == "function" and option.handler is not None:
        return option.handler
    return option.name


def _parse(
    reply: Any,
    options: Any,
    runtime: Any,
    context: Mapping[str, Any] | None,
    max_retries: int,
    resolve: bool,
) -> tuple[Procedure[Any], Runtime | None]:
    menu = _prepare(options, context, max_retries)
    chosen = _driver(runtime)
    factory = resolve_procedure if resolve else parse_procedure
    procedure = factory(
        reply,
        menu,
        context=context,
        max_retries=max_retries,
        runtime=None if chosen is None else user_runtime(chosen),
        parent=None if chosen is None else current_parent(chosen.trace),
    )
    return procedure, chosen


def parse_args(
    reply: Any,
    options: Any,
    runtime: Any = None,
    *,
    context: Mapping[str, Any] | None = None,
    max_retries: int = 1,
) -> tuple[Callable[..., Any] | str, dict[str, Any]]:
    """Parse and validate a reply against the options, re-picking on failure.

    ``options`` may also be the normalised options a model call offered (``request.choices``);
    ``runtime``, which makes the re-picks, a ``Runtime`` or any object with ``exec``.

    Returns:
        ``(chosen, kwargs)``: for a function option the original function and the keyword
        arguments to call it with (context and runtime injected); for a value or schema option
        the option name and its validated fields.

    Raises:
        DecisionError: No valid pick after every re-pick.
        RuntimeError: A re-pick is needed but no runtime was passed or bound.
    """
    procedure, chosen = _parse(reply, options, runtime, context, max_retries, resolve=False)
    option, kwargs, _ = drive(procedure, chosen)
    return _chosen(option), kwargs


async def parse_args_async(
    reply: Any,
    options: Any,
    runtime: Any = None,
    *,
    context: Mapping[str, Any] | None = None,
    max_retries: int = 1,
) -> tuple[Callable[..., Any] | str, dict[str, Any]]:
    """The asyncio twin of :func:`parse_args`."""
    procedure, chosen = _parse(reply, options, runtime, context, max_retries, resolve=False)
    option, kwargs, _ = await drive_async(procedure, chosen)
    return _chosen(option), kwargs


def resolve_decision(
    reply: Any,
    options: Any,
    runtime: Any = None,
    *,
    context: Mapping[str, Any] | None = None,
    max_retries: int = 1,
) -> Any:
    """Parse a reply (re-picking on failure) and resolve it into the next step's result.

    Raises:
        DecisionError: No valid pick after every re-pick.
        RuntimeError: A re-pick is needed but no runtime was passed or bound.
    """
    check_sync_callables(normalize_options(options), "decision.resolve_decision")
    procedure, chosen = _parse(reply, options, runtime, context, max_retries, resolve=True)
    return drive(procedure, chosen)


async def resolve_decision_async(
    reply: Any,
    options: Any,
    runtime: Any = None,
    *,
    context: Mapping[str, Any] | None = None,
    max_retries: int = 1,
) -> Any:
    """The asyncio twin of :func:`resolve_decision`; async function options are awaited."""
    procedure, chosen = _parse(reply, options, runtime, context, max_retries, resolve=True)
    return await drive_async(procedure, chosen)
