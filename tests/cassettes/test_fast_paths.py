"""The recording writer's shortcuts skip only work that could change nothing (issue 22).

Each shortcut proves on the raw text that a pass over the parsed body would replace nothing;
these tests check the proofs against the slow path on generated texts: a shortcut that let a
secret or a machine path through would fail them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_opdecide._cassettes import _scrub, _scrub_json
from pytest_opdecide._cassettes._file import write_cassette
from pytest_opdecide._cassettes._machine_paths import MachinePaths
from pytest_opdecide._cassettes._scrub import (
    PLACEHOLDER,
    Scrubber,
    _body_by_value,
    _body_paths,
)
from pytest_opdecide._cassettes._scrub_json import by_value, stream_by_value
from pytest_opdecide._cassettes._shape import Refused, _Checker, _json_fits
from pytest_opdecide._cassettes._yaml_format import STREAM_BLOCK_EVENTS, ReadableYaml
from pytest_opdecide._cassettes._yaml_loader import MAX_DEPTH, load_yaml
from pytest_opdecide._http._secrets import (
    _KEYLIKE_MARKS,
    Secrets,
    contains,
    holds_any,
    holds_mark,
    json_strings_lack,
)

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
@given(
    text=st.text(alphabet="ab.*+?()[]{}|^$\\\n-sk", max_size=40),
    repeat=st.integers(1, 80),
    needle=st.text(alphabet="ab.*+?()[]{}|^$\\\n-sk", min_size=1, max_size=4),
)
def test_contains_answers_as_in_at_every_length(text: str, repeat: int, needle: str) -> None:
    # Past a kilobyte, a compiled pattern looks: its special characters must be literal.
    for candidate in (text, text * repeat, "x" * 2_000 + text):
        assert contains(candidate, needle) == (needle in candidate)


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


mark_texts = st.text(alphabet="ghpousr_-kxBA ", max_size=30)


@settings(max_examples=150, deadline=None)
@given(text=mark_texts, repeat=st.integers(1, 40), as_json=st.booleans())
def test_the_github_marks_looked_for_at_once_are_each_found(
    text: str, repeat: int, as_json: bool
) -> None:
    # One pattern stands for the five marks ghp_, gho_, ghu_, ghs_, ghr_.
    for candidate in (text, text * repeat):
        assert holds_mark(candidate) == holds_any(candidate, _KEYLIKE_MARKS)
        raw = json.dumps({"a": candidate}) if as_json else candidate
        if json_strings_lack(raw, _KEYLIKE_MARKS):
            assert not any(mark in candidate for mark in _KEYLIKE_MARKS)


@pytest.mark.parametrize("mark", _KEYLIKE_MARKS)
def test_each_mark_is_found_in_a_short_and_a_long_text(mark: str) -> None:
    for text in (f"a {mark} b", "long prompt text " * 100 + mark):
        assert holds_mark(text)
        assert not json_strings_lack(json.dumps({"a": text}), _KEYLIKE_MARKS)


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
    slow = by_value(json.loads(raw), secrets)  # every string parsed and searched
    assert json.loads(_body_by_value(raw, secrets, headers)) == slow
    paths = MachinePaths([("<HOME>", "/home/ada")], generic=True)
    assert json.loads(_body_paths(raw, paths, headers)) == paths.value(json.loads(raw))


@settings(max_examples=80, deadline=None)
@given(values=st.lists(json_values, min_size=1, max_size=5), slashes=st.booleans())
def test_a_stream_with_escapes_loses_its_paths_as_the_slow_way_finds_them(
    values: list[Any], slashes: bool
) -> None:
    # Events whose JSON escapes characters (a tool call's arguments), some holding a path
    # (escaped slashes, a \u escape): proven free of paths only when no string holds one.
    events = [
        {"v": value, "p": ["/home/ada/x" if n % 2 else "plain"]} for n, value in enumerate(values)
    ]
    lines = [json.dumps(event) for event in events]
    if slashes:
        lines = [line.replace("/", "\\/") for line in lines]
    text = "".join(f"data: {line}\n\n" for line in lines)
    paths = MachinePaths([("<HOME>", "/home/ada")], generic=True)
    fast = _scrub._stream_paths(text, paths)
    with mock.patch.object(_scrub, "json_strings_lack", return_value=False):
        slow = _scrub._stream_paths(text, paths)
    assert fast == slow
    assert "/home/ada" not in fast.replace("\\/", "/")


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
    fast = stream_by_value(stream, secrets)
    with mock.patch.object(_scrub_json, "json_strings_lack", return_value=False):
        slow = stream_by_value(stream, secrets)
    assert fast == slow


# --- the read-back check of our own writing ------------------------------------------------


def _outcome(check: Any, *args: Any) -> str:
    try:
        check(*args)
    except Exception as exc:  # the kind and the message: both must agree
        return f"{type(exc).__name__}: {exc}"
    return "accepted"


def _agree(stored: list[dict[str, Any]]) -> str:
    """Serialise ``stored`` as recording does; both checks must give the same outcome."""
    data = {"interactions": stored, "version": 1}
    text = ReadableYaml.serialize_owned(data)
    own = _outcome(ReadableYaml.check_own, data, text)
    assert own == _outcome(ReadableYaml.check, text)
    if own == "accepted":
        assert load_yaml(text) == data  # what replay reads is what was checked
    return own


def _stored(body: Any, code: int = 200, headers: Any = None) -> dict[str, Any]:
    return {
        "request": {
            "method": "POST",
            "uri": "http://127.0.0.1/v1",
            "headers": {"content-type": ["application/json"]},
            "body": json.dumps(body),
        },
        "response": {
            "status": {"code": code, "message": "OK"},
            "headers": headers if headers is not None else {"content-type": ["text/plain"]},
            "body": {"string": "ok"},
        },
    }


def test_nesting_around_the_loaders_bound_is_refused_as_the_file_would_be() -> None:
    outcomes = {}
    for depth in range(MAX_DEPTH - 9, MAX_DEPTH + 2):
        body: Any = 1
        for _ in range(depth):
            body = [body]
        outcomes[depth] = _agree([_stored(body)])
    assert outcomes[MAX_DEPTH - 9] == "accepted"
    assert f"more than {MAX_DEPTH} mappings and lists" in outcomes[MAX_DEPTH + 1]


def test_a_layout_refusal_and_aliases_are_decided_on_the_file() -> None:
    assert "status code" in _agree([_stored({"a": 1}, code=999)])
    schema = {"anyOf": [{"enum": [f"o{i}"]} for i in range(40)]}
    assert _agree([_stored({"n": n, "response_format": schema}) for n in range(3)]) == ("accepted")
    gzip_headers = {"content-type": ["text/plain"], "Content-Encoding": ["gzip"]}
    assert "Refused" in _agree([_stored({"a": 1}, headers=gzip_headers)])  # "ok" is no gzip


any_text = st.text(max_size=12)
any_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | any_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=40, deadline=None)
@given(body=any_json, code=st.integers(99, 600), message=any_text, header=any_text)
def test_the_data_check_agrees_with_the_files_check(
    body: Any, code: int, message: str, header: str
) -> None:
    item = _stored(body, code=code, headers={"x-note": [header]})
    item["response"]["status"]["message"] = message
    _agree([item])


def _long_stream_item(piece: str, note: str) -> dict[str, Any]:
    item = _stored({"a": 1}, headers={"content-type": ["text/event-stream"], "x-note": [note]})
    events = [json.dumps({"arguments": f"{piece}{n}"}) for n in range(STREAM_BLOCK_EVENTS + 5)]
    item["response"]["body"]["string"] = "".join(f"data: {event}\n\n" for event in events)
    return item


@pytest.mark.parametrize(
    ("piece", "note", "read_back"),
    [
        ('{"k": "', "plain", False),  # backslashes in the block alone: characters
        ('{"k": "', "a\ttab", True),  # and an escape in another scalar
        ("plain", "a\ttab", True),
        ("plain", "plain", False),
    ],
)
def test_backslashes_of_a_block_alone_need_no_read_back(
    piece: str, note: str, read_back: bool
) -> None:
    stored = [_long_stream_item(piece, note)]
    data = {"interactions": stored, "version": 1}
    text = ReadableYaml.serialize_owned(data)
    assert "event_stream: |+" in text
    with mock.patch.object(ReadableYaml, "check", wraps=ReadableYaml.check) as check:
        ReadableYaml.check_own(data, text)
    assert check.called is read_back
    _agree([_long_stream_item(piece, note)])


STREAMS = [
    'data: {"a": "w0 "}\n\ndata: {"a": "w1"}\n\ndata: [DONE]\n\n',
    'event: delta\ndata: {"a": "sk-proj-"}\n\nevent: delta\ndata: {"a": "abcdefghijklmnop"}\n\n',
    'data: {"a": "x"}\r\n\r\n: keep-alive\r\n\r\ndata: {"a": "/home/ada/y"}\r\n\r\n',
]


def test_a_stream_parsed_once_is_written_as_one_parsed_by_every_pass(tmp_path: Path) -> None:
    def pair(text: str) -> tuple[dict[str, Any], dict[str, Any]]:
        request = {"method": "POST", "uri": "http://x/v1", "headers": {}, "body": b"{}"}
        response = {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": ["text/event-stream"]},
            "body": {"string": text.encode()},
        }
        return request, response

    # Two streams of the same text too: each is its own list (no anchor), as parsing gives.
    pairs = [pair(text) for text in [*STREAMS, STREAMS[0]]]
    paths = MachinePaths([("<HOME>", "/home/ada")])
    write_cassette(tmp_path / "once.yaml", pairs, scrubber=Scrubber(secrets=Secrets(), paths=paths))
    with mock.patch.object(Scrubber, "parsed_streams", return_value={}):
        write_cassette(
            tmp_path / "every.yaml", pairs, scrubber=Scrubber(secrets=Secrets(), paths=paths)
        )
    once = (tmp_path / "once.yaml").read_text()
    assert once == (tmp_path / "every.yaml").read_text()
    for absent in ("&id", "abcdefghijklmnop", "/home/ada"):
        assert absent not in once


def test_json_bodies_parsed_once_are_written_as_parsed_by_every_pass(tmp_path: Path) -> None:
    """The data of a JSON body that scrubbing read and left as it came is handed to the
    writer (not parsed a second time): the file is the one a second parse writes, for bodies
    left alone and for bodies each pass changes (by name, by value, a machine path)."""
    bodies = [
        {"model": "m", "messages": [{"role": "user", "content": "a long prompt"}]},
        {"model": "m", "api_key": "sk-named-by-its-field", "n": 1},
        {"model": "m", "note": "sk-proj-abcdefghijklmnopqrstu"},
        {"model": "m", "file": "/home/ada/notes.txt"},
        {"model": "m", "messages": [{"role": "user", "content": "a long prompt"}]},
        [1, {"x": True}],
    ]

    def pair(body: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        request = {
            "method": "POST",
            "uri": "http://x/v1",
            "headers": {"content-type": ["application/json"]},
            "body": json.dumps(body).encode(),
        }
        response = {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": ["application/json"]},
            "body": {"string": json.dumps({"echo": body}).encode()},
        }
        return request, response

    pairs = [pair(body) for body in bodies]
    paths = MachinePaths([("<HOME>", "/home/ada")])
    write_cassette(tmp_path / "once.yaml", pairs, scrubber=Scrubber(secrets=Secrets(), paths=paths))
    with mock.patch.object(Scrubber, "parsed_documents", return_value={}):
        write_cassette(
            tmp_path / "every.yaml", pairs, scrubber=Scrubber(secrets=Secrets(), paths=paths)
        )
    once = (tmp_path / "once.yaml").read_text()
    assert once == (tmp_path / "every.yaml").read_text()
    for absent in ("sk-named", "abcdefghijklmnop", "/home/ada"):
        assert absent not in once


def test_the_bodies_left_alone_are_the_ones_handed_on() -> None:
    scrubber = Scrubber(secrets=Secrets())
    plain, named = '{"model": "m", "n": 1}', '{"model": "m", "password": "hunter22"}'
    pairs = [
        (
            {"method": "POST", "uri": "http://x/", "headers": {}, "body": body.encode()},
            {"status": {"code": 200}, "headers": {}, "body": {"string": b"ok"}},
        )
        for body in (plain, named)
    ]
    scrubber.interactions(pairs)
    documents = scrubber.parsed_documents()
    assert documents == {plain: {"model": "m", "n": 1}}
    assert scrubber.parsed_documents() == {}  # handed on once
    from pytest_opdecide._cassettes._yaml_format import readable_body

    data = documents[plain]
    assert readable_body(plain.encode(), {}, documents=documents)["json"] is data
    assert documents == {}  # taken: a second body of the same text is parsed anew


def _shared(bodies: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    from pytest_opdecide._cassettes._yaml_format import _share_repeats

    interactions = [{"request": {"body": {"json": body}}} for body in bodies]
    return [(key, value) for _, key, value in _share_repeats(interactions)]


def test_only_parts_written_as_the_same_json_are_shared() -> None:
    tools = [{"type": "function", "name": "refund", "strict": True}]
    assert _shared([{"tools": tools}, {"tools": json.loads(json.dumps(tools))}]) == [
        ("tools", tools)
    ]
    # Summed up alike, written differently: True and 1, 1 and 1.0, keys in another order.
    assert _shared([{"t": [True]}, {"t": [1]}]) == []
    assert _shared([{"t": [1]}, {"t": [1.0]}]) == []
    assert _shared([{"t": {"a": 1, "b": 2}}, {"t": {"b": 2, "a": 1}}]) == []
    # Past the summary's size, by the JSON text alone.
    large = {"schema": [{"n": n} for n in range(300)]}
    assert _shared([dict(large), json.loads(json.dumps(large))]) == [("schema", large["schema"])]
    assert _shared([dict(large), {"schema": [*large["schema"][:-1], {"n": -1}]}]) == []


# What replay cannot send as JSON, mixed into JSON data: the layout check must find every one.
_not_json = st.sampled_from([b"bytes", {1, 2}, 1.5j, (1, 2), object()])
_mixed = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts | _not_json,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(texts | st.integers() | st.just((1, 2)), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(_mixed)
def test_the_json_check_without_paths_refuses_what_the_walk_with_paths_refuses(
    value: Any,
) -> None:
    """Replay reads a cassette's JSON with a walk that keeps no paths; only a refused file is
    walked again for the path of what was wrong. Both walks must agree on every value."""
    checker = _Checker("")
    try:
        checker._refuse_json(["body"], value, "the body")
    except Refused:
        walked_ok = False
    else:
        walked_ok = True
    assert _json_fits(value) is walked_ok


# --- a stream's names, proven on its text ---------------------------------------------------

_KEY_POOL = ["id", "choices", "delta", "content", "role", "index", "x", "api_key", "apiKey"]
_KEY_POOL += ["token", "password", "client_secret", "arguments", "logprobs", ""]
_event_json = st.recursive(
    st.none() | st.integers() | st.sampled_from(["w0 ", "sk-proj-abcdefghijklmnopq", "{", "[1]"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEY_POOL), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def _streams(draw: st.DrawFn) -> str:
    """Streams shaped like a server's (``data: {...}`` lines), with what breaks the proof or
    fools a weak one: secret names, keys with blanks before their colon, JSON cut between
    events (a key cut in two), other lines."""
    pieces: list[str] = []
    for _ in range(draw(st.integers(1, 5))):
        value = draw(st.dictionaries(st.sampled_from(_KEY_POOL), _event_json, max_size=3))
        separators = draw(st.sampled_from([(", ", ": "), (",", ":"), (", ", " : ")]))
        text = json.dumps(value, separators=separators)
        how = draw(st.sampled_from(["whole", "two events", "two lines"]))
        if how == "whole" or len(text) < 3:
            pieces.append(text)
        elif how == "two events":  # cut in two events, both starting "{"
            cut = draw(st.integers(1, len(text) - 1))
            pieces += [text[:cut], "{" + text[cut:]]
        else:  # one event of two data lines: its data is the JSON with a newline in it
            cut = draw(st.integers(1, len(text) - 1))
            pieces.append(f"{text[:cut]}\ndata: {text[cut:]}")
    if draw(st.booleans()):
        pieces.append("[DONE]")
    if draw(st.booleans()):
        pieces.insert(draw(st.integers(0, len(pieces))), draw(st.sampled_from(["hi", "[1,"])))
    return "".join(f"data: {piece}\n\n" for piece in pieces)


@settings(max_examples=400, deadline=None)
@given(_streams())
def test_a_stream_proven_free_of_secret_names_is_one_the_slow_way_leaves_alone(text: str) -> None:
    """Where the proof says so, reading every event by name (and the texts they add up to)
    finds nothing: the stream comes back as it was and nothing is remembered."""
    scrubber = Scrubber(secrets=Secrets())
    if not _scrub_json.names_lack_secrets(text, scrubber.body_fields):
        return
    with mock.patch.object(_scrub, "names_lack_secrets", return_value=False):
        assert scrubber._stream_by_name(text, text) is text
    assert scrubber.seen == set()


def test_the_stream_proof_holds_for_a_servers_reply_and_not_past_what_it_proves() -> None:
    lack = _scrub_json.names_lack_secrets
    fields = frozenset({"api_key"})
    chunk = '{"id": "c1", "choices": [{"index": 0, "delta": {"content": "w%d "}}]}'
    reply = "".join(f"data: {chunk % n}\n\n" for n in range(50)) + "data: [DONE]\n\n"
    assert lack(reply, fields)
    assert lack(reply.replace('"content": "w7 "', '"role": "assistant"', 1), fields) is False
    assert not lack(reply.replace('"w3 "', '{"api_key": "k"}'), fields)  # a secret field
    assert not lack(reply.replace('"w3 "', '"w3 \\"x\\""'), fields)  # a backslash
    assert not lack(reply.replace('"index": 0', '"index" : 0', 1), fields)  # blank, colon
    assert not lack(reply.replace("\n\n", "\r\n\r\n"), fields)
    assert not lack("event: delta\n" + reply, fields)
    # A key cut between two events that are not JSON on their own: the slow way finds it.
    cut = 'data: {"note": "x", "api_\n\ndata: {key": "sk-cut-in-two-events"}\n\n'
    cut = f'data: {{"note": "a"}}\n\n{cut}data: {{"note": "b"}}\n\n'
    assert not lack(cut, fields)
    # A key and its colon on two data lines of one event: JSON only once they are joined.
    lines = 'data: {"x": 1, "api_key"\ndata: : "sk-on-two-lines-of-one"}\n\n'
    lines = f'data: {{"x": 0}}\n\n{lines}data: {{"x": 2}}\n\n'  # the first and last: JSON
    assert not lack(lines, fields)
    scrubber = Scrubber(secrets=Secrets())
    scrubber._stream_by_name(lines, lines)
    assert "sk-on-two-lines-of-one" in scrubber.seen
    scrubber = Scrubber(secrets=Secrets())
    scrubber._stream_by_name(cut, cut)
    assert "sk-cut-in-two-events" in scrubber.seen
