"""The scripted answers of ``FakeDecisionProvider``: what each helper produces and refuses."""

from __future__ import annotations

import math
from typing import Any

import pytest

from fake_runtimes import (
    AnswerMismatch,
    FakeDecisionProvider,
    ScriptedAnswer,
    choose,
    fails,
    hangs,
    probability,
    score,
    times_out,
)
from pytest_opdecide.questions import (
    BooleanQuestion,
    ChoiceQuestion,
    DecisionRequest,
    DecisionResult,
    ProviderError,
    ScoreQuestion,
    decide_sync,
    validate_result,
)

INTENT = ChoiceQuestion(
    instructions="What does the customer want?",
    options={"billing": "Payments, invoices, refunds.", "shipping": None, "other": None},
)
URGENCY = ScoreQuestion(
    instructions="How urgent is the ticket?",
    levels=["can wait", "this week", {"label": "today", "sla_hours": 8}, "right now"],
)
ANGRY = BooleanQuestion(instructions="Is the customer angry?")
REQUEST = DecisionRequest(
    model="judge-1",
    context={"subject": "Charged twice", "body": "I was charged twice for order A1."},
    questions={"intent": INTENT, "urgency": URGENCY, "angry": ANGRY},
)


def answer(question_id: str, scripted: ScriptedAnswer) -> Any:
    """The answer the provider gives to ``question_id`` of ``REQUEST`` with ``scripted``."""
    result = decide_sync(FakeDecisionProvider({question_id: scripted}), REQUEST)
    validate_result(REQUEST, result)
    return result.answers[question_id]


class TestChoose:
    def test_all_the_probability_on_the_option_by_default(self) -> None:
        got = answer("intent", choose("shipping"))
        assert got.choice == "shipping"
        assert got.probabilities == {"billing": 0.0, "shipping": 1.0, "other": 0.0}
        assert got.confidence is None

    def test_p_is_given_to_the_option_and_the_rest_spread_evenly(self) -> None:
        got = answer("intent", choose("billing", p=0.9))
        assert got.choice == "billing"
        assert got.probabilities == {"billing": 0.9, "shipping": 0.05, "other": 0.05}

    def test_the_option_is_chosen_even_when_others_are_likelier(self) -> None:
        got = answer("intent", choose("other", p=0.2))
        assert got.choice == "other"
        assert got.probabilities == {"billing": 0.4, "shipping": 0.4, "other": 0.2}

    def test_a_full_distribution_chooses_the_most_likely_option(self) -> None:
        got = answer("intent", choose({"other": 0.25, "shipping": 0.75}))
        assert got.choice == "shipping"
        # In the question's order; options left out get 0.
        assert list(got.probabilities.items()) == [
            ("billing", 0.0),
            ("shipping", 0.75),
            ("other", 0.25),
        ]

    def test_a_tie_goes_to_the_first_option_offered(self) -> None:
        assert answer("intent", choose({"other": 0.5, "shipping": 0.5})).choice == "shipping"

    def test_rounded_probabilities_are_reported_as_given(self) -> None:
        # Three thirds rounded by a provider sum to 0.999: kept, never renormalised.
        got = answer("intent", choose({"billing": 0.333, "shipping": 0.333, "other": 0.333}))
        assert got.probabilities == {"billing": 0.333, "shipping": 0.333, "other": 0.333}

    def test_confidence(self) -> None:
        assert answer("intent", choose("billing", p=0.8, confidence=0.6)).confidence == 0.6

    def test_str(self) -> None:
        assert str(choose("billing")) == "choose('billing', p=1)"
        assert str(choose("billing", p=0.9)) == "choose('billing', p=0.9)"
        assert str(choose({"billing": 0.5, "other": 0.5}, confidence=0.7)) == (
            "choose({'billing': 0.5, 'other': 0.5}, confidence=0.7)"
        )

    @pytest.mark.parametrize(
        ("args", "kwargs", "error", "message"),
        [
            (
                ("",),
                {},
                TypeError,
                "choose() needs an option name or a distribution {name: p}, got ''",
            ),
            (
                (3,),
                {},
                TypeError,
                "choose() needs an option name or a distribution {name: p}, got 3",
            ),
            (("a",), {"p": 1.5}, ValueError, "choose(): p must be in [0, 1], got 1.5"),
            (("a",), {"p": True}, TypeError, "choose(): p must be a number, got bool True"),
            (("a",), {"p": math.nan}, ValueError, "choose(): p must be finite, got nan"),
            (
                ({"a": 0.5},),
                {"p": 0.5},
                TypeError,
                "choose(distribution) takes no p: the distribution gives every p",
            ),
            (({},), {}, ValueError, "choose({}) needs at least one option's probability"),
            (
                ({"a": 0.5, "b": 0.3},),
                {},
                ValueError,
                "choose(): the probabilities sum to 0.8; they must sum to 1 within 0.001 (they "
                "are reported as given, never renormalised); for values rounded to a few decimal "
                "places, say so with decimals=<places>",
            ),
            (
                ({"a": -0.5, "b": 1.5},),
                {},
                ValueError,
                "choose(): the probability of 'a' must be in [0, 1], got -0.5",
            ),
            (
                ({1: 1.0},),
                {},
                TypeError,
                "choose(): option names must be non-empty strings, got 1",
            ),
            (("a",), {"confidence": 2}, ValueError, "confidence must be in [0, 1], got 2"),
        ],
    )
    def test_mistakes_are_caught_when_the_script_is_written(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error) as caught:
            choose(*args, **kwargs)
        assert str(caught.value) == message


