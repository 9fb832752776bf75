"""No error message of either HTTP stack shows a credential its request carried, and every
reader of secret header names reads the one list (``pytest_opdecide._http._redaction``).

A hostile server echoes everything the request carried (the API key, each secret header's
value, the URL's user info), raw, URL-encoded and in base64, in its error body, its reason
phrase and its headers, for every error status and for a 200 whose body is no completion. The
runtime and the decision provider each turn that into an exception; nothing the exception
shows (``str``, ``repr``, its string attributes, its chain, its traceback) may hold a secret.
"""

from __future__ import annotations

import ast
import base64
import logging
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import httpx
import pytest

from pytest_opdecide._cassettes import _log_filters, _scrub
from pytest_opdecide._cassettes._log_filters import credentials_kept_out_of_logs
from pytest_opdecide._cassettes._scrub import Scrubber
from pytest_opdecide._http import _redaction
from pytest_opdecide._http._redaction import SECRET_HEADERS, secret_header
from pytest_opdecide._http._secrets import PLACEHOLDER, Secrets
from pytest_opdecide.questions import (
    BooleanCriteria,
    BooleanQuestion,
    DecisionRequest,
    OpenAICompatibleDecisionProvider,
    ProviderError,
    _openai_provider,
)
from pytest_opdecide.runtimes import OpenAICompatibleRuntime, RuntimeCallError, _error_mapping

ROOT = Path(__file__).parents[1]
ORIGIN = "http://127.0.0.1:9"
KEY = "sk-opdecide-hostile-4f9c2e7a81d3b6e0"

PATTERN_NAMED = ["x-session-token", "X-Custom-Auth-Token", "X-Amz-Security-Token", "Helicone-Auth"]
"""Headers no vendor list needs to name: their names say what they carry."""
HEADER_NAMES = [*sorted(SECRET_HEADERS), *PATTERN_NAMED]
STATUSES = [400, 401, 403, 404, 429, 500, 200]
"""Every error status a stack has a class or code for, and a 200 that is no completion."""

USER, PASSWORD = "opdecide-user", "pa55/w0rd+Zq-7"
TENANT = "tenant-purple-otter-4411"
"""A default header whose name says nothing: a credential because it was configured."""

_NOT_ECHOED = {"host", "content-length", "content-type", "accept", "accept-encoding"}
_NOT_ECHOED |= {"connection", "user-agent"}


def header_value(name: str) -> str:
    """A secret per header name, with characters that URL-encoding and base64 change."""
    return f"{name.lower()}-v4lue/s3cr3t+91"


def configuration(name: str) -> tuple[dict[str, Any], dict[str, str]]:
    """What the client is built with for one case, and the secrets it carries, by label."""
    if name == "url-userinfo":
        userinfo = f"{quote(USER, safe='')}:{quote(PASSWORD, safe='')}"
        config: dict[str, Any] = {"base_url": f"http://{userinfo}@127.0.0.1:9/v1"}
        return config, {"api key": KEY, "password": PASSWORD, "user:password": f"{USER}:{PASSWORD}"}
    if name == "basic-auth":  # the password is inside the value, in base64
        basic = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        config = {"default_headers": {"Authorization": f"Basic {basic}"}}
        return config, {"password": PASSWORD, "user:password": f"{USER}:{PASSWORD}"}
    if name == "X-Tenant":
        return {"default_headers": {name: TENANT}}, {"api key": KEY, name: TENANT}
    secrets = {name: header_value(name)}
    config = {"default_headers": {name: header_value(name)}}
    if name.lower() != "authorization":  # an api_key would take the Authorization header
        secrets["api key"] = KEY
    return config, secrets


CONFIGURATIONS = [*HEADER_NAMES, "url-userinfo", "basic-auth", "X-Tenant"]


def echoed(request: httpx.Request) -> list[str]:
    """Everything a hostile server can read back: header values (Basic auth decoded too),
    then the URL."""
    values = []
    for name, value in request.headers.items():
        if name in _NOT_ECHOED:
            continue
        values.append(value)
        scheme, _, rest = value.partition(" ")
        if scheme.lower() == "basic":
            values.append(base64.b64decode(rest).decode())
    return [*values, str(request.url)]


def forms(value: str) -> list[str]:
    """``value`` as a server may write it back: raw, URL-encoded, base64 (standard, URL-safe)."""
    data = value.encode()
    return [
        value,
        quote(value, safe=""),
        quote_plus(value),
        base64.b64encode(data).decode(),
        base64.urlsafe_b64encode(data).decode(),
    ]


