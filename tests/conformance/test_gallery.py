"""The conformance suite catches every broken provider of the gallery, naming the defect.

Each broken provider runs the ``DecisionProviderTests`` suite in a pytester session, as a user's
suite would; the test asserts which checks fail and that each failure message names the broken
rule. The honest provider, which every broken one derives from, passes the whole suite: the
failures come from the defects, not from the base.

The per-defect runs leave out the property-based check (it catches most defects too, but
shrinking each failure to the smallest request takes seconds per provider); a separate test
shows it catching defects of every kind on its own.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

import pytest
from faker import Faker
from hypothesis import strategies as st

from pytest_opdecide import conformance

from . import broken_providers
from .broken_providers import GALLERY, HonestProvider

# pytester drops the modules an inner session imported when it ends. Imported here, the suite,
# hypothesis's strategies and Faker's locale providers stay loaded: an inner session re-importing
# half of hypothesis would mix two copies of its classes, and re-importing it all is slow.
Faker("en_US")
PRELOADED = (conformance.DecisionProviderTests, st.SearchStrategy)

PYTEST_ARGS = ["-p", "no:cacheprovider"]
if importlib.util.find_spec("pytest_asyncio") is not None:
    # Unset, pytest-asyncio warns at start-up of every inner session.
    PYTEST_ARGS += ["-o", "asyncio_default_fixture_loop_scope=function"]


@dataclass(frozen=True)
class Defect:
    """What the suite must report for one broken provider.

    Attributes:
        provider: The broken provider's class name.
        checks: Checks that must fail, each with the rule its message must name.
        only: Whether no other check may fail (other cases of a parametrized check may): for
            defects that touch one concern, the report points at it and nowhere else.
    """

    provider: str
    checks: dict[str, str]
    only: bool = False


DEFECTS = (
    Defect("NotSummingToOne", {"test_choice_answers": "probability.sum"}),
    Defect(
        "RenormalisedAfterRounding",
        {"test_probabilities_are_complete_and_not_renormalised": "probability.as_computed"},
        only=True,
    ),
    Defect("MissingOptionKey", {"test_choice_answers": "choice.probability_keys"}),
    Defect("ExtraOptionKey", {"test_choice_answers": "choice.probability_keys"}),
    Defect("ProbabilityAboveOne", {"test_boolean_answers": "probability.range"}),
    Defect("ProbabilityNaN", {"test_boolean_answers": "probability.range"}),
    Defect("BooleanAsBool", {"test_boolean_is_a_probability_not_a_verdict": "boolean.probability"}),
    Defect(
        "ThresholdedBoolean",
        {"test_boolean_is_a_probability_not_a_verdict": "boolean.threshold"},
        only=True,
    ),
    Defect("ScoreIsTheArgmax", {"test_score_answers": "score.weighted_mean"}),
    Defect("ScoreAsPercentage", {"test_score_answers": "score.range"}),
    Defect("AnswersKeyedByPosition", {"test_answers_key_every_question": "answers.missing"}),
    Defect("WrongAnswerType", {"test_boolean_answers": "answer.type"}),
    Defect("ConstructorIO", {"test_construction_does_no_io": "construction.io"}, only=True),
    Defect(
        "BypassesTransport", {"test_requests_go_through_the_transport_override": "transport.bypass"}
    ),
    Defect(
        "FlattenedContext", {"test_structure_reaches_the_backend_intact": "structure"}, only=True
    ),
    Defect(
        "SendsUnrepresentable",
        {
            "test_unrepresentable_requests_are_rejected_before_sending[too_many_options]": (
                "prevalidation"
            ),
            "test_unrepresentable_requests_are_rejected_before_sending[one_option]": (
                "prevalidation"
            ),
        },
        only=True,
    ),
    Defect(
        "BareExceptions",
        {"test_backend_failures_raise_provider_errors[server_error]": "error.type"},
        only=True,
    ),
    Defect(
        "IgnoresAbort",
        {
            "test_pre_aborted_signal_rejects_without_a_call": "abort.before",
            "test_abort_during_the_call_is_honoured": "abort.during",
        },
        only=True,
    ),
)


def run_suite(pytester: pytest.Pytester, provider: str, *args: str) -> pytest.HookRecorder:
    pytester.makepyfile(
        test_provider=f"""
        from conformance.broken_providers import {provider}
        from pytest_opdecide.conformance import DecisionProviderTests


        class TestProvider(DecisionProviderTests):
            provider_factory = {provider}
        """
    )
    return pytester.inline_run(*PYTEST_ARGS, *args)


def failures(recorder: pytest.HookRecorder) -> dict[str, str]:
    """Failed check -> its failure output."""
    return {
        report.nodeid.split("::")[-1]: report.longreprtext
        for report in recorder.getreports("pytest_runtest_logreport")
        if report.failed
    }


def test_every_defect_class_of_the_issue_has_a_broken_provider() -> None:
    assert [defect.provider for defect in DEFECTS] == [cls.__name__ for cls in GALLERY]
    for cls in GALLERY:
        assert issubclass(cls, HonestProvider)
        assert cls.__doc__, f"{cls.__name__} says what is broken"


def test_the_honest_provider_passes_every_check(pytester: pytest.Pytester) -> None:
    recorder = run_suite(pytester, "HonestProvider")
    assert failures(recorder) == {}
    passed, _, failed = recorder.listoutcomes()
    assert len(passed) >= 25
    assert not failed


@pytest.mark.parametrize("defect", DEFECTS, ids=lambda defect: defect.provider)
def test_the_suite_catches_the_defect(pytester: pytest.Pytester, defect: Defect) -> None:
    assert hasattr(broken_providers, defect.provider)
    failed = failures(run_suite(pytester, defect.provider, "-k", "not property_based"))
    for check, rule in defect.checks.items():
        assert check in failed, f"{check} passed for {defect.provider}; failed: {sorted(failed)}"
        output = failed[check]
        assert f": {rule}: " in output, output
        assert "How to fix:" in output, output
    if defect.only:
        expected = {check.split("[")[0] for check in defect.checks}
        assert {check.split("[")[0] for check in failed} == expected


@pytest.mark.parametrize(
    ("provider", "rule"),
    [
        ("NotSummingToOne", "probability.sum"),
        ("ScoreAsPercentage", "score.range"),
        ("AnswersKeyedByPosition", "answers.missing"),
        ("FlattenedContext", "structure"),
    ],
)
def test_the_property_based_check_catches_defects_on_its_own(
    pytester: pytest.Pytester, provider: str, rule: str
) -> None:
    failed = failures(run_suite(pytester, provider, "-k", "property_based"))
    output = failed["test_property_based_requests"]
    assert f": {rule}: " in output, output
    assert "request=DecisionRequest(" in output  # the smallest failing request is shown
