"""Thread state and ``decide()``: answer questions without advancing the conversation.

``decide()`` is available during an execution (``state.execution`` set) and at rest
(``state.execution is None``). It sends the provider exactly the request it was given: it never
reads the thread's messages to build context, never adds, changes or removes messages, never
runs a tool and never starts a turn. Recording an answer in the conversation is a separate,
explicit call (:meth:`ThreadState.add_message`).

The provider cannot do those things either. What it is handed holds nothing of the thread: the
request is a deep copy of what the caller gave (the context a JSON copy, even when the caller
passed the thread's messages), and neither the thread nor its messages, tools or turn hook are
in it. A provider that reaches the thread anyway (a reference it kept) is refused when it calls
:meth:`~ThreadState.add_message`, :meth:`~ThreadState.run_tool` or
:meth:`~ThreadState.start_turn` from within the decision, and caught when it returns if the
messages changed in any other way: ``decide()`` then raises
:class:`~pytest_opdecide.questions.ThreadChangedError` naming the provider and what changed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, MutableSequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias

from pydantic import ConfigDict, Field, SkipValidation

from pytest_opdecide.questions._abort import AbortSignal
from pytest_opdecide.questions._json import json_copy
from pytest_opdecide.questions._models import DecisionRequest, DecisionResult
from pytest_opdecide.questions._provider import (
    BaseDecisionProvider,
    DecisionProvider,
    DecisionProviderFactory,
    ProviderFactoryConfig,
    declared_provider_problem,
    resolve_provider_config,
)
from pytest_opdecide.questions._provider_errors import (
    InvalidResultError,
    ProviderConfigError,
    ProviderError,
    ThreadChangedError,
)
from pytest_opdecide.questions._rules import Rule
from pytest_opdecide.questions._validate import validate_request, validate_result

ProviderSource: TypeAlias = (
    DecisionProviderFactory[Any]
    | Callable[[ProviderFactoryConfig], DecisionProvider]
    | DecisionProvider
)
"""What ``DecideOptions.provider`` accepts: a factory (the spec's form; its config slots are
resolved by the thread) or, for convenience in tests, a ready provider. The two are told apart
by what they declare: an object declaring ``kind`` or ``decide`` is a provider (and must be a
decision provider); any other callable is a factory, whose product must be one. A class is
neither: pass an instance, or a factory building one."""


class DecideOptions(DecisionRequest):
    """A decision request plus the provider that answers it.

    Attributes:
        provider: The provider factory used for this invocation (a ready provider is accepted
            too). Not part of the wire JSON.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    provider: SkipValidation[ProviderSource] = Field(exclude=True, repr=False)


@dataclass(eq=False)
class _Watch:
    """One decision on a thread, watched: the messages as they were, and what code inside the
    decision tried (and was refused)."""

    state: ThreadState
    provider: str
    messages: MutableSequence[Any]
    before: list[Any]
    copies: list[Any] | None
    attempts: list[str] = field(default_factory=list)
    added_outside: list[Any] = field(default_factory=list)

    @classmethod
    def start(cls, state: ThreadState, provider: str) -> _Watch:
        # Read only to see, afterwards, that nothing changed (never to build the context).
        before = list(state.messages)
        try:
            copies: list[Any] | None = copy.deepcopy(before)
        except Exception:  # a message that cannot be copied: changes in place go unseen
            copies = None
        return cls(state, provider, state.messages, before, copies)

    def refuse(self, attempt: str) -> ThreadChangedError:
        self.attempts.append(attempt)
        return self.error()

    def error(self) -> ThreadChangedError:
        return ThreadChangedError(self.provider, self.state.thread_id, self.changes())

    def changes(self) -> list[str]:
        """What the decision changed (or tried to), in words; empty when nothing."""
        found = list(self.attempts)
        if self.state.messages is not self.messages:
            return [*found, "replaced the thread's message list"]
        after = list(self.messages)
        expected = self.before + self.added_outside
        if len(after) != len(expected):
            count = abs(len(after) - len(expected))
            what = "added" if len(after) > len(expected) else "removed"
            found.append(f"{what} {count} message{'s' if count != 1 else ''}")
        for index, (now, was) in enumerate(zip(after, expected, strict=False)):
            if now is not was:
                found.append(f"replaced message {index}")
            elif (
                self.copies is not None
                and index < len(self.copies)
                and _changed_in_place(now, self.copies[index])
            ):
                found.append(f"changed message {index}")
        return found


def _changed_in_place(message: object, copied: object) -> bool:
    if type(message).__eq__ is object.__eq__:
        return False  # compared by identity only: a change in place cannot be seen
    try:
        return bool(message != copied)
    except Exception:
        return False


_DECIDING: Final[ContextVar[_Watch | None]] = ContextVar("opdecide_deciding", default=None)
"""The decision whose provider code is running (in its task, and in the tasks and threads it
starts, which copy the context): what it does to the thread is refused."""


