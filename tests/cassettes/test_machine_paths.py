"""Recordings name no machine: the recording machine's paths become stable placeholders."""

from __future__ import annotations

import json
import os
import sys
import sysconfig
import tempfile
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from _openai_server import OpenAIServer, Received, Reply, default_reply

from pytest_opdecide._cassettes._machine_paths import MachinePaths
from pytest_opdecide._cassettes._scrub import Redaction, Scrubber, as_stored, scrub_data
from pytest_opdecide._http._secrets import Secrets

from ._support import cassette, dedent, interactions, write_ini

MACHINE = MachinePaths(
    [
        ("<PROJECT>", "/home/ada/work/shop"),
        ("<PYTEST-TMP>", "/tmp/pytest-of-ada/pytest-7"),
        ("<TMP>", "/tmp"),
        ("<HOME>", "/home/ada"),
        ("<PYTHON>", "/home/ada/work/shop/.venv"),
    ]
)


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("/home/ada/work/shop/tests/test_x.py", "<PROJECT>/tests/test_x.py"),
        ("/home/ada/.cache/x and /home/ada", "<HOME>/.cache/x and <HOME>"),
        ("/tmp/pytest-of-ada/pytest-7/test_a0/notes.txt", "<PYTEST-TMP>/test_a0/notes.txt"),
        ("/tmp/llama-cache", "<TMP>/llama-cache"),
        ("/home/ada/work/shop/.venv/bin/python", "<PYTHON>/bin/python"),
        # Any machine's site-packages and standard library: a server's traceback.
        (
            'File "/opt/llama/venv/lib/python3.12/site-packages/llama_cpp/server/app.py", line 3',
            'File "<SITE-PACKAGES>/llama_cpp/server/app.py", line 3',
        ),
        ('File "/usr/lib/python3.12/asyncio/tasks.py"', 'File "<PYTHON-LIB>/asyncio/tasks.py"'),
        (
            r"C:\Users\ada\venv\Lib\site-packages\llama_cpp\app.py",
            r"<SITE-PACKAGES>\llama_cpp\app.py",
        ),
        # Only whole paths.
        ("/home/adam/x /data/home/ada /home/ada.bak", "/home/adam/x /data/home/ada /home/ada.bak"),
        ("https://example.com/lib/python3.12/x", "https://example.com/lib/python3.12/x"),
        ("at /home/ada.", "at <HOME>."),
        # The forms text holds a path in.
        (quote("/tmp/a.txt", safe=""), "<TMP>%2Fa.txt"),
        (r"\/home\/ada\/x", r"<HOME>\/x"),
    ],
)
def test_paths_become_placeholders(text: str, stored: str) -> None:
    assert MACHINE.text(text) == stored


def test_json_values_keys_and_bytes() -> None:
    value = {"/home/ada/notes": ["see /tmp/x", json.dumps({"path": "/home/ada"})], "n": 1}
    assert MACHINE.value(value) == {
        "<HOME>/notes": ["see <TMP>/x", json.dumps({"path": "<HOME>"})],
        "n": 1,
    }
    untouched = {"a": ["b"]}
    assert MACHINE.value(untouched) is untouched
    assert MACHINE.data("é /home/ada/x".encode("latin-1")) == "é <HOME>/x".encode("latin-1")


def test_the_current_machine_has_its_paths() -> None:
    project = Path.cwd()
    paths = MachinePaths.current(project=project)
    shown = paths.text(
        f"{project}/a {tempfile.gettempdir()}/b {Path.home()}/c {sys.prefix}/d "
        f"{sysconfig.get_paths()['purelib']}/e {Path(httpx.__file__)}"
    )
    for place in ("<PROJECT>/a", "<TMP>/b", "<HOME>/c", "<SITE-PACKAGES>/e"):
        assert place in shown
    assert str(Path.home()) not in shown
    assert MachinePaths(generic=False).text(f"{sys.prefix}/lib/python3.12") == (
        f"{sys.prefix}/lib/python3.12"
    )


def test_a_request_is_compared_as_stored_on_another_machine() -> None:
    """The recorded request holds the placeholders; the replaying machine's request, with its
    own paths, is compared as it would be stored."""
    there = MachinePaths([("<PROJECT>", "/srv/ci/checkout")])
    recorded = {"messages": [{"content": "Summarise /home/ada/work/shop/README.md"}]}
    replayed = {"messages": [{"content": "Summarise /srv/ci/checkout/README.md"}]}
    here = Redaction(secrets=Secrets(), paths=MACHINE)
    assert as_stored(recorded, here) == as_stored(
        replayed, Redaction(secrets=Secrets(), paths=there)
    )


def test_the_scrubber_replaces_paths_everywhere() -> None:
    request = {
        "uri": "http://127.0.0.1/v1/chat?file=%2Fhome%2Fada%2Fa.txt",
        "headers": {"x-workdir": ["/home/ada/work/shop"]},
        "body": json.dumps({"messages": [{"content": "read /tmp/a.txt"}]}),
    }
    stream = 'data: {"choices": [{"delta": {"content": "/home/ada/x"}}]}\n\ndata: [DONE]\n\n'
    response = {
        "status": {"code": 200, "message": "OK"},
        "headers": {"content-type": ["text/event-stream"]},
        "body": {"string": stream.encode()},
    }
    Scrubber(secrets=Secrets(), paths=MACHINE).interactions([(request, response)])
    assert request["uri"].endswith("file=<HOME>%2Fa.txt")
    assert request["headers"]["x-workdir"] == ["<PROJECT>"]
    assert json.loads(request["body"])["messages"][0]["content"] == "read <TMP>/a.txt"
    assert b"<HOME>/x" in response["body"]["string"]
    assert b"/home/ada" not in response["body"]["string"]


