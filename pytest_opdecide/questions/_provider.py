"""Decision providers, their factories and the resolution of provider configuration.

A *provider* answers decision requests (``await provider.decide(request)``). A *factory* builds
a provider from a :class:`ProviderFactoryConfig` and declares the ``config_slots`` it reads. The
runtime side (here: :class:`~pytest_opdecide.questions.ThreadState`) resolves those slots with
:func:`resolve_provider_config`, in one order for every slot:

1. a user- or thread-scoped override (only for ``overridable`` slots),
2. the explicit value in the config,
3. the slot's ``default_env`` environment variable (numbers parsed; booleans from
   ``1/true/yes/on`` and ``0/false/no/off``),
4. the slot's ``default``.

A required slot left empty is an error naming its variable. When an override changes a ``url``
slot, nothing inherited that can carry a credential reaches the new destination: secret slots
(from the config or the environment), the ``api_key`` and ``default_headers`` of the config and
user:password parts of inherited URLs are dropped, and an inherited httpx client (or a
transport other than httpx's own, which may add headers of its own) is refused. The override
must bring its own credentials.
"""

from __future__ import annotations

import asyncio
import math
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, Generic, Literal, Protocol, TypeAlias, TypeVar, runtime_checkable

import httpx

from pytest_opdecide._http._credentials import register
from pytest_opdecide._words import bool_word
from pytest_opdecide.questions._abort import AbortSignal, run_abortable
from pytest_opdecide.questions._models import DecisionRequest, DecisionResult, ProviderModelInfo
from pytest_opdecide.questions._provider_errors import (
    InvalidResultError,
    ProviderConfigError,
    ProviderError,
)
from pytest_opdecide.questions._rules import Rule
from pytest_opdecide.questions._validate import ROUNDING_KEY, validate_request, validate_result

SPECIFICATION_VERSION: Final = "1"

ConfigSlotType = Literal["secret", "url", "number", "boolean", "text"]
"""The kinds of config slot values."""


HttpTransportOverride: TypeAlias = (
    httpx.AsyncBaseTransport | httpx.BaseTransport | httpx.AsyncClient | httpx.Client
)
"""Where a provider sends its HTTP requests instead of the network: an httpx transport (async
or sync, e.g. ``httpx.MockTransport``) or an httpx client (async or sync)."""


@runtime_checkable
class DecisionProvider(Protocol):
    """What every decision provider offers.

    ``get_models(filter=None)`` (async, returns ``[]`` on failure) and ``get_icon(model_id=None)``
    (a ``data:`` URI or ``None``) are optional; :class:`BaseDecisionProvider` supplies both.
    """

    @property
    def name(self) -> str:
        """A short, stable name of the provider."""
        ...

    @property
    def specification_version(self) -> Literal["1"]:
        """The version of the decision specification implemented: ``"1"``."""
        ...

    @property
    def kind(self) -> Literal["decision"]:
        """Always ``"decision"``."""
        ...

    async def decide(self, request: DecisionRequest) -> DecisionResult:
        """Answer every question of ``request``."""
        ...


def declared_provider_problem(candidate: object) -> str | None:
    """Why ``candidate`` is not a decision provider by the interface it declares, or ``None``.

    A decision provider declares ``kind == "decision"`` and ``specification_version == "1"``
    and has a ``decide`` method; nothing is guessed from its other attributes.
    """
    if isinstance(candidate, type):
        return f"it is the class {candidate.__name__}, not a provider object"
    kind = getattr(candidate, "kind", None)
    if kind != "decision":
        return f"it declares kind={kind!r}, not 'decision'"
    version = getattr(candidate, "specification_version", None)
    if version != SPECIFICATION_VERSION:
        return f"it declares specification_version={version!r}, not {SPECIFICATION_VERSION!r}"
    if not callable(getattr(candidate, "decide", None)):
        return "it has no decide(request) method"
    return None


