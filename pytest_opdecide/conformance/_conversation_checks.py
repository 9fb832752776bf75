"""``ConversationChecks``: the provider check of conversation semantics.

A mixin of :class:`~pytest_opdecide.conformance.DecisionProviderTests` (see
:mod:`._provider_tests`), built on :class:`~._provider_verdicts.ProviderVerdicts`. Its one
check, ``test_decide_leaves_the_request_and_the_thread_as_it_found_them``, decides a request
and then a decision on a thread (``ThreadState.decide``), and asks that neither the request nor
the thread changed, and that no tool ran and no turn started.
"""

from __future__ import annotations

from typing import Any

from pytest_opdecide.conformance._failures import ConformanceRule, fail
from pytest_opdecide.conformance._provider_outcomes import Blocked, TimedOut
from pytest_opdecide.conformance._provider_verdicts import ProviderVerdicts
from pytest_opdecide.conformance._transport import RecordingTransport
from pytest_opdecide.questions import DecisionRequest, ThreadChangedError, ThreadState

__all__ = ["ConversationChecks"]


class ConversationChecks(ProviderVerdicts):
    """The check that a decision changes nothing it is given."""

    def test_decide_leaves_the_request_and_the_thread_as_it_found_them(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """``decide()`` changes nothing it is given: the request (its context, questions,
        options, levels and criteria) is as it was afterwards, and a decision made on a thread
        (``ThreadState.decide``, with the thread's messages as the context) leaves the
        thread's messages as they were, runs none of its tools and starts no turn.

        Fix: treat the request as read-only (copy what you need to change); never add the
        answer to the context or the conversation: that is the caller's explicit call.
        """
        caps = self.capabilities(provider)
        request = self._requests(caps, self._questions(caps))[0]
        before = request.model_dump(by_alias=True, mode="json")
        self._answered(provider, recording_transport, request, "the standard request")
        after = request.model_dump(by_alias=True, mode="json")
        if after != before:
            changed = sorted(
                key for key in set(before) | set(after) if before.get(key) != after.get(key)
            )
            fail(
                ConformanceRule.CONVERSATION,
                f"decide() changed the request it was given ({', '.join(changed)})",
                value=after,
                fix="treat the request as read-only: copy what you need to change",
            )
        events: list[str] = []
        messages: list[Any] = [
            {"role": "user", "content": "My parcel never came."},
            {"role": "assistant", "content": "Sorry to hear that. What is the order number?"},
        ]
        state = ThreadState(
            thread_id="conformance-thread",
            messages=messages,
            tools={"refund": lambda **_: events.append("tool refund ran")},
            on_turn=lambda _: events.append("a turn started"),
        )
        kept = [dict(message) for message in messages]
        options = {
            "provider": provider,
            "model": request.model,
            "context": state.messages,
            "questions": dict(request.questions),
        }
        self._expect(
            recording_transport,
            DecisionRequest.model_validate(
                {key: value for key, value in options.items() if key != "provider"}
            ),
        )
        finished = self._in_loop(
            lambda: state.decide(options), timeout=self.call_timeout_s, what="ThreadState.decide()"
        )
        self._hygiene(finished, "ThreadState.decide()")
        if isinstance(finished.error, ThreadChangedError):
            fail(
                ConformanceRule.CONVERSATION,
                f"a decision on a thread changed the thread: {finished.error}",
                value=list(finished.error.changes),
                fix="never add, change or remove conversation messages, run tools or start a "
                "turn in decide(), nor keep a reference to a thread to do it",
            )
        if finished.error is not None or finished.timed_out or finished.blocked:
            error = finished.error or (Blocked() if finished.blocked else TimedOut())
            self._failed(error, "a decision made on a thread")
        if state.messages is not messages or messages != kept:
            fail(
                ConformanceRule.CONVERSATION,
                "a decision on a thread changed the thread's messages",
                value=list(state.messages),
                fix="never add, change or remove conversation messages in decide()",
            )
        if events:
            fail(
                ConformanceRule.CONVERSATION,
                "a decision on a thread " + " and ".join(events),
                value=events,
                fix="decide() never runs tools or starts a conversational turn",
            )
