"""Long texts' lines put in the file by us, where libyaml wrote a token (issue 22).

libyaml spends most of the writing of a long stream or prompt on the block's lines, character
by character; :meth:`ReadableYaml.written_owned` has it write a token instead and puts the
lines in its place. The file must be the very text libyaml writes: every test here compares it
with the text written with the splice turned off, and a wrong indent, a blank line indented, a
wrong block header, a text left as its token or swapped with another, or a text spliced that
libyaml would have quoted would fail them.
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
    interactions: list[dict[str, Any]], *, splices: bool | None = True
) -> tuple[str, str, dict[str, Any]]:
    """The text written with the splice and without it, and the data it was written from
    (as the writer left it). ``splices``: whether the lines must have been put in by us
    (else libyaml must have written them; ``None``: either)."""
    data = {"interactions": copy.deepcopy(interactions), "version": 1}
    made: list[str | None] = []
    splice = _yaml_format._spliced

    def spy(text: str, blocks: list[tuple[str, int]]) -> str | None:
        made.append(splice(text, blocks))
        return made[-1]

    with mock.patch.object(_yaml_format, "_spliced", side_effect=spy):
        spliced, _ = ReadableYaml.written_owned(data)
    if splices is not None:
        assert all(m is not None for m in made) is splices
    if splices:
        assert made
    plain_data = {"interactions": copy.deepcopy(interactions), "version": 1}
    with mock.patch.object(_yaml_format, "_SPLICED_MIN", 10**12):
        plain, _ = ReadableYaml.written_owned(plain_data)
    return spliced, plain, data


def _events(lines: list[str], count: int = STREAM_BLOCK_EVENTS + 3) -> str:
    return "".join(f"{lines[n % len(lines)]}{n}\n\n" for n in range(count))


def test_a_long_stream_is_written_as_libyaml_writes_it() -> None:
    text = _events(['data: {"choices": [{"delta": {"content": "w'])
    spliced, plain, data = _both([_interaction(text)])
    assert spliced == plain
    assert "event_stream: |+\n" in spliced
    assert "opdecide-block" not in spliced
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
    assert "opdecide-block" not in spliced


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
    interaction["request"]["body"] = "opdecide-block-0\n\n"
    spliced, plain, _ = _both([interaction], splices=False)
    assert spliced == plain
    stored = load_yaml(spliced)["interactions"][0]
    assert stored["request"]["body"] == "opdecide-block-0\n\n"
    assert stored["response"]["body"]["string"] == {"event_stream": text}


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
    assert "opdecide-block" not in written
    (replayed,) = read_interactions(path)
    assert replayed.content == text.encode()


def _prompted(*prompts: str) -> list[dict[str, Any]]:
    """Interactions whose requests are JSON with ``prompts`` as their messages."""
    interactions = []
    for prompt in prompts:
        interaction = _interaction('{"choices": []}')
        interaction["request"]["body"] = json.dumps(
            {"messages": [{"role": "user", "content": prompt}]}
        )
        interaction["response"]["headers"] = {"content-type": ["application/json"]}
        interactions.append(interaction)
    return interactions


_PARAGRAPH = " ".join(["The customer writes that order A1 arrived damaged."] * 3) + "\n"


@pytest.mark.parametrize(
    "prompt",
    [
        _PARAGRAPH * 100,
        (_PARAGRAPH + "\n") * 100,  # a blank line after each
        (_PARAGRAPH + "\n\n\n") * 100 + "\n\n",  # blank lines in a row, and at the end
        "# Title\n\n  indented line\n" + _PARAGRAPH * 100,  # indented lines within
        "Ünïcødé, 日本語, and ✓ marks\n" * 200,
        _PARAGRAPH * 100 + "no line break at the end",
        _PARAGRAPH * 100 + "\n\nno line break at the end, after blank lines",
    ],
    ids=[
        "lines",
        "blank lines",
        "blank lines in a row",
        "indented lines",
        "unicode",
        "no line break at the end",
        "blank lines, then none at the end",
    ],
)
def test_a_long_prompt_is_written_as_libyaml_writes_it(prompt: str) -> None:
    spliced, plain, _ = _both(_prompted(prompt))
    assert spliced == plain
    assert (
        load_yaml(spliced)["interactions"][0]["request"]["body"]["json"]["messages"][0]["content"]
        == prompt
    )


@pytest.mark.parametrize(
    "prompt",
    [
        " " + _PARAGRAPH * 100,  # a first line starting with a space
        "\n" + _PARAGRAPH * 100,
        _PARAGRAPH * 100 + "a space ends this line \n",
        _PARAGRAPH * 100 + "a space ends the text ",
        _PARAGRAPH * 100 + "a tab\there\n",
        _PARAGRAPH * 100 + "a line separator\u2028here\n",
    ],
    ids=["space first", "line break first", "space ends a line", "space ends", "tab", "u2028"],
)
def test_a_prompt_a_block_does_not_hold_as_it_is_is_written_by_libyaml(prompt: str) -> None:
    assert _yaml_format._splices(prompt) is None
    spliced, plain, _ = _both(_prompted(prompt), splices=None)
    assert spliced == plain


def test_a_prompt_repeated_in_requests_is_written_once_and_spliced_once() -> None:
    prompt = _PARAGRAPH * 100
    spliced, plain, _ = _both(_prompted(prompt, prompt))
    assert spliced == plain
    assert spliced.count(_PARAGRAPH.strip()) == 100  # under an anchor, then an alias
    assert "*id001" in spliced


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.text(st.characters(blacklist_categories=["Cs"]), max_size=60), min_size=1, max_size=8
    ),
    st.integers(min_value=0, max_value=3),
)
def test_generated_prompts_are_written_as_libyaml_writes_them(
    lines: list[str], breaks: int
) -> None:
    # Any character (controls, tabs, CR, line separators, spaces that end lines), blank
    # lines anywhere: spliced or not, the file is libyaml's.
    prompt = "\n".join(lines * (_yaml_format._SPLICED_MIN // (len("".join(lines)) + 8) + 1))
    prompt += "\n" * breaks
    spliced, plain, _ = _both(_prompted(prompt), splices=None)
    assert spliced == plain


@settings(max_examples=150, deadline=None)
@given(
    _LINE_TEXT,
    st.lists(st.one_of(_LINE_TEXT, st.just(""), _LINE_TEXT.map("  ".__add__)), max_size=8),
    st.integers(min_value=0, max_value=3),
)
def test_generated_prompts_a_block_holds_are_spliced_as_libyaml_writes_them(
    first: str, lines: list[str], breaks: int
) -> None:
    # Blank lines anywhere and in runs, indented lines, text that is not ASCII: spliced, and
    # the file is libyaml's.
    body = "\n".join([first.lstrip(" ") or "x", *lines])
    prompt = (body + "\n") * (_yaml_format._SPLICED_MIN // (len(body) + 1) + 1)
    prompt = prompt.removesuffix("\n") + "\n" * breaks
    spliced, plain, _ = _both(_prompted(prompt), splices=True)
    assert spliced == plain


@pytest.mark.parametrize(
    ("text", "tail"),
    [
        ("a\nb\n", 1),
        ("a\nb\n\n", 2),
        ("a\n\n\n\n", 4),
        ("a\nb", 0),
        (" a\n", None),
        ("\na\n", None),
        ("\ta\n", None),
        ("a\nb ", None),
        ("a \nb\n", None),
    ],
)
def test_how_many_line_breaks_end_a_text_the_splice_takes(text: str, tail: int | None) -> None:
    assert _yaml_format._splices(text) == tail


def test_a_token_not_where_a_block_writes_it_is_not_spliced() -> None:
    blocks = [("a\n\n", 2)]
    right = "key: |+\n  opdecide-block-0\n\nother: 1\n"
    assert _yaml_format._spliced(right, blocks) == "key: |+\n  a\n\nother: 1\n"
    for wrong in (
        "key: opdecide-block-0\nother: 1\n",  # no block
        "key: |+\n  x opdecide-block-0\n\n",  # not the block's only line
        "key: |\n  opdecide-block-0\n",  # one line break, where the text ends in two
        "key: |+\n  opdecide-block-0\n\n\n",  # three
        "key: |+\n  opdecide-block-0\n\n  opdecide-block-0\n\n",  # twice
        "key: |+\n  opdecide-block-1\n\n",  # another number
        "key: |+\nopdecide-block-0\n\n",  # no indent
    ):
        assert _yaml_format._spliced(wrong, blocks) is None, wrong


def test_a_token_of_a_text_without_a_line_break_at_its_end_is_spliced_with_its_second_line() -> (
    None
):
    blocks = [("a\n\nb", 0)]
    right = "key: |-\n  opdecide-block-0\n  -\nother: 1\n"
    assert _yaml_format._spliced(right, blocks) == "key: |-\n  a\n\n  b\nother: 1\n"
    for wrong in (
        "key: |\n  opdecide-block-0\n  -\nother: 1\n",  # the header of another ending
        "key: |-\n  opdecide-block-0\n  x\nother: 1\n",  # not its second line
        "key: |-\n  opdecide-block-0\n   -\nother: 1\n",  # another indent
        "key: |-\n  opdecide-block-0\n  -x\nother: 1\n",
    ):
        assert _yaml_format._spliced(wrong, blocks) is None, wrong
