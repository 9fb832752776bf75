"""A provider that crashes, hangs or leaves a mess fails the checks it breaks, never passes one,
and never takes the run down: under the test class (with and without pytest-xdist) and under
``opdecide check``, which also survives a provider that ends the interpreter."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_opdecide.cli import main

from .crashing_providers import CRASHES, PROCESS_KILLERS

TESTS = Path(__file__).parents[1]
CHECKS = ("identity", "choice_answers", "decide_leaves", "no_standard_check_removed")
SELECT = " or ".join(CHECKS)

CHOICE = "choice_answers"

#: The check each crashing provider fails, the rule its message names and a bit of its text.
EXPECTED = {
    "Interrupts": (CHOICE, "error.type", "questions: the provider's own KeyboardInterrupt"),
    "InterruptsInATask": (CHOICE, "error.type", "questions: a KeyboardInterrupt in a task"),
    "Exits": (CHOICE, "error.type", "decide() raised SystemExit on a request of choice"),
    "RaisesABaseException": (CHOICE, "error.type", "raised CustomBaseError on a request"),
    "RaisesCancelledError": (CHOICE, "error.type", "decide() raised CancelledError on a request"),
    "Hangs": (CHOICE, "answer.failed", "did not answer a request of choice questions within 0.3"),
    "IgnoresCancellation": (CHOICE, "async.blocking", "when it was cancelled at its time limit"),
    "LosesATaskException": (CHOICE, "async.leftovers", "Task exception was never retrieved"),
    "LeavesATaskRunning": (CHOICE, "async.leftovers", "a task was still running"),
    "ReturnsNone": (CHOICE, "answer.failed", "decide() must return a DecisionResult"),
    "ReturnsACoroutine": (CHOICE, "answer.failed", "decide() must return a DecisionResult"),
    "InterruptsWhileBuilt": (
        CHOICE,
        "construction.failed",
        "building the provider raised KeyboardInterrupt: while being built",
    ),
    "InterruptsWhenAskedItsKind": ("identity", "identity", "KeyboardInterrupt: reading kind"),
    "FailsInAThread": (CHOICE, "async.leftovers", "RuntimeError: a thread of the provider failed"),
}


def test_every_crash_has_an_expectation() -> None:
    assert list(EXPECTED) == [cls.__name__ for cls in CRASHES]


def suite_module() -> str:
    names = [cls.__name__ for cls in CRASHES]
    classes = "".join(
        f"\n\nclass Test{name}(DecisionProviderTests):\n"
        f"    provider_factory = {name}\n"
        "    call_timeout_s = 0.3\n"
        "    property_examples = 3\n"
        for name in names
    )
    return (
        f"from conformance.crashing_providers import {', '.join(names)}\n"
        "from pytest_opdecide.conformance import DecisionProviderTests\n" + classes
    )


def outcomes_by_class(output: str) -> dict[str, dict[str, str]]:
    """Class -> check -> outcome, from ``-rA`` lines (``PASSED file::Class::test_x``)."""
    found: dict[str, dict[str, str]] = {}
    for line in output.splitlines():
        word, _, rest = line.partition(" ")
        if word not in ("PASSED", "FAILED", "ERROR") or "::" not in rest:
            continue
        *_, class_name, check = rest.split(" ")[0].split("::")
        outcome = found.setdefault(class_name.removeprefix("Test"), {})
        # A check whose teardown errors after it passed counts as an error.
        if outcome.get(check) not in ("FAILED", "ERROR"):
            outcome[check] = word
    return found


def run_suite(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    # In a process of its own, so that a crash that escaped would not take this run down too.
    pytester.makepyfile(test_crashing_providers=suite_module())
    extra = []
    if importlib.util.find_spec("pytest_asyncio") is not None:
        extra = ["-o", "asyncio_default_fixture_loop_scope=function"]
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-rA", "-k", SELECT, *extra, *args, timeout=600
    )
    return result, outcomes_by_class(result.stdout.str())


def assert_contained(result: pytest.RunResult, outcomes: dict[str, dict[str, str]]) -> None:
    output = result.stdout.str()
    # The session ran to its end: tests failed, nothing interrupted it.
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output[-3000:]
    assert "KeyboardInterrupt" not in output.splitlines()[-1]
    assert "INTERNALERROR" not in output
    assert "!!!!" not in output
    for name, (check, rule, text) in EXPECTED.items():
        checks = outcomes[name]
        assert len(checks) == len(CHECKS), (name, checks)
        assert checks[f"test_{check}"] in ("FAILED", "ERROR"), (name, checks)
        assert checks["test_no_standard_check_removed"] == "PASSED", (name, checks)
        assert f": {rule}: " in output, (name, rule)
        assert text in output, (name, text)


@pytest.fixture
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """``conformance.crashing_providers`` importable in the subprocess, as in this one."""
    monkeypatch.setenv("PYTHONPATH", str(TESTS))


@pytest.mark.usefixtures("importable")
def test_the_class_contains_every_crash(pytester: pytest.Pytester) -> None:
    result, outcomes = run_suite(pytester)
    assert_contained(result, outcomes)


@pytest.mark.usefixtures("importable")
def test_the_class_contains_every_crash_under_xdist(pytester: pytest.Pytester) -> None:
    result, outcomes = run_suite(pytester, "-n", "2")
    assert_contained(result, outcomes)


def check(argv: list[str]) -> tuple[int, Any]:
    out = io.StringIO()
    with contextlib.chdir(TESTS), contextlib.redirect_stdout(out):
        status = main(argv)
    return status, json.loads(out.getvalue())


def test_the_command_line_contains_every_crash_and_reports_how_it_ended() -> None:
    targets = [
        f"conformance.crashing_providers:{cls.__name__}" for cls in (*CRASHES, *PROCESS_KILLERS)
    ]
    status, data = check(
        [
            "check",
            *targets,
            "--capability",
            "call_timeout_s=0.3",
            "--select",
            SELECT,
            "--format",
            "json",
        ]
    )
    assert status == 1
    reports = {report["target"].split(":")[1]: report for report in data["reports"]}
    for name, (name_of_check, rule, text) in EXPECTED.items():
        by_check = {c["name"]: c for c in reports[name]["checks"]}
        assert len(by_check) == len(CHECKS), (name, sorted(by_check))
        found = by_check[name_of_check]
        assert found["outcome"] in ("failed", "error"), found
        assert f": {rule}: " in found["detail"], found
        assert text in found["detail"], found
        assert by_check["no_standard_check_removed"]["outcome"] == "passed"
    # The interpreter died: that check is an error saying how, and the run went on.
    exited = {c["name"]: c for c in reports["ExitsTheProcess"]["checks"]}
    assert exited["choice_answers"]["outcome"] == "error"
    assert exited["choice_answers"]["detail"].startswith(
        "the interpreter exited with status 7 during this check (os._exit, a crash in native "
        "code, or an internal error of pytest)"
    )
    assert exited["no_standard_check_removed"]["outcome"] == "passed"
    killed = {c["name"]: c for c in reports["KillsTheProcess"]["checks"]}
    assert killed["choice_answers"]["outcome"] == "error"
    assert killed["choice_answers"]["detail"].startswith(
        "the interpreter was killed by SIGKILL during this check"
    )
    assert len(killed) == len(CHECKS)


def test_a_check_that_hangs_past_its_limit_is_stopped(tmp_path: Path) -> None:
    (tmp_path / "stuck.py").write_text(
        "import time\n\n"
        "def factory(config):\n"
        "    time.sleep(3600)  # never returns: no time limit of the check itself ends it\n"
    )
    out = io.StringIO()
    with contextlib.chdir(tmp_path), contextlib.redirect_stdout(out):
        status = main(
            [
                "check",
                "stuck:factory",
                "--check-timeout",
                "3",
                "--capability",
                "call_timeout_s=3600",
                "--select",
                "construction_does_no_io or no_standard_check_removed",
                "--format",
                "json",
            ]
        )
    report = json.loads(out.getvalue())
    assert status == 1
    by_check = {c["name"]: c for c in report["checks"]}
    assert by_check["construction_does_no_io"] == {
        "name": "construction_does_no_io",
        "outcome": "error",
        "detail": "the check did not finish within 3 s and was stopped (a hang the check's own "
        "time limits could not end)",
    }
    assert by_check["no_standard_check_removed"]["outcome"] == "passed"