class BaseDecisionProvider(ABC):
    """A decision provider that validates requests and results around its own work.

    Subclasses set :attr:`name` and implement :meth:`decide_validated`. :meth:`decide` then
    honours the request's abort signal before and during the work, rejects a request that
    breaks a rule (or the provider's ``max_*`` limits) before any work, and checks the result
    with :func:`~pytest_opdecide.questions.validate_result`.

    Attributes:
        name: The provider's name.
        specification_version: Always ``"1"``.
        kind: Always ``"decision"``.
        max_questions: The most questions per request, or ``None``.
        max_options: The most options per choice question, or ``None``.
        max_levels: The most levels per score question, or ``None``.
        probability_decimals: The decimal places the provider rounds every probability to, or
            ``None`` when it does not round. :meth:`decide` then states it in the result's
            ``metadata["rounding"]`` (the spec lets providers report their rounding there) and
            accepts sums within what the rounding explains; values are never renormalised.
    """

    name: str = "decision"
    specification_version: Literal["1"] = "1"
    kind: Literal["decision"] = "decision"
    max_questions: int | None = None
    max_options: int | None = None
    max_levels: int | None = None
    probability_decimals: int | None = None

    async def decide(self, request: DecisionRequest | Mapping[str, Any]) -> DecisionResult:
        """Answer every question of ``request``.

        Args:
            request: A ``DecisionRequest`` or its fields as a mapping.

        Returns:
            One answer per question, checked against every result rule.

        Raises:
            ProviderError: ``timeout`` when the signal is (or gets) aborted,
                ``invalid_request`` (an :class:`~pytest_opdecide.questions.InvalidRequestError`)
                for a request breaking a rule, ``unknown`` for a result breaking one, and
                whatever the subclass raises.
        """
        signal = request.signal if isinstance(request, DecisionRequest) else None
        if signal is None and isinstance(request, Mapping):
            candidate = request.get("signal")
            signal = candidate if isinstance(candidate, AbortSignal) else None
        if signal is not None:
            signal.throw_if_aborted()
        checked = validate_request(
            request,
            max_questions=self.max_questions,
            max_options=self.max_options,
            max_levels=self.max_levels,
        )
        result = await run_abortable(self.decide_validated(checked), checked.signal)
        decimals = self.probability_decimals
        if decimals is not None and isinstance(result, DecisionResult):
            metadata = dict(result.metadata or {})
            if ROUNDING_KEY not in metadata:
                metadata[ROUNDING_KEY] = {"decimals": decimals}
                result = result.model_copy(update={"metadata": metadata})
        try:
            return validate_result(checked, result, decimals=decimals)
        except InvalidResultError as error:
            hint = (
                "; if the provider rounds its probabilities, say so: probability_decimals = "
                "<decimal places> on the provider class"
                if error.rule is Rule.PROBABILITY_SUM and decimals is None
                else ""
            )
            raise ProviderError(
                f"provider {self.name!r} produced a result that breaks a rule: {error}{hint}",
                "unknown",
            ) from error

    def decide_sync(self, request: DecisionRequest | Mapping[str, Any]) -> DecisionResult:
        """Blocking :meth:`decide`, for code without an event loop (see :func:`decide_sync`)."""
        return decide_sync(self, request)

    @abstractmethod
    async def decide_validated(self, request: DecisionRequest) -> DecisionResult:
        """Answer a request that already passed :func:`validate_request`.

        Args:
            request: The validated request.

        Returns:
            The result; :meth:`decide` validates it.
        """

    async def get_models(self, filter: str | None = None) -> list[ProviderModelInfo]:
        """The models this provider offers, optionally filtered by a substring of their id.

        Args:
            filter: Keep only models whose id contains this text (case-insensitive).

        Returns:
            The models; ``[]`` when they cannot be listed. Never raises.
        """
        return []

    def get_icon(self, model_id: str | None = None) -> str | None:
        """An icon for the provider or one of its models.

        Args:
            model_id: A model id, or ``None`` for the provider's icon.

        Returns:
            A ``data:`` URI, or ``None`` when there is no icon.
        """
        return None


