"""The scrubbing rules one by one: names, values, forms, and what is left alone."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from pytest_opdecide._cassettes._scrub import (
    Redaction,
    Scrubber,
    as_stored,
    scrub_data,
    secret_field,
    shown_uri,
)
from pytest_opdecide._http._credentials import credential_values, registered
from pytest_opdecide._http._redaction import SECRET_HEADERS, secret_header, secret_param
from pytest_opdecide._http._secrets import MIN_SECRET_LENGTH, PLACEHOLDER, Secrets, env_secrets
from pytest_opdecide.questions import OpenAICompatibleDecisionProvider, openai_compatible
from pytest_opdecide.runtimes import OpenAICompatibleRuntime

SECRET = "s3cr3t-value-for/tests+1"


@pytest.mark.parametrize(
    "name",
    [
        *sorted(SECRET_HEADERS),
        "Authorization",
        "Ocp-Apim-Subscription-Key",
        "x-functions-key",
        "X-Goog-Api-Key",
        "X-Amz-Security-Token",
        "x-session-token",
        "X-Custom-Secret",
        "Helicone-Auth",
    ],
)
def test_credential_headers(name: str) -> None:
    assert secret_header(name)


@pytest.mark.parametrize(
    "name", ["content-type", "accept", "x-request-id", "openai-organization", "anthropic-version"]
)
def test_other_headers(name: str) -> None:
    assert not secret_header(name)


@pytest.mark.parametrize(
    "name",
    [
        "subscription-key",  # Azure API Management
        "key",  # Google
        "X-Amz-Signature",
        "X-Amz-Credential",
        "X-Amz-Security-Token",
        "sig",  # Azure SAS
        "code",  # Azure Functions
        "api_key",
        "access_token",
        "client_secret",
    ],
)
def test_credential_query_parameters(name: str) -> None:
    assert secret_param(name)


@pytest.mark.parametrize("name", ["api-version", "q", "model", "X-Amz-Date", "limit"])
def test_other_query_parameters(name: str) -> None:
    assert not secret_param(name)


@pytest.mark.parametrize(
    "name",
    [
        "api_key",
        "apiKey",
        "x-api-key",
        "openai_api_key",
        "access_token",
        "refresh_token",
        "id_token",
        "session_token",
        "client_secret",
        "clientSecret",
        "AWS_SECRET_ACCESS_KEY",
        "password",
        "db_password",
        "passphrase",
        "private_key",
        "authorization",
        "credentials",
        "token",
    ],
)
def test_secret_fields(name: str) -> None:
    assert secret_field(name)


@pytest.mark.parametrize(
    "name",
    ["max_tokens", "prompt_tokens", "completion_tokens", "total_tokens", "key", "signature"],
)
def test_other_fields(name: str) -> None:
    assert not secret_field(name)


def test_a_token_of_text_is_not_a_credential() -> None:
    """``logprobs`` name each token of the reply ``token``: those stay readable."""
    body = {
        "choices": [{"logprobs": {"content": [{"token": "A", "top_logprobs": [{"token": "B"}]}]}}],
        "token": "minted-session-token",
    }
    scrubbed = Scrubber(secrets=Secrets()).json_value(body)
    assert scrubbed["choices"] == body["choices"]
    assert scrubbed["token"] == PLACEHOLDER


def test_fields_are_replaced_when_they_hold_a_value_and_searched_when_they_hold_more() -> None:
    """A tool's schema names a parameter ``api_key``: the schema stays, the value goes."""
    body = {
        "tools": [{"parameters": {"properties": {"api_key": {"type": "string"}}}}],
        "password": 12345678,
        "credentials": {"user": "alice", "secret": "hunter2-hunter2"},
        "api_key": "",
    }
    scrubbed = Scrubber(secrets=Secrets()).json_value(body)
    assert scrubbed == {
        "tools": body["tools"],
        "password": PLACEHOLDER,
        "credentials": {"user": "alice", "secret": PLACEHOLDER},
        "api_key": "",
    }


