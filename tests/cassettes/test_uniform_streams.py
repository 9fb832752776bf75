"""Long streams of one shape, read with one pattern instead of parsed event by event (issue 22).

:func:`uniform_stream` must read exactly what parsing reads (every key, every field's pieces in
order) or decline; the scrubber must then find every secret the slow way finds. A view that
skipped an event, grouped a piece under the wrong field or let a different event through as
the common one would fail these tests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_opdecide._cassettes import _scrub
from pytest_opdecide._cassettes._file import read_interactions, write_cassette
from pytest_opdecide._cassettes._scrub import PLACEHOLDER, Scrubber
from pytest_opdecide._cassettes._scrub_json import (
    UNIFORM_MIN,
    stream_fields,
    uniform_stream,
)
from pytest_opdecide._cassettes._yaml_format import (
    STREAM_BLOCK_EVENTS,
    _event_block_holds,
    parse_events,
)
from pytest_opdecide._http._secrets import Secrets

KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8J9k0"


def parsed_view(text: str) -> tuple[set[str], dict[tuple[Any, ...], list[str]]]:
    """What parsing every event gives: its keys, and each field's pieces in order."""
    events = parse_events(text)
    assert events is not None
    keys: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            keys.update(value)
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for event in events:
        walk(event.get("data"))
    fields = {path: [c[k] for c, k in group] for path, group in stream_fields(events).items()}
    return keys, fields


def chunk(content: str, **more: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1733000000,
        "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}],
        **more,
    }


def stream(events: list[Any], *, done: bool = True) -> str:
    lines = [f"data: {json.dumps(event)}\n\n" for event in events]
    return "".join(lines) + ("data: [DONE]\n\n" if done else "")


