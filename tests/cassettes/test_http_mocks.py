"""The runtime's own traffic lives beside pytest-httpx and respx (issue 21).

A test that mocks its other HTTP calls with ``httpx_mock`` or ``respx`` and takes its model from
a cassette (recorded or replayed) or a script needs no marker of theirs: the model's requests
are never answered by the other mock, and the test's own calls stay mocked as it wrote them, at
record and at replay: the cassette holds the model's calls only.
"""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest

from pytest_opdecide._cassettes._vcr import _vcr_options
from pytest_opdecide._http._direct_transport import DirectTransport, ReplacedSender, _kept
from pytest_opdecide._http._replay_routing import another_mock

from ._support import cassette, dedent, interactions

HTTPX_MOCK = dedent(
    """
    import httpx
    import pytest
    from pytest_opdecide import decision


    def route():
        tier = httpx.get("https://crm.example/tickets/7").json()["tier"]
        return decision.make(f"Route a {tier} ticket.", {"alpha": "A", "beta": "B"})


    @pytest.mark.opdecide(cassette=True)
    def test_runtime_first(runtime, httpx_mock):
        httpx_mock.add_response(url="https://crm.example/tickets/7", json={"tier": "gold"})
        assert route() in ("A", "B")


    @pytest.mark.opdecide(cassette=True)
    def test_mock_first(httpx_mock, runtime):
        httpx_mock.add_response(url="https://crm.example/tickets/7", json={"tier": "gold"})
        assert route() in ("A", "B")
    """
)

RESPX_MOCK = dedent(
    """
    import httpx
    import pytest
    import respx
    from pytest_opdecide import decision


    def route():
        tier = httpx.get("https://crm.example/tickets/7").json()["tier"]
        return decision.make(f"Route a {tier} ticket.", {"alpha": "A", "beta": "B"})


    @pytest.mark.opdecide(cassette=True)
    @respx.mock
    def test_runtime_first(runtime):
        respx.get("https://crm.example/tickets/7").respond(json={"tier": "gold"})
        assert route() in ("A", "B")


    @pytest.mark.opdecide(cassette=True)
    def test_mock_first(runtime):
        with respx.mock:
            respx.get("https://crm.example/tickets/7").respond(json={"tier": "gold"})
            assert route() in ("A", "B")
    """
)


@pytest.mark.parametrize("mock", [HTTPX_MOCK, RESPX_MOCK], ids=["pytest-httpx", "respx"])
def test_record_then_replay_beside_another_http_mock(project: pytest.Pytester, mock: str) -> None:
    project.makepyfile(test_mocks=mock)
    recorded = project.runpytest("--opdecide-record=once")
    tests = ["test_runtime_first", "test_mock_first"]
    if mock is HTTPX_MOCK and "skip_patchers" not in _vcr_options():
        # vcrpy before 9.4 cannot leave httpx to a mock set up before the cassette: refused,
        # with the fix, rather than sending the test's mocked call past its mock.
        recorded.assert_outcomes(passed=1, errors=1)
        recorded.stdout.fnmatch_lines(
            ["*MockBeforeCassette: pytest_httpx replaced httpx's transport before the cassette*"]
        )
        assert "Ask for the `runtime` fixture before `httpx_mock`" in recorded.stdout.str()
        tests.remove("test_mock_first")
    else:
        recorded.assert_outcomes(passed=2)
    for test in tests:
        uris = [
            entry["request"]["uri"] for entry in interactions(cassette(project, "test_mocks", test))
        ]
        assert len(uris) == 1, uris  # the model's call only: the CRM call stayed the mock's
        assert uris[0].endswith("/v1/chat/completions")
    # Replayed: the mocks' responses must be requested (pytest-httpx) and their routes called
    # (respx), or the tests fail at teardown.
    replayed = project.runpytest(*(["-k", "test_runtime_first"] if len(tests) == 1 else []))
    replayed.assert_outcomes(passed=len(tests))


def test_a_sender_replaced_before_it_was_kept_refuses_to_send() -> None:
    class Pool:  # its method's code lives outside httpcore: a replacement
        def handle_request(self, request: object) -> object:
            return "the mock's answer"

    refuse = _kept(Pool, "handle_request")
    with pytest.raises(ReplacedSender, match=f"cannot record past the HTTP mock of {__name__}: "):
        refuse(Pool(), object())


def test_the_direct_transport_fails_as_httpx_does() -> None:
    with socket.socket() as unused:  # a port on the loopback that nothing listens on
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    with httpx.Client(transport=DirectTransport()) as client, pytest.raises(httpx.ConnectError):
        client.get(f"http://127.0.0.1:{port}/v1/models")


def test_only_another_mock_takes_recording_off_the_clients_own_transport(
    tmp_path: Path,
) -> None:
    # With no other mock, a recording leaves every client its own transport (its proxies,
    # certificates and kept-alive connections) and vcrpy records it; vcrpy's own patches are
    # not another mock. An active respx mock is.
    import respx
    import vcr

    assert another_mock() is None
    with vcr.use_cassette(str(tmp_path / "c.yaml")):
        assert another_mock() is None
    with respx.mock:
        assert str(another_mock()).startswith("respx")
    assert another_mock() is None