def test_a_secret_field_inside_a_json_encoded_string() -> None:
    arguments = json.dumps({"order": "A1", "api_key": SECRET})
    scrubber = Scrubber(secrets=Secrets())
    scrubbed = scrubber.json_value({"tool_calls": [{"function": {"arguments": arguments}}]})
    inner = json.loads(scrubbed["tool_calls"][0]["function"]["arguments"])
    assert inner == {"order": "A1", "api_key": PLACEHOLDER}
    assert SECRET in scrubber.seen  # and searched for everywhere else


def test_the_environment_rule() -> None:
    environ = {
        "OPENAI_API_KEY": "sk-proj-abcdefgh12345678",
        "GH_TOKEN": "ghp_abcdefghijklmnop",
        "DB_PASSWORD": "correct horse battery",
        "MY_SECRET": "hunter2-hunter2",
        "TOKEN_LIMIT": "1",  # too short
        "PASSWORD": "x",  # too short
        "API_KEY_ID": "12345678",  # no letter: not worth searching for
        "TOKENIZERS_PARALLELISM": "false",
        "PWD": "/home/someone/project",  # the name says nothing
        "HOME": "/home/someone",
    }
    assert sorted(env_secrets(environ)) == sorted(
        [
            "sk-proj-abcdefgh12345678",
            "ghp_abcdefghijklmnop",
            "correct horse battery",
            "hunter2-hunter2",
        ]
    )


def test_short_and_common_values_are_not_searched_for() -> None:
    assert MIN_SECRET_LENGTH == 8
    secrets = Secrets(["x", "1", "abc1234", "12345678", "REDACTED", "<REDACTED>"])
    assert secrets.values == frozenset()
    text = "x = 1; abc1234 12345678 <REDACTED>"
    assert secrets.text(text) == text


def test_a_secret_inside_a_longer_one_gives_way_to_it() -> None:
    secrets = Secrets(["abcdefgh", "abcdefgh12345678", "zz-abcdefgh"])
    assert secrets.text("a abcdefgh12345678 b abcdefgh c zz-abcdefgh") == (
        f"a {PLACEHOLDER} b {PLACEHOLDER} c {PLACEHOLDER}"
    )


@pytest.mark.parametrize(
    "form",
    [
        SECRET,
        "s3cr3t-value-for%2Ftests%2B1",  # URL-encoded
        "s3cr3t-value-for%2ftests%2b1",  # lower-case escapes
        "s3cr3t-value-for/tests%2B1",  # quote() keeps the slash
        base64.b64encode(SECRET.encode()).decode(),
        base64.urlsafe_b64encode(SECRET.encode()).decode().rstrip("="),
    ],
)
def test_every_form_of_a_secret_is_replaced(form: str) -> None:
    assert Secrets([SECRET]).text(f"before {form} after") == f"before {PLACEHOLDER} after"


def test_json_escaped_forms() -> None:
    secret = 'pa"ss\\word-é'
    escaped = json.dumps(secret)[1:-1]
    twice = json.dumps(escaped)[1:-1]
    secrets = Secrets([secret])
    assert secrets.text(f"a {escaped} b {twice} c") == f"a {PLACEHOLDER} b {PLACEHOLDER} c"


def recoverable(text: str, secret: bytes) -> bool:
    """Whether any 6 bytes of ``secret`` can be read back from base64 anywhere in ``text``."""
    for start in range(len(text)):
        for end in range(start + 8, len(text) + 1, 4):
            try:
                decoded = base64.b64decode(text[start:end], validate=True)
            except ValueError:
                continue
            if any(secret[i : i + 6] in decoded for i in range(len(secret) - 5)):
                return True
    return False


@pytest.mark.parametrize("before", [b"", b"a", b"ab", b"abc", b"abcd"])
def test_a_secret_inside_a_base64_blob_at_any_offset(before: bytes) -> None:
    blob = base64.b64encode(before + SECRET.encode() + b" and more").decode()
    assert recoverable(blob, SECRET.encode())
    scrubbed = Secrets([SECRET]).text(blob)
    assert PLACEHOLDER in scrubbed
    assert not recoverable(scrubbed, SECRET.encode())