@pytest.mark.parametrize(
    ("stream", "stored"),
    [
        ('data: {"c": "no path here"}\n\n', 'data: {"c": "no path here"}\n\n'),
        ('data: {"c": "/home/ada"}\n\n', 'data: {"c": "<HOME>"}\n\n'),
        ('data: {"/tmp/x": 1}\n\n', 'data: {"<TMP>/x": 1}\n\n'),
        # Escapes: the text shows the path in another form than its string holds it.
        ('data: {"c": "\\n/home/ada"}\n\n', 'data: {"c": "\\n<HOME>"}\n\n'),
        ('data: {"c": "\\u002fhome/ada"}\n\n', 'data: {"c": "<HOME>"}\n\n'),
        # Text data right after "data:" (a colon before it in the text, none in the string).
        ("data:/usr/lib/python3.12/x\n\n", "data: <PYTHON-LIB>/x\n\n"),
        ("event: a\ndata: /home/ada\n\n", "event: a\ndata: <HOME>\n\n"),
    ],
)
def test_a_stream_without_paths_is_left_unread_and_every_other_is_read(
    stream: str, stored: str
) -> None:
    """Streams whose text shows no path skip the event-by-event pass; those whose strings may
    hold one in another form (escapes, text right after ``data:``) are read event by event."""
    from pytest_opdecide._cassettes._scrub import _body_paths

    headers = {"content-type": ["text/event-stream"]}
    assert _body_paths(stream, MACHINE, headers) == stored


def test_decision_level_recordings_name_no_machine() -> None:
    entry = {"reply": {"text": f"saved to {Path.home()}/out.txt"}}
    assert scrub_data([entry], Secrets()) == [{"reply": {"text": "saved to <HOME>/out.txt"}}]


# --- the plugin, against a server that quotes its own paths ---------------------------------


def _traceback(project: Path) -> str:
    """What llama-cpp-python's server sends when it refuses a ``json_schema`` response format:
    its traceback, naming the files of the machine it runs on (this one)."""
    return (
        "Traceback (most recent call last):\n"
        f'  File "{Path(httpx.__file__)}", line 12, in handle\n'
        f'  File "{Path(json.__file__)}", line 3, in loads\n'
        f'  File "{project}/server/app.py", line 40, in create_chat_completion\n'
        f"  cache in {tempfile.gettempdir()}/llama-cache, models in {Path.home()}/.cache/models,"
        f" python {sys.prefix}\n"
        "ValueError: response_format json_schema is not supported"
    )


def _machine_strings(project: Path) -> list[str]:
    found = [
        str(project),
        str(Path.home()),
        tempfile.gettempdir(),
        sys.prefix,
        str(Path(httpx.__file__).parent.parent),
        str(Path(json.__file__).parent.parent),
    ]
    return [place for place in found if len(place) > 1]


TESTS = dedent(
    """
    import pytest
    from pytest_opdecide import decision

    @pytest.mark.opdecide(cassette=True)
    def test_pick(runtime, tmp_path):
        notes = tmp_path / "notes.txt"
        assert decision.make(f"Read {notes}, then pick.", {"alpha": "A", "beta": "B"}) == "A"
    """
)


@pytest.fixture
def echoing_project(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    server: OpenAIServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> pytest.Pytester:
    monkeypatch.delenv("OPDECIDE_LIVE_URL", raising=False)
    # pytester makes the project the home folder: give the machine a home of its own.
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    write_ini(pytester, opdecide_base_url=server.url)
    pytester.makepyfile(test_paths=TESTS)

    def reply(request: Received) -> Reply:
        if isinstance(request.body, dict) and "response_format" in request.body:
            return Reply(text=_traceback(pytester.path), status=500)
        return default_reply(request)

    server.script(*[reply] * 4)
    return pytester


def test_a_recorded_cassette_names_no_path_of_the_machine(
    echoing_project: pytest.Pytester, server: OpenAIServer
) -> None:
    echoing_project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    refused, picked = server.completions
    assert refused.body.get("response_format")
    assert not picked.body.get("response_format")

    text = cassette(echoing_project, "test_paths", "test_pick").read_text(encoding="utf-8")
    for place in _machine_strings(echoing_project.path):
        assert place not in text, place
    error = interactions(cassette(echoing_project, "test_paths", "test_pick"))[0]
    message = error["response"]["body"]["string"]["json"]["error"]["message"]
    assert message.splitlines()[1:4] == [
        '  File "<SITE-PACKAGES>/httpx/__init__.py", line 12, in handle',
        '  File "<PYTHON-LIB>/json/__init__.py", line 3, in loads',
        '  File "<PROJECT>/server/app.py", line 40, in create_chat_completion',
    ]
    assert "<TMP>/llama-cache" in message
    assert "<HOME>/.cache/models" in message
    assert "<PYTEST-TMP>/test_pick0/notes.txt" in text  # the prompt's tmp_path


def test_the_cassette_replays_with_other_paths(
    echoing_project: pytest.Pytester, server: OpenAIServer, tmp_path: Path
) -> None:
    """Replayed with another pytest temporary folder (as on another machine), the prompt names
    another path: compared as stored, it still matches."""
    echoing_project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    server.reset()
    other = tmp_path / "elsewhere"
    echoing_project.runpytest(f"--basetemp={other}").assert_outcomes(passed=1)
    assert server.received == []
    assert os.fspath(other) not in "".join(
        p.read_text() for p in (echoing_project.path / "cassettes").rglob("*.yaml")
    )
