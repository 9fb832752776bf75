"""Probability distributions over answer labels, from token log-probabilities or from text.

Token probabilities (the method of choice):

* the sampled token and the ``top_logprobs`` list of the first generated token are read;
* spelling variants of a label are folded together: ``A``, `` A``, ``a``, ``"A"`` all count
  for label ``A`` (surrounding whitespace, quotes, punctuation, letter case and tokenizer word
  markers are ignored);
* the sampled token is added when the top list lacks it; ``-9999`` (the value some servers use
  for "minus infinity", since JSON has none) counts as probability zero;
* the distribution is renormalised over the labels only; the *label mass* (the probability the
  model put on any label at all) and the labels missing from the list are reported.

Verbalized distributions (the fallback when a server gives no token probabilities): the model
writes a JSON object ``{"A": 0.7, "B": 0.3}``, which is checked strictly.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pytest_opdecide.questions._models import (
    BooleanAnswer,
    ChoiceAnswer,
    ChoiceQuestion,
    DecisionAnswer,
    DecisionQuestion,
    ScoreAnswer,
    ScoreQuestion,
)
from pytest_opdecide.questions._prompt import QuestionPrompt

ZERO_PROBABILITY_LOGPROB: Final = -9999.0
"""Log-probabilities at or below this value mean probability zero."""

_MAX_LISTED_MASS: Final = 1.001  # the listed tokens' probabilities cannot sum above 1 (+ rounding)
_MAX_LOGPROB: Final = 1e-4  # a log-probability is <= 0; allow server rounding just above it
_WORD_MARKERS: Final = "\u2581\u0120"  # SentencePiece "▁" and byte-level BPE "Ġ" word starts
_QUOTES: Final = "\"'`"
_PUNCTUATION: Final = ".,:;!?()[]*"


class DistributionError(ValueError):
    """Log-probabilities or a verbalized distribution that cannot give a valid distribution."""


def fold_label(text: str) -> str:
    """Fold a token or key to the form labels are compared in.

    Args:
        text: A token such as ``' A'``, ``'"yes'``, ``'▁No'`` or ``'B)'``.

    Returns:
        The text without surrounding whitespace, word markers, quotes and punctuation, in lower
        case.

    Example:
        >>> [fold_label(t) for t in ["A", " A", "a", '"A"', "\u2581Yes"]]
        ['a', 'a', 'a', 'a', 'yes']
    """
    folded = text.strip().strip(_WORD_MARKERS).strip(_QUOTES + _PUNCTUATION + " \t\n")
    return folded.casefold()


@dataclass(frozen=True)
class LabelDistribution:
    """A distribution over labels computed from token log-probabilities.

    Attributes:
        probabilities: Label -> probability, renormalised over the labels, in label order.
        label_mass: The total probability the model put on tokens that spell a label (before
            renormalisation). Low values mean the model mostly wanted to say something else.
        absent_labels: Labels no listed token spells; their probability is taken as zero.
        absent_label_bound: The lowest listed token probability: an absent label's true
            probability is at most this. ``None`` when no label is absent.
        sampled_token: The token the server actually generated, if reported.
    """

    probabilities: dict[str, float]
    label_mass: float
    absent_labels: tuple[str, ...]
    absent_label_bound: float | None
    sampled_token: str | None


def _check_logprob(token: object, logprob: object) -> float:
    if not isinstance(token, str):
        raise DistributionError(f"token {token!r} is not text")
    if isinstance(logprob, bool) or not isinstance(logprob, int | float):
        raise DistributionError(f"the log-probability of {token!r} is not a number: {logprob!r}")
    value = float(logprob)
    if math.isnan(value):
        raise DistributionError(f"the log-probability of {token!r} is NaN")
    if value > _MAX_LOGPROB:
        raise DistributionError(
            f"the log-probability of {token!r} is {value!r}; log-probabilities are at most 0"
        )
    return value


def _probability(logprob: float) -> float:
    if logprob <= ZERO_PROBABILITY_LOGPROB:
        return 0.0
    return math.exp(min(logprob, 0.0))


def label_distribution(
    top_logprobs: Sequence[tuple[str, float]],
    labels: Sequence[str],
    *,
    sampled: tuple[str, float] | None = None,
) -> LabelDistribution:
    """Turn the top log-probabilities of one generated token into a distribution over labels.

    Args:
        top_logprobs: ``(token, logprob)`` pairs as the server listed them. A token listed
            twice keeps its highest log-probability.
        labels: The answer labels (``"A"``, ``"B"``... or ``"yes"``, ``"no"``), distinct once
            folded.
        sampled: The generated ``(token, logprob)``, added when the list lacks it.

    Returns:
        The distribution, with the label mass and the absent labels.

    Raises:
        DistributionError: A token is not text, a log-probability is not a number, is NaN or
            positive, the listed probabilities sum above 1, or no listed token spells a label
            (label mass zero: there is nothing to renormalise).
    """
    folded_labels = {fold_label(label): label for label in labels}
    if len(folded_labels) != len(labels):
        raise DistributionError(f"labels {list(labels)} are not distinct once folded")
    listed: dict[str, float] = {}
    for token, logprob in top_logprobs:
        value = _check_logprob(token, logprob)
        listed[token] = max(value, listed.get(token, -math.inf))
    if sampled is not None:
        token, logprob = sampled
        value = _check_logprob(token, logprob)
        listed.setdefault(token, value)
    probabilities = {token: _probability(logprob) for token, logprob in listed.items()}
    listed_mass = math.fsum(probabilities.values())
    if listed_mass > _MAX_LISTED_MASS:
        raise DistributionError(
            f"the listed tokens' probabilities sum to {listed_mass:.6f}, more than 1"
        )
    mass = dict.fromkeys(labels, 0.0)
    spelled: set[str] = set()
    for token, probability in probabilities.items():
        label = folded_labels.get(fold_label(token))
        if label is not None:
            mass[label] += probability
            spelled.add(label)
    label_mass = math.fsum(mass.values())
    if label_mass <= 0.0:
        shown = sorted(listed.items(), key=lambda item: -item[1])[:5]
        raise DistributionError(
            f"the model put no probability on any label {list(labels)}; its top tokens were {shown}"
        )
    absent = tuple(label for label in labels if label not in spelled)
    positive = [p for p in probabilities.values() if p > 0.0]
    return LabelDistribution(
        probabilities={label: mass[label] / label_mass for label in labels},
        label_mass=min(label_mass, 1.0),
        absent_labels=absent,
        absent_label_bound=min(positive) if absent and positive else None,
        sampled_token=None if sampled is None else sampled[0],
    )


# ---------------------------------------------------------------- verbalized distributions


@dataclass(frozen=True)
class VerbalizedDistribution:
    """A distribution a model wrote down.

    Attributes:
        stated: Label -> the probability as the model wrote it.
        total: The sum of the stated probabilities.
    """

    stated: dict[str, float]
    total: float

    def normalised(self) -> dict[str, float]:
        """The stated probabilities divided by their total (a no-op when it is exactly 1)."""
        return {label: value / self.total for label, value in self.stated.items()}


def _last_json_object(text: str) -> dict[str, object] | None:
    decoder = json.JSONDecoder()
    found: dict[str, object] | None = None
    start = text.find("{")
    while start != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            found = value
        start = text.find("{", end)
    return found


def check_stated(
    data: Mapping[str, object], labels: Sequence[str], *, tolerance: float = 0.02
) -> VerbalizedDistribution:
    """Check a distribution a model stated as label -> probability.

    Keys are folded like tokens (``"a"`` and ``" A"`` mean ``A``).

    Args:
        data: The stated object.
        labels: The labels the object must have, exactly.
        tolerance: How far from 1 the sum may be.

    Returns:
        The stated distribution, in label order.

    Raises:
        DistributionError: Missing, unknown or repeated labels; a value that is not a number in
            [0, 1]; or a sum further than ``tolerance`` from 1. The message says what to fix,
            so it can be sent back to the model.
    """
    folded_labels = {fold_label(label): label for label in labels}
    stated: dict[str, float] = {}
    unknown = []
    for key, value in data.items():
        label = folded_labels.get(fold_label(key))
        if label is None:
            unknown.append(key)
            continue
        if label in stated:
            raise DistributionError(f"the label {label!r} appears more than once")
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or not 0.0 <= value <= 1.0
        ):
            raise DistributionError(
                f"the probability of {label!r} must be a number between 0 and 1, got {value!r}"
            )
        stated[label] = float(value)
    missing = [label for label in labels if label not in stated]
    if unknown or missing:
        raise DistributionError(
            f"use exactly the keys {list(labels)}; missing {missing}, unknown {unknown}"
        )
    total = math.fsum(stated.values())
    if abs(total - 1.0) > tolerance:
        raise DistributionError(f"the probabilities must sum to 1, they sum to {total:g}")
    return VerbalizedDistribution({label: stated[label] for label in labels}, total)


def parse_verbalized(
    text: str, labels: Sequence[str], *, tolerance: float = 0.02
) -> VerbalizedDistribution:
    """Read a distribution the model wrote as a JSON object in its reply.

    The last JSON object of ``text`` is used (code fences and prose around it are ignored); a
    single wrapper key (``{"probabilities": {...}}``) is unwrapped; then :func:`check_stated`.

    Args:
        text: The model's reply.
        labels: The labels the object must have, exactly.
        tolerance: How far from 1 the sum may be.

    Returns:
        The stated distribution.

    Raises:
        DistributionError: No JSON object, or what :func:`check_stated` raises.
    """
    data = _last_json_object(text)
    if data is None:
        raise DistributionError("the reply contains no JSON object")
    if len(data) == 1:
        (only,) = data.values()
        if isinstance(only, Mapping):
            data = dict(only)
    return check_stated(data, labels, tolerance=tolerance)


def sampled_distribution(
    replies: Sequence[str], labels: Sequence[str]
) -> tuple[dict[str, int], int]:
    """Count how often each label was answered in independent samples.

    Args:
        replies: The texts of the sampled replies.
        labels: The answer labels.

    Returns:
        Label -> count (in label order), and the number of replies that spelled no label.
    """
    folded_labels = {fold_label(label): label for label in labels}
    counts = dict.fromkeys(labels, 0)
    unrecognised = 0
    for reply in replies:
        words = reply.split()
        label = folded_labels.get(fold_label(words[0])) if words else None
        if label is None:
            unrecognised += 1
        else:
            counts[label] += 1
    return counts, unrecognised


def answer_from_labels(
    question: DecisionQuestion, prompt: QuestionPrompt, by_label: Mapping[str, float]
) -> DecisionAnswer:
    """Build the answer to ``question`` from a distribution over its prompt's labels.

    Choice: the most probable option (the first of equal ones) and every option's probability.
    Score: ``sum(i * p_i)``, every level's probability and the legend of levels. Boolean: the
    probability of ``yes``, i.e. ``p_yes / (p_yes + p_no)`` for a distribution over the two.

    Args:
        question: The question.
        prompt: Its rendered prompt (labels and outcomes).
        by_label: Label -> probability.

    Returns:
        The answer.
    """
    probabilities = {
        outcome: by_label[label]
        for label, outcome in zip(prompt.labels, prompt.outcomes, strict=True)
    }
    if isinstance(question, ChoiceQuestion):
        best = max(probabilities, key=lambda name: probabilities[name])
        return ChoiceAnswer(choice=best, probabilities=probabilities)
    if isinstance(question, ScoreQuestion):
        return ScoreAnswer(
            score=math.fsum(int(index) * p for index, p in probabilities.items()),
            probabilities=probabilities,
            legend={str(index): level for index, level in enumerate(question.levels)},
        )
    return BooleanAnswer(probability=probabilities["true"])
