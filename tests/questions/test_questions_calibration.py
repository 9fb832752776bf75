"""Calibration helpers, checked against values computed by hand.

For y = [0, 1, 1, 0] and P(1) = [0.1, 0.9, 0.8, 0.3]:

* Brier = (0.1² + 0.1² + 0.2² + 0.3²) / 4 = (0.01 + 0.01 + 0.04 + 0.09) / 4 = 0.0375
  (scikit-learn's ``brier_score_loss`` gives 0.0375 for these inputs);
* log loss = -(ln 0.9 + ln 0.9 + ln 0.8 + ln 0.7) / 4 = 0.197635 (scikit-learn: 0.19763...);
* ECE (10 bins, one case per bin) = (|0 - 0.1| + |1 - 0.9| + |1 - 0.8| + |0 - 0.3|) / 4 = 0.175.
"""

from __future__ import annotations

import math

import pytest

from pytest_opdecide.questions import (
    BooleanAnswer,
    ChoiceAnswer,
    ScoreAnswer,
    brier_score,
    expected_calibration_error,
    log_loss,
)

Y = [0, 1, 1, 0]
P = [0.1, 0.9, 0.8, 0.3]


def test_binary_golden_values() -> None:
    assert brier_score(Y, P) == pytest.approx(0.0375, abs=1e-12)
    assert log_loss(Y, P) == pytest.approx(-(2 * math.log(0.9) + math.log(0.8) + math.log(0.7)) / 4)
    assert round(log_loss(Y, P), 4) == 0.1976
    assert expected_calibration_error(Y, P) == pytest.approx(0.175)


def test_booleans_and_boolean_answers_are_accepted() -> None:
    answers = [BooleanAnswer(probability=p) for p in P]
    assert brier_score([False, True, True, False], answers) == pytest.approx(0.0375)


def test_multiclass_brier_sums_over_outcomes_and_is_not_halved() -> None:
    distributions = [{"0": 1 - p, "1": p} for p in P]
    assert brier_score(Y, distributions) == pytest.approx(2 * 0.0375)
    assert log_loss(Y, distributions) == pytest.approx(log_loss(Y, P))


def test_multiclass_with_choice_and_score_answers() -> None:
    answers = [
        ChoiceAnswer(choice="a", probabilities={"a": 0.7, "b": 0.2, "c": 0.1}),
        ChoiceAnswer(choice="b", probabilities={"a": 0.1, "b": 0.8, "c": 0.1}),
    ]
    # case 1 (a happened): 0.3² + 0.2² + 0.1² = 0.14; case 2 (c): 0.1² + 0.8² + 0.9² = 1.46
    assert brier_score(["a", "c"], answers) == pytest.approx((0.14 + 1.46) / 2)
    assert log_loss(["a", "c"], answers) == pytest.approx(-(math.log(0.7) + math.log(0.1)) / 2)
    # top-label confidences 0.7 (right) and 0.8 (wrong), in bins 7 and 8
    assert expected_calibration_error(["a", "c"], answers) == pytest.approx((0.3 + 0.8) / 2)
    scores = [
        ScoreAnswer(score=1.0, probabilities={"0": 0.0, "1": 1.0}, legend={"0": "lo", "1": "hi"})
    ]
    assert brier_score([1], scores) == 0.0


def test_perfect_and_worst_predictions() -> None:
    assert brier_score([0, 1], [0.0, 1.0]) == 0.0
    assert brier_score([0, 1], [1.0, 0.0]) == 1.0
    assert expected_calibration_error([0, 1], [0.0, 1.0]) == 0.0
    assert log_loss([1], [0.0]) == pytest.approx(-math.log(1e-15))


def test_bins_group_cases() -> None:
    # both in the top bin: mean confidence 0.95, hit rate 0.5
    assert expected_calibration_error([1, 0], [0.9, 1.0]) == pytest.approx(0.45)
    assert expected_calibration_error([1, 0], [0.9, 1.0], bins=1) == pytest.approx(0.45)
    assert expected_calibration_error([1, 0], [0.2, 0.8], bins=1) == pytest.approx(0.0)


@pytest.mark.parametrize(
    ("outcomes", "predictions", "message"),
    [
        ([0, 1], [0.5], "2 outcomes but 1 predictions"),
        ([], [], "at least one"),
        ([2], [0.5], "0/1"),
        ([1], [1.5], "in \\[0, 1\\]"),
        ([1], [True], "must be a probability"),
        ([1, "a"], [0.5, {"a": 1.0}], "mix"),
        (["z"], [{"a": 1.0}], "not one of the predicted outcomes"),
        (["a"], [{"a": math.nan}], "in \\[0, 1\\]"),
    ],
)
def test_bad_inputs_are_explained(
    outcomes: list[object], predictions: list[object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        brier_score(outcomes, predictions)  # type: ignore[arg-type]


def test_bins_must_be_positive() -> None:
    with pytest.raises(ValueError, match="bins"):
        expected_calibration_error([1], [0.5], bins=0)
