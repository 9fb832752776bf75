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

This module holds the class users subclass: its settings and capabilities (with their defaults
and what they mean), and the guard that keeps a subclass from dropping a check. The class is
put together from one mixin per section of checks, in the order they run:

* :mod:`._identity_checks`: identity and construction;
* :mod:`._transport_checks`: the transport override, structure, pre-validation;
* :mod:`._answer_checks`: the answers, and the result as a whole (usage, model);
* :mod:`._failure_checks`: backend failures (the failures themselves: :mod:`._backend_failures`);
* :mod:`._abort_checks`: the abort signal;
* :mod:`._conversation_checks`: the request and the thread left as found;
* :mod:`._limit_checks`: requests at the declared limits, and generated requests.

Each mixin is built on :class:`~._provider_verdicts.ProviderVerdicts` (what a check concludes
from a call), itself built on :class:`~._provider_harness.ProviderHarness` (how the provider is
built, and its code run; the endings of a call: :mod:`._provider_outcomes`). The guard
(:mod:`._standard`) follows the inheritance: a check of any mixin is a standard check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

from pytest_opdecide.conformance._abort_checks import AbortChecks
from pytest_opdecide.conformance._answer_checks import AnswerChecks
from pytest_opdecide.conformance._conversation_checks import ConversationChecks
from pytest_opdecide.conformance._failure_checks import FailureChecks
from pytest_opdecide.conformance._identity_checks import IdentityChecks
from pytest_opdecide.conformance._limit_checks import LimitChecks
from pytest_opdecide.conformance._requests import QUESTION_TYPES
from pytest_opdecide.conformance._standard import check_standard_checks
from pytest_opdecide.conformance._transport_checks import TransportChecks
from pytest_opdecide.questions import DEFAULT_TOLERANCE

__all__ = ["BASE_URL", "CAPABILITY_ATTRIBUTES", "DecisionProviderTests"]


BASE_URL: Final = "http://decisions.conformance.invalid/v1"
"""The ``base_url`` the provider is built with (``.invalid`` never resolves: nothing leaks)."""


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


# pytest runs the checks a class inherits before its own, those of its last base first: the
# mixins are listed from the last section to the first, so that the checks run in the order of
# the sections, identity first (as `opdecide check` reports them).
class DecisionProviderTests(
    LimitChecks,
    ConversationChecks,
    AbortChecks,
    FailureChecks,
    AnswerChecks,
    TransportChecks,
    IdentityChecks,
):
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
            ``metadata["rounding"]`` states, else the places each answer's values are written
            with).
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

    # --- the guard -----------------------------------------------------------------------------

    def test_no_standard_check_removed(self) -> None:
        """No standard check is deleted (set to ``None``) or overridden without
        ``@pytest.mark.xfail(reason="...")``.

        Fix: keep the checks; mark one your provider does not pass with an xfail and a reason,
        or declare the capability that skips it.
        """
        check_standard_checks(type(self), DecisionProviderTests)
