"""A question provider's request answered by another HTTP mock names the mock (issue 21).

pytest-httpx answers a request it has no response for with ``httpx.TimeoutException``, and a
respx route may raise one: the provider's error says which mock answered and how to let the
model's requests through, never that the model took too long.
"""

from __future__ import annotations

import httpx
import pytest
import respx
from _questions_support import make_request
from pytest_httpx import HTTPXMock

from pytest_opdecide.questions import (
    ChoiceQuestion,
    OpenAICompatibleDecisionProvider,
    ProviderError,
)

URL = "http://127.0.0.1:9/v1"


async def _error() -> ProviderError:
    provider = OpenAICompatibleDecisionProvider(base_url=URL, model="m")
    request = make_request(
        route=ChoiceQuestion(instructions="Which team?", options={"a": None, "b": None})
    )
    with pytest.raises(ProviderError) as caught:
        await provider.decide(request)
    return caught.value


@pytest.mark.httpx_mock(assert_all_requests_were_expected=False)
async def test_pytest_httpx_answering_the_provider_is_named(httpx_mock: HTTPXMock) -> None:
    error = await _error()
    message = str(error)
    assert "was answered by pytest-httpx's httpx_mock, not by the model server" in message
    assert "should_mock=" in message
    assert "took longer" not in message
    assert error.code == "unknown"


async def test_respx_answering_the_provider_is_named() -> None:
    with respx.mock:
        respx.post(f"{URL}/chat/completions").mock(side_effect=httpx.ConnectTimeout)
        error = await _error()
    message = str(error)
    assert "was answered by respx, not by the model server" in message
    assert "pass_through()" in message
    assert "took longer" not in message