def reply(pieces: list[str]) -> str:
    first = {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"role": "assistant"}}]}
    last = {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return stream([first, *(chunk(piece) for piece in pieces), last])


def test_a_servers_reply_is_read_as_parsing_reads_it() -> None:
    text = reply([f"word{n} " for n in range(2_000)])
    view = uniform_stream(text)
    assert view is not None
    assert (view.keys, view.fields) == parsed_view(text)
    assert view.texts == ["".join(pieces) for pieces in view.fields.values()]
    assert view.block is _event_block_holds(text) is True
    content = view.fields[("choices", 0, "delta", "content")]
    assert content[:2] == ["word0 ", "word1 "]
    assert len(content) == 2_000


# Pieces a model sends, and characters that make a stream another shape or no stream: quotes
# and backslashes (JSON escapes), control characters, CR, newlines.
piece = st.text(alphabet="ab {}[]:,-sk é\x7f", max_size=6)
breaking_piece = st.text(alphabet='"\\\n\r\t\x00', min_size=1, max_size=3)
odd_line = st.sampled_from(
    [
        "data: [DONE]",
        "data: {oops",
        "data: plain text",
        'data: {"id": "x", "id": "y"}',
        'data: {"id": "chatcmpl-1", "usage": {"total_tokens": 3}}',
        'data: {"id": "chatcmpl-1", "token": "t0k3n-value"}',
        "data:",
    ]
)
breaking_line = st.sampled_from(
    ["event: ping", ": comment", "", 'data: {"a": 1}\ndata: {"b": 2}', "data: {\r}"]
)


@settings(max_examples=200, deadline=None)
@given(
    head=st.lists(odd_line, max_size=3),
    pieces=st.lists(piece, min_size=1, max_size=30),
    tail=st.lists(odd_line, max_size=3),
    breaker=st.none()
    | st.tuples(st.integers(0, 29), odd_line | breaking_line | piece | breaking_piece),
)
def test_a_view_is_what_parsing_reads_or_none(
    head: list[str], pieces: list[str], tail: list[str], breaker: tuple[int, str] | None
) -> None:
    lines = [f"data: {json.dumps(chunk(text), ensure_ascii=False)}" for text in pieces]
    if breaker is not None:  # something else in the middle: another line, or raw text
        at, inserted = breaker
        lines.insert(min(at, len(lines)), inserted)
    text = "".join(f"{line}\n\n" for line in [*head, *lines, *tail])
    view = uniform_stream(text)
    if view is None:
        return
    assert (view.keys, view.fields) == parsed_view(text)
    assert view.texts == ["".join(pieces) for pieces in view.fields.values()]


@settings(max_examples=200, deadline=None)
@given(
    pieces=st.lists(piece, min_size=3, max_size=20),
    raw=st.lists(
        st.tuples(st.integers(0, 19), st.text(alphabet='"\\\n\r\t\x00\x1fa{}[],:', max_size=3))
    ),
)
def test_text_written_into_a_line_as_it_is_never_fools_the_view(
    pieces: list[str], raw: list[tuple[int, str]]
) -> None:
    # Characters put into a value unescaped: a quote ends it early, a control character or
    # a newline makes the line no JSON or two lines; parsing reads that, and the view too.
    contents = list(pieces)
    for at, text in raw:
        contents[at % len(contents)] += text
    template = 'data: {{"id": "c", "choices": [{{"delta": {{"content": "{}"}}}}]}}\n\n'
    text = "".join(template.format(content) for content in contents)
    view = uniform_stream(text)
    if view is not None:
        assert parse_events(text) is not None
        assert (view.keys, view.fields) == parsed_view(text)
        assert view.texts == ["".join(pieces) for pieces in view.fields.values()]


def _scored(content: str, number: Any, logprob: Any) -> dict[str, Any]:
    """A chunk with a token's log-probability and a counter: numbers that change."""
    event = chunk(content)
    event["created"] = number
    event["choices"][0]["logprobs"] = {"content": [{"token": content, "logprob": logprob}]}
    return event


_JSON_NUMBER = st.integers(-(10**20), 10**20) | st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(piece, _JSON_NUMBER, _JSON_NUMBER), min_size=1, max_size=30))
def test_numbers_that_change_from_event_to_event_are_read_as_parsing_reads_them(
    events: list[tuple[str, Any, Any]],
) -> None:
    # What a server that sends log-probabilities (or a counter) writes: the view reads the
    # strings around them, whatever the numbers (negative, with a fraction, an exponent).
    text = stream([_scored(*event) for event in events])
    view = uniform_stream(text)
    assert view is not None
    assert (view.keys, view.fields) == parsed_view(text)
    assert view.texts == ["".join(pieces) for pieces in view.fields.values()]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 99), min_size=3, max_size=20),
    st.lists(
        st.tuples(
            st.integers(0, 19),
            st.sampled_from(
                [
                    "01",
                    "1.",
                    "-",
                    "+1",
                    "1e",
                    ".5",
                    "1.5e+3",
                    "-0",
                    "1E5",
                    "0x1",
                    "1_0",
                    "--1",
                    "null",
                    "true",
                    '"7"',
                    "[]",
                    "1 ",
                    "1,",
                ]
            )
            | st.text(alphabet="0123456789.eE+-", min_size=1, max_size=5),
        )
    ),
)
def test_number_text_written_into_a_line_as_it_is_never_fools_the_view(
    numbers: list[int], raw: list[tuple[int, str]]
) -> None:
    # Text in a number's place: what JSON reads as a number, or no JSON (then parsing keeps
    # the event as its text), or another value; the view reads what parsing reads, or
    # declines.
    written = [str(number) for number in numbers]
    for at, text in raw:
        written[at % len(written)] = text
    template = 'data: {{"id": "c", "n": {}, "choices": [{{"delta": {{"content": "w"}}}}]}}\n\n'
    text = "".join(template.format(number) for number in written)
    view = uniform_stream(text)
    if view is not None:
        assert parse_events(text) is not None
        assert (view.keys, view.fields) == parsed_view(text)


