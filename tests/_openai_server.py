"""A small OpenAI-compatible chat-completions server for tests, on 127.0.0.1 in a thread.

It answers ``POST /v1/chat/completions`` with a JSON completion, or with a server-sent event
stream (one event per chunk, each flushed on its own) when the request asks for
``"stream": true``; ``GET /v1/models`` lists one model. Replies come from a script
(:meth:`OpenAIServer.script`), else from a default that needs no script: when the request
offers tools and no tool result came back yet, it calls the first tool; otherwise it picks the
first option of the menu in the last user message (the ``Call: {...}`` line), else says
``"Hello from the test server."``.

Optional behaviour, for the cassette tests: ``gzip=True`` compresses JSON bodies when the
client accepts gzip; ``echo_secrets=True`` copies the request's credential headers and query
string into the response body (a server echoing a key is how secrets leak into cassettes);
``set_cookie`` sends a ``Set-Cookie`` header; ``cut_after`` ends each streamed reply after a few
deltas, with no ``finish_reason`` and no ``[DONE]`` (a stream cut off).

Every request is kept in :attr:`OpenAIServer.received`, so a test can prove that a replay made
no request at all.
"""

from __future__ import annotations

import gzip as gzip_module
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

__all__ = ["MODEL", "OpenAIServer", "Received", "Reply", "default_reply"]

MODEL = "test-model"
_CALL_LINE = re.compile(r"Call: (\{.*\})")
_ECHOED = ("authorization", "api-key", "x-api-key", "cookie")


@dataclass(frozen=True)
class Received:
    """One request the server received.

    Attributes:
        method: ``GET`` or ``POST``.
        path: The URL path.
        query: The query string (without ``?``).
        headers: Header names in lower case.
        body: The parsed JSON body (``None`` when there is none or it is not JSON).
    """

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True)
class Reply:
    """One scripted reply.

    Attributes:
        text: The assistant's text.
        tool_calls: ``(name, arguments)`` pairs the assistant calls.
        status: The HTTP status (a non-2xx status sends an OpenAI-style error body).
    """

    text: str = ""
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    status: int = 200


@dataclass
class _State:
    script: deque[Reply | Callable[[Received], Reply]] = field(default_factory=deque)
    received: list[Received] = field(default_factory=list)
    completions: int = 0


def default_reply(request: Received) -> Reply:
    """The reply when nothing is scripted (see the module docstring)."""
    body = request.body if isinstance(request.body, dict) else {}
    messages = body.get("messages") or []
    tools = body.get("tools") or []
    answered = any(m.get("role") == "tool" for m in messages if isinstance(m, dict))
    if tools and not answered:
        name = tools[0]["function"]["name"]
        properties = tools[0]["function"].get("parameters", {}).get("properties", {})
        args = {key: _example(schema) for key, schema in properties.items()}
        return Reply(tool_calls=((name, args),))
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    structured = _structured_tool_call(body, users)
    if structured is not None:
        return structured
    # The last user message with a menu (after a structured turn's tool round, the last one
    # only says to pick).
    for user in reversed(users):
        content = user.get("content", "")
        if isinstance(content, list):
            content = "".join(str(part.get("text", "")) for part in content)
        found = _CALL_LINE.search(str(content))
        if found:
            return Reply(text=found.group(1))
    return Reply(text="Hello from the test server.")


def _structured_tool_call(body: dict[str, Any], users: list[Any]) -> Reply | None:
    """In a structured turn (the tools listed after the menu, no native ``tools``), the first
    tool's call as the reply's JSON text, until a tool result came back."""
    first = str(users[0].get("content", "")) if users else ""
    marker = first.find("\n\nTools: before you pick")
    if marker < 0 or any(str(m.get("content", "")).startswith("Result of ") for m in users):
        return None
    found = _CALL_LINE.search(first, marker)
    if not found:
        return None
    name = json.loads(found.group(1))["call"]
    form = body.get("response_format") or {}
    schema = form.get("json_schema", {}).get("schema") or form.get("schema") or {}
    for branch in schema.get("anyOf", [schema]):
        properties = branch.get("properties", {})
        if properties.get("call", {}).get("enum") == [name]:
            fields = properties.get("args", {}).get("properties", {})
            args = {key: _example(field) for key, field in fields.items()}
            return Reply(text=json.dumps({"call": name, "args": args}))
    return None


def _example(schema: Any) -> Any:
    kind = schema.get("type") if isinstance(schema, dict) else None
    return {"integer": 1, "number": 1.5, "boolean": True, "array": [], "object": {}}.get(
        str(kind), "x"
    )


