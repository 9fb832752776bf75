"""Decision-level recordings: record model exchanges at the runtime boundary, replay them as fakes.

``RecordingRuntime(inner, path)`` wraps a runtime and writes each model call (kind, blocks
sent, menu, options, tools offered, reply text, tool calls, usage) to a readable YAML file;
``fake_runtimes.ScriptedRuntime.from_recording(path)`` replays that file as a strict,
editable scripted fake.

:class:`RecordingRuntime` wraps any runtime (a real one, usually) and writes every model call it
passes on as one readable YAML entry: why the call was made (``kind``), the content blocks sent,
the rendered menu and option names, the native tools offered, and what came back (text, tool
calls, usage) or the error raised. The file is rewritten atomically after each call, so it is
whole even if the test dies half way.

``ScriptedRuntime.from_recording(path)`` turns such a file into a strict scripted fake (the
fakes read the file: see ``fake_runtimes._recorded``): one ``RecordedReply`` step per recorded
call, replayed in order, each checking that its call offers the recorded options and tools.

Unlike an HTTP cassette, a recording does not depend on the wire format of any provider: it is
the conversation as the decision code sees it. It is scrubbed as a cassette is (see
:func:`~pytest_opdecide._cassettes._scrub.scrub_data`): secret-named fields (a tool call's
``api_key`` argument) and every known secret (configured credentials, secret environment variables)
are written as ``<REDACTED>``, and the machine's paths as their placeholders (``<HOME>``,
``<PROJECT>``: the working directory, ``<SITE-PACKAGES>``...).

See :class:`RecordingRuntime` for an example.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from fake_runtimes._recorded import (
    FORMAT_VERSION,
    RecordedCallError,
    RecordedReply,
    load_recording,
    recorded_steps,
)
from pytest_opdecide._cassettes._scrub import scrub_data
from pytest_opdecide._files import write_atomic
from pytest_opdecide._nextstep._adapter import as_runtime
from pytest_opdecide._nextstep._messages import ModelReply, ModelRequest, ToolCall
from pytest_opdecide._nextstep._runtime import Runtime

__all__ = [
    "FORMAT_VERSION",
    "RecordedCallError",
    "RecordedReply",
    "RecordingRuntime",
    "load_recording",
    "recorded_steps",
]


def _plain(value: Any) -> Any:
    """``value`` as YAML-safe data: mappings as dicts, sequences as lists, the rest as text."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _tool_call(call: ToolCall) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": call.name, "arguments": _plain(call.arguments)}
    if call.id:
        entry["id"] = call.id
    return entry


def exchange_entry(
    request: ModelRequest, reply: ModelReply | None, error: BaseException | None
) -> dict[str, Any]:
    """One model call as the recording stores it."""
    entry: dict[str, Any] = {"kind": request.kind}
    if request.model:
        entry["model"] = request.model
    if request.kind == "tool_round":
        # What is new in a tool round: the results. The blocks, the menu and the tools' schemas
        # are the turn's (in the entry before); the option and tool names stay, for replay.
        entry["tool_results"] = [
            {"tool": message.name, "call_id": message.tool_call_id, "text": message.text}
            for message in reversed(_last_round(request.messages))
        ]
        if request.menu is not None:
            entry["options"] = list(request.options)
        if request.tools:
            entry["tools"] = [spec.name for spec in request.tools]
    else:
        entry["blocks"] = _plain(request.blocks)
        if request.menu is not None:
            entry["menu"] = request.menu
            entry["options"] = list(request.options)
        if request.tools:
            entry["tools"] = [
                {
                    "name": spec.name,
                    "description": spec.description,
                    "parameters": _plain(spec.parameters),
                }
                for spec in request.tools
            ]
    if error is not None or reply is None:
        entry["error"] = {"type": type(error).__name__, "message": str(error)}
        return entry
    recorded: dict[str, Any] = {
        "text": reply.text if isinstance(reply.text, str) else str(reply.text)
    }
    if reply.tool_calls:
        recorded["tool_calls"] = [_tool_call(call) for call in reply.tool_calls]
    usage = reply.usage
    recorded["usage"] = {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
    }
    if reply.model:
        recorded["model"] = reply.model
    entry["reply"] = recorded
    return entry