def decide_sync(
    provider: DecisionProvider | BaseDecisionProvider,
    request: DecisionRequest | Mapping[str, Any],
) -> DecisionResult:
    """Run ``provider.decide(request)`` to completion from synchronous code.

    Args:
        provider: Any decision provider.
        request: The request (a mapping is accepted by providers built on
            :class:`BaseDecisionProvider`).

    Returns:
        The provider's result.

    Raises:
        RuntimeError: Called while an event loop is running in this thread (``await
            provider.decide(request)`` there instead).
        ProviderError: Whatever the provider raises.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "decide_sync() cannot run inside a running event loop; "
            "use `await provider.decide(request)` there instead"
        )
    return asyncio.run(_decide(provider, request))


async def _decide(
    provider: DecisionProvider | BaseDecisionProvider,
    request: DecisionRequest | Mapping[str, Any],
) -> DecisionResult:
    if isinstance(provider, BaseDecisionProvider):
        return await provider.decide(request)
    if not isinstance(request, DecisionRequest):
        request = validate_request(request)
    return await provider.decide(request)


# ---------------------------------------------------------------- configuration


@dataclass(frozen=True)
class ConfigSlot:
    """One setting a provider factory reads from its configuration.

    Attributes:
        type: ``secret`` (never logged), ``url``, ``number``, ``boolean`` or ``text``.
        required: Whether resolution fails when nothing fills the slot.
        default: The value used when nothing else fills the slot.
        default_env: The environment variable read when the config leaves the slot empty.
        overridable: Whether user- or thread-scoped overrides may set the slot.
        description: What the slot is for, shown to people configuring the provider.
    """

    type: ConfigSlotType
    required: bool = False
    default: str | float | bool | None = None
    default_env: str | None = None
    overridable: bool = True
    description: str = ""


ProviderConfigSlots: TypeAlias = Mapping[str, ConfigSlot]
"""Slot name -> slot. ``api_key``, ``base_url`` and ``timeout`` fill the same-named fields of
:class:`ProviderFactoryConfig`; any other slot fills ``ProviderFactoryConfig.options``."""

_STANDARD_FIELDS: Final = ("api_key", "base_url", "timeout")


@dataclass(frozen=True)
class ProviderFactoryConfig:
    """What a provider factory receives.

    Attributes:
        api_key: The credential, if any. An empty key is accepted: building a provider never
            fails for it.
        base_url: The endpoint, e.g. ``http://127.0.0.1:8080/v1``.
        timeout: Timeout of each backend request, in milliseconds.
        default_headers: Headers added to every request.
        transport: Where every HTTP request goes instead of the network: an httpx transport
            (async or sync, e.g. ``httpx.MockTransport``) or an httpx client.
        options: Values of the factory's other config slots (e.g. ``model``).
    """

    api_key: str | None = None
    base_url: str | None = None
    timeout: float | None = None
    default_headers: Mapping[str, str] = field(default_factory=dict)
    transport: HttpTransportOverride | None = None
    options: Mapping[str, object] = field(default_factory=dict)

    def value(self, slot: str) -> object:
        """The value the config holds for ``slot`` (``None`` when it holds none)."""
        if slot in _STANDARD_FIELDS:
            return getattr(self, slot)
        return self.options.get(slot)

    def with_values(self, values: Mapping[str, object]) -> ProviderFactoryConfig:
        """A copy with slot values replaced (standard fields or ``options``)."""
        standard = {name: value for name, value in values.items() if name in _STANDARD_FIELDS}
        options = dict(self.options)
        options.update({k: v for k, v in values.items() if k not in _STANDARD_FIELDS})
        return replace(self, **standard, options=options)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        key = None if self.api_key is None else ("''" if not self.api_key else "'***'")
        return (
            f"ProviderFactoryConfig(api_key={key}, base_url={self.base_url!r}, "
            f"timeout={self.timeout!r}, default_headers={sorted(self.default_headers)!r}, "
            f"transport={type(self.transport).__name__ if self.transport else None}, "
            f"options={sorted(self.options)!r})"
        )


def _present(value: object) -> bool:
    return value is not None and value != ""


def _parse_slot(name: str, slot: ConfigSlot, value: object, source: str) -> object:
    def fail(expected: str) -> ProviderConfigError:
        return ProviderConfigError(
            f"config slot {name!r} from {source} must be {expected}, got {value!r}",
            "invalid_request",
            slot=name,
            env_var=slot.default_env,
        )

    if slot.type == "number":
        if isinstance(value, int | float) and not isinstance(value, bool):
            if not math.isfinite(value):
                raise fail("a finite number")
            return value
        if isinstance(value, str):
            text = value.strip()
            try:
                return int(text)
            except ValueError:
                pass
            try:
                number = float(text)
            except ValueError:
                raise fail("a number") from None
            if not math.isfinite(number):
                raise fail("a finite number")
            return number
        raise fail("a number")
    if slot.type == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            word = bool_word(value)
            if word is not None:
                return word
        raise fail("a boolean (1/true/yes/on or 0/false/no/off)")
    if not isinstance(value, str):
        raise fail("text")
    return value


def resolve_provider_config(
    slots: ProviderConfigSlots,
    config: ProviderFactoryConfig | None = None,
    *,
    overrides: Mapping[str, object] | None = None,
    environ: Mapping[str, str] | None = None,
) -> ProviderFactoryConfig:
    """Fill every config slot: override > explicit config > environment variable > default.

    Args:
        slots: The factory's ``config_slots``.
        config: The runtime's (inherited) configuration; headers, transport and unrelated
            options are kept as they are.
        overrides: User- or thread-scoped values; only ``overridable`` slots may appear.
        environ: The environment to read ``default_env`` variables from (``os.environ`` when
            ``None``).

    Returns:
        A config holding the resolved value (or ``None``) of every slot.

    Raises:
        ProviderConfigError: A required slot is empty (code ``auth_error`` for a secret,
            ``invalid_request`` otherwise; the message names the environment variable), a value
            does not parse, or an override targets an unknown or non-overridable slot.
    """
    config = config if config is not None else ProviderFactoryConfig()
    environ = os.environ if environ is None else environ
    overrides = dict(overrides or {})
    for name in overrides:
        if name not in slots:
            raise ProviderConfigError(
                f"override for unknown config slot {name!r}; slots: {sorted(slots)}",
                "invalid_request",
                slot=name,
                env_var=None,
            )
        if not slots[name].overridable:
            raise ProviderConfigError(
                f"config slot {name!r} cannot be overridden per user or thread",
                "invalid_request",
                slot=name,
                env_var=slots[name].default_env,
            )
    redirected = any(
        slots[name].type == "url" and _present(value) for name, value in overrides.items()
    )
    values: dict[str, object] = {}
    for name, slot in slots.items():
        value: object = None
        if _present(overrides.get(name)):
            value = _parse_slot(name, slot, overrides[name], "the override")
        elif slot.type == "secret" and redirected:
            value = None  # never send an inherited credential to an overridden destination
        elif _present(config.value(name)):
            value = _parse_slot(name, slot, config.value(name), "the config")
        elif slot.default_env and _present(environ.get(slot.default_env)):
            env_value = environ[slot.default_env]
            value = _parse_slot(name, slot, env_value, f"${slot.default_env}")
        else:
            value = slot.default
        if slot.required and not _present(value):
            hint = (
                f"; the destination was overridden, so pass {name!r} in the same overrides"
                if slot.type == "secret" and redirected
                else ""
            )
            where = (
                f" or set the environment variable {slot.default_env}" if slot.default_env else ""
            )
            raise ProviderConfigError(
                f"config slot {name!r} is required but empty: set it in the config{where}{hint}",
                "auth_error" if slot.type == "secret" else "invalid_request",
                slot=name,
                env_var=slot.default_env,
            )
        values[name] = value
    register(values[name] for name, slot in slots.items() if slot.type == "secret")  # cassettes
    resolved = config.with_values(values)
    if redirected:
        resolved = _without_inherited_credentials(resolved, slots, overrides)
    return resolved


_CREDENTIAL_FREE_TRANSPORTS: Final = (
    httpx.MockTransport,
    httpx.HTTPTransport,
    httpx.AsyncHTTPTransport,
)


def _without_userinfo(url: object) -> object:
    if not isinstance(url, str) or "@" not in url:
        return url
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError):
        return url
    return str(parsed.copy_with(userinfo=b"")) if parsed.userinfo else url


def _without_inherited_credentials(
    config: ProviderFactoryConfig, slots: ProviderConfigSlots, overrides: Mapping[str, object]
) -> ProviderFactoryConfig:
    """``config`` with nothing inherited that could carry a credential to a new destination."""
    transport = config.transport
    if transport is not None and type(transport) not in _CREDENTIAL_FREE_TRANSPORTS:
        kind = (
            "an httpx client"
            if isinstance(transport, httpx.Client | httpx.AsyncClient)
            else f"a {type(transport).__name__} transport"
        )
        overridden = sorted(name for name, value in overrides.items() if _present(value))
        raise ProviderConfigError(
            f"the destination is overridden ({', '.join(overridden)}), but the inherited "
            f"transport is {kind}, which can add headers or credentials of its own to requests "
            "sent to the new destination; give the thread a config without that transport "
            "(httpx.MockTransport and httpx's HTTP transports are kept), or do not override the "
            "destination",
            "invalid_request",
            slot=overridden[0],
            env_var=slots[overridden[0]].default_env,
        )
    values: dict[str, object] = {}
    if not _present(overrides.get("api_key")):
        values["api_key"] = None  # a credential by definition, whether a slot or not
    for name, value in [("base_url", config.base_url), *config.options.items()]:
        slot = slots.get(name)
        inherited = not _present(overrides.get(name))
        if inherited and (name == "base_url" or (slot is not None and slot.type == "url")):
            values[name] = _without_userinfo(value)
    return replace(config.with_values(values), default_headers={})


ProviderT = TypeVar("ProviderT", bound=DecisionProvider, covariant=True)


class DecisionProviderFactory(Generic[ProviderT]):
    """A callable that builds a decision provider from a :class:`ProviderFactoryConfig`.

    Calling the factory uses the config as given (no environment lookup, no I/O, no failure
    for an empty API key). Use :meth:`resolve` first to fill the slots from overrides, the
    environment and defaults.

    Args:
        build: Builds the provider from a config.
        config_slots: The slots the provider reads.
        name: The factory's name (the provider's name by convention).
    """

    def __init__(
        self,
        build: Callable[[ProviderFactoryConfig], ProviderT],
        *,
        config_slots: ProviderConfigSlots | None = None,
        name: str = "",
    ) -> None:
        self._build = build
        self.config_slots: ProviderConfigSlots = dict(config_slots or {})
        self.name = name

    def __call__(self, config: ProviderFactoryConfig | None = None) -> ProviderT:
        """Build a provider.

        Args:
            config: The configuration; an empty one when ``None``.

        Returns:
            The provider.
        """
        return self._build(config if config is not None else ProviderFactoryConfig())

    def resolve(
        self,
        config: ProviderFactoryConfig | None = None,
        *,
        overrides: Mapping[str, object] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> ProviderFactoryConfig:
        """Resolve this factory's config slots (see :func:`resolve_provider_config`)."""
        return resolve_provider_config(
            self.config_slots, config, overrides=overrides, environ=environ
        )

    def __repr__(self) -> str:
        return f"DecisionProviderFactory(name={self.name!r}, slots={sorted(self.config_slots)})"
