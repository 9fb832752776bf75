"""``--opdecide-runs``: live tests run N times, judged by their pass rate, reported.

Offline, with seeded fakes that pick at random standing in for the live model (the
``pytest_opdecide_runtime`` and ``pytest_opdecide_decision_provider`` hooks supply them, each
seeded by the run's node id). What every run picks is known in advance by asking the same fakes
here, so the counts, intervals and reports are checked against it.
"""

from __future__ import annotations

import html
import json
import zlib
from collections import Counter
from typing import Any

import pytest

from fake_runtimes import FakeDecisionProvider, SeededRuntime
from pytest_opdecide import decision
from pytest_opdecide.plugin._live_report import CHARTS_HINT, render_html
from pytest_opdecide.plugin._pass_rates import wilson_interval

RUNS = 10
MENU = {"refund": "REFUND", "close": "CLOSE", "escalate": "ESCALATE"}
QUESTIONS = {
    "refund": {"type": "boolean", "instructions": "Refund?"},
    "route": {
        "type": "choice",
        "instructions": "Team?",
        "options": {"billing": None, "shipping": None},
    },
}

CONFTEST = """
import zlib

from fake_runtimes import FakeDecisionProvider, SeededRuntime


def seed(request):
    return zlib.crc32(request.node.nodeid.encode())


def pytest_opdecide_runtime(request, settings):
    return SeededRuntime(seed=seed(request))


def pytest_opdecide_decision_provider(request, settings):
    return FakeDecisionProvider(seed=seed(request))
"""

SUITE = f"""
import pytest
from pytest_opdecide import decision

MENU = {MENU!r}
QUESTIONS = {QUESTIONS!r}


@pytest.mark.opdecide(cassette=True, min_pass_rate=0.3)
def test_route(runtime):
    assert decision.make("What next?", MENU) == "REFUND"


@pytest.mark.opdecide(cassette=True, expected={{"refund": True, "route": "billing"}})
def test_questions(decision_provider):
    result = decision_provider.decide_sync(
        {{"model": "m", "context": "Charged twice.", "questions": QUESTIONS}}
    )
    assert result.boolean("refund").probability > 0.2


def test_offline(opdecide_run):
    assert (opdecide_run.index, opdecide_run.count) == (0, 1)
"""


def seed(nodeid: str) -> int:
    return zlib.crc32(nodeid.encode())


def route_picks() -> list[str]:
    """What ``test_route`` picks in each run: asked of the same seeded fake."""
    picks = []
    for run in range(1, RUNS + 1):
        runtime = SeededRuntime(seed=seed(f"test_suite.py::test_route[run{run}of{RUNS}]"))
        picks.append(decision.make("What next?", MENU, runtime=runtime))
    return picks


def question_answers() -> list[Any]:
    answers = []
    for run in range(1, RUNS + 1):
        provider = FakeDecisionProvider(
            seed=seed(f"test_suite.py::test_questions[run{run}of{RUNS}]")
        )
        answers.append(
            provider.decide_sync(
                {"model": "m", "context": "Charged twice.", "questions": QUESTIONS}
            )
        )
    return answers


def interval_text(passes: int, runs: int) -> str:
    low, high = wilson_interval(passes, runs)  # type: ignore[misc]
    return f"{low:.2f}-{high:.2f}"


@pytest.fixture
def suite(project: pytest.Pytester) -> pytest.Pytester:
    project.makeconftest(CONFTEST)
    project.makepyfile(test_suite=SUITE)
    return project


def test_wilson_interval_known_values() -> None:
    assert [round(x, 4) for x in wilson_interval(7, 10)] == [0.3968, 0.8922]  # type: ignore[union-attr]
    assert [round(x, 4) for x in wilson_interval(0, 10)] == [0.0, 0.2775]  # type: ignore[union-attr]
    assert [round(x, 4) for x in wilson_interval(10, 10)] == [0.7225, 1.0]  # type: ignore[union-attr]
    assert [round(x, 4) for x in wilson_interval(1, 2)] == [0.0945, 0.9055]  # type: ignore[union-attr]
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError, match="successes must be between 0 and 3, got 4"):
        wilson_interval(4, 3)


