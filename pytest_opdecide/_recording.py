"""Decision-level recordings: model exchanges written at the runtime boundary, replayed as fakes.

:class:`RecordingRuntime` wraps any runtime (a real one, usually) and writes every model call it
passes on as one readable YAML entry: why the call was made (``kind``), the content blocks sent,
the rendered menu and option names, the native tools offered, and what came back (text, tool
calls, usage) or the error raised. The file is rewritten atomically after each call, so it is
whole even if the test dies half way.

``ScriptedRuntime.from_recording(path)`` turns such a file into a strict scripted fake: one
:class:`RecordedReply` step per recorded call, replayed in order. Each step first checks that
the call it answers offers the same options and tools as the recorded call, so a recording made
before the code changed its menu fails with a message saying what changed, instead of replaying
a pick that no longer means the same thing. The steps are plain, editable objects, and so is the
file.

Unlike an HTTP cassette, a recording does not depend on the wire format of any provider: it is
the conversation as the decision code sees it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from pytest_opdecide._adapter import as_runtime
from pytest_opdecide._files import write_atomic
from pytest_opdecide._messages import ModelReply, ModelRequest, ToolCall, Usage
from pytest_opdecide._runtime import Runtime

if TYPE_CHECKING:
    from fake_runtimes import FakeCall

__all__ = [
    "FORMAT_VERSION",
    "RecordedCallError",
    "RecordedReply",
    "RecordingRuntime",
    "load_recording",
    "recorded_steps",
]

FORMAT_VERSION = 1
"""The version of the recording format, written as the file's last line."""


class RecordedCallError(RuntimeError):
    """Replays a model call that raised when it was recorded (its type and message)."""


# --- writing ---------------------------------------------------------------------------------


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
    """Multi-line text (prompts, menus) as literal blocks that read as they were sent."""


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
        """The entries written so far (what the file holds)."""
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
            self.exchanges.append(entry)
            document = {"exchanges": self.exchanges, "version": FORMAT_VERSION}
            text = yaml.dump(
                document, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100
            )
            write_atomic(self.path, _HEADER + text)


# --- replaying -------------------------------------------------------------------------------


