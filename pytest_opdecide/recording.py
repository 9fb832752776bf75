"""Decision-level recordings: record model exchanges at the runtime boundary, replay them as fakes.

``RecordingRuntime(inner, path)`` wraps a runtime and writes each model call (kind, blocks
sent, menu, options, tools offered, reply text, tool calls, usage) to a readable YAML file;
``fake_runtimes.ScriptedRuntime.from_recording(path)`` replays that file as a strict,
editable scripted fake.

Example:
    >>> import pathlib, tempfile
    >>> from fake_runtimes import ScriptedRuntime, pick
    >>> from pytest_opdecide import decision
    >>> from pytest_opdecide.recording import RecordingRuntime
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "triage.yaml"
    >>> live = RecordingRuntime(ScriptedRuntime(pick("refund")), path)
    >>> decision.make("Next step?", {"refund": "R", "close": "C"}, runtime=live)
    'R'
    >>> replay = ScriptedRuntime.from_recording(path)
    >>> decision.make("Next step?", {"refund": "R", "close": "C"}, runtime=replay)
    'R'
"""

from __future__ import annotations

from fake_runtimes._recorded import (
    FORMAT_VERSION,
    RecordedCallError,
    RecordedReply,
    load_recording,
    recorded_steps,
)
from pytest_opdecide._recording import RecordingRuntime

__all__ = [
    "FORMAT_VERSION",
    "RecordedCallError",
    "RecordedReply",
    "RecordingRuntime",
    "load_recording",
    "recorded_steps",
]