def test_basic_auth_and_its_halves() -> None:
    credentials = "alice:correct-horse-42"
    header = "Basic " + base64.b64encode(credentials.encode()).decode()
    scrubber = Scrubber(secrets=Secrets())
    scrubber.remember(header, "Authorization")
    assert {credentials, "correct-horse-42", header} <= scrubber.seen
    text = f"echo {credentials} and {base64.b64encode(credentials.encode()).decode()}"
    assert scrubber.secrets.text(text) == f"echo {PLACEHOLDER} and {PLACEHOLDER}"


def test_sigv4_authorization_yields_the_key_id_and_the_signature() -> None:
    header = (
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE77/20240101/us-east-1/s3/aws4_request, "
        "SignedHeaders=host;x-amz-date, Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe"
    )
    scrubber = Scrubber(secrets=Secrets())
    scrubber.remember(header, "Authorization")
    assert "AKIDEXAMPLE77" in scrubber.seen
    assert "fe5f80f77d5fa3beca038a248ff027d0445342fe" in scrubber.seen
    assert "x-amz-date" not in scrubber.seen


def test_cookies_yield_their_values_not_their_attributes() -> None:
    scrubber = Scrubber(secrets=Secrets())
    scrubber.remember("session=abcdef123456; Path=/; HttpOnly; SameSite=Lax", "Set-Cookie")
    scrubber.remember("a=first-cookie-1; b=second-cookie-2", "Cookie")
    assert {"abcdef123456", "first-cookie-1", "second-cookie-2"} <= scrubber.seen
    assert "SameSite=Lax" not in scrubber.seen


def test_a_key_split_across_events_is_replaced_whole() -> None:
    chunks = ["The key is s3cr3t-v", "alue-for/t", "ests+1, keep it."]
    events = "".join(
        f"data: {json.dumps({'choices': [{'delta': {'content': chunk}}]})}\n\n" for chunk in chunks
    )
    request: dict[str, Any] = {"uri": "http://h/v1", "headers": {}, "body": None}
    response: dict[str, Any] = {
        "status": {"code": 200, "message": "OK"},
        "headers": {"content-type": ["text/event-stream"]},
        "body": {"string": (events + "data: [DONE]\n\n").encode()},
    }
    Scrubber(secrets=Secrets([SECRET])).interactions([(request, response)])
    text = response["body"]["string"].decode()
    contents = [
        json.loads(line[6:])["choices"][0]["delta"]["content"]
        for line in text.split("\n\n")
        if line.startswith("data: {")
    ]
    assert contents == [f"The key is {PLACEHOLDER}", "", ", keep it."]
    assert "".join(contents) == f"The key is {PLACEHOLDER}, keep it."


def scrubbed_stream(body: str, secrets: Secrets) -> str:
    """An event-stream response body as a cassette would store it."""
    request: dict[str, Any] = {"uri": "http://h/v1", "headers": {}, "body": None}
    response: dict[str, Any] = {
        "status": {"code": 200, "message": "OK"},
        "headers": {"content-type": ["text/event-stream"]},
        "body": {"string": body.encode()},
    }
    Scrubber(secrets=secrets).interactions([(request, response)])
    text: str = response["body"]["string"].decode()
    return text


def contents_of(text: str) -> list[str]:
    """The ``content`` of each event's delta, framed or not."""
    datas = [line[6:] for line in text.split("\n") if line.startswith("data: {")]
    return [json.loads(data)["choices"][0]["delta"]["content"] for data in datas]