def load_recording(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The entries of a recording file.

    Raises:
        FileNotFoundError: No file at ``path``.
        ValueError: The file is not a recording (or is truncated); the message names it.
    """
    where = Path(path)
    text = where.read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"recording {where} is not valid YAML: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("exchanges"), list):
        raise ValueError(f"{where} is not a recording: expected a mapping with an 'exchanges' list")
    if "version" not in data:
        raise ValueError(f"recording {where} is truncated: the final 'version' line is missing")
    exchanges: list[dict[str, Any]] = data["exchanges"]
    for number, entry in enumerate(exchanges):
        if not isinstance(entry, dict) or ("reply" not in entry and "error" not in entry):
            raise ValueError(f"recording {where}: entry {number} has no 'reply' (or 'error')")
    return exchanges


@dataclass
class RecordedReply:
    """One recorded model call, as a step of a scripted fake (a callable step).

    When called for a model call, it checks (if ``strict``) that the call offers the recorded
    options and tools, then answers with the recorded reply: the text, or the tool calls as
    ``tool_call`` steps (checked by the fake against the tools offered), or the recorded error.
    Every field may be edited before the replay.

    Attributes:
        index: The entry's number in the recording.
        kind: Why the call was made when recorded (``turn``, ``tool_round``, ``repick``).
        options: The option names the recorded call offered (empty: no menu).
        tools: The native tool names the recorded call offered.
        text: The reply text.
        tool_calls: ``(name, arguments)`` pairs of the reply's native tool calls.
        usage: The token counts reported.
        error: ``"Type: message"`` when the recorded call raised, else ``None``.
        source: The recording's file (for messages).
        strict: Check options and tools before answering.
    """

    index: int
    kind: str
    options: list[str]
    tools: list[str]
    text: str = ""
    tool_calls: list[tuple[str, Any]] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    source: str = ""
    strict: bool = True

    def __getattr__(self, name: str) -> Any:
        # A scripted fake names a callable step by its __qualname__ in its messages.
        if name == "__qualname__":
            return self.describe()
        raise AttributeError(name)

    def describe(self) -> str:
        """``recorded #2 (repick): reply '{"call": "refund"}'``."""
        if self.error is not None:
            what = f"error {self.error!r}"
        elif self.tool_calls:
            what = "tool calls " + ", ".join(name for name, _ in self.tool_calls)
        else:
            shown = self.text if len(self.text) <= 50 else self.text[:47] + "..."
            what = f"reply {shown!r}"
        return f"recorded #{self.index} ({self.kind}): {what}"

    def __call__(self, call: FakeCall) -> Any:
        from fake_runtimes import error, tool_call

        if self.strict:
            self._check(call)
        if self.error is not None:
            return error(RecordedCallError(f"{self.error} (recorded in {self.source})"))
        if self.tool_calls:
            steps: list[Any] = []
            for name, arguments in self.tool_calls:
                if not isinstance(arguments, Mapping):
                    # Arguments that were not a JSON object (a model's mistake) stay as sent.
                    return ModelReply(
                        text=self.text,
                        tool_calls=tuple(
                            ToolCall(n, a if isinstance(a, Mapping | str) else str(a), f"call_{i}")
                            for i, (n, a) in enumerate(self.tool_calls)
                        ),
                        usage=self.usage,
                    )
                steps.append(tool_call(name, **dict(arguments)))
            return steps
        return ModelReply(text=self.text, usage=self.usage)

    def _check(self, call: FakeCall) -> None:
        from fake_runtimes import ScriptMismatch

        problems = []
        if list(call.options) != self.options:
            problems.append(_difference("options", self.options, list(call.options)))
        if list(call.tools) != self.tools:
            problems.append(_difference("tools", self.tools, list(call.tools)))
        if not problems:
            return
        raise ScriptMismatch(
            f"{call.describe()} does not match recorded call #{self.index} ({self.kind}) of "
            f"{self.source}:\n"
            + "\n".join(f"  {problem}" for problem in problems)
            + "\nThe code now offers something else than when the recording was made: record "
            "it again (RecordingRuntime), or edit the recording to match the new offer."
        )


def _difference(what: str, recorded: list[str], offered: list[str]) -> str:
    added = [name for name in offered if name not in recorded]
    removed = [name for name in recorded if name not in offered]
    detail = []
    if added:
        detail.append(f"new: {added}")
    if removed:
        detail.append(f"gone: {removed}")
    if not detail:
        detail.append("same names, another order")
    return f"{what}: recorded {recorded}, offered now {offered} ({'; '.join(detail)})"


def recorded_steps(path: str | os.PathLike[str], *, strict: bool = True) -> list[RecordedReply]:
    """The steps of a scripted fake that replays the recording at ``path``, one per call."""
    steps = []
    for index, entry in enumerate(load_recording(path)):
        reply = entry.get("reply") or {}
        usage = reply.get("usage") or {}
        error = entry.get("error")
        steps.append(
            RecordedReply(
                index=index,
                kind=str(entry.get("kind", "turn")),
                options=[str(name) for name in entry.get("options") or []],
                tools=[
                    str(tool["name"] if isinstance(tool, dict) else tool)
                    for tool in entry.get("tools") or []
                ],
                text=str(reply.get("text") or ""),
                tool_calls=[
                    (str(call["name"]), call.get("arguments") or {})
                    for call in reply.get("tool_calls") or []
                ],
                usage=Usage(
                    int(usage.get("prompt_tokens", 0)),
                    int(usage.get("completion_tokens", 0)),
                    int(usage.get("total_tokens", 0)),
                ),
                error=None if error is None else f"{error.get('type')}: {error.get('message')}",
                source=str(path),
                strict=strict,
            )
        )
    return steps
