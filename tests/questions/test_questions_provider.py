"""The provider base class, the sync wrapper, abort signals, factories and config slots."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from pytest_opdecide.questions import (
    SPECIFICATION_VERSION,
    AbortController,
    BaseDecisionProvider,
    BooleanAnswer,
    ConfigSlot,
    DecisionProvider,
    DecisionProviderFactory,
    DecisionRequest,
    DecisionResult,
    InvalidRequestError,
    ProviderConfigError,
    ProviderError,
    ProviderFactoryConfig,
    Rule,
    decide_sync,
    resolve_provider_config,
)


def boolean_request(**extra: Any) -> DecisionRequest:
    return DecisionRequest(
        model="m",
        context="c",
        questions={"q": {"type": "boolean", "instructions": "?"}},  # type: ignore[dict-item]
        **extra,
    )


class Recording(BaseDecisionProvider):
    """Answers P(true) = probability; records calls; optionally waits on an event."""

    name = "recording"

    def __init__(self, probability: float = 0.25, wait: asyncio.Event | None = None) -> None:
        self.probability = probability
        self.wait = wait
        self.calls = 0
        self.started = asyncio.Event()
        self.cancelled = False

    async def decide_validated(self, request: DecisionRequest) -> DecisionResult:
        self.calls += 1
        self.started.set()
        if self.wait is not None:
            try:
                await self.wait.wait()
            except asyncio.CancelledError:
                self.cancelled = True
                raise
        return DecisionResult(
            model="m-1",
            answers={
                q: BooleanAnswer.model_construct(type="boolean", probability=self.probability)
                for q in request.questions
            },
        )


async def test_identity_of_a_decision_provider() -> None:
    provider = Recording()
    assert provider.kind == "decision"
    assert provider.specification_version == SPECIFICATION_VERSION == "1"
    assert isinstance(provider, DecisionProvider)
    assert await provider.get_models() == []
    assert provider.get_icon() is None


async def test_decide_validates_the_request_before_any_work() -> None:
    provider = Recording()
    with pytest.raises(InvalidRequestError) as caught:
        await provider.decide({"model": "m", "context": "", "questions": {}})
    assert caught.value.rule == Rule.QUESTIONS_EMPTY
    assert provider.calls == 0


async def test_decide_accepts_a_mapping() -> None:
    result = await Recording().decide(boolean_request().model_dump(by_alias=True))
    assert result.boolean("q").probability == 0.25


async def test_a_result_breaking_a_rule_is_a_provider_error() -> None:
    with pytest.raises(ProviderError) as caught:
        await Recording(probability=1.5).decide(boolean_request())
    assert caught.value.code == "unknown"
    assert "probability.range" in str(caught.value)
    assert "'recording'" in str(caught.value)


def test_decide_sync_outside_an_event_loop() -> None:
    provider = Recording()
    assert provider.decide_sync(boolean_request()).boolean("q").probability == 0.25
    assert decide_sync(provider, boolean_request()).model == "m-1"


async def test_decide_sync_inside_an_event_loop_says_what_to_do() -> None:
    with pytest.raises(RuntimeError, match=r"await provider\.decide"):
        decide_sync(Recording(), boolean_request())


class Minimal:
    """A provider that only satisfies the protocol (no base class)."""

    name = "minimal"
    specification_version = "1"
    kind = "decision"

    async def decide(self, request: DecisionRequest) -> DecisionResult:
        return DecisionResult(model="x", answers={"q": BooleanAnswer(probability=0.5)})


def test_decide_sync_works_for_any_protocol_provider() -> None:
    assert isinstance(Minimal(), DecisionProvider)
    result = decide_sync(Minimal(), boolean_request().model_dump())
    assert result.boolean("q").probability == 0.5


# ---------------------------------------------------------------- abort


async def test_a_pre_aborted_signal_rejects_without_a_call() -> None:
    controller = AbortController()
    controller.abort("user left")
    provider = Recording()
    with pytest.raises(ProviderError) as caught:
        await provider.decide(boolean_request(signal=controller.signal))
    assert caught.value.code == "timeout"
    assert "user left" in str(caught.value)
    assert provider.calls == 0


async def test_a_pre_aborted_signal_wins_over_request_validation() -> None:
    controller = AbortController()
    controller.abort()
    with pytest.raises(ProviderError) as caught:
        await Recording().decide(
            {"model": "m", "context": "", "questions": {}, "signal": controller.signal}
        )
    assert caught.value.code == "timeout"


async def test_an_abort_during_the_call_cancels_the_work() -> None:
    controller = AbortController()
    provider = Recording(wait=asyncio.Event())
    task = asyncio.create_task(provider.decide(boolean_request(signal=controller.signal)))
    await asyncio.wait_for(provider.started.wait(), 5)
    controller.abort("too slow")
    with pytest.raises(ProviderError) as caught:
        await asyncio.wait_for(task, timeout=5)
    assert caught.value.code == "timeout"
    assert "too slow" in str(caught.value)
    assert provider.cancelled


async def test_an_abort_from_another_thread_is_honoured() -> None:
    controller = AbortController()
    provider = Recording(wait=asyncio.Event())
    timer = threading.Timer(0.05, controller.abort)
    timer.start()
    try:
        with pytest.raises(ProviderError) as caught:
            await asyncio.wait_for(provider.decide(boolean_request(signal=controller.signal)), 5)
    finally:
        timer.join()
    assert caught.value.code == "timeout"
    assert provider.cancelled


async def test_work_that_finishes_is_not_affected_by_the_signal() -> None:
    controller = AbortController()
    result = await Recording().decide(boolean_request(signal=controller.signal))
    assert result.boolean("q").probability == 0.25
    controller.abort()  # after the fact: nothing to do
    assert controller.signal.aborted


def test_abort_signal_state() -> None:
    controller = AbortController()
    signal = controller.signal
    assert (signal.aborted, signal.reason) == (False, None)
    signal.throw_if_aborted()
    seen: list[str] = []
    remove = signal.add_callback(lambda: seen.append("first"))
    signal.add_callback(lambda: seen.append("second"))
    remove()
    controller.abort()
    controller.abort("ignored: already aborted")
    assert (signal.aborted, signal.reason) == (True, "the operation was aborted")
    assert seen == ["second"]
    late: list[str] = []
    signal.add_callback(lambda: late.append("late"))
    assert late == ["late"]
    with pytest.raises(ProviderError) as caught:
        signal.throw_if_aborted()
    assert caught.value.code == "timeout"


# ---------------------------------------------------------------- config slots

SLOTS = {
    "api_key": ConfigSlot("secret", required=True, default_env="ACME_KEY"),
    "base_url": ConfigSlot("url", default="https://acme.example/v1", default_env="ACME_URL"),
    "timeout": ConfigSlot("number", default=1000, default_env="ACME_TIMEOUT"),
    "verbose": ConfigSlot("boolean", default=False, default_env="ACME_VERBOSE"),
    "region": ConfigSlot("text", overridable=False, default="eu"),
}


def test_resolution_order_explicit_then_env_then_default() -> None:
    env = {"ACME_KEY": "env-key", "ACME_URL": "https://env.example/v1"}
    explicit = ProviderFactoryConfig(api_key="explicit-key")
    resolved = resolve_provider_config(SLOTS, explicit, environ=env)
    assert resolved.api_key == "explicit-key"
    assert resolved.base_url == "https://env.example/v1"
    assert resolved.timeout == 1000
    assert resolved.options == {"verbose": False, "region": "eu"}


def test_an_empty_explicit_value_falls_through_to_the_environment() -> None:
    resolved = resolve_provider_config(
        SLOTS, ProviderFactoryConfig(api_key=""), environ={"ACME_KEY": "k"}
    )
    assert resolved.api_key == "k"


@pytest.mark.parametrize(("text", "number"), [("2500", 2500), (" 1.5 ", 1.5), ("-3", -3)])
def test_numbers_are_parsed_from_the_environment(text: str, number: float) -> None:
    env = {"ACME_KEY": "k", "ACME_TIMEOUT": text}
    value = resolve_provider_config(SLOTS, environ=env).timeout
    assert value == number
    assert type(value) is type(number)


@pytest.mark.parametrize(
    ("text", "flag"),
    [
        ("1", True),
        ("true", True),
        ("YES", True),
        ("on", True),
        ("0", False),
        ("false", False),
        ("No", False),
        ("off", False),
    ],
)
def test_booleans_are_parsed_from_the_environment(text: str, flag: bool) -> None:
    env = {"ACME_KEY": "k", "ACME_VERBOSE": text}
    assert resolve_provider_config(SLOTS, environ=env).options["verbose"] is flag


@pytest.mark.parametrize(
    ("var", "text"), [("ACME_TIMEOUT", "soon"), ("ACME_TIMEOUT", "inf"), ("ACME_VERBOSE", "maybe")]
)
def test_unparsable_environment_values_name_the_variable(var: str, text: str) -> None:
    with pytest.raises(ProviderConfigError, match=f"\\${var}") as caught:
        resolve_provider_config(SLOTS, environ={"ACME_KEY": "k", var: text})
    assert caught.value.code == "invalid_request"


def test_a_required_slot_left_empty_names_its_variable() -> None:
    with pytest.raises(ProviderConfigError, match="ACME_KEY") as caught:
        resolve_provider_config(SLOTS, environ={})
    assert (caught.value.slot, caught.value.env_var, caught.value.code) == (
        "api_key",
        "ACME_KEY",
        "auth_error",
    )


def test_overrides_win_but_only_for_overridable_slots() -> None:
    env = {"ACME_KEY": "k"}
    resolved = resolve_provider_config(SLOTS, overrides={"timeout": "50"}, environ=env)
    assert resolved.timeout == 50
    with pytest.raises(ProviderConfigError, match="cannot be overridden"):
        resolve_provider_config(SLOTS, overrides={"region": "us"}, environ=env)
    with pytest.raises(ProviderConfigError, match="unknown config slot"):
        resolve_provider_config(SLOTS, overrides={"colour": "red"}, environ=env)


def test_an_overridden_destination_never_receives_inherited_credentials() -> None:
    optional = {**SLOTS, "api_key": ConfigSlot("secret", default_env="ACME_KEY")}
    inherited = ProviderFactoryConfig(api_key="runtime-key")
    moved = resolve_provider_config(
        optional,
        inherited,
        overrides={"base_url": "https://attacker.example"},
        environ={"ACME_KEY": "env-key"},
    )
    assert moved.base_url == "https://attacker.example"
    assert moved.api_key is None
    own = resolve_provider_config(
        optional, inherited, overrides={"base_url": "https://mine.example", "api_key": "my-key"}
    )
    assert own.api_key == "my-key"
    with pytest.raises(ProviderConfigError, match="same overrides"):
        resolve_provider_config(SLOTS, inherited, overrides={"base_url": "https://x.example"})


def test_config_repr_hides_the_key() -> None:
    config = ProviderFactoryConfig(api_key="sk-secret", base_url="http://x")
    assert "sk-secret" not in repr(config)
    assert "'***'" in repr(config)


def test_a_factory_builds_from_its_config_without_lookups() -> None:
    seen: list[ProviderFactoryConfig] = []

    def build(config: ProviderFactoryConfig) -> Recording:
        seen.append(config)
        return Recording()

    factory = DecisionProviderFactory(build, config_slots=SLOTS, name="acme")
    provider = factory()
    assert isinstance(provider, Recording)
    assert seen == [ProviderFactoryConfig()]
    assert factory.config_slots == SLOTS
    resolved = factory.resolve(environ={"ACME_KEY": "k"})
    assert resolved.api_key == "k"
    factory(resolved)
    assert seen[-1].api_key == "k"
    assert "acme" in repr(factory)
