"""A model call answered by another HTTP mock says so, never "the model took too long".

pytest-httpx answers a request it has no response for with ``httpx.TimeoutException``; the
runtime's error names pytest-httpx, what it said, and how to let the model's requests through.
"""

from __future__ import annotations

import httpx
import pytest

from pytest_opdecide.runtimes import OpenAICompatibleRuntime, RuntimeCallError


@pytest.mark.httpx_mock(assert_all_requests_were_expected=False)
def test_a_request_answered_by_pytest_httpx_names_it(httpx_mock: object) -> None:
    runtime = OpenAICompatibleRuntime(
        "http://127.0.0.1:9/v1", model="m", transport=httpx.HTTPTransport()
    )
    with pytest.raises(RuntimeCallError) as caught:
        runtime.exec("Hello")
    message = str(caught.value)
    assert "was answered by pytest-httpx's httpx_mock, not by the model server" in message
    assert "No response can be found for POST request on http://127.0.0.1:9/v1/" in message
    assert "@pytest.mark.httpx_mock(should_mock=" in message
    assert "took too long" not in message
    assert "timed out:" not in message