def test_runs_counted_judged_and_reported(suite: pytest.Pytester) -> None:
    picks = route_picks()
    route_passes = picks.count("REFUND")
    answers = question_answers()
    question_passes = sum(a.boolean("refund").probability > 0.2 for a in answers)
    assert 0 < route_passes < RUNS  # the seeds give a mix, or the test proves little
    assert question_passes < RUNS

    result = suite.runpytest(
        "--opdecide-live", f"--opdecide-runs={RUNS}", "--opdecide-report=out/live"
    )
    route_ok = route_passes >= 0.3 * RUNS
    result.assert_outcomes(
        passed=route_passes + question_passes + 1,
        xfailed=2 * RUNS - route_passes - question_passes,
        failed=int(not route_ok) + 1,  # test_questions needs every run (the default)
    )
    shares = ", ".join(  # each pick, and how the runs that made it ended
        f"{name.lower()} {count} ({count} {'passed' if name == 'REFUND' else 'failed'})"
        for name, count in sorted(Counter(picks).items(), key=lambda item: (-item[1], item[0]))
    )
    result.stdout.fnmatch_lines(
        [
            "*- opdecide live runs -*",
            f"test_suite.py::test_questions: FAILED {question_passes}/{RUNS} runs passed, pass "
            f"rate {question_passes / RUNS:.2f} (95% CI {interval_text(question_passes, RUNS)}), "
            "min_pass_rate 1",
            "  decide 1: refund (boolean, 10 of 10 runs): P(true) mean *",
            "  decide 1: route (choice, 10 of 10 runs): *; expected 'billing': * right",
            f"test_suite.py::test_route: {'PASSED' if route_ok else 'FAILED'} {route_passes}/"
            f"{RUNS} runs passed, pass rate {route_passes / RUNS:.2f} (95% CI "
            f"{interval_text(route_passes, RUNS)}), min_pass_rate 0.3",
            f"  10 runs, {len(set(picks))} distinct answers (the runtime had a seed per run)",
            f"  decision 1: refund, close, escalate (10 of 10 runs): {shares}",
            "  run * failed: AssertionError: assert * == 'REFUND'",
        ]
    )
    # The verdict is the failure's text; the short summary line carries its first line only
    # where pytest shows string reports there (pytest 8.4.0 names the test alone).
    result.stdout.fnmatch_lines(
        [
            "*_ test_questions _*",
            f"{question_passes} of {RUNS} runs passed: pass rate {question_passes / RUNS:.2f} "
            f"(95% CI {interval_text(question_passes, RUNS)}) is below min_pass_rate 1",
            "*short test summary info*",
            "FAILED test_suite.py::test_questions*",
        ]
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED

    report = json.loads((suite.path / "out" / "live.json").read_text())
    assert report["format"] == "pytest-opdecide live runs"
    by_test = {test["test"]: test for test in report["tests"]}
    assert set(by_test) == {"test_suite.py::test_route", "test_suite.py::test_questions"}
    route = by_test["test_suite.py::test_route"]
    assert (route["runs"], route["passes"], route["failures"]) == (
        RUNS,
        route_passes,
        RUNS - route_passes,
    )
    assert route["interval"] == pytest.approx(list(wilson_interval(route_passes, RUNS)))  # type: ignore[arg-type]
    (made,) = route["decisions"]
    assert made["options"] == list(MENU)
    assert made["picks"] == {name.lower(): count for name, count in Counter(picks).items()}
    questions = {q["question"]: q for q in by_test["test_suite.py::test_questions"]["questions"]}
    truths = [a.boolean("refund").probability for a in answers]
    assert questions["refund"]["probability"]["mean"] == pytest.approx(sum(truths) / RUNS)
    assert questions["route"]["answers"] == dict(Counter(a.choice("route").choice for a in answers))
    calibration = report["calibration"]
    assert calibration["points"] == 2 * RUNS
    assert sum(b["count"] for b in calibration["bins"]) == 2 * RUNS

    page = (suite.path / "out" / "live.html").read_text()
    assert page.count("<svg") == 5  # pass rates, picks, the two questions, reliability
    assert "test_suite.py::test_route" in page
    assert html.escape(CHARTS_HINT) not in page
    plain = render_html(report, charts=False)
    assert "<svg" not in plain
    assert html.escape(CHARTS_HINT) in plain
    assert "<td>refund</td>" in plain


def test_the_same_counts_under_xdist(suite: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    serial = suite.runpytest(
        "--opdecide-live", f"--opdecide-runs={RUNS}", "--opdecide-report=serial"
    )
    parallel = suite.runpytest_subprocess(
        "-n", "2", "--opdecide-live", f"--opdecide-runs={RUNS}", "--opdecide-report=parallel"
    )
    assert parallel.parseoutcomes() == serial.parseoutcomes()
    first = json.loads((suite.path / "serial.json").read_text())
    second = json.loads((suite.path / "parallel.json").read_text())
    for test in (*first["tests"], *second["tests"]):
        for failed in test["failed_runs"]:
            failed.pop("message")
        for run in test["every_run"]:  # the texts may name the worker's paths
            run.pop("message")
            run.pop("failure")
    assert [{k: v for k, v in t.items() if k != "failed_runs"} for t in second["tests"]] == [
        {k: v for k, v in t.items() if k != "failed_runs"} for t in first["tests"]
    ]
    assert second["calibration"] == first["calibration"]


def test_every_run_gets_fresh_fixtures(project: pytest.Pytester) -> None:
    project.makeconftest(
        """
        import pytest
        from fake_runtimes import SeededRuntime

        SEEN = []


        def pytest_opdecide_runtime(request, settings):
            return SeededRuntime()


        @pytest.fixture
        def fresh():
            return object()
        """
    )
    project.makepyfile(
        """
        import pytest
        from conftest import SEEN


        @pytest.mark.opdecide(cassette=True)
        def test_run(runtime, fresh, opdecide_run):
            SEEN.append((id(runtime), id(fresh), opdecide_run.index, opdecide_run.count))
            assert len(runtime.calls) == 0
            if opdecide_run.index == 2:
                assert len({s[0] for s in SEEN}) == 3
                assert len({s[1] for s in SEEN}) == 3
                assert [s[2:] for s in SEEN] == [(0, 3), (1, 3), (2, 3)]
        """
    )
    result = project.runpytest("--opdecide-live", "--opdecide-runs=3", "-v")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "*::test_run[[]run1of3[]] PASSED*",
            "*::test_run[[]run2of3[]] PASSED*",
            "*::test_run[[]run3of3[]] PASSED*",
        ]
    )


