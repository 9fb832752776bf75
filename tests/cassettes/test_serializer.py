"""The readable serializer reads back what it wrote (unit tests, no pytester)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from pytest_opdecide._cassettes._replay_transport import event_chunks
from pytest_opdecide._cassettes._yaml_format import ReadableYaml


def cassette(request_body: Any, response_body: Any, content_type: str) -> dict[str, Any]:
    return {
        "version": 1,
        "interactions": [
            {
                "request": {
                    "method": "POST",
                    "uri": "http://127.0.0.1:8765/v1/chat/completions",
                    "body": request_body,
                    "headers": {"content-type": ["application/json"]},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"content-type": [content_type], "content-length": ["1"]},
                    "body": {"string": response_body},
                },
            }
        ],
    }


def round_trip(data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    text = ReadableYaml.serialize(data)
    return text, ReadableYaml.deserialize(text)


PROMPT = "Decide:\n  first line\ttab   \ntrailing spaces   \n\nunicode: é ✓\n"


def test_json_bodies_round_trip_by_content() -> None:
    request = json.dumps({"messages": [{"role": "user", "content": PROMPT}], "n": 1.5})
    response = json.dumps({"choices": [{"message": {"content": '{"call": "a"}'}}]})
    text, back = round_trip(cassette(request, response, "application/json"))
    interaction = back["interactions"][0]
    assert json.loads(interaction["request"]["body"]) == json.loads(request)
    assert json.loads(interaction["response"]["body"]["string"]) == json.loads(response)
    # The stored content length follows the body as replayed.
    size = len(interaction["response"]["body"]["string"].encode())
    assert interaction["response"]["headers"]["content-length"] == [str(size)]
    stored = yaml.safe_load(text)["interactions"][0]
    assert stored["request"]["body"]["json"]["messages"][0]["content"] == PROMPT


@pytest.mark.parametrize(
    "event",
    [
        'data: {"choices": [{"delta": {"content": "Hi"}}]}',
        "data: [DONE]",
        'data: "a JSON string"',
        "data: 42",
        "data: plain text with trailing space ",
        ": ping - 2026-01-01",
        "event: message\ndata: {}",
    ],
)
def test_event_streams_replay_exactly(event: str) -> None:
    body = f"{event}\n\ndata: [DONE]\n\n"
    _, back = round_trip(cassette("{}", body, "text/event-stream"))
    replayed = back["interactions"][0]["response"]["body"]["string"]
    assert replayed == body
    assert event_chunks(replayed.encode()) == [f"{event}\n\n".encode(), b"data: [DONE]\n\n"]


def test_crlf_event_streams_are_read_as_events() -> None:
    body = 'data: {"a": 1}\r\n\r\ndata: [DONE]\r\n\r\n'
    text, back = round_trip(cassette("{}", body, "text/event-stream"))
    assert yaml.safe_load(text)["interactions"][0]["response"]["body"]["string"] == {
        "events": [{"data": {"a": 1}}, {"data": "[DONE]"}]
    }
    assert back["interactions"][0]["response"]["body"]["string"] == (
        'data: {"a": 1}\n\ndata: [DONE]\n\n'
    )


@pytest.mark.parametrize(
    "body", ["plain text", "", None, b"\x89PNG\r\n\x1a\n\x00binary", "[not json", "{not json"]
)
def test_other_bodies_round_trip(body: Any) -> None:
    _, back = round_trip(cassette(body, body, "text/plain"))
    interaction = back["interactions"][0]
    assert interaction["request"]["body"] == body
    assert interaction["response"]["body"]["string"] == body


def test_version_comes_last_and_is_required() -> None:
    text, _ = round_trip(cassette("{}", "{}", "application/json"))
    assert text.rstrip().splitlines()[-1] == "version: 1"
    with pytest.raises(ValueError, match="truncated"):
        ReadableYaml.deserialize(text.replace("version: 1", ""))
    with pytest.raises(ValueError, match="not a cassette"):
        ReadableYaml.deserialize("[]")


def test_unsafe_yaml_is_refused() -> None:
    with pytest.raises(yaml.YAMLError):
        ReadableYaml.deserialize("!!python/object/apply:os.system ['echo hi']")


YAML_SAMPLES = [
    "a: 1\nb: [1, 2.5, -3, 0x1F, 0o17, 1e3, .inf, -.inf]\nc: {d: null, e: ~, f: ''}\n",
    "yes_no: [yes, no, on, off, true, False, y, n]\nquoted: ['1', \"2\", '3.0', 'null']\n",
    "text: |\n  line one\n  line two\nfolded: >\n  a\n  b\nplain: hello world\n",
    "anchors: &a {x: 1}\nref: *a\nlist: &l [1, 2]\nagain: *l\nscalar: &s v\nsame: *s\n",
    "merge:\n  base: &b {x: 1, y: 2}\n  child:\n    <<: *b\n    y: 3\n",
    "binary: !!binary aGVsbG8=\nstamp: 2026-01-01\ntagged: !!str 123\n",
    "set: !!set {a, b}\nomap: !!omap [{a: 1}, {b: 2}]\n",
    "- 1\n- [2, [3, [4]]]\n- {k: [v, {w: x}]}\n",
    "",
    "just text\n",
    "---\na: 1\n...\n",
    "empty_map: {}\nempty_list: []\nunicode: é ✓ \U0001f600\nempty:\nlast: [a, b]\n",
    "? complex key\n: value\n'quoted key': 1\n2: int key\nnull: null key\n",
]


@pytest.mark.parametrize("text", YAML_SAMPLES)
def test_fast_yaml_loading_agrees_with_safe_load(text: str) -> None:
    from pytest_opdecide._cassettes._yaml_format import load_yaml

    expected = yaml.safe_load(text)
    assert load_yaml(text) == expected


@pytest.mark.parametrize(
    "text", ["a: [1\n", "!!python/object:os.system {}\n", "a: 1\n---\nb: 2\n", "[[1]: x]\n"]
)
def test_fast_yaml_loading_fails_as_safe_load_does(text: str) -> None:
    from pytest_opdecide._cassettes._yaml_format import load_yaml

    with pytest.raises(yaml.YAMLError):
        yaml.safe_load(text)
    with pytest.raises(yaml.YAMLError):
        load_yaml(text)


def test_fast_yaml_loading_of_the_committed_cassettes() -> None:
    from pathlib import Path

    from pytest_opdecide._cassettes._yaml_format import load_yaml

    root = Path(__file__).parents[2] / "cassettes"
    files = sorted(root.rglob("*.yaml"))
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert load_yaml(text) == yaml.safe_load(text), path


def test_libyamls_emitter_writes_what_the_pure_python_one_did() -> None:
    """Cassettes are written with libyaml's emitter: each committed cassette, written again,
    reads back as the same data as when PyYAML's pure-Python emitter wrote it (most of them
    byte for byte: libyaml only folds long quoted lines at other places)."""
    from pathlib import Path

    from pytest_opdecide._cassettes import _yaml_format
    from pytest_opdecide._cassettes._yaml_format import dump_yaml, load_yaml

    assert _yaml_format._SafeDumper is yaml.CSafeDumper

    class PurePython(yaml.SafeDumper):
        pass

    PurePython.add_representer(str, _yaml_format._str_representer)
    root = Path(__file__).parents[2]
    files = sorted(
        [*root.joinpath("cassettes").rglob("*.yaml"), *root.glob("examples/*/cassettes/**/*.yaml")]
    )
    identical = 0
    for path in files:
        data = load_yaml(path.read_text(encoding="utf-8"))
        ours = dump_yaml(data)
        theirs = yaml.dump(data, Dumper=PurePython, allow_unicode=True, sort_keys=False, width=100)
        assert load_yaml(ours) == load_yaml(theirs) == data, path
        identical += ours == theirs
        assert ReadableYaml.deserialize(ours) == ReadableYaml.deserialize(theirs), path
    assert identical >= len(files) - 2  # the folding of two long quoted tool-call arguments


def test_repeats_are_written_out_when_sharing_them_would_pass_the_loaders_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_opdecide._cassettes import _yaml_format
    from pytest_opdecide._cassettes._yaml_loader import Refused

    schema = {"type": "json_schema", "json_schema": {"name": "menu", "strict": True}}

    def stored(number: int) -> dict[str, Any]:
        body = {"model": "m", "messages": [{"role": "user", "content": f"#{number}"}]}
        body["response_format"] = schema
        return {
            "request": {"method": "POST", "uri": "http://h/v1", "body": json.dumps(body)},
            "response": {"status": {"code": 200, "message": "OK"}, "body": {"string": "{}"}},
        }

    data = {"interactions": [stored(n) for n in range(3)], "version": 1}
    assert ReadableYaml.serialize(data).count("&id001") == 1  # shared, within the bound

    def refuse(text: str) -> Any:
        raise Refused(3, "past the bound")

    monkeypatch.setattr(_yaml_format, "load_yaml", refuse)
    text = ReadableYaml.serialize(data)
    assert "&id" not in text
    assert "*id" not in text
    assert text.count("json_schema:") == 3
    monkeypatch.undo()
    read = ReadableYaml.deserialize(text)["interactions"]
    assert [json.loads(i["request"]["body"]) for i in read] == [
        json.loads(i["request"]["body"]) for i in data["interactions"]
    ]


def _committed_cassettes() -> list[Any]:
    from pathlib import Path

    root = Path(__file__).parents[2]
    files = sorted(
        [*root.joinpath("cassettes").rglob("*.yaml"), *root.glob("examples/*/cassettes/**/*.yaml")]
    )
    assert files
    return files


def test_every_committed_cassette_written_again_is_unchanged() -> None:
    """The format is pinned byte for byte: each committed cassette, read as replay reads it
    and written as recording writes it, is the same file."""
    for path in _committed_cassettes():
        text = path.read_text(encoding="utf-8")
        assert ReadableYaml.serialize(ReadableYaml.deserialize(text)) == text, path


_ODD_VALUES: list[Any] = [
    {"f": 1.5, "g": 1e20, "h": -0.0, "nan": float("nan"), "inf": float("-inf"), "i": 10**30},
    {"b": b"\xff\x00bin", "t": True, "n": None, "e": {}, "l": [], "y": "yes", "no": "no"},
    {"multi\nline key": "x", "s": "a\nb\n\n", "sp": " lead", "u": "é\U0001f600", "o": "0o17"},
    [["nested", ["deeper", {"k": "v" * 300 + " w" * 80}]], "~", "null", "", "- dash", "#"],
]


@pytest.mark.parametrize("value", _ODD_VALUES)
def test_the_node_builder_writes_what_pyyamls_representer_does(value: Any) -> None:
    """:func:`dump_yaml` builds the YAML nodes itself: the text is what PyYAML's safe
    representer and the same emitter write, for every kind of value, shared ones too."""
    from pytest_opdecide._cassettes import _yaml_format

    shared = {"schema": {"type": "object"}}
    for data in (value, {"one": value, "two": value, "three": shared, "four": shared}):
        for dumper in (_yaml_format._Dumper, _yaml_format._UnsharedDumper):
            theirs = yaml.dump(data, Dumper=dumper, allow_unicode=True, sort_keys=False, width=100)
            if theirs.endswith("\n...\n"):
                theirs = theirs.removesuffix("...\n")
            text, anchored = _yaml_format._dumped(data, dumper)
            assert text == theirs
            # Said to hold no anchor only when it holds none (check_own then looks for none).
            assert anchored or "&id" not in text


def test_a_lone_surrogate_escape_is_recorded_as_the_text_it_came_as(tmp_path: Any) -> None:
    """JSON may escape half of a UTF-16 pair (``\\ud800``), which no UTF-8 file holds: such a
    body or event is stored as its text, and replays as sent (a pair stays data)."""
    from pytest_opdecide._cassettes._file import read_interactions, write_cassette
    from pytest_opdecide._cassettes._scrub import Scrubber
    from pytest_opdecide._http._secrets import Secrets

    lone = '{"content": "half \\ud800 of a pair"}'
    pair = '{"content": "\\ud83d\\ude00"}'
    stream = f"data: {lone}\n\ndata: {pair}\n\ndata: [DONE]\n\n"
    data = cassette(lone.encode(), stream.encode(), "text/event-stream")
    text = ReadableYaml.serialize(data)
    assert 'body: \'{"content": "half \\ud800 of a pair"}\'' in text  # as text
    assert "- data: '" + lone + "'" in text
    assert '- data:\n            content: "\\U0001F600"' in text  # the pair is data
    read = ReadableYaml.deserialize(text)["interactions"][0]
    assert read["request"]["body"] == lone
    assert read["response"]["body"]["string"] == stream.replace(pair, '{"content": "😀"}')
    request, response = data["interactions"][0]["request"], data["interactions"][0]["response"]
    path = tmp_path / "c.yaml"
    write_cassette(path, [(request, response)], scrubber=Scrubber(secrets=Secrets()))
    assert read_interactions(path)


def test_the_write_check_refuses_what_reading_refuses() -> None:
    """:meth:`ReadableYaml.check` (what recording runs on the text it is about to write)
    refuses exactly the texts :meth:`ReadableYaml.deserialize` (what replay runs) refuses."""
    from pytest_opdecide._cassettes._yaml_loader import Refused

    good = ReadableYaml.serialize(cassette('{"a": 1}', "ok", "text/plain"))
    gzip_claim = good.replace("content-type: text/plain", "content-encoding: gzip")
    texts = [
        good,
        gzip_claim,
        good.removesuffix("version: 1\n"),  # cut short
        good.replace("code: 200", "code: 999"),
        good.replace("method: POST", "method: [POST]"),
        good.replace("version: 1", "version: 7"),
        *(path.read_text(encoding="utf-8") for path in _committed_cassettes()[:3]),
    ]
    assert "content-encoding: gzip" in gzip_claim
    for text in texts:
        outcomes = []
        for read in (ReadableYaml.check, ReadableYaml.deserialize):
            try:
                read(text)
            except (Refused, yaml.YAMLError) as error:
                outcomes.append(type(error))
            else:
                outcomes.append(None)
        assert outcomes[0] == outcomes[1], text
    refused = 0
    for text in texts[1:6]:
        with pytest.raises(Refused):
            ReadableYaml.check(text)
        refused += 1
    assert refused == 5
