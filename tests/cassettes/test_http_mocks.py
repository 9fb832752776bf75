"""The runtime's own traffic lives beside pytest-httpx and respx (issue 21).

A test that mocks its other HTTP calls with ``httpx_mock`` or ``respx`` and takes its model from
a cassette (recorded or replayed) or a script needs no marker of theirs: the model's requests
are never answered by the other mock, and the test's own calls stay mocked as it wrote them.
"""

from __future__ import annotations

import pytest

from ._support import dedent

HTTPX_MOCK = dedent(
    """
    import httpx
    import pytest
    from pytest_opdecide import decision


    @pytest.mark.opdecide(cassette=True)
    def test_crm_and_model(runtime, httpx_mock):
        httpx_mock.add_response(url="https://crm.example/tickets/7", json={"tier": "gold"})
        tier = httpx.get("https://crm.example/tickets/7").json()["tier"]
        picked = decision.make(f"Route a {tier} ticket.", {"alpha": "A", "beta": "B"})
        assert picked in ("A", "B")
    """
)

RESPX_MOCK = dedent(
    """
    import httpx
    import pytest
    import respx
    from pytest_opdecide import decision


    @pytest.mark.opdecide(cassette=True)
    @respx.mock
    def test_crm_and_model(runtime):
        respx.get("https://crm.example/tickets/7").respond(json={"tier": "gold"})
        tier = httpx.get("https://crm.example/tickets/7").json()["tier"]
        picked = decision.make(f"Route a {tier} ticket.", {"alpha": "A", "beta": "B"})
        assert picked in ("A", "B")
    """
)


@pytest.mark.xfail(
    strict=True,
    reason="not done (issue 21 point 2): while recording, pytest-httpx and respx answer the "
    "model's requests (they patch httpx's transport and httpcore's pools, below vcrpy), and "
    "vcrpy records the test's mocked calls into the cassette; a transport of the plugin's own "
    "would bypass vcrpy's recording too (vcrpy patches httpx.HTTPTransport.handle_request), so "
    "the fix is the cassette layer recording its runtime's traffic itself",
)
@pytest.mark.parametrize("mock", [HTTPX_MOCK, RESPX_MOCK], ids=["pytest-httpx", "respx"])
def test_record_then_replay_beside_another_http_mock(project: pytest.Pytester, mock: str) -> None:
    project.makepyfile(test_mocks=mock)
    recorded = project.runpytest("--opdecide-record=once")
    recorded.assert_outcomes(passed=1)
    replayed = project.runpytest()
    replayed.assert_outcomes(passed=1)
