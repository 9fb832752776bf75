"""``opdecide check MODULE:FACTORY``: one row per check, a summary, and the exit status."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from pytest_opdecide.cli import main
from pytest_opdecide.conformance import run_checks

FACTORIES = """
from fake_runtimes import FakeDecisionProvider


def fake(config):
    return FakeDecisionProvider(seed=2)


class Nameless(FakeDecisionProvider):
    name = ""


def nameless(config):
    return Nameless()


NOT_A_FACTORY = "just text"


class Wordy(FakeDecisionProvider):
    name = "wordy"

    async def decide_validated(self, request):
        raise RuntimeError(
            "the gateway answered with a very long explanation of why it cannot decide anything "
            "today, which goes on well past one line of any terminal: supercalifragilistic-words"
        )


def wordy(config):
    return Wordy()
"""


@pytest.fixture
def factories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "my_factories.py").write_text(textwrap.dedent(FACTORIES))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["check", "no_such_module_xyz:factory"], "cannot import module 'no_such_module_xyz'"),
        (["check", "my_factories"], "expected MODULE:NAME, got 'my_factories'"),
        (["check", "my_factories:missing"], "module 'my_factories' has no attribute 'missing'"),
        (["check", "my_factories:NOT_A_FACTORY"], "is a str, not a provider factory"),
        (["check", "my_factories:fake", "--config", "model"], "--config takes KEY=VALUE"),
        (["check", "my_factories:fake", "--capability", "speed=11"], "unknown capability 'speed'"),
        (
            ["check", "my_factories:fake", "--capability", "max_options=many"],
            "max_options must be a whole number",
        ),
        (
            ["check", "my_factories:fake", "--capability", "probability_tolerance=lots"],
            "capability probability_tolerance must be a number, got 'lots'",
        ),
        (
            ["check", "my_factories:fake", "--capability", "call_timeout_s=-1"],
            "capability call_timeout_s must be a finite number >= 0, got '-1'",
        ),
        (
            ["check", "my_factories:fake", "--capability", "sent_models=gpt-4o"],
            "capability sent_models takes REQUESTED->SENT pairs separated by commas",
        ),
        (
            ["check", "my_factories:fake", "my_factories:NOT_A_FACTORY"],
            "my_factories:NOT_A_FACTORY is a str, not a provider factory",
        ),
        (
            ["check", "my_factories:fake", "--check-timeout", "0"],
            "--check-timeout must be a number of seconds > 0, got 0.0",
        ),
    ],
)
def test_usage_errors_exit_2_and_say_what_is_wrong(
    factories: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert captured.err.startswith("opdecide: error: ")
    assert captured.out == ""


def test_a_conforming_factory_passes_with_one_row_per_check(
    factories: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["check", "my_factories:fake", "--capability", "needs_backend=false"])
    out = capsys.readouterr().out
    assert status == 0, out
    lines = out.splitlines()
    assert lines[0] == "opdecide check my_factories:fake"
    assert any(line.split() == ["identity", "passed"] for line in lines)
    at = next(i for i, line in enumerate(lines) if line.startswith("abort_during_the_call"))
    assert lines[at].split() == ["abort_during_the_call_is_honoured", "skipped"]
    assert lines[at + 1] == (
        "    needs_backend = False: the provider makes no backend call to check"
    )
    summary = lines[-1]
    assert summary.startswith("45 checks: ")
    assert " 0 failed" in summary


def test_a_failing_factory_exits_1_with_the_failure_in_json(
    factories: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        [
            "check",
            "my_factories:nameless",
            "--capability",
            "needs_backend=false",
            "--capability",
            "property_examples=3",
            "--format",
            "json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert status == 1
    assert report["target"] == "my_factories:nameless"
    assert report["ok"] is False
    checks = {check["name"]: check for check in report["checks"]}
    assert checks["identity"]["outcome"] == "failed"
    assert checks["identity"]["detail"].startswith(
        "provider: identity: name must be a non-empty string (got '')"
    )
    assert checks["choice_answers"] == {"name": "choice_answers", "outcome": "passed", "detail": ""}
    assert report["summary"]["failed"] == 1
    assert sum(report["summary"].values()) == len(report["checks"])


def test_a_factory_that_fails_to_import_in_the_run_is_an_error(factories: Path) -> None:
    report = run_checks("my_factories_gone:fake")
    assert not report.ok
    (result,) = report.results
    assert result.outcome == "error"
    assert "my_factories_gone" in result.detail
    assert report.summary() == "1 checks: 0 passed, 0 failed, 0 skipped, 1 error"


def test_config_values_reach_the_factory(factories: Path) -> None:
    (factories / "configured.py").write_text(
        textwrap.dedent(
            """
            from fake_runtimes import FakeDecisionProvider

            def factory(config):
                assert config.options["model"] == "small", config
                assert config.api_key == "sk-test"
                return FakeDecisionProvider(model="small")
            """
        )
    )
    report = run_checks(
        "configured:factory",
        {"model": "small", "api_key": "sk-test"},
        capabilities={"request_model": "small"},
        pytest_args=["-k", "identity or choice_answers"],
    )
    assert [(r.name, r.outcome) for r in report.results] == [
        ("identity", "passed"),
        ("choice_answers", "passed"),
    ]


def test_the_text_report_wraps_messages_instead_of_cutting_them(
    factories: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        [
            "check",
            "my_factories:wordy",
            "--capability",
            "needs_backend=false",
            "--select",
            "choice_answers",
        ]
    )
    out = capsys.readouterr().out
    assert status == 1
    lines = out.splitlines()
    at = lines.index("choice_answers  failed")
    message = []
    for line in lines[at + 1 :]:
        if not line.startswith("    "):
            break
        assert len(line) <= 100, line
        message.append(line.strip())
    text = " ".join(message)
    assert text.startswith(
        "provider: error.type: decide() raised RuntimeError on a request of choice questions: "
        "the gateway answered with a very long explanation"
    )
    assert "line of any terminal: supercalifragilistic-words" in text
    assert "How to fix: catch transport, HTTP and protocol failures" in text
    assert not any(line.rstrip().endswith("...") for line in lines)


def test_several_factories_are_checked_in_one_run(
    factories: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        [
            "check",
            "my_factories:fake",
            "my_factories:nameless",
            "--capability",
            "needs_backend=false",
            "--select",
            "identity",
            "--format",
            "json",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert status == 1
    assert data["ok"] is False
    assert [report["target"] for report in data["reports"]] == [
        "my_factories:fake",
        "my_factories:nameless",
    ]
    assert [report["ok"] for report in data["reports"]] == [True, False]
    assert [check["name"] for check in data["reports"][0]["checks"]] == ["identity"]


SLOPPY = """
import asyncio

