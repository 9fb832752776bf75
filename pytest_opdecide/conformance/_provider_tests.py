"""``DecisionProviderTests``: the standard checks of a question-decision provider.

Subclass it in your own test suite, say how to build your provider and what it can do, and every
check of the decision contract runs against it::

    class TestMyProvider(DecisionProviderTests):
        provider_factory = my_factory          # factory(config: ProviderFactoryConfig)
        provider_config = {"model": "small"}   # slot values passed in the config
        max_options = 26                       # capabilities (see ProviderCapabilities)

The provider is built with a transport override (:class:`RecordingTransport`) that records every
request and forwards it to a backend: :class:`OpenAIChatBackend` unless ``backend_transport()``
is overridden. The checks read what reached the backend, make it fail, slow it down, and compare
what it answered with what the provider reports, question by question.

Provider code runs in an event loop of its own, in a thread of its own, one per check (see
:mod:`._loop`): whatever the provider does (raise ``KeyboardInterrupt`` or ``SystemExit``, hang,
block the loop, leave a task running or a task exception unretrieved) fails the check that saw
it, and nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final, NoReturn

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, settings

# `import a.b as c` (not `from a import b`): a fresh import when sys.modules lost it (pytester).
import pytest_opdecide.strategies as strategies
from pytest_opdecide.conformance._capabilities import ProviderCapabilities, resolve_capabilities
from pytest_opdecide.conformance._compare import find_mismatch, reported_values
from pytest_opdecide.conformance._failures import (
    ConformanceError,
    ConformanceRule,
    fail,
    fail_validation,
)
from pytest_opdecide.conformance._loop import CheckLoop, Finished
from pytest_opdecide.conformance._network_watch import NetworkAttempts, watch_network
from pytest_opdecide.conformance._openai_backend import OpenAIChatBackend
from pytest_opdecide.conformance._requests import (
    PREVALIDATION_CASES,
    QUESTION_TYPES,
    PrevalidationCase,
    at_limits,
    exact_names_questions,
    look_alike_questions,
    standard_context,
    standard_questions,
)
from pytest_opdecide.conformance._standard import check_standard_checks
from pytest_opdecide.conformance._structure import check_structure
from pytest_opdecide.conformance._transport import RecordingTransport
from pytest_opdecide.questions import (
    DEFAULT_TOLERANCE,
    PROVIDER_ERROR_CODES,
    AbortController,
    BooleanAnswer,
    BooleanQuestion,
    ChoiceAnswer,
    ChoiceQuestion,
    DecisionProvider,
    DecisionQuestion,
    DecisionRequest,
    DecisionResult,
    InvalidRequestError,
    InvalidResultError,
    ProviderError,
    ProviderErrorCode,
    ProviderFactoryConfig,
    Rule,
    ScoreAnswer,
    ScoreQuestion,
    ThreadState,
    resolve_provider_config,
    validate_result,
)
from pytest_opdecide.questions._validate import stated_decimals

__all__ = ["BACKEND_FAILURES", "BASE_URL", "CAPABILITY_ATTRIBUTES", "DecisionProviderTests"]

BASE_URL: Final = "http://decisions.conformance.invalid/v1"
"""The ``base_url`` the provider is built with (``.invalid`` never resolves: nothing leaks)."""

_RESULT_FIX: Final = (
    "build the result so that it follows the rule named above (section 3 of the question-decision "
    "reference); pytest_opdecide.questions.validate_result(request, result) reproduces the check"
)
_ERROR_FIX: Final = (
    "catch transport, HTTP and protocol failures and raise "
    "pytest_opdecide.questions.ProviderError(message, code, status_code=..., retry_after=...) "
    f"with code one of {list(PROVIDER_ERROR_CODES)}"
)
_ABORT_FIX: Final = (
    "check request.signal before any I/O (signal.throw_if_aborted()) and race the work against "
    "it (await signal.wait()); raise ProviderError(..., 'timeout'). BaseDecisionProvider does both"
)


_IDENTITY_FIX: Final = (
    "set the class attributes kind = 'decision', specification_version = '1' and a name "
    "(BaseDecisionProvider has the first two), and define async def decide(self, request)"
)
_PER_QUESTION_FIX: Final = (
    "send each question in a prompt of its own with the request's context, its own instructions, "
    "and each option (level, criterion) next to the label that stands for it, in the order "
    "given; read each label back as the outcome it stood next to, and key each answer by its "
    "own question's id"
)
_AS_COMPUTED_FIX: Final = (
    "report the distribution over the labels as computed; if you round, report the rounded "
    "values as they are (never divide them by their sum again) and say so in metadata "
    "(metadata['rounding'] = {'decimals': 3})"
)


def _raised(error: BaseException) -> str:
    """An exception as a failure message names it."""
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def _note(error: BaseException) -> str:
    """What a failure message adds about an exception that is not an ``Exception``."""
    if isinstance(error, Exception):
        return ""
    return (
        f" ({type(error).__name__} is not an Exception: raised anywhere but in these checks, "
        "it stops the whole program or test run)"
    )


_RESULT_LEVEL_RULES: Final = frozenset({Rule.RESULT_SHAPE, Rule.RESULT_MODEL, Rule.RESULT_USAGE})


CAPABILITY_ATTRIBUTES: Final = (
    "abort_grace_s",
    "call_timeout_s",
    "max_levels",
    "max_options",
    "max_questions",
    "needs_backend",
    "probability_decimals",
    "probability_tolerance",
    "property_examples",
    "reports_confidence",
    "request_model",
    "sent_models",
    "supported_question_types",
    "supports_abort",
)
"""The class attributes of :class:`DecisionProviderTests` that say what the provider can do
and how the checks run; ``opdecide check --capability`` sets the same ones."""


_ENVIRONMENT_SECRET: Final = "sk-opdecide-conformance-environment-secret"
_CREDENTIAL_VARIABLES: Final = (
    "ANTHROPIC_API_KEY",
    "API_KEY",
    "AZURE_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "COHERE_API_KEY",
    "DEEPSEEK_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GROQ_API_KEY",
    "HF_TOKEN",
    "HUGGINGFACE_API_KEY",
    "LLM_API_KEY",
    "MISTRAL_API_KEY",
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
    "TOGETHER_API_KEY",
)
"""Environment variables that commonly hold a model API key."""


class _TimedOut(Exception):
    """The provider did not finish within ``call_timeout_s``."""


class _Blocked(Exception):
    """The provider blocked its event loop past ``call_timeout_s``: it could not be cancelled."""


class _NotAwaitable(Exception):
    """``decide(request)`` returned something that cannot be awaited."""

    def __init__(self, returned: object) -> None:
        super().__init__(type(returned).__name__)
        self.returned = returned


def _is_ours(error: BaseException) -> bool:
    """An error of the checks themselves (a failed rule, pytest's skip or fail), never the
    provider's."""
    return isinstance(error, ConformanceError | pytest.skip.Exception | pytest.fail.Exception)


@dataclass
class _Outcome:
    result: Any = None
    error: BaseException | None = None


def _signal_request(request: DecisionRequest, controller: AbortController) -> DecisionRequest:
    return DecisionRequest(
        model=request.model,
        context=request.context,
        questions=request.questions,
        signal=controller.signal,
    )


def _chunks(questions: Mapping[str, DecisionQuestion], size: int | None) -> list[dict[str, Any]]:
    items = list(questions.items())
    if size is None or size >= len(items):
        return [dict(items)]
    return [dict(items[i : i + size]) for i in range(0, len(items), size)]


@dataclass(frozen=True)
class _BackendFailure:
    id: str
    what: str
    respond: Callable[[httpx.Request], httpx.Response]
    code: ProviderErrorCode | None
    status: int | None = None


def _error_body(status: int, message: str, kind: str) -> Callable[[httpx.Request], httpx.Response]:
    def respond(request: httpx.Request) -> httpx.Response:
        headers = {"retry-after": "7"} if status == 429 else {}
        return httpx.Response(
            status, json={"error": {"message": message, "type": kind}}, headers=headers
        )

    return respond


def _garbage(request: httpx.Request) -> httpx.Response:
    return httpx.Response(
        200,
        content=b"<html><body><h1>502 Bad Gateway</h1></body></html>",
        headers={"content-type": "text/html"},
    )


def _read_timeout(request: httpx.Request) -> httpx.Response:
    raise httpx.ReadTimeout("the conformance backend did not answer in time", request=request)


def _connect_error(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("the conformance backend refused the connection", request=request)


BACKEND_FAILURES: Final = (
    _BackendFailure(
        "server_error",
        "answers HTTP 500",
        _error_body(500, "The server had an error while processing your request.", "server_error"),
        "server_error",
        500,
    ),
    _BackendFailure(
        "rate_limit",
        "answers HTTP 429 with Retry-After: 7",
        _error_body(429, "Rate limit reached for requests.", "rate_limit_exceeded"),
        "rate_limit",
        429,
    ),
    _BackendFailure(
        "auth_error",
        "answers HTTP 401",
        _error_body(401, "Incorrect API key provided.", "invalid_request_error"),
        "auth_error",
        401,
    ),
    _BackendFailure(
        "garbage", "answers HTTP 200 with an HTML page instead of JSON", _garbage, None
    ),
    _BackendFailure(
        "timeout", "does not answer in time (httpx.ReadTimeout)", _read_timeout, "timeout"
    ),
    _BackendFailure(
        "unreachable", "cannot be reached (httpx.ConnectError)", _connect_error, "server_error"
    ),
)


class DecisionProviderTests:
    """The standard checks of a question-decision provider: subclass it in your test suite.

    Say how to build the provider (``provider_factory`` and ``provider_config``, or override the
    ``provider`` fixture) and declare its capabilities as class attributes. Every ``test_*``
    method is a standard check; its docstring says what it verifies and how to fix a failure.
    A check your provider does not pass may be overridden only with
    ``@pytest.mark.xfail(reason="...")``: ``test_no_standard_check_removed`` fails otherwise.

    Attributes:
        provider_factory: A callable taking a ``ProviderFactoryConfig`` and returning the
            provider (a ``DecisionProviderFactory``, a function, a class).
        provider_config: Config slot values (``model``, ``timeout``...) added to the config;
            strings are parsed by the factory's ``config_slots`` types when it has them.
        request_model: The ``model`` of the requests the checks send (``""`` asks for the
            provider's default model).
        api_key: The API key in the config (the empty-key check uses ``""``).
        base_url: The ``base_url`` in the config.
        supported_question_types: The question types the provider answers.
        max_questions: The most questions per request (``None``: the provider's
            ``max_questions`` attribute, else no limit).
        max_options: The most options per choice question (same fallback).
        max_levels: The most levels per score question (same fallback).
        reports_confidence: Choice and score answers carry ``confidence``.
        supports_abort: The provider honours the request's abort signal.
        needs_backend: See :class:`ProviderCapabilities` (``None``: decided by what the provider
            does; set ``False`` for a provider that never does I/O).
        probability_decimals: The decimal places the provider rounds probabilities to (``None``:
            the provider's attribute of that name, else what each result's
            ``metadata["rounding"]`` states, else no rounding beyond ``probability_tolerance``).
        sent_models: The provider's documented mapping from a request's ``model`` to the model
            it sends the backend (empty: the provider's ``sent_models`` attribute, if any); a
            model not in it must be sent as named.
        probability_tolerance: How far from 1 a distribution may sum when rounding explains
            less (every comparison also allows ``FLOAT_EPSILON``).
        property_examples: How many generated requests the property-based check sends.
        call_timeout_s: The longest one ``decide()`` may take.
        abort_grace_s: How long after an abort the provider may take to stop.
    """

    provider_factory: ClassVar[Any] = None
    provider_config: ClassVar[Mapping[str, object]] = {}
    request_model: ClassVar[str] = "conformance-model"
    api_key: ClassVar[str] = "conformance-key"
    base_url: ClassVar[str] = BASE_URL

    supported_question_types: ClassVar[Sequence[str]] = QUESTION_TYPES
    max_questions: ClassVar[int | None] = None
    max_options: ClassVar[int | None] = None
    max_levels: ClassVar[int | None] = None
    reports_confidence: ClassVar[bool] = False
    supports_abort: ClassVar[bool] = True
    needs_backend: ClassVar[bool | None] = None
    probability_decimals: ClassVar[int | None] = None
    sent_models: ClassVar[Mapping[str, str]] = {}

    probability_tolerance: ClassVar[float] = DEFAULT_TOLERANCE
    property_examples: ClassVar[int] = 20
    call_timeout_s: ClassVar[float] = 60.0
    abort_grace_s: ClassVar[float] = 10.0

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

    # --- helpers -------------------------------------------------------------------------------

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
        if error is not None and _is_ours(error):
            raise error
        if finished.blocked or finished.timed_out:
            fail(
                ConformanceRule.ASYNC_BLOCKING,
                f"{what} did not return within {self.call_timeout_s:g} s",
                fix="do no blocking work here",
            )
        if error is not None:
            fail(rule, f"{what} raised {_raised(error)}{_note(error)}", fix=fix)
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
                raise _TimedOut from None
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
            return _Outcome(error=_Blocked())
        if finished.timed_out:
            return _Outcome(error=_TimedOut())
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

    def _failed(self, error: BaseException, what: str) -> NoReturn:
        """Report a valid request that failed."""
        if isinstance(error, _Blocked):
            fail(
                ConformanceRule.ASYNC_BLOCKING,
                f"decide() did not stop on {what} when it was cancelled at its time limit "
                f"({self.call_timeout_s:g} s): it blocks its event loop or ignores cancellation",
                fix="never block inside async code (no time.sleep, no synchronous HTTP client, "
                "no waiting on a lock or a thread without await: asyncio.to_thread for "
                "blocking work), and let asyncio.CancelledError through",
            )
        if isinstance(error, _TimedOut):
            fail(
                ConformanceRule.ANSWERED,
                f"decide() did not answer {what} within {self.call_timeout_s:g} s",
                fix="make sure every await finishes (the backend answers at once here)",
            )
        cause = error.__cause__
        if isinstance(error, ProviderError) and isinstance(cause, InvalidResultError):
            fail_validation(cause, f"the result for {what} breaks a rule", _RESULT_FIX)
        if isinstance(error, InvalidRequestError):
            fail(
                ConformanceRule.ANSWERED,
                f"the provider rejected {what} as invalid: {error}",
                question=error.question,
                fix="if the request is beyond what your provider can represent, declare the "
                "limit as a capability (max_options, max_levels, max_questions, "
                "supported_question_types)",
            )
        if isinstance(error, ProviderError):
            refused = self._backend_refusal()
            fail(
                ConformanceRule.ANSWERED,
                f"decide() failed on {what}: ProviderError(code={error.code!r}): {error}"
                + (f"; the backend had refused a request: {refused}" if refused else ""),
                fix="the backend could not read the requests: send what it expects (the "
                "reference design's prompts, see OpenAIChatBackend), or override "
                "backend_transport() with a backend for your protocol"
                if refused
                else "the backend answered every request correctly; find why the provider failed",
            )
        fail(
            ConformanceRule.ERROR_TYPE,
            f"decide() raised {type(error).__name__} on {what}"
            + (f": {error}" if str(error) else "")
            + _note(error),
            fix=_ERROR_FIX,
        )

    def _decimals(self, provider: Any) -> int | None:
        return self.capabilities(provider).probability_decimals

    def _backend_refusal(self) -> str:
        """The first error the backend itself answered (not one a check made it answer)."""
        recording = getattr(self, "_recording", None)
        if not isinstance(recording, RecordingTransport) or recording.is_failing:
            return ""
        for sent in recording.requests:
            if sent.status is not None and sent.status >= 400:
                body = sent.response_json
                error = body.get("error") if isinstance(body, dict) else None
                message = error.get("message") if isinstance(error, dict) else None
                return f"HTTP {sent.status} to {sent.method} {sent.url}" + (
                    f": {message}" if message else ""
                )
        return ""

    def _valid(
        self, request: DecisionRequest, result: Any, what: str, decimals: int | None = None
    ) -> DecisionResult:
        if not isinstance(result, DecisionResult):
            fail(
                ConformanceRule.ANSWERED,
                f"decide() must return a DecisionResult for {what}",
                value=result,
                fix="return pytest_opdecide.questions.DecisionResult(...)",
            )
        try:
            return validate_result(
                request, result, tolerance=self.probability_tolerance, decimals=decimals
            )
        except InvalidResultError as error:
            fail_validation(error, f"the result for {what} breaks a rule", _RESULT_FIX)
        except Exception as error:  # a result built so oddly that the rules cannot be read
            fail(
                ConformanceRule.ANSWERED,
                f"the result for {what} cannot be checked: {type(error).__name__}: {error}",
                value=result,
                fix="return a DecisionResult built from valid answers (model_construct skips "
                "the checks that would have told you)",
            )

    def _decided(self, provider: Any, request: DecisionRequest, what: str) -> Any:
        """Call ``decide`` on a valid request; what it returned (not checked: a check about
        something else must not fail on the answers, which their own checks report)."""
        outcome = self._attempt(provider, request)
        if outcome.error is not None:
            self._failed(outcome.error, what)
        return outcome.result

    def _decided_if_sent(
        self,
        provider: Any,
        transport: RecordingTransport,
        caps: ProviderCapabilities,
        request: DecisionRequest,
        what: str,
    ) -> Any:
        """:meth:`_decided`, for a check about what was sent: a decision that failed before
        sending anything skips the check (the checks of the answers report the failure)."""
        self._expect(transport, request)
        outcome = self._attempt(provider, request)
        if outcome.error is not None:
            self._uses_backend(caps, transport, what, outcome.error)
            self._failed(outcome.error, what)
        return outcome.result

    def _result_level(self, request: DecisionRequest, result: Any) -> DecisionResult:
        """``result`` checked by the rules about the result as a whole (shape, model, usage);
        the answers' rules are left to the answer checks."""
        if not isinstance(result, DecisionResult):
            fail(
                ConformanceRule.ANSWERED,
                "decide() must return a DecisionResult",
                value=result,
                fix="return pytest_opdecide.questions.DecisionResult(...)",
            )
        try:
            validate_result(request, result, tolerance=self.probability_tolerance)
        except InvalidResultError as error:
            if error.question is None and error.rule in _RESULT_LEVEL_RULES:
                fail_validation(
                    error, "the result for the standard request breaks a rule", _RESULT_FIX
                )
        except Exception:  # left to the answer checks, which report it
            pass
        return result

    def _answered(
        self, provider: Any, transport: RecordingTransport, request: DecisionRequest, what: str
    ) -> DecisionResult:
        """Answer ``request``, checked against every result rule."""
        decimals = self._decimals(provider)
        self._expect(transport, request)
        return self._valid(request, self._decided(provider, request, what), what, decimals)

    def _compared(
        self, provider: Any, transport: RecordingTransport, request: DecisionRequest, what: str
    ) -> tuple[DecisionResult, bool]:
        """Answer ``request``, checked by every rule and question by question against the
        backend; whether the backend gave answers to compare with."""
        decimals = self._decimals(provider)
        served_from = self._expect(transport, request)
        result = self._valid(request, self._decided(provider, request, what), what, decimals)
        compared = self._as_the_backend_answered(request, result, transport, served_from, decimals)
        return result, compared

    def _compared_question_by_question(
        self,
        provider: Any,
        transport: RecordingTransport,
        caps: ProviderCapabilities,
        questions: Mapping[str, DecisionQuestion],
        what: str,
    ) -> None:
        """Answer ``questions`` (in requests of the allowed size), each answer compared with
        the backend's; skip when the backend gave none to compare with."""
        compared = False
        for request in self._requests(caps, questions):
            transport.clear()
            _, was_compared = self._compared(provider, transport, request, what)
            compared = compared or was_compared
            self._uses_backend(caps, transport, what)
        if not compared:
            pytest.skip(
                "the backend states no expected distribution (it has no expected_answer(), or "
                "could not read which label stands for which outcome in the prompts): only the "
                "rules of the answers were checked"
            )

    def _as_the_backend_answered(
        self,
        request: DecisionRequest,
        result: DecisionResult,
        transport: RecordingTransport,
        served_from: int = 0,
        decimals: int | None = None,
    ) -> bool:
        """Fail unless each answer is the backend's answer to its own question; whether the
        backend gave an expected answer to compare with."""
        expected_answer = getattr(transport.backend, "expected_answer", None)
        if expected_answer is None or not transport.requests:
            return False
        compared = False
        for question_id, question in request.questions.items():
            expected = expected_answer(question)
            if expected is None:
                continue
            compared = True
            answer = result.answers[question_id]
            reported = reported_values(answer)
            if reported is None:
                continue
            places = decimals if decimals is not None else stated_decimals(result, question_id)
            mismatch = find_mismatch(
                question_id=question_id,
                question=question,
                reported=reported,
                expected=expected,
                request=request,
                backend=transport.backend,
                served_from=served_from,
                decimals=places,
            )
            if mismatch is None:
                continue
            if (
                isinstance(answer, BooleanAnswer)
                and answer.probability in (0.0, 1.0)
                and mismatch.rule is ConformanceRule.AS_COMPUTED
            ):
                fail(
                    ConformanceRule.BOOLEAN_THRESHOLD,
                    f"the probability is {answer.probability!r} but the backend's answer gives "
                    f"P(true) = {expected['true']!r}: a threshold was applied",
                    question=question_id,
                    value=answer.probability,
                    fix="report P(true) itself; thresholds are the caller's decision",
                )
            shown = {key: round(expected[key], 6) for key in reported}
            fail(
                mismatch.rule,
                f"the reported probabilities are not the backend's answer to this question "
                f"({shown}): {mismatch.detail}",
                question=question_id,
                value=reported,
                fix=_PER_QUESTION_FIX
                if mismatch.rule is ConformanceRule.PER_QUESTION
                else _AS_COMPUTED_FIX,
            )
        return compared

    def _uses_backend(
        self,
        caps: ProviderCapabilities,
        transport: RecordingTransport,
        what: str,
        error: BaseException | None = None,
    ) -> None:
        """Skip (or fail, when declared) a check that needs the backend if none was used."""
        if transport.requests:
            return
        if error is not None:
            reason = (
                "did not finish"
                if isinstance(error, _TimedOut | _Blocked)
                else (f"raised {type(error).__name__}")
            )
            pytest.skip(
                f"decide() {reason} before sending anything, so there is nothing to check "
                "here (the checks of the answers report it)"
            )
        if caps.needs_backend:
            fail(
                ConformanceRule.TRANSPORT_UNUSED,
                f"{what}: the provider sent nothing through the transport override although "
                "needs_backend = True",
                fix="send every request through ProviderFactoryConfig.transport, or declare "
                "needs_backend = False",
            )
        pytest.skip(
            "no request reached the backend, so there is nothing to check (declare "
            "needs_backend = True to require one)"
        )

    def _skip_without_backend(self, caps: ProviderCapabilities) -> None:
        if caps.needs_backend is False:
            pytest.skip("needs_backend = False: the provider makes no backend call to check")

    # --- identity and construction -------------------------------------------------------------

    def test_identity(self, provider: Any) -> None:
        """The provider identifies itself: ``kind == "decision"``, ``specification_version ==
        "1"``, a non-empty ``name``, and an async ``decide``.

        Fix: set the three class attributes (``BaseDecisionProvider`` has them; set ``name``)
        and define ``async def decide(self, request)``.
        """

        def read() -> tuple[Any, Any, Any, bool, bool]:
            return (
                getattr(provider, "kind", None),
                getattr(provider, "specification_version", None),
                getattr(provider, "name", None),
                callable(getattr(provider, "decide", None)),
                isinstance(provider, DecisionProvider),
            )

        kind, version, name, has_decide, is_provider = self._provider_code(
            read,
            "reading the provider's kind, specification_version and name",
            ConformanceRule.IDENTITY,
            "make kind, specification_version and name plain class attributes",
        )
        fix = _IDENTITY_FIX
        if kind != "decision":
            fail(ConformanceRule.IDENTITY, "kind must be 'decision'", value=kind, fix=fix)
        if version != "1":
            fail(
                ConformanceRule.IDENTITY,
                "specification_version must be '1'",
                value=version,
                fix=fix,
            )
        if not isinstance(name, str) or not name.strip():
            fail(ConformanceRule.IDENTITY, "name must be a non-empty string", value=name, fix=fix)
        if not has_decide:
            fail(ConformanceRule.IDENTITY, "the provider has no decide(request) method", fix=fix)
        if not is_provider:
            fail(
                ConformanceRule.IDENTITY,
                "the provider does not implement DecisionProvider",
                fix=fix,
            )

    def test_optional_methods(self, provider: Any, recording_transport: RecordingTransport) -> None:
        """``get_models(filter=None)`` returns a list and never raises (``[]`` when listing
        fails), through the transport override; ``get_icon(model_id=None)`` returns a ``data:``
        URI or ``None``.

        Fix: catch every failure in ``get_models`` and return ``[]``; return ``None`` from
        ``get_icon`` when there is no icon.
        """
        fix_icon = "return a data: URI or None from get_icon(), and never raise"
        get_icon = self._provider_code(
            lambda: getattr(provider, "get_icon", None),
            "reading get_icon",
            ConformanceRule.OPTIONAL_METHODS,
            fix_icon,
        )
        if get_icon is not None:
            for model_id in (None, self.request_model):
                icon = self._provider_code(
                    functools.partial(get_icon, model_id),
                    f"get_icon({model_id!r})",
                    ConformanceRule.OPTIONAL_METHODS,
                    fix_icon,
                )
                if icon is not None and not (isinstance(icon, str) and icon.startswith("data:")):
                    fail(
                        ConformanceRule.OPTIONAL_METHODS,
                        f"get_icon({model_id!r}) must return a data: URI or None",
                        value=icon,
                        fix="return a data: URI (data:image/svg+xml;base64,...) or None",
                    )
        get_models = self._provider_code(
            lambda: getattr(provider, "get_models", None),
            "reading get_models",
            ConformanceRule.OPTIONAL_METHODS,
            "make get_models an async method",
        )
        if get_models is None:
            return
        for failing in (False, True):
            recording_transport.clear()
            when = " when the backend answers HTTP 500" if failing else ""
            with watch_network() as attempts, contextlib.ExitStack() as stack:
                if failing:
                    stack.enter_context(recording_transport.failing(BACKEND_FAILURES[0].respond))
                finished = self._in_loop(
                    get_models, timeout=self.call_timeout_s, what="get_models()"
                )
            self._no_bypass(attempts)
            self._hygiene(finished, "get_models()")
            if finished.blocked or finished.timed_out:
                fail(
                    ConformanceRule.OPTIONAL_METHODS,
                    f"get_models() did not return within {self.call_timeout_s:g} s{when}",
                    fix="bound the listing with a timeout and return [] when it fails",
                )
            if finished.error is not None:
                fail(
                    ConformanceRule.OPTIONAL_METHODS,
                    f"get_models() raised {_raised(finished.error)}{when}{_note(finished.error)}",
                    fix="catch every failure in get_models() and return []",
                )
            models = finished.value
            if not isinstance(models, list):
                fail(
                    ConformanceRule.OPTIONAL_METHODS,
                    "get_models() must return a list",
                    value=type(models).__name__,
                    fix="return a list of ProviderModelInfo",
                )
            if failing and recording_transport.requests and models:
                fail(
                    ConformanceRule.OPTIONAL_METHODS,
                    "get_models() must return [] when listing the models fails",
                    value=models,
                    fix="catch every failure in get_models() and return []",
                )
            for model in models:
                model_id = getattr(model, "id", None)
                if not isinstance(model_id, str) or not model_id:
                    fail(
                        ConformanceRule.OPTIONAL_METHODS,
                        "get_models() must return ProviderModelInfo objects with an id",
                        value=model,
                        fix="return ProviderModelInfo(id=...) objects",
                    )

    def test_construction_does_no_io(self, recording_transport: RecordingTransport) -> None:
        """Building the provider sends nothing: no request through the transport override, no
        connection or DNS lookup anywhere (runtimes build providers just to read their name).

        Fix: do no I/O in the constructor or the factory (no model listing, key check or
        warm-up request); do it lazily in ``decide``.
        """
        if self._factory() is None:
            pytest.skip("no provider_factory is set: construction is checked only through it")
        with watch_network() as attempts:
            finished = self._in_loop(
                lambda: self.build_provider(recording_transport),
                timeout=self.call_timeout_s,
                what="building the provider",
            )
        if finished.error is not None and _is_ours(finished.error):
            raise finished.error
        if attempts:
            fail(
                ConformanceRule.CONSTRUCTION_IO,
                "building the provider tried to reach the network",
                value=attempts.targets,
                fix="do no I/O in the constructor or the factory; do it lazily in decide()",
            )
        if recording_transport.requests:
            fail(
                ConformanceRule.CONSTRUCTION_IO,
                "building the provider sent requests through the transport override",
                value=[f"{r.method} {r.url}" for r in recording_transport.requests],
                fix="do no I/O in the constructor or the factory (no model listing, key check "
                "or warm-up); do it lazily in decide()",
            )
        if finished.blocked or finished.timed_out:
            fail(
                ConformanceRule.CONSTRUCTION_IO,
                f"building the provider took more than {self.call_timeout_s:g} s",
                fix="do no I/O in the constructor or the factory; do it lazily in decide()",
            )
        self._hygiene(finished, "building the provider")
        if finished.error is not None:
            fail(
                ConformanceRule.CONSTRUCTION_FAILED,
                f"building the provider raised {_raised(finished.error)}{_note(finished.error)}",
                fix="the factory must build a provider from any valid config",
            )

    def test_construction_accepts_an_empty_key(
        self, recording_transport: RecordingTransport
    ) -> None:
        """Building the provider with an empty API key (``""`` or ``None``) does not fail:
        runtimes build providers without credentials just to read their name.

        Fix: accept a missing key at construction; report ``auth_error`` when a call needs it.
        """
        factory = self._factory()
        if factory is None:
            pytest.skip("no provider_factory is set: construction is checked only through it")
        for key in ("", None):
            config = self.provider_factory_config(recording_transport, api_key=key)
            with watch_network() as attempts:
                finished = self._in_loop(
                    functools.partial(factory, config),
                    timeout=self.call_timeout_s,
                    what=f"building the provider with api_key={key!r}",
                )
            if finished.error is not None:
                fail(
                    ConformanceRule.CONSTRUCTION_EMPTY_KEY,
                    f"building the provider with api_key={key!r} raised "
                    f"{_raised(finished.error)}{_note(finished.error)}",
                    value=key,
                    fix="accept an empty key at construction; raise "
                    "ProviderError(..., 'auth_error') when a call needs one",
                )
            if attempts:
                fail(
                    ConformanceRule.CONSTRUCTION_IO,
                    "building the provider tried to reach the network",
                    value=attempts.targets,
                    fix="do no I/O in the constructor or the factory; do it lazily in decide()",
                )

    def test_no_credential_is_sent_that_the_config_does_not_hold(
        self, recording_transport: RecordingTransport
    ) -> None:
        """A provider built without an API key and without headers sends no credential. It
        reads none from the environment itself (``OPENAI_API_KEY``...): a runtime resolves
        credentials and drops the inherited ones when a user or thread overrides the
        destination, and a provider reading its own would send one there anyway.

        The check sets well-known key variables (and the ``default_env`` of the factory's
        secret slots) to a marker value, builds the provider with ``api_key=None``, and looks
        for the marker in every request sent.

        Fix: take credentials from ``ProviderFactoryConfig`` only; declare a ``secret`` config
        slot with ``default_env`` to have the runtime read a variable.
        """
        factory = self._factory()
        if factory is None:
            pytest.skip("no provider_factory is set: construction is checked only through it")
        slots = getattr(factory, "config_slots", None)
        variables = set(_CREDENTIAL_VARIABLES)
        if isinstance(slots, Mapping):
            variables |= {
                slot.default_env
                for slot in slots.values()
                if getattr(slot, "type", None) == "secret" and getattr(slot, "default_env", None)
            }
        config = dataclasses.replace(
            self.provider_factory_config(recording_transport, api_key=None),
            api_key=None,
            default_headers={},
        )
        with pytest.MonkeyPatch.context() as patch:
            for name in sorted(variables):
                patch.setenv(name, _ENVIRONMENT_SECRET)
            provider = self._provider_code(
                functools.partial(factory, config),
                "building the provider without an API key",
                ConformanceRule.CONSTRUCTION_EMPTY_KEY,
                "accept a missing key at construction",
            )
            caps = self.capabilities(provider)
            self._skip_without_backend(caps)
            request = self._requests(caps, self._questions(caps))[0]
            self._expect(recording_transport, request)
            outcome = self._attempt(provider, request)
        self._uses_backend(caps, recording_transport, "the standard request", outcome.error)
        for recorded in recording_transport.requests:
            where = [
                f"header {name!r}"
                for name, value in recorded.headers.items()
                if _ENVIRONMENT_SECRET in value
            ]
            if _ENVIRONMENT_SECRET in recorded.url:
                where.append("the URL")
            if _ENVIRONMENT_SECRET.encode() in recorded.content:
                where.append("the body")
            if where:
                fail(
                    ConformanceRule.CREDENTIALS,
                    "the provider was built without a key, but sent one read from the "
                    f"environment ({', '.join(where)} of {recorded.method} {recorded.url})",
                    value=sorted(variables),
                    fix="take credentials from ProviderFactoryConfig only; declare a secret "
                    "config slot with default_env to have the runtime read the variable",
                )

    # --- transport and structure ---------------------------------------------------------------

    def test_requests_go_through_the_transport_override(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """Every request of a decision goes through the transport override of the config; none
        reaches the network another way.

        Applies only to what is sent: a decision that fails, or that sends nothing, is left to
        the checks about answers (a provider that makes no request is skipped here).

        Fix: build your HTTP client from ``ProviderFactoryConfig.transport`` (an httpx transport
        or client), never a client of your own.
        """
        caps = self.capabilities(provider)
        self._skip_without_backend(caps)
        error: BaseException | None = None
        for request in self._requests(caps, self._questions(caps)):
            self._expect(recording_transport, request)
            # A bypass fails here; an error is not this check's business.
            error = self._attempt(provider, request).error or error
        self._uses_backend(caps, recording_transport, "the standard request", error)

    def test_structure_reaches_the_backend_intact(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """The context, instructions, option names and descriptions, levels and criteria reach
        the backend with their JSON structure intact: same types (``"0042"`` stays a string,
        ``1.5`` a float, ``true`` a boolean), same key order, nothing dropped; each question's
        parts in a request that carries its instructions, and the context in every request that
        asks a question.

        Fix: write structured values as JSON (``json.dumps``, any indentation) into the prompt,
        or send them as JSON fields; never ``str(value)`` or a reformatted text. Send the
        context with every request.
        """
        caps = self.capabilities(provider)
        self._skip_without_backend(caps)
        questions = {
            **self._questions(caps),
            **self._questions(caps, source=look_alike_questions()),
        }
        for request in self._requests(caps, questions):
            recording_transport.clear()
            self._expect(recording_transport, request)
            outcome = self._attempt(provider, request)  # what was sent is checked, even so
            self._uses_backend(caps, recording_transport, "the standard request", outcome.error)
            check_structure(request, recording_transport.requests)

    @pytest.mark.parametrize("case", PREVALIDATION_CASES, ids=lambda case: case.id)
    def test_unrepresentable_requests_are_rejected_before_sending(
        self, provider: Any, recording_transport: RecordingTransport, case: PrevalidationCase
    ) -> None:
        """A request the provider cannot represent (no question, one option, duplicate or blank
        option names, one level, beyond ``max_options``/``max_levels``/``max_questions``, an
        unsupported question type) is rejected with ``ProviderError(code="invalid_request")``
        saying why, before anything is sent.

        Fix: call ``validate_request(request, max_questions=..., max_options=...,
        max_levels=...)`` first thing in ``decide`` (``BaseDecisionProvider`` does), and reject
        question types you do not support.
        """
        caps = self.capabilities(provider)
        request = case.build(caps.limits, self.request_model)
        if request is None:
            pytest.skip(f"applies only when {case.applies_when}")
        recording_transport.clear()
        outcome = self._attempt(provider, request)
        if recording_transport.requests:
            fail(
                ConformanceRule.PREVALIDATION,
                f"a request the provider cannot represent ({case.why}) was sent to the backend "
                "instead of being rejected first",
                value=[f"{r.method} {r.url}" for r in recording_transport.requests],
                fix="validate the request before any I/O: validate_request(request, "
                "max_options=..., max_levels=..., max_questions=...)",
            )
        error = outcome.error
        if error is None:
            fail(
                ConformanceRule.PREVALIDATION,
                f"the provider answered a request it cannot represent ({case.why}) instead of "
                "rejecting it",
                value=list(request.questions),
                fix="reject it with ProviderError(..., 'invalid_request'), or correct the "
                "declared capabilities",
            )
        if isinstance(error, _TimedOut | _Blocked):
            self._failed(error, f"a request it cannot represent ({case.why})")
        if not isinstance(error, ProviderError):
            fail(
                ConformanceRule.ERROR_TYPE,
                f"a request the provider cannot represent ({case.why}) raised "
                f"{_raised(error)} instead of ProviderError(code='invalid_request')"
                f"{_note(error)}",
                value=str(error),
                fix=_ERROR_FIX,
            )
        if error.code != "invalid_request":
            fail(
                ConformanceRule.ERROR_CODE,
                f"a request the provider cannot represent ({case.why}) must be rejected with "
                "code 'invalid_request'",
                value=error.code,
                fix="raise ProviderError(..., 'invalid_request') (InvalidRequestError, which "
                "validate_request raises, has that code)",
            )
        if not str(error).strip():
            fail(
                ConformanceRule.PREVALIDATION,
                "the error must say why the request is rejected",
                fix="say in the message which rule the request breaks (validate_request's "
                "errors do)",
            )

    # --- answers -------------------------------------------------------------------------------

    def _answer_type(
        self,
        provider: Any,
        transport: RecordingTransport,
        kind: str,
        extra: Mapping[str, DecisionQuestion] | None = None,
    ) -> list[tuple[DecisionRequest, DecisionResult]]:
        caps = self.capabilities(provider)
        if kind not in caps.question_types:
            pytest.skip(f"{kind} questions are not in supported_question_types")
        questions = {**self._questions(caps), **(extra or {})}
        chosen = {qid: q for qid, q in questions.items() if q.type == kind}
        answered = []
        for request in self._requests(caps, chosen):
            result = self._answered(provider, transport, request, f"a request of {kind} questions")
            answered.append((request, result))
        return answered

    def test_choice_answers(self, provider: Any, recording_transport: RecordingTransport) -> None:
        """Choice questions get choice answers: ``choice`` is one of the options,
        ``probabilities`` has exactly the option names, each a finite float in [0, 1], summing
        to 1 within ``probability_tolerance``.

        Fix: key the distribution by the option names as given (not labels or indices), and
        include every option (0 for those the model never named).
        """
        self._answer_type(provider, recording_transport, "choice")

    def test_score_answers(self, provider: Any, recording_transport: RecordingTransport) -> None:
        """Score questions get score answers: ``probabilities`` keyed ``"0"``..``"L-1"``,
        ``score`` equal to their weighted mean, within ``[0, L-1]``, and a ``legend`` mapping
        every index to its level exactly as asked.

        Fix: compute ``score = sum(i * p_i)`` over the reported probabilities and copy the levels
        into the legend unchanged.
        """
        self._answer_type(provider, recording_transport, "score")

    def test_boolean_answers(self, provider: Any, recording_transport: RecordingTransport) -> None:
        """Boolean questions get boolean answers whose ``probability`` is P(true), a float in
        [0, 1].

        Fix: return ``BooleanAnswer(probability=p_true)`` with a float.
        """
        self._answer_type(provider, recording_transport, "boolean")

    def test_answers_key_every_question(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """A request mixing question types gets exactly one answer per question id, no more,
        each of its question's type.

        Fix: key the answers by the request's question ids, as given.
        """
        caps = self.capabilities(provider)
        for request in self._requests(caps, self._questions(caps)):
            self._answered(provider, recording_transport, request, "a request of mixed questions")

    def test_probabilities_are_complete_and_not_renormalised(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """Distributions are complete and reported as computed: every probability equals what
        the backend's answer gives (or a rounding of it), so nothing is renormalised after
        rounding, and no label mass is lost or invented.

        Fix: renormalise over the labels once, then report; if you round, report the rounded
        values as they are and note it in ``metadata``.
        """
        caps = self.capabilities(provider)
        self._skip_without_backend(caps)
        if "choice" not in caps.question_types and "score" not in caps.question_types:
            pytest.skip("neither choice nor score questions are supported")
        questions = {
            qid: q for qid, q in self._questions(caps).items() if q.type in ("choice", "score")
        }
        self._compared_question_by_question(
            provider, recording_transport, caps, questions, "choice and score questions"
        )

    def test_score_is_the_probability_weighted_mean(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """On scales of every length up to ``max_levels``, ``score == sum(i * p_i)``, inside
        ``[0, L-1]``.

        Fix: compute the score from the reported probabilities, with zero-based level indices.
        """
        caps = self.capabilities(provider)
        if "score" not in caps.question_types:
            pytest.skip("score questions are not in supported_question_types")
        top = min(caps.max_levels or 10, 10)
        questions: dict[str, DecisionQuestion] = {
            f"scale_{count}": ScoreQuestion(
                instructions=f"Rate the customer's patience on a {count}-level scale.",
                levels=[f"patience {i} of {count - 1}" for i in range(count)],
            )
            for count in sorted({2, 3, (2 + top) // 2, top})
        }
        for request in self._requests(caps, questions):
            self._answered(provider, recording_transport, request, "score questions")

    def test_boolean_is_a_probability_not_a_verdict(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """A boolean answer's ``probability`` is never a ``bool`` and never thresholded to 0 or
        1: it is P(true) as the backend's answer gives it.

        Fix: return the float P(true); leave thresholds (``p > 0.5``) to the caller.
        """
        caps = self.capabilities(provider)
        if "boolean" not in caps.question_types:
            pytest.skip("boolean questions are not in supported_question_types")
        questions: dict[str, DecisionQuestion] = {
            "refund": standard_questions()["refund"],
            "repeat": standard_questions()["repeat"],
            "angry": BooleanQuestion(instructions="Is the customer angry?"),
        }
        reported: list[float] = []
        for request in self._requests(caps, questions):
            recording_transport.clear()
            result, _ = self._compared(provider, recording_transport, request, "boolean questions")
            reported += [
                answer.probability
                for answer in result.answers.values()
                if isinstance(answer, BooleanAnswer)
            ]
        if all(p in (0.0, 1.0) for p in reported):
            fail(
                ConformanceRule.BOOLEAN_THRESHOLD,
                "every boolean probability is exactly 0 or 1: a threshold looks applied",
                value=reported,
                fix="report P(true) itself; if your backend really is certain every time, "
                "override this check with @pytest.mark.xfail(reason=...)",
            )

    def test_each_question_is_answered_from_its_own_prompt(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """Each answer is the backend's answer to that question's own prompt: one that carries
        the request's context, the question's own instructions and each option, level or
        criterion next to the label that stands for it. The questions come in pairs that look
        alike (same option names, as many levels, criteria on both sides): answers swapped
        between two questions, parts given to the other question or to another label (rotated
        options, reversed levels, swapped criteria), a part or the context left out, all
        change the backend's answer.

        Fix: render each question from its own parts, in the order given, with the context;
        read each label back as the outcome it stood next to; key each answer by its own id.
        """
        caps = self.capabilities(provider)
        self._skip_without_backend(caps)
        questions = self._questions(caps, source=look_alike_questions())
        self._compared_question_by_question(
            provider, recording_transport, caps, questions, "questions that look alike"
        )

    def test_question_ids_and_option_names_are_kept_exactly(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """Question ids and option names come back exactly as given: spaces around and inside
        kept, letter case kept, composed and decomposed accents told apart (``"café"`` and
        ``"cafe\\u0301"``), emoji and punctuation kept, names that look like labels (``"A"``,
        ``"0"``) or JSON (``"true"``) taken as names.

        Fix: key answers and probabilities by the ids and names of the request, unchanged: no
        ``strip()``, ``lower()``, Unicode normalisation or re-encoding.
        """
        caps = self.capabilities(provider)
        questions = self._questions(caps, source=exact_names_questions())
        if caps.max_options is not None and caps.max_options < 4:
            questions = {q: v for q, v in questions.items() if not isinstance(v, ChoiceQuestion)}
        if not questions:
            pytest.skip("none of the questions fits the declared capabilities")
        for request in self._requests(caps, questions):
            recording_transport.clear()
            self._compared(provider, recording_transport, request, "odd question ids and names")

    def test_confidence_is_reported(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """A provider declaring ``reports_confidence = True`` gives choice and score answers a
        ``confidence`` in [0, 1].

        Fix: fill ``confidence``, or declare ``reports_confidence = False``.
        """
        caps = self.capabilities(provider)
        if not caps.reports_confidence:
            pytest.skip("reports_confidence = False (every answer check range-checks a confidence)")
        questions = {
            qid: q for qid, q in self._questions(caps).items() if q.type in ("choice", "score")
        }
        if not questions:
            pytest.skip("neither choice nor score questions are supported")
        for request in self._requests(caps, questions):
            result = self._answered(provider, recording_transport, request, "the standard request")
            for question_id, answer in result.answers.items():
                if isinstance(answer, ChoiceAnswer | ScoreAnswer) and answer.confidence is None:
                    fail(
                        ConformanceRule.CONFIDENCE,
                        "reports_confidence = True, but the answer has no confidence",
                        question=question_id,
                        value=answer.confidence,
                        fix="fill ChoiceAnswer.confidence and ScoreAnswer.confidence, or declare "
                        "reports_confidence = False",
                    )

    def test_usage_and_model(self, provider: Any, recording_transport: RecordingTransport) -> None:
        """``usage`` has integer counts adding up what the backend reported (zeros only when it
        reported nothing; never invented), and ``model`` names the model the backend said
        answered (the resolved version, not the alias that was asked for).

        Fix: sum ``prompt_tokens``, ``completion_tokens`` and ``total_tokens`` over every
        response of the decision; take ``model`` from the responses.
        """
        caps = self.capabilities(provider)
        for request in self._requests(caps, self._questions(caps)):
            recording_transport.clear()
            result = self._result_level(
                request,
                self._decided_if_sent(
                    provider, recording_transport, caps, request, "the standard request"
                ),
            )
            responses = [
                r.response_json
                for r in recording_transport.requests
                if isinstance(r.response_json, dict)
            ]
            usages = [r["usage"] for r in responses if isinstance(r.get("usage"), dict)]
            for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
                counts = [u.get(name) for u in usages]
                if not counts or not all(type(c) is int for c in counts):
                    continue
                reported = getattr(result.usage, name)
                if reported != sum(counts):
                    fail(
                        ConformanceRule.USAGE,
                        f"usage.{name} is {reported}, but the backend reported {sum(counts)} "
                        f"over {len(counts)} response(s)",
                        value=reported,
                        fix=f"add up usage.{name} of every response of the decision",
                    )
            models = {r["model"] for r in responses if isinstance(r.get("model"), str)}
            if models and result.model not in models:
                fail(
                    ConformanceRule.MODEL,
                    f"the backend said {sorted(models)} answered, but the result names "
                    f"{result.model!r}",
                    value=result.model,
                    fix="report the model named by the backend's responses (the resolved "
                    "version when the request used an alias)",
                )

    def test_the_requested_model_is_sent(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """Every request to the backend that names a model (a JSON body with a ``"model"``
        field) names the request's model, or the one ``sent_models`` maps it to: the provider
        never sends a fixed model whatever the request asks for.

        Fix: send ``request.model`` (your default model only when it is empty); declare a
        documented alias table as ``sent_models``.
        """
        caps = self.capabilities(provider)
        self._skip_without_backend(caps)
        asked = self.request_model
        if not asked and "" not in caps.sent_models:
            pytest.skip("request_model is empty: the provider's default model may be sent")
        wanted = caps.sent_models.get(asked, asked)
        sent: list[str] = []
        for request in self._requests(caps, self._questions(caps)):
            recording_transport.clear()
            self._expect(recording_transport, request)
            outcome = self._attempt(provider, request)
            self._uses_backend(caps, recording_transport, "the standard request", outcome.error)
            for recorded in recording_transport.requests:
                body = recorded.json
                if isinstance(body, dict) and "model" in body:
                    sent.append(body["model"])
        if not sent:
            pytest.skip("no request body names a model (another protocol): nothing to compare")
        wrong = sorted({repr(model) for model in sent if model != wanted})
        if wrong:
            mapped = f" (mapped by sent_models from {asked!r})" if wanted != asked else ""
            fail(
                ConformanceRule.MODEL_REQUESTED,
                f"the request asked for model {asked!r}, but the provider sent "
                f"{', '.join(wrong)} to the backend instead of {wanted!r}{mapped}",
                value=sent,
                fix="send the request's model; if your provider maps model names, declare the "
                "mapping as sent_models = {'requested': 'sent'}",
            )

    def test_usage_is_never_invented(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """Usage the backend does not report is not made up. When no response reports usage,
        the counts are zeros and there is no cost; when some do, the counts add up those that
        do (never an estimate for the others) and there is no cost (it would understate what
        was used). Nothing is reported for cached or reasoning tokens the backend never
        mentioned.

        Fix: add up what the responses report, nothing more; leave ``cost`` as ``None`` unless
        every response reported its usage (``ProviderUsage.combined`` does both).
        """
        caps = self.capabilities(provider)
        self._skip_without_backend(caps)
        request = self._requests(caps, self._questions(caps))[0]
        for keep in (0, 1):
            recording_transport.clear()
            seen = [0]

            def without_usage(body: Any, keep: int = keep, seen: list[int] = seen) -> Any:
                if isinstance(body, dict) and "usage" in body:
                    seen[0] += 1
                    if seen[0] > keep:
                        body = {k: v for k, v in body.items() if k != "usage"}
                return body

            with recording_transport.rewriting(without_usage):
                result = self._result_level(
                    request,
                    self._decided_if_sent(
                        provider, recording_transport, caps, request, "the standard request"
                    ),
                )
            self._uses_backend(caps, recording_transport, "the standard request")
            responses = [r.response_json for r in recording_transport.requests]
            reported = [r["usage"] for r in responses if isinstance(r, dict) and "usage" in r]
            if len(reported) == len(responses):
                pytest.skip("the backend's responses carry no usage to leave out")
            usage = result.usage
            for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
                total = sum(u.get(name, 0) for u in reported if isinstance(u, dict))
                if getattr(usage, name) != total:
                    fail(
                        ConformanceRule.USAGE_INVENTED,
                        f"usage.{name} is {getattr(usage, name)}, but the backend reported "
                        f"{total} ({len(responses) - len(reported)} of {len(responses)} "
                        "response(s) reported no usage): counts were made up",
                        value=usage,
                        fix="add up the usage the responses report; zeros when none does",
                    )
            for name in ("cached_tokens", "reasoning_tokens"):
                if getattr(usage, name):
                    fail(
                        ConformanceRule.USAGE_INVENTED,
                        f"usage.{name} is {getattr(usage, name)}, but the backend never "
                        "mentioned them",
                        value=usage,
                        fix="report cached and reasoning tokens only when the backend reports them",
                    )
            if usage.cost is not None:
                fail(
                    ConformanceRule.USAGE_INVENTED,
                    f"usage.cost is {usage.cost!r}, but {len(responses) - len(reported)} of "
                    f"{len(responses)} response(s) reported no usage: the cost is unknown",
                    value=usage,
                    fix="leave cost as None unless every response reported its usage "
                    "(ProviderUsage.combined(reports, pricing=...))",
                )

    # --- failures ------------------------------------------------------------------------------

    @pytest.mark.parametrize("failure", BACKEND_FAILURES, ids=lambda failure: failure.id)
    def test_backend_failures_raise_provider_errors(
        self, provider: Any, recording_transport: RecordingTransport, failure: _BackendFailure
    ) -> None:
        """When the backend fails (HTTP 500, 429, 401, a non-JSON body, a timeout, no
        connection), ``decide`` raises ``ProviderError`` with the matching code
        (``server_error``, ``rate_limit`` with ``retry_after`` in seconds, ``auth_error``,
        any valid code, ``timeout``, ``server_error``), never a bare exception.

        Fix: catch httpx and parsing errors and raise ``ProviderError(message, code,
        status_code=..., retry_after=...)``.
        """
        caps = self.capabilities(provider)
        self._skip_without_backend(caps)
        question_id, question = next(
            iter(self._questions(caps, only=["tone", "effort", "repeat"]).items())
        )
        first = self._request({question_id: question})
        with recording_transport.failing(failure.respond):
            outcome = self._attempt(provider, first)
        self._uses_backend(caps, recording_transport, f"the backend {failure.what}")
        error = outcome.error
        if error is None:
            fail(
                ConformanceRule.ERROR_TYPE,
                f"decide() returned a result although the backend {failure.what}",
                value=outcome.result,
                fix=_ERROR_FIX,
            )
        if isinstance(error, _Blocked):
            self._failed(error, f"a request the backend {failure.what}")
        if isinstance(error, _TimedOut):
            fail(
                ConformanceRule.ERROR_TYPE,
                f"decide() did not give up within {self.call_timeout_s:g} s when the backend "
                f"{failure.what}",
                fix="bound retries; then raise ProviderError",
            )
        if not isinstance(error, ProviderError):
            fail(
                ConformanceRule.ERROR_TYPE,
                f"when the backend {failure.what}, decide() raised {_raised(error)} "
                f"instead of ProviderError{_note(error)}",
                value=str(error),
                fix=_ERROR_FIX,
            )
        if error.code not in PROVIDER_ERROR_CODES:
            fail(
                ConformanceRule.ERROR_CODE,
                "the code is not a valid one",
                value=error.code,
                fix=f"use one of {list(PROVIDER_ERROR_CODES)}",
            )
        if failure.code is not None and error.code != failure.code:
            fail(
                ConformanceRule.ERROR_CODE,
                f"when the backend {failure.what}, the code must be {failure.code!r}",
                value=error.code,
                fix="map HTTP 429 to rate_limit, 401/403 to auth_error, 5xx and unreachable "
                "servers to server_error, timeouts to timeout",
            )
        if failure.status and error.status_code is not None and error.status_code != failure.status:
            fail(
                ConformanceRule.ERROR_CODE,
                f"when the backend {failure.what}, status_code must be {failure.status}",
                value=error.status_code,
                fix="set ProviderError.status_code to the HTTP status of the response",
            )
        retry_after = error.retry_after
        if failure.id == "rate_limit" and retry_after is not None and retry_after != 7.0:
            fail(
                ConformanceRule.ERROR_CODE,
                "retry_after must be the Retry-After header in seconds (7)",
                value=retry_after,
                fix="read Retry-After (seconds, or an HTTP date) into ProviderError.retry_after",
            )

    # --- abort ---------------------------------------------------------------------------------

    def _abort_request(
        self, caps: ProviderCapabilities, controller: AbortController
    ) -> DecisionRequest:
        request = self._requests(caps, self._questions(caps))[0]
        return _signal_request(request, controller)

    def test_pre_aborted_signal_rejects_without_a_call(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """A request whose signal is already aborted is rejected with ``ProviderError(code=
        "timeout")`` and nothing is sent.

        Fix: call ``request.signal.throw_if_aborted()`` before any work.
        """
        caps = self.capabilities(provider)
        if not caps.supports_abort:
            pytest.skip("supports_abort = False")
        controller = AbortController()
        controller.abort("conformance check: aborted before the call")
        recording_transport.clear()
        request = self._abort_request(caps, controller)
        self._expect(recording_transport, request)
        outcome = self._attempt(provider, request)
        if recording_transport.requests:
            fail(
                ConformanceRule.ABORT_BEFORE,
                "the signal was already aborted, but requests were sent",
                value=[f"{r.method} {r.url}" for r in recording_transport.requests],
                fix=_ABORT_FIX,
            )
        self._aborted(
            outcome.error, outcome.result, ConformanceRule.ABORT_BEFORE, "before the call"
        )

    def _aborted(
        self, error: BaseException | None, result: Any, rule: ConformanceRule, when: str
    ) -> None:
        if error is None:
            fail(
                rule,
                f"decide() returned a result although its signal was aborted {when}",
                value=type(result).__name__,
                fix=_ABORT_FIX,
            )
        if isinstance(error, _Blocked | _TimedOut):
            self._failed(error, f"a decision whose signal was aborted {when}")
        if not isinstance(error, ProviderError):
            fail(
                ConformanceRule.ERROR_TYPE,
                f"a signal aborted {when} raised {_raised(error)} instead of "
                f"ProviderError(code='timeout'){_note(error)}",
                value=str(error),
                fix=_ABORT_FIX,
            )
        if error.code != "timeout":
            fail(
                ConformanceRule.ERROR_CODE,
                f"a signal aborted {when} must surface as code 'timeout'",
                value=error.code,
                fix=_ABORT_FIX,
            )

    def test_abort_during_the_call_is_honoured(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """A signal aborted while the backend is still answering stops the decision promptly
        with ``ProviderError(code="timeout")``, and no result is returned.

        The backend holds the request; the check aborts, then lets the backend answer half a
        second later: a provider that ignores the abort returns that answer and fails.

        Fix: race the work against ``signal.wait()`` and cancel it on abort
        (``BaseDecisionProvider.decide`` does).
        """
        caps = self.capabilities(provider)
        if not caps.supports_abort:
            pytest.skip("supports_abort = False")
        self._skip_without_backend(caps)
        controller = AbortController()
        request = self._abort_request(caps, controller)
        grace = self.abort_grace_s

        async def scenario() -> tuple[str, Any, BaseException | None]:
            task = asyncio.ensure_future(self._decide(provider, request))
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self.call_timeout_s
            while not recording_transport.arrived.is_set() and not task.done():
                if loop.time() > deadline:
                    break
                await asyncio.sleep(0.005)
            if not recording_transport.arrived.is_set():
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(BaseException):
                        await task
                    return "stuck", None, None
                return "no call", None, None if task.cancelled() else task.exception()
            controller.abort("conformance check: aborted while the backend was answering")
            loop.call_later(0.5, recording_transport.release)
            try:
                async with asyncio.timeout(grace):
                    return "result", await asyncio.shield(task), None
            except ConformanceError:
                raise
            except TimeoutError:
                if task.done() and task.exception() is not None:
                    return "error", None, task.exception()
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
                return "late", None, None
            except BaseException as error:
                return "error", None, error

        self._expect(recording_transport, request)
        with watch_network() as attempts, recording_transport.hold():
            finished = self._in_loop(
                scenario,
                timeout=self.call_timeout_s + grace + 5,
                what="decide() with a signal aborted during the call",
            )
        self._no_bypass(attempts)
        self._hygiene(finished, "decide()")
        if finished.error is not None:
            if _is_ours(finished.error):
                raise finished.error
            self._failed(finished.error, "a decision with an abort signal")
        if finished.blocked or finished.timed_out:
            self._failed(_Blocked(), "a decision with an abort signal")
        kind, result, error = finished.value
        if error is not None:
            self._loop().note_raised()
        if kind == "no call":
            self._uses_backend(caps, recording_transport, "a decision with an abort signal", error)
        if kind == "stuck":
            fail(
                ConformanceRule.ANSWERED,
                f"the provider neither called the backend nor finished within "
                f"{self.call_timeout_s:g} s",
                fix="make sure every await finishes (the backend answers at once here)",
            )
        if kind == "late":
            fail(
                ConformanceRule.ABORT_DURING,
                f"decide() did not stop within {grace:g} s of its signal being aborted",
                fix=_ABORT_FIX,
            )
        self._aborted(error, result, ConformanceRule.ABORT_DURING, "during the call")

    # --- conversation semantics ----------------------------------------------------------------

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
        if finished.error is not None or finished.timed_out or finished.blocked:
            error = finished.error or (_Blocked() if finished.blocked else _TimedOut())
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

    # --- limits and generated requests ---------------------------------------------------------

    def test_requests_at_the_declared_limits(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """Requests exactly at the declared (or attribute) limits, ``max_options`` options,
        ``max_levels`` levels, ``max_questions`` questions, are answered correctly.

        Fix: make the limits what the provider really handles (e.g. 26 options for labels
        A-Z), or declare smaller ones.
        """
        caps = self.capabilities(provider)
        cases = at_limits(caps.limits, self.request_model)
        if not cases:
            pytest.skip("the provider declares no limit")
        for what, request in cases:
            recording_transport.clear()
            served_from = self._expect(recording_transport, request)
            outcome = self._attempt(provider, request)
            error = outcome.error
            if isinstance(error, ProviderError) and error.code == "invalid_request":
                fail(
                    ConformanceRule.LIMITS,
                    f"a request exactly at the declared limits ({what}) was rejected: {error}",
                    fix="make the limits what the provider really handles (e.g. 26 options for "
                    "labels A-Z), or declare smaller ones",
                )
            if error is not None:
                self._failed(error, f"a request with {what}")
            if recording_transport.requests:
                check_structure(request, recording_transport.requests)
            decimals = self._decimals(provider)
            result = self._valid(request, outcome.result, f"a request with {what}", decimals)
            self._as_the_backend_answered(
                request, result, recording_transport, served_from, decimals
            )

    def test_property_based_requests(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """Generated requests of every shape the provider declares (question types, up to its
        limits; text and JSON contexts, instructions, descriptions, levels and criteria; odd
        option names) are answered by every rule, as the backend answered, with their structure
        reaching the backend.

        Fix: the failure shows the smallest request that breaks; the message names the rule.
        """
        caps = self.capabilities(provider)
        requests = strategies.decision_requests(
            caps.question_types,
            max_questions=min(caps.max_questions or 3, 3),
            max_options=min(caps.max_options or 8, 8),
            max_levels=min(caps.max_levels or 6, 6),
            model=self.request_model,
        )

        @settings(
            max_examples=self.property_examples,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
            # Shrinking finds the smallest failing request; explaining it would rerun the
            # provider hundreds of times more for little gain.
            phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
        )
        @given(requests)
        def check(request: DecisionRequest) -> None:
            recording_transport.clear()
            decimals = self._decimals(provider)
            served_from = self._expect(recording_transport, request)
            outcome = self._attempt(provider, request)
            if outcome.error is not None:
                self._failed(outcome.error, "a generated request")
            if recording_transport.requests:
                check_structure(request, recording_transport.requests)
            result = self._valid(request, outcome.result, "a generated request", decimals)
            self._as_the_backend_answered(
                request, result, recording_transport, served_from, decimals
            )

        check()

    # --- the guard -----------------------------------------------------------------------------

    def test_no_standard_check_removed(self) -> None:
        """No standard check is deleted (set to ``None``) or overridden without
        ``@pytest.mark.xfail(reason="...")``.

        Fix: keep the checks; mark one your provider does not pass with an xfail and a reason,
        or declare the capability that skips it.
        """
        check_standard_checks(type(self), DecisionProviderTests)
