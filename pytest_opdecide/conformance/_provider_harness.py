"""``ProviderHarness``: how the provider checks build the provider and run its code.

The bottom of :class:`~pytest_opdecide.conformance.DecisionProviderTests` (see
:mod:`._provider_tests` for how the suite is put together):

* the settings every check reads, declared here and given their values (and their meaning) by
  ``DecisionProviderTests``;
* how the provider is built, what a subclass overrides to change it: ``backend_transport()``,
  ``provider_factory_config()``, ``build_provider()``, the ``recording_transport`` and
  ``provider`` fixtures, and ``capabilities()``;
* running provider code in the check's own event loop, in a thread of its own (see
  :mod:`._loop`), one per check: ``_provider_code()`` for synchronous code, ``_attempt()`` for
  ``decide()`` (network watched: the result, or the error it ended in);
* the standard requests, cut to the provider's capabilities (``_request()``, ``_questions()``,
  ``_requests()``), and ``_expect()``, which tells the backend which request comes.

What a check concludes from a call is :class:`~._provider_verdicts.ProviderVerdicts`'s job.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx
import pytest

from pytest_opdecide.conformance._capabilities import ProviderCapabilities, resolve_capabilities
from pytest_opdecide.conformance._failures import ConformanceRule, fail
from pytest_opdecide.conformance._loop import CheckLoop, Finished
from pytest_opdecide.conformance._network_watch import NetworkAttempts, watch_network
from pytest_opdecide.conformance._openai_backend import OpenAIChatBackend
from pytest_opdecide.conformance._provider_outcomes import Blocked, TimedOut, is_ours, note, raised
from pytest_opdecide.conformance._requests import standard_context, standard_questions
from pytest_opdecide.conformance._transport import RecordingTransport
from pytest_opdecide.questions import (
    DecisionQuestion,
    DecisionRequest,
    ProviderFactoryConfig,
    resolve_provider_config,
)

__all__ = ["ProviderHarness"]


class _NotAwaitable(Exception):
    """``decide(request)`` returned something that cannot be awaited."""

    def __init__(self, returned: object) -> None:
        super().__init__(type(returned).__name__)
        self.returned = returned


@dataclass
class _Outcome:
    result: Any = None
    error: BaseException | None = None


def _chunks(questions: Mapping[str, DecisionQuestion], size: int | None) -> list[dict[str, Any]]:
    items = list(questions.items())
    if size is None or size >= len(items):
        return [dict(items)]
    return [dict(items[i : i + size]) for i in range(0, len(items), size)]


class ProviderHarness:
    """Builds the provider under test and runs its code for the checks.

    The settings are declared here without values: :class:`DecisionProviderTests` gives each
    its default and documents it, and a user's subclass overrides them there.
    """

    provider_factory: ClassVar[Any]
    provider_config: ClassVar[Mapping[str, object]]
    request_model: ClassVar[str]
    api_key: ClassVar[str]
    base_url: ClassVar[str]

    supported_question_types: ClassVar[Sequence[str]]
    max_questions: ClassVar[int | None]
    max_options: ClassVar[int | None]
    max_levels: ClassVar[int | None]
    reports_confidence: ClassVar[bool]
    supports_abort: ClassVar[bool]
    needs_backend: ClassVar[bool | None]
    probability_decimals: ClassVar[int | None]
    sent_models: ClassVar[Mapping[str, str]]

    probability_tolerance: ClassVar[float]
    property_examples: ClassVar[int]
    call_timeout_s: ClassVar[float]
    abort_grace_s: ClassVar[float]

    _check_loop: CheckLoop | None = None

    # --- how the provider is built: override these to change it -----------------------------

    def backend_transport(self) -> httpx.AsyncBaseTransport | httpx.BaseTransport:
        """The transport that answers the provider's requests (behind the recording one).

        The default, :class:`OpenAIChatBackend`, speaks OpenAI-compatible chat completions with
        token log-probabilities, as the reference design does. For another protocol, return a
        transport answering it (``httpx.MockTransport(handler)``); give it an
        ``expected_answer(question)`` method to enable the checks that compare the reported
        probabilities with what the backend answered.
        """
        return OpenAIChatBackend()

    def provider_factory_config(
        self, transport: RecordingTransport, *, api_key: str | None
    ) -> ProviderFactoryConfig:
        """The config the factory receives: ``base_url``, ``api_key``, the transport override,
        and ``provider_config`` (parsed by the factory's ``config_slots`` when it has them)."""
        config = ProviderFactoryConfig(
            api_key=api_key, base_url=self.base_url, transport=transport
        ).with_values(dict(self.provider_config))
        slots = getattr(self._factory(), "config_slots", None)
        if isinstance(slots, Mapping) and slots:
            # Typed values from the slots ("5000" -> 5000); the environment is not read, so
            # that a developer's OPENAI_API_KEY never reaches a conformance run.
            config = resolve_provider_config(slots, config, environ={})
        return config

    def build_provider(self, transport: RecordingTransport, *, api_key: str | None = None) -> Any:
        """Build the provider with ``provider_factory`` (``api_key`` defaults to the class's)."""
        factory = self._factory()
        if factory is None:
            pytest.fail(
                f"{type(self).__name__} sets no provider_factory: set `provider_factory = "
                "your_factory` (a callable taking a ProviderFactoryConfig), or override the "
                "`provider` fixture",
                pytrace=False,
            )
        key = self.api_key if api_key is None else api_key
        return factory(self.provider_factory_config(transport, api_key=key))

    @pytest.fixture
    def recording_transport(self) -> RecordingTransport:
        """The transport override given to the provider: records, forwards to the backend."""
        self._recording = RecordingTransport(self.backend_transport())
        return self._recording

    @pytest.fixture
    def provider(self, recording_transport: RecordingTransport) -> Any:
        """The provider under test; override to build it yourself (pass it
        ``recording_transport`` as its transport override)."""
        built = self._provider_code(
            lambda: self.build_provider(recording_transport),
            "building the provider",
            ConformanceRule.CONSTRUCTION_FAILED,
            "the factory must build a provider from any valid config",
        )
        # What construction sent is test_construction_does_no_io's business, not every check's.
        recording_transport.clear()
        return built

    @pytest.fixture(autouse=True)
    def _conformance_event_loop(self) -> Iterator[None]:
        # One event loop per check, in a thread of its own (a provider may keep loop-bound
        # clients between calls; whatever it does cannot take the test session with it).
        loop = CheckLoop()
        self._check_loop = loop
        self._resolved: dict[int, tuple[Any, ProviderCapabilities]] = {}
        try:
            yield
        finally:
            self._check_loop = None
            problems = loop.close()
        if problems:
            fail(
                ConformanceRule.ASYNC_LEFTOVERS,
                "the provider left work behind in its event loop: " + "; ".join(problems),
                fix="await (or cancel and await) every task you start before decide() returns, "
                "and retrieve every task's exception (asyncio.gather, TaskGroup)",
            )

    def capabilities(self, provider: Any) -> ProviderCapabilities:
        """The declared capabilities, with undeclared limits read from ``provider``."""

        def resolve() -> ProviderCapabilities:
            return resolve_capabilities(
                provider,
                question_types=self.supported_question_types,
                max_questions=type(self).max_questions,
                max_options=type(self).max_options,
                max_levels=type(self).max_levels,
                reports_confidence=self.reports_confidence,
                supports_abort=self.supports_abort,
                needs_backend=self.needs_backend,
                probability_decimals=type(self).probability_decimals,
                sent_models=self.sent_models,
            )

        if self._check_loop is None:
            return resolve()
        cached = self._resolved.get(id(provider))
        if cached is not None and cached[0] is provider:
            return cached[1]
        resolved: ProviderCapabilities = self._provider_code(
            resolve,
            "reading the provider's attributes (max_options, probability_decimals...)",
            ConformanceRule.CAPABILITY,
            "make the provider's attributes plain values",
        )
        self._resolved[id(provider)] = (provider, resolved)
        return resolved

    # --- running provider code, and the standard requests ---------------------------------

    def _factory(self) -> Any:
        for klass in type(self).__mro__:
            if "provider_factory" in vars(klass):
                value = vars(klass)["provider_factory"]
                return value.__func__ if isinstance(value, staticmethod) else value
        return None

    def _loop(self) -> CheckLoop:
        if self._check_loop is None:  # called outside a check (e.g. from a user's own test)
            self._check_loop = CheckLoop()
        return self._check_loop

    def _in_loop(self, work: Callable[[], Any], *, timeout: float, what: str) -> Finished:
        """Run provider code in the check's event loop (see :mod:`._loop`)."""
        return self._loop().run(work, timeout=timeout, what=what)

    def _provider_code(
        self, work: Callable[[], Any], what: str, rule: ConformanceRule, fix: str
    ) -> Any:
        """What ``work()`` (synchronous provider code) returns; any failure of it fails the
        check with ``rule``."""
        finished = self._in_loop(work, timeout=self.call_timeout_s, what=what)
        self._hygiene(finished, what)
        error = finished.error
        if error is not None and is_ours(error):
            raise error
        if finished.blocked or finished.timed_out:
            fail(
                ConformanceRule.ASYNC_BLOCKING,
                f"{what} did not return within {self.call_timeout_s:g} s",
                fix="do no blocking work here",
            )
        if error is not None:
            fail(rule, f"{what} raised {raised(error)}{note(error)}", fix=fix)
        return finished.value

    def _hygiene(self, finished: Finished, what: str) -> None:
        """Fail when ``what`` left tasks running or task exceptions unretrieved."""
        problems = [f"a task was still running: {task}" for task in finished.leftover_tasks]
        problems += [f"unhandled in the event loop: {error}" for error in finished.unhandled]
        if problems:
            fail(
                ConformanceRule.ASYNC_LEFTOVERS,
                f"{what} left work behind in its event loop: " + "; ".join(problems),
                fix="await (or cancel and await) every task you start before decide() returns, "
                "and retrieve every task's exception (asyncio.gather, TaskGroup)",
            )

    async def _decide(self, provider: Any, request: DecisionRequest) -> Any:
        """``await provider.decide(request)`` within ``call_timeout_s`` (for use in the loop)."""
        pending = provider.decide(request)
        if not inspect.isawaitable(pending):
            raise _NotAwaitable(pending)
        try:
            async with asyncio.timeout(self.call_timeout_s) as scope:
                return await pending
        except TimeoutError:
            if scope.expired():
                raise TimedOut from None
            raise

    def _expect(self, transport: RecordingTransport, request: DecisionRequest) -> int:
        """Tell the backend which request comes (when it reads prompts against one); the
        number of prompts it served before."""
        backend = transport.backend
        expect = getattr(backend, "expect", None)
        if callable(expect):
            expect(request)
        return len(getattr(backend, "served", ()))

    def _attempt(self, provider: Any, request: DecisionRequest) -> _Outcome:
        """Call ``decide`` (watching the network); the result or the error."""

        def start() -> Any:
            pending = provider.decide(request)
            if not inspect.isawaitable(pending):
                raise _NotAwaitable(pending)
            return pending

        with watch_network() as attempts:
            finished = self._in_loop(start, timeout=self.call_timeout_s, what="decide()")
        self._no_bypass(attempts)
        self._hygiene(finished, "decide()")
        if isinstance(finished.error, _NotAwaitable):
            fail(
                ConformanceRule.DECIDE_ASYNC,
                "decide(request) must return an awaitable (the provider interface is async)",
                value=finished.error.returned,
                fix="define it as `async def decide(self, request)`",
            )
        if finished.blocked:
            return _Outcome(error=Blocked())
        if finished.timed_out:
            return _Outcome(error=TimedOut())
        return _Outcome(result=finished.value, error=finished.error)

    def _request(self, questions: Mapping[str, DecisionQuestion]) -> DecisionRequest:
        return DecisionRequest(
            model=self.request_model, context=standard_context(), questions=dict(questions)
        )

    def _questions(
        self,
        caps: ProviderCapabilities,
        only: Sequence[str] | None = None,
        source: Mapping[str, DecisionQuestion] | None = None,
    ) -> dict[str, DecisionQuestion]:
        """The questions of ``source`` (the standard ones by default) the provider supports."""
        return {
            question_id: question
            for question_id, question in (source or standard_questions()).items()
            if question.type in caps.question_types and (only is None or question_id in only)
        }

    def _requests(
        self, caps: ProviderCapabilities, questions: Mapping[str, DecisionQuestion]
    ) -> list[DecisionRequest]:
        return [self._request(chunk) for chunk in _chunks(questions, caps.max_questions) if chunk]

    def _no_bypass(self, attempts: NetworkAttempts) -> None:
        if attempts:
            fail(
                ConformanceRule.TRANSPORT_BYPASS,
                "the provider tried to reach the network outside the transport override",
                value=attempts.targets,
                fix="send every request through ProviderFactoryConfig.transport (an httpx "
                "transport or client): build your httpx client with transport=config.transport "
                "instead of a client of your own",
            )
