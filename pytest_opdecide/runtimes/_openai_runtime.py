"""A real runtime over the OpenAI chat-completions protocol (sync and async, httpx)."""

from __future__ import annotations

import asyncio
import math
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any, Literal, Self

import httpx

from pytest_opdecide._http._credentials import register_client
from pytest_opdecide._http._deadline import CallDeadline, ClientSockets
from pytest_opdecide._http._network import model_call
from pytest_opdecide._http._redaction import carried_credentials
from pytest_opdecide._http._replay_routing import replay_async_client, replay_client
from pytest_opdecide._nextstep._messages import ModelReply, ModelRequest
from pytest_opdecide._nextstep._response_schema import json_schema_format
from pytest_opdecide._nextstep._runtime import Runtime
from pytest_opdecide._nextstep._structured_turn import (
    tool_call_of,
    tool_menu,
    tools_left,
    turn_messages,
    turn_schema,
)
from pytest_opdecide.runtimes._error_mapping import (
    Where,
    error_for_problem,
    error_for_status,
    error_for_timeout,
    error_for_transport,
)
from pytest_opdecide.runtimes._protocol import (
    ProtocolProblem,
    StreamAccumulator,
    chat_messages,
    parse_completion,
    plain_json,
    tool_definitions,
)
from pytest_opdecide.runtimes._runtime_errors import ResponseStatusError, RuntimeCallError

__all__ = [
    "STRUCTURED_TURN_MAX_TOKENS",
    "DecisionFormat",
    "OpenAICompatibleRuntime",
    "StructuredDecisions",
    "ToolTurns",
]

_CHAT_PATH = "chat/completions"

StructuredDecisions = Literal["auto", "always", "never"]
"""Whether decision calls ask the server to hold the reply to the menu's JSON schema."""

DecisionFormat = Literal["json_schema", "json_object", "text"]
"""How the menu's schema goes out: OpenAI's ``json_schema`` response format,
llama-cpp-python's ``json_object`` with a ``schema``, or not at all (the text menu only)."""

ToolTurns = Literal["structured", "native"]
"""How a turn that offers tools and options goes out: one reply held to a schema that calls a
tool or picks an option (``"structured"``), or the server's native ``tools``."""

STRUCTURED_TURN_MAX_TOKENS = 512
"""The ``max_tokens`` of a structured turn's call, unless ``extra_body`` gives one: a reply
calls one tool or picks one option, far shorter than this."""

_STRUCTURED = ("auto", "always", "never")
_TOOL_TURNS = ("structured", "native")
_REFUSAL_WORDS = ("response_format", "response format", "json_schema", "json schema")
"""A refusal that names one of these is about the response format the runtime sent."""


