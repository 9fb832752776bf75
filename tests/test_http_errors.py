"""Both HTTP stacks read a failed answer the same way: one status table, one Retry-After, one
server message."""

from __future__ import annotations

import httpx
import pytest

from pytest_opdecide._http._error_answers import (
    clip,
    retry_after_seconds,
    server_message,
    status_kind,
)
from pytest_opdecide.questions import (
    BooleanCriteria,
    BooleanQuestion,
    DecisionRequest,
    OpenAICompatibleDecisionProvider,
    ProviderError,
)
from pytest_opdecide.runtimes import (
    AuthenticationError,
    BadRequestError,
    NotFoundError,
    OpenAICompatibleRuntime,
    RateLimitError,
    ResponseStatusError,
    ServerError,
)

NOW = 1_700_000_000.0


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "-3"}, 0.0),  # a wait in the past is no wait
        ({"retry-after": "Tue, 14 Nov 2023 22:13:30 GMT"}, 10.0),  # NOW + 10 s
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
        ({}, None),
        ({"retry-after": "soon"}, None),
        # Not a finite number: says nothing usable (an infinite wait would hang a retry loop).
        ({"retry-after": "inf"}, None),
        ({"retry-after": "-inf"}, None),
        ({"retry-after": "nan"}, None),
        ({"retry-after": "infinity"}, None),
        # An unusable retry-after-ms leaves the word to Retry-After.
        ({"retry-after-ms": "inf", "retry-after": "4"}, 4.0),
        ({"retry-after-ms": "nan"}, None),
        ({"retry-after-ms": "soon", "retry-after": "2"}, 2.0),
    ],
)
def test_retry_after(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after_seconds(httpx.Headers(headers), now=NOW) == seconds


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "bad_request"),
        (409, "bad_request"),
        (413, "bad_request"),
        (415, "bad_request"),
        (422, "bad_request"),
        (401, "authentication"),
        (403, "authentication"),
        (404, "not_found"),
        (408, "timeout"),
        (429, "rate_limit"),
        (500, "server"),
        (503, "server"),
        (418, "other"),
        (307, "other"),
    ],
)
def test_status_kinds(status: int, kind: str) -> None:
    assert status_kind(status) == kind


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('{"error": {"message": "Rate limit reached"}}', "Rate limit reached"),
        ('{"error": "model not loaded"}', "model not loaded"),
        ('{"detail": "Not Found"}', "Not Found"),
        (
            '{"detail": [{"loc": ["body", "model"], "msg": "field required"}]}',
            "body.model: field required",
        ),
        ('{"message": "bad key"}', "bad key"),
        (
            "<html>\n  <body>Service Unavailable</body>\n</html>",
            "<html> <body>Service Unavailable</body> </html>",
        ),
        ("", ""),
        ('{"unrelated": 1}', '{"unrelated": 1}'),
    ],
)
def test_server_messages(body: str, message: str) -> None:
    assert server_message(body) == message


def test_clip() -> None:
    assert clip("abcdef", 3) == "abc..."
    assert clip("abc", 3) == "abc"


CASES = [
    (400, BadRequestError, "invalid_request"),
    (409, BadRequestError, "invalid_request"),
    (401, AuthenticationError, "auth_error"),
    (404, NotFoundError, "invalid_request"),
    (408, ResponseStatusError, "timeout"),
    (429, RateLimitError, "rate_limit"),
    (502, ServerError, "server_error"),
    (418, ResponseStatusError, "unknown"),
]


@pytest.mark.parametrize(("status", "error", "code"), CASES)
async def test_both_stacks_read_a_failure_alike(
    status: int, error: type[ResponseStatusError], code: str
) -> None:
    headers = {"retry-after": "inf"} if status == 429 else {}

    def answer(request: httpx.Request) -> httpx.Response:
        body = {"error": {"message": f"nope ({status})"}}
        return httpx.Response(status, json=body, headers=headers)

    transport = httpx.MockTransport(answer)
    with (
        OpenAICompatibleRuntime("http://127.0.0.1:9/v1", transport=transport) as runtime,
        pytest.raises(error) as raised,
    ):
        runtime.exec("Hi.")
    assert type(raised.value) is error
    assert raised.value.server_message == f"nope ({status})"

    provider = OpenAICompatibleDecisionProvider(
        base_url="http://127.0.0.1:9/v1", model="m", transport=transport, fallback="none"
    )
    question = BooleanQuestion(instructions="Is it?", criteria=BooleanCriteria(true="Yes"))
    request = DecisionRequest(model="m", context={"ticket": "x"}, questions={"q": question})
    with pytest.raises(ProviderError) as failed:
        await provider.decide(request)
    assert failed.value.code == code
    assert failed.value.status_code == status
    assert f"nope ({status})" in str(failed.value)
    if status == 429:
        # "inf" is no usable wait, for both stacks alike.
        assert isinstance(raised.value, RateLimitError)
        assert raised.value.retry_after is None
        assert failed.value.retry_after is None
