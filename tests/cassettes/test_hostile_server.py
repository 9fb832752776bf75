"""No secret lands, whatever a hostile server does with it, in every record mode.

The project below sends every kind of credential (an API key, vendor key headers, a cookie, a
header of a name no rule knows, key-like query parameters, a password in the base URL, secret
body fields, an environment variable's value) to :class:`HostileServer`, which echoes each of
them back in headers, JSON, JSON held in strings, streamed events (split across events), bytes
that are not UTF-8, and mints tokens of its own. After each recording the cassette is searched
for every secret in every encoding, and its replay must hand back placeholders.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
import yaml
from _hostile_server import PREFIX, SUFFIX, HostileServer

from ._support import KEY, dedent, interactions, write_ini

PLACEHOLDER = "<REDACTED>"

HEADER_SECRETS = {
    "api-key": "azure-openai-0c4f8e2b9d7a61f3",
    "Ocp-Apim-Subscription-Key": "apim-5e1d9c3b7a2f4e6d8b0a",
    "x-functions-key": "functions-7b3e9a1c5d2f8e4a",
    "x-goog-api-key": "goog-2a9d7c5e3b1f4a6c8e0d",
    "X-Amz-Security-Token": "amz-session-8f6d4b2a0c9e7f5d",
    "x-api-key": "anthropic-3c5e7a9b1d2f4c6e",
}
COOKIE_VALUE = "cookie-value-4d2b9f7e5c3a"
TENANT = "tenant-purple-otter-4411"
"""In a header whose name says nothing: only the configured-credential rule finds it."""
QUERY_SECRETS = {
    "subscription-key": "azure-sub-6b4d2f0e8c1a",
    "key": "google-query-9e7c5a3b1d",
    "X-Amz-Signature": "amzsig0f2e4d6c8b0a9e7d",
    "X-Amz-Credential": "AKIDEXAMPLE7Q3W",
}
URL_PASSWORD = 'p@ss:w/rd+"quoted"-91'
SESSION = "sess-body-7d1e3c9a5b2f"
CLIENT_SECRET = "client-secret-5f3a1c9e7b"
ENV_SECRET = "env-only-9c1e7b5a3d2f"
"""The value of ``MY_SERVICE_PASSWORD``: only the environment rule finds it."""

CONFTEST = dedent(
    f"""
    import os

    import pytest
    from pytest_opdecide.runtimes import OpenAICompatibleRuntime

    QUERY = {"&".join(f"{k}={quote(v)}" for k, v in QUERY_SECRETS.items())!r}

    @pytest.hookimpl
    def pytest_opdecide_runtime(request, settings):
        return OpenAICompatibleRuntime(
            settings.base_url + "?" + QUERY + "&api-version=2024-06-01",
            api_key={KEY!r},
            model=settings.model,
            default_headers={{
                **{HEADER_SECRETS!r},
                "Cookie": "sid=" + {COOKIE_VALUE!r},
                "X-Tenant": {TENANT!r},
            }},
            extra_body={{
                "session_token": {SESSION!r},
                "auth": {{"client_secret": {CLIENT_SECRET!r}}},
                "user": "alice",
                "note": "my password is " + os.environ["MY_SERVICE_PASSWORD"],
            }},
        )
    """
)

TESTS = dedent(
    f"""
    import json
    import os
    from pathlib import Path

    import httpx
    import pytest
    from pytest_opdecide import agent, decision
    from pytest_opdecide.runtimes import OpenAICompatibleRuntime

    OPTIONS = {{"alpha": "A", "beta": "B"}}
    SEEN = {{}}


    def lookup_order(order_id: str, api_key: str) -> str:
        \"\"\"Look up an order.\"\"\"
        SEEN["tool_api_key"] = api_key
        return f"Order {{order_id}}: shipped."


    @pytest.mark.opdecide(cassette=True)
    def test_hostile(runtime, opdecide_settings):
        assert decision.make("Pick one.", OPTIONS) == "A"
        base = httpx.URL(opdecide_settings.base_url)
        with_password = base.copy_with(username="alice", password={URL_PASSWORD!r})
        with OpenAICompatibleRuntime(
            str(with_password), model=opdecide_settings.model, stream=True
        ) as streamed:
            SEEN["streamed"] = streamed.exec("Say hello.")
        runtime.tool_turns = "native"  # the hostile server mints secrets in native tool calls
        outcome = agent("Order 1234?", tools=[lookup_order], choices=OPTIONS, runtime=runtime)
        assert outcome == "A"
        headers = {{"x-api-key": {KEY!r}, "X-Tenant": {TENANT!r}}}
        SEEN["blob"] = httpx.get(f"{{base}}/blob", headers=headers).content.decode("latin-1")
        SEEN["blob_json"] = httpx.get(f"{{base}}/blob.json", headers=headers).content.decode(
            "latin-1"
        )
        if os.environ.get("ONE_MORE"):
            assert decision.make("One more.", OPTIONS) == "A"
        Path("observed.json").write_text(json.dumps(SEEN))
    """
)


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    with HostileServer() as started:
        yield started


@pytest.fixture
def hostile_project(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, hostile: HostileServer
) -> pytest.Pytester:
    monkeypatch.delenv("OPDECIDE_LIVE_URL", raising=False)
    monkeypatch.setenv("MY_SERVICE_PASSWORD", ENV_SECRET)
    monkeypatch.setenv("TOKEN_LIMIT", "1")  # too short to be searched for
    monkeypatch.setenv("PASSWORD", "x")
    write_ini(pytester, opdecide_base_url=hostile.url)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_hostile=TESTS)
    return pytester


def secrets_sent() -> list[str]:
    """Every secret the project sends (the server's minted tokens come on top)."""
    return [
        KEY,
        *HEADER_SECRETS.values(),
        COOKIE_VALUE,
        TENANT,
        *QUERY_SECRETS.values(),
        URL_PASSWORD,
        f"alice:{URL_PASSWORD}",
        SESSION,
        CLIENT_SECRET,
        ENV_SECRET,
    ]


def encodings(secret: str) -> Iterator[str]:
    """``secret`` in every form a cassette could hold it (as text)."""
    yield from (secret, quote(secret, safe=""), quote(secret), quote_plus(secret))
    yield json.dumps(secret)[1:-1]
    yield json.dumps(json.dumps(secret)[1:-1])[1:-1]
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        encoded = encode(secret.encode()).decode()
        yield from (encoded, encoded.rstrip("="))


def byte_encodings(secret: str) -> Iterator[bytes]:
    yield from (form.encode() for form in encodings(secret))
    yield from (secret.encode("utf-16-le"), secret.encode("utf-16-be"))


def values(data: Any) -> Iterator[Any]:
    """Every string and bytes value (and key) of parsed YAML."""
    if isinstance(data, dict):
        for key, item in data.items():
            yield from values(key)
            yield from values(item)
    elif isinstance(data, list):
        for item in data:
            yield from values(item)
    elif isinstance(data, str | bytes):
        yield data


def leaves(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    if isinstance(data, dict):
        for key, item in data.items():
            yield from leaves(item, (*path, key))
    elif isinstance(data, list):
        for index, item in enumerate(data):
            yield from leaves(item, (*path, index))
    elif isinstance(data, str):
        yield path, data


def streamed_texts(data: Any) -> Iterator[str]:
    """What the events of each recorded stream add up to, field by field (a reply's content,
    a tool call's arguments): a secret split across events shows whole there."""
    if isinstance(data, dict):
        if isinstance(data.get("events"), list):
            joined: dict[tuple[Any, ...], str] = {}
            for event in data["events"]:
                for path, text in leaves(event):
                    joined[path] = joined.get(path, "") + text
            yield from joined.values()
        for item in data.values():
            yield from streamed_texts(item)
    elif isinstance(data, list):
        for item in data:
            yield from streamed_texts(item)


_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{12,}={0,2}")


def decoded_blobs(text: str) -> Iterator[bytes]:
    """What every base64-looking run of ``text`` decodes to (a secret inside a longer blob)."""
    for run in _BASE64.findall(text):
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                yield decode(run + "=" * (-len(run) % 4))
            except ValueError:
                continue


def assert_clean(path: Path, secrets: list[str]) -> None:
    """No secret in the cassette's text, in any value it parses to, in any binary value, or
    in anything base64 in it decodes to; no half of the key (split across events) either."""
    text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    parsed = list(values(data))
    strings = [text, *(v for v in parsed if isinstance(v, str)), *streamed_texts(data)]
    assert any("events" in s for s in strings[:1]), "the cassette holds a stream"
    blobs = [v for v in parsed if isinstance(v, bytes)]
    blobs += [blob for string in strings for blob in decoded_blobs(string)]
    for secret in secrets:
        for form in encodings(secret):
            found = [s for s in strings if form in s]
            assert not found, f"{secret!r} as {form!r} in {path}"
        for form_bytes in byte_encodings(secret):
            assert not [b for b in blobs if form_bytes in b], f"{secret!r} in a binary value"
    for half in (KEY[:20], KEY[20:]):
        assert half not in text, f"half of the key in {path}"


def observed(project: pytest.Pytester) -> dict[str, str]:
    data = json.loads((project.path / "observed.json").read_text())
    assert isinstance(data, dict)
    return data


CASSETTE = Path("cassettes/test_hostile/test_hostile.yaml")


def record(project: pytest.Pytester, mode: str, hostile: HostileServer) -> dict[str, str]:
    hostile.reset()  # the same ids as in the last recording: "all" replaces what it matches
    project.runpytest(f"--opdecide-record={mode}").assert_outcomes(passed=1)
    seen = observed(project)
    path = project.path / CASSETTE
    assert_clean(path, [*secrets_sent(), *hostile.minted])
    return seen


def test_the_server_really_received_and_echoed_every_secret(
    hostile_project: pytest.Pytester, hostile: HostileServer
) -> None:
    """Without this, a clean cassette would prove nothing."""
    seen = record(hostile_project, "once", hostile)
    first = hostile.received[0]
    for name, value in HEADER_SECRETS.items():
        assert first.headers[name.lower()] == value
    assert first.headers["authorization"] == f"Bearer {KEY}"
    assert first.headers["cookie"] == f"sid={COOKIE_VALUE}"
    assert first.headers["x-tenant"] == TENANT
    for name, value in QUERY_SECRETS.items():
        assert f"{name}={quote(value)}" in first.query
    assert first.body["session_token"] == SESSION
    assert first.body["auth"] == {"client_secret": CLIENT_SECRET}
    assert first.body["note"] == f"my password is {ENV_SECRET}"
    streamed = hostile.received[1]
    userinfo = base64.b64encode(f"alice:{URL_PASSWORD}".encode()).decode()
    assert streamed.headers["authorization"] == f"Basic {userinfo}"
    # What the test saw while recording: the real values, echoed and minted.
    assert f"alice:{URL_PASSWORD}" in seen["streamed"]
    assert seen["tool_api_key"] in hostile.minted
    assert KEY in seen["blob"]
    assert TENANT in seen["blob"]
    assert any(token in seen["blob_json"] for token in hostile.minted)
    assert len(hostile.minted) >= 20


def assert_replays_placeholders(project: pytest.Pytester, hostile: HostileServer) -> None:
    hostile.reset()
    project.runpytest().assert_outcomes(passed=1)
    assert hostile.received == []
    seen = observed(project)
    assert PLACEHOLDER in seen["streamed"]
    assert URL_PASSWORD not in seen["streamed"]
    assert seen["tool_api_key"] == PLACEHOLDER
    assert PLACEHOLDER in seen["blob"]
    assert PLACEHOLDER in seen["blob_json"]
    everything = json.dumps(seen)
    for secret in [*secrets_sent(), *hostile.minted]:
        assert secret not in everything


@pytest.mark.parametrize("mode", ["once", "new_episodes", "all", "rewrite"])
def test_no_secret_is_written_in_any_record_mode(
    hostile_project: pytest.Pytester,
    hostile: HostileServer,
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
) -> None:
    if mode != "once":
        record(hostile_project, "once", hostile)
        before = (hostile_project.path / CASSETTE).read_text()
        if mode == "new_episodes":
            monkeypatch.setenv("ONE_MORE", "1")  # one request the cassette does not hold
        record(hostile_project, mode, hostile)
        after = (hostile_project.path / CASSETTE).read_text()
        if mode == "new_episodes":
            assert after.count("- request:") == before.count("- request:") + 1
        assert after != before  # the file really was written again
    else:
        record(hostile_project, mode, hostile)
    assert_replays_placeholders(hostile_project, hostile)


def test_what_stays_readable(hostile_project: pytest.Pytester, hostile: HostileServer) -> None:
    """Short values and non-secret fields are left alone: ``TOKEN_LIMIT=1`` and ``PASSWORD=x``
    must not turn every ``1`` and ``x`` into a placeholder."""
    record(hostile_project, "once", hostile)
    text = (hostile_project.path / CASSETTE).read_text()
    data = yaml.safe_load(text)
    request = data["interactions"][0]["request"]
    assert request["body"]["json"]["user"] == "alice"
    assert request["body"]["json"]["messages"][0]["content"].startswith("Pick one.")
    assert request["uri"].endswith(
        "/v1/chat/completions?subscription-key=<REDACTED>&key=<REDACTED>"
        "&X-Amz-Signature=<REDACTED>&X-Amz-Credential=<REDACTED>&api-version=2024-06-01"
    )
    response = data["interactions"][0]["response"]
    assert response["body"]["string"]["json"]["usage"] == {
        "prompt_tokens": 10,
        "completion_tokens": response["body"]["string"]["json"]["usage"]["completion_tokens"],
        "total_tokens": response["body"]["string"]["json"]["usage"]["total_tokens"],
    }
    assert response["body"]["string"]["json"]["created"] == 1700000001
    for name in HEADER_SECRETS:
        assert request["headers"][name.lower()] == PLACEHOLDER
    assert request["headers"]["x-tenant"] == PLACEHOLDER  # by value: a configured header
    # The password of the base URL is gone from the recorded URL, not only hidden.
    streamed = data["interactions"][1]["request"]
    assert streamed["uri"].startswith("http://127.0.0.1:")
    assert "alice" not in streamed["uri"]


# --- the key split across the events of a stream -------------------------------------------

SPLIT_TESTS = dedent(
    f"""
    import json
    import os
    from pathlib import Path

    import pytest
    from pytest_opdecide.runtimes import OpenAICompatibleRuntime

    PLANS = json.loads(Path("plans.json").read_text())


    @pytest.mark.opdecide(cassette=True)
    @pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
    def test_split(opdecide_settings, stream):
        plans = PLANS + (["Send the key as: 3,11 escaped"] if os.environ.get("ONE_MORE") else [])
        with OpenAICompatibleRuntime(
            opdecide_settings.base_url, api_key={KEY!r}, stream=stream
        ) as runtime:
            replies = {{plan: runtime.exec(plan) for plan in plans}}
        Path(f"replies-{{stream}}.json").write_text(json.dumps(replies))
    """
)


def split_plans() -> list[str]:
    """Where the key is cut: at every offset in two pieces; at every offset in three pieces,
    the middle one of 1 to 7 characters; at every third offset with every character written as
    a ``\\u`` escape, in events framed with ``event:`` and ``id:`` lines, and both."""
    cuts = [f"{at}" for at in range(1, len(KEY))]
    cuts += [f"{at},{min(at + 1 + at % 7, len(KEY) - 1)}" for at in range(1, len(KEY) - 1)]
    plans = [f"Send the key as: {cut}" for cut in cuts]
    for flags in (" escaped", " framed", " escaped framed"):
        plans += [f"Send the key as: {at}{flags}" for at in range(1, len(KEY), 3)]
    return ["Send the key as:  escaped", *plans]  # not cut, escaped


_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


def key_pieces_in(text: str) -> list[str]:
    """The pieces of the key of 8 characters or more that ``text`` holds, raw or behind ``\\u``
    escapes."""
    unescaped = _ESCAPE.sub(lambda found: chr(int(found.group(1), 16)), text)
    return [
        KEY[start : start + 8]
        for start in range(len(KEY) - 7)
        if KEY[start : start + 8] in text or KEY[start : start + 8] in unescaped
    ]


def leaks(path: Path) -> list[str]:
    """Every place the cassette holds a piece of the key: its text, each value it parses to,
    and what each recorded stream's events add up to, field by field."""
    text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    places = [("file", text)]
    places += [("value", value) for value in values(data) if isinstance(value, str)]
    places += [("stream", joined) for joined in streamed_texts(data)]
    return sorted({f"{where}: {piece}" for where, s in places for piece in key_pieces_in(s)})


@pytest.fixture
def split_project(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, hostile: HostileServer
) -> pytest.Pytester:
    monkeypatch.delenv("OPDECIDE_LIVE_URL", raising=False)
    write_ini(pytester, opdecide_base_url=hostile.url)
    pytester.makepyfile(test_split=SPLIT_TESTS)
    (pytester.path / "plans.json").write_text(json.dumps(split_plans()))
    return pytester


def record_split(project: pytest.Pytester, mode: str) -> dict[str, list[str]]:
    """Record in ``mode``; the leaks of each cassette (streamed and not)."""
    project.runpytest(f"--opdecide-record={mode}").assert_outcomes(passed=2)
    found = {}
    for stream in ("whole", "streamed"):
        [path] = (project.path / "cassettes" / "test_split").glob(f"test_split-{stream}-*.yaml")
        assert len(interactions(path)) >= len(split_plans())
        found[stream] = leaks(path)
    for stream in ("False", "True"):  # what the runtime got while recording: the real key
        replies = json.loads((project.path / f"replies-{stream}.json").read_text())
        recorded = [KEY in reply for reply in replies.values()]
        assert recorded == [True] * len(recorded) if mode != "new_episodes" else recorded[-1]
    return found


@pytest.mark.parametrize("mode", ["once", "new_episodes", "all", "rewrite"])
def test_a_key_split_across_events_is_never_written(
    split_project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """The runtime's own key, echoed back cut at every offset, in two and in three events, and
    written as ``\\u`` escapes: no piece of it lands, in any record mode, streamed or not."""
    if mode != "once":
        assert record_split(split_project, "once") == {"whole": [], "streamed": []}
        if mode == "new_episodes":
            monkeypatch.setenv("ONE_MORE", "1")
    assert record_split(split_project, mode) == {"whole": [], "streamed": []}
    split_project.runpytest().assert_outcomes(passed=2)  # replayed
    for stream in ("False", "True"):
        replies = json.loads((split_project.path / f"replies-{stream}.json").read_text())
        assert set(replies.values()) == {f"{PREFIX}{PLACEHOLDER}{SUFFIX}"}, stream