class TestScore:
    def test_a_score_between_two_levels(self) -> None:
        got = answer("urgency", score(2.4))
        assert got.score == 2.4
        assert got.probabilities == {"0": 0.0, "1": 0.0, "2": 0.6, "3": 0.4}
        assert math.isclose(sum(int(i) * p for i, p in got.probabilities.items()), 2.4)

    def test_a_whole_score_is_one_level(self) -> None:
        got = answer("urgency", score(1))
        assert got.score == 1.0
        assert type(got.score) is float
        assert got.probabilities == {"0": 0.0, "1": 1.0, "2": 0.0, "3": 0.0}

    def test_the_ends_of_the_scale(self) -> None:
        assert answer("urgency", score(0)).probabilities["0"] == 1.0
        assert answer("urgency", score(3)).probabilities["3"] == 1.0

    @pytest.mark.parametrize(
        "levels",
        [{"0": 0.1, "1": 0.2, "2": 0.7}, {0: 0.1, 1: 0.2, 2: 0.7}, [0.1, 0.2, 0.7]],
        ids=["str keys", "int keys", "list"],
    )
    def test_a_level_distribution(self, levels: Any) -> None:
        got = answer("urgency", score(levels))
        assert got.probabilities == {"0": 0.1, "1": 0.2, "2": 0.7, "3": 0.0}
        assert got.score == 1.6  # 0*0.1 + 1*0.2 + 2*0.7, shown without float noise

    def test_the_legend_keeps_each_level_exactly(self) -> None:
        got = answer("urgency", score(2))
        assert got.legend == {
            "0": "can wait",
            "1": "this week",
            "2": {"label": "today", "sla_hours": 8},
            "3": "right now",
        }

    def test_confidence(self) -> None:
        assert answer("urgency", score(1.5, confidence=0.9)).confidence == 0.9

    def test_str(self) -> None:
        assert str(score(2.4)) == "score(2.4)"
        assert str(score(2)) == "score(2)"
        assert str(score([0.5, 0.5])) == "score({'0': 0.5, '1': 0.5})"

    @pytest.mark.parametrize(
        ("value", "error", "message"),
        [
            (-1, ValueError, "score() must be >= 0 (level indices start at 0), got -1"),
            ("2", TypeError, "score() must be a number, got str '2'"),
            (True, TypeError, "score() must be a number, got bool True"),
            (math.inf, ValueError, "score() must be finite, got inf"),
            ([], ValueError, "score() needs at least one level's probability"),
            (
                {"one": 1.0},
                TypeError,
                'score(): levels are indices "0", "1", ... (or ints), got \'one\'',
            ),
            (
                {"-1": 1.0},
                TypeError,
                'score(): levels are indices "0", "1", ... (or ints), got \'-1\'',
            ),
            (
                [0.5, 0.6],
                ValueError,
                "score(): the probabilities sum to 1.1; they must sum to 1 within 0.001 (they "
                "are reported as given, never renormalised); for values rounded to a few decimal "
                "places, say so with decimals=<places>",
            ),
        ],
    )
    def test_mistakes_are_caught_when_the_script_is_written(
        self, value: Any, error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error) as caught:
            score(value)
        assert str(caught.value) == message