class OpenAIServer:
    """The server; use it as a context manager (``with OpenAIServer(gzip=True) as server:``).

    Args:
        gzip: Compress JSON bodies with gzip when the client accepts it.
        echo_secrets: Copy credential headers and the query string into each JSON response.
        set_cookie: A ``Set-Cookie`` header value sent with every response.
        chunk_delay: Seconds to wait between streamed events (shows they arrive apart).
        crlf: End the lines of streamed events with CRLF, as sse-starlette does.
        cut_after: End each streamed reply (cleanly, as HTTP goes) after this many text deltas
            and the role's event: no ``finish_reason``, no ``[DONE]``, as a server that crashed
            behind a proxy does.
    """

    def __init__(
        self,
        *,
        gzip: bool = False,
        echo_secrets: bool = False,
        set_cookie: str | None = None,
        chunk_delay: float = 0.0,
        crlf: bool = False,
        cut_after: int | None = None,
    ) -> None:
        self.gzip = gzip
        self.echo_secrets = echo_secrets
        self.set_cookie = set_cookie
        self.chunk_delay = chunk_delay
        self.crlf = crlf
        self.cut_after = cut_after
        self._state = _State()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- life cycle ------------------------------------------------------------------------

    def start(self) -> OpenAIServer:
        """Bind to a free port on 127.0.0.1 and serve in a daemon thread."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = None
        self._thread = None

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        """The request handler (a subclass may extend it)."""
        return _handler_for(self)

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- what tests use ----------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._server is not None, "the server is not started"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The API root: ``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: Reply | str | Callable[[Received], Reply]) -> OpenAIServer:
        """Queue replies for the next completions (a string is a text reply)."""
        with self._lock:
            for reply in replies:
                self._state.script.append(Reply(text=reply) if isinstance(reply, str) else reply)
        return self

    @property
    def received(self) -> list[Received]:
        """Every request received so far."""
        with self._lock:
            return list(self._state.received)

    @property
    def completions(self) -> list[Received]:
        """The chat-completions requests received so far."""
        return [r for r in self.received if r.path.endswith("/chat/completions")]

    def reset(self) -> None:
        """Forget the requests received and any reply still scripted."""
        with self._lock:
            self._state = _State()

    # --- serving -----------------------------------------------------------------------------

    def _next_reply(self, request: Received) -> tuple[Reply, int]:
        with self._lock:
            self._state.received.append(request)
            self._state.completions += 1
            number = self._state.completions
            step = self._state.script.popleft() if self._state.script else None
        if step is None:
            return default_reply(request), number
        return (step if isinstance(step, Reply) else step(request)), number


def _completion(reply: Reply, number: int, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{number}_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for i, (name, args) in enumerate(reply.tool_calls)
        ]
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 1700000000 + number,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 10,
            "completion_tokens": max(1, len(reply.text) // 4),
            "total_tokens": 10 + max(1, len(reply.text) // 4),
        },
    }


def _events(reply: Reply, number: int, model: str) -> Iterator[dict[str, Any]]:
    """The chunks of a streamed reply: the role, the text a few characters at a time,
    tool calls, the finish reason, then usage."""
    base = {"id": f"chatcmpl-{number}", "object": "chat.completion.chunk", "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            **base,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    yield chunk({"role": "assistant", "content": ""})
    text = reply.text
    for start in range(0, len(text), 8):
        yield chunk({"content": text[start : start + 8]})
    for i, (name, args) in enumerate(reply.tool_calls):
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": i,
                        "id": f"call_{number}_{i}",
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                ]
            }
        )
    yield chunk({}, "tool_calls" if reply.tool_calls else "stop")
    yield {
        **base,
        "choices": [],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
    }


def _handler_for(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _received(self, body: Any) -> Received:
            parts = urlsplit(self.path)
            headers = {k.lower(): v for k, v in self.headers.items()}
            return Received(self.command, parts.path, parts.query, headers, body)

        def _send_json(self, status: int, payload: Any, request: Received) -> None:
            if server.echo_secrets and isinstance(payload, dict):
                echoed = {k: request.headers[k] for k in _ECHOED if k in request.headers}
                payload = {**payload, "echo": {"headers": echoed, "query": request.query}}
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            if server.set_cookie:
                self.send_header("Set-Cookie", server.set_cookie)
            if server.gzip and "gzip" in request.headers.get("accept-encoding", ""):
                data = gzip_module.compress(data)
                self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            request = self._received(None)
            with server._lock:
                server._state.received.append(request)
            if request.path.endswith("/models"):
                self._send_json(200, {"object": "list", "data": [{"id": MODEL}]}, request)
            else:
                self._send_json(404, {"error": {"message": "not found"}}, request)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            request = self._received(body)
            if not request.path.endswith("/chat/completions"):
                with server._lock:
                    server._state.received.append(request)
                self._send_json(404, {"error": {"message": "not found"}}, request)
                return
            reply, number = server._next_reply(request)
            model = (body or {}).get("model") or MODEL
            if reply.status >= 300:
                error = {"error": {"message": reply.text or "scripted failure"}}
                self._send_json(reply.status, error, request)
                return
            if isinstance(body, dict) and body.get("stream"):
                self._stream(reply, number, model)
                return
            self._send_json(200, _completion(reply, number, model), request)

        def _stream(self, reply: Reply, number: int, model: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            if server.set_cookie:
                self.send_header("Set-Cookie", server.set_cookie)
            self.end_headers()
            events = [f"data: {json.dumps(e)}\n\n" for e in _events(reply, number, model)]
            events.append("data: [DONE]\n\n")
            if server.cut_after is not None:
                events = events[: 1 + server.cut_after]
            for event in events:
                data = (event.replace("\n", "\r\n") if server.crlf else event).encode()
                self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
                if server.chunk_delay:
                    time.sleep(server.chunk_delay)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return Handler