def test_decision_errors_are_counted(project: pytest.Pytester) -> None:
    project.makeconftest(
        """
        from fake_runtimes import FunctionRuntime


        def pytest_opdecide_runtime(request, settings):
            return FunctionRuntime(lambda call: "I cannot decide.")
        """
    )
    project.makepyfile(
        """
        import pytest
        from pytest_opdecide import DecisionError, decision


        @pytest.mark.opdecide(cassette=True, runs=4, min_pass_rate=0)
        def test_undecided(runtime):
            with pytest.raises(DecisionError):
                decision.make("Pick.", {"a": 1, "b": 2})
            decision.make("Pick.", {"a": 1, "b": 2})
        """
    )
    result = project.runpytest("--opdecide-live")
    result.assert_outcomes(xfailed=4)
    result.stdout.fnmatch_lines(
        [
            "test_decision_errors_are_counted.py::test_undecided: PASSED 0/4 runs passed, pass "
            "rate 0.00 (no CI: one sample), min_pass_rate 0",
            "  4 runs, 1 distinct answer: this is one sample; raise temperature or vary the seed",
            "  decision 1: a, b (4 of 4 runs): DecisionError 4 (4 failed)",
            "  decision 2: a, b (4 of 4 runs): DecisionError 4 (4 failed)",
            "  runs 1, 2, 3, 4 failed: pytest_opdecide.DecisionError: *",
        ]
    )