def hostile(status: int) -> httpx.MockTransport:
    """A server that answers ``status`` and echoes every credential in every place it can.

    Which form comes first turns with the status: a message that shows only the start of what
    the server said (the provider's, 300 characters) still gets each form from some status.
    """
    first = STATUSES.index(status) % len(forms(""))

    def answer(request: httpx.Request) -> httpx.Response:
        values = echoed(request)
        by_form = [[forms(value)[index] for value in values] for index in range(len(forms("")))]
        echo = " ".join(" ".join(group) for group in by_form[first:] + by_form[:first])
        headers = {"x-echo": echo, "www-authenticate": f'Bearer error="{values[0]}"'}
        reason = f"Refused {' '.join(values)}".encode()
        extensions = {"reason_phrase": reason}
        if status == 200:
            text = f"<html>{echo}</html>"
            return httpx.Response(200, text=text, headers=headers, extensions=extensions)
        body = {"error": {"message": f"Rejected {echo}", "type": "hostile"}, "echo": values}
        return httpx.Response(status, json=body, headers=headers, extensions=extensions)

    return httpx.MockTransport(answer)


async def stack_error(
    stack: str,
    transport: httpx.MockTransport,
    *,
    base_url: str = f"{ORIGIN}/v1",
    api_key: str | None = None,
    **config: Any,
) -> BaseException:
    """The exception one stack raises when ``transport`` answers its request."""
    if stack == "runtime":
        runtime = OpenAICompatibleRuntime(
            base_url, api_key=api_key, model="m", transport=transport, **config
        )
        with runtime, pytest.raises(RuntimeCallError) as raised:
            runtime.exec("Hi.")
        return raised.value
    provider = OpenAICompatibleDecisionProvider(
        base_url=base_url, api_key=api_key, model="m", transport=transport, **config
    )
    question = BooleanQuestion(instructions="Is it?", criteria=BooleanCriteria(true="Yes"))
    request = DecisionRequest(model="m", context={"ticket": "x"}, questions={"q": question})
    with pytest.raises(ProviderError) as failed:
        await provider.decide(request)
    return failed.value


async def failure(stack: str, name: str, status: int) -> BaseException:
    """The exception one stack raises for one case of the hostile server."""
    config, secrets = configuration(name)
    api_key = KEY if "api key" in secrets else None
    return await stack_error(stack, hostile(status), api_key=api_key, **config)


def chain(error: BaseException) -> Iterator[BaseException]:
    """The exception and every one it was raised from or during."""
    seen: set[int] = set()
    todo = [error]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo += [linked for linked in (current.__cause__, current.__context__) if linked]


def shown(error: BaseException) -> list[str]:
    """Every text the exception shows: its traceback, and of each exception in its chain the
    ``str``, the ``repr``, the string arguments and attributes."""
    texts = ["".join(traceback.format_exception(error))]
    for each in chain(error):
        texts += [str(each), repr(each)]
        texts += [arg for arg in each.args if isinstance(arg, str)]
        texts += [value for value in vars(each).values() if isinstance(value, str)]
    return texts


def leaked(error: BaseException, secrets: dict[str, str]) -> list[str]:
    """The labels of the secrets that some text of ``error`` shows, in some form."""
    texts = shown(error)
    return [
        label
        for label, value in secrets.items()
        if any(form in text for form in forms(value) for text in texts)
    ]


@pytest.mark.parametrize("status", STATUSES)
@pytest.mark.parametrize("name", CONFIGURATIONS)
@pytest.mark.parametrize("stack", ["runtime", "provider"])
async def test_no_error_shows_a_credential_the_server_echoed(
    stack: str, name: str, status: int
) -> None:
    error = await failure(stack, name, status)
    assert leaked(error, configuration(name)[1]) == []
    if status != 200:
        assert "Rejected" in str(error)  # the server's reason is still shown, redacted
        assert "***" in str(error)


@pytest.mark.parametrize("stack", ["runtime", "provider"])
async def test_a_credential_where_the_message_is_cut_is_hidden_whole(stack: str) -> None:
    """Messages keep the first 300 characters of the server's reason: a key that straddles
    the cut is redacted before it, so no first half of it shows."""

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"error": {"message": "." * 290 + f" {KEY}"}})

    error = await stack_error(stack, httpx.MockTransport(answer), api_key=KEY)
    assert not any(KEY[:end] in text for text in shown(error) for end in range(8, len(KEY)))
    assert "." * 290 + " ***" in str(error)


@pytest.mark.parametrize("stack", ["runtime", "provider"])
@pytest.mark.parametrize("key", ["k3y9", "1234567890"])
async def test_short_and_digit_only_keys_are_hidden_as_written(stack: str, key: str) -> None:
    """Too short, or without a letter, to be searched in every encoding (a base64 piece of a
    few characters is in any text), such a key is still never shown as it was sent."""

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"error": {"message": f"bad key {key}"}})

    error = await stack_error(stack, httpx.MockTransport(answer), api_key=key)
    assert key not in str(error)
    assert "bad key ***" in str(error)