def _provider_name(provider: object) -> str:
    name = getattr(provider, "name", None)
    return name if isinstance(name, str) and name else type(provider).__name__


def _held_to_the_spec(
    provider: DecisionProvider, request: DecisionRequest, result: object
) -> DecisionResult:
    """The provider's result, parsed into the typed models and checked by every result rule,
    whatever the provider is: our base class checks its own (unless a subclass replaced its
    ``decide``), any other provider's result is checked here."""
    if type(provider).decide is BaseDecisionProvider.decide and isinstance(result, DecisionResult):
        return result  # BaseDecisionProvider.decide ran validate_result already
    name = _provider_name(provider)
    if not isinstance(result, DecisionResult | Mapping):
        raise ProviderError(
            f"provider {name!r} produced a result that breaks a rule: result: "
            f"{Rule.RESULT_SHAPE.value}: decide() must return a DecisionResult (or its wire JSON "
            f"as a dict), got {type(result).__name__}",
            "unknown",
        )
    decimals = getattr(provider, "probability_decimals", None)
    if isinstance(decimals, bool) or not isinstance(decimals, int):
        decimals = None
    try:
        return validate_result(request, result, decimals=decimals)
    except InvalidResultError as error:
        raise ProviderError(
            f"provider {name!r} produced a result that breaks a rule: {error}", "unknown"
        ) from error


def _declares_provider(source: object) -> bool:
    return hasattr(source, "kind") or hasattr(source, "decide")


def _name(source: object) -> str:
    return getattr(source, "__qualname__", None) or type(source).__name__


@dataclass(eq=False)
class ThreadState:
    """The state of one conversation thread, as far as decisions are concerned.

    Attributes:
        thread_id: The thread's id.
        messages: The conversation history. ``decide()`` never touches it.
        execution: The active execution, or ``None`` when the thread is at rest.
        tools: Tools available to conversational turns, by name. ``decide()`` never runs them.
        provider_config: The runtime's provider configuration (credentials, endpoint,
            transport), inherited by every decision of the thread.
        provider_overrides: User- or thread-scoped config slot values; a changed destination
            never receives the inherited credentials. Applied to factories that declare
            ``config_slots``; refused (``ProviderConfigError``) for a ready provider or a
            factory without slots, which could not honour them.
        environ: Environment read for config slots (``os.environ`` when ``None``).
        on_turn: Called when a conversational turn starts. ``decide()`` never calls it.
    """

    thread_id: str = ""
    messages: MutableSequence[Any] = field(default_factory=list)
    execution: object | None = None
    tools: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    provider_config: ProviderFactoryConfig = field(default_factory=ProviderFactoryConfig)
    provider_overrides: Mapping[str, object] = field(default_factory=dict)
    environ: Mapping[str, str] | None = None
    on_turn: Callable[[ThreadState], object] | None = None
    _watches: list[_Watch] = field(default_factory=list, init=False, repr=False)

    async def decide(self, options: DecideOptions | Mapping[str, Any]) -> DecisionResult:
        """Answer the questions of ``options`` with its provider.

        Args:
            options: A :class:`DecideOptions`, or a mapping with ``provider`` and the request
                fields (``model``, ``context``, ``questions``, optional ``signal``).

        Returns:
            The provider's result as a typed ``DecisionResult`` (a provider's dict is parsed),
            checked by every result rule whatever the provider is.

        Raises:
            TypeError: No provider was given, or what was given is not a decision provider or
                a factory of one (a class, a provider declaring another ``kind``...).
            ProviderConfigError: ``provider_overrides`` cannot be applied to what was given.
            ThreadChangedError: The provider changed the thread's messages, or tried to add
                one, run a tool or start a turn through the thread (refused), while it decided.
            ProviderError: ``invalid_request`` for a malformed request (before the provider is
                called), ``unknown`` for a result that is no ``DecisionResult`` or breaks a
                rule (the message names the provider and the rule), or whatever the provider
                raises.
        """
        source, request = _split_options(options)
        watch = _Watch.start(self, _name(source))
        self._watches.append(watch)
        deciding = _DECIDING.set(watch)
        try:
            try:
                provider = self._provider(source)
                watch.provider = _provider_name(provider)
                result = await provider.decide(request)
            finally:
                _DECIDING.reset(deciding)
                self._watches.remove(watch)
        except Exception as error:
            changes = watch.changes()
            if changes:
                raise ThreadChangedError(watch.provider, self.thread_id, changes) from error
            raise
        changes = watch.changes()
        if changes:
            raise ThreadChangedError(watch.provider, self.thread_id, changes)
        return _held_to_the_spec(provider, request, result)

    def _inside_a_decision(self) -> _Watch | None:
        """The decision on this thread whose code is calling, if any."""
        watch = _DECIDING.get()
        return watch if watch is not None and watch.state is self else None

    def _provider(self, source: ProviderSource) -> DecisionProvider:
        if isinstance(source, type):
            raise TypeError(
                f"provider is the class {source.__name__}: pass a provider object "
                f"({source.__name__}(...)) or a factory taking a ProviderFactoryConfig "
                f"(DecisionProviderFactory(lambda config: {source.__name__}(...), "
                "config_slots=...))"
            )
        if _declares_provider(source) and not isinstance(source, DecisionProviderFactory):
            problem = declared_provider_problem(source)
            if problem is not None:
                raise TypeError(f"provider {source!r} is not a decision provider: {problem}")
            self._refuse_overrides("a ready provider (it is built already)")
            return source  # type: ignore[return-value]
        if isinstance(source, DecisionProviderFactory):
            config = source.resolve(
                self.provider_config, overrides=self.provider_overrides, environ=self.environ
            )
        elif callable(source):
            slots = getattr(source, "config_slots", None)
            config = self.provider_config
            if isinstance(slots, Mapping):
                config = resolve_provider_config(
                    slots, config, overrides=self.provider_overrides, environ=self.environ
                )
            else:
                self._refuse_overrides(
                    f"the factory {_name(source)}, which declares no config_slots"
                )
        else:
            raise TypeError(
                "provider must be a decision provider factory or a decision provider, "
                f"got {source!r}"
            )
        built = source(config)
        problem = declared_provider_problem(built)
        if problem is not None:
            raise TypeError(
                f"the factory {_name(source)} built {built!r}, which is not a decision "
                f"provider: {problem}"
            )
        provider: DecisionProvider = built
        return provider

    def _refuse_overrides(self, what: str) -> None:
        overridden = sorted(self.provider_overrides)
        if overridden:
            raise ProviderConfigError(
                f"provider_overrides {overridden} cannot be applied to {what}: pass a factory "
                "that declares config_slots for them (DecisionProviderFactory(build, "
                "config_slots=...)), or leave the overrides empty",
                "invalid_request",
                slot=overridden[0],
                env_var=None,
            )

    def add_message(self, message: Any) -> None:
        """Append ``message`` to the conversation (the explicit way to record an answer).

        Raises:
            ThreadChangedError: Called from within a decision on this thread (its provider's
                code): refused, nothing is added.
        """
        watch = self._inside_a_decision()
        if watch is not None:
            raise watch.refuse("tried to add a message")
        for other in self._watches:  # added by code outside the decisions running
            other.added_outside.append(message)
        self.messages.append(message)

    def run_tool(self, name: str, /, **arguments: Any) -> Any:
        """Run tool ``name`` with ``arguments`` (part of conversational turns, not decisions).

        Raises:
            ThreadChangedError: Called from within a decision on this thread: refused, the
                tool does not run.
        """
        watch = self._inside_a_decision()
        if watch is not None:
            raise watch.refuse(f"tried to run tool {name!r}")
        return self.tools[name](**arguments)

    def start_turn(self) -> None:
        """Start a conversational turn: calls :attr:`on_turn`.

        Raises:
            ThreadChangedError: Called from within a decision on this thread: refused, no turn
                starts.
        """
        watch = self._inside_a_decision()
        if watch is not None:
            raise watch.refuse("tried to start a turn")
        if self.on_turn is not None:
            self.on_turn(self)