def test_the_marker_sets_runs_and_the_command_line_wins(project: pytest.Pytester) -> None:
    project.makeconftest(
        """
        from fake_runtimes import SeededRuntime


        def pytest_opdecide_runtime(request, settings):
            return SeededRuntime()
        """
    )
    project.makepyfile(
        """
        import pytest


        @pytest.mark.opdecide(cassette=True, runs=2)
        def test_twice(runtime):
            pass


        @pytest.mark.opdecide(cassette=True)
        def test_once(runtime):
            pass
        """
    )
    project.runpytest("--opdecide-live").assert_outcomes(passed=3)
    project.runpytest("--opdecide-live", "--opdecide-runs=4").assert_outcomes(passed=8)


def test_only_live_tests_are_repeated(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import pytest


        @pytest.mark.opdecide_live
        def test_needs_the_model():
            pass


        def test_offline():
            pass
        """
    )
    result = project.runpytest("--opdecide-runs=3")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*- opdecide live runs -*",
            "--opdecide-runs=3 repeated no test: none ran live (run with --opdecide-live, and "
            "mark tests @pytest.mark.opdecide(cassette=True) or @pytest.mark.opdecide_live)",
        ]
    )
    project.runpytest("--opdecide-runs=3", "--opdecide-live").assert_outcomes(passed=4)


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        (
            "--opdecide-runs=0",
            "ERROR: bad value for --opdecide-runs: expected a whole number of runs, 1 or more, "
            "got '0'",
        ),
        (
            "--opdecide-runs=2.5",
            "ERROR: bad value for --opdecide-runs: expected a whole number, got '2.5'",
        ),
        (
            "--opdecide-min-pass-rate=1.5",
            "ERROR: bad value for --opdecide-min-pass-rate: expected a pass rate between 0 "
            "and 1, got '1.5'",
        ),
    ],
)
def test_bad_values_stop_pytest(project: pytest.Pytester, argument: str, message: str) -> None:
    result = project.runpytest(argument)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.errlines


def test_a_wrong_expected_answer_fails_the_run(suite: pytest.Pytester) -> None:
    suite.makepyfile(
        test_suite=SUITE.replace('"route": "billing"', '"route": "sales"').replace(
            "test_route", "skipped_route"
        )
    )
    result = suite.runpytest("--opdecide-live", "--opdecide-runs=2", "-k", "test_questions")
    result.stdout.fnmatch_lines(
        [
            "  run 1 failed: Failed: @pytest.mark.opdecide(expected=...): expected['route'] is "
            "'sales', which is not an option of the question: ['billing', 'shipping']",
        ]
    )
    result.assert_outcomes(xfailed=2, failed=1)


def test_a_report_of_single_runs(suite: pytest.Pytester) -> None:
    runtime = SeededRuntime(seed=seed("test_suite.py::test_route"))
    passed = decision.make("What next?", MENU, runtime=runtime) == "REFUND"
    result = suite.runpytest("--opdecide-live", "--opdecide-report=single.html", "-k", "route")
    result.stdout.fnmatch_lines(
        [
            f"test_suite.py::test_route: {'PASSED' if passed else 'FAILED'} {int(passed)}/1 "
            "runs passed*",
            f"opdecide: live-run report written to {suite.path / 'single.json'}",
            f"opdecide: live-run report written to {suite.path / 'single.html'}",
        ]
    )
    result.assert_outcomes(passed=int(passed), failed=int(not passed))  # one run: no verdict
    report = json.loads((suite.path / "single.json").read_text())
    (route,) = report["tests"]
    assert route["planned"] == 1
    assert route["decisions"][0]["calls"] == 1


def test_a_provider_shared_between_runs_is_watched_once_per_run(project: pytest.Pytester) -> None:
    project.makeconftest(
        """
        from fake_runtimes import FakeDecisionProvider

        SHARED = FakeDecisionProvider(seed=1)


        def pytest_opdecide_decision_provider(request, settings):
            return SHARED
        """
    )
    project.makepyfile(
        """
        import pytest
        from conftest import SHARED

        QUESTION = {
            "model": "m",
            "context": "",
            "questions": {"ok": {"type": "boolean", "instructions": "OK?"}},
        }


        @pytest.mark.opdecide(cassette=True, runs=3)
        def test_ask(decision_provider):
            assert decision_provider is SHARED
            decision_provider.decide_sync(QUESTION)


        def test_after():
            assert "decide" not in vars(SHARED)
        """
    )
    result = project.runpytest("--opdecide-live")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["  decide 1: ok (boolean, 3 of 3 runs): P(true) mean *"])


LABELS = (
    "$5 off",
    "$x^2$",
    "$\\frac{a}{$",
    "C:\\new\\table",
    "snake_case_name",
    "a^b",
    "{braces}",
    "退款 🎫 Überweisung zurückbuchen « remboursement » возврат средств ἐπιστροφή "
    "ödəniş qaytarılması (" + "ā" * 40 + ")",
)
"""Texts matplotlib's mathtext would read as formulas (or fail on), and a long unicode one."""


def test_any_text_is_a_label_of_the_charts(project: pytest.Pytester) -> None:
    pytest.importorskip("matplotlib")
    project.makeconftest(
        f"""
        import re

        from fake_runtimes import ScriptedRuntime, pick

        LABELS = {LABELS!r}


        def pytest_opdecide_runtime(request, settings):
            run = int(re.search(r"run(\\d+)of", request.node.nodeid).group(1))
            return ScriptedRuntime(pick(LABELS[(run - 1) % len(LABELS)]))
        """
    )
    project.makepyfile(
        test_labels=f"""
        import pytest
        from pytest_opdecide import decision

        LABELS = {LABELS!r}


        @pytest.mark.opdecide(cassette=True, min_pass_rate=0)
        @pytest.mark.parametrize("case", [{" + ".join(repr(label) for label in LABELS[:4])}])
        def test_pick(runtime, case):
            decision.make("Which one?", {{label: label for label in LABELS}})
        """
    )
    result = project.runpytest(
        "--opdecide-live", f"--opdecide-runs={len(LABELS)}", "--opdecide-report=out/live"
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    page = (project.path / "out" / "live.html").read_text(encoding="utf-8")
    assert page.count("<svg") == 2  # pass rates, the picks of the one decision
    charts = "".join(part.partition("</svg>")[0] for part in page.split("<svg")[1:])

    def drawn(text: str, limit: int = 60) -> str:
        shown = text if len(text) <= limit else text[: limit - 1] + "\u2026"
        return f">{html.escape(shown, quote=False)}<"

    for label in LABELS:  # each pick: a tick of the picks chart, as written
        assert drawn(label) in charts, label
        assert f"<td>{html.escape(label)}</td>" in page  # and whole in its table
    (test,) = json.loads((project.path / "out" / "live.json").read_text())["tests"]
    assert "$x^2$$" in test["test"]
    assert drawn(test["test"].rpartition("::")[2]) in charts  # a tick of the pass-rate chart
    assert drawn("decision 1: " + ", ".join(LABELS), 100) in charts  # the picks' title


# ---------------------------------------------------------------- runs that are no samples

SERVED = """
import json

import httpx
from pytest_opdecide.runtimes import OpenAICompatibleRuntime


def served(pick):
    def answer(request):
        content = json.dumps({"call": pick(json.loads(request.content))})
        return httpx.Response(
            200,
            json={
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
            },
        )

    return httpx.MockTransport(answer)


def pytest_opdecide_runtime(request, settings):
    run = request.getfixturevalue("opdecide_run")
    name = request.node.originalname
    if name == "test_sampled":  # what the how-to guide tells: a temperature, a seed per run
        return OpenAICompatibleRuntime(
            "http://model.test/v1",
            transport=served(lambda body: "refund"),
            temperature=0.8,
            extra_body={"seed": run.seed},
        )
    if name == "test_wobbly":  # temperature 0, but the server's cache answers differently
        wobbly = served(lambda body: ["refund", "close"][run.index % 2])
        return OpenAICompatibleRuntime("http://model.test/v1", transport=wobbly)
    return OpenAICompatibleRuntime("http://model.test/v1", transport=served(lambda body: "refund"))
"""

COPIES = """
import pytest
from pytest_opdecide import decision

MENU = {"refund": "REFUND", "close": "CLOSE"}


@pytest.mark.opdecide(cassette=True)
def test_repeated(runtime):
    assert decision.make("What next?", MENU) == "REFUND"


@pytest.mark.opdecide(cassette=True, min_pass_rate=0)
def test_wobbly(runtime):
    assert decision.make("What next?", MENU) == "REFUND"


@pytest.mark.opdecide(cassette=True)
def test_sampled(runtime, opdecide_run):
    assert runtime.extra_body == {"seed": 100 + opdecide_run.index}
    assert decision.make("What next?", MENU) == "REFUND"
"""


def test_identical_runs_are_one_sample(project: pytest.Pytester) -> None:
    """At temperature 0 every run repeats one answer: said, and no interval pretends."""
    project.makeconftest(SERVED)
    project.makepyfile(test_copies=COPIES)
    result = project.runpytest(
        "--opdecide-live", "--opdecide-runs=5", "--opdecide-seed=100", "--opdecide-report=live"
    )
    result.assert_outcomes(passed=13, xfailed=2)
    result.stdout.fnmatch_lines(
        [
            "test_copies.py::test_repeated: PASSED 5/5 runs passed, pass rate 1.00 (no CI: one "
            "sample), min_pass_rate 1",
            "  5 runs, 1 distinct answer: this is one sample; raise temperature or vary the seed "
            "(the runtime sent temperature 0)",
            "test_copies.py::test_sampled: PASSED 5/5 runs passed, pass rate 1.00 (95% CI "
            f"{interval_text(5, 5)}), min_pass_rate 1",
            "  5 runs, 1 distinct answer (the runtime sent temperature 0.8)",
            "test_copies.py::test_wobbly: PASSED 3/5 runs passed, pass rate 0.60 (no CI: not "
            "samples), min_pass_rate 0",
            "  5 runs, 2 distinct answers, but the runtime sent temperature 0: not independent "
            "samples (what differs comes from the server, not from sampling); raise temperature "
            "or vary the seed",
        ]
    )
    tests = {t["test"]: t for t in json.loads((project.path / "live.json").read_text())["tests"]}
    repeated = tests["test_copies.py::test_repeated"]
    assert (repeated["distinct_answers"], repeated["independent"], repeated["interval"]) == (
        1,
        False,
        None,
    )
    assert [run["answer"] for run in repeated["every_run"]] == [1, 1, 1, 1, 1]
    wobbly = tests["test_copies.py::test_wobbly"]
    assert [run["answer"] for run in wobbly["every_run"]] == [1, 2, 1, 2, 1]
    assert wobbly["interval"] is None
    assert tests["test_copies.py::test_sampled"]["independent"] is True
    page = (project.path / "live.html").read_text()
    assert "none: one sample" in page
    assert "this is one sample; raise temperature or vary the seed" in page


def test_repeated_answers_are_counted_once_in_the_calibration(project: pytest.Pytester) -> None:
    project.makeconftest(
        """
        from fake_runtimes import FakeDecisionProvider


        def pytest_opdecide_decision_provider(request, settings):
            return FakeDecisionProvider(seed=7)  # the same seed in every run: the same answers
        """
    )
    project.makepyfile(
        test_same=f"""
        import pytest

        QUESTIONS = {QUESTIONS!r}


        @pytest.mark.opdecide(cassette=True, expected={{"refund": True, "route": "billing"}})
        def test_questions(decision_provider):
            decision_provider.decide_sync(
                {{"model": "m", "context": "Charged twice.", "questions": QUESTIONS}}
            )
        """
    )
    result = project.runpytest("--opdecide-live", "--opdecide-runs=5", "--opdecide-report=live")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(
        [
            "  5 runs, 1 distinct answer: this is one sample; raise temperature or vary the seed "
            "(the decision_provider had seed 7 in every run)"
        ]
    )
    report = json.loads((project.path / "live.json").read_text())
    assert (report["calibration"]["answers"], report["calibration"]["points"]) == (10, 2)
    page = (project.path / "live.html").read_text()
    assert "2 distinct answers of 10 (runs that repeat one answer count once)" in page


@pytest.mark.parametrize(
    ("sampling", "answers", "note", "interval"),
    [
        (
            {"runtime": {"temperature": 0.0, "seed": None}},
            "aaa",
            "3 runs, 1 distinct answer: this is one sample; raise temperature or vary the seed "
            "(the runtime sent temperature 0)",
            False,
        ),
        (
            {"runtime": {"temperature": 0.7, "seed": 3}},
            "aaa",
            "3 runs, 1 distinct answer: this is one sample; raise temperature or vary the seed "
            "(the runtime sent temperature 0.7 with seed 3)",
            False,
        ),
        (
            {"runtime": {"temperature": 0.7, "seed": None}},
            "aaa",
            "3 runs, 1 distinct answer (the runtime sent temperature 0.7)",
            True,
        ),
        (
            {"runtime": {"temperature": 0.0, "seed": "varies"}},
            "aaa",
            "3 runs, 1 distinct answer: this is one sample; raise temperature or vary the seed "
            "(the runtime sent temperature 0; a seed per run changes nothing at temperature 0)",
            False,
        ),
        ({}, "aab", "3 runs, 2 distinct answers", True),
        (
            {},
            "aaa",
            "3 runs, 1 distinct answer: this is one sample; raise temperature or vary the seed",
            False,
        ),
        (
            {},
            None,
            "3 runs; what the model said was not watched (only the runtime and "
            "decision_provider fixtures are), so nothing tells whether the runs differ",
            True,
        ),
    ],
)
def test_which_runs_are_samples(
    sampling: dict[str, Any], answers: str | None, note: str, interval: bool
) -> None:
    from pytest_opdecide.plugin._pass_rates import summarize

    summary = summarize("t.py::t", records_of(list(answers or [None] * 3), sampling))
    assert summary["samples_note"] == note
    assert (summary["interval"] is not None) is interval


def records_of(answers: list[str | None], sampling: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "test": "t.py::t",
            "run": run,
            "runs": len(answers),
            "outcome": "passed" if answer is not None else "error",
            "message": None,
            "duration": 0.0,
            "min_pass_rate": 0.0,
            "expected": {},
            "decisions": [],
            "questions": [],
            "answer": answer,
            "sampling": {  # "varies": a seed of each run's own
                name: {**seen, "seed": run if seen["seed"] == "varies" else seen["seed"]}
                for name, seen in sampling.items()
            },
        }
        for run, answer in enumerate(answers, 1)
    ]


def test_a_run_that_never_reached_the_model_is_not_compared() -> None:
    from pytest_opdecide.plugin._pass_rates import summarize

    summary = summarize("t.py::t", records_of(["x", None, "x"], {}))
    assert summary["distinct_answers"] == 1
    assert summary["interval"] is None
    assert [run["answer"] for run in summary["every_run"]] == [1, None, 1]


def test_a_seed_per_run_varies_the_samples() -> None:
    from pytest_opdecide.plugin._pass_rates import sampling_of
    from pytest_opdecide.runtimes import OpenAICompatibleRuntime

    assert sampling_of(OpenAICompatibleRuntime("http://model.test/v1")) == {
        "temperature": 0.0,
        "seed": None,
    }
    tuned = OpenAICompatibleRuntime(
        "http://model.test/v1", temperature=0, extra_body={"temperature": 0.9, "seed": 4}
    )
    assert sampling_of(tuned) == {"temperature": 0.9, "seed": 4}
    assert sampling_of(SeededRuntime(seed=5)) == {"temperature": None, "seed": 5}
    assert sampling_of(object()) == {"temperature": None, "seed": None}


# ---------------------------------------------------------------- runs you can debug


def test_every_run_keeps_its_failure_and_its_picks(suite: pytest.Pytester) -> None:
    picks = route_picks()
    result = suite.runpytest(
        "--opdecide-live", f"--opdecide-runs={RUNS}", "--opdecide-report=live", "-k", "test_route"
    )
    first_failed = next(run for run, pick in enumerate(picks, 1) if pick != "REFUND")
    wrong = picks[first_failed - 1]
    result.stdout.fnmatch_lines(
        [
            f"  run {first_failed} failed: AssertionError: assert '{wrong}' == 'REFUND'",
            "      - REFUND",  # the lines after the first are kept
            f"      + {wrong}",
            f"    answer *: decision 1 -> {wrong.lower()}",  # and what the run picked
        ]
    )
    (test,) = json.loads((suite.path / "live.json").read_text())["tests"]
    runs = test["every_run"]
    assert [run["picks"] for run in runs] == [
        {"decision 1: refund, close, escalate": pick.lower()} for pick in picks
    ]
    assert [run["outcome"] for run in runs] == [
        "passed" if pick == "REFUND" else "failed" for pick in picks
    ]
    failed = runs[first_failed - 1]
    assert [line.strip() for line in failed["message"].splitlines()[1:]] == [
        "",
        "- REFUND",
        f"+ {wrong}",
    ]
    assert "def test_route(runtime):" in failed["failure"]  # the whole text, traceback too
    assert failed["failure"].endswith("test_suite.py:10: AssertionError")  # where it failed
    page = (suite.path / "live.html").read_text()
    assert f"<pre>{html.escape(failed['failure'])}</pre>" in page
    assert "decision 1: refund, close, escalate → <b>" in page


def test_without_matplotlib_the_report_says_how_to_get_the_charts(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_opdecide.plugin import _live_report, _live_runs

    monkeypatch.setattr(_live_report, "charts_available", lambda: False)
    monkeypatch.setattr(_live_runs, "charts_available", lambda: False)
    result = suite.runpytest("--opdecide-live", "--opdecide-report=live", "-k", "test_route")
    result.stdout.fnmatch_lines(
        [
            "opdecide: live-run report written to *live.html",
            "opdecide: the report has tables only. Charts need matplotlib: pip install "
            "'pytest-opdecide[report]' and run the tests again.",
        ]
    )
    page = (suite.path / "live.html").read_text()
    assert "<svg" not in page
    assert html.escape(CHARTS_HINT) in page


def test_a_run_that_is_not_repeated_has_the_seed_setting(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        def test_once(opdecide_run):
            assert (opdecide_run.index, opdecide_run.count, opdecide_run.seed) == (0, 1, 9)
        """
    )
    project.runpytest("--opdecide-seed=9").assert_outcomes(passed=1)
