"""Distributions over labels: folding spellings, logprobs to probabilities, stated JSON."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_opdecide.questions._distribution import (
    DistributionError,
    check_stated,
    fold_label,
    label_distribution,
    parse_verbalized,
    sampled_distribution,
)


@pytest.mark.parametrize(
    ("token", "folded"),
    [
        ("A", "a"),
        (" A", "a"),
        ("a", "a"),
        ('"A"', "a"),
        ("'A", "a"),
        ("\u2581Yes", "yes"),
        ("\u0120no", "no"),
        ("B)", "b"),
        ("**C**", "c"),
        (" \n", ""),
        ("The", "the"),
    ],
)
def test_fold_label(token: str, folded: str) -> None:
    assert fold_label(token) == folded


def test_distribution_renormalises_over_labels_and_reports_the_mass() -> None:
    top = [("A", math.log(0.4)), ("The", math.log(0.5)), ("b", math.log(0.1))]
    result = label_distribution(top, ["A", "B"])
    assert result.probabilities == pytest.approx({"A": 0.8, "B": 0.2})
    assert result.label_mass == pytest.approx(0.5)
    assert result.absent_labels == ()
    assert result.absent_label_bound is None
    assert result.sampled_token is None


def test_a_repeated_token_counts_once() -> None:
    top = [("A", math.log(0.5)), ("A", math.log(0.4)), ("B", math.log(0.1))]
    assert label_distribution(top, ["A", "B"]).probabilities == pytest.approx(
        {"A": 5 / 6, "B": 1 / 6}
    )


def test_the_sampled_token_is_not_counted_twice() -> None:
    top = [("A", math.log(0.5)), ("B", math.log(0.5))]
    result = label_distribution(top, ["A", "B"], sampled=("A", math.log(0.5)))
    assert result.probabilities == pytest.approx({"A": 0.5, "B": 0.5})
    assert result.sampled_token == "A"


@pytest.mark.parametrize(
    ("top", "message"),
    [
        ([("A", math.nan)], "NaN"),
        ([("A", 0.5)], "at most 0"),
        ([("A", "x")], "not a number"),
        ([("A", True)], "not a number"),
        ([(3, -0.1)], "not text"),
        ([("A", math.log(0.7)), ("a ", math.log(0.7))], "more than 1"),
        ([("The", -0.1)], "no probability on any label"),
        ([("A", -9999.0), ("B", -9999.0)], "no probability on any label"),
    ],
)
def test_impossible_logprobs_are_errors(top: list[tuple[object, object]], message: str) -> None:
    with pytest.raises(DistributionError, match=message):
        label_distribution(top, ["A", "B"])  # type: ignore[arg-type]


def test_labels_must_be_distinct_once_folded() -> None:
    with pytest.raises(DistributionError, match="not distinct"):
        label_distribution([("A", -0.1)], ["A", "a"])


tokens = st.sampled_from(
    ["A", " A", "a", '"B', "B", " b", "C", "The", "yes", "", "\u2581A"]
) | st.text(max_size=3)
logprobs = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [-9999.0, 0.0, -1e-9, 1e-5]
)


@given(
    top=st.lists(st.tuples(tokens, logprobs), max_size=25),
    sampled=st.none() | st.tuples(tokens, logprobs),
)
def test_any_logprob_list_gives_a_valid_distribution_or_an_error(
    top: list[tuple[str, float]], sampled: tuple[str, float] | None
) -> None:
    try:
        result = label_distribution(top, ["A", "B", "C"], sampled=sampled)
    except DistributionError:
        return
    values = list(result.probabilities.values())
    assert list(result.probabilities) == ["A", "B", "C"]
    assert all(0.0 <= v <= 1.0 and math.isfinite(v) for v in values)
    assert math.fsum(values) == pytest.approx(1.0, abs=1e-9)
    assert 0.0 < result.label_mass <= 1.0
    assert set(result.absent_labels) <= {"A", "B", "C"}


def test_parse_verbalized_takes_the_last_object_and_folds_keys() -> None:
    text = 'First {"draft": 1}. Final answer:\n```json\n{"a": 0.25, " B": 0.75}\n```'
    stated = parse_verbalized(text, ["A", "B"])
    assert stated.stated == {"A": 0.25, "B": 0.75}
    assert stated.total == 1.0
    assert parse_verbalized('{"probabilities": {"yes": 0.6, "no": 0.4}}', ["yes", "no"]).stated == {
        "yes": 0.6,
        "no": 0.4,
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no json here", "no JSON object"),
        ('{"A": 0.5}', "missing \\['B'\\]"),
        ('{"A": 0.5, "B": 0.4, "C": 0.1}', "unknown \\['C'\\]"),
        ('{"A": true, "B": 0.5}', "between 0 and 1"),
        ('{"A": 70, "B": 30}', "between 0 and 1"),
        ('{"A": "0.5", "B": 0.5}', "between 0 and 1"),
        ('{"A": 0.5, "a": 0.5, "B": 0}', "more than once"),
        ('{"A": 0.5, "B": 0.3}', "sum to 1"),
        ('{"A": NaN, "B": 0.3}', "between 0 and 1"),
    ],
)
def test_unusable_stated_distributions(text: str, message: str) -> None:
    with pytest.raises(DistributionError, match=message):
        parse_verbalized(text, ["A", "B"])


def test_check_stated_tolerance_and_normalisation() -> None:
    stated = check_stated({"A": 0.495, "B": 0.495}, ["A", "B"], tolerance=0.02)
    assert stated.normalised() == pytest.approx({"A": 0.5, "B": 0.5})
    with pytest.raises(DistributionError):
        check_stated({"A": 0.495, "B": 0.495}, ["A", "B"], tolerance=0.001)


def test_sampled_distribution_counts_first_words() -> None:
    counts, unrecognised = sampled_distribution(["A", " b.", "A) because", "", "Maybe"], ["A", "B"])
    assert counts == {"A": 2, "B": 1}
    assert unrecognised == 2