def test_a_number_the_same_at_both_ends_and_in_the_middle_that_changes_elsewhere() -> None:
    # The pattern first writes such a number as it is (an index); the matches then do not
    # tile the events, and the view matches it as any number instead.
    count = 41
    numbers = [0 if n in (0, count // 2, count - 1) else n for n in range(count)]
    text = stream([_scored(f"w{n} ", number, -1.5) for n, number in enumerate(numbers)])
    view = uniform_stream(text)
    assert view is not None
    assert (view.keys, view.fields) == parsed_view(text)


def test_a_known_secret_in_a_stream_whose_numbers_change_is_replaced() -> None:
    secret = "correct-horse-battery"
    pieces = [f"w{n} " for n in range(UNIFORM_MIN // 100)]
    pieces[len(pieces) // 2] = f"({secret})"
    text = stream([_scored(p, n, -n / 7) for n, p in enumerate(pieces)])
    assert uniform_stream(text) is not None
    out = scrubbed(text, Secrets([secret]))
    assert secret not in out
    assert PLACEHOLDER in out


@pytest.mark.parametrize(
    "event",
    [
        '{"a": 1, "b": "t", "a": "u"}',  # the first "a" is overwritten, its slot would move
        '{"a": "x", "b": "t", "a": "u"}',
        '{"a": {"p": "s"}, "a": {"p": "u"}}',
    ],
)
def test_an_event_that_repeats_a_key_is_no_shape(event: str) -> None:
    assert uniform_stream("".join(f"data: {event}\n\n" for _ in range(50))) is None


def test_a_stream_with_several_fields_in_pieces_keeps_each_fields_order() -> None:
    events = [
        {"delta": {"reasoning": f"r{n}", "content": f"c{n}"}, "n": [f"x{n}", {"y": f"y{n}"}]}
        for n in range(200)
    ]
    text = stream(events)
    view = uniform_stream(text)
    assert view is not None
    assert (view.keys, view.fields) == parsed_view(text)
    assert view.texts == ["".join(pieces) for pieces in view.fields.values()]
    assert view.fields[("n", 1, "y")][:2] == ["y0", "y1"]


def test_a_tool_calls_arguments_are_escaped_json_read_as_parsing_reads_them() -> None:
    # Arguments in pieces are JSON held in a string: their quotes are escaped.
    parts = ['{"pass', 'word": "', "hunter2", '-and-\\more"}'] * 50
    events = [
        {"choices": [{"delta": {"tool_calls": [{"function": {"arguments": part}}]}}]}
        for part in parts
    ]
    text = stream(events)
    view = uniform_stream(text)
    assert view is not None
    assert (view.keys, view.fields) == parsed_view(text)
    path = ("choices", 0, "delta", "tool_calls", 0, "function", "arguments")
    assert view.fields[path][:4] == parts[:4]


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(
        st.text(alphabet='ab"\\/\n\t\x00\x7fé\u2028\U0001f600', max_size=5), min_size=3
    ),
    ascii_only=st.booleans(),
)
def test_values_with_every_escape_are_decoded_as_parsing_decodes_them(
    values: list[str], ascii_only: bool
) -> None:
    lines = [json.dumps(chunk(value), ensure_ascii=ascii_only) for value in values]
    text = "".join(f"data: {line}\n\n" for line in lines)
    view = uniform_stream(text)
    # An escaped pair of surrogates is no match of a pattern: such an event is parsed.
    if view is not None:
        assert (view.keys, view.fields) == parsed_view(text)
        assert view.texts == ["".join(pieces) for pieces in view.fields.values()]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(reply(["a"] * 50).replace("\n\n", "\r\n\r\n"), id="CRLF"),
        pytest.param(reply(["\ud83d"] * 50), id="a lone surrogate, escaped"),
        pytest.param(reply(["\udc00"] * 50), id="a lone low surrogate, escaped"),
        pytest.param(
            stream([{"\ud800": "x", "content": f"w{n}"} for n in range(50)]),
            id="a lone surrogate in a key",
        ),
        pytest.param(
            "".join(f"event: delta\ndata: {json.dumps(chunk('a'))}\n\n" for _ in range(50)),
            id="framed",
        ),
        pytest.param(stream([chunk("a")] * 50).replace("\n\n", "\n\n\n", 1), id="blank lines"),
        pytest.param("x" + stream([chunk("a")] * 50), id="not a field"),
    ],
)
def test_what_is_not_one_shape_is_declined(text: str) -> None:
    assert uniform_stream(text) is None


@pytest.mark.parametrize(
    "inserted",
    [
        "x" + "data: " + json.dumps(chunk("hidden")),  # an event's text after other text
        "event: delta\ndata: " + json.dumps(chunk("framed")),  # a field line before it
        "data: " + json.dumps(chunk("two")) + "\ndata: " + json.dumps(chunk("lines")),
        ": comment\ndata: " + json.dumps(chunk("commented")),
    ],
    ids=["text before", "framed", "two data lines", "a comment before"],
)
def test_an_event_of_the_shape_inside_another_line_is_not_taken_for_one(inserted: str) -> None:
    # Its text matches the pattern from the middle of its line: what parsing reads there is
    # another event (or another field), and the view must read the same or decline.
    lines = [f"data: {json.dumps(chunk(f'w{n} '))}" for n in range(40)]
    lines.insert(20, inserted)
    text = "".join(f"{line}\n\n" for line in lines)
    view = uniform_stream(text)
    if view is not None:
        assert (view.keys, view.fields) == parsed_view(text)


def _reasoning(text: str) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"reasoning_content": text}}]}


