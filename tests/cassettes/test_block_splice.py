"""Long streams' lines put in the file by us, where libyaml wrote a token (issue 22).

libyaml spends most of a long stream's writing on the block's lines, character by character;
:meth:`ReadableYaml.written_owned` has it write a token instead and puts the lines in its
place. The file must be the very text libyaml writes: every test here compares it with the
text written with the splice turned off, and a wrong indent, a blank line indented, a wrong
block header, a stream left as its token or swapped with another would fail them.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_opdecide._cassettes import _yaml_format
from pytest_opdecide._cassettes._file import read_interactions, write_cassette
from pytest_opdecide._cassettes._scrub import Scrubber
from pytest_opdecide._cassettes._yaml_format import (
    STREAM_BLOCK_EVENTS,
    ReadableYaml,
    load_yaml,
)
from pytest_opdecide._http._secrets import Secrets


def _interaction(response: str, request: str | None = None) -> dict[str, Any]:
    stream = ["text/event-stream"]
    return {
        "request": {
            "method": "POST",
            "uri": "http://127.0.0.1:1/v1/chat/completions",
            "body": request if request is not None else '{"stream": true}',
            "headers": {"content-type": stream if request is not None else ["application/json"]},
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": stream},
            "body": {"string": response},
        },
    }


def _both(
    interactions: list[dict[str, Any]], *, splices: bool = True
) -> tuple[str, str, dict[str, Any]]:
    """The text written with the splice and without it, and the data it was written from
    (as the writer left it). ``splices``: whether the lines must have been put in by us
    (else libyaml must have written them)."""
    data = {"interactions": copy.deepcopy(interactions), "version": 1}
    made: list[str | None] = []
    splice = _yaml_format._spliced

    def spy(text: str, blocks: list[tuple[str, str, int]]) -> str | None:
        made.append(splice(text, blocks))
        return made[-1]

    with mock.patch.object(_yaml_format, "_spliced", side_effect=spy):
        spliced, _ = ReadableYaml.written_owned(data)
    assert bool(made)
    assert all(m is not None for m in made) is splices
    plain_data = {"interactions": copy.deepcopy(interactions), "version": 1}
    with mock.patch.object(_yaml_format, "_swapped_blocks", return_value=[]):
        plain, _ = ReadableYaml.written_owned(plain_data)
    return spliced, plain, data


def _events(lines: list[str], count: int = STREAM_BLOCK_EVENTS + 3) -> str:
    return "".join(f"{lines[n % len(lines)]}{n}\n\n" for n in range(count))


def test_a_long_stream_is_written_as_libyaml_writes_it() -> None:
    text = _events(['data: {"choices": [{"delta": {"content": "w'])
    spliced, plain, data = _both([_interaction(text)])
    assert spliced == plain
    assert "event_stream: |+\n" in spliced
    assert "opdecide-held-stream" not in spliced
    # The writer's data holds the stream again (check_own reads it), not the token.
    assert data["interactions"][0]["response"]["body"]["string"] == {"event_stream": text}
    assert load_yaml(spliced)["interactions"][0]["response"]["body"]["string"] == {
        "event_stream": text
    }


@pytest.mark.parametrize(
    "text",
    [
        # Events of several lines: the lines that no blank line follows are indented too.
        _events(["event: delta\ndata: x", "id: 7\nevent: delta\ndata: y"]),
        # The last event without its blank line: a block of one line break at its end (|).
        _events(["data: x"]).removesuffix("\n"),
        # Text that is not ASCII, and long lines (a literal block never folds them).
        _events(["data: é日本語 " + "z" * 300]),
    ],
    ids=["several lines", "one line break at the end", "unicode and long lines"],
)
def test_streams_of_other_shapes_are_written_as_libyaml_writes_them(text: str) -> None:
    spliced, plain, _ = _both([_interaction(text)])
    assert spliced == plain
    assert "opdecide-held-stream" not in spliced


def test_several_streams_each_in_its_place() -> None:
    first = _events(["data: first "])
    second = _events(["data: second "])
    third = _events(["data: third "])
    interactions = [_interaction(first, request=second), _interaction(third)]
    spliced, plain, _ = _both(interactions)
    assert spliced == plain
    stored = load_yaml(spliced)["interactions"]
    assert stored[0]["request"]["body"] == {"event_stream": second}
    assert stored[0]["response"]["body"]["string"] == {"event_stream": first}
    assert stored[1]["response"]["body"]["string"] == {"event_stream": third}


def test_a_token_written_elsewhere_in_the_file_leaves_the_writing_to_libyaml() -> None:
    # A prompt that reads as the token's block, before the stream: which one is the block's
    # cannot be told, so libyaml writes everything (the same text).
    text = _events(["data: x "])
    interaction = _interaction(text)
    interaction["request"]["headers"] = {"content-type": ["text/plain"]}
    interaction["request"]["body"] = "opdecide-held-stream-0\n\n"
    spliced, plain, _ = _both([interaction], splices=False)
    assert spliced == plain
    stored = load_yaml(spliced)["interactions"][0]
    assert stored["request"]["body"] == "opdecide-held-stream-0\n\n"
    assert stored["response"]["body"]["string"] == {"event_stream": text}


def test_a_block_held_twice_is_swapped_once_and_swapped_back() -> None:
    text = _events(["data: shared "])
    held = {"event_stream": text}  # one body object in two interactions
    interactions = [_interaction(""), _interaction("")]
    for interaction in interactions:
        interaction["response"]["body"]["string"] = held
    blocks = _yaml_format._swapped_blocks(interactions)
    assert [(token, stream) for _, token, stream, _ in blocks] == [("opdecide-held-stream-0", text)]
    assert held == {"event_stream": "opdecide-held-stream-0\n\n"}


@pytest.mark.parametrize(
    "tail",
    [
        "\n\n\n",  # two blank lines at the end: kept by libyaml
        "",  # no line break at the end
    ],
)
def test_streams_the_splice_does_not_take_are_written_by_libyaml(tail: str) -> None:
    text = _events(["data: x"]).removesuffix("\n\n") + tail
    stored = {"event_stream": text}
    data: dict[str, Any] = {"interactions": [_interaction("")], "version": 1}
    assert _yaml_format._block_tail(text) is None
    with mock.patch.object(_yaml_format, "readable_body", side_effect=lambda *a, **k: stored):
        spliced, _ = ReadableYaml.written_owned(data)
    assert "opdecide-held-stream" not in spliced
    assert load_yaml(spliced)["interactions"][0]["response"]["body"]["string"] == stored


def test_a_token_not_where_a_block_writes_it_is_not_spliced() -> None:
    text = "\n".join(["key: |+", "  opdecide-held-stream-0", "", "other: 1", ""])
    assert _yaml_format._spliced(text, [("opdecide-held-stream-0", "a\n\n", 2)]) is not None
    # Not the only line of a block: a plain scalar, a flow context, a different ending.
    for wrong in (
        "key: opdecide-held-stream-0\n",
        "key: |+\n  x opdecide-held-stream-0\n\n",
        "key: |\n  opdecide-held-stream-0\n",  # one line break, where the stream ends in two
        "key: |+\n  opdecide-held-stream-0\n\n\n",
    ):
        assert _yaml_format._spliced(wrong, [("opdecide-held-stream-0", "a\n\n", 2)]) is None


_LINE_TEXT = st.text(  # what a literal block holds as it is (no control, no line separator)
    alphabet=st.one_of(
        st.characters(min_codepoint=0x20, max_codepoint=0x7E),
        st.characters(min_codepoint=0xA0, max_codepoint=0x2027),
    ),
    min_size=1,
    max_size=40,
).map(lambda text: text.rstrip(" ") or "x")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(st.sampled_from(["data", "event", "id"]), _LINE_TEXT), min_size=1, max_size=3
        ),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from(["\n\n", "\n"]),
)
def test_generated_streams_are_written_as_libyaml_writes_them(
    events: list[list[tuple[str, str]]], end: str
) -> None:
    shapes = ["\n".join(f"{field}: {value}" for field, value in event) for event in events]
    text = _events(shapes)
    text = text.removesuffix("\n\n") + end
    spliced, plain, _ = _both([_interaction(text), _interaction(_events(["data: x"]))])
    assert spliced == plain


def test_a_recorded_stream_replays_byte_for_byte(tmp_path: Path) -> None:
    pieces = [json.dumps({"arguments": f'{{"k{n}": "v"'}) for n in range(STREAM_BLOCK_EVENTS + 9)]
    text = "".join(f"data: {piece}\n\n" for piece in pieces) + "data: [DONE]\n\n"
    interaction = _interaction(text)
    request, response = interaction["request"], interaction["response"]
    request["body"] = request["body"].encode()
    response["body"]["string"] = text.encode()
    path = tmp_path / "c.yaml"
    write_cassette(path, [(request, response)], scrubber=Scrubber(secrets=Secrets()))
    written = path.read_text(encoding="utf-8")
    assert "event_stream: |+\n" in written
    assert "opdecide-held-stream" not in written
    (replayed,) = read_interactions(path)
    assert replayed.content == text.encode()