def _last_round(messages: Sequence[Any]) -> list[Any]:
    found = []
    for message in reversed(messages):
        if message.role != "tool":
            break
        found.append(message)
    return found


class _Dumper(yaml.SafeDumper):
    """Multi-line text (prompts, menus) as literal blocks that read as they were sent; a
    value written twice is written out twice (no anchors: the reader refuses aliases)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)

_HEADER = (
    "# A decision-level recording (pytest_opdecide.recording.RecordingRuntime): one entry per\n"
    "# model call, in order. Replay it with ScriptedRuntime.from_recording(path); edit the\n"
    "# replies freely (text, tool_calls), but keep the options and tools of what is offered.\n"
)


class RecordingRuntime(Runtime):
    """A runtime that passes every model call to ``inner`` and records it in ``path``.

    The file (YAML) holds one entry per call, rewritten whole and atomically after each call;
    an existing file is replaced at the first call. The tool loop, decisions and re-picks run
    in this runtime (as in any runtime), with the toolsets of ``inner``: only the model call is
    passed on, so ``inner`` may be a real runtime, a fake, or another wrapper.

    Args:
        inner: The runtime that makes the model calls (a ``Runtime``, or any object with an
            ``exec`` method, wrapped with :func:`~pytest_opdecide.as_runtime`).
        path: Where to write the recording.

    Example:
        >>> import tempfile, pathlib
        >>> from fake_runtimes import ScriptedRuntime, pick
        >>> from pytest_opdecide import decision
        >>> from pytest_opdecide.recording import RecordingRuntime
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "route.yaml"
        >>> recording = RecordingRuntime(ScriptedRuntime(pick("billing")), path)
        >>> decision.make("Route it.", {"billing": "B", "shipping": "S"}, runtime=recording)
        'B'
        >>> decision.make("Route it.", {"billing": "B", "shipping": "S"},
        ...               runtime=ScriptedRuntime.from_recording(path))
        'B'
    """

    def __init__(self, inner: Any, path: str | os.PathLike[str]) -> None:
        wrapped = as_runtime(inner, where="RecordingRuntime() got")  # an object with exec too
        super().__init__(model=wrapped.model)
        self.inner = wrapped
        """The runtime every model call is passed to."""
        self.toolsets = wrapped.toolsets  # the same toolsets, not a copy
        self.path = Path(path)
        """The recording's file."""
        self.exchanges: list[dict[str, Any]] = []
        """The entries written so far (what the file holds: scrubbed)."""
        self._entries: list[dict[str, Any]] = []
        self._write_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"RecordingRuntime({self.inner!r}, {str(self.path)!r})"

    def call_model(self, request: ModelRequest) -> ModelReply:
        try:
            reply = self.inner.call_model(request)
        except Exception as exc:
            self._add(request, None, exc)
            raise
        self._add(request, reply, None)
        return reply

    async def call_model_async(self, request: ModelRequest) -> ModelReply:
        try:
            reply = await self.inner.call_model_async(request)
        except Exception as exc:
            self._add(request, None, exc)
            raise
        self._add(request, reply, None)
        return reply

    def _add(self, request: ModelRequest, reply: Any, error: BaseException | None) -> None:
        if reply is not None and not isinstance(reply, ModelReply):
            reply = ModelReply(text=reply)
        entry = exchange_entry(request, reply, error)
        with self._write_lock:
            self._entries.append(entry)
            # All of it, every time: a secret found by name in this call is removed from the
            # calls before it too.
            self.exchanges = scrub_data(self._entries)
            document = {"exchanges": self.exchanges, "version": FORMAT_VERSION}
            text = yaml.dump(
                document, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100
            )
            write_atomic(self.path, _HEADER + text)
