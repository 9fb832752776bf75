"""``FakeDecisionProvider``: the provider interface, seeded answers, scripts, strictness, aborts."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import pytest

from fake_runtimes import (
    AnswerMismatch,
    FakeDecisionProvider,
    ScriptExhausted,
    UnusedSteps,
    choose,
    fails,
    hangs,
    probability,
    score,
    times_out,
)
from pytest_opdecide.questions import (
    AbortController,
    BaseDecisionProvider,
    BooleanQuestion,
    ChoiceAnswer,
    ChoiceQuestion,
    DecideOptions,
    DecisionProvider,
    DecisionRequest,
    DecisionResult,
    InvalidRequestError,
    InvalidResultError,
    ProviderError,
    ProviderModelInfo,
    ProviderUsage,
    ScoreQuestion,
    ThreadState,
    decide_sync,
    validate_result,
)

from ._fresh_process import json_from_fresh_process

INTENT = ChoiceQuestion(
    instructions="What does the customer want?",
    options={"billing": "Payments, invoices, refunds.", "shipping": None, "other": None},
)
URGENCY = ScoreQuestion(
    instructions={"task": "Rate the urgency", "scale": "0 = can wait, 3 = right now"},
    levels=["can wait", "this week", "today", "right now"],
)
ANGRY = BooleanQuestion(
    instructions="Is the customer angry?",
    criteria={"true": "insults, capitals, threats to leave", "false": "calm and polite"},
)


def request_for(
    context: Any = "I was charged twice for order A1.", **kwargs: Any
) -> DecisionRequest:
    fields: dict[str, Any] = {
        "model": "judge-1",
        "context": context,
        "questions": {"intent": INTENT, "urgency": URGENCY, "angry": ANGRY},
    }
    fields.update(kwargs)
    return DecisionRequest(**fields)


REQUEST = request_for()


def seeded(seed: int, context: Any = "I was charged twice for order A1.") -> dict[str, Any]:
    """The wire JSON of the seeded answers to ``request_for(context)``."""
    result = decide_sync(FakeDecisionProvider(seed=seed), request_for(context))
    answers: dict[str, Any] = result.model_dump(by_alias=True, mode="json")["answers"]
    return answers


class TestInterface:
    def test_is_a_decision_provider(self) -> None:
        provider = FakeDecisionProvider()
        assert isinstance(provider, DecisionProvider)
        assert isinstance(provider, BaseDecisionProvider)
        assert provider.name == "fake"
        assert provider.specification_version == "1"
        assert provider.kind == "decision"

    async def test_decide_is_async(self) -> None:
        result = await FakeDecisionProvider().decide(REQUEST)
        assert isinstance(result, DecisionResult)
        assert set(result.answers) == {"intent", "urgency", "angry"}

    def test_decide_sync(self) -> None:
        assert FakeDecisionProvider().decide_sync(REQUEST) == decide_sync(
            FakeDecisionProvider(), REQUEST
        )

    def test_a_request_as_wire_json(self) -> None:
        wire = REQUEST.model_dump(by_alias=True, mode="json")
        assert decide_sync(FakeDecisionProvider(), wire) == decide_sync(
            FakeDecisionProvider(), REQUEST
        )

    def test_the_model_is_the_one_asked_for(self) -> None:
        assert decide_sync(FakeDecisionProvider(), REQUEST).model == "judge-1"

    def test_an_empty_model_gets_the_default_one(self) -> None:
        request = request_for(model="")
        assert decide_sync(FakeDecisionProvider(), request).model == "fake-decision-1"
        assert decide_sync(FakeDecisionProvider(model="m-x"), request).model == "m-x"

    async def test_get_models_and_get_icon(self) -> None:
        provider = FakeDecisionProvider(model="judge-small")
        assert await provider.get_models() == [
            ProviderModelInfo(id="judge-small", name="Fake decision model", owned_by="fake")
        ]
        assert await provider.get_models("SMALL") == await provider.get_models()
        assert await provider.get_models("large") == []
        assert provider.get_icon() is None

    def test_through_a_thread(self) -> None:
        provider = FakeDecisionProvider({"intent": choose("billing", p=0.8)})
        state = ThreadState(thread_id="t1", messages=["hello"])
        options = DecideOptions(
            provider=provider,
            model="judge-1",
            context="Charged twice.",
            questions={"intent": INTENT},
        )
        result = asyncio.run(state.decide(options))
        assert result.choice("intent").choice == "billing"
        assert state.messages == ["hello"]
        (received,) = provider.requests
        assert isinstance(received, DecisionRequest)
        assert received.context == "Charged twice."

    def test_repr(self) -> None:
        provider = FakeDecisionProvider({"b": probability(1), "a": probability(0)}, seed=3)
        assert repr(provider) == (
            "FakeDecisionProvider(answers=['a', 'b'], seed=3, model='fake-decision-1')"
        )


class TestSeededAnswers:
    def test_every_result_passes_the_shared_validator(self) -> None:
        for seed in range(50):
            result = decide_sync(FakeDecisionProvider(seed=seed), REQUEST)
            assert validate_result(REQUEST, result) is result

    def test_distributions_are_complete_and_look_rounded_by_a_provider(self) -> None:
        for seed in range(50):
            result = decide_sync(FakeDecisionProvider(seed=seed), REQUEST)
            intent, urgency = result.choice("intent"), result.score("urgency")
            for distribution in (intent.probabilities, urgency.probabilities):
                assert all(0 < p < 1 for p in distribution.values())
                assert all(round(p, 3) == p for p in distribution.values())
                assert math.isclose(math.fsum(distribution.values()), 1.0, abs_tol=1e-9)
            assert list(intent.probabilities) == ["billing", "shipping", "other"]
            assert intent.probabilities[intent.choice] == max(intent.probabilities.values())
            assert list(urgency.probabilities) == ["0", "1", "2", "3"]
            expected = math.fsum(int(i) * p for i, p in urgency.probabilities.items())
            assert math.isclose(urgency.score, expected, abs_tol=1e-9)
            assert urgency.legend == {
                "0": "can wait",
                "1": "this week",
                "2": "today",
                "3": "right now",
            }

    def test_boolean_probabilities_are_floats_never_thresholded(self) -> None:
        values = set()
        for seed in range(50):
            p = decide_sync(FakeDecisionProvider(seed=seed), REQUEST).boolean("angry").probability
            assert type(p) is float
            assert 0 < p < 1
            values.add(p)
        assert len(values) > 25

    def test_every_option_and_level_gets_chosen_over_seeds(self) -> None:
        choices = {seeded(seed)["intent"]["choice"] for seed in range(60)}
        assert choices == {"billing", "shipping", "other"}
        top_levels = {
            max(answers["urgency"]["probabilities"].items(), key=lambda kv: kv[1])[0]
            for answers in (seeded(seed) for seed in range(60))
        }
        assert top_levels == {"0", "1", "2", "3"}

    def test_the_same_request_and_seed_give_the_same_answers(self) -> None:
        assert seeded(7) == seeded(7)

    def test_another_seed_gives_other_answers(self) -> None:
        assert len({json.dumps(seeded(seed)) for seed in range(10)}) == 10

    def test_another_context_gives_other_answers(self) -> None:
        assert seeded(0, "Where is my parcel?") != seeded(0)

    def test_another_model_gives_other_answers(self) -> None:
        one = decide_sync(FakeDecisionProvider(), REQUEST)
        other = decide_sync(FakeDecisionProvider(), request_for(model="judge-2"))
        assert one.answers != other.answers

    def test_an_answer_does_not_depend_on_the_other_questions_asked(self) -> None:
        alone = request_for(questions={"intent": INTENT})
        assert (
            decide_sync(FakeDecisionProvider(), alone).answers["intent"]
            == decide_sync(FakeDecisionProvider(), REQUEST).answers["intent"]
        )

    def test_a_structured_context_is_hashed_by_content(self) -> None:
        one = {"ticket": {"id": 7, "body": "Refund please"}, "tags": ["billing"]}
        same = json.loads(json.dumps(one))
        assert seeded(0, one) == seeded(0, same)
        assert seeded(0, one) != seeded(0, {**one, "tags": ["shipping"]})

    def test_the_same_answers_in_a_fresh_process(self) -> None:
        code = """
            import json
            from fakes.test_decision_provider import seeded
            print(json.dumps([seeded(seed) for seed in (0, 1, 2)]))
        """
        expected = [seeded(seed) for seed in (0, 1, 2)]
        assert json_from_fresh_process(code, hash_seed="271828") == expected

    def test_known_answers(self) -> None:
        # Pinned: a change to how answers are derived must be a deliberate one.
        assert seeded(0) == {
            "intent": {
                "type": "choice",
                "choice": "shipping",
                "probabilities": {"billing": 0.403, "shipping": 0.475, "other": 0.122},
            },
            "urgency": {
                "type": "score",
                "score": 1.701,
                "probabilities": {"0": 0.052, "1": 0.485, "2": 0.173, "3": 0.29},
                "legend": {"0": "can wait", "1": "this week", "2": "today", "3": "right now"},
            },
            "angry": {"type": "boolean", "probability": 0.517},
        }

    def test_many_options(self) -> None:
        options: dict[str, Any] = {f"option_{i}": None for i in range(40)}
        request = request_for(
            questions={"q": ChoiceQuestion(instructions="Pick one.", options=options)}
        )
        result = decide_sync(FakeDecisionProvider(), request)
        distribution = result.choice("q").probabilities
        assert len(distribution) == 40
        assert all(p >= 0.001 for p in distribution.values())

    def test_metadata_says_where_each_answer_came_from(self) -> None:
        provider = FakeDecisionProvider({"angry": probability(0.2)}, seed=5)
        assert decide_sync(provider, REQUEST).metadata == {
            "seed": 5,
            "answered_by": {"intent": "seed", "urgency": "seed", "angry": "script"},
        }


def test_a_result_the_fake_got_wrong_is_never_passed_off_as_a_provider_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A bug in the fake must fail the test, not look like an outage the code under test handles.
    def broken(self: Any, request: Any, question_id: str, question: Any) -> Any:
        return ChoiceAnswer(choice="refunds", probabilities={"refunds": 1.0})

    monkeypatch.setattr(FakeDecisionProvider, "_derived", broken)
    request = request_for(questions={"intent": INTENT})
    with pytest.raises(InvalidResultError) as caught:
        FakeDecisionProvider().decide_sync(request)
    assert not isinstance(caught.value, ProviderError)
    assert caught.value.question == "intent"


class TestUsage:
    def test_is_deterministic_and_plausible(self) -> None:
        usage = decide_sync(FakeDecisionProvider(), REQUEST).usage
        assert usage == decide_sync(FakeDecisionProvider(seed=9), REQUEST).usage
        assert usage == ProviderUsage(
            prompt_tokens=257, completion_tokens=3, total_tokens=260, provider="fake"
        )

    def test_grows_with_the_context_and_the_questions(self) -> None:
        short = decide_sync(FakeDecisionProvider(), REQUEST).usage
        long = decide_sync(FakeDecisionProvider(), request_for("x" * 4000)).usage
        fewer = decide_sync(FakeDecisionProvider(), request_for(questions={"angry": ANGRY})).usage
        assert long.prompt_tokens > short.prompt_tokens + 2900
        assert fewer.prompt_tokens < short.prompt_tokens
        assert fewer.completion_tokens == 1

    def test_scripted_answers_cost_the_same_as_seeded_ones(self) -> None:
        scripted = FakeDecisionProvider({"angry": probability(0.5)})
        assert (
            decide_sync(scripted, REQUEST).usage
            == decide_sync(FakeDecisionProvider(), REQUEST).usage
        )


class TestRecordedRequests:
    def test_every_request_is_recorded_in_order(self) -> None:
        provider = FakeDecisionProvider()
        second = request_for("Where is my parcel?")
        provider.decide_sync(REQUEST)
        provider.decide_sync(second)
        assert provider.requests == [REQUEST, second]
        assert provider.requests[0] is REQUEST

    def test_rejected_requests_are_recorded_too(self) -> None:
        provider = FakeDecisionProvider({"intent": fails("server_error")})
        with pytest.raises(ProviderError):
            provider.decide_sync(REQUEST)
        empty = {"model": "m", "context": "x", "questions": {}}
        with pytest.raises(InvalidRequestError):
            FakeDecisionProvider().decide_sync(empty)
        assert len(provider.requests) == 1


class TestRequestValidation:
    def test_an_invalid_request_is_rejected_before_any_answer(self) -> None:
        provider = FakeDecisionProvider({"q": [choose("a"), choose("b")]})
        one_option = {
            "model": "m",
            "context": "x",
            "questions": {"q": {"type": "choice", "instructions": "?", "options": {"a": None}}},
        }
        with pytest.raises(InvalidRequestError) as caught:
            provider.decide_sync(one_option)
        assert caught.value.code == "invalid_request"
        assert str(caught.value) == (
            "question 'q': choice.too_few_options: a choice question needs at least 2 options, "
            "got 1 (got ['a'])"
        )
        with pytest.raises(UnusedSteps):  # the rejected request used no scripted answer
            provider.assert_complete()


class TestScripts:
    def test_scripted_and_seeded_answers_mix(self) -> None:
        provider = FakeDecisionProvider({"intent": choose("shipping", p=0.7)})
        result = provider.decide_sync(REQUEST)
        assert result.choice("intent").choice == "shipping"
        assert result.score("urgency") == decide_sync(FakeDecisionProvider(), REQUEST).score(
            "urgency"
        )

    def test_a_single_answer_answers_every_request(self) -> None:
        provider = FakeDecisionProvider({"angry": probability(0.9)})
        for context in ("a", "b", "c"):
            assert provider.decide_sync(request_for(context)).boolean("angry").probability == 0.9
        provider.assert_complete()

    def test_a_list_gives_one_answer_per_request(self) -> None:
        provider = FakeDecisionProvider(
            {"intent": [fails("rate_limit", retry_after=1.5), choose("billing", p=0.6)]}
        )
        with pytest.raises(ProviderError) as caught:
            provider.decide_sync(REQUEST)
        assert (caught.value.code, caught.value.retry_after) == ("rate_limit", 1.5)
        assert provider.decide_sync(REQUEST).choice("intent").choice == "billing"
        provider.assert_complete()

    def test_a_request_after_the_last_answer_of_a_list(self) -> None:
        provider = FakeDecisionProvider({"intent": [choose("billing"), choose("other")]})
        provider.decide_sync(REQUEST)
        provider.decide_sync(REQUEST)
        with pytest.raises(ScriptExhausted) as caught:
            provider.decide_sync(REQUEST)
        assert str(caught.value) == (
            "FakeDecisionProvider ran out of answers for question 'intent': request #2 asks it, "
            "and all 2 scripted answers are used:\n"
            "  0. choose('billing', p=1)\n"
            "  1. choose('other', p=1)\n"
            "Script one more answer, or find out why the code asked again."
        )

    def test_a_provider_error_can_be_scripted_directly(self) -> None:
        error = ProviderError("invalid API key", "auth_error", status_code=401)
        with pytest.raises(ProviderError) as caught:
            FakeDecisionProvider({"urgency": error}).decide_sync(REQUEST)
        assert caught.value is error

    def test_answers_for_questions_the_request_does_not_ask(self) -> None:
        provider = FakeDecisionProvider(
            {"intent": choose("billing"), "sentiment": probability(0.5), "topic": choose("x")}
        )
        with pytest.raises(AnswerMismatch) as caught:
            provider.decide_sync(REQUEST)
        assert str(caught.value) == (
            "answers are scripted for questions ['sentiment', 'topic'], but the request does "
            "not ask them; it asks ['intent', 'urgency', 'angry'].\n"
            "Remove those answers, or use one FakeDecisionProvider per kind of request."
        )

    def test_one_answer_for_a_question_not_asked(self) -> None:
        with pytest.raises(AnswerMismatch) as caught:
            FakeDecisionProvider({"sentiment": probability(0.5)}).decide_sync(REQUEST)
        assert str(caught.value).startswith(
            "answers are scripted for question 'sentiment', but the request does not ask it; "
        )

    def test_a_choice_of_an_option_not_offered_lists_the_options(self) -> None:
        with pytest.raises(AnswerMismatch) as caught:
            FakeDecisionProvider({"intent": choose("refund")}).decide_sync(REQUEST)
        assert str(caught.value) == (
            "answers['intent'] chooses 'refund', but question 'intent' offers "
            "['billing', 'shipping', 'other']."
        )

    @pytest.mark.parametrize(
        ("answers", "message"),
        [
            (
                {"Intent": choose("billing")},
                "answers are scripted for question 'Intent', but the request does not ask it; "
                "it asks ['intent', 'urgency', 'angry']. Did you mean 'intent'?",
            ),
            (
                {"urgncy": score(1)},
                "answers are scripted for question 'urgncy', but the request does not ask it; "
                "it asks ['intent', 'urgency', 'angry']. Did you mean 'urgency'?",
            ),
            (
                {"intent": choose("Billing")},
                "answers['intent'] chooses 'Billing', but question 'intent' offers "
                "['billing', 'shipping', 'other']. Did you mean 'billing'?",
            ),
            (
                {"intent": choose({"biling": 0.6, "shipping": 0.4})},
                "answers['intent'] is choose({'biling': 0.6, 'shipping': 0.4}), but question "
                "'intent' does not offer 'biling'; it offers ['billing', 'shipping', 'other']. "
                "Did you mean 'billing'?",
            ),
            (
                {"intent": choose("refund")},
                "answers['intent'] chooses 'refund', but question 'intent' offers "
                "['billing', 'shipping', 'other'].",
            ),
        ],
        ids=["id case", "id typo", "option case", "distribution typo", "no close name"],
    )
    def test_a_near_miss_says_what_was_probably_meant(
        self, answers: dict[str, Any], message: str
    ) -> None:
        with pytest.raises(AnswerMismatch) as caught:
            FakeDecisionProvider(answers).decide_sync(REQUEST)
        assert str(caught.value).split("\n")[0] == message

    @pytest.mark.parametrize(
        ("value", "hint"),
        [
            ("billing", "Did you mean choose('billing')?"),
            (0.7, "Did you mean probability(0.7) (or score(0.7))?"),
            (2.5, "Did you mean score(2.5)?"),
            (
                True,
                "(a boolean answer is P(true) as a float: probability(1.0) or probability(0.0))",
            ),
            (
                {"billing": 0.6, "shipping": 0.4},
                "Did you mean choose({'billing': 0.6, 'shipping': 0.4}) (or score(...) for "
                "levels)?",
            ),
        ],
    )
    def test_a_plain_value_says_which_helper_it_probably_meant(
        self, value: object, hint: str
    ) -> None:
        with pytest.raises(TypeError) as caught:
            FakeDecisionProvider({"intent": value})  # type: ignore[dict-item]
        assert str(caught.value).endswith(hint)

    def test_a_mismatch_in_a_list_names_the_entry(self) -> None:
        provider = FakeDecisionProvider({"intent": [choose("billing"), choose("refund")]})
        provider.decide_sync(REQUEST)
        with pytest.raises(AnswerMismatch, match=r"^answers\['intent'\]\[1\] chooses 'refund'"):
            provider.decide_sync(REQUEST)

    @pytest.mark.parametrize(
        ("answers", "error", "message"),
        [
            ([], TypeError, "answers must be a mapping of question ids, got list"),
            ({"": probability(1)}, TypeError, "answers keys are question ids (strings), got ''"),
            (
                {"intent": "billing"},
                TypeError,
                "answers['intent'] is str 'billing': script choose(...), score(...), "
                "probability(...), fails(...), times_out(), hangs(), a ProviderError, or a list "
                "of them. Did you mean choose('billing')?",
            ),
            (
                {"intent": [choose("billing"), 0.5]},
                TypeError,
                "answers['intent'][1] is float 0.5: script choose(...), score(...), "
                "probability(...), fails(...), times_out(), hangs(), a ProviderError, or a list "
                "of them. Did you mean probability(0.5) (or score(0.5))?",
            ),
            (
                {"intent": []},
                ValueError,
                "answers['intent'] is an empty list: script at least one answer",
            ),
        ],
    )
    def test_a_malformed_script_fails_when_it_is_written(
        self, answers: Any, error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error) as caught:
            FakeDecisionProvider(answers)
        assert str(caught.value) == message

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"seed": "1"}, "seed must be an int, got str"),
            ({"seed": True}, "seed must be an int, got bool"),
            ({"model": " "}, "model must be a non-empty string, got ' '"),
        ],
    )
    def test_bad_settings(self, kwargs: dict[str, Any], message: str) -> None:
        with pytest.raises(TypeError) as caught:
            FakeDecisionProvider(**kwargs)
        assert str(caught.value) == message


class TestAssertComplete:
    def test_lists_every_unused_answer(self) -> None:
        provider = FakeDecisionProvider(
            {
                "intent": [choose("billing"), times_out(), choose("other")],
                "angry": probability(0.1),
            }
        )
        provider.decide_sync(REQUEST)
        with pytest.raises(UnusedSteps) as caught:
            provider.assert_complete()
        assert str(caught.value) == (
            "FakeDecisionProvider: 2 scripted answers were never used:\n"
            "  answers['intent'][1]: times_out()\n"
            "  answers['intent'][2]: choose('other', p=1)\n"
            "The code made 1 decision request; remove the unused answers, or find out why the "
            "code stopped early."
        )

    def test_a_single_answer_never_asked_for(self) -> None:
        with pytest.raises(UnusedSteps) as caught:
            FakeDecisionProvider({"angry": probability(0.1)}).assert_complete()
        assert str(caught.value) == (
            "FakeDecisionProvider: 1 scripted answer was never used:\n"
            "  answers['angry']: probability(0.1)\n"
            "The code made 0 decision requests; remove the unused answers, or find out why the "
            "code stopped early."
        )

    def test_passes_without_a_script(self) -> None:
        FakeDecisionProvider().assert_complete()


class TestAbort:
    def test_a_pre_aborted_signal_rejects_without_answering(self) -> None:
        controller = AbortController()
        controller.abort("the user left")
        provider = FakeDecisionProvider({"intent": [choose("billing")]})
        with pytest.raises(ProviderError) as caught:
            provider.decide_sync(request_for(signal=controller.signal))
        assert caught.value.code == "timeout"
        assert str(caught.value) == "the decision was aborted: the user left"
        assert len(provider.requests) == 1
        with pytest.raises(UnusedSteps):  # the scripted answer is still there
            provider.assert_complete()

    async def test_an_abort_during_a_hanging_call(self) -> None:
        controller = AbortController()
        provider = FakeDecisionProvider({"angry": hangs()})
        call = asyncio.ensure_future(provider.decide(request_for(signal=controller.signal)))
        for _ in range(5):
            await asyncio.sleep(0)
        assert not call.done()
        controller.abort("deadline")
        with pytest.raises(ProviderError) as caught:
            await call
        assert caught.value.code == "timeout"
        assert str(caught.value) == "the decision was aborted: deadline"

    async def test_a_signal_that_is_never_aborted_changes_nothing(self) -> None:
        controller = AbortController()
        result = await FakeDecisionProvider().decide(request_for(signal=controller.signal))
        assert result.answers == (await FakeDecisionProvider().decide(REQUEST)).answers

    def test_a_hang_without_a_signal_fails_instead_of_hanging(self) -> None:
        with pytest.raises(AnswerMismatch) as caught:
            FakeDecisionProvider({"angry": hangs()}).decide_sync(REQUEST)
        assert str(caught.value) == (
            "answers['angry'] is hangs(), which waits for the request's abort signal, but the "
            "request has no signal: pass signal=controller.signal (an AbortController) and abort "
            "it, or script times_out() instead."
        )


async def test_concurrent_requests_each_use_their_own_list_entry() -> None:
    provider = FakeDecisionProvider(
        {"angry": [probability(0.1), probability(0.2), probability(0.3)]}
    )
    results = await asyncio.gather(*(provider.decide(REQUEST) for _ in range(3)))
    assert sorted(r.boolean("angry").probability for r in results) == [0.1, 0.2, 0.3]
    provider.assert_complete()