class _Secret:
    """A string that never shows itself: not in ``repr``, not in ``--showlocals`` output."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "'***'"


def _check_timeout(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number of seconds or None, got {type(value).__name__}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be > 0 seconds (or None for no limit), got {value!r}")
    return float(value)


class OpenAICompatibleRuntime(Runtime):
    """A real runtime: each model call is one ``POST {base_url}/chat/completions``.

    Works with any server that speaks the OpenAI chat-completions protocol: OpenAI itself,
    llama.cpp's and llama-cpp-python's servers, vLLM, Ollama, LM Studio... The base
    :class:`~pytest_opdecide.Runtime` runs the tool loop: offered tools are sent as native
    ``tools``, the model's ``tool_calls`` run, and their results go back as ``tool`` messages.
    A call that offers no tools (``decision.make``, re-picks) sends no ``tools`` key at all.

    Construction does no I/O. The httpx clients are created at the first call and reused; close
    them with :meth:`close` / :meth:`aclose` or use the runtime as a (async) context manager.

    Args:
        base_url: The API root, e.g. ``"https://api.openai.com/v1"`` or
            ``"http://127.0.0.1:8765/v1"``; ``/chat/completions`` is appended.
        api_key: Sent as ``Authorization: Bearer <key>``; no such header when ``None`` or
            empty. Never shown in messages, errors or ``repr``.
        model: The default model name (``exec(model=...)`` overrides it per turn). ``None``
            sends no ``model`` key, which single-model servers accept.
        transport: The httpx transport every request goes through (``httpx.MockTransport``
            in tests). An ``httpx.BaseTransport`` serves the sync calls, an
            ``httpx.AsyncBaseTransport`` the async ones; ``MockTransport`` is both. With a
            sync-only transport, async calls run the sync call in a worker thread.
        async_transport: The transport of the async calls, when it differs from ``transport``.
        timeout_s: The time limit of each model call in seconds, or ``None`` for none: the
            whole call, from connecting to the last byte of the reply (streamed or not), not
            each read on its own; a request's own ``timeout_s`` (``exec(timeout_s=...)``) wins.
            When it runs out, :class:`~pytest_opdecide.runtimes.CallTimeoutError`.
        temperature: Sent with every call; the default 0 makes replies (and so cassettes)
            reproducible. ``None`` sends none: the server's default applies.
        default_headers: More headers for every request (``{"api-key": ...}`` for Azure,
            an ``OpenAI-Organization``...). Their values (but for ``Accept``,
            ``Content-Type``, ``User-Agent`` and version headers) are redacted from error
            messages like the key.
        stream: Ask for server-sent events and assemble the reply from them. The result is the
            same :class:`~pytest_opdecide.ModelReply`; its ``raw`` is the list of events.
        extra_body: More top-level body fields for every call (``max_tokens``, ``seed``,
            ``tool_choice``...). They override the runtime's own; a ``None`` value removes
            a field the runtime would send (``{"temperature": None}``).
        structured_decisions: Whether a decision call (the pick of ``decision.make``, a
            re-pick, an ``exec(choices=...)`` turn that offers no tools) asks the server to
            hold the reply to the menu's JSON schema (:attr:`ModelRequest.response_schema`),
            as a ``json_schema`` response format. ``"auto"`` (the default): do so, and when the
            server refuses it, send the same call again with the text menu alone and remember
            that for this runtime. ``"always"``: a refusal raises. ``"never"``: the text menu
            alone. The text menu is sent either way and the reply is parsed and validated
            either way: the schema only narrows what the model can write. A server that takes
            the schema only as ``{"type": "json_object", "schema": ...}`` (llama-cpp-python's)
            is sent it so, once its refusal says so. See :attr:`decision_format`.
        tool_turns: How a turn that offers both tools and options (``agent(prompt,
            choices=..., tools=[...])``) goes out. ``"structured"`` (the default): each of its
            calls is one reply held to a JSON schema that either calls one of the tools or
            picks one of the options, in the menu's ``Call:`` format; the tools are listed
            after the options in the same format, a tool call runs through the tool loop as a
            native one would, and the tools are offered for as many rounds as there are tools,
            so that the turn ends with a pick. It is sent so only while decision calls are
            structured (:attr:`decision_format` is not ``"text"``); else, and with
            ``"native"``, the tools go out as the server's native ``tools``. Measured against a
            small local model, native tool calls never ended a turn (their arguments ran on for
            1,400 tokens and more) and structured turns did: see "Structured turns" in
            docs/runtimes.md. A turn that offers tools without options is always native.
        tools: The ``"default"`` toolset (see :class:`~pytest_opdecide.Runtime`).
        toolsets: More named toolsets.

    Raises:
        TypeError: An argument has the wrong type (checked at construction).
        ValueError: ``base_url`` is not an absolute http(s) URL, or ``timeout_s`` is not > 0.

    Example:
        >>> import httpx
        >>> from pytest_opdecide.runtimes import OpenAICompatibleRuntime
        >>> def server(request: httpx.Request) -> httpx.Response:
        ...     message = {"role": "assistant", "content": "Hello!"}
        ...     return httpx.Response(200, json={"choices": [{"index": 0, "message": message}]})
        >>> with OpenAICompatibleRuntime(
        ...     "http://127.0.0.1:8765/v1", transport=httpx.MockTransport(server)
        ... ) as runtime:
        ...     runtime.exec("Say hello.")
        'Hello!'
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        model: str | None = None,
        *,
        transport: httpx.BaseTransport | httpx.AsyncBaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
        timeout_s: float | None = 60.0,
        temperature: float | None = 0.0,
        default_headers: Mapping[str, str] | None = None,
        stream: bool = False,
        extra_body: Mapping[str, Any] | None = None,
        structured_decisions: StructuredDecisions = "auto",
        tool_turns: ToolTurns = "structured",
        tools: Iterable[Callable[..., Any]] = (),
        toolsets: Mapping[str, Iterable[Callable[..., Any]]] | None = None,
    ) -> None:
        if model is not None and not isinstance(model, str):
            raise TypeError(f"model must be a string or None, got {type(model).__name__}")
        super().__init__(model=model, tools=tools, toolsets=toolsets)
        if not isinstance(base_url, str):
            raise TypeError(f"base_url must be a string, got {type(base_url).__name__}")
        try:
            url = httpx.URL(base_url.rstrip("/"))
        except httpx.InvalidURL as error:
            raise ValueError(f"base_url is not a valid URL ({error})") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(
                "base_url must be an absolute http(s) URL such as http://127.0.0.1:8765/v1 "
                "or https://api.openai.com/v1"
            )
        if api_key is not None and not isinstance(api_key, str):
            raise TypeError(f"api_key must be a string or None, got {type(api_key).__name__}")
        if transport is not None and not isinstance(
            transport, httpx.BaseTransport | httpx.AsyncBaseTransport
        ):
            raise TypeError(
                "transport must be an httpx.BaseTransport or httpx.AsyncBaseTransport (e.g. "
                f"httpx.MockTransport(handler)), got {type(transport).__name__}"
            )
        if async_transport is not None and not isinstance(
            async_transport, httpx.AsyncBaseTransport
        ):
            raise TypeError(
                "async_transport must be an httpx.AsyncBaseTransport, got "
                f"{type(async_transport).__name__}"
            )
        if temperature is not None and (
            isinstance(temperature, bool) or not isinstance(temperature, int | float)
        ):
            raise TypeError(f"temperature must be a number or None, got {temperature!r}")
        if not isinstance(stream, bool):
            raise TypeError(f"stream must be True or False, got {stream!r}")
        if extra_body is not None and not isinstance(extra_body, Mapping):
            raise TypeError(f"extra_body must be a mapping, got {type(extra_body).__name__}")
        if default_headers is not None and not isinstance(default_headers, Mapping):
            raise TypeError(
                f"default_headers must be a mapping, got {type(default_headers).__name__}"
            )
        if structured_decisions not in _STRUCTURED:
            raise ValueError(
                "structured_decisions must be 'auto', 'always' or 'never', got "
                f"{structured_decisions!r}"
            )

        self.base_url = str(url)
        """The API root, without a trailing slash."""
        self.timeout_s = _check_timeout(timeout_s, "timeout_s")
        """The default time limit of a whole call, in seconds (``None``: none)."""
        self.temperature = temperature
        """The temperature sent with every call (``None``: none sent)."""
        self.stream = stream
        """Whether replies are streamed (server-sent events)."""
        self.extra_body: dict[str, Any] = dict(extra_body or {})
        """Top-level body fields added to (and overriding) every call's."""
        if tool_turns not in _TOOL_TURNS:
            raise ValueError(f"tool_turns must be 'structured' or 'native', got {tool_turns!r}")
        self.tool_turns: ToolTurns = tool_turns
        """``"structured"`` or ``"native"`` (see the class docstring)."""
        self.structured_decisions: StructuredDecisions = structured_decisions
        """``"auto"``, ``"always"`` or ``"never"`` (see the class docstring)."""
        self.decision_format: DecisionFormat = (
            "text" if structured_decisions == "never" else "json_schema"
        )
        """How the next decision call sends the menu's schema: ``"json_schema"`` (OpenAI's
        response format, the first try), ``"json_object"`` (``{"type": "json_object",
        "schema": ...}``, after a refusal that names it, as llama-cpp-python's does), or
        ``"text"`` (not at all: ``structured_decisions="never"``, or ``"auto"`` after the
        server refused the schema)."""
        self._url = url.copy_with(path=f"{url.path.rstrip('/')}/{_CHAT_PATH}")
        self._api_key = _Secret(api_key) if api_key else None
        headers = httpx.Headers(dict(default_headers or {}))
        if self._api_key is not None:
            headers["Authorization"] = f"Bearer {self._api_key.value}"
        self._headers = headers
        register_client(api_key=api_key, headers=default_headers, url=base_url)  # for cassettes
        carried = carried_credentials(
            api_key=api_key, headers=default_headers, url=base_url, sent=headers
        )
        self._where = Where(self._url, carried, key_sent="authorization" in headers)

        self._sync_transport = transport if isinstance(transport, httpx.BaseTransport) else None
        if async_transport is None and isinstance(transport, httpx.AsyncBaseTransport):
            async_transport = transport
        self._async_transport = async_transport
        self._custom_transport = transport is not None or async_transport is not None
        self._client: httpx.Client | None = None
        self._sockets = ClientSockets()  # the connections of the own sync client
        self._async_client: httpx.AsyncClient | None = None
        self._async_loop: weakref.ref[asyncio.AbstractEventLoop] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        key = "'***'" if self._api_key is not None else "None"
        # Origin and path only: user info in a URL is a credential.
        shown = self._where.origin + self._url.path[: -len(_CHAT_PATH) - 1]
        return (
            f"{type(self).__name__}(base_url={shown!r}, model={self.model!r}, api_key={key}, "
            f"stream={self.stream})"
        )

    @property
    def url(self) -> str:
        """The chat-completions endpoint every call posts to."""
        return str(self._url)

    # --- the request -----------------------------------------------------------------------

    def request_body(self, request: ModelRequest, *, stream: bool | None = None) -> dict[str, Any]:
        """The JSON body sent for ``request``, without sending it.

        Args:
            request: The model call, as the base class builds it.
            stream: Whether to ask for a streamed reply; defaults to the runtime's ``stream``.

        Returns:
            ``model`` (the request's, else the runtime's, omitted when neither), ``messages``,
            ``tools`` and ``tool_choice: "auto"`` only when the request offers tools,
            ``temperature``, ``response_format`` (the request's when it is a mapping, else the
            menu's schema on a decision call, as :attr:`decision_format` says), ``stream``
            (with ``stream_options.include_usage``) when streaming, then ``extra_body``.
        """
        return self._body(request, self._decision_format(request), stream)

    def _decision_format(self, request: ModelRequest) -> DecisionFormat | None:
        """How this call sends the menu's schema; ``None`` when it is no structured decision
        call (no menu, native tools offered, a response format of the caller's, or one set
        or removed by ``extra_body``)."""
        form = self.decision_format
        if (
            form == "text"
            or request.choices is None
            or request.response_format is not None
            or "response_format" in self.extra_body
        ):
            return None
        if request.tools and (self.tool_turns != "structured" or tool_menu(request) is None):
            return None
        return form

    def _body(
        self, request: ModelRequest, form: DecisionFormat | None, stream: bool | None = None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {}
        model = request.model or self.model
        if model:
            body["model"] = model
        tools = tool_menu(request) if request.tools and form not in (None, "text") else None
        if tools is not None:  # a structured turn: the tools are a menu, the reply one JSON
            offered = tools_left(request)
            body["messages"] = turn_messages(request, tools, offered=offered)
            body["max_tokens"] = STRUCTURED_TURN_MAX_TOKENS
        else:
            body["messages"] = chat_messages(request.messages)
        if request.tools and tools is None:
            body["tools"] = tool_definitions(request.tools)
            # Explicit: some servers (llama-cpp-python's function-calling template) only
            # produce tool calls when asked to choose.
            body["tool_choice"] = "auto"
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if isinstance(request.response_format, Mapping):
            body["response_format"] = plain_json(request.response_format)
        elif form is not None and form != "text":
            schema = request.response_schema
            if tools is not None:
                schema = turn_schema(request.choices, tools if offered else None)
            if schema is not None:
                if form == "json_schema":
                    body["response_format"] = json_schema_format(schema)
                else:  # llama-cpp-python's form
                    body["response_format"] = {"type": "json_object", "schema": schema}
        if self.stream if stream is None else stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        for key, value in self.extra_body.items():
            if value is None:
                body.pop(key, None)
            else:
                body[key] = plain_json(value)
        return body

    def _timeout(self, request: ModelRequest) -> tuple[httpx.Timeout, float | None]:
        limit = request.timeout_s if request.timeout_s is not None else self.timeout_s
        return httpx.Timeout(limit), limit

    # --- clients -----------------------------------------------------------------------------

    def _sync_client(self) -> httpx.Client:
        replaying = replay_client(
            self, headers=self._headers, timeout=self.timeout_s, own=self._sync_transport
        )
        if replaying is not None:  # a cassette in use answers (or records) every request
            return replaying
        with self._lock:
            if self._client is None or self._client.is_closed:
                self._client = httpx.Client(
                    transport=self._sync_transport,
                    headers=self._headers,
                    timeout=httpx.Timeout(self.timeout_s),
                )
            return self._client

    def _get_async_client(self) -> httpx.AsyncClient:
        replaying = replay_async_client(
            self, headers=self._headers, timeout=self.timeout_s, own=self._async_transport
        )
        if replaying is not None:  # a cassette in use answers (or records) every request
            return replaying
        loop = asyncio.get_running_loop()
        client = self._async_client
        known = self._async_loop() if self._async_loop is not None else None
        # A client's connections belong to the event loop that opened them: a runtime shared
        # by tests that each run their own loop gets a client per loop.
        if client is None or client.is_closed or known is not loop:
            client = httpx.AsyncClient(
                transport=self._async_transport,
                headers=self._headers,
                timeout=httpx.Timeout(self.timeout_s),
            )
            self._async_client = client
            self._async_loop = weakref.ref(loop)
        return client

    def close(self) -> None:
        """Close the clients and their connections. The runtime stays usable: a later call
        opens a new client.

        The async client is closed on the event loop it was opened on, when that loop is
        neither closed nor running (an async test's loop, after the test); from inside a
        running loop, use :meth:`aclose`.
        """
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()
        async_client, loop = self._take_async_client()
        idle = loop is not None and not loop.is_closed() and not loop.is_running()
        if async_client is not None and loop is not None and idle:
            loop.run_until_complete(async_client.aclose())

    async def aclose(self) -> None:
        """Close both clients. The runtime stays usable: a later call opens a new client."""
        client, loop = self._take_async_client()
        if client is not None and loop is asyncio.get_running_loop():
            await client.aclose()
        self.close()

    def _take_async_client(
        self,
    ) -> tuple[httpx.AsyncClient | None, asyncio.AbstractEventLoop | None]:
        client, self._async_client = self._async_client, None
        loop = self._async_loop() if self._async_loop is not None else None
        self._async_loop = None
        # A client whose loop is gone needs no closing: its connections went with the loop.
        return client, loop

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    # --- the calls ---------------------------------------------------------------------------

    def call_model(self, request: ModelRequest) -> ModelReply:
        """Send one chat-completions request and return the reply (blocking).

        Raises:
            RuntimeCallError: The call failed; the subclass says how (see the errors module).
            TypeError: Only an async transport was given.
        """
        if self._custom_transport and self._sync_transport is None:
            raise TypeError(
                f"{type(self).__name__} was given only an async transport: use the async API "
                "(exec_async, decision.make_async, agent_async), or pass an httpx.BaseTransport "
                "as transport="
            )
        with model_call():  # the real-call guard tells this project's model calls apart
            form = self._decision_format(request)
            outcome = self._exchange(request, form)
            while form is not None and isinstance(outcome, ResponseStatusError):
                form = self._after_refusal(outcome, form)
                if form is None:
                    break
                outcome = self._exchange(request, form)
        if isinstance(outcome, RuntimeCallError):
            # Raised here, where no local holds what the server sent (which may echo the key):
            # even a traceback that shows locals (pytest --showlocals) stays clean.
            raise outcome
        return self._turn_reply(request, form, outcome)

    async def call_model_async(self, request: ModelRequest) -> ModelReply:
        """Send one chat-completions request and return the reply (asyncio).

        Raises:
            RuntimeCallError: The call failed; the subclass says how (see the errors module).
        """
        if self._custom_transport and self._async_transport is None:
            # A sync-only transport still sees every request: run the sync call in a thread.
            return await asyncio.to_thread(self.call_model, request)
        with model_call():
            form = self._decision_format(request)
            outcome = await self._exchange_async(request, form)
            while form is not None and isinstance(outcome, ResponseStatusError):
                form = self._after_refusal(outcome, form)
                if form is None:
                    break
                outcome = await self._exchange_async(request, form)
        if isinstance(outcome, RuntimeCallError):
            raise outcome  # See call_model.
        return self._turn_reply(request, form, outcome)

    def _turn_reply(
        self, request: ModelRequest, form: DecisionFormat | None, reply: ModelReply
    ) -> ModelReply:
        """The reply of a structured turn that calls a tool, as the native tool call the tool
        loop runs; any other reply as it came."""
        if form in (None, "text") or not request.tools:
            return reply
        tools = tool_menu(request)
        if tools is None or not tools_left(request):
            return reply
        return tool_call_of(reply, tools, request.choices)

    def _after_refusal(
        self, error: ResponseStatusError, form: DecisionFormat
    ) -> DecisionFormat | None:
        """The format to send the refused call again with (remembered for later calls), or
        ``None`` when the error is not a refusal of the schema or may not be worked around.

        A refusal is a 400, 422 or 5xx whose message names the response format (servers that
        validate the body, as llama-cpp-python's does, answer 500). A refusal of
        ``json_schema`` that names ``json_object`` as what the server takes is sent again in
        that form; any other refusal, with ``"auto"``, as the text menu alone.
        """
        if form == "text":
            return None
        said = f"{error.server_message} {error.body}".lower()
        status = error.status_code or 0
        if not (status in (400, 422) or status >= 500) or not any(
            word in said for word in _REFUSAL_WORDS
        ):
            return None
        if form == "json_schema" and "json_object" in said:
            self.decision_format = "json_object"
        elif self.structured_decisions == "auto":
            self.decision_format = "text"
        else:
            return None
        return self.decision_format

    def _exchange(
        self, request: ModelRequest, form: DecisionFormat | None
    ) -> ModelReply | RuntimeCallError:
        """One request and its reply, or the error to raise (returned, not raised).

        The time limit bounds the whole exchange (:class:`CallDeadline`): httpx's own timeouts
        bound each read alone, and a server that trickles its reply would never trip them.
        """
        body = self._body(request, form)
        timeout, limit = self._timeout(request)
        client = self._sync_client()
        own = client is self._client and not self._custom_transport
        status: int | None = None
        with CallDeadline(limit, self._sockets if own else None) as deadline:
            try:
                if body.get("stream"):
                    watched = deadline.extensions
                    with client.stream(
                        "POST", self._url, json=body, timeout=timeout, extensions=watched
                    ) as response:
                        deadline.answered(response)
                        status = response.status_code
                        if not response.is_success or not _is_event_stream(response):
                            response.read()
                            return self._whole_reply(response)
                        accumulator = StreamAccumulator()
                        for line in response.iter_lines():
                            accumulator.feed_line(line)
                            if accumulator.done:
                                break
                            if deadline.passed:  # a transport without sockets: between lines
                                phase = deadline.phase or "total"
                                return error_for_timeout(self._where, limit, phase)
                        return accumulator.reply()
                # Streamed even when the reply is not: the deadline learns the connection as
                # the headers come, before the body is read (a kept-alive one's too).
                with client.stream(
                    "POST", self._url, json=body, timeout=timeout, extensions=deadline.extensions
                ) as response:
                    deadline.answered(response)
                    status = response.status_code
                    response.read()
                    return self._whole_reply(response)
            except httpx.HTTPError as error:
                if deadline.passed and not isinstance(error, httpx.TimeoutException):
                    # The watchdog shut the connection down: the limit ran out mid-call.
                    phase = deadline.phase or "total"
                    return _caused_by(error_for_timeout(self._where, limit, phase), error)
                return _caused_by(error_for_transport(error, self._where, limit), error)
            except ProtocolProblem as problem:
                return error_for_problem(problem, self._where, status)

    async def _exchange_async(
        self, request: ModelRequest, form: DecisionFormat | None
    ) -> ModelReply | RuntimeCallError:
        """The asyncio twin of :meth:`_exchange`: ``asyncio.timeout`` bounds the whole
        exchange."""
        _, limit = self._timeout(request)
        bound = asyncio.timeout(limit)
        deadline = CallDeadline(limit)  # not entered: it only follows the phases
        try:
            async with bound:
                return await self._exchange_unbounded_async(request, form, deadline)
        except TimeoutError as error:
            if not bound.expired():
                raise
            phase = deadline.phase or "total"
            return _caused_by(error_for_timeout(self._where, limit, phase), error)

    async def _exchange_unbounded_async(
        self, request: ModelRequest, form: DecisionFormat | None, deadline: CallDeadline
    ) -> ModelReply | RuntimeCallError:
        body = self._body(request, form)
        timeout, limit = self._timeout(request)
        client = self._get_async_client()
        watched = deadline.async_extensions
        status: int | None = None
        try:
            if body.get("stream"):
                async with client.stream(
                    "POST", self._url, json=body, timeout=timeout, extensions=watched
                ) as response:
                    status = response.status_code
                    if not response.is_success or not _is_event_stream(response):
                        await response.aread()
                        return self._whole_reply(response)
                    accumulator = StreamAccumulator()
                    async for line in response.aiter_lines():
                        accumulator.feed_line(line)
                        if accumulator.done:
                            break
                    return accumulator.reply()
            response = await client.post(self._url, json=body, timeout=timeout, extensions=watched)
            status = response.status_code
            return self._whole_reply(response)
        except httpx.HTTPError as error:
            return _caused_by(error_for_transport(error, self._where, limit), error)
        except ProtocolProblem as problem:
            return error_for_problem(problem, self._where, status)

    def _whole_reply(self, response: httpx.Response) -> ModelReply | RuntimeCallError:
        """The reply of a response whose body has been read, or the error it reports.

        Raises:
            ProtocolProblem: A 2xx body that is not a chat completion.
        """
        if not response.is_success:
            return error_for_status(response, self._where)
        try:
            data = response.json()
        except ValueError:
            shown = _head(self._where.redact(response.text))  # redacted before it is cut
            raise ProtocolProblem(f"the body is not JSON: {shown!r}", body=response.text) from None
        try:
            return parse_completion(data)
        except ProtocolProblem as problem:
            problem.body = problem.body or response.text
            raise


def _head(text: str) -> str:
    return text.strip()[:200] or "an empty body"


def _caused_by(error: RuntimeCallError, cause: BaseException) -> RuntimeCallError:
    """``error`` as if raised ``from cause`` (it is raised later, outside the except clause)."""
    error.__cause__ = cause
    error.__suppress_context__ = True
    return error


def _is_event_stream(response: httpx.Response) -> bool:
    # A server that ignores "stream": true answers with one JSON body: read it as such.
    return not response.headers.get("content-type", "").startswith("application/json")
