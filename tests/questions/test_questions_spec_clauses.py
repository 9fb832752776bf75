"""The clauses of the question-decision spec that the first reading found unheld, each held now.

Inherited credentials never follow an overridden destination; overrides are applied or refused,
never ignored; unrepresentable input is rejected (lone surrogates, repeated JSON keys, ``null``
criteria, which describe nothing); a provider's stated rounding is accepted, never punished;
factories and providers are told apart by what they declare; unknown usage is not free; and the
provider gets copies, so that a decision cannot change the caller's objects.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from _questions_support import BASE_URL, Backend, logprobs_reply, lp, make_request

from fake_runtimes import FakeDecisionProvider, choose
from pytest_opdecide.questions import (
    BaseDecisionProvider,
    BooleanAnswer,
    BooleanCriteria,
    BooleanQuestion,
    ChoiceAnswer,
    ConfigSlot,
    DecisionProviderFactory,
    DecisionRequest,
    DecisionResult,
    InvalidRequestError,
    InvalidResultError,
    OpenAICompatibleDecisionProvider,
    ProviderConfigError,
    ProviderError,
    ProviderFactoryConfig,
    ProviderUsage,
    ProviderUsagePricing,
    Rule,
    RuntimeDecisionProvider,
    ThreadState,
    openai_compatible,
    resolve_provider_config,
    validate_request,
    validate_result,
)

# ---------------------------------------------------------------- credentials and destinations

SLOTS = {
    "api_key": ConfigSlot("secret"),
    "base_url": ConfigSlot("url"),
    "mirror": ConfigSlot("url"),
}


def test_an_overridden_destination_inherits_no_header_key_or_userinfo() -> None:
    inherited = ProviderFactoryConfig(
        api_key="runtime-secret",
        base_url="https://runtime.example/v1",
        default_headers={"Authorization": "Bearer runtime-secret", "api-key": "runtime-secret"},
        transport=httpx.MockTransport(lambda request: httpx.Response(200)),
        options={"mirror": "https://user:mirror-secret@mirror.example/v1"},
    )
    moved = resolve_provider_config(
        SLOTS, inherited, overrides={"base_url": "https://elsewhere.example/v1"}, environ={}
    )
    assert moved.base_url == "https://elsewhere.example/v1"
    assert moved.api_key is None
    assert dict(moved.default_headers) == {}
    assert moved.options["mirror"] == "https://mirror.example/v1"
    assert moved.transport is inherited.transport  # httpx's own transports add nothing
    # Not redirected: everything is inherited as it was.
    kept = resolve_provider_config(SLOTS, inherited, environ={})
    assert kept.api_key == "runtime-secret"
    assert dict(kept.default_headers) == dict(inherited.default_headers)
    assert kept.options["mirror"] == "https://user:mirror-secret@mirror.example/v1"


def test_the_api_key_is_dropped_even_when_the_factory_has_no_slot_for_it() -> None:
    moved = resolve_provider_config(
        {"base_url": ConfigSlot("url")},
        ProviderFactoryConfig(api_key="runtime-secret"),
        overrides={"base_url": "https://elsewhere.example/v1"},
        environ={},
    )
    assert moved.api_key is None


def test_an_override_bringing_its_own_key_keeps_it() -> None:
    moved = resolve_provider_config(
        SLOTS,
        ProviderFactoryConfig(api_key="runtime-secret", default_headers={"x-team": "a"}),
        overrides={"base_url": "https://elsewhere.example/v1", "api_key": "user-key"},
        environ={},
    )
    assert moved.api_key == "user-key"
    assert dict(moved.default_headers) == {}


@pytest.mark.parametrize("client_class", [httpx.Client, httpx.AsyncClient])
def test_an_inherited_client_is_refused_with_a_redirect(client_class: type[Any]) -> None:
    config = ProviderFactoryConfig(transport=client_class())
    with pytest.raises(ProviderConfigError) as caught:
        resolve_provider_config(
            SLOTS, config, overrides={"base_url": "https://elsewhere.example/v1"}, environ={}
        )
    assert str(caught.value) == (
        "the destination is overridden (base_url), but the inherited transport is an httpx "
        "client, which can add headers or credentials of its own to requests sent to the new "
        "destination; give the thread a config without that transport (httpx.MockTransport and "
        "httpx's HTTP transports are kept), or do not override the destination"
    )
    assert caught.value.code == "invalid_request"


def test_a_custom_transport_is_refused_with_a_redirect() -> None:
    class Signing(httpx.MockTransport):
        """Adds a signature header of its own."""

    config = ProviderFactoryConfig(transport=Signing(lambda request: httpx.Response(200)))
    with pytest.raises(ProviderConfigError, match="the inherited transport is a Signing transport"):
        resolve_provider_config(SLOTS, config, overrides={"mirror": "https://m.example"})


async def test_a_thread_override_sends_neither_the_headers_nor_the_key_of_the_runtime() -> None:
    backend = Backend(lambda body: logprobs_reply([("yes", lp(0.7)), ("no", lp(0.3))]))
    state = ThreadState(
        provider_config=ProviderFactoryConfig(
            api_key="runtime-secret",
            default_headers={"api-key": "runtime-secret", "Authorization": "Bearer runtime"},
            transport=backend.transport,
        ),
        provider_overrides={"base_url": "http://user-chosen.test/v1"},
        environ={},
    )
    await state.decide(
        {
            "provider": openai_compatible,
            "model": "m",
            "context": "",
            "questions": {"ok": {"type": "boolean", "instructions": "Ok?"}},
        }
    )
    (request,) = backend.requests
    assert request.url.host == "user-chosen.test"
    assert "runtime" not in json.dumps(dict(request.headers))


# ---------------------------------------------------------------- overrides applied or refused


class Fixed(BaseDecisionProvider):
    """Answers every boolean with 0.6."""

    name = "fixed"

    async def decide_validated(self, request: DecisionRequest) -> DecisionResult:
        answers = {question_id: BooleanAnswer(probability=0.6) for question_id in request.questions}
        return DecisionResult(model="fixed-1", answers=answers)


def boolean_options(provider: Any) -> dict[str, Any]:
    return {
        "provider": provider,
        "model": "fixed-1",
        "context": "",
        "questions": {"ok": {"type": "boolean", "instructions": "Ok?"}},
    }


async def test_overrides_are_refused_for_a_ready_provider() -> None:
    state = ThreadState(provider_overrides={"base_url": "http://elsewhere.test/v1"})
    with pytest.raises(ProviderConfigError) as caught:
        await state.decide(boolean_options(Fixed()))
    assert str(caught.value) == (
        "provider_overrides ['base_url'] cannot be applied to a ready provider (it is built "
        "already): pass a factory that declares config_slots for them "
        "(DecisionProviderFactory(build, config_slots=...)), or leave the overrides empty"
    )


async def test_overrides_are_refused_for_a_factory_without_slots() -> None:
    def plain(config: ProviderFactoryConfig) -> Fixed:
        return Fixed()

    state = ThreadState(provider_overrides={"base_url": "http://elsewhere.test/v1"})
    with pytest.raises(ProviderConfigError, match=r"to the factory test_overrides_are_refused"):
        await state.decide(boolean_options(plain))
    # Without overrides, both are fine.
    assert (await ThreadState().decide(boolean_options(plain))).boolean("ok").probability == 0.6


async def test_overrides_are_applied_to_a_factory_with_slots() -> None:
    seen: list[ProviderFactoryConfig] = []

    def build(config: ProviderFactoryConfig) -> Fixed:
        seen.append(config)
        return Fixed()

    factory = DecisionProviderFactory(build, config_slots={"base_url": ConfigSlot("url")})
    state = ThreadState(provider_overrides={"base_url": "http://elsewhere.test/v1"}, environ={})
    await state.decide(boolean_options(factory))
    assert seen[0].base_url == "http://elsewhere.test/v1"


# ---------------------------------------------------------------- factories and providers


class ChatProvider:
    name = "chat"
    kind = "chat"
    specification_version = "1"

    async def decide(self, request: DecisionRequest) -> DecisionResult:
        raise AssertionError("never called")


class FutureProvider(ChatProvider):
    kind = "decision"
    specification_version = "7"


async def test_a_provider_class_where_a_factory_belongs_gets_a_clear_error() -> None:
    with pytest.raises(TypeError) as caught:
        await ThreadState().decide(boolean_options(Fixed))
    assert str(caught.value) == (
        "provider is the class Fixed: pass a provider object (Fixed(...)) or a factory taking "
        "a ProviderFactoryConfig (DecisionProviderFactory(lambda config: Fixed(...), "
        "config_slots=...))"
    )


@pytest.mark.parametrize(
    ("built", "problem"),
    [
        (ChatProvider, "it declares kind='chat', not 'decision'"),
        (FutureProvider, "it declares specification_version='7', not '1'"),
    ],
)
async def test_a_factory_of_another_kind_of_provider_is_refused(
    built: type[ChatProvider], problem: str
) -> None:
    def factory(config: ProviderFactoryConfig) -> Any:
        return built()

    with pytest.raises(TypeError, match="is not a decision provider: " + problem):
        await ThreadState().decide(boolean_options(factory))
    with pytest.raises(TypeError, match="is not a decision provider: " + problem):
        await ThreadState().decide(boolean_options(built()))


# ---------------------------------------------------------------- unrepresentable input

SURROGATE = "\ud83d"  # the first half of an emoji, alone


def surrogate_requests() -> dict[str, dict[str, Any]]:
    choice = {"type": "choice", "instructions": "Which?", "options": {"a": None, "b": None}}
    return {
        "model": {"model": "m" + SURROGATE},
        "context": {"context": "A ticket " + SURROGATE},
        "context key": {"context": {"ticket" + SURROGATE: 1}},
        "question id": {"questions": {"q" + SURROGATE: choice}},
        "instructions": {"questions": {"q": {**choice, "instructions": SURROGATE}}},
        "option name": {"questions": {"q": {**choice, "options": {SURROGATE: None, "b": None}}}},
        "option description": {
            "questions": {"q": {**choice, "options": {"a": [SURROGATE], "b": None}}}
        },
        "level": {
            "questions": {"q": {"type": "score", "instructions": "?", "levels": ["a", SURROGATE]}}
        },
        "criteria": {
            "questions": {
                "q": {"type": "boolean", "instructions": "?", "criteria": {"true": SURROGATE}}
            }
        },
    }


@pytest.mark.parametrize("where", list(surrogate_requests()))
def test_a_lone_surrogate_anywhere_is_an_invalid_request(where: str) -> None:
    request = {
        "model": "m",
        "context": "",
        "questions": {"q": {"type": "boolean", "instructions": "?"}},
        **surrogate_requests()[where],
    }
    with pytest.raises(ProviderError) as caught:
        validate_request(request)
    assert caught.value.code == "invalid_request"
    assert "a lone surrogate '\\ud83d'" in str(caught.value)
    assert "which UTF-8 cannot encode" in str(caught.value)


def surrogate_question_id_request() -> DecisionRequest:
    # Built as a model: keys are not validated by pydantic, only by validate_request.
    return DecisionRequest(
        model="m",
        context="",
        questions={"ok" + SURROGATE: BooleanQuestion(instructions="Ok?")},
    )


@pytest.mark.parametrize("provider_kind", ["openai", "runtime", "fake"])
async def test_every_provider_rejects_a_lone_surrogate_before_sending(provider_kind: str) -> None:
    from fake_runtimes import ScriptedRuntime

    backend = Backend(lambda body: logprobs_reply([("yes", lp(0.7))]))
    runtime = ScriptedRuntime(model="m")
    provider: Any = {
        "openai": OpenAICompatibleDecisionProvider(base_url=BASE_URL, transport=backend.transport),
        "runtime": RuntimeDecisionProvider(runtime),
        "fake": FakeDecisionProvider(),
    }[provider_kind]
    with pytest.raises(ProviderError) as caught:
        await provider.decide(surrogate_question_id_request())
    assert caught.value.code == "invalid_request"
    assert backend.requests == []
    assert len(runtime.trace) == 0


def test_json_text_repeating_an_option_key_is_refused_by_the_models() -> None:
    text = (
        '{"model": "m", "context": "", "questions": {"q": {"type": "choice",'
        ' "instructions": "?", "options": {"a": null, "a": "the second a"}}}}'
    )
    with pytest.raises(ValueError, match="repeats the key") as caught:
        DecisionRequest.model_validate_json(text)
    assert "questions.q.options repeats the key(s) ['a']" in str(caught.value)
    result_text = (
        '{"model": "m", "answers": {"q": {"type": "boolean", "probability": 0.2},'
        ' "q": {"type": "boolean", "probability": 0.9}}}'
    )
    with pytest.raises(InvalidResultError) as result_error:
        validate_result(
            {
                "model": "m",
                "context": "",
                "questions": {"q": {"type": "boolean", "instructions": "?"}},
            },
            result_text,
        )
    assert result_error.value.rule is Rule.RESULT_SHAPE
    assert "repeats the key(s) ['q']" in str(result_error.value)


NULL_CRITERIA = {
    "criteria null": (None, Rule.REQUEST_SHAPE, "null is not criteria"),
    "true null": ({"true": None}, Rule.REQUEST_JSON, "null is not a description"),
    "true null, false given": (
        {"true": None, "false": "no refund"},
        Rule.REQUEST_JSON,
        "null is not a description",
    ),
    "false null first": ({"false": None, "true": [1]}, Rule.REQUEST_JSON, "null is not a"),
}


@pytest.mark.parametrize("case", list(NULL_CRITERIA))
def test_null_criteria_are_refused_not_dropped(case: str) -> None:
    # A side is an optional DecisionContext, and null is none: refused, not read as left out.
    criteria, rule, message = NULL_CRITERIA[case]
    wire = {"type": "boolean", "instructions": "Refund?", "criteria": criteria}
    request = {"model": "m", "context": "", "questions": {"q": wire}}
    for given in (request, json.dumps(request)):
        with pytest.raises(InvalidRequestError) as caught:
            validate_request(given)
        assert caught.value.code == "invalid_request"
        assert (caught.value.rule, caught.value.question) == (rule, "q")
        assert message in str(caught.value)


def test_criteria_left_out_stay_out_of_the_wire_form() -> None:
    for criteria in ({"true": "refund"}, {"false": {"asks": "nothing"}}, {"false": "", "true": []}):
        wire = {"type": "boolean", "instructions": "Refund?", "criteria": criteria}
        question = BooleanQuestion.model_validate(wire)
        assert question.model_dump(by_alias=True, mode="json") == wire
        assert json.loads(question.model_dump_json(by_alias=True)) == wire
    # Key order follows the spec's order of fields, as written for the wire.
    both = BooleanQuestion.model_validate(
        {"type": "boolean", "instructions": "?", "criteria": {"false": "no", "true": "yes"}}
    )
    assert list(both.model_dump(by_alias=True, mode="json")["criteria"]) == ["true", "false"]
    assert "criteria" not in BooleanQuestion(instructions="?").model_dump(by_alias=True)


def null_criteria_built_around_the_model() -> dict[str, BooleanQuestion]:
    """Null criteria the model never validated: built with model_construct, or assigned."""
    assigned = BooleanQuestion(instructions="Refund?", criteria=BooleanCriteria(true="yes"))
    assigned.criteria = None
    side = BooleanQuestion(instructions="Refund?", criteria=BooleanCriteria(false="no"))
    assert side.criteria is not None
    side.criteria.true = None
    return {
        "criteria": BooleanQuestion.model_construct(instructions="Refund?", criteria=None),
        "true": BooleanQuestion.model_construct(
            instructions="Refund?", criteria=BooleanCriteria.model_construct(true=None)
        ),
        "assigned criteria": assigned,
        "assigned true": side,
    }


@pytest.mark.parametrize("where", list(null_criteria_built_around_the_model()))
async def test_decide_refuses_null_criteria_the_model_never_saw(where: str) -> None:
    question = null_criteria_built_around_the_model()[where]
    request = DecisionRequest.model_construct(
        model="fixed-1", context="", questions={"refund": question}
    )
    expected = Rule.REQUEST_SHAPE if "criteria" in where else Rule.REQUEST_JSON
    with pytest.raises(InvalidRequestError) as caught:
        validate_request(request)
    assert (caught.value.rule, caught.value.question) == (expected, "refund")
    provider = Fixed()
    with pytest.raises(InvalidRequestError) as by_provider:
        await provider.decide(request)
    assert by_provider.value.rule is expected
    options = {**boolean_options(Fixed()), "questions": {"refund": question}}
    with pytest.raises(InvalidRequestError) as by_thread:
        await ThreadState().decide(options)
    assert by_thread.value.rule is expected
    # A question left without criteria is fine.
    fine = DecisionRequest.model_construct(
        model="fixed-1",
        context="",
        questions={"refund": BooleanQuestion.model_construct(instructions="Refund?")},
    )
    assert (await provider.decide(fine)).boolean("refund").probability == 0.6


# ---------------------------------------------------------------- rounding


def three_options() -> dict[str, Any]:
    return {
        "model": "m",
        "context": "",
        "questions": {
            "q": {
                "type": "choice",
                "instructions": "?",
                "options": {"a": None, "b": None, "c": None},
            }
        },
    }


def rounded(metadata: Any = None, values: tuple[float, ...] = (0.33, 0.33, 0.33)) -> Any:
    probabilities = dict(zip("abc", values, strict=True))
    return {
        "model": "m",
        "answers": {"q": {"type": "choice", "choice": "a", "probabilities": probabilities}},
        "metadata": metadata,
    }


def test_a_sum_a_few_floats_off_is_within_the_tolerance() -> None:
    request = {
        "model": "m",
        "context": "",
        "questions": {
            "q": {
                "type": "choice",
                "instructions": "?",
                "options": dict.fromkeys("abcd"),
            }
        },
    }
    values = {"a": 0.25, "b": 0.25, "c": 0.25, "d": 0.249}
    # 1 - 0.999 is 0.0010000000000000009 in floats: one unit past "within 0.001", as written.
    assert abs(sum(values.values()) - 1.0) > 0.001
    result = {
        "model": "m",
        "answers": {"q": {"type": "choice", "choice": "a", "probabilities": values}},
    }
    assert validate_result(request, result).choice("q").probabilities == values


@pytest.mark.parametrize(
    "metadata",
    [
        None,
        {"rounding": "probabilities rounded to 2 decimal places, half to even"},
        {"rounding": 2},
        {"rounding": {"method": "half-even"}},
        {"questions": "all of them", "rounding": ["two", "places"]},
        {"questions": {"q": "rounded"}},
    ],
    ids=["none", "a note", "a number", "another form", "other keys", "a note per question"],
)
def test_a_rounding_is_read_from_the_values_whatever_the_metadata_says(metadata: Any) -> None:
    # The spec's case: rounded, never renormalised, and said in the provider's own words (or
    # not at all). Three values with two places each: the sum may be 3 x 0.005 from 1.
    assert validate_result(three_options(), rounded(metadata)).choice("q").probabilities == {
        "a": 0.33,
        "b": 0.33,
        "c": 0.33,
    }
    assert validate_result(three_options(), rounded(metadata, (0.34, 0.33, 0.32))).metadata == (
        metadata
    )
    with pytest.raises(InvalidResultError) as caught:
        validate_result(three_options(), rounded(metadata, (0.33, 0.33, 0.3)))
    assert str(caught.value) == (
        "question 'q': probability.sum: probabilities must sum to 1 within 0.015 (each written "
        "with at most 2 decimal places: 3 x 0.005); they sum to 0.96 (got {'a': 0.33, 'b': 0.33, "
        "'c': 0.3})"
    )


def test_unrounded_values_get_the_tolerance_only() -> None:
    computed = (0.3271, 0.3311, 0.3408)  # four places: rounding explains 3 x 0.00005
    assert validate_result(three_options(), rounded(None, computed)).answers["q"].type == "choice"
    off = (0.33, 0.33, 0.3380000000000001)  # 0.998: written with 16 places, not rounded
    with pytest.raises(InvalidResultError) as caught:
        validate_result(three_options(), rounded(None, off))
    assert caught.value.rule is Rule.PROBABILITY_SUM
    assert "must sum to 1 within 0.001; they sum to" in str(caught.value)


@pytest.mark.parametrize(
    "metadata",
    [{"rounding": {"decimals": 1}}, {"questions": {"q": {"rounding": {"decimals": 1}}}}],
    ids=["for the result", "for the question"],
)
def test_a_stated_rounding_explains_the_sum(metadata: dict[str, Any]) -> None:
    # Rounded to one place, one of them by arithmetic (0.1 + 0.2): read from the values, that
    # one has 17 places and the rest explain nothing; stated, the rounding is the statement's.
    noisy = (0.1 + 0.2, 0.3, 0.3)
    with pytest.raises(InvalidResultError, match=r"probability\.sum"):
        validate_result(three_options(), rounded(None, noisy))
    assert validate_result(three_options(), rounded(metadata, noisy)).choice("q").probabilities
    assert validate_result(three_options(), rounded(None, noisy), decimals=1).answers["q"]


def test_a_stated_rounding_explains_no_more_than_it_can() -> None:
    with pytest.raises(InvalidResultError) as caught:
        validate_result(three_options(), rounded({"rounding": {"decimals": 2}}, (0.3, 0.3, 0.3)))
    assert str(caught.value) == (
        "question 'q': probability.sum: probabilities must sum to 1 within 0.015 (rounded to 2 "
        "decimal places: 3 x 0.005); they sum to 0.8999999999999999 (got {'a': 0.3, 'b': 0.3, "
        "'c': 0.3})"
    )


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        (
            {"rounding": {"decimals": 1}},
            "question 'q': probability.rounding: the probabilities are stated as rounded to 1 "
            "decimal places, but that of 'a' has more (got 0.33)",
        ),
        (
            {"rounding": {"decimals": "2"}},
            "result: probability.rounding: metadata['rounding']['decimals'] must be a whole "
            "number of decimal places from 0 to 15 (got '2')",
        ),
        (
            {"rounding": {"decimals": -1}},
            "result: probability.rounding: metadata['rounding']['decimals'] must be a whole "
            "number of decimal places from 0 to 15 (got -1)",
        ),
    ],
)
def test_a_false_or_malformed_rounding_statement_is_refused(
    metadata: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidResultError) as caught:
        validate_result(three_options(), rounded(metadata))
    assert str(caught.value) == message


class TwoDecimals(BaseDecisionProvider):
    """Rounds an even split to 2 decimal places, and says so."""

    name = "two-decimals"
    probability_decimals = 2

    async def decide_validated(self, request: DecisionRequest) -> DecisionResult:
        answers: dict[str, Any] = {}
        for question_id, question in request.questions.items():
            names = list(question.options)  # type: ignore[union-attr]
            share = round(1 / len(names), 2)
            answers[question_id] = ChoiceAnswer(
                choice=names[0], probabilities=dict.fromkeys(names, share)
            )
        return DecisionResult(model="m", answers=answers)


async def test_a_provider_declaring_its_rounding_states_it_in_the_metadata() -> None:
    result = await TwoDecimals().decide(three_options())
    assert result.choice("q").probabilities == {"a": 0.33, "b": 0.33, "c": 0.33}
    assert result.metadata == {"rounding": {"decimals": 2}}


async def test_the_fake_reports_rounded_scripted_values_unchanged() -> None:
    provider = FakeDecisionProvider({"q": choose({"a": 0.33, "b": 0.33, "c": 0.33}, decimals=2)})
    result = await provider.decide(three_options())
    assert result.choice("q").probabilities == {"a": 0.33, "b": 0.33, "c": 0.33}
    assert result.metadata is not None
    assert result.metadata["questions"] == {"q": {"rounding": {"decimals": 2}}}


# ---------------------------------------------------------------- usage


def test_unknown_usage_is_not_free() -> None:
    prices = ProviderUsagePricing(input_per_million=1.0, output_per_million=2.0)
    reported = ProviderUsage(prompt_tokens=1000, completion_tokens=10, total_tokens=1010)
    everything = ProviderUsage.combined([reported, reported], provider="p", pricing=prices)
    assert (everything.prompt_tokens, everything.cost) == (2000, pytest.approx(0.00204))
    partial = ProviderUsage.combined([reported, None], provider="p", pricing=prices)
    assert (partial.prompt_tokens, partial.cost, partial.pricing) == (1000, None, prices)
    nothing = ProviderUsage.combined([None, None], provider="p", pricing=prices)
    assert (nothing.total_tokens, nothing.cost) == (0, None)
    assert ProviderUsage.combined([], pricing=prices).cost is None


@pytest.mark.parametrize(
    ("usages", "cost"),
    [
        ([{"prompt_tokens": 100, "completion_tokens": 1, "total_tokens": 101}] * 3, 0.000318),
        ([None, None, None], None),
        ([{"prompt_tokens": 100, "completion_tokens": 1, "total_tokens": 101}, None, None], None),
    ],
    ids=["all reported", "none reported", "one of three reported"],
)
async def test_the_openai_provider_prices_only_what_the_server_reported(
    usages: list[Any], cost: float | None
) -> None:
    replies = iter(usages)

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        reply = logprobs_reply([("A", lp(0.6)), ("yes", lp(0.3)), ("0", lp(0.1))])
        usage = next(replies)
        if usage is None:
            del reply["usage"]
        else:
            reply["usage"] = usage
        return reply

    backend = Backend(respond)
    provider = OpenAICompatibleDecisionProvider(
        base_url=BASE_URL,
        transport=backend.transport,
        pricing=ProviderUsagePricing(input_per_million=1.0, output_per_million=6.0),
        max_concurrency=1,
    )
    result = await provider.decide(make_request())
    assert result.usage.cost == (None if cost is None else pytest.approx(cost))
    missing = sum(usage is None for usage in usages)
    assert result.metadata is not None
    assert result.metadata.get("responses_without_usage") == (missing or None)


# ---------------------------------------------------------------- conversation semantics


class Meddler(BaseDecisionProvider):
    """Writes into every part of the request it is given."""

    name = "meddler"

    async def decide_validated(self, request: DecisionRequest) -> DecisionResult:
        assert isinstance(request.context, list)
        request.context.append({"role": "assistant", "content": "added by the provider"})
        question = request.questions["ok"]
        assert isinstance(question, BooleanQuestion)
        question.instructions = "changed by the provider"
        return DecisionResult(model="m", answers={"ok": BooleanAnswer(probability=0.5)})


async def test_the_provider_gets_copies_of_the_context_and_the_questions() -> None:
    messages: list[Any] = [{"role": "user", "content": "Where is my parcel?"}]
    question = BooleanQuestion(instructions="Is the parcel late?")
    state = ThreadState(messages=messages)
    await state.decide(
        {
            "provider": Meddler(),
            "model": "m",
            "context": state.messages,
            "questions": {"ok": question},
        }
    )
    assert messages == [{"role": "user", "content": "Where is my parcel?"}]
    assert question.instructions == "Is the parcel late?"


class RoundsSilently(TwoDecimals):
    """Rounds to 2 decimal places without saying so."""

    probability_decimals = None


class RoundsByArithmetic(TwoDecimals):
    """Rounds to 1 decimal place, the first value by adding tenths (``0.1 + 0.2``), without
    saying so."""

    probability_decimals = None

    async def decide_validated(self, request: DecisionRequest) -> DecisionResult:
        values = dict(zip("abc", (0.1 + 0.2, 0.3, 0.3), strict=True))
        return DecisionResult(
            model="m", answers={"q": ChoiceAnswer(choice="a", probabilities=values)}
        )


async def test_a_provider_that_rounds_without_saying_so_is_accepted_as_it_reports() -> None:
    result = await RoundsSilently().decide(three_options())
    assert result.choice("q").probabilities == {"a": 0.33, "b": 0.33, "c": 0.33}
    assert result.metadata is None


async def test_a_provider_whose_values_do_not_show_its_rounding_is_told_how_to_say_it() -> None:
    with pytest.raises(ProviderError) as caught:
        await RoundsByArithmetic().decide(three_options())
    assert str(caught.value).endswith(
        "they sum to 0.9 (got {'a': 0.30000000000000004, 'b': 0.3, 'c': 0.3}); if "
        "the provider rounds its probabilities, say so: probability_decimals = <decimal places> "
        "on the provider class"
    )
    RoundsByArithmetic.probability_decimals = 1
    try:
        result = await RoundsByArithmetic().decide(three_options())
    finally:
        RoundsByArithmetic.probability_decimals = None
    assert result.metadata == {"rounding": {"decimals": 1}}