def test_a_reasoning_models_two_phases_are_read_as_parsing_reads_them() -> None:
    # What a reasoning model streams: its reasoning, a role event between, then its reply.
    first = {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"role": "assistant"}}]}
    events = [
        first,
        *(_reasoning(f"r{n} ") for n in range(300)),
        {"other": "shape"},
        *(chunk(f"w{n} ") for n in range(300)),
        {"usage": {"total_tokens": 600}},
    ]
    text = stream(events)
    view = uniform_stream(text)
    assert view is not None
    assert (view.keys, view.fields) == parsed_view(text)
    assert view.texts == ["".join(pieces) for pieces in view.fields.values()]
    reasoning = view.fields[("choices", 0, "delta", "reasoning_content")]
    assert reasoning[:2] == ["r0 ", "r1 "]


@pytest.mark.parametrize(
    ("runs", "odd"),
    [(8, 0), (9, 0), (1, 16), (1, 17)],
)
def test_at_most_eight_runs_and_sixteen_other_events(runs: int, odd: int) -> None:
    events: list[Any] = []
    for number in range(runs):  # runs of two shapes in turn
        make = chunk if number % 2 else _reasoning
        events += [make(f"{number}-{n}") for n in range(5)]
    events += [{f"odd{n}": "x"} for n in range(odd)]
    text = stream(events, done=False)
    view = uniform_stream(text)
    if runs <= 8 and odd <= 16:
        assert view is not None
        assert (view.keys, view.fields) == parsed_view(text)
    else:
        assert view is None


shaped = st.sampled_from(["chunk", "reasoning", "odd"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(shaped, st.lists(piece, min_size=1, max_size=6)), max_size=8))
def test_runs_of_shapes_are_what_parsing_reads_or_none(
    segments: list[tuple[str, list[str]]],
) -> None:
    events: list[Any] = []
    for kind, pieces in segments:
        if kind == "chunk":
            events += [chunk(text) for text in pieces]
        elif kind == "reasoning":
            events += [_reasoning(text) for text in pieces]
        else:
            events += [{"odd": text, "n": len(text)} for text in pieces[:2]]
    text = stream(events)
    view = uniform_stream(text)
    if view is not None:
        assert (view.keys, view.fields) == parsed_view(text)
        assert view.texts == ["".join(pieces) for pieces in view.fields.values()]


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda text: text.replace("w7 ", "w7\x7f"), id="DEL"),
        pytest.param(lambda text: text.replace("w7 ", "wé"), id="non-ASCII"),
        pytest.param(lambda text: text.replace("data: [DONE]", "data: [DONE] "), id="end space"),
    ],
)
def test_the_block_answer_is_the_writers(change: Any) -> None:
    text = change(stream([chunk(f"w{n} ") for n in range(STREAM_BLOCK_EVENTS + 5)]))
    view = uniform_stream(text)
    assert view is not None
    assert view.block is False
    assert _event_block_holds(text) is ("é" in text)  # the writer still decides on its own
    short = uniform_stream(stream([chunk(f"w{n} ") for n in range(STREAM_BLOCK_EVENTS - 5)]))
    assert short is not None
    assert short.block is False


