"""Replaying a decision-level recording as the steps of a strict scripted fake.

A ``RecordingRuntime`` (:mod:`pytest_opdecide.recording`) writes each model call as one entry
of a YAML file; :func:`recorded_steps` reads the file back as one :class:`RecordedReply` step
per recorded call, which ``ScriptedRuntime.from_recording(path)`` replays in order. Each step
first checks that the call it answers offers the same options and tools as the recorded call,
so a recording made before the code changed its menu fails with a message saying what changed,
instead of replaying a pick that no longer means the same thing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import yaml

from fake_runtimes._script_errors import ScriptMismatch
from fake_runtimes._script_steps import FakeCall, error, tool_call
from pytest_opdecide import ModelReply, ToolCall, Usage

__all__ = [
    "FORMAT_VERSION",
    "RecordedCallError",
    "RecordedReply",
    "load_recording",
    "recorded_steps",
]

FORMAT_VERSION = 1
"""The version of the recording format, written as the file's last line."""


class RecordedCallError(RuntimeError):
    """Replays a model call that raised when it was recorded (its type and message)."""

    __module__ = "pytest_opdecide.recording"


class _RecordingLoader(yaml.SafeLoader):
    """The safe loader, refusing what a recording this library writes never holds: aliases
    (``*name``: a few nested ones expand a kilobyte into gigabytes) and a key given twice in
    one mapping (a reviewer reads one value, replay would use the other)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = cast(Any, self).peek_event()  # untyped in the stubs
            raise yaml.MarkedYAMLError(
                problem=f"an alias (*{event.anchor}): a recording holds none (this library "
                "never writes one); write the value out",
                problem_mark=event.start_mark,
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, str) and key in seen:
                raise yaml.MarkedYAMLError(
                    problem=f"the key {key!r} is given twice in one mapping (first at line "
                    f"{seen[key].line + 1}): keep one of them",
                    problem_mark=key_node.start_mark,
                )
            if isinstance(key, str):
                seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def load_recording(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The entries of a recording file.

    Raises:
        FileNotFoundError: No file at ``path``.
        ValueError: The file is not a recording (or is truncated); the message names it.
    """
    where = Path(path)
    text = where.read_text(encoding="utf-8")
    try:
        data = yaml.load(text, Loader=_RecordingLoader)  # a safe loader
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
