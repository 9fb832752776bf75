"""Calibration of decision probabilities against known outcomes: Brier, log loss, ECE.

These measure how *trustworthy* a provider's probabilities are over labelled cases; they are
reports, not correctness checks. Each function takes the true outcomes and the predicted
probabilities, in one of two forms:

* **binary**: outcomes are ``0``/``1`` (or ``False``/``True``) and each prediction is P(1), a
  float or a :class:`~pytest_opdecide.questions.BooleanAnswer`;
* **multiclass**: outcomes are keys (option names, or level indices as ``int`` or ``str``) and
  each prediction is a distribution, a mapping or a ``ChoiceAnswer`` / ``ScoreAnswer``.

Conventions, stated once:

* Binary Brier score: ``mean((p - y)**2)``, in [0, 1] (scikit-learn's ``brier_score_loss``).
* Multiclass Brier score: ``mean(sum_k (p_k - [k == y])**2)``, Brier's original sum over the
  outcomes, in [0, 2]. It is **not** halved, so a two-outcome distribution scores twice the
  binary form of the same predictions.
* Log loss: natural logarithm, probabilities clipped to ``[eps, 1 - eps]``.
* Expected calibration error: equal-width bins; binary bins P(1) and compares it with the rate
  of 1s; multiclass uses the top-label confidence (the highest probability) against whether
  that outcome happened. ``ECE = sum_b (n_b / N) * |accuracy_b - confidence_b|``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TypeAlias

from pytest_opdecide.questions._models import BooleanAnswer, ChoiceAnswer, ScoreAnswer

Outcome: TypeAlias = bool | int | str
Prediction: TypeAlias = float | BooleanAnswer | Mapping[str, float] | ChoiceAnswer | ScoreAnswer

_BINARY = "binary"
_MULTICLASS = "multiclass"


def _check_probability(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where} must be a probability, got {value!r}")
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{where} must be a probability in [0, 1], got {value!r}")
    return float(value)


def _prepare(
    outcomes: Sequence[Outcome], predictions: Sequence[Prediction]
) -> tuple[str, list[int], list[float], list[dict[str, float]], list[str]]:
    if len(outcomes) != len(predictions):
        raise ValueError(
            f"got {len(outcomes)} outcomes but {len(predictions)} predictions; pair them one to one"
        )
    if not outcomes:
        raise ValueError("calibration needs at least one labelled case")
    kinds = set()
    binary_y: list[int] = []
    binary_p: list[float] = []
    distributions: list[dict[str, float]] = []
    keys: list[str] = []
    for index, (outcome, prediction) in enumerate(zip(outcomes, predictions, strict=True)):
        where = f"prediction {index}"
        if isinstance(prediction, BooleanAnswer):
            prediction = prediction.probability
        if isinstance(prediction, ChoiceAnswer | ScoreAnswer):
            prediction = prediction.probabilities
        if isinstance(prediction, Mapping):
            kinds.add(_MULTICLASS)
            distribution = {
                str(key): _check_probability(value, f"{where}[{key!r}]")
                for key, value in prediction.items()
            }
            key = outcome if isinstance(outcome, str) else str(outcome)
            if isinstance(outcome, bool) or key not in distribution:
                raise ValueError(
                    f"outcome {index} ({outcome!r}) is not one of the predicted outcomes "
                    f"{list(distribution)}"
                )
            distributions.append(distribution)
            keys.append(key)
        else:
            kinds.add(_BINARY)
            if outcome not in (0, 1) or isinstance(outcome, str):
                raise ValueError(f"binary outcome {index} must be 0/1 or a bool, got {outcome!r}")
            binary_y.append(int(outcome))
            binary_p.append(_check_probability(prediction, where))
    if len(kinds) > 1:
        raise ValueError("mix of binary (P(1)) and multiclass (distribution) predictions")
    return kinds.pop(), binary_y, binary_p, distributions, keys


def brier_score(outcomes: Sequence[Outcome], predictions: Sequence[Prediction]) -> float:
    """Mean squared error of the probabilities (lower is better).

    Binary form ``mean((p - y)**2)`` in [0, 1]; multiclass form
    ``mean(sum_k (p_k - [k == y])**2)`` in [0, 2], not halved (see the module notes).

    Args:
        outcomes: What happened, one per case.
        predictions: The predicted P(1) or distribution, one per case.

    Returns:
        The Brier score.

    Raises:
        ValueError: Mismatched lengths, no cases, an outcome that is not predicted, a value
            that is not a probability, or binary and multiclass predictions mixed.

    Example:
        >>> round(brier_score([0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3]), 4)
        0.0375
    """
    kind, ys, ps, distributions, keys = _prepare(outcomes, predictions)
    if kind == _BINARY:
        return math.fsum((p - y) ** 2 for y, p in zip(ys, ps, strict=True)) / len(ys)
    total = math.fsum(
        math.fsum((p - (1.0 if k == key else 0.0)) ** 2 for k, p in distribution.items())
        for distribution, key in zip(distributions, keys, strict=True)
    )
    return total / len(keys)


def log_loss(
    outcomes: Sequence[Outcome], predictions: Sequence[Prediction], *, eps: float = 1e-15
) -> float:
    """Mean negative log-likelihood of what happened (natural log; lower is better).

    Args:
        outcomes: What happened, one per case.
        predictions: The predicted P(1) or distribution, one per case.
        eps: Probabilities are clipped to ``[eps, 1 - eps]`` so that a confident miss costs a
            large but finite amount.

    Returns:
        The log loss.

    Raises:
        ValueError: As for :func:`brier_score`.

    Example:
        >>> round(log_loss([0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3]), 4)
        0.1976
    """
    kind, ys, ps, distributions, keys = _prepare(outcomes, predictions)

    def clip(p: float) -> float:
        return min(max(p, eps), 1.0 - eps)

    if kind == _BINARY:
        terms = [
            -math.log(clip(p)) if y == 1 else -math.log(clip(1.0 - p))
            for y, p in zip(ys, ps, strict=True)
        ]
    else:
        terms = [
            -math.log(clip(distribution[key]))
            for distribution, key in zip(distributions, keys, strict=True)
        ]
    return math.fsum(terms) / len(terms)


def expected_calibration_error(
    outcomes: Sequence[Outcome], predictions: Sequence[Prediction], *, bins: int = 10
) -> float:
    """The gap between stated confidence and observed frequency, averaged over bins.

    Args:
        outcomes: What happened, one per case.
        predictions: The predicted P(1) or distribution, one per case.
        bins: The number of equal-width bins over [0, 1]; 1.0 falls in the last bin.

    Returns:
        The ECE, in [0, 1].

    Raises:
        ValueError: As for :func:`brier_score`, or ``bins < 1``.

    Example:
        >>> round(expected_calibration_error([0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3]), 4)
        0.175
    """
    if bins < 1:
        raise ValueError("bins must be at least 1")
    kind, ys, ps, distributions, keys = _prepare(outcomes, predictions)
    if kind == _BINARY:
        pairs = list(zip(ps, [float(y) for y in ys], strict=True))
    else:
        pairs = []
        for distribution, key in zip(distributions, keys, strict=True):
            top = max(distribution, key=lambda k: distribution[k])
            pairs.append((distribution[top], 1.0 if top == key else 0.0))
    grouped: dict[int, list[tuple[float, float]]] = {}
    for confidence, hit in pairs:
        grouped.setdefault(min(int(confidence * bins), bins - 1), []).append((confidence, hit))
    total = len(pairs)
    return math.fsum(
        len(members)
        / total
        * abs(
            math.fsum(hit for _, hit in members) / len(members)
            - math.fsum(c for c, _ in members) / len(members)
        )
        for members in grouped.values()
    )