def _split_options(
    options: DecideOptions | Mapping[str, Any],
) -> tuple[ProviderSource, DecisionRequest]:
    # An aborted signal rejects at once, before even the request is checked (as providers do).
    signal = options.get("signal") if isinstance(options, Mapping) else options.signal
    if isinstance(signal, AbortSignal):
        signal.throw_if_aborted()
    if isinstance(options, DecideOptions):
        request = DecisionRequest.model_construct(
            _fields_set=options.model_fields_set - {"provider"},
            model=options.model,
            context=options.context,
            questions=options.questions,
            signal=options.signal,
        )
        validate_request(request)
        return options.provider, _copied(request)
    if not isinstance(options, Mapping):
        raise TypeError(f"decide() takes DecideOptions or a mapping, got {type(options).__name__}")
    fields = dict(options)
    source = fields.pop("provider", None)
    if source is None:
        raise TypeError("decide() needs a provider: pass provider=<factory or provider>")
    return source, _copied(validate_request(fields))


def _copied(request: DecisionRequest) -> DecisionRequest:
    """A request of its own for the provider: whatever it does with the context and the
    questions, the caller's objects (a context built from the thread's messages...) stay as
    they were."""
    return DecisionRequest.model_construct(
        _fields_set=request.model_fields_set,
        model=request.model,
        context=json_copy(request.context, "context"),  # type: ignore[arg-type]
        questions={
            question_id: question.model_copy(deep=True)
            for question_id, question in request.questions.items()
        },
        signal=request.signal,
    )


async def decide(state: ThreadState, options: DecideOptions | Mapping[str, Any]) -> DecisionResult:
    """Answer questions on a thread; the same as ``await state.decide(options)``.

    Args:
        state: The thread.
        options: The provider and the request (see :meth:`ThreadState.decide`).

    Returns:
        The provider's result.
    """
    return await state.decide(options)
