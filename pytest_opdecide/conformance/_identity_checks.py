"""``IdentityChecks``: the provider checks of identity and construction.

A mixin of :class:`~pytest_opdecide.conformance.DecisionProviderTests` (see
:mod:`._provider_tests`), built on :class:`~._provider_verdicts.ProviderVerdicts`. Its checks:
the provider names itself and has an async ``decide`` (``test_identity``); ``get_models()`` and
``get_icon()`` behave (``test_optional_methods``); building it does no I/O
(``test_construction_does_no_io``) and needs no key (``test_construction_accepts_an_empty_key``);
and a provider built without a key sends none read from the environment
(``test_no_credential_is_sent_that_the_config_does_not_hold``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Mapping
from typing import Any, Final

import pytest

from pytest_opdecide.conformance._backend_failures import BACKEND_FAILURES
from pytest_opdecide.conformance._failures import ConformanceRule, fail
from pytest_opdecide.conformance._network_watch import NetworkAttempts, watch_network
from pytest_opdecide.conformance._provider_outcomes import is_ours, note, raised
from pytest_opdecide.conformance._provider_verdicts import ProviderVerdicts
from pytest_opdecide.conformance._transport import RecordingTransport
from pytest_opdecide.questions import DecisionProvider

__all__ = ["IdentityChecks"]


_IDENTITY_FIX: Final = (
    "set the class attributes kind = 'decision', specification_version = '1' and a name "
    "(BaseDecisionProvider has the first two), and define async def decide(self, request)"
)

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


def _refuse_construction_io(attempts: NetworkAttempts) -> None:
    """Fail when building the provider tried to reach the network (``attempts`` are what the
    network watcher saw)."""
    if attempts:
        fail(
            ConformanceRule.CONSTRUCTION_IO,
            "building the provider tried to reach the network",
            value=attempts.targets,
            fix="do no I/O in the constructor or the factory; do it lazily in decide()",
        )


class IdentityChecks(ProviderVerdicts):
    """The checks of identity and construction."""

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
                    f"get_models() raised {raised(finished.error)}{when}{note(finished.error)}",
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
        if finished.error is not None and is_ours(finished.error):
            raise finished.error
        _refuse_construction_io(attempts)
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
                f"building the provider raised {raised(finished.error)}{note(finished.error)}",
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
                    f"{raised(finished.error)}{note(finished.error)}",
                    value=key,
                    fix="accept an empty key at construction; raise "
                    "ProviderError(..., 'auth_error') when a call needs one",
                )
            _refuse_construction_io(attempts)

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
