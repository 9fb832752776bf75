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
what it answered with what the provider reports.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final, NoReturn

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, settings

# `import a.b as c` (not `from a import b`): a fresh import when sys.modules lost it (pytester).
import pytest_opdecide.strategies as strategies
from pytest_opdecide.conformance._capabilities import ProviderCapabilities, resolve_capabilities
from pytest_opdecide.conformance._failures import (
    ConformanceError,
    ConformanceRule,
    fail,
    fail_validation,
)
from pytest_opdecide.conformance._network import NetworkAttempts, watch_network
from pytest_opdecide.conformance._openai_backend import OpenAIChatBackend
from pytest_opdecide.conformance._requests import (
    PREVALIDATION_CASES,
    QUESTION_TYPES,
    PrevalidationCase,
    at_limits,
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
    resolve_provider_config,
    validate_result,
)

__all__ = ["BACKEND_FAILURES", "BASE_URL", "DecisionProviderTests"]

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


_RESULT_LEVEL_RULES: Final = frozenset({Rule.RESULT_SHAPE, Rule.RESULT_MODEL, Rule.RESULT_USAGE})


class _TimedOut(Exception):
    """The provider did not finish within ``call_timeout_s``."""


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


def _as_computed(reported: float, expected: float) -> bool:
    """Whether ``reported`` is ``expected``, or ``expected`` rounded to some decimal places."""
    if abs(reported - expected) <= 1e-6:
        return True
    for digits in range(1, 7):
        scale = 10**digits
        whole = reported * scale
        if abs(whole - round(whole)) <= 1e-6 and abs(reported - expected) <= 0.5 / scale + 1e-9:
            return True
    return False


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
        probability_tolerance: How far from 1 a distribution may sum (provider rounding).
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

    probability_tolerance: ClassVar[float] = DEFAULT_TOLERANCE
    property_examples: ClassVar[int] = 20
    call_timeout_s: ClassVar[float] = 60.0
    abort_grace_s: ClassVar[float] = 10.0

    _runner: asyncio.Runner | None = None

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
        return RecordingTransport(self.backend_transport())

    @pytest.fixture
    def provider(self, recording_transport: RecordingTransport) -> Any:
        """The provider under test; override to build it yourself (pass it
        ``recording_transport`` as its transport override)."""
        built = self.build_provider(recording_transport)
        # What construction sent is test_construction_does_no_io's business, not every check's.
        recording_transport.clear()
        return built

    @pytest.fixture(autouse=True)
    def _conformance_event_loop(self) -> Iterator[None]:
        # One event loop per check: a provider may keep loop-bound clients between calls.
        with asyncio.Runner() as runner:
            self._runner = runner
            try:
                yield
            finally:
                self._runner = None

    def capabilities(self, provider: Any) -> ProviderCapabilities:
        """The declared capabilities, with undeclared limits read from ``provider``."""
        return resolve_capabilities(
            provider,
            question_types=self.supported_question_types,
            max_questions=type(self).max_questions,
            max_options=type(self).max_options,
            max_levels=type(self).max_levels,
            reports_confidence=self.reports_confidence,
            supports_abort=self.supports_abort,
            needs_backend=self.needs_backend,
        )

    # --- helpers -------------------------------------------------------------------------------

    def _factory(self) -> Any:
        for klass in type(self).__mro__:
            if "provider_factory" in vars(klass):
                value = vars(klass)["provider_factory"]
                return value.__func__ if isinstance(value, staticmethod) else value
        return None

    def _run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        if self._runner is not None:
            return self._runner.run(coroutine)
        return asyncio.run(coroutine)

    def _request(self, questions: Mapping[str, DecisionQuestion]) -> DecisionRequest:
        return DecisionRequest(
            model=self.request_model, context=standard_context(), questions=dict(questions)
        )

    def _questions(
        self, caps: ProviderCapabilities, only: Sequence[str] | None = None
    ) -> dict[str, DecisionQuestion]:
        return {
            question_id: question
            for question_id, question in standard_questions().items()
            if question.type in caps.question_types and (only is None or question_id in only)
        }

    def _requests(
        self, caps: ProviderCapabilities, questions: Mapping[str, DecisionQuestion]
    ) -> list[DecisionRequest]:
        return [self._request(chunk) for chunk in _chunks(questions, caps.max_questions) if chunk]

    async def _decide(self, provider: Any, request: DecisionRequest) -> Any:
        pending = provider.decide(request)
        if not inspect.isawaitable(pending):
            fail(
                ConformanceRule.DECIDE_ASYNC,
                "decide(request) must return an awaitable (the provider interface is async)",
                value=type(pending).__name__,
                fix="define it as `async def decide(self, request)`",
            )
        try:
            async with asyncio.timeout(self.call_timeout_s) as scope:
                return await pending
        except TimeoutError:
            if scope.expired():
                raise _TimedOut from None
            raise

    def _attempt(self, provider: Any, request: DecisionRequest) -> _Outcome:
        """Call ``decide`` (watching the network); the result or the error."""
        with watch_network() as attempts:
            try:
                outcome = _Outcome(result=self._run(self._decide(provider, request)))
            except ConformanceError:
                raise
            except (Exception, asyncio.CancelledError) as error:
                outcome = _Outcome(error=error)
        self._no_bypass(attempts)
        return outcome

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
            fail(
                ConformanceRule.ANSWERED,
                f"decide() failed on {what}: ProviderError(code={error.code!r}): {error}",
                fix="the backend answered every request correctly; find why the provider failed",
            )
        fail(
            ConformanceRule.ERROR_TYPE,
            f"decide() raised {type(error).__name__} on {what}: {error}",
            fix=_ERROR_FIX,
        )

    def _valid(self, request: DecisionRequest, result: Any, what: str) -> DecisionResult:
        try:
            checked = validate_result(request, result, tolerance=self.probability_tolerance)
        except InvalidResultError as error:
            fail_validation(error, f"the result for {what} breaks a rule", _RESULT_FIX)
        if not isinstance(result, DecisionResult):
            fail(
                ConformanceRule.ANSWERED,
                f"decide() must return a DecisionResult for {what}",
                value=type(result).__name__,
                fix="return pytest_opdecide.questions.DecisionResult(...)",
            )
        return checked

    def _decided(self, provider: Any, request: DecisionRequest, what: str) -> Any:
        """Call ``decide`` on a valid request; what it returned (not checked: a check about
        something else must not fail on the answers, which their own checks report)."""
        outcome = self._attempt(provider, request)
        if outcome.error is not None:
            self._failed(outcome.error, what)
        return outcome.result

    def _result_level(self, request: DecisionRequest, result: Any) -> DecisionResult:
        """``result`` checked by the rules about the result as a whole (shape, model, usage);
        the answers' rules are left to the answer checks."""
        try:
            validate_result(request, result, tolerance=self.probability_tolerance)
        except InvalidResultError as error:
            if error.question is None and error.rule in _RESULT_LEVEL_RULES:
                fail_validation(
                    error, "the result for the standard request breaks a rule", _RESULT_FIX
                )
        if not isinstance(result, DecisionResult):
            fail(
                ConformanceRule.ANSWERED,
                "decide() must return a DecisionResult",
                value=type(result).__name__,
                fix="return pytest_opdecide.questions.DecisionResult(...)",
            )
        return result

    def _answered(
        self,
        provider: Any,
        transport: RecordingTransport,
        request: DecisionRequest,
        what: str,
        *,
        compare: bool = False,
    ) -> DecisionResult:
        """Answer ``request``, checked against every result rule (and, with ``compare``,
        against what the backend answered)."""
        result = self._valid(request, self._decided(provider, request, what), what)
        if compare:
            self._as_the_backend_answered(request, result, transport)
        return result

    def _as_the_backend_answered(
        self, request: DecisionRequest, result: DecisionResult, transport: RecordingTransport
    ) -> None:
        expected_answer = getattr(transport.backend, "expected_answer", None)
        if expected_answer is None or not transport.requests:
            return
        for question_id, question in request.questions.items():
            expected = expected_answer(question)
            if expected is None:
                continue
            answer = result.answers[question_id]
            if isinstance(answer, BooleanAnswer):
                self._boolean_as_answered(question_id, answer.probability, expected["true"])
                continue
            assert isinstance(answer, ChoiceAnswer | ScoreAnswer)
            for key, reported in answer.probabilities.items():
                if not _as_computed(reported, expected[key]):
                    fail(
                        ConformanceRule.AS_COMPUTED,
                        f"the probability of {key!r} is {reported!r}, but the backend's answer "
                        f"gives {expected[key]!r} and {reported!r} is not a rounding of it: "
                        "probabilities were changed after they were computed (renormalised "
                        "after rounding, or mass lost or invented)",
                        question=question_id,
                        value=dict(answer.probabilities),
                        fix="report the distribution over the labels as computed; if you round, "
                        "report the rounded values as they are (never divide them by their "
                        "sum again) and say so in metadata",
                    )

    def _boolean_as_answered(self, question_id: str, reported: float, expected: float) -> None:
        if _as_computed(reported, expected):
            return
        if reported in (0.0, 1.0):
            fail(
                ConformanceRule.BOOLEAN_THRESHOLD,
                f"the probability is {reported!r} but the backend's answer gives "
                f"P(true) = {expected!r}: a threshold was applied",
                question=question_id,
                value=reported,
                fix="report P(true) itself; thresholds are the caller's decision",
            )
        fail(
            ConformanceRule.AS_COMPUTED,
            f"the probability is {reported!r} but the backend's answer gives P(true) = "
            f"{expected!r} (p_yes / (p_yes + p_no))",
            question=question_id,
            value=reported,
            fix="report p_yes / (p_yes + p_no) over the two labels, as computed",
        )

    def _uses_backend(
        self, caps: ProviderCapabilities, transport: RecordingTransport, what: str
    ) -> None:
        """Skip (or fail, when declared) a check that needs the backend if none was used."""
        if transport.requests:
            return
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
        kind = getattr(provider, "kind", None)
        if kind != "decision":
            fail(ConformanceRule.IDENTITY, "kind must be 'decision'", value=kind)
        version = getattr(provider, "specification_version", None)
        if version != "1":
            fail(ConformanceRule.IDENTITY, "specification_version must be '1'", value=version)
        name = getattr(provider, "name", None)
        if not isinstance(name, str) or not name.strip():
            fail(ConformanceRule.IDENTITY, "name must be a non-empty string", value=name)
        if not callable(getattr(provider, "decide", None)):
            fail(ConformanceRule.IDENTITY, "the provider has no decide(request) method")
        if not isinstance(provider, DecisionProvider):
            fail(ConformanceRule.IDENTITY, "the provider does not implement DecisionProvider")

    def test_optional_methods(self, provider: Any, recording_transport: RecordingTransport) -> None:
        """``get_models(filter=None)`` returns a list and never raises (``[]`` when listing
        fails), through the transport override; ``get_icon(model_id=None)`` returns a ``data:``
        URI or ``None``.

        Fix: catch every failure in ``get_models`` and return ``[]``; return ``None`` from
        ``get_icon`` when there is no icon.
        """
        get_icon = getattr(provider, "get_icon", None)
        if get_icon is not None:
            for model_id in (None, self.request_model):
                icon = get_icon(model_id)
                if icon is not None and not (isinstance(icon, str) and icon.startswith("data:")):
                    fail(
                        ConformanceRule.OPTIONAL_METHODS,
                        f"get_icon({model_id!r}) must return a data: URI or None",
                        value=icon,
                    )
        get_models = getattr(provider, "get_models", None)
        if get_models is None:
            return
        for failing in (False, True):
            recording_transport.clear()
            with watch_network() as attempts, contextlib.ExitStack() as stack:
                if failing:
                    stack.enter_context(recording_transport.failing(BACKEND_FAILURES[0].respond))
                try:
                    models = self._run(get_models())
                except Exception as error:
                    when = "when the backend answers HTTP 500" if failing else ""
                    fail(
                        ConformanceRule.OPTIONAL_METHODS,
                        f"get_models() raised {type(error).__name__} {when}: {error}",
                        fix="catch every failure in get_models() and return []",
                    )
            self._no_bypass(attempts)
            if not isinstance(models, list):
                fail(
                    ConformanceRule.OPTIONAL_METHODS,
                    "get_models() must return a list",
                    value=type(models).__name__,
                )
            if failing and recording_transport.requests and models:
                fail(
                    ConformanceRule.OPTIONAL_METHODS,
                    "get_models() must return [] when listing the models fails",
                    value=models,
                )
            for model in models:
                model_id = getattr(model, "id", None)
                if not isinstance(model_id, str) or not model_id:
                    fail(
                        ConformanceRule.OPTIONAL_METHODS,
                        "get_models() must return ProviderModelInfo objects with an id",
                        value=model,
                    )

    def test_construction_does_no_io(self, recording_transport: RecordingTransport) -> None:
        """Building the provider sends nothing: no request through the transport override, no
        connection or DNS lookup anywhere (runtimes build providers just to read their name).

        Fix: do no I/O in the constructor or the factory (no model listing, key check or
        warm-up request); do it lazily in ``decide``.
        """
        if self._factory() is None:
            pytest.skip("no provider_factory is set: construction is checked only through it")
        error: Exception | None = None
        with watch_network() as attempts:
            try:
                self.build_provider(recording_transport)
            except Exception as raised:
                error = raised
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
        if error is not None:
            fail(
                ConformanceRule.CONSTRUCTION_IO,
                f"building the provider raised {type(error).__name__}: {error}",
                fix="the factory must build a provider from any valid config",
            )

    def test_construction_accepts_an_empty_key(
        self, recording_transport: RecordingTransport
    ) -> None:
        """Building the provider with an empty API key (``""`` or ``None``) does not fail:
        runtimes build providers without credentials just to read their name.

        Fix: accept a missing key at construction; report ``auth_error`` when a call needs it.
        """
        if self._factory() is None:
            pytest.skip("no provider_factory is set: construction is checked only through it")
        for key in ("", None):
            with watch_network() as attempts:
                try:
                    factory = self._factory()
                    factory(self.provider_factory_config(recording_transport, api_key=key))
                except Exception as error:
                    fail(
                        ConformanceRule.CONSTRUCTION_EMPTY_KEY,
                        f"building the provider with api_key={key!r} raised "
                        f"{type(error).__name__}: {error}",
                        value=key,
                        fix="accept an empty key at construction; raise "
                        "ProviderError(..., 'auth_error') when a call needs one",
                    )
            if attempts:
                fail(
                    ConformanceRule.CONSTRUCTION_IO,
                    "building the provider tried to reach the network",
                    value=attempts.targets,
                )

    # --- transport and structure ---------------------------------------------------------------

    def test_requests_go_through_the_transport_override(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """Every request of a decision goes through the transport override of the config; none
        reaches the network another way.

        Fix: build your HTTP client from ``ProviderFactoryConfig.transport`` (an httpx transport
        or client), never a client of your own.
        """
        caps = self.capabilities(provider)
        for request in self._requests(caps, self._questions(caps)):
            self._decided(provider, request, "the standard request")
        if caps.needs_backend and not recording_transport.requests:
            self._uses_backend(caps, recording_transport, "the standard request")

    def test_structure_reaches_the_backend_intact(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """The context, instructions, option names and descriptions, levels and criteria reach
        the backend with their JSON structure intact: same types (``"0042"`` stays a string,
        ``1.5`` a float, ``true`` a boolean), same key order, nothing dropped.

        Fix: write structured values as JSON (``json.dumps``, any indentation) into the prompt,
        or send them as JSON fields; never ``str(value)`` or a reformatted text.
        """
        caps = self.capabilities(provider)
        self._skip_without_backend(caps)
        for request in self._requests(caps, self._questions(caps)):
            recording_transport.clear()
            self._decided(provider, request, "the standard request")
            self._uses_backend(caps, recording_transport, "the standard request")
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
        if isinstance(error, _TimedOut):
            self._failed(error, f"a request it cannot represent ({case.why})")
        if not isinstance(error, ProviderError):
            fail(
                ConformanceRule.ERROR_TYPE,
                f"a request the provider cannot represent ({case.why}) raised "
                f"{type(error).__name__} instead of ProviderError(code='invalid_request')",
                value=str(error),
                fix=_ERROR_FIX,
            )
        if error.code != "invalid_request":
            fail(
                ConformanceRule.ERROR_CODE,
                f"a request the provider cannot represent ({case.why}) must be rejected with "
                "code 'invalid_request'",
                value=error.code,
            )
        if not str(error).strip():
            fail(ConformanceRule.PREVALIDATION, "the error must say why the request is rejected")

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
        compared = False
        for request in self._requests(caps, questions):
            recording_transport.clear()
            self._answered(
                provider, recording_transport, request, "choice and score questions", compare=True
            )
            self._uses_backend(caps, recording_transport, "choice and score questions")
            expected_answer = getattr(recording_transport.backend, "expected_answer", None)
            compared = compared or (
                expected_answer is not None
                and any(expected_answer(q) is not None for q in request.questions.values())
            )
        if not compared:
            pytest.skip(
                "the backend states no expected distribution (it has no expected_answer()): "
                "only completeness was checked"
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
            result = self._answered(
                provider, recording_transport, request, "boolean questions", compare=True
            )
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
                request, self._decided(provider, request, "the standard request")
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
                f"when the backend {failure.what}, decide() raised {type(error).__name__} "
                "instead of ProviderError",
                value=str(error),
                fix=_ERROR_FIX,
            )
        if error.code not in PROVIDER_ERROR_CODES:
            fail(ConformanceRule.ERROR_CODE, "the code is not a valid one", value=error.code)
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
            )
        retry_after = error.retry_after
        if failure.id == "rate_limit" and retry_after is not None and retry_after != 7.0:
            fail(
                ConformanceRule.ERROR_CODE,
                "retry_after must be the Retry-After header in seconds (7)",
                value=retry_after,
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
        outcome = self._attempt(provider, self._abort_request(caps, controller))
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
        if not isinstance(error, ProviderError):
            fail(
                ConformanceRule.ERROR_TYPE,
                f"a signal aborted {when} raised {type(error).__name__} instead of "
                "ProviderError(code='timeout')",
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
                return "no call", None, None
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
            except (Exception, asyncio.CancelledError) as error:
                return "error", None, error

        with watch_network() as attempts, recording_transport.hold():
            kind, result, error = self._run(scenario())
        self._no_bypass(attempts)
        if kind == "no call":
            self._uses_backend(caps, recording_transport, "a decision with an abort signal")
        if kind == "stuck":
            fail(
                ConformanceRule.ANSWERED,
                f"the provider neither called the backend nor finished within "
                f"{self.call_timeout_s:g} s",
            )
        if kind == "late":
            fail(
                ConformanceRule.ABORT_DURING,
                f"decide() did not stop within {grace:g} s of its signal being aborted",
                fix=_ABORT_FIX,
            )
        self._aborted(error, result, ConformanceRule.ABORT_DURING, "during the call")

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
            self._answered(provider, recording_transport, request, f"a request with {what}")

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
            self._answered(
                provider, recording_transport, request, "a generated request", compare=True
            )
            if recording_transport.requests:
                check_structure(request, recording_transport.requests)

        check()

    # --- the guard -----------------------------------------------------------------------------

    def test_no_standard_check_removed(self) -> None:
        """No standard check is deleted (set to ``None``) or overridden without
        ``@pytest.mark.xfail(reason="...")``.

        Fix: keep the checks; mark one your provider does not pass with an xfail and a reason,
        or declare the capability that skips it.
        """
        check_standard_checks(type(self), DecisionProviderTests)
