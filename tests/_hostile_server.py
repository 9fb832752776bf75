"""A hostile OpenAI-compatible server for the secret tests: it echoes every credential back.

:class:`HostileServer` answers ``POST /v1/chat/completions`` like :class:`OpenAIServer` does
(a pick from the menu, a call of the first tool offered, JSON or a stream of events), and in
every answer it hands back what it received, in every way a real server (or a proxy, or a
debugging endpoint) might:

* JSON replies carry ``echo``: every header, the query string and the raw body as received,
  each header value URL-encoded and in base64, and a JSON document held in a string (an
  ``api_key`` field inside it);
* replies carry headers: ``X-Echo`` (every credential, raw, under a name no rule knows),
  ``X-Echo-Base64``, a minted ``Set-Cookie`` and ``X-Session-Token``;
* replies carry tokens it mints (:attr:`HostileServer.minted`): ``access_token``,
  ``refresh_token``, a bare ``token``, and the same value again in a field named ``note``;
* the text of each reply ends with every credential received, so a streamed reply (eight
  characters per event) splits each of them across events; a streamed reply's last event
  carries a minted ``access_token``;
* a tool call's ``arguments`` hold a minted ``api_key`` (a secret field inside a JSON-encoded
  string);
* ``GET /v1/blob`` answers bytes that are not UTF-8, holding every credential raw, in UTF-16
  and in base64; ``GET /v1/blob.json`` answers Latin-1 JSON with a minted ``access_token``;
* a request whose last user message says ``Send the key as: 5,17`` (offsets into the key) gets
  the client's own key (its bearer token) back in the text of the reply, cut at those offsets:
  streamed, each piece is the ``content`` of an event of its own (:func:`planned_pieces`);
  ``Send the key as: 5 escaped`` writes every character of the text as a ``\\uXXXX`` JSON
  escape, streamed or not, and ``framed`` sends each event with ``event:`` and ``id:`` lines
  (as Anthropic's API and some proxies do).

What the server received is kept in :attr:`OpenAIServer.received`, as the plain server does.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import secrets as random_secrets
import threading
from typing import Any
from urllib.parse import quote, unquote

from _openai_server import (
    MODEL,
    OpenAIServer,
    Received,
    Reply,
    _completion,
    _events,
    default_reply,
)

__all__ = ["PREFIX", "SUFFIX", "HostileServer", "escaped_json", "planned_pieces"]

_PLAN = re.compile(r"Send the key as: ([0-9,]*)( escaped)?( framed)?")
PREFIX, SUFFIX = "The key is ", ", as you asked."
"""What a planned reply says around the key (a replay of it must say PREFIX <REDACTED> SUFFIX)."""

_NOT_CREDENTIALS = frozenset(
    {"accept", "accept-encoding", "connection", "content-length", "content-type", "host"}
)


class HostileServer(OpenAIServer):
    """The server (see the module's docstring); a context manager, as :class:`OpenAIServer`."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.minted: list[str] = []
        """Every token the server made up and sent, in order."""
        self._mint_lock = threading.Lock()
        self._counter = itertools.count()

    def mint(self) -> str:
        """A fresh token, remembered in :attr:`minted`."""
        token = f"tok-{next(self._counter)}-{random_secrets.token_urlsafe(18)}"
        with self._mint_lock:
            self.minted.append(token)
        return token

    def handler_class(self) -> Any:
        return _hostile_handler(self, super().handler_class())


def credentials(request: Received) -> list[str]:
    """Every value the request carried that may be a credential: header values, query values
    and the user info of Basic auth."""
    values = [v for k, v in request.headers.items() if k not in _NOT_CREDENTIALS]
    for pair in request.query.split("&"):
        value = pair.partition("=")[2]
        if value:
            values.append(unquote(value))
    auth = request.headers.get("authorization", "")
    if auth.startswith("Basic "):
        values.append(base64.b64decode(auth[6:]).decode())
    return values


def planned_pieces(request: Received) -> tuple[list[str], bool, bool] | None:
    """The pieces of the text a ``Send the key as: ...`` request asks for, whether they are
    written escaped, and whether events are framed; ``None`` for any other request."""
    body = request.body if isinstance(request.body, dict) else {}
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    found = _PLAN.search(str(users[-1].get("content", ""))) if users else None
    if found is None:
        return None
    key = request.headers.get("authorization", "").removeprefix("Bearer ")
    bounds = [0, *(int(cut) for cut in found.group(1).split(",") if cut), len(key)]
    pieces = [key[start:end] for start, end in itertools.pairwise(bounds)]
    pieces[0] = PREFIX + pieces[0]
    pieces[-1] += SUFFIX
    return pieces, found.group(2) is not None, found.group(3) is not None


def escaped_json(value: Any, texts: list[str]) -> str:
    """``value`` as JSON, with every character of each of ``texts`` (strings in it) written as
    a ``\\uXXXX`` escape: the same JSON to a parser, other bytes on the wire."""
    data = json.dumps(value)
    for text in sorted(set(texts), key=len, reverse=True):
        data = data.replace(json.dumps(text), '"' + "".join(f"\\u{ord(c):04x}" for c in text) + '"')
    return data


def _echo(request: Received, raw_body: bytes) -> dict[str, Any]:
    values = credentials(request)
    return {
        "headers": dict(request.headers),
        "query": request.query,
        "body": raw_body.decode("utf-8", "replace"),
        "urlencoded": [quote(value, safe="") for value in values],
        "base64": [base64.b64encode(value.encode()).decode() for value in values],
        "as_json_string": json.dumps({"api_key": values[0] if values else "", "seen": values}),
    }


def _hostile_reply(server: HostileServer, request: Received) -> Reply:
    reply = default_reply(request)
    if reply.tool_calls:
        calls = tuple(
            (name, {**args, "api_key": server.mint()} if "api_key" in args else args)
            for name, args in reply.tool_calls
        )
        return Reply(tool_calls=calls)
    seen = " ".join(credentials(request))
    return Reply(text=f"{reply.text} (credentials seen: {seen})")


def _hostile_handler(server: HostileServer, base: Any) -> Any:
    class Handler(base):  # type: ignore[misc, valid-type]
        # Each write goes out at once: a body written after its headers does not wait for the
        # client's delayed acknowledgement (40 ms a request, hundreds of requests a test).
        disable_nagle_algorithm = True

        def _raw_body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _hostile_headers(self, request: Received) -> None:
            values = credentials(request)
            self.send_header("X-Echo", " | ".join(values))
            self.send_header("X-Echo-Base64", base64.b64encode(" | ".join(values).encode()))
            self.send_header("Set-Cookie", f"session={server.mint()}; Path=/; HttpOnly")
            self.send_header("X-Session-Token", server.mint())

        def do_GET(self) -> None:
            request = self._received(None)
            with server._lock:
                server._state.received.append(request)
            values = credentials(request)
            if request.path.endswith("/blob"):
                data = b"\x89BLOB\xff\xfe\x00" + b"\x00|".join(
                    value.encode()
                    + b"|"
                    + value.encode("utf-16-le")
                    + b"|"
                    + base64.b64encode(value.encode())
                    for value in values
                )
                kind = "application/octet-stream"
            elif request.path.endswith("/blob.json"):
                minted = server.mint()
                document = {"access_token": minted, "note": "café", "echo": values}
                data = json.dumps(document, ensure_ascii=False).encode("latin-1")
                kind = "application/json; charset=latin-1"
            else:
                super().do_GET()
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self._hostile_headers(request)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            raw = self._raw_body()
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            request = self._received(body)
            _, number = server._next_reply(request)  # counted and kept; nothing is scripted
            model = (body or {}).get("model") or MODEL
            planned = planned_pieces(request)
            if planned is not None:
                self._planned(request, planned, number, model)
                return
            reply = _hostile_reply(server, request)
            if isinstance(body, dict) and body.get("stream"):
                self._hostile_stream(request, reply, number, model)
                return
            payload = _completion(reply, number, model)
            payload["echo"] = _echo(request, raw)
            minted = server.mint()
            payload.update(
                access_token=minted,
                refresh_token=server.mint(),
                token=server.mint(),
                note=f"your session is {minted}",
            )
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self._hostile_headers(request)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _planned(
            self, request: Received, planned: tuple[list[str], bool, bool], number: int, model: str
        ) -> None:
            pieces, escaped, framed = planned
            streamed = isinstance(request.body, dict) and request.body.get("stream")
            if not streamed:
                payload = _completion(Reply(text="".join(pieces)), number, model)
                text = "".join(pieces)
                data = (escaped_json(payload, [text]) if escaped else json.dumps(payload)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            events = list(_events(Reply(), number, model))  # the role, the finish, the usage
            deltas = [
                {**events[0], "choices": [{"index": 0, "delta": {"content": piece}}]}
                for piece in pieces
            ]
            chunks = [
                escaped_json(event, pieces) if escaped else json.dumps(event)
                for event in [events[0], *deltas, *events[1:]]
            ]
            self._send_events([*chunks, "[DONE]"], framed)

        def _send_events(self, datas: list[str], framed: bool) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for number, data in enumerate(datas):
                frame = f"event: message\nid: {number}\n" if framed else ""
                chunk = f"{frame}data: {data}\n\n".encode()
                self.wfile.write(f"{len(chunk):X}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _hostile_stream(self, request: Received, reply: Reply, number: int, model: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self._hostile_headers(request)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            events = list(_events(reply, number, model))
            events[-1] = {**events[-1], "access_token": server.mint()}
            for event in [*(f"data: {json.dumps(e)}\n\n" for e in events), "data: [DONE]\n\n"]:
                data = event.encode()
                self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return Handler
