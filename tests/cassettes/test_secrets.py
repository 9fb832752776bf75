"""Safe by default: no credential reaches a cassette, whatever carries it."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from _openai_server import OpenAIServer, Reply

from ._support import KEY, cassette, contents, dedent, error_text, interactions, write_ini

OTHER_KEY = "sk-live-9Xw2Ec4Rv6Tb8Yn1Um3Io5Pa7Sd0Fg2Hj"
"""A key the client never sent: the server puts it in a reply (a leak only the text net sees)."""

SESSION = "sess_7d1e3c9a5b2f4e6d8c0a"
PLAIN_SECRET = "correct-horse-battery-staple-42"
"""A secret with no key-like shape: only field scrubbing, not the text net, can catch it."""
COOKIE = "sid=c0ffee4242deadbeef1337"

CONFTEST = dedent(
    f"""
    import pytest
    from pytest_opdecide.runtimes import OpenAICompatibleRuntime

    KEY = {KEY!r}

    @pytest.hookimpl
    def pytest_opdecide_runtime(request, settings):
        return OpenAICompatibleRuntime(
            settings.base_url + "?api_key=" + KEY + "&api-version=2024-06-01",
            api_key=KEY,
            model=settings.model,
            default_headers={{"api-key": KEY, "x-api-key": KEY, "Cookie": {COOKIE!r}}},
            extra_body={{"session_token": {SESSION!r}, "user": "alice"}},
        )
    """
)

TESTS = dedent(
    """
    import pytest
    from pytest_opdecide import decision

    @pytest.mark.opdecide(cassette=True, scrub_fields=["session_token"])
    def test_pick(runtime):
        assert decision.make("Pick one.", {"alpha": "A", "beta": "B"}) == "A"
    """
)


@pytest.fixture
def leaky() -> Iterator[OpenAIServer]:
    """A server that echoes credentials back and sets a cookie."""
    with OpenAIServer(echo_secrets=True, set_cookie=f"{COOKIE}; Path=/; HttpOnly") as started:
        yield started


@pytest.fixture
def secret_project(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, leaky: OpenAIServer
) -> pytest.Pytester:
    monkeypatch.delenv("OPDECIDE_LIVE_URL", raising=False)
    write_ini(pytester, opdecide_base_url=leaky.url)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_secret=TESTS)
    return pytester


def test_the_file_never_holds_a_secret(
    secret_project: pytest.Pytester, leaky: OpenAIServer
) -> None:
    leaky.script(Reply(text=f'{{"call": "alpha"}} (internal note: {OTHER_KEY})'))
    secret_project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)

    # The server really received (and echoed) every secret...
    sent = leaky.completions[0]
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["api-key"] == sent.headers["x-api-key"] == KEY
    assert sent.headers["cookie"] == COOKIE
    assert f"api_key={KEY}" in sent.query
    assert sent.body["session_token"] == SESSION

    # ...and the cassette holds none of them.
    path = cassette(secret_project, "test_secret", "test_pick")
    text = path.read_text(encoding="utf-8")
    for secret in (KEY, OTHER_KEY, SESSION, COOKIE, "c0ffee4242deadbeef1337", "sk-"):
        assert secret not in text
    assert text.count("<REDACTED>") >= 8

    (interaction,) = interactions(path)
    request, response = interaction["request"], interaction["response"]
    for name in ("authorization", "api-key", "x-api-key", "cookie"):
        assert request["headers"][name] == "<REDACTED>"
    assert response["headers"]["set-cookie"] == "<REDACTED>"
    assert request["uri"].endswith("?api_key=<REDACTED>&api-version=2024-06-01")
    assert request["body"]["json"]["session_token"] == "<REDACTED>"
    assert request["body"]["json"]["user"] == "alice"  # only the configured field
    echo = response["body"]["string"]["json"]["echo"]
    assert echo["headers"] == dict.fromkeys(
        ["authorization", "api-key", "x-api-key", "cookie"], "<REDACTED>"
    )
    assert KEY not in echo["query"]


def test_the_scrubbed_cassette_still_replays(
    secret_project: pytest.Pytester, leaky: OpenAIServer
) -> None:
    """The stored request holds placeholders where the replayed one holds the secrets: the
    query and body matchers compare them as stored."""
    secret_project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    leaky.reset()
    secret_project.runpytest().assert_outcomes(passed=1)
    assert leaky.received == []


def test_error_messages_do_not_show_the_key(
    secret_project: pytest.Pytester, leaky: OpenAIServer
) -> None:
    secret_project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    secret_project.makepyfile(test_secret=TESTS.replace("Pick one.", "Pick another."))
    result = secret_project.runpytest()
    result.assert_outcomes(failed=1)
    assert "api_key=<REDACTED>" in error_text(result)
    assert KEY not in result.stdout.str()
    assert KEY not in "".join(contents(secret_project).values())


def test_default_body_fields_are_scrubbed(
    secret_project: pytest.Pytester, leaky: OpenAIServer
) -> None:
    secret_project.makeconftest(
        CONFTEST.replace('"session_token": ', '"api_key": ').replace(
            ', "user": "alice"', ', "nested": {"password": "hunter2-hunter2"}'
        )
    )
    secret_project.makepyfile(test_secret=TESTS.replace(', scrub_fields=["session_token"]', ""))
    secret_project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    text = cassette(secret_project, "test_secret", "test_pick").read_text()
    assert SESSION not in text
    assert "hunter2-hunter2" not in text
    assert "password: <REDACTED>" in text


def test_configured_fields_add_to_the_built_in_ones(
    secret_project: pytest.Pytester, leaky: OpenAIServer
) -> None:
    """Naming one more field must not unprotect the defaults (api_key in a body, here)."""
    conftest = CONFTEST.replace('"user": "alice"', f'"user": "alice", "api_key": {PLAIN_SECRET!r}')
    secret_project.makeconftest(conftest)
    leaky.script(Reply(text='{"call": "alpha"}'))
    secret_project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    assert leaky.completions[0].body["api_key"] == PLAIN_SECRET  # it really was sent
    written = "\n".join(p.read_text() for p in secret_project.path.rglob("*.yaml"))
    assert PLAIN_SECRET not in written
    assert SESSION not in written  # the configured field, too


URL_PASSWORD = "url-password-8e6c4a2f0d"
USERINFO_CONFTEST = dedent(
    f"""
    import httpx
    import pytest
    from pytest_opdecide.runtimes import OpenAICompatibleRuntime

    @pytest.hookimpl
    def pytest_opdecide_runtime(request, settings):
        url = httpx.URL(settings.base_url).copy_with(username="bob", password={URL_PASSWORD!r})
        return OpenAICompatibleRuntime(
            str(url) + "?api_key=" + {KEY!r}, model=settings.model
        )
    """
)


@pytest.fixture
def logging_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx's and vcrpy's loggers enabled, whatever ran before in this process (a
    ``logging.config.dictConfig`` call disables every logger that exists)."""
    for name in ("httpx", "vcr", "vcr.cassette", "vcr.stubs", "vcr.stubs.httpx_stubs"):
        monkeypatch.setattr(logging.getLogger(name), "disabled", False)


