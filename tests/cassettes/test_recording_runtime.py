"""Decision-level recordings: RecordingRuntime writes, ScriptedRuntime.from_recording replays."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from _openai_server import OpenAIServer

import pytest_opdecide.recording as recording_module
from fake_runtimes import (
    FunctionRuntime,
    ScriptedRuntime,
    ScriptExhausted,
    ScriptMismatch,
    UnusedSteps,
    error,
    pick,
    tool_call,
)
from pytest_opdecide import DecisionError, Runtime, agent, decision
from pytest_opdecide.recording import (
    RecordedCallError,
    RecordedReply,
    RecordingRuntime,
    load_recording,
)
from pytest_opdecide.runtimes import OpenAICompatibleRuntime

OPTIONS: dict[str, Any] = {
    "refund": ("REFUND", "Give the money back."),
    "close": ("CLOSE", "Nothing to do."),
}
PROMPT = "A customer writes:\n  I was charged twice for order A1.\nWhat comes next?"


def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    return f"Order {order_id}: charged twice."


def triage(runtime: Runtime) -> list[Any]:
    """The code under test: a decision, then an agent turn with a tool and a decision."""
    first = decision.make(PROMPT, OPTIONS, runtime=runtime)
    second = agent(
        "Look up order A1, then decide.",
        tools=[lookup_order],
        choices=OPTIONS,
        runtime=runtime,
    )
    return [first, second]


@pytest.fixture
def real(server: OpenAIServer) -> Any:
    with OpenAICompatibleRuntime(server.url, model="test-model") as runtime:
        yield runtime


def test_exports() -> None:
    assert recording_module.__all__ == sorted(recording_module.__all__)
    assert set(recording_module.__all__) == {
        "FORMAT_VERSION",
        "RecordedCallError",
        "RecordedReply",
        "RecordingRuntime",
        "load_recording",
        "recorded_steps",
    }


def test_round_trip_through_decisions_and_an_agent_turn_with_tools(
    real: OpenAICompatibleRuntime, server: OpenAIServer, tmp_path: Path
) -> None:
    path = tmp_path / "triage.yaml"
    recorder = RecordingRuntime(real, path)
    recorded = triage(recorder)
    assert recorded == ["REFUND", "REFUND"]  # the server picks the first option
    assert len(server.completions) == 3  # decision; agent: tool call, then the pick

    replay = ScriptedRuntime.from_recording(path)
    assert triage(replay) == recorded
    replay.assert_complete()
    assert len(server.completions) == 3  # the replay made no request
    # The replay sent what the recording saw, call for call.
    assert [c.kind for c in replay.calls] == [c.kind for c in recorder.trace.calls]
    assert [c.prompt for c in replay.calls] == [c.prompt for c in recorder.trace.calls]
    assert [c.tools for c in replay.calls] == [[], ["lookup_order"], ["lookup_order"]]


def test_the_file_is_readable(real: OpenAICompatibleRuntime, tmp_path: Path) -> None:
    path = tmp_path / "triage.yaml"
    triage(RecordingRuntime(real, path))
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# A decision-level recording")
    assert text.rstrip().endswith("version: 1")
    assert "  blocks:\n  - type: text\n    text: |\n      A customer writes:\n" in text
    first, second, third = yaml.safe_load(text)["exchanges"]
    assert first["kind"] == "turn"
    assert first["options"] == ["refund", "close"]
    assert first["menu"].startswith("refund()\n    Give the money back.\n")
    assert "tools" not in first
    assert first["reply"] == {
        "text": '{"call": "refund"}',
        "usage": {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14},
        "model": "test-model",
    }
    assert second["tools"] == [
        {
            "name": "lookup_order",
            "description": "Look up an order by its id.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        }
    ]
    # A structured turn (the default): the reply's JSON called the tool; no id was sent.
    assert second["reply"]["tool_calls"] == [
        {"name": "lookup_order", "arguments": {"order_id": "x"}}
    ]
    assert third["kind"] == "tool_round"
    assert "blocks" not in third  # the turn's, in the entry before
    assert third["tools"] == ["lookup_order"]
    assert third["options"] == ["refund", "close"]
    assert third["tool_results"] == [
        {"tool": "lookup_order", "call_id": "", "text": "Order x: charged twice."}
    ]


def test_the_file_is_whole_after_each_call(tmp_path: Path) -> None:
    path = tmp_path / "partial.yaml"
    inner = ScriptedRuntime(pick("refund"), error(TimeoutError("the model took too long")))
    recorder = RecordingRuntime(inner, path)
    decision.make("First.", OPTIONS, runtime=recorder)
    assert [e["kind"] for e in load_recording(path)] == ["turn"]
    with pytest.raises(TimeoutError):
        decision.make("Second.", OPTIONS, runtime=recorder)
    entries = load_recording(path)
    assert entries[1]["error"] == {"type": "TimeoutError", "message": "the model took too long"}
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]

    # A recorded failure replays as a failure.
    replay = ScriptedRuntime.from_recording(path)
    decision.make("First.", OPTIONS, runtime=replay)
    with pytest.raises(RecordedCallError, match="TimeoutError: the model took too long"):
        decision.make("Second.", OPTIONS, runtime=replay)


def lookup_with_key(order_id: str, api_key: str) -> str:
    """Look up an order with a key."""
    return f"Order {order_id}: charged twice."


def test_a_recording_holds_no_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool call's secret-named argument, an environment secret the model echoes and a
    failure's message are written as placeholders, and the recording still replays."""
    monkeypatch.setenv("SUPPORT_API_TOKEN", "env-token-5b3d1f9e7c")
    path = tmp_path / "secret.yaml"
    inner = ScriptedRuntime(
        tool_call("lookup_with_key", order_id="A1", api_key="tool-key-2c4e6a8b0d"),
        "The token env-token-5b3d1f9e7c worked. " + '{"call": "refund"}',
        error(PermissionError("refused key tool-key-2c4e6a8b0d")),
    )
    recorder = RecordingRuntime(inner, path)
    assert agent("Look up A1.", tools=[lookup_with_key], choices=OPTIONS, runtime=recorder) == (
        "REFUND"
    )
    with pytest.raises(PermissionError):
        decision.make("Again.", OPTIONS, runtime=recorder)
    text = path.read_text(encoding="utf-8")
    assert "env-token-5b3d1f9e7c" not in text
    assert "tool-key-2c4e6a8b0d" not in text
    first, second, third = load_recording(path)
    assert first["reply"]["tool_calls"][0]["arguments"] == {
        "order_id": "A1",
        "api_key": "<REDACTED>",
    }
    assert second["reply"]["text"] == 'The token <REDACTED> worked. {"call": "refund"}'
    assert third["error"] == {"type": "PermissionError", "message": "refused key <REDACTED>"}
    replay = ScriptedRuntime.from_recording(path)
    assert agent("Look up A1.", tools=[lookup_with_key], choices=OPTIONS, runtime=replay) == (
        "REFUND"
    )


