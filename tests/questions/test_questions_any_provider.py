"""``decide()`` holds every provider to the spec: our base class, a duck-typed object written
from the spec's interface, a factory's product. Results are parsed into the typed models and
checked by ``validate_result``; a broken one is a ``ProviderError`` naming the rule and the
provider."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pytest_opdecide.questions import (
    BooleanAnswer,
    ChoiceAnswer,
    DecisionProviderFactory,
    DecisionResult,
    ProviderError,
    Rule,
    ThreadState,
)

QUESTIONS: dict[str, Any] = {
    "team": {
        "type": "choice",
        "instructions": "Who handles it?",
        "options": {"a": None, "b": None},
    },
    "urgent": {"type": "boolean", "instructions": "Is it urgent?"},
}
USAGE = {"promptTokens": 1, "completionTokens": 1, "totalTokens": 2}


def good() -> dict[str, Any]:
    return {
        "model": "m",
        "answers": {
            "team": {"type": "choice", "choice": "a", "probabilities": {"a": 0.8, "b": 0.2}},
            "urgent": {"type": "boolean", "probability": 0.3},
        },
        "usage": USAGE,
    }


class DuckProvider:
    """A provider written from the spec's interface, not from our base class."""

    name = "duck"
    specification_version = "1"
    kind = "decision"

    def __init__(self, result: Any) -> None:
        self.result = result

    async def decide(self, request: Any) -> Any:
        return self.result


def decide(provider: Any) -> DecisionResult:
    state = ThreadState(thread_id="t")
    options = {"provider": provider, "model": "m", "context": "ctx", "questions": QUESTIONS}
    return asyncio.run(state.decide(options))


def broken(change: Any) -> dict[str, Any]:
    result = good()
    change(result["answers"])
    return result


BROKEN = [
    pytest.param(
        broken(lambda a: a["urgent"].update(probability=1.7)),
        Rule.PROBABILITY_RANGE,
        id="probability-1.7",
    ),
    pytest.param(
        broken(lambda a: a["team"].update(probabilities={"a": 0.5, "b": 0.2})),
        Rule.PROBABILITY_SUM,
        id="sum-0.7",
    ),
    pytest.param(
        broken(lambda a: a["urgent"].update(probability=True)),
        Rule.BOOLEAN_PROBABILITY,
        id="boolean-answer",
    ),
    pytest.param(
        broken(lambda a: a.update(team={"type": "boolean", "probability": 0.5})),
        Rule.ANSWER_TYPE,
        id="boolean-answer-to-a-choice",
    ),
    pytest.param(
        broken(lambda a: a.pop("urgent")),
        Rule.ANSWERS_MISSING,
        id="missing-answer",
    ),
]


@pytest.mark.parametrize(("result", "rule"), BROKEN)
def test_a_duck_typed_providers_broken_result_is_refused(result: Any, rule: Rule) -> None:
    with pytest.raises(ProviderError) as caught:
        decide(DuckProvider(result))
    assert caught.value.code == "unknown"
    assert str(caught.value).startswith("provider 'duck' produced a result that breaks a rule: ")
    assert rule.value in str(caught.value)


@pytest.mark.parametrize(("result", "rule"), BROKEN)
def test_a_factorys_product_is_held_to_the_same_rules(result: Any, rule: Rule) -> None:
    factory = DecisionProviderFactory(lambda config: DuckProvider(result))
    with pytest.raises(ProviderError, match=rule.value.replace(".", r"\.")):
        decide(factory)


def test_a_dict_result_that_parses_is_returned_typed() -> None:
    result = decide(DuckProvider(good()))
    assert isinstance(result, DecisionResult)
    assert isinstance(result.answers["team"], ChoiceAnswer)
    assert result.answers["team"].probabilities == {"a": 0.8, "b": 0.2}
    assert isinstance(result.answers["urgent"], BooleanAnswer)
    assert result.answers["urgent"].probability == 0.3


def test_a_typed_result_is_checked_too() -> None:
    typed = DecisionResult.model_validate(good())
    assert decide(DuckProvider(typed)) is typed
    bad = DecisionResult.model_validate(broken(lambda a: a["urgent"].update(probability=1.0)))
    bad.answers["urgent"].probability = 1.7  # type: ignore[union-attr]
    with pytest.raises(ProviderError, match="probability"):
        decide(DuckProvider(bad))


@pytest.mark.parametrize("result", [None, "the answer is a", ["a"], 0.8])
def test_anything_else_is_a_provider_error(result: Any) -> None:
    with pytest.raises(ProviderError) as caught:
        decide(DuckProvider(result))
    message = str(caught.value)
    assert message.startswith("provider 'duck' produced a result that breaks a rule: result: ")
    assert Rule.RESULT_SHAPE.value in message
    assert type(result).__name__ in message


def test_a_base_class_provider_that_replaced_decide_is_checked() -> None:
    from pytest_opdecide.questions import BaseDecisionProvider

    class Sloppy(BaseDecisionProvider):
        name = "sloppy"

        async def decide(self, request: Any) -> Any:  # type: ignore[override]
            return broken(lambda a: a["urgent"].update(probability=-0.1))

        async def decide_validated(self, request: Any) -> DecisionResult:
            raise AssertionError("not reached")

    with pytest.raises(ProviderError, match="provider 'sloppy' produced a result"):
        decide(Sloppy())
