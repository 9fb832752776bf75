"""Real-shaped chat-completions replies, and a strict mock server that serves them.

The shapes are those the llama-cpp-python 0.3.36 server of ``scripts/local-model`` was seen to
send: ``chatcmpl-<uuid>`` ids, ``logprobs: null``, tool calls from its ``chatml-function-calling``
template (ids ``call__<n>_<name>_cmpl-<uuid>``, and for a single call the legacy
``function_call`` copy whose name ends with ``:``), streamed chunks framed as ``data: {...}``
and a blank line, with no usage even when ``stream_options.include_usage`` is asked for.
``openai_*`` helpers give the hosted API's shapes (a tool call's name only in its first delta,
usage in a last chunk with empty ``choices``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

ALIAS = "smollm2-135m-instruct"
TOOLS_ALIAS = "smollm2-135m-instruct-tools"
CREATED = 1735689600
BASE_URL = "http://127.0.0.1:8765/v1"
CHAT_PATH = "/v1/chat/completions"


def completion(
    content: str | None,
    *,
    model: str = ALIAS,
    usage: tuple[int, int] = (42, 7),
    number: int = 1,
) -> dict[str, Any]:
    """A llama-cpp-python ``chat.completion`` with a text reply."""
    prompt, generated = usage
    return {
        "id": f"chatcmpl-3f6a2b1c-0d4e-4f5a-9b8c-7d6e5f4a3b{number:02d}",
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": generated,
            "total_tokens": prompt + generated,
        },
    }


def tool_call_completion(
    calls: Sequence[tuple[str, str]],
    *,
    model: str = TOOLS_ALIAS,
    usage: tuple[int, int] = (118, 12),
) -> dict[str, Any]:
    """A llama-cpp-python reply (``tool_choice: "auto"``) asking for ``(name, arguments)`` calls.

    Like the real server, a single call also comes as the legacy ``function_call`` whose name
    carries a trailing ``:``.
    """
    completion_id = "cmpl-9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b"
    message: dict[str, Any] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call__{number}_{name}_{completion_id}",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
            for number, (name, arguments) in enumerate(calls)
        ],
    }
    if len(calls) == 1:
        message["function_call"] = {"name": f"{calls[0][0]}:", "arguments": calls[0][1]}
    prompt, generated = usage
    return {
        "id": f"chat{completion_id}",
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [
            {"finish_reason": "tool_calls", "index": 0, "logprobs": None, "message": message}
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": generated,
            "total_tokens": prompt + generated,
        },
    }


def sse(events: Iterable[Any], *, newline: str = "\n", done: bool = True) -> bytes:
    """Server-sent events: ``data: <json>`` per event, then ``data: [DONE]``."""
    frames = [f"data: {json.dumps(event)}{newline}{newline}" for event in events]
    if done:
        frames.append(f"data: [DONE]{newline}{newline}")
    return "".join(frames).encode()


def _chunk(
    delta: Mapping[str, Any], finish: str | None = None, model: str = ALIAS
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-5b4a3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d",
        "model": model,
        "created": CREATED,
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": dict(delta), "logprobs": None, "finish_reason": finish}],
    }


def text_stream(pieces: Sequence[str]) -> list[dict[str, Any]]:
    """llama-cpp-python's chunks for a streamed text reply (no usage: it never sends any)."""
    return [
        _chunk({"role": "assistant"}),
        *(_chunk({"content": piece}) for piece in pieces),
        _chunk({}, "stop"),
    ]


def forced_tool_stream(
    name: str, fragments: Sequence[str], *, lose_first_fragment: bool = False
) -> list[dict[str, Any]]:
    """llama-cpp-python's chunks for a streamed call of a forced ``tool_choice``.

    Every ``tool_calls`` delta repeats the id and the name, and the legacy ``function_call``
    delta carries the same fragment. With ``lose_first_fragment``, the quirk of earlier
    llama-cpp-python releases: the first fragment is only in the ``function_call`` delta.
    """
    call_id = f"call__0_{name}_cmpl-0a1b2c3d"
    empty = {"role": None, "content": None, "function_call": None, "tool_calls": None}
    start = {"role": "assistant", **{k: v for k, v in empty.items() if k != "role"}}
    chunks = [_chunk(start, model=TOOLS_ALIAS)]
    for number, fragment in enumerate(fragments):
        chunks.append(
            _chunk(
                {
                    "role": None,
                    "content": None,
                    "function_call": {"name": name, "arguments": fragment},
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": call_id,
                            "type": "function",
                            "function": {
                                "name": name,
                                "arguments": ""
                                if lose_first_fragment and number == 0
                                else fragment,
                            },
                        }
                    ],
                },
                model=TOOLS_ALIAS,
            )
        )
    chunks.append(_chunk(empty, "tool_calls", model=TOOLS_ALIAS))
    return chunks


