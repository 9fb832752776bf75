"""The conformance suite catches every broken provider of the gallery, naming the broken rule,
through the test class and through ``opdecide check``; its correct providers pass both ways.

The class runs the way a user's suite does: one ``DecisionProviderTests`` subclass per
provider in a pytester session. The command line runs the way a user types it: ``opdecide
check`` with the providers' factories, read back as JSON. Each runs once for the whole gallery
(a session is shared by every test of this module; the property-based check is left out of the
broken providers' runs: it catches most defects too, but shrinking each failure takes seconds,
and a separate test shows it catching defects of every kind on its own).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from faker import Faker
from hypothesis import strategies as st

from pytest_opdecide import conformance
from pytest_opdecide.cli import main
from pytest_opdecide.conformance._runner import parse_capabilities
from pytest_opdecide.questions import Rule

from . import broken_providers
from .broken_providers import BROKEN, CORRECT, HonestProvider

# pytester drops the modules an inner session imported when it ends. Imported here, the suite,
# hypothesis's strategies and Faker's locale providers stay loaded: an inner session re-importing
# half of hypothesis would mix two copies of its classes, and re-importing it all is slow.
Faker("en_US")
PRELOADED = (conformance.DecisionProviderTests, st.SearchStrategy)

# Tracebacks as Python prints them: the failures' texts hold the same messages, and pytest's own
# style parses the source file of every frame of every one of some 400 failures (a quarter of
# this file's time).
PYTEST_ARGS = ["-p", "no:cacheprovider", "--tb=native"]
if importlib.util.find_spec("pytest_asyncio") is not None:
    # Unset, pytest-asyncio warns at start-up of every inner session.
    PYTEST_ARGS += ["-o", "asyncio_default_fixture_loop_scope=function"]


@dataclass(frozen=True)
class Defect:
    """What the suite must report for one broken provider.

    Attributes:
        provider: The broken provider's class name.
        checks: Checks that must fail (or error), each with the rule its message must name.
        only: Whether no other check may fail (other cases of a parametrized check may): for
            defects that touch one concern, the report points at it and nowhere else.
        capabilities: What the provider is declared to do (as ``--capability`` text).
    """

    provider: str
    checks: dict[str, str]
    only: bool = False
    capabilities: Mapping[str, str] = field(default_factory=dict)


RESULT_RULES_FROM = list(Rule).index(Rule.RESULT_SHAPE)

AS_ASKED = "test_each_question_is_answered_from_its_own_prompt"
AS_COMPUTED = "test_probabilities_are_complete_and_not_renormalised"
IDS = "test_question_ids_and_option_names_are_kept_exactly"
LIMITS = "test_requests_at_the_declared_limits"
VERDICT = "test_boolean_is_a_probability_not_a_verdict"
PREVALIDATION = "test_unrepresentable_requests_are_rejected_before_sending"
THREAD = "test_decide_leaves_the_request_and_the_thread_as_it_found_them"

DEFECTS = (
    # distributions
    Defect("NotSummingToOne", {"test_choice_answers": "probability.sum"}),
    Defect(
        "RenormalisedAfterRounding",
        dict.fromkeys((AS_COMPUTED, AS_ASKED, IDS, LIMITS), "probability.as_computed"),
        only=True,
    ),
    Defect(
        "ForcesTheRoundedSumToOne",
        dict.fromkeys((AS_COMPUTED, AS_ASKED, IDS, LIMITS), "probability.as_computed"),
        only=True,
    ),
    Defect("OverstatesRounding", {"test_choice_answers": "probability.rounding"}),
    Defect("MissingOptionKey", {"test_choice_answers": "choice.probability_keys"}),
    Defect("ExtraOptionKey", {"test_choice_answers": "choice.probability_keys"}),
    Defect("ProbabilityAboveOne", {"test_boolean_answers": "probability.range"}),
    Defect("ProbabilityNaN", {"test_boolean_answers": "probability.range"}),
    # booleans, scores and confidence
    Defect("BooleanAsBool", {VERDICT: "boolean.probability"}),
    Defect(
        "ThresholdedBoolean",
        dict.fromkeys((VERDICT, AS_ASKED, IDS), "boolean.threshold"),
        only=True,
    ),
    Defect("ScoreIsTheArgmax", {"test_score_answers": "score.weighted_mean"}),
    Defect("ScoreAsPercentage", {"test_score_answers": "score.range"}),
    Defect("OneBasedLevels", {"test_score_answers": "score.probability_keys"}),
    Defect("LegendAsText", {"test_score_answers": "score.legend"}),
    Defect("ConfidenceAsPercent", {"test_choice_answers": "confidence.range"}),
    Defect(
        "ForgetsConfidence",
        {"test_confidence_is_reported": "confidence.reported"},
        only=True,
        capabilities={"reports_confidence": "true"},
    ),
    # answers and results
    Defect("AnswersKeyedByPosition", {"test_answers_key_every_question": "answers.missing"}),
    Defect("ExtraAnswer", {"test_answers_key_every_question": "answers.unexpected"}),
    Defect("IdsNormalised", {IDS: "answers.missing"}, only=True),
    Defect("WrongAnswerType", {"test_boolean_answers": "answer.type"}),
    Defect("ChoosesALabel", {"test_choice_answers": "choice.selection"}),
    Defect("AnswersAsList", {"test_choice_answers": "result.shape"}),
    Defect("EmptyModel", {"test_usage_and_model": "result.model"}),
    Defect("NegativeTokens", {"test_usage_and_model": "result.usage"}),
    # each question as asked
    # The score questions that look alike have other levels: a swapped score answer carries
    # the other question's legend, caught before the distributions are compared.
    Defect("SwapsAnswers", {AS_ASKED: "score.legend", VERDICT: "answer.per_question"}),
    Defect(
        "ContextOnlyOnTheFirstRequest",
        {"test_structure_reaches_the_backend_intact": "structure", AS_ASKED: "answer.per_question"},
    ),
    Defect(
        "InstructionsShifted",
        {"test_structure_reaches_the_backend_intact": "structure", AS_ASKED: "answer.per_question"},
    ),
    Defect("CriteriaSwapped", dict.fromkeys((AS_ASKED, VERDICT), "answer.per_question"), only=True),
    Defect(
        "LevelsReversed",
        dict.fromkeys((AS_ASKED, AS_COMPUTED, IDS, LIMITS), "answer.per_question"),
        only=True,
    ),
    Defect(
        "OptionsRotated", dict.fromkeys((AS_ASKED, AS_COMPUTED), "answer.per_question"), only=True
    ),
    Defect(
        "DropsOptionDescriptions",
        {"test_structure_reaches_the_backend_intact": "structure", AS_ASKED: "answer.per_question"},
    ),
    Defect("FlattenedContext", {"test_structure_reaches_the_backend_intact": "structure"}),
    Defect("FixedModel", {"test_the_requested_model_is_sent": "model.requested"}, only=True),
    Defect("ReportsRequestedModel", {"test_usage_and_model": "model.resolved"}, only=True),
    # usage
    Defect("UndercountsUsage", {"test_usage_and_model": "usage.reported"}, only=True),
    Defect("InventsUsage", {"test_usage_is_never_invented": "usage.invented"}, only=True),
    # construction, transport and credentials
    Defect("WrongKind", {"test_identity": "identity"}),
    Defect("SyncDecide", {"test_choice_answers": "identity.decide"}),
    Defect("GetModelsRaises", {"test_optional_methods": "identity.optional_methods"}, only=True),
    Defect("ConstructorIO", {"test_construction_does_no_io": "construction.io"}, only=True),
    Defect(
        "RefusesEmptyKey",
        {"test_construction_accepts_an_empty_key": "construction.empty_key"},
    ),
    Defect(
        "NeedsUndeclaredOption",
        {
            "test_construction_does_no_io": "construction.failed",
            "test_identity": "construction.failed",
        },
    ),
    Defect(
        "BypassesTransport", {"test_requests_go_through_the_transport_override": "transport.bypass"}
    ),
    Defect(
        "AnswersLocally",
        {"test_requests_go_through_the_transport_override": "transport.unused"},
        capabilities={"needs_backend": "true"},
    ),
    Defect(
        "KeyFromEnvironment",
        {"test_no_credential_is_sent_that_the_config_does_not_hold": "credentials.inherited"},
        only=True,
    ),
    # requests it cannot represent, limits and capabilities
    Defect(
        "SendsUnrepresentable",
        {
            f"{PREVALIDATION}[too_many_options]": "prevalidation",
            f"{PREVALIDATION}[one_option]": "prevalidation",
            # Its prompt holds the option name: encoding the body as UTF-8 fails.
            f"{PREVALIDATION}[lone_surrogate]": "error.type",
            f"{PREVALIDATION}[null_criteria]": "prevalidation",
            f"{PREVALIDATION}[null_criterion]": "prevalidation",
        },
        only=True,
    ),
    Defect(
        "ReplacesLoneSurrogates",
        {f"{PREVALIDATION}[lone_surrogate]": "prevalidation"},
        only=True,
    ),
    Defect("RefusesJsonContext", {"test_choice_answers": "answer.failed"}),
    Defect("SmallerThanDeclared", {LIMITS: "limits"}, only=True),
    Defect("MalformedLimit", {"test_choice_answers": "capability"}),
    # errors and abort
    Defect(
        "BareExceptions",
        {"test_backend_failures_raise_provider_errors[server_error]": "error.type"},
        only=True,
    ),
    Defect(
        "WrongErrorCodes",
        {"test_backend_failures_raise_provider_errors[rate_limit]": "error.code"},
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
    Defect(
        "ChecksAbortOnlyBefore",
        {"test_abort_during_the_call_is_honoured": "abort.during"},
        only=True,
    ),
    # the event loop and the conversation
    Defect("FireAndForget", {"test_choice_answers": "async.leftovers"}),
    Defect(
        "BlocksTheLoop",
        {AS_ASKED: "async.blocking"},
        capabilities={"call_timeout_s": "0.5"},
    ),
    Defect(
        "AppendsAnswerToContext",
        {THREAD: "conversation.untouched"},
    ),
    Defect("TouchesTheThread", {THREAD: "conversation.untouched"}, only=True),
)

BY_PROVIDER = {defect.provider: defect for defect in DEFECTS}
TESTS = Path(__file__).parents[1]


def class_attributes(capabilities: Mapping[str, str]) -> str:
    return "".join(
        f"    {key} = {value!r}\n" for key, value in parse_capabilities(capabilities).items()
    )


# ---------------------------------------------------------------- the class, once


_class_runs: dict[str, dict[str, dict[str, str]]] = {}


def run_classes(pytester: pytest.Pytester) -> dict[str, dict[str, str]]:
    """Every gallery provider under the test class, in one session: provider -> failed check
    -> its failure output (the correct providers' with the property-based check, too).

    A minute's work, done once per process: `make test` runs the suite with `--dist loadfile`,
    so that one worker does it instead of each worker doing it all again."""
    if "all" in _class_runs:
        return _class_runs["all"]
    names = [cls.__name__ for cls in (*CORRECT, *BROKEN)]
    body = "".join(
        f"\n\nclass Test{name}(DecisionProviderTests):\n"
        f"    provider_factory = {name}\n"
        + class_attributes(BY_PROVIDER[name].capabilities if name in BY_PROVIDER else {})
        for name in names
    )
    pytester.makepyfile(
        test_gallery_providers=f"from conformance.broken_providers import {', '.join(names)}\n"
        "from pytest_opdecide.conformance import DecisionProviderTests\n" + body
    )
    correct = " or ".join(f"Test{cls.__name__}" for cls in CORRECT)
    recorder = pytester.inline_run(
        *PYTEST_ARGS, str(pytester.path), "-k", f"not property_based or {correct}"
    )
    found: dict[str, dict[str, str]] = {name: {} for name in names}
    passed: dict[str, int] = dict.fromkeys(names, 0)
    for report in recorder.getreports("pytest_runtest_logreport"):
        *_, class_name, check = report.nodeid.split("::")
        name = class_name.removeprefix("Test")
        if report.failed:
            found[name][check] = found[name].get(check, "") + report.longreprtext
        elif report.passed and report.when == "call":
            passed[name] += 1
    for name in names:
        found[name]["<passed>"] = str(passed[name])
    _class_runs["all"] = found
    return found


# ---------------------------------------------------------------- the command line, once


_cli_runs: dict[str, dict[str, dict[str, Any]]] = {}


def cli(argv: list[str]) -> tuple[int, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(argv)
    return status, json.loads(out.getvalue())


def run_cli() -> dict[str, dict[str, Any]]:
    """Every gallery provider through ``opdecide check``, one run per set of declared
    capabilities: provider -> its JSON report (and the exit status)."""
    if "all" in _cli_runs:
        return _cli_runs["all"]
    groups: dict[str, list[str]] = {}
    for cls in (*CORRECT, *BROKEN):
        defect = BY_PROVIDER.get(cls.__name__)
        key = json.dumps(dict(defect.capabilities) if defect else {}, sort_keys=True)
        groups.setdefault(key, []).append(cls.__name__)
    found: dict[str, dict[str, Any]] = {}
    for key, names in groups.items():
        # Correct providers: every check. Broken ones: the checks their defect is about.
        wanted = []
        width = len(str(len(names) - 1))
        for number, name in enumerate(names):
            index = f"{number:0{width}d}"
            defect = BY_PROVIDER.get(name)
            if defect is None:
                wanted.append(f"TestConformance{index}")
                continue
            checks = sorted({check.split("[")[0] for check in defect.checks})
            wanted.append(f"(TestConformance{index} and ({' or '.join(checks)}))")
        argv = ["check", *(f"conformance.broken_providers:{n}" for n in names)]
        for capability, value in json.loads(key).items():
            argv += ["--capability", f"{capability}={value}"]
        # `opdecide check` imports MODULE:FACTORY from the working directory, as a user's would.
        with contextlib.chdir(TESTS):
            status, data = cli([*argv, "--select", " or ".join(wanted), "--format", "json"])
        reports = data.get("reports", [data])
        for name, report in zip(names, reports, strict=True):
            found[name] = {**report, "status": status}
    _cli_runs["all"] = found
    return found


# ---------------------------------------------------------------- the tests


def test_every_broken_provider_has_a_defect_and_says_what_is_broken() -> None:
    assert [defect.provider for defect in DEFECTS] == [cls.__name__ for cls in BROKEN]
    for cls in (*CORRECT, *BROKEN):
        assert issubclass(cls, HonestProvider)
        assert cls.__doc__, f"{cls.__name__} says what it does"


def test_every_rule_a_provider_can_break_has_a_broken_provider() -> None:
    caught = {rule for defect in DEFECTS for rule in defect.checks.values()}
    # Not about a question-decision provider: the guard against dropped standard checks (a
    # test class's rule, tests/conformance/test_guard.py) and the runtime suite's rules.
    provider_rules = {
        rule.value
        for rule in conformance.ConformanceRule
        if rule is not conformance.ConformanceRule.STANDARD_CHECK
        and not rule.value.startswith("runtime.")
    }
    # The result rules of validate_result; the request rules are what the prevalidation
    # cases break, all at once for SendsUnrepresentable.
    result_rules = {rule.value for rule in Rule if list(Rule).index(rule) >= RESULT_RULES_FROM}
    assert provider_rules <= caught, sorted(provider_rules - caught)
    assert result_rules <= caught, sorted(result_rules - caught)


@pytest.mark.parametrize("provider", [cls.__name__ for cls in CORRECT])
def test_a_correct_provider_passes_every_check_of_the_class(
    pytester: pytest.Pytester, provider: str
) -> None:
    found = run_classes(pytester)[provider]
    failed = {check: output for check, output in found.items() if check != "<passed>"}
    assert failed == {}
    assert int(found["<passed>"]) >= 35


@pytest.mark.parametrize("provider", [cls.__name__ for cls in CORRECT])
def test_a_correct_provider_passes_every_check_of_the_command_line(
    pytester: pytest.Pytester, provider: str
) -> None:
    report = run_cli()[provider]
    assert report["ok"], [c for c in report["checks"] if c["outcome"] in ("failed", "error")]
    assert report["summary"]["passed"] >= 35


@pytest.mark.parametrize("defect", DEFECTS, ids=lambda defect: defect.provider)
def test_the_class_catches_the_defect(pytester: pytest.Pytester, defect: Defect) -> None:
    assert hasattr(broken_providers, defect.provider)
    failed = {
        check: output
        for check, output in run_classes(pytester)[defect.provider].items()
        if check != "<passed>"
    }
    for check, rule in defect.checks.items():
        assert check in failed, f"{check} passed for {defect.provider}; failed: {sorted(failed)}"
        output = failed[check]
        assert f": {rule}: " in output, output
        assert "How to fix:" in output, output
    if defect.only:
        expected = {check.split("[")[0] for check in defect.checks}
        assert {check.split("[")[0] for check in failed} == expected


@pytest.mark.parametrize("defect", DEFECTS, ids=lambda defect: defect.provider)
def test_the_command_line_catches_the_defect(pytester: pytest.Pytester, defect: Defect) -> None:
    report = run_cli()[defect.provider]
    assert report["status"] == 1
    assert report["ok"] is False
    by_name = {check["name"]: check for check in report["checks"]}
    for check, rule in defect.checks.items():
        name = check.removeprefix("test_")
        assert name in by_name, sorted(by_name)
        assert by_name[name]["outcome"] in ("failed", "error"), by_name[name]
        assert f": {rule}: " in by_name[name]["detail"], by_name[name]["detail"]


@pytest.mark.parametrize(
    ("provider", "rule"),
    [
        ("NotSummingToOne", "probability.sum"),
        ("ScoreAsPercentage", "score.range"),
        ("AnswersKeyedByPosition", "answers.missing"),
        ("FlattenedContext", "structure"),
        ("LevelsReversed", "answer.per_question"),
    ],
)
def test_the_property_based_check_catches_defects_on_its_own(
    pytester: pytest.Pytester, provider: str, rule: str
) -> None:
    pytester.makepyfile(
        test_provider=f"""
        from conformance.broken_providers import {provider}
        from pytest_opdecide.conformance import DecisionProviderTests


        class TestProvider(DecisionProviderTests):
            provider_factory = {provider}
        """
    )
    recorder = pytester.inline_run(*PYTEST_ARGS, "-k", "property_based")
    failed = {
        report.nodeid.split("::")[-1]: report.longreprtext
        for report in recorder.getreports("pytest_runtest_logreport")
        if report.failed
    }
    output = failed["test_property_based_requests"]
    assert f": {rule}: " in output, output
    assert "request=DecisionRequest(" in output  # the smallest failing request is shown
