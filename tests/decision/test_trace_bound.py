"""A runtime's call trace: everything inside a test, a bounded tail outside one."""

from __future__ import annotations

import pytest

from fake_runtimes import FunctionRuntime, pick
from pytest_opdecide import decision
from pytest_opdecide._nextstep._trace import DEFAULT_KEEP

OPTIONS = {"close": "CLOSED", "wait": "WAITING"}


def _decide(runtime: FunctionRuntime, times: int) -> None:
    for _ in range(times):
        assert decision.make("Route.", OPTIONS, runtime=runtime) == "CLOSED"


def test_inside_a_test_every_call_is_kept() -> None:
    runtime = FunctionRuntime(lambda call: pick("close"))
    runtime.trace.keep = 3
    _decide(runtime, 10)
    assert len(runtime.calls) == 10
    assert runtime.trace.forgotten == 0


def test_outside_a_test_only_the_most_recent_calls_are_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    runtime = FunctionRuntime(lambda call: pick("close"))
    assert runtime.trace.keep == DEFAULT_KEEP
    runtime.trace.keep = 3
    _decide(runtime, 10)
    kept = runtime.calls
    assert [call.id for call in kept] == [7, 8, 9]
    assert runtime.trace.forgotten == 7
    assert runtime.last_call.id == 9


def test_keep_none_keeps_every_call_outside_a_test(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    runtime = FunctionRuntime(lambda call: pick("close"))
    runtime.trace.keep = None
    _decide(runtime, 12)
    assert len(runtime.calls) == 12


@pytest.mark.parametrize("bad", ["lots", -1, 2.5, True])
def test_a_bad_keep_is_refused_when_set(bad: object) -> None:
    runtime = FunctionRuntime(lambda call: pick("close"))
    with pytest.raises(TypeError, match=r"trace.keep must be a whole number >= 0 or None"):
        runtime.trace.keep = bad  # type: ignore[assignment]


def test_between_reads_at_most_keep_and_a_batch_are_held(monkeypatch: pytest.MonkeyPatch) -> None:
    # Trimmed in batches of 16 whatever ``keep`` is (a batch freed at once is about what the
    # calls since the last one allocated), never read in between: the held tail is bounded.
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    for keep, calls in ((3, 200), (200, 400)):
        runtime = FunctionRuntime(lambda call: pick("close"))
        runtime.trace.keep = keep
        for _ in range(calls):
            _decide(runtime, 1)
            assert len(runtime.trace._records) <= keep + 16
        assert runtime.trace.forgotten == calls - keep