def test_a_key_whose_first_piece_looks_like_a_key_is_replaced_whole() -> None:
    """``sk-`` and 16 characters are key-shaped on their own: were each event searched first,
    that piece would be replaced and the rest of the key left in the next event."""
    key = "sk-test-4f9Qz7Lm2Xc8Vb1Nw6Ty3Hu5Jk0Pa9Sd"
    chunks = [f"The key is {key[:30]}", key[30:], ", keep it."]
    events = "".join(
        f"data: {json.dumps({'choices': [{'delta': {'content': chunk}}]})}\n\n" for chunk in chunks
    )
    for secrets in (Secrets([key]), Secrets()):  # a known key, and one only its shape gives away
        contents = contents_of(scrubbed_stream(events, secrets))
        assert contents == [f"The key is {PLACEHOLDER}", "", ", keep it."]


def test_a_key_split_across_framed_events_is_replaced_whole() -> None:
    """Events with ``event:`` and ``id:`` lines (Anthropic's framing) are stored as they came,
    and searched as the others: across them, their data decoded (``\\u`` escapes too)."""
    chunks = ["The key is s3cr3t-v", "alue-for/t", "ests+1, keep it."]
    escaped = [
        json.dumps({"choices": [{"delta": {"content": chunk}}]}).replace(
            json.dumps(chunk), '"' + "".join(f"\\u{ord(c):04x}" for c in chunk) + '"'
        )
        for chunk in chunks
    ]
    events = "".join(
        f"event: delta\nid: {number}\ndata: {data}\n\n" for number, data in enumerate(escaped)
    )
    text = scrubbed_stream(events, Secrets([SECRET]))
    assert contents_of(text) == [f"The key is {PLACEHOLDER}", "", ", keep it."]
    assert [line for line in text.split("\n") if not line.startswith("data:")] == [
        "event: delta",
        "id: 0",
        "",
        "event: delta",
        "id: 1",
        "",
        "event: delta",
        "id: 2",
        "",
        "",
    ]


def test_framed_events_without_a_secret_stay_as_they_came() -> None:
    events = 'event: delta\nid: 7\ndata: {"choices":  [{"delta": {"content": "hi"}}]}\n\n'
    assert scrubbed_stream(events, Secrets([SECRET])) == events


def test_bytes_that_are_not_utf8() -> None:
    body = b"\xff\xfe" + SECRET.encode("utf-16-le") + b"\x00|" + SECRET.encode() + b"\xe9"
    scrubbed = Secrets([SECRET]).data(body)
    assert scrubbed == b"\xff\xfe<REDACTED>\x00|<REDACTED>\xe9"


def test_replay_compares_what_the_cassette_stores() -> None:
    """What a request looks like stored is what matching makes of the request as sent."""
    body = {
        "messages": [{"role": "user", "content": f"use {SECRET}"}],
        "api_key": "hunter2-hunter2",
        "tool": {"arguments": json.dumps({"api_key": "inner-secret-1"})},
    }
    request: dict[str, Any] = {"uri": "http://h/v1", "headers": {}, "body": json.dumps(body)}
    response: dict[str, Any] = {"status": {}, "headers": {}, "body": {"string": b""}}
    Scrubber(secrets=Secrets([SECRET])).interactions([(request, response)])
    stored = json.loads(request["body"])
    assert as_stored(body, Redaction(secrets=Secrets([SECRET]))) == stored
    assert as_stored(stored, Redaction(secrets=Secrets([SECRET]))) == stored  # stable


def test_shown_urls() -> None:
    shown = shown_uri(
        "https://user:pa%2Fss@host:8443/v1/chat?api_key=k1&sig=k2&limit=5",
        Secrets(),
    )
    assert shown == "https://host:8443/v1/chat?api_key=<REDACTED>&sig=<REDACTED>&limit=5"
    assert shown_uri(f"https://host/k/{SECRET}/v1", Secrets([SECRET])) == (
        f"https://host/k/{PLACEHOLDER}/v1"
    )


def test_what_a_client_configuration_registers() -> None:
    values = credential_values(
        api_key="sk-abc",
        headers={
            "Content-Type": "application/json",
            "anthropic-version": "2023-06-01",
            "X-Tenant": "tenant-1",
            "api-key": "azure-1",
        },
        url="https://bob:pa%2Fss@host/v1",
    )
    assert "application/json" not in values
    assert "2023-06-01" not in values
    assert {"sk-abc", "tenant-1", "azure-1", "bob", "pa/ss", "bob:pa/ss"} <= set(values)


