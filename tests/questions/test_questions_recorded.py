"""The token-probability provider against recordings of the local real model, replayed offline.

The cassettes in ``cassettes/test_questions_recorded/`` were recorded from SmolLM2-135M behind
llama-cpp-python's server (``scripts/local-model``), asking questions of the committed label-mass
set (``benchmarks/data/label_mass_questions.json``). They pin how the provider reads a real
server's replies: its tokenize endpoint, its log-probabilities and the label mass. Refresh them::

    scripts/local-model start
    OPDECIDE_LIVE_URL=$(scripts/local-model url) .venv/bin/python -m pytest \\
        tests/questions/test_questions_recorded.py --opdecide-record=rewrite

The model is weak: the tests assert shapes and invariants, never that an answer is right.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from pytest_opdecide.questions import DecisionRequest, OpenAICompatibleDecisionProvider

QUESTION_SET = Path(__file__).parents[2] / "benchmarks" / "data" / "label_mass_questions.json"
PICKED = ("support-route", "triage-pain", "security-phishing")


def request_for(*ids: str) -> DecisionRequest:
    """One request asking the named questions of the set, each about its own context."""
    entries = {e["id"]: e for e in json.loads(QUESTION_SET.read_text())["questions"]}
    (first, *_) = ids
    return DecisionRequest.model_validate(
        {
            "model": "",
            "context": entries[first]["context"],
            "questions": {name: entries[name]["question"] for name in ids},
        }
    )


def question_meta(result: Any, question: str) -> dict[str, Any]:
    meta: dict[str, Any] = result.metadata["questions"][question]
    return meta


@pytest.mark.opdecide(cassette=True)
async def test_labels_biased_through_the_servers_tokenizer(
    decision_provider: OpenAICompatibleDecisionProvider,
) -> None:
    decision_provider.tokenizer = "auto"
    result = await decision_provider.decide(request_for(*PICKED))

    for question in PICKED:
        meta = question_meta(result, question)
        assert meta["method"] == "logprobs"
        assert meta["examples"] == 3
        assert meta["logit_bias"] == 5.0
        assert meta["label_tokens"]["source"] == "server /extras/tokenize"
        labels = list(meta["labels"])
        assert meta["sampled_token"].strip().casefold() in {label.casefold() for label in labels}
        assert 0.5 < meta["label_mass"] <= 1.0  # a fraction of 0.1-0.7 before examples
        assert meta["renormalized"] is (meta["label_mass"] < 1.0)
    # SmolLM2 writes every letter and yes/no with and without a leading space as one token;
    # a digit with a space is two, so only the bare digit is biased.
    route = question_meta(result, "support-route")["label_tokens"]["ids"]
    assert set(route) == {"A", " A", "B", " B", "C", " C"}
    pain = question_meta(result, "triage-pain")["label_tokens"]["ids"]
    assert set(pain) == {"0", "1", "2", "3", "4"}
    assert "multi_token_labels" not in question_meta(result, "triage-pain")["label_tokens"]

    answer = result.choice("support-route")
    assert set(answer.probabilities) == {"billing", "shipping", "tech"}
    assert math.fsum(answer.probabilities.values()) == pytest.approx(1.0)


@pytest.mark.opdecide(cassette=True)
async def test_without_a_tokenizer_no_bias_is_sent(
    decision_provider: OpenAICompatibleDecisionProvider,
) -> None:
    result = await decision_provider.decide(request_for("cooking-vegan"))
    meta = question_meta(result, "cooking-vegan")
    assert meta["logit_bias"] is None
    assert meta["label_tokens"] == {"source": "off"}
    assert 0.5 < meta["label_mass"] <= 1.0
    assert 0.0 <= result.boolean("cooking-vegan").probability <= 1.0