async def test_the_secrets_were_sent_and_echoed() -> None:
    """The server above did see, and send back, what the errors must not show."""
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(401, text=" ".join(echoed(request)))

    transport = httpx.MockTransport(answer)
    headers = {"X-Custom-Auth-Token": header_value("X-Custom-Auth-Token")}
    runtime = OpenAICompatibleRuntime(
        f"{ORIGIN}/v1", api_key=KEY, transport=transport, default_headers=headers
    )
    with runtime, pytest.raises(RuntimeCallError):
        runtime.exec("Hi.")
    assert sent[0].headers["authorization"] == f"Bearer {KEY}"
    assert sent[0].headers["x-custom-auth-token"] == header_value("X-Custom-Auth-Token")
    assert KEY in " ".join(echoed(sent[0]))


# --- one list, read by everyone ------------------------------------------------------------


def test_the_secret_header_names_are_defined_once() -> None:
    """No module but ``_http/_redaction.py`` writes down a vendor header name or the name
    pattern: every HTTP stack, the scrubber and the log filters read that one."""
    owners = []
    for path in sorted((ROOT / "pytest_opdecide").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        literals = {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        }
        if "x-goog-api-key" in literals or any("credential|" in text for text in literals):
            owners.append(path.relative_to(ROOT).as_posix())
    assert owners == ["pytest_opdecide/_http/_redaction.py"]
    assert _scrub.secret_header is _redaction.secret_header
    assert _scrub.secret_param is _redaction.secret_param
    assert _log_filters.redact_text is _redaction.redact_text
    assert _error_mapping.MessageRedaction is _redaction.MessageRedaction
    assert _openai_provider.MessageRedaction is _redaction.MessageRedaction


@pytest.mark.parametrize("name", [*sorted(SECRET_HEADERS), *PATTERN_NAMED])
def test_the_scrubber_hides_every_header_the_list_names(name: str) -> None:
    assert secret_header(name)
    headers = {name: ["a-value-no-other-rule-knows"], "x-request-id": ["req-1"]}
    Scrubber(secrets=Secrets()).headers(headers)
    assert headers == {name: [PLACEHOLDER], "x-request-id": ["req-1"]}


async def test_a_header_only_its_name_marks_is_hidden_by_the_provider_and_the_scrubber() -> None:
    """A header the caller's own client adds (not configured here, so only the name pattern
    can tell it is a credential): the provider's errors hide it as the scrubber does."""
    value = "vendor-session-7d1e3c9a5b2f"

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"error": {"message": f"bad {' '.join(echoed(request))}"}})

    client = httpx.AsyncClient(
        headers={"X-Vendor-Session": value}, transport=httpx.MockTransport(answer)
    )
    provider = OpenAICompatibleDecisionProvider(base_url=f"{ORIGIN}/v1", transport=client)
    question = BooleanQuestion(instructions="Is it?", criteria=BooleanCriteria(true="Yes"))
    request = DecisionRequest(model="m", context={"ticket": "x"}, questions={"q": question})
    async with client:
        with pytest.raises(ProviderError) as failed:
            await provider.decide(request)
    assert value not in str(failed.value)
    assert "bad " in str(failed.value)

    headers = {"x-vendor-session": [value]}
    Scrubber(secrets=Secrets()).headers(headers)
    assert headers == {"x-vendor-session": [PLACEHOLDER]}


def test_the_runtime_hides_the_query_credentials_the_log_filters_hide(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key-like query parameter of the base URL: the runtime's errors and httpx's log lines
    (while a cassette is open) hide its value by the same name rule."""
    value = "query-credential-5e1d9c3b7a"

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(403, json={"error": {"message": f"denied for {request.url}"}})

    runtime = OpenAICompatibleRuntime(
        f"{ORIGIN}/v1?x-session-token={value}&api-version=1",
        transport=httpx.MockTransport(answer),
    )
    with runtime, pytest.raises(RuntimeCallError) as raised:
        runtime.exec("Hi.")
    assert value not in str(raised.value)
    assert "api-version=1" in str(raised.value)

    logger = logging.getLogger("httpx")
    monkeypatch.setattr(logger, "disabled", False)  # as another test's logging.config left it
    with caplog.at_level(logging.INFO, logger="httpx"), credentials_kept_out_of_logs():
        logger.info("HTTP Request: POST %s/v1?x-session-token=%s", ORIGIN, value)
    assert value not in caplog.text
    assert "x-session-token=" in caplog.text


def test_a_sentence_about_bearer_tokens_is_not_taken_for_one() -> None:
    """The key-like net hides tokens, not the words servers say about them."""
    from pytest_opdecide._http._secrets import KEYLIKE

    assert not KEYLIKE.search("401: Bearer authentication required")
    assert KEYLIKE.search("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig")
    assert KEYLIKE.search("Bearer 0123456789abcdefghij")