def test_repicks_are_recorded_and_replayed(tmp_path: Path) -> None:
    path = tmp_path / "repick.yaml"
    inner = ScriptedRuntime("I think a refund is best.", pick("refund"))
    assert decision.make("Next?", OPTIONS, runtime=RecordingRuntime(inner, path)) == "REFUND"
    assert [e["kind"] for e in load_recording(path)] == ["turn", "repick"]
    replay = ScriptedRuntime.from_recording(path)
    assert decision.make("Next?", OPTIONS, runtime=replay) == "REFUND"
    assert [c.kind for c in replay.calls] == ["turn", "repick"]


async def test_async_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "async.yaml"
    inner = ScriptedRuntime(tool_call("lookup_order", order_id="B2"), pick("close"))
    recorder = RecordingRuntime(inner, path)
    result = await recorder.exec_async("Check B2.", tools=[lookup_order], choices=OPTIONS)
    assert result == "CLOSE"
    replay = ScriptedRuntime.from_recording(path)
    assert await replay.exec_async("Check B2.", tools=[lookup_order], choices=OPTIONS) == "CLOSE"
    assert replay.calls[1].prompt == "Order B2: charged twice."


def test_new_options_fail_clearly(tmp_path: Path) -> None:
    path = tmp_path / "menu.yaml"
    decision.make("Next?", OPTIONS, runtime=RecordingRuntime(ScriptedRuntime(pick("close")), path))
    replay = ScriptedRuntime.from_recording(path)
    changed = {**OPTIONS, "escalate": ("ESCALATE", "Ask a human.")}
    with pytest.raises(ScriptMismatch) as caught:
        decision.make("Next?", changed, runtime=replay)
    assert str(caught.value) == (
        f"call #0 (turn) does not match recorded call #0 (turn) of {path}:\n"
        "  options: recorded ['refund', 'close'], offered now ['refund', 'close', 'escalate'] "
        "(new: ['escalate'])\n"
        "The code now offers something else than when the recording was made: record it again "
        "(RecordingRuntime), or edit the recording to match the new offer."
    )


