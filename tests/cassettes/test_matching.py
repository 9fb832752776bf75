"""Matching: JSON bodies by content, volatile paths ignored, a diff when nothing matches."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from _openai_server import OpenAIServer

from pytest_opdecide._cassettes._matching import comparable_body, drop_path
from pytest_opdecide._cassettes._scrub import PLACEHOLDER

from ._support import dedent, error_text

BODY_TESTS = dedent(
    """
    import json
    import os
    import time
    import uuid

    import httpx
    import pytest

    def send(runtime, body):
        with httpx.Client() as client:
            response = client.post(
                runtime.url, content=json.dumps(body), headers={"content-type": "application/json"}
            )
        return response.json()["choices"][0]["message"]["content"]

    @pytest.mark.opdecide(cassette=True, volatile=["request_id", "meta.sent_at", "messages.*.id"])
    def test_body(runtime):
        body = {
            "model": "m",
            "request_id": str(uuid.uuid4()),
            "meta": {"sent_at": time.time(), "team": "support"},
            "messages": [{"id": str(uuid.uuid4()), "role": "user", "content": "Hi."}],
        }
        if os.environ.get("REVERSED"):
            body = dict(reversed(body.items()))
            body["meta"] = dict(reversed(body["meta"].items()))
            body["messages"][0] = dict(reversed(body["messages"][0].items()))
        assert send(runtime, body) == "Hello from the test server."
    """
)


def test_key_order_and_volatile_paths_are_ignored(
    project: pytest.Pytester, server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_match=BODY_TESTS)
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    server.reset()
    # New ids and times on every run, and the keys in the opposite order: still a match.
    monkeypatch.setenv("REVERSED", "1")
    project.runpytest().assert_outcomes(passed=1)
    assert server.received == []

    # Without the volatile paths the same replay fails, and the error says how to fix it.
    project.makepyfile(
        test_match=BODY_TESTS.replace(
            ', volatile=["request_id", "meta.sent_at", "messages.*.id"]', ""
        )
    )
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    message = error_text(result)
    assert (
        "Fields that differ: messages.0.id, meta.sent_at, request_id. If they change on every "
        "run (an id, a timestamp), ignore them with @pytest.mark.opdecide(volatile=["
        "'messages.0.id', 'meta.sent_at', 'request_id']) (a * matches every list item or key)."
    ) in " ".join(message.splitlines())
    lines = message.splitlines()
    assert sum(line.startswith("-request_id: ") for line in lines) == 1
    assert sum(line.startswith("+request_id: ") for line in lines) == 1


MENU_TESTS = dedent(
    """
    import pytest
    from pytest_opdecide import decision

    OPTIONS = {"refund": "R", "escalate": "E", "close": "C"}

    @pytest.mark.opdecide(cassette=True)
    def test_flow(runtime):
        decision.make("Ticket 1: the parcel is late.", OPTIONS)
        decision.make("Ticket 2: the invoice is wrong.", OPTIONS)
        decision.make("Ticket 3: thanks, all good.", OPTIONS)
    """
)


def test_a_mismatch_shows_a_diff_against_the_nearest_request(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    project.makepyfile(test_mismatch=MENU_TESTS)
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    project.makepyfile(test_mismatch=MENU_TESTS.replace("invoice is wrong", "invoice is late"))
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    message = error_text(result)
    lines = message.splitlines()
    assert "CassetteMismatch: the test sent a request that is not in cassette" in lines[0]
    assert lines[0].endswith("cassettes/test_mismatch/test_flow.yaml (record mode none):")
    assert lines[1].startswith("    POST http://127.0.0.1:")
    assert lines[1].endswith("/v1/chat/completions")
    assert "Nearest recorded request: #1 of 3:" in lines
    assert "--- recorded #1" in lines
    assert "+++ sent now" in lines
    # The prompt is diffed line by line, as it reads in the cassette.
    changed = [line for line in lines if line.startswith(("-", "+"))]
    assert [line for line in changed if not line.startswith(("---", "+++"))] == [
        "-    Ticket 2: the invoice is wrong.",
        "+    Ticket 2: the invoice is late.",
    ]
    assert "Fields that differ" not in message  # a prompt is no id or timestamp
    assert (
        "If the code changed on purpose, re-record it with the model server running at base_url "
        "(--opdecide-base-url=URL, or opdecide_base_url in the ini file):" in lines
    )
    assert "    pytest 'test_mismatch.py::test_flow' --opdecide-record=rewrite" in lines


def test_a_request_sent_more_often_than_recorded(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    project.makepyfile(test_more=MENU_TESTS)
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    project.makepyfile(
        test_more=MENU_TESTS.replace(
            '    decision.make("Ticket 3',
            '    decision.make("Ticket 2: the invoice is wrong.", OPTIONS)\n'
            '    decision.make("Ticket 3',
        )
    )
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    message = error_text(result)
    assert "Nearest recorded request: #1 of 3 (already replayed):" in message
    assert "(the same request: the code sent it more often than when it was recorded)" in message


def test_comparable_body() -> None:
    a = json.dumps({"b": 1, "a": {"y": [1, 2], "x": "k"}})
    b = json.dumps({"a": {"x": "k", "y": [1, 2]}, "b": 1})
    assert comparable_body(a, ()) == comparable_body(b.encode(), ())
    # Both sides compare as stored: a scrubbed field or key-like text equals its secret.
    stored = json.dumps({"api_key": PLACEHOLDER, "text": f"key {PLACEHOLDER}"})
    sent = json.dumps({"api_key": "abc-123-secret", "text": "key sk-abcdefghijklmnopqrstu"})
    assert comparable_body(stored, ()) == comparable_body(sent, ())
    assert comparable_body("plain text", ()) == "plain text"
    assert comparable_body(None, ()) is None


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("meta.id", {"meta": {"keep": 1}, "items": [{"id": 1, "v": 1}, {"id": 2, "v": 2}]}),
        ("items.*.id", {"meta": {"id": 9, "keep": 1}, "items": [{"v": 1}, {"v": 2}]}),
        ("items.1.v", {"meta": {"id": 9, "keep": 1}, "items": [{"id": 1, "v": 1}, {"id": 2}]}),
        ("items.0", {"meta": {"id": 9, "keep": 1}, "items": [{"id": 2, "v": 2}]}),
        ("*.id", {"meta": {"keep": 1}, "items": [{"id": 1, "v": 1}, {"id": 2, "v": 2}]}),
        (
            "missing.path",
            {"meta": {"id": 9, "keep": 1}, "items": [{"id": 1, "v": 1}, {"id": 2, "v": 2}]},
        ),
        (
            "items.7.v",
            {"meta": {"id": 9, "keep": 1}, "items": [{"id": 1, "v": 1}, {"id": 2, "v": 2}]},
        ),
    ],
)
def test_volatile_paths(path: str, expected: object) -> None:
    value = {"meta": {"id": 9, "keep": 1}, "items": [{"id": 1, "v": 1}, {"id": 2, "v": 2}]}
    assert drop_path(value, path.split(".")) == expected


def _mismatch(recorded: list[str], sent: str) -> str:
    """The message for ``sent`` against recorded prompts (each in a chat request)."""
    from pathlib import Path

    from pytest_opdecide._cassettes._tape import Interaction, Tape

    def body(prompt: str) -> bytes:
        return json.dumps(
            {"model": "m", "messages": [{"role": "user", "content": prompt}]}
        ).encode()

    url = "http://127.0.0.1:8765/v1/chat/completions"
    tape = Tape(
        Path("cassettes/test_x/test_y.yaml"),
        [Interaction("POST", url, body(prompt), {}, 200, "OK", {}, b"{}") for prompt in recorded],
        nodeid="test_x.py::test_y",
    )
    return str(tape.mismatch("POST", url, body(sent)))


MIB = 1 << 20


@pytest.mark.parametrize(
    ("recorded", "sent", "shown"),
    [
        ("w" * MIB, "w" * (MIB // 2) + "CHANGED" + "w" * (MIB // 2), ["wwwwCHANGEDwwww"]),
        (
            "".join(f"line {n} of the prompt\n" for n in range(20_000)),
            "".join(f"line {n} of the prompt\n" for n in range(20_000)).replace(
                "line 10000 ", "LINE 10000 "
            ),
            ["-    line 10000 of the prompt", "+    LINE 10000 of the prompt"],
        ),
        ("a\n" * 20_000, "b\n" * 20_000, ["-... 386 more removed lines", "+    b"]),
    ],
    ids=["one-long-line", "one-line-of-many", "every-line"],
)
def test_the_mismatch_of_a_huge_prompt_stays_short(
    recorded: str, sent: str, shown: list[str]
) -> None:
    """A long prompt that changed: the message shows where, says how much it left out, and
    names the fix on the first screen."""
    message = _mismatch([recorded, recorded[:1000]], sent)
    lines = message.splitlines()
    assert len(message) < 12_000
    assert len(lines) < 60
    assert max(len(line) for line in lines) < 300
    for part in shown:
        assert part in message
    assert "    pytest 'test_x.py::test_y' --opdecide-record=rewrite" in lines
    assert lines[2].startswith("Nearest recorded request: #")


def test_how_much_of_a_long_line_is_left_out_is_said() -> None:
    message = _mismatch(["w" * MIB], "w" * (MIB // 2) + "CHANGED" + "w" * (MIB // 2))
    assert re.search(
        r"^-\[[\d,]+ characters\]\.\.\.w+\.\.\.\[[\d,]+ more characters\]$", message, re.M
    )
    assert re.search(
        r"^\+\[[\d,]+ characters\]\.\.\.w+CHANGEDw+\.\.\.\[[\d,]+ more characters\]$", message, re.M
    )
    assert re.search(r"^\(left out: [\d,]+ characters of long lines\)$", message, re.M)


def test_how_many_lines_are_left_out_is_said() -> None:
    message = _mismatch(["a\n" * 1000], "b\n" * 1000)
    note = next(line for line in message.splitlines() if line.startswith("(left out: "))
    assert re.fullmatch(r"\(left out: 1,\d{3} lines further on, not compared\)", note)


def _chat(prompt: str, *, reordered: bool = False, request_id: str = "a") -> bytes:
    fields = {"model": "m", "messages": [{"role": "user", "content": prompt}], "id": request_id}
    return json.dumps(dict(reversed(fields.items())) if reordered else fields).encode()


def _tape(bodies: list[bytes], volatile: tuple[str, ...] = ()) -> Any:
    from pathlib import Path

    from pytest_opdecide._cassettes._tape import Interaction, Tape

    url = "http://127.0.0.1:8765/v1/chat/completions"
    stored = [Interaction("POST", url, body, {}, 200, "OK", {}, b"{}") for body in bodies]
    return Tape(Path("cassettes/t.yaml"), stored, volatile=volatile), url


def test_the_index_answers_with_the_first_unplayed_match_in_cassette_order() -> None:
    # #0 matches by content only (keys in another order), #1 byte for byte: #0 comes first.
    tape, url = _tape([_chat("hi", reordered=True), _chat("hi"), _chat("bye"), _chat("hi")])
    assert tape.find("POST", url, _chat("hi")) == 0
    picks = [tape.take("POST", url, _chat("hi")) for _ in range(3)]
    assert [next(i for i, x in enumerate(tape.interactions) if x is p) for p in picks] == [0, 1, 3]
    assert tape.take("POST", url, _chat("hi")) is None  # every "hi" was replayed
    assert tape.find("GET", url, _chat("bye")) is None  # the method counts
    assert tape.find("POST", url + "?x=1", _chat("bye")) is None  # and the query
    assert tape.find("POST", url, _chat("bye")) == 2
    assert "Nearest recorded request: #2" in str(tape.mismatch("POST", url, _chat("bye!")))


def test_the_index_ignores_volatile_paths_and_tells_numbers_from_text() -> None:
    tape, url = _tape([_chat("one", request_id="r1"), _chat("two", request_id="r2")], ("id",))
    assert tape.find("POST", url, _chat("two", reordered=True, request_id="other")) == 1
    numbers, _ = _tape([b'{"n": 1}', b'{"n": [1]}', b'{"n": {"1": 1}}'])
    assert numbers.find("POST", url, b'{"n": 1.0}') == 0  # JSON compares 1 and 1.0 equal
    assert numbers.find("POST", url, b'{"n": "1"}') is None
    assert numbers.find("POST", url, b'{"n": [1.0]}') == 1
    assert numbers.find("POST", url, b'{"n": {"1": 1}}') == 2
    assert numbers.find("POST", url, b'{"n": {"1": [1]}}') is None


def test_interactions_recorded_again_are_found_by_content() -> None:
    tape, url = _tape([_chat("one"), _chat("two"), _chat("three")])
    again = [({"method": "POST", "uri": url, "body": _chat("two", reordered=True)}, {})]
    kept = tape.not_recorded_again(again)
    assert [json.loads(request["body"])["messages"][0]["content"] for request, _ in kept] == [
        "one",
        "three",
    ]