class TestRounding:
    """``decimals=`` scripts what a provider that rounds reports: the values as given, summing
    to 1 within what the rounding explains, checked when the script is written."""

    def test_rounded_thirds_are_reported_as_given(self) -> None:
        got = answer(
            "intent", choose({"billing": 0.33, "shipping": 0.33, "other": 0.33}, decimals=2)
        )
        assert got.probabilities == {"billing": 0.33, "shipping": 0.33, "other": 0.33}
        levels = answer("urgency", score([0.33, 0.33, 0.33, 0.0], decimals=2))
        assert levels.probabilities == {"0": 0.33, "1": 0.33, "2": 0.33, "3": 0.0}

    def test_the_other_options_share_is_rounded_too(self) -> None:
        got = answer("intent", choose("billing", p=0.5, decimals=2))
        assert got.probabilities == {"billing": 0.5, "shipping": 0.25, "other": 0.25}
        odd = answer("intent", choose("billing", p=0.4, decimals=1))
        assert odd.probabilities == {"billing": 0.4, "shipping": 0.3, "other": 0.3}

    @pytest.mark.parametrize(
        ("make", "error", "message"),
        [
            (
                lambda: choose({"a": 0.3, "b": 0.3, "c": 0.3}, decimals=2),
                ValueError,
                "choose(): the probabilities sum to 0.8999999999999999; they must sum to 1 within "
                "0.015, what rounding 3 values to 2 decimal places explains (they are reported "
                "as given, never renormalised)",
            ),
            (
                lambda: choose({"a": 0.333, "b": 0.333, "c": 0.333}, decimals=2),
                ValueError,
                "choose(): 0.333 has more than 2 decimal places, but the distribution is "
                "declared rounded to 2 (decimals=2)",
            ),
            (
                lambda: choose("a", p=0.333, decimals=2),
                ValueError,
                "choose(): p=0.333 has more than 2 decimal places (decimals=2)",
            ),
            (
                lambda: choose({"a": 0.5, "b": 0.5}, decimals=-1),
                TypeError,
                "choose(): decimals must be a whole number of decimal places from 0 to 15, got -1",
            ),
            (
                lambda: score(2.4, decimals=2),
                TypeError,
                "score(2.4, decimals=2): decimals= applies to a scripted distribution "
                "(score([...], decimals=2)); a score's split between two levels is exact",
            ),
        ],
    )
    def test_mistakes_are_caught_when_the_script_is_written(
        self, make: Any, error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error) as caught:
            make()
        assert str(caught.value) == message

    def test_the_rounding_is_shown_where_the_answer_is_named(self) -> None:
        assert str(choose({"a": 0.5, "b": 0.5}, decimals=1)) == (
            "choose({'a': 0.5, 'b': 0.5}, decimals=1)"
        )


class TestProbability:
    @pytest.mark.parametrize("p", [0, 0.7, 1])
    def test_is_reported_as_a_float(self, p: float) -> None:
        got = answer("angry", probability(p))
        assert got.probability == p
        assert type(got.probability) is float

    def test_str(self) -> None:
        assert str(probability(0.7)) == "probability(0.7)"

    @pytest.mark.parametrize(
        ("p", "error", "message"),
        [
            (True, TypeError, "probability() must be a number, got bool True"),
            ("0.7", TypeError, "probability() must be a number, got str '0.7'"),
            (1.2, ValueError, "probability() must be in [0, 1], got 1.2"),
        ],
    )
    def test_mistakes(self, p: Any, error: type[Exception], message: str) -> None:
        with pytest.raises(error) as caught:
            probability(p)
        assert str(caught.value) == message