def openai_text_stream(pieces: Sequence[str], usage: tuple[int, int]) -> list[dict[str, Any]]:
    """The hosted API's chunks with ``stream_options.include_usage``: usage in a last chunk."""
    base = {"id": "chatcmpl-AbC123", "object": "chat.completion.chunk", "created": CREATED}
    model = {"model": "gpt-4o-mini-2024-07-18", "system_fingerprint": "fp_0aa8d3e20b"}
    chunks: list[dict[str, Any]] = [
        {
            **base,
            **model,
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
            ],
            "usage": None,
        }
    ]
    for piece in pieces:
        chunks.append(
            {
                **base,
                **model,
                "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
                "usage": None,
            }
        )
    chunks.append(
        {
            **base,
            **model,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": None,
        }
    )
    prompt, generated = usage
    chunks.append(
        {
            **base,
            **model,
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": generated,
                "total_tokens": prompt + generated,
            },
        }
    )
    return chunks


def openai_tool_stream(calls: Sequence[tuple[str, str, Sequence[str]]]) -> list[dict[str, Any]]:
    """The hosted API's chunks for parallel tool calls: ``(id, name, argument fragments)``.

    The id and name come only in a call's first delta; the fragments follow by ``index``,
    interleaved between the calls.
    """
    base = {"id": "chatcmpl-XyZ789", "object": "chat.completion.chunk", "created": CREATED}
    model = {"model": "gpt-4o-mini-2024-07-18"}
    chunks: list[dict[str, Any]] = [
        {**base, **model, "choices": [{"index": 0, "delta": {"role": "assistant"}}]}
    ]
    for index, (call_id, name, _) in enumerate(calls):
        delta = {
            "tool_calls": [
                {
                    "index": index,
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": ""},
                }
            ]
        }
        chunks.append({**base, **model, "choices": [{"index": 0, "delta": delta}]})
    longest = max(len(fragments) for _, _, fragments in calls)
    for position in range(longest):
        for index, (_, _, fragments) in enumerate(calls):
            if position < len(fragments):
                delta = {
                    "tool_calls": [{"index": index, "function": {"arguments": fragments[position]}}]
                }
                chunks.append({**base, **model, "choices": [{"index": 0, "delta": delta}]})
    chunks.append(
        {**base, **model, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    )
    return chunks


def json_response(data: Any, status: int = 200, **headers: str) -> httpx.Response:
    """A JSON response as the server sends it."""
    return httpx.Response(
        status,
        content=json.dumps(data).encode(),
        headers={"content-type": "application/json", **headers},
    )


def event_stream(body: bytes) -> httpx.Response:
    """A ``text/event-stream`` response."""
    return httpx.Response(
        200, content=body, headers={"content-type": "text/event-stream; charset=utf-8"}
    )


Reply = httpx.Response | Callable[[httpx.Request], httpx.Response] | BaseException


@dataclass(frozen=True)
class Seen:
    """One request the mock server received."""

    method: str
    path: str
    headers: httpx.Headers
    body: dict[str, Any]
    timeout: Mapping[str, float | None]


class MockServer:
    """A strict chat-completions server for ``httpx.MockTransport``.

    Answers each request with the next scripted reply (a response, a function of the request, or
    an exception to raise), records every request, and fails loudly on a request after the last
    scripted reply.
    """

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.seen: list[Seen] = []
        self._lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            body = json.loads(request.content) if request.content else {}
            self.seen.append(
                Seen(
                    request.method,
                    request.url.path,
                    request.headers,
                    body,
                    request.extensions.get("timeout", {}),
                )
            )
            if not self.replies:
                raise AssertionError(
                    f"unexpected request #{len(self.seen)}: no scripted reply left "
                    f"(body head: {json.dumps(body)[:200]})"
                )
            reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, httpx.Response):
            # A fresh copy: a response is read once, and a parametrized one serves both twins.
            return httpx.Response(reply.status_code, headers=reply.headers, content=reply.content)
        return reply(request)

    @property
    def transport(self) -> httpx.MockTransport:
        """A transport (sync and async) serving this server."""
        return httpx.MockTransport(self)

    @property
    def last(self) -> Seen:
        """The last request received."""
        assert self.seen, "no request was received"
        return self.seen[-1]

    def assert_done(self) -> None:
        """Every scripted reply was used."""
        assert not self.replies, f"{len(self.replies)} scripted replies were never requested"