@pytest.mark.parametrize("trace", ["auto", "short", "native"])
@pytest.mark.usefixtures("logging_on")
def test_no_message_log_or_report_shows_a_credential(
    secret_project: pytest.Pytester, leaky: OpenAIServer, trace: str
) -> None:
    """Credentials in the base URL (user info, a query key) stay out of the recorded URL,
    the mismatch message, captured logs (vcrpy and httpx log every request) and junit XML.

    Not with ``--tb=long`` or ``--showlocals``: they print every frame's arguments, and the
    HTTP library's frames hold the request as it is sent (the docs say so)."""
    secret_project.makeconftest(USERINFO_CONFTEST)
    leaky.script(Reply(text=f'{{"call": "alpha"}} (echo: {URL_PASSWORD})'))
    failing = TESTS + "    assert False, 'the test failed after its requests'\n"
    secret_project.makepyfile(test_secret=failing)
    report = secret_project.path / "report.xml"
    options = ["-o", "log_level=DEBUG", f"--tb={trace}", f"--junitxml={report}", "-rA"]
    recording = secret_project.runpytest("--opdecide-record=once", *options)
    recording.assert_outcomes(failed=1)
    assert leaky.completions[0].headers["authorization"].startswith("Basic ")  # it was sent
    shown = "\n".join(recording.outlines + recording.errlines) + report.read_text()
    # httpx's request line was captured and shown, redacted.
    assert "HTTP Request: POST http://127.0.0.1:" in shown
    assert "?api_key=<REDACTED>" in shown

    secret_project.makepyfile(test_secret=TESTS)
    secret_project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    written = cassette(secret_project, "test_secret", "test_pick").read_text()
    assert "bob:" not in written
    (interaction,) = interactions(cassette(secret_project, "test_secret", "test_pick"))
    assert interaction["request"]["uri"].startswith("http://127.0.0.1:")

    secret_project.makepyfile(test_secret=TESTS.replace("Pick one.", "Pick another."))
    mismatch = secret_project.runpytest(*options)
    mismatch.assert_outcomes(failed=1)
    assert "CassetteMismatch" in "\n".join(mismatch.outlines)
    shown += "\n".join(mismatch.outlines + mismatch.errlines) + report.read_text()
    for secret in (
        URL_PASSWORD,
        KEY,
        f"bob:{URL_PASSWORD}",
        "Ym9iOnVybC1wYXNzd29yZC04ZTZjNGEyZjBk",
    ):
        assert secret not in shown, secret
    assert "bob:" not in shown
