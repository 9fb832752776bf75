"""A cassette arrives in pull requests: what it may hold is checked before anything replays.

Each file here is one an attacker (or a bad merge) could commit: anchors that multiply, nesting
that exhausts the stack, a key given twice, a version or a status code no library writes, a
body that claims an encoding it is not in, a value of the wrong type. Each is refused when the
file is read, with a :class:`CassetteCorrupt` naming the file, the line and the fix; none hangs,
crashes or replays half-way. How long reading takes is measured in ``benchmarks/``, not here.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_opdecide._cassettes import _yaml_loader
from pytest_opdecide._cassettes._file import CassetteCorrupt, read_interactions, write_cassette
from pytest_opdecide._cassettes._scrub import Scrubber
from pytest_opdecide._cassettes._yaml_format import ReadableYaml, load_yaml
from pytest_opdecide._cassettes._yaml_loader import EXPANSION, MAX_DEPTH, Refused

URI = "http://127.0.0.1:8765/v1/chat/completions"


def request_body(content: str) -> str:
    return json.dumps({"model": "m", "messages": [{"role": "user", "content": content}]})


def interaction(content: str = "Hi.", reply: str = '{"call": "a"}') -> dict[str, Any]:
    return {
        "request": {
            "method": "POST",
            "uri": URI,
            "body": request_body(content),
            "headers": {"content-type": ["application/json"]},
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": ["application/json"]},
            "body": {"string": json.dumps({"choices": [{"message": {"content": reply}}]})},
        },
    }


def valid_text(count: int = 2) -> str:
    """A cassette as the library writes it."""
    return ReadableYaml.serialize(
        {"interactions": [interaction(f"Ticket {n}.") for n in range(count)]}
    )


def refused(tmp_path: Path, text: str) -> CassetteCorrupt:
    """The error reading ``text`` as a cassette raises (it must raise one)."""
    path = tmp_path / "cassettes" / "test_x" / "test_y.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CassetteCorrupt) as raised:
        read_interactions(path, "test_x.py::test_y")
    error = raised.value
    assert error.path == path
    message = str(error)
    assert message.startswith(f"cassette {path}")
    # The way out is always named, whatever was wrong.
    assert "    pytest 'test_x.py::test_y' --opdecide-record=rewrite" in message
    return error


def line_holding(text: str, fragment: str) -> int:
    """The line (1-based) of the first line of ``text`` that holds ``fragment``."""
    for number, line in enumerate(text.splitlines(), start=1):
        if fragment in line:
            return number
    raise AssertionError(f"{fragment!r} not in the text")


# Anchors that multiply ----------------------------------------------------------------------


def anchor_bomb(levels: int, *, fallback: bool = False) -> str:
    """A cassette whose request body holds ``levels`` anchors, each repeating the one before
    ten times: about 50 bytes per level on disk, ten times more expanded for each level."""
    tag = "!!map " if fallback else ""  # a tag on a mapping: read by PyYAML's own loader
    lines = [
        "interactions:",
        "- request:",
        "    method: POST",
        f"    uri: {URI}",
        "    body:",
        f"      json: {tag}",
        "        l0: &l0 [xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx]",
    ]
    for level in range(1, levels + 1):
        lines.append(f"        l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 10) + "]")
    lines += [
        "  response:",
        "    status: {code: 200, message: OK}",
        "    body: {string: ''}",
        "version: 1",
    ]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("fallback", [False, True], ids=["fast-path", "pyyaml-path"])
def test_nested_anchors_are_refused_at_the_alias_that_goes_past_the_bound(
    tmp_path: Path, fallback: bool
) -> None:
    # Nine levels: under 1 KB on disk, some 500 MB once the body is turned back into text.
    text = anchor_bomb(9, fallback=fallback)
    assert len(text) < 1000
    error = refused(tmp_path, text)
    limit = _yaml_loader.expansion_limit(len(text))
    # The level whose aliases go past the bound: each level is ten times the one before.
    line = line_holding(text, "l5: &l5")
    assert error.line == line
    assert str(error).startswith(
        f"cassette {error.path}, line {line}: the alias *l4 makes the file expand past "
        f"{limit:,} characters ({EXPANSION} times its {len(text):,} characters, plus "
        "1,048,576): anchors that repeat anchors multiply what is read far beyond what a "
        "reviewer sees. Write the repeated values out (the library's own anchors stay within "
        "the bound).\nOr re-record it with the model server running at base_url"
    )


def test_one_long_value_repeated_by_many_aliases_is_refused_too(tmp_path: Path) -> None:
    """No nesting: a 20 KB text repeated by 20,000 aliases (a 200 KB file, 400 MB read)."""
    long = "y" * 20_000
    aliases = "\n".join("        - *long" for _ in range(20_000))
    text = (
        f"interactions:\n- request:\n    method: POST\n    uri: {URI}\n    body:\n      json:\n"
        f"        first: &long {long}\n        again:\n{aliases}\n"
        "  response:\n    status: {code: 200}\n    body: {string: ''}\nversion: 1\n"
    )
    error = refused(tmp_path, text)
    assert "the alias *long makes the file expand past" in str(error)
    # Within the bound, hundreds of aliases are read; the first past it is named.
    assert error.line is not None
    assert line_holding(text, "again:") + 100 < error.line < line_holding(text, "again:") + 1000


def test_an_alias_inside_its_own_anchor_is_refused(tmp_path: Path) -> None:
    text = valid_text().replace("    body:\n      json:\n", "    body:\n      json: &self\n", 1)
    text = text.replace("        model: m\n", "        model: m\n        again: *self\n", 1)
    error = refused(tmp_path, text)
    assert error.line == line_holding(text, "again: *self")
    assert "the alias *self is inside the value its anchor &self names" in str(error)


def nested(text: str, depth: int, *, flow: bool) -> str:
    """``text`` with a value ``depth`` levels deep in its first request body."""
    if flow:
        value = " " + "[" * depth + "]" * depth + "\n"
    else:
        value = "\n" + "".join(" " * (8 + level) + "k:\n" for level in range(1, depth))
    return text.replace("        model: m\n", "        model:" + value, 1)


@pytest.mark.parametrize(("depth", "flow"), [(MAX_DEPTH + 1, True), (3000, False)])
def test_deep_nesting_is_refused_without_exhausting_the_stack(
    tmp_path: Path, depth: int, flow: bool
) -> None:
    text = nested(valid_text(), depth, flow=flow)
    error = refused(tmp_path, text)
    assert error.line == line_holding(text, "model:") + (0 if flow else MAX_DEPTH - 5)
    assert f"more than {MAX_DEPTH} mappings and lists are nested inside each other" in str(error)


def test_libyamls_own_nesting_limit_is_a_refusal_too(tmp_path: Path) -> None:
    """libyaml (since PyYAML 6.0.1's wheels) stops flow nesting itself; older ones leave it to
    the loader's own bound. Either way: a refusal naming the line."""
    text = nested(valid_text(), 100_000, flow=True)
    error = refused(tmp_path, text)
    line = line_holding(text, "model:")
    if "(ScannerError: while increasing flow level" in str(error):
        assert f"line {line}, column" in str(error)
    else:
        assert error.line == line
        assert f"more than {MAX_DEPTH} mappings and lists are nested" in str(error)


def test_nesting_up_to_the_bound_is_read() -> None:
    # The cassette's own layout takes 6 levels down to a JSON body.
    inner = MAX_DEPTH - 6
    text = nested(valid_text(), inner, flow=True)
    data = ReadableYaml.deserialize(text)
    assert data["interactions"][0]["request"]["body"].startswith('{"model":' + "[" * inner)


def test_the_formats_own_anchors_load() -> None:
    """The menu's JSON schema of 30 decision calls: written once, referred to 29 times."""
    schema = {
        "type": "json_schema",
        "json_schema": {
            "name": "decision",
            "schema": {"anyOf": [{"enum": [f"o{i}"]} for i in range(40)]},
        },
    }
    stored = []
    for n in range(30):
        item = interaction(f"Ticket {n}.")
        item["request"]["body"] = json.dumps(
            {"messages": [{"role": "user", "content": f"Ticket {n}."}], "response_format": schema}
        )
        stored.append(item)
    text = ReadableYaml.serialize({"interactions": stored})
    assert text.count("&id001") == 1
    assert text.count("*id001") == 29
    back = ReadableYaml.deserialize(text)
    assert len(back["interactions"]) == 30


def test_repeats_that_would_go_past_the_bound_are_written_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The format shares a repeated part only while the file stays within the bound: past it,
    it writes every copy out, so that what it writes is always read back."""
    monkeypatch.setattr(_yaml_loader, "EXPANSION_FLOOR", 0)
    monkeypatch.setattr(_yaml_loader, "EXPANSION", 2)
    tools = [{"name": "lookup", "description": "d" * 2000}]
    stored = []
    for n in range(10):
        item = interaction()
        item["request"]["body"] = json.dumps({"messages": [n], "tools": tools})
        stored.append(item)
    text = ReadableYaml.serialize({"interactions": stored})
    assert "&id" not in text
    assert text.count("d" * 2000) == 10
    assert len(ReadableYaml.deserialize(text)["interactions"]) == 10
    monkeypatch.setattr(_yaml_loader, "EXPANSION", 32)
    assert "&id001" in ReadableYaml.serialize({"interactions": stored})


# Keys given twice ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "key"),
    [
        ("version: 1\n", "version: 1\nversion: 1\n", "version"),
        ("    method: POST\n", "    method: POST\n    method: GET\n", "method"),
        ("      code: 200\n", "      code: 200\n      code: 500\n", "code"),
        ("        model: m\n", "        model: m\n        model: other\n", "model"),
        (
            "          content: Ticket 0.\n",
            "          content: Ticket 0.\n          content: Ticket 9.\n",
            "content",
        ),
    ],
    ids=["top", "request", "status", "json-body", "deep-in-the-body"],
)
@pytest.mark.parametrize("fallback", [False, True], ids=["fast-path", "pyyaml-path"])
def test_a_key_given_twice_is_refused_at_any_level(
    tmp_path: Path, before: str, after: str, key: str, fallback: bool
) -> None:
    text = valid_text()
    assert before in text
    text = text.replace(before, after, 1)
    if fallback:  # a tagged mapping elsewhere: the file is read by PyYAML's own loader
        text = text.replace("    headers:\n", "    headers: !!map\n", 1)
    error = refused(tmp_path, text)
    first = line_holding(text, after.splitlines()[0])
    assert error.line == first + 1
    assert (
        f"line {first + 1}: the key {key!r} is given twice in one mapping (first at line "
        f"{first}): a reader sees one value and replay would use the other. Keep one of them."
    ) in str(error)


def test_a_merge_key_may_give_a_key_again() -> None:
    """``<<`` merges a mapping and the keys after it override it: YAML's own rule, not a key
    given twice."""
    assert load_yaml("base: &b {x: 1, y: 2}\nchild:\n  <<: *b\n  y: 3\n") == {
        "base": {"x": 1, "y": 2},
        "child": {"x": 1, "y": 3},
    }


def test_the_loader_refuses_a_key_given_twice_anywhere() -> None:
    with pytest.raises(Refused, match=r"line 3: the key 'b' is given twice .*first at line 2"):
        load_yaml("a:\n  b: 1\n  b: 2\n")


# Versions and status codes ------------------------------------------------------------------


@pytest.mark.parametrize("version", ["99", "'one'", "null", "true", "1.0", "'1'", "[1]"])
def test_only_the_versions_the_library_writes_are_read(tmp_path: Path, version: str) -> None:
    text = valid_text().replace("version: 1\n", f"version: {version}\n")
    error = refused(tmp_path, text)
    assert error.line == line_holding(text, "version:")
    shown = repr(yaml.safe_load(f"v: {version}")["v"])
    assert f": version {shown} is not one this library writes: it reads version 1.\n" in str(error)


@pytest.mark.parametrize(
    "code", ["99999999999999999999", "99", "600", "-200", "'200'", "true", "200.0", "null"]
)
def test_a_status_code_is_a_whole_number_from_100_to_599(tmp_path: Path, code: str) -> None:
    text = valid_text().replace("      code: 200\n", f"      code: {code}\n", 1)
    error = refused(tmp_path, text)
    assert error.line == line_holding(text, f"code: {code}")
    assert "the status code of interaction #0 is " in str(error)
    assert "an HTTP status code is a whole number from 100 to 599." in str(error)


@pytest.mark.parametrize("code", ["100", "599", "404"])
def test_status_codes_in_range_are_read(code: str) -> None:
    text = valid_text().replace("      code: 200\n", f"      code: {code}\n", 1)
    assert ReadableYaml.deserialize(text)["interactions"][0]["response"]["status"]["code"] == int(
        code
    )


# Content encodings --------------------------------------------------------------------------


def encoded_text(encoding: str, body: bytes) -> str:
    item = interaction()
    item["response"]["headers"]["content-encoding"] = [encoding]
    item["response"]["body"]["string"] = body
    return ReadableYaml.serialize({"interactions": [interaction(), item]})


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_body_that_claims_an_encoding_it_is_not_in_is_refused_when_read(
    tmp_path: Path, encoding: str
) -> None:
    text = encoded_text(encoding, b'{"not": "compressed"}')
    error = refused(tmp_path, text)
    # The line of the second interaction's response body (the file's last body).
    assert error.line == max(
        n for n, line in enumerate(text.splitlines(), 1) if line == "    body:"
    )
    assert (
        f"the response of interaction #1 says Content-Encoding {encoding!r}, but its body is "
        f"not {encoding} data" in str(error)
    )
    assert "If the body is stored decoded, remove the Content-Encoding header." in str(error)


def test_a_body_in_the_encoding_it_claims_is_read_and_replayed_decoded(tmp_path: Path) -> None:
    import httpx

    from pytest_opdecide._cassettes._replay_transport import CassetteTransport
    from pytest_opdecide._cassettes._tape import Tape

    path = tmp_path / "c.yaml"
    path.write_text(encoded_text("gzip", gzip.compress(b'{"ok": true}')), encoding="utf-8")
    tape = Tape(path, read_interactions(path))
    with httpx.Client(transport=CassetteTransport(tape)) as client:
        for content in ("Hi.", "Hi."):
            response = client.post(URI, content=request_body(content))
    assert response.json() == {"ok": True}


@pytest.mark.parametrize(
    ("encoding", "body", "says"),
    [
        ("gzip", gzip.compress(b"x" * 1000)[:-12], "ends before the compressed stream does"),
        ("br", b"whatever", "which replay does not check (it knows identity, gzip, deflate)"),
        ("x-gzip", gzip.compress(b"{}"), "which replay does not check"),
    ],
    ids=["cut-short", "brotli", "unknown"],
)
def test_encodings_replay_cannot_check_are_refused(
    tmp_path: Path, encoding: str, body: bytes, says: str
) -> None:
    assert says in str(refused(tmp_path, encoded_text(encoding, body)))


def test_a_compressed_body_that_decodes_past_the_bound_is_refused(tmp_path: Path) -> None:
    bomb = zlib.compress(b"\0" * (80 << 20), 9)  # 80 KB on disk, 80 MB decoded
    error = refused(tmp_path, encoded_text("deflate", bomb))
    assert re.search(
        r"decodes \(deflate\) past [\d,]+ bytes, the bound for a file of this size", str(error)
    )


# Every value of the layout, of the right type -----------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "line_of", "says"),
    [
        (
            "    method: POST\n",
            "    method: 1\n",
            "method: 1",
            "the method of interaction #0 must be text; it is the number 1",
        ),
        (
            f"    uri: {URI}\n",
            "    uri:\n",
            "uri:",
            "the uri of interaction #0 must be text; it is empty (null)",
        ),
        (
            "      content-type: application/json\n",
            "      content-type: 5\n",
            "content-type: 5",
            "the header 'content-type' of interaction #0's request must be text",
        ),
        (
            "    body:\n      json:\n",
            "    body:\n      form:\n",
            "    body:",
            "the request body of interaction #0 must be text, bytes (!!binary), empty, JSON data",
        ),
        (
            "        model: m\n",
            "        model: 2026-01-01\n",
            "model: 2026",
            "holds a date in its JSON data, which JSON cannot carry",
        ),
        (
            "      message: OK\n",
            "      message: 5\n",
            "message: 5",
            "the status message of interaction #0 must be text",
        ),
        (
            "    body:\n      string:\n",
            "    body:\n      strin:\n",
            "strin:",
            "holds 'strin', which this library neither writes nor reads",
        ),
        (
            "  response:\n",
            "  responsx:\n",
            "responsx",
            "interaction #0 holds 'responsx', which this library neither writes nor reads (it "
            "knows request, response)",
        ),
        ("interactions:\n", "interactions:\n", "", ""),
    ],
    ids=[
        "method",
        "uri",
        "header",
        "body-form",
        "json-date",
        "message",
        "body-key",
        "misspelt",
        "unchanged",
    ],
)
def test_a_value_of_the_wrong_type_is_refused_naming_its_line(
    tmp_path: Path, before: str, after: str, line_of: str, says: str
) -> None:
    text = valid_text()
    assert before in text
    text = text.replace(before, after, 1)
    if not says:
        assert len(ReadableYaml.deserialize(text)["interactions"]) == 2
        return
    error = refused(tmp_path, text)
    assert error.line == line_holding(text, line_of)
    assert says in str(error)


def test_an_event_of_the_wrong_shape_is_refused(tmp_path: Path) -> None:
    item = interaction()
    item["response"]["headers"]["content-type"] = ["text/event-stream"]
    item["response"]["body"]["string"] = "data: {}\n\ndata: [DONE]\n\n"
    text = ReadableYaml.serialize({"interactions": [item]})
    text = text.replace("- data: '[DONE]'\n", "- done: '[DONE]'\n")
    error = refused(tmp_path, text)
    assert error.line == line_holding(text, "done:")
    assert "event 1 of the response body of interaction #0 must be a mapping with one key" in str(
        error
    )


def test_nothing_is_written_that_replay_would_refuse(tmp_path: Path) -> None:
    """A scrub hook that stores a status code no server sends: replay would refuse the file."""
    request = {"method": "POST", "uri": URI, "headers": {}, "body": '{"a": 1}'}
    response = {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": b""}}

    def hook(stored: dict[str, Any]) -> None:
        stored["response"]["status"]["code"] = 99999999999999999999

    path = tmp_path / "c.yaml"
    with pytest.raises(CassetteCorrupt) as raised:
        write_cassette(path, [(request, response)], scrubber=Scrubber(), scrub_hook=hook)
    assert str(raised.value).startswith(
        f"cassette {path} was not written: replay would refuse it (line "
    )
    assert "an HTTP status code is a whole number from 100 to 599" in str(raised.value)
    assert not path.exists()