def test_recordings_hold_no_secret_either() -> None:
    data = {"reply": {"tool_calls": [{"arguments": {"api_key": "plain-secret-9"}}]}}
    scrubbed = scrub_data({**data, "text": f"echo plain-secret-9 and {SECRET}"}, Secrets([SECRET]))
    assert scrubbed == {
        "reply": {"tool_calls": [{"arguments": {"api_key": PLACEHOLDER}}]},
        "text": f"echo {PLACEHOLDER} and {PLACEHOLDER}",
    }


def test_runtimes_and_providers_register_what_they_are_configured_with() -> None:
    OpenAICompatibleRuntime(
        "https://rt-user:rt-password-1@host/v1",
        api_key="rt-key-0a1b2c3d",
        default_headers={"X-Gateway": "rt-gateway-9f8e", "Accept": "application/json"},
    )
    OpenAICompatibleDecisionProvider(
        api_key="qp-key-4d5e6f7a",
        base_url="https://qp-user:qp-password-2@host/v1",
        default_headers={"api-key": "qp-azure-1b2c"},
    )
    openai_compatible.resolve(environ={"OPENAI_API_KEY": "qp-env-key-8c9d0e"})
    assert {
        "rt-key-0a1b2c3d",
        "rt-gateway-9f8e",
        "rt-password-1",
        "rt-user:rt-password-1",
        "qp-key-4d5e6f7a",
        "qp-azure-1b2c",
        "qp-password-2",
        "qp-env-key-8c9d0e",
    } <= registered()
    assert "application/json" not in registered()


@pytest.mark.parametrize(
    "body",
    [
        '{"note": "nothing secret", "n": 1}',
        '{"note": "key hunter2hunter2 here"}',
        '{"hunter2hunter2": 1}',
        '{"note": "line\\nhunter2hunter2"}',  # an escape before the secret
        '{"note": "hunter\\u0032hunter2"}',  # the secret spelt with an escape
        '{"note": "sk-abcdefghijklmnopqrstuvwx"}',
        '["plain", "sk-abcdefghijklmnopqrst"]',
        "hunter2hunter2 in text",
    ],
)
def test_a_body_is_scrubbed_as_its_strings_are(body: str) -> None:
    """A body whose text holds nothing to replace (and no escape) is passed over unparsed; any
    other is scrubbed string by string, with the same result as reading every string."""
    from pytest_opdecide._cassettes import _scrub, _scrub_json

    secrets = Secrets(["hunter2hunter2"])
    try:
        parsed = json.loads(body)
        scrubbed = _scrub_json.by_value(parsed, secrets)
        expected = body if scrubbed is parsed else json.dumps(scrubbed, ensure_ascii=False)
    except ValueError:
        expected = secrets.text(body)
    out = _scrub._body_by_value(body, secrets, {})
    assert out == expected
    assert "hunter2hunter2" not in out
    assert "abcdefghijklmnopqrst" not in out


@pytest.mark.parametrize("as_bytes", [True, False], ids=["bytes", "text"])
def test_a_secret_field_beside_an_escaped_lone_surrogate_is_replaced(as_bytes: bool) -> None:
    # The body's JSON escapes a lone UTF-16 surrogate, which no UTF-8 text can hold: the
    # rewritten body keeps it escaped, and the secret is gone.
    text = '{"token": "minted-session-token", "text": "\\ud800 lone"}'
    body: Any = text.encode() if as_bytes else text
    out = Scrubber(secrets=Secrets()).body(body, {"content-type": "application/json"})
    written = out.decode() if as_bytes else out
    assert "minted-session-token" not in written
    assert json.loads(written) == {"token": PLACEHOLDER, "text": "\ud800 lone"}
    written.encode()  # writable as UTF-8