# --- the scrubber on long streams: the slow way's findings, found -----------------------------


def long_reply(pieces: list[str]) -> str:
    filler = [f"w{n} " for n in range(UNIFORM_MIN // 100)]
    return reply(filler + pieces + filler)


def scrubbed(text: str, secrets: Secrets | None = None) -> str:
    request = {"method": "POST", "uri": "http://127.0.0.1/v1", "headers": {}, "body": "{}"}
    response = {
        "status": {"code": 200, "message": "OK"},
        "headers": {"content-type": ["text/event-stream"]},
        "body": {"string": text},
    }
    Scrubber(secrets=secrets or Secrets()).interactions([(request, response)])
    out = response["body"]["string"]
    return out if isinstance(out, str) else out.decode()


def test_a_key_sent_in_pieces_across_a_long_stream_is_replaced() -> None:
    text = long_reply(["Use ", KEY[:5], KEY[5:12], KEY[12:], " now"])
    assert len(text) >= UNIFORM_MIN
    assert uniform_stream(text) is not None
    out = scrubbed(text)
    assert KEY[12:] not in out
    assert PLACEHOLDER in out


def test_a_key_in_one_piece_is_replaced_where_the_pieces_together_hide_it() -> None:
    # "x" then the key: together "xsk-..." is no key-like word (no boundary before "sk-"),
    # the piece alone is, and the pass over each event replaces it.
    out = scrubbed(long_reply(["x", KEY]))
    assert KEY not in out
    assert PLACEHOLDER in out


def test_a_key_written_as_a_field_name_in_a_long_stream_is_replaced() -> None:
    events = [{KEY: 1, "content": f"w{n} "} for n in range(UNIFORM_MIN // 50)]
    text = stream(events)
    assert uniform_stream(text) is not None
    out = scrubbed(text)
    assert KEY not in out
    assert PLACEHOLDER in out


def test_a_secret_field_in_arguments_sent_whole_in_a_long_stream_is_replaced() -> None:
    # The pieces together start with "x": no JSON there; each later piece is JSON alone.
    whole = json.dumps({"user": "ann", "api_key": "live-key-0123456789"})
    events = [
        {"choices": [{"delta": {"tool_calls": [{"function": {"arguments": arguments}}]}}]}
        for arguments in ["x", *[whole] * (UNIFORM_MIN // 80)]
    ]
    text = stream(events)
    assert uniform_stream(text) is not None
    out = scrubbed(text)
    assert "live-key-0123456789" not in out
    assert "ann" in out


def _tool_call_line(arguments_as_written: str) -> str:
    """One event of a streamed tool call, its arguments' string as written in the line."""
    return (
        'data: {"choices": [{"delta": {"tool_calls": [{"function": {"arguments": "'
        + arguments_as_written
        + '"}}]}}]}\n\n'
    )


@pytest.mark.parametrize("where", [0, 1, 250, -2, -1])
@pytest.mark.parametrize(
    "closing",
    ["}", "\\u007d", "\\u007D"],
    ids=["bracket", "escaped bracket", "escaped bracket, upper case"],
)
def test_one_piece_of_whole_json_among_pieces_without_a_bracket_is_read(
    where: int, closing: str
) -> None:
    # What a model streams: pieces that open an object and never close one in the same
    # piece (read by no one, each being no JSON), and one piece that is a whole object with a
    # secret field; next to it a piece with a bracket that is no JSON.
    pieces = [f'{{\\"k{n}\\": \\"v\\"' for n in range(UNIFORM_MIN // 60)]
    pieces[where] = '{\\"user\\": \\"ann\\", \\"api_key\\": \\"live-key-0123456789\\"' + closing
    pieces[where - 1] = "] not json"
    text = "".join(_tool_call_line(piece) for piece in pieces) + "data: [DONE]\n\n"
    view = uniform_stream(text)
    assert view is not None
    assert (view.keys, view.fields) == parsed_view(text)
    out = scrubbed(text)
    assert "live-key-0123456789" not in out
    assert "ann" in out


def test_a_known_secret_in_one_piece_of_a_long_stream_is_replaced() -> None:
    secret = "correct-horse-battery"
    out = scrubbed(long_reply([f"({secret})"]), Secrets([secret]))
    assert secret not in out
    assert PLACEHOLDER in out


def test_a_secret_named_field_in_a_long_streams_events_is_replaced() -> None:
    events = [chunk(f"w{n} ", api_key="live-key-0123456789") for n in range(UNIFORM_MIN // 100)]
    out = scrubbed(stream(events))
    assert "live-key-0123456789" not in out


def test_a_password_in_tool_call_arguments_streamed_in_pieces_is_replaced() -> None:
    parts = ['{"user": "ann", "pass', 'word": "hunter2', '-and-more"}']
    events = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"function": {"arguments": p}}]}}]}
        for p in parts
    ]
    filler = [chunk(f"w{n} ") for n in range(UNIFORM_MIN // 100)]
    out = scrubbed(stream(filler + events + filler))
    assert "hunter2" not in out


def test_a_long_stream_is_written_as_a_block_and_replayed_as_sent(tmp_path: Path) -> None:
    text = reply([f"w{n} " for n in range(STREAM_BLOCK_EVENTS + 10)])
    request = {"method": "GET", "uri": "http://127.0.0.1/v1", "headers": {}, "body": None}
    response = {
        "status": {"code": 200, "message": "OK"},
        "headers": {"content-type": ["text/event-stream"]},
        "body": {"string": text.encode()},
    }
    path = tmp_path / "stream.yaml"
    write_cassette(path, [(request, response)], scrubber=Scrubber(secrets=Secrets()))
    assert "event_stream: |" in path.read_text()
    (replayed,) = read_interactions(path)
    assert replayed.content == text.encode()


def _written_fast_and_slow(tmp_path: Path, text: str) -> tuple[Path, Path]:
    """The cassettes of one response streaming ``text``: written as recording writes it, and
    with the view turned off (every stream the slow way)."""
    request = {"method": "GET", "uri": "http://127.0.0.1/v1", "headers": {}, "body": None}
    response = {
        "status": {"code": 200, "message": "OK"},
        "headers": {"content-type": ["text/event-stream"]},
        "body": {"string": text},
    }
    fast, slow = tmp_path / "fast.yaml", tmp_path / "slow.yaml"
    write_cassette(fast, [(request, response)], scrubber=Scrubber(secrets=Secrets()))
    with mock.patch.object(_scrub, "uniform_stream", return_value=None):
        write_cassette(slow, [(request, response)], scrubber=Scrubber(secrets=Secrets()))
    return fast, slow


def test_a_stream_the_view_reads_is_written_as_the_slow_way_writes_it(tmp_path: Path) -> None:
    # A long stream with its key sent in pieces: the view declines to leave it as it came,
    # and the text written is the slow way's.
    text = long_reply(["Use ", KEY[:5], KEY[5:], " now"])
    fast, slow = _written_fast_and_slow(tmp_path, text)
    assert fast.read_text() == slow.read_text()
    assert KEY[5:] not in fast.read_text()


@pytest.mark.parametrize("outside", [False, True], ids=["under logprobs", "at the top"])
def test_a_token_field_is_text_under_logprobs_and_a_secret_elsewhere(
    tmp_path: Path, outside: bool
) -> None:
    # Under "logprobs", "token" is a token of text (kept, and the view reads the stream);
    # an event's own "token" field is a credential (the view declines, the slow way
    # replaces it). Either way the file is the slow way's.
    events = [_scored(f"w{n} ", n, -n / 7) for n in range(UNIFORM_MIN // 150)]
    if outside:
        events[0]["token"] = "live-token-0123456789"  # the first event: an odd one
    text = stream(events)
    view = uniform_stream(text)
    assert view is not None
    assert ("token", True) in view.named
    assert (("token", False) in view.named) is outside
    fast, slow = _written_fast_and_slow(tmp_path, text)
    assert fast.read_text() == slow.read_text()
    assert "live-token-0123456789" not in fast.read_text()
    (replayed,) = read_interactions(fast)
    assert b'"token": "w7 "' in replayed.content  # a token of text, kept
