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
    skipped = next(line for line in lines if line.startswith("abort_during_the_call_is_honoured"))
    assert "skipped" in skipped
    assert "needs_backend = False" in skipped
    summary = lines[-1]
    assert summary.startswith("36 checks: ")
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