def test_changed_tools_fail_clearly(tmp_path: Path) -> None:
    path = tmp_path / "tools.yaml"
    inner = ScriptedRuntime(tool_call("lookup_order", order_id="A1"), pick("refund"))
    RecordingRuntime(inner, path).exec("Go.", tools=[lookup_order], choices=OPTIONS)

    def find_order(order_id: str) -> str:
        """Find an order."""
        return "found"

    with pytest.raises(ScriptMismatch, match=r"tools: recorded \['lookup_order'\], offered now "):
        ScriptedRuntime.from_recording(path).exec("Go.", tools=[find_order], choices=OPTIONS)
    # Not strict: the recorded replies are sent whatever is offered (the fake then reports a
    # tool that is not offered as an error result to the model, as a real model's would be).
    loose = ScriptedRuntime.from_recording(path, strict=False)
    assert loose.exec("Go.", tools=[find_order], choices=OPTIONS) == "REFUND"


def test_a_recording_is_strict(tmp_path: Path) -> None:
    path = tmp_path / "strict.yaml"
    recorder = RecordingRuntime(ScriptedRuntime(pick("refund"), pick("close")), path)
    decision.make("One.", OPTIONS, runtime=recorder)
    decision.make("Two.", OPTIONS, runtime=recorder)

    short = ScriptedRuntime.from_recording(path)
    decision.make("One.", OPTIONS, runtime=short)
    with pytest.raises(UnusedSteps, match=r"1\. <callable recorded #1 \(turn\): reply"):
        short.assert_complete()

    long = ScriptedRuntime.from_recording(path)
    decision.make("One.", OPTIONS, runtime=long)
    decision.make("Two.", OPTIONS, runtime=long)
    with pytest.raises(ScriptExhausted, match="ran out of steps"):
        decision.make("Three.", OPTIONS, runtime=long)


def test_recordings_are_editable(tmp_path: Path) -> None:
    path = tmp_path / "edit.yaml"
    decision.make("Next?", OPTIONS, runtime=RecordingRuntime(ScriptedRuntime(pick("refund")), path))
    # Edit the file...
    path.write_text(path.read_text().replace('{"call": "refund"}', '{"call": "close"}'))
    assert decision.make("Next?", OPTIONS, runtime=ScriptedRuntime.from_recording(path)) == "CLOSE"
    # ...or the steps.
    replay = ScriptedRuntime.from_recording(path)
    step = replay.steps[0]
    assert isinstance(step, RecordedReply)
    step.text = "not a pick at all"
    replay.add(pick("refund"))  # and script the re-pick that now follows
    assert decision.make("Next?", OPTIONS, runtime=replay) == "REFUND"


