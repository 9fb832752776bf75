"""Long event streams as one literal block (``event_stream:``), short ones event by event."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_opdecide._cassettes._file import read_interactions, write_cassette
from pytest_opdecide._cassettes._scrub import Scrubber
from pytest_opdecide._cassettes._yaml_format import (
    STREAM_BLOCK_EVENTS,
    ReadableYaml,
    _lines_are_fields,
    held_as_is,
)
from pytest_opdecide._http._secrets import Secrets


def _stream(count: int, content: str = "w") -> str:
    events = [
        "data: " + json.dumps({"choices": [{"delta": {"content": f"{content}{n} "}}]}) + "\n\n"
        for n in range(count)
    ]
    return "".join(events) + "data: [DONE]\n\n"


def _pair(text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    request = {
        "method": "POST",
        "uri": "http://127.0.0.1:1/v1/chat/completions",
        "body": b'{"model": "m", "stream": true}',
        "headers": {"content-type": ["application/json"]},
    }
    response = {
        "status": {"code": 200, "message": "OK"},
        "headers": {"content-type": ["text/event-stream"]},
        "body": {"string": text.encode()},
    }
    return request, response


def _written(tmp_path: Path, text: str, secrets: Secrets | None = None) -> tuple[str, bytes]:
    path = tmp_path / "c.yaml"
    write_cassette(path, [_pair(text)], scrubber=Scrubber(secrets=secrets or Secrets()))
    (replayed,) = read_interactions(path)
    return path.read_text(encoding="utf-8"), replayed.content


def test_a_long_stream_is_one_literal_block_replayed_byte_for_byte(tmp_path: Path) -> None:
    text = _stream(STREAM_BLOCK_EVENTS + 1)
    written, replayed = _written(tmp_path, text)
    assert "event_stream: |+\n" in written
    assert "events:" not in written
    assert replayed == text.encode()


def test_a_stream_of_at_most_the_bound_is_stored_event_by_event(tmp_path: Path) -> None:
    text = _stream(STREAM_BLOCK_EVENTS - 1)  # with [DONE]: the bound's number of events
    written, replayed = _written(tmp_path, text)
    assert "event_stream" not in written
    assert "events:" in written
    assert replayed == text.encode()


@pytest.mark.parametrize(
    "odd",
    ["\t", "\r", "\x85", "\u2028", "\u2029", "\ufeff", "\x07", "\U0001f600", "trailing \n"],
)
def test_a_long_stream_a_block_cannot_hold_is_stored_event_by_event(
    tmp_path: Path, odd: str
) -> None:
    text = _stream(STREAM_BLOCK_EVENTS + 5) + f"data: x{odd}y\n\n"
    written, replayed = _written(tmp_path, text)
    assert "event_stream" not in written
    assert replayed == text.encode()


def test_a_long_stream_in_block_form_is_still_scrubbed(tmp_path: Path) -> None:
    key = "sk-proj-abcdefghijklmnop0123"
    text = _stream(STREAM_BLOCK_EVENTS + 5) + (
        # a key sent in pieces across events, and a secret-named field
        'data: {"choices": [{"delta": {"content": "sk-proj-abcd"}}]}\n\n'
        'data: {"choices": [{"delta": {"content": "efghijklmnop0123"}}]}\n\n'
        'data: {"api_key": "hunter2-very-secret"}\n\n'
    )
    written, replayed = _written(tmp_path, text, Secrets([key]))
    assert "event_stream: |+\n" in written
    assert "abcdefghijklmnop" not in written
    assert "efghijklmnop0123" not in written
    assert "hunter2-very-secret" not in written
    assert b"hunter2" not in replayed
    assert b"<REDACTED>" in replayed


def test_the_block_form_is_read_as_the_layout_allows(tmp_path: Path) -> None:
    text = _stream(STREAM_BLOCK_EVENTS + 1)
    written, _ = _written(tmp_path, text)
    data = ReadableYaml.deserialize(written)
    assert data["interactions"][0]["response"]["body"]["string"] == text


_LINE = st.text(
    # Text UTF-8 can carry, without a BOM (filtered: the oldest Hypothesis we support has
    # neither `codec=` nor `exclude_characters=`).
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFFFD).filter(
        lambda c: not 0xD800 <= ord(c) <= 0xDFFF and c != "\ufeff"
    ),
    min_size=1,
).map(lambda line: line.rstrip(" ") or "x")


@settings(deadline=None, max_examples=25)
@given(st.lists(_LINE, min_size=1, max_size=5))
def test_the_block_is_what_libyaml_reads_back_as_the_text(lines: list[str]) -> None:
    text = "".join(f"data: {line}\n\n" for line in lines) * (STREAM_BLOCK_EVENTS // len(lines) + 1)
    response = _pair(text)[1]
    response["body"]["string"] = text
    interaction = {"request": _pair(text)[0], "response": response}
    stored = ReadableYaml.serialize({"interactions": [interaction]})
    data = yaml.safe_load(stored)
    body = data["interactions"][0]["response"]["body"]["string"]
    if "event_stream" in body:
        assert body["event_stream"] == text
    assert ReadableYaml.deserialize(stored)["interactions"][0]["response"]["body"]["string"] == text


def test_a_scrub_hook_gets_a_long_stream_event_by_event(tmp_path: Path) -> None:
    seen: list[Any] = []

    def hook(interaction: dict[str, Any]) -> None:
        body = interaction["response"]["body"]["string"]
        seen.append(body)
        body["events"][0]["data"]["choices"][0]["delta"]["content"] = "changed"

    path = tmp_path / "c.yaml"
    text = _stream(STREAM_BLOCK_EVENTS + 1)
    write_cassette(path, [_pair(text)], scrubber=Scrubber(secrets=Secrets()), scrub_hook=hook)
    assert list(seen[0]) == ["events"]
    written = path.read_text(encoding="utf-8")
    assert "event_stream: |+\n" in written
    (replayed,) = read_interactions(path)
    assert replayed.content.startswith(b'data: {"choices": [{"delta": {"content": "changed"}}]}')


# The checks of _event_block_holds, written as the patterns they replace: the fast checks must
# say what these say on any text.
_UNHELD_PATTERN = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]| \n")
_NOT_A_FIELD_PATTERN = re.compile("(?:^|\n)(?!data:|event:|id:|:|retry:|\n|$)")
_LINE_PIECES = st.sampled_from(
    [
        "data:",
        "event:",
        "id:",
        ":",
        "retry:",
        "\n",
        "\n\n",
        " ",
        "x",
        "é",
        "\t",
        "\r",
        "\u2028",
        "\ufeff",
        "\U0001f600",
        "da",
        "ta:",
        "\x85",
        "~",
        "\x7f",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINE_PIECES, max_size=30).map("".join))
def test_the_fast_checks_agree_with_the_patterns(text: str) -> None:
    assert held_as_is(text) == (_UNHELD_PATTERN.search(text) is None)
    if "\n\n\n" not in text and text[:1] not in ("", " ", "\n"):
        assert _lines_are_fields(text) == (_NOT_A_FIELD_PATTERN.search(text) is None)