class TestFailures:
    @pytest.mark.parametrize(
        ("code", "status", "message"),
        [
            ("rate_limit", 429, "rate limit reached, retry later (scripted failure)"),
            ("auth_error", 401, "invalid API key (scripted failure)"),
            ("invalid_request", 400, "the request was rejected (scripted failure)"),
            ("server_error", 500, "the server had an internal error (scripted failure)"),
            ("timeout", None, "the decision timed out (scripted failure)"),
            ("unknown", None, "the provider failed (scripted failure)"),
        ],
    )
    def test_each_code_raises_a_provider_error(
        self, code: Any, status: int | None, message: str
    ) -> None:
        with pytest.raises(ProviderError) as caught:
            answer("intent", fails(code))
        assert caught.value.code == code
        assert caught.value.status_code == status
        assert caught.value.retry_after is None
        assert str(caught.value) == message

    def test_details(self) -> None:
        with pytest.raises(ProviderError) as caught:
            answer("intent", fails("rate_limit", "slow down", status_code=503, retry_after=2.5))
        assert (caught.value.code, str(caught.value)) == ("rate_limit", "slow down")
        assert (caught.value.status_code, caught.value.retry_after) == (503, 2.5)

    def test_a_ready_provider_error(self) -> None:
        error = ProviderError("quota exceeded", "rate_limit", status_code=429, retry_after=60)
        with pytest.raises(ProviderError) as caught:
            answer("urgency", fails(error))
        assert caught.value is error

    def test_times_out(self) -> None:
        with pytest.raises(ProviderError) as caught:
            answer("angry", times_out())
        assert caught.value.code == "timeout"
        assert str(caught.value) == "the decision timed out (scripted failure)"
        with pytest.raises(ProviderError, match=r"^no answer in 30 s$"):
            answer("angry", times_out("no answer in 30 s"))

    def test_str(self) -> None:
        assert str(fails("rate_limit")) == "fails('rate_limit')"
        assert str(fails("rate_limit", retry_after=2)) == "fails('rate_limit', retry_after=2)"
        assert str(fails("unknown", "boom", status_code=502)) == (
            "fails('unknown', 'boom', status_code=502)"
        )
        assert str(fails(ProviderError("down", "server_error"))) == (
            "fails(ProviderError('down', code='server_error'))"
        )
        assert str(times_out()) == "times_out()"
        assert str(hangs()) == "hangs()"

    def test_an_unknown_code(self) -> None:
        with pytest.raises(ValueError, match=r"^fails\(\) needs") as caught:
            fails("overloaded")  # type: ignore[arg-type]
        assert str(caught.value) == (
            "fails() needs a ProviderError or one of the codes ['rate_limit', 'auth_error', "
            "'invalid_request', 'server_error', 'timeout', 'unknown'], got 'overloaded'"
        )

    def test_details_with_a_ready_error_are_refused(self) -> None:
        with pytest.raises(TypeError, match=r"^fails\(ProviderError\(\.\.\.\)\) takes no other"):
            fails(ProviderError("x", "unknown"), retry_after=1)


class TestAnswerMismatch:
    """A scripted answer that does not fit its question fails the test, saying why."""

    @pytest.mark.parametrize(
        ("question_id", "scripted", "message"),
        [
            (
                "intent",
                choose("refunds"),
                "answers['intent'] chooses 'refunds', but question 'intent' offers "
                "['billing', 'shipping', 'other'].",
            ),
            (
                "intent",
                choose({"refunds": 0.5, "returns": 0.5}),
                "answers['intent'] is choose({'refunds': 0.5, 'returns': 0.5}), but question "
                "'intent' does not offer ['refunds', 'returns']; it offers "
                "['billing', 'shipping', 'other'].",
            ),
            (
                "urgency",
                score(3.5),
                "answers['urgency'] is score(3.5), but question 'urgency' has levels 0..3 "
                "(4 levels).",
            ),
            (
                "urgency",
                score({"4": 1.0}),
                "answers['urgency'] is score({'4': 1.0}), but question 'urgency' has no level "
                "'4'; it has levels 0..3 (4 levels).",
            ),
            (
                "intent",
                probability(0.5),
                "answers['intent'] is probability(0.5), but question 'intent' is a choice "
                "question; script choose(...) for it.",
            ),
            (
                "urgency",
                choose("billing"),
                "answers['urgency'] is choose('billing', p=1), but question 'urgency' is a score "
                "question; script score(...) for it.",
            ),
            (
                "angry",
                score(1),
                "answers['angry'] is score(1), but question 'angry' is a boolean question; "
                "script probability(...) for it.",
            ),
        ],
    )
    def test_messages(self, question_id: str, scripted: ScriptedAnswer, message: str) -> None:
        with pytest.raises(AnswerMismatch) as caught:
            answer(question_id, scripted)
        assert str(caught.value) == message

    def test_is_an_assertion_error_not_a_provider_error(self) -> None:
        assert issubclass(AnswerMismatch, AssertionError)
        assert not issubclass(AnswerMismatch, ProviderError)


def test_every_scripted_result_passes_the_shared_validator() -> None:
    provider = FakeDecisionProvider(
        {
            "intent": choose({"billing": 0.333, "shipping": 0.333, "other": 0.333}),
            "urgency": score([0.001, 0.333, 0.333, 0.333]),
            "angry": probability(0),
        }
    )
    result = decide_sync(provider, REQUEST)
    assert isinstance(result, DecisionResult)
    assert validate_result(REQUEST, result.model_dump(by_alias=True, mode="json")) == result