def test_tool_arguments_that_are_not_an_object_replay_as_sent(tmp_path: Path) -> None:
    from pytest_opdecide import ModelReply, ToolCall

    path = tmp_path / "bad-args.yaml"
    replies = iter(
        [ModelReply(tool_calls=(ToolCall("lookup_order", '{"order_id": "A1"', "c1"),)), "done"]
    )
    inner = FunctionRuntime(lambda call: next(replies))
    RecordingRuntime(inner, path).exec("Go.", tools=[lookup_order])
    replay = ScriptedRuntime.from_recording(path)
    assert replay.exec("Go.", tools=[lookup_order]) == "done"
    assert replay.calls[1].prompt.startswith("Error: the arguments of 'lookup_order' are not valid")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("exchanges: []\n", "truncated"),
        ("[]\n", "is not a recording"),
        ("exchanges: [{kind: turn}]\nversion: 1\n", "entry 0 has no 'reply'"),
        ("exchanges: [\n", "is not valid YAML"),
    ],
)
def test_a_broken_recording_names_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as caught:
        ScriptedRuntime.from_recording(path)
    assert str(path) in str(caught.value)


def test_a_decision_error_is_recorded_too(tmp_path: Path) -> None:
    path = tmp_path / "error.yaml"
    inner = ScriptedRuntime("no idea", "still no idea")
    with pytest.raises(DecisionError):
        decision.make("Next?", OPTIONS, runtime=RecordingRuntime(inner, path))
    replay = ScriptedRuntime.from_recording(path)
    with pytest.raises(DecisionError):
        decision.make("Next?", OPTIONS, runtime=replay)
    replay.assert_complete()


def test_in_a_pytest_test(project: pytest.Pytester) -> None:
    """Record once through the ``runtime`` fixture's real runtime, then script from the file."""
    project.makepyfile(
        test_triage="""
import pathlib
import pytest
from fake_runtimes import ScriptedRuntime
from pytest_opdecide import decision
from pytest_opdecide.recording import RecordingRuntime

RECORDING = pathlib.Path(__file__).parent / "recordings" / "triage.yaml"
OPTIONS = {"refund": "REFUND", "close": "CLOSE"}

@pytest.mark.opdecide(cassette=True)
def test_record(runtime):
    assert decision.make("Next?", OPTIONS, runtime=RecordingRuntime(runtime, RECORDING)) == "REFUND"

def test_replay():
    replay = ScriptedRuntime.from_recording(RECORDING)
    assert decision.make("Next?", OPTIONS, runtime=replay) == "REFUND"
"""
    )
    project.runpytest("--opdecide-live", "-k", "record").assert_outcomes(passed=1, deselected=1)
    project.runpytest("-k", "replay").assert_outcomes(passed=1, deselected=1)


def test_a_recording_with_nested_aliases_is_refused_not_expanded(tmp_path: Path) -> None:
    """A decision-level recording is reviewed as YAML like a cassette: aliases (which the
    library never writes) could expand a kilobyte into gigabytes, and are refused."""
    from pytest_opdecide.recording import load_recording

    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(levels) + "\nexchanges: [{reply: *a8}]\nversion: 1\n")
    with pytest.raises(ValueError, match=r"recording .*bomb.yaml is not valid YAML: .*alias"):
        load_recording(bomb)
    twice = tmp_path / "twice.yaml"
    twice.write_text("exchanges:\n- reply: one\n  reply: two\nversion: 1\n")
    with pytest.raises(ValueError, match="the key 'reply' is given twice"):
        load_recording(twice)


def test_a_value_written_twice_in_a_recording_is_written_out(tmp_path: Path) -> None:
    from fake_runtimes import ScriptedRuntime, pick
    from pytest_opdecide.recording import RecordingRuntime

    path = tmp_path / "twice.yaml"
    live = RecordingRuntime(ScriptedRuntime(pick("a"), pick("a")), path)
    options = {"a": "A", "b": "B"}
    decision.make("First.", options, runtime=live)
    decision.make("Again.", options, runtime=live)
    text = path.read_text()
    assert "&id" not in text
    assert "*id" not in text
    replay = ScriptedRuntime.from_recording(path)
    assert decision.make("First.", options, runtime=replay) == "A"
