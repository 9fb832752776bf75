"""The recording writer's shortcuts skip only work that could change nothing (issue 22).

Each shortcut proves on the raw text that a pass over the parsed body would replace nothing;
these tests check the proofs against the slow path on generated texts: a shortcut that let a
secret or a machine path through would fail them.
"""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_opdecide._cassettes import _scrub
from pytest_opdecide._cassettes._machine_paths import MachinePaths
from pytest_opdecide._cassettes._scrub import (
    PLACEHOLDER,
    Scrubber,
    _body_by_value,
    _body_paths,
    _by_value,
    _stream_by_value,
)
from pytest_opdecide._http._secrets import Secrets, holds_any, json_strings_lack

# A small alphabet, so that generated needles are often in generated texts: the letters of the
# key-like marks and of paths, and every character a JSON escape writes.
ALPHABET = 'skBAIxo-_/\\"%2Fe\n\t\b\f\r\x00ab é'
texts = st.text(alphabet=ALPHABET, max_size=40)
needles = st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=4), max_size=6).map(tuple)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)


def strings_of(value: Any) -> list[str]:
    """Every string of a JSON value, keys too."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in [key, *strings_of(item)]]
    if isinstance(value, list):
        return [text for item in value for text in strings_of(item)]
    return []


@settings(max_examples=100, deadline=None)
@given(text=texts, repeat=st.integers(1, 40), found=needles)
def test_holds_any_answers_as_a_plain_search(
    text: str, repeat: int, found: tuple[str, ...]
) -> None:
    long = text * repeat  # past the length where characters are looked for first
    for candidate in (text, long):
        assert holds_any(candidate, found) == any(needle in candidate for needle in found)


@settings(max_examples=150, deadline=None)
@given(value=json_values, ascii_only=st.booleans(), slashes=st.booleans(), found=needles)
def test_a_json_text_said_to_lack_the_needles_holds_none_in_any_string(
    value: Any, ascii_only: bool, slashes: bool, found: tuple[str, ...]
) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only)
    if slashes:  # some encoders escape every slash
        raw = raw.replace("/", "\\/")
    if json_strings_lack(raw, found):
        assert not any(needle in text for text in strings_of(value) for needle in found)
        assert not any(needle in raw for needle in found)


def test_an_escaped_character_is_never_proven_absent() -> None:
    # "s\u006b-" is "sk-" in the string: no proof without parsing.
    assert not json_strings_lack('{"a": "s\\u006b-proj"}', ("sk-",))
    # A needle with a character an escape writes (a quote, a slash) is never proven absent
    # when the text has that character somewhere.
    assert not json_strings_lack('{"a": "x\\/home"}', ("/home",))
    assert json_strings_lack('{"a": "plain text"}', ("sk-", "/ho"))


HIDDEN_KEY = "sk-proj-abcdefghijklmnop1234"


@settings(max_examples=60, deadline=None)
@given(value=json_values, ascii_only=st.booleans(), hide=st.booleans())
def test_the_passes_over_a_json_body_agree_with_the_slow_path(
    value: Any, ascii_only: bool, hide: bool
) -> None:
    holder = {"k": value, "l": [HIDDEN_KEY if hide else "x", {"m": "/home/ada/x"}]}
    raw = json.dumps(holder, ensure_ascii=ascii_only)
    headers = {"content-type": ["application/json"]}
    secrets = Secrets(["correct-horse-battery"])
    slow = _by_value(json.loads(raw), secrets)  # every string parsed and searched
    assert json.loads(_body_by_value(raw, secrets, headers)) == slow
    paths = MachinePaths([("<HOME>", "/home/ada")], generic=True)
    assert json.loads(_body_paths(raw, paths, headers)) == paths.value(json.loads(raw))


def test_a_long_prompt_with_an_escaped_key_is_still_scrubbed() -> None:
    prompt = "Ticket 1: the order arrived damaged.\n" * 20_000
    hidden = HIDDEN_KEY.replace("k", "\\u006b", 1)  # only the parsed string holds the key
    raw = '{"messages": [{"content": "' + prompt.replace("\n", "\\n") + hidden + '"}]}'
    request = {"method": "POST", "uri": "http://x/v1", "headers": {}, "body": raw.encode()}
    response = {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": b""}}
    Scrubber(secrets=Secrets(), paths=MachinePaths(generic=False)).interactions(
        [(request, response)]
    )
    assert HIDDEN_KEY not in json.loads(request["body"])["messages"][0]["content"]
    assert PLACEHOLDER in json.loads(request["body"])["messages"][0]["content"]


piece = st.sampled_from(["sk-", "proj-", "abcdefgh", "ijklmnop", "\\u0073k-", "w0 ", "Be", "arer "])


@settings(max_examples=60, deadline=None)
@given(pieces=st.lists(st.lists(piece, min_size=1, max_size=3).map("".join), max_size=8))
def test_a_stream_is_scrubbed_as_the_slow_path_scrubs_it(pieces: list[str]) -> None:
    # The key-like text in an event's own strings (a value, a key), or in pieces across them.
    events = [
        '{"choices": [{"delta": {"content": "' + text + '"}}], "' + text + '": 1}'
        for text in pieces
    ]
    stream = "".join(f"data: {event}\n\n" for event in events) + "data: [DONE]\n\n"
    secrets = Secrets(["ijklmnopqrst"])
    fast = _stream_by_value(stream, secrets)
    with mock.patch.object(_scrub, "json_strings_lack", return_value=False):
        slow = _stream_by_value(stream, secrets)
    assert fast == slow