from pytest_opdecide.questions import BaseDecisionProvider, ChoiceAnswer, DecisionResult


class Sloppy(BaseDecisionProvider):
    \"\"\"Spreads 0.99 over the options (say, a rounding it does not state), slowly.\"\"\"

    name = "sloppy"

    async def decide_validated(self, request):
        await asyncio.sleep(SLEEP)
        answers = {}
        for question_id, question in request.questions.items():
            names = list(question.options)
            share = 0.99 / len(names)
            answers[question_id] = ChoiceAnswer(
                choice=names[0], probabilities=dict.fromkeys(names, share)
            )
        return DecisionResult(model="sloppy-1", answers=answers)

    async def decide(self, request):  # around the base class's own check of the sum
        return await self.decide_validated(request)


SLEEP = 0.0


def factory(config):
    return Sloppy()


def slow(config):
    global SLEEP
    SLEEP = 3.0
    return Sloppy()
"""


def test_probability_tolerance_and_call_timeout_s_reach_the_checks(factories: Path) -> None:
    (factories / "sloppy.py").write_text(textwrap.dedent(SLOPPY))
    common = {"needs_backend": "false", "supported_question_types": "choice"}
    only = ["-k", "choice_answers"]
    strict = run_checks("sloppy:factory", capabilities=common, pytest_args=only)
    assert [(r.name, r.outcome) for r in strict.results] == [("choice_answers", "failed")]
    assert "probability.sum: " in strict.results[0].detail
    loose = run_checks(
        "sloppy:factory",
        capabilities={**common, "probability_tolerance": "0.012"},
        pytest_args=only,
    )
    assert [(r.name, r.outcome) for r in loose.results] == [("choice_answers", "passed")]
    impatient = run_checks(
        "sloppy:slow",
        capabilities={**common, "probability_tolerance": "0.012", "call_timeout_s": "0.5"},
        pytest_args=only,
    )
    (result,) = impatient.results
    assert result.outcome == "failed"
    assert "did not answer a request of choice questions within 0.5 s" in result.detail


def test_capability_text_is_parsed_by_kind() -> None:
    from pytest_opdecide.conformance._runner import parse_capabilities

    assert parse_capabilities(
        {
            "probability_tolerance": "0.012",
            "call_timeout_s": "30",
            "probability_decimals": "3",
            "max_options": "none",
            "sent_models": "fast->gpt-4o-mini, ->house-default",
            "supported_question_types": "choice, boolean",
            "needs_backend": "auto",
        }
    ) == {
        "probability_tolerance": 0.012,
        "call_timeout_s": 30.0,
        "probability_decimals": 3,
        "max_options": None,
        "sent_models": {"fast": "gpt-4o-mini", "": "house-default"},
        "supported_question_types": ("choice", "boolean"),
        "needs_backend": None,
    }


def test_no_target_class_name_is_part_of_another(tmp_path: Path) -> None:
    """`--select TestConformance1` picks one target of twelve, not 1 and 10 to 11."""
    from pytest_opdecide.conformance._runner import _write_project

    targets = [f"module:factory{index}" for index in range(12)]
    classes = _write_project(tmp_path, targets, {}, {}, tmp_path / "events.jsonl")
    assert list(classes.values()) == targets
    names = list(classes)
    assert names[1] == "TestConformance01"
    assert [name for name in names if "TestConformance01" in name] == ["TestConformance01"]
    for name in names:
        assert [other for other in names if name in other] == [name]
