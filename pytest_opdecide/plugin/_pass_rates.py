"""Pass rates of repeated live runs: what each run decided, counting, Wilson intervals, reports.

Plain Python (no pytest): the plugin feeds it one :data:`RunRecord` per run of a test, built
from the run's outcome, the calls in its runtime's trace and the question decisions its provider
answered, and asks for a summary per test and a report over all of them.

How a decision call is identified across runs: by its *position* in the run (the first decision
the test made, the second...) and the names of the options it offered. Question decisions are
identified by the position of the ``decide`` call and the question id. Runs whose control flow
differs (a decision skipped in one run) still line up by position; a decision whose menu differs
is a different decision.

Whether runs are samples at all: a run's *answer* is everything the model said in it (every reply
of the runtime's trace, every question's distribution), and runs whose answers are identical are
copies of one sample unless the model was sampling (a temperature above 0 and no fixed seed, or
a seed that changes from run to run). The summary says how many distinct answers the runs gave,
and shows a pass rate's interval only over runs that could differ.
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Final, TypeAlias

from pytest_opdecide._nextstep._procedure import parse_once
from pytest_opdecide._nextstep._trace import CallRecord
from pytest_opdecide._nextstep._validation import ParseFailure
from pytest_opdecide.questions import brier_score, expected_calibration_error

__all__ = [
    "DECISION_ERROR",
    "REPORT_FORMAT",
    "Z_95",
    "RunRecord",
    "calibration",
    "decision_observations",
    "meets",
    "question_observations",
    "report",
    "run_answer",
    "sampling_of",
    "summarize",
    "text_lines",
    "verdict_text",
    "wilson_interval",
]

RunRecord: TypeAlias = dict[str, Any]
"""One run of a test, JSON-ready: ``run``, ``runs``, ``outcome`` (``passed``, ``failed``,
``error`` or ``skipped``), ``message`` (the failure's message, every line of it),
``failure`` (the whole failure text, traceback included), ``duration``, ``decisions``,
``questions``, ``answer`` (a digest of what the model said, or ``None`` when nothing was
watched), ``sampling`` (what the watched runtime and provider said about their temperature and
seed), ``expected``, ``min_pass_rate``."""

Z_95: Final = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""
DECISION_ERROR: Final = "DecisionError"
"""What a decision that ended without a valid pick counts as."""
REPORT_FORMAT: Final = "pytest-opdecide live runs"
_BINS: Final = 10


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float] | None:
    """The Wilson score interval of a pass rate.

    Unlike the normal approximation it stays inside [0, 1] and is not empty at 0 or ``trials``
    passes.

    Args:
        successes: Runs that passed.
        trials: Runs counted.
        z: The normal quantile (1.96 for 95%).

    Returns:
        ``(low, high)``, or ``None`` for zero trials.

    Example:
        >>> [round(bound, 4) for bound in wilson_interval(7, 10)]
        [0.3968, 0.8922]
    """
    if trials <= 0:
        return None
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be between 0 and {trials}, got {successes}")
    p = successes / trials
    z2 = z * z
    denominator = 1 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def meets(passes: int, runs: int, min_pass_rate: float) -> bool:
    """Whether ``passes`` of ``runs`` meet ``min_pass_rate`` (exactly: 8 of 10 meet 0.8)."""
    return passes >= min_pass_rate * runs - 1e-9


# ---------------------------------------------------------------- what a run decided


class _AnyContext(dict[str, Any]):
    """A context that has every key, so that re-reading a pick never stops at a context
    parameter (the real call had the context; only the picked name matters here)."""

    def __contains__(self, key: object) -> bool:
        return True

    def __missing__(self, key: str) -> Any:
        return None


def _outcome(last: CallRecord) -> str:
    if last.error is not None:
        return f"error: {type(last.error).__name__}"
    reply = last.reply
    if reply is None:
        return "error: no reply"
    if reply.tool_calls:
        return "no pick: still calling tools"
    try:
        option, _ = parse_once(reply.text, last.request.choices, _AnyContext(), None)
    except ParseFailure:
        return DECISION_ERROR
    except Exception as error:  # a pick the decision code could not read either
        return f"error: {type(error).__name__}"
    return option.name


def decision_observations(calls: Sequence[CallRecord]) -> list[dict[str, Any]]:
    """The decisions in a run's calls, in order, with what each one picked.

    A decision starts with a ``turn`` call that offers options (``decision.make``, or
    ``exec``/``agent`` with ``choices``) and goes on through its tool rounds and re-picks; its
    outcome is read from the last reply: the option picked, ``DecisionError`` when that reply
    was no valid pick, or the error the call raised.

    Args:
        calls: Trace records of one run.

    Returns:
        ``{"key", "position", "options", "pick"}`` per decision.
    """
    children: dict[int, list[CallRecord]] = {}
    for call in calls:
        if call.parent is not None:
            children.setdefault(call.parent, []).append(call)
    observed = []
    roots = [c for c in calls if c.kind == "turn" and c.request.options]
    for position, root in enumerate(sorted(roots, key=lambda c: c.id), start=1):
        menu = root.request.choices
        last = root
        while True:
            following = [
                c
                for c in children.get(last.id, ())
                if c.kind in ("tool_round", "repick") and c.request.choices is menu
            ]
            if not following:
                break
            last = max(following, key=lambda c: c.id)
        options = list(root.request.options)
        observed.append(
            {
                "key": f"decision {position}: {', '.join(options)}",
                "position": position,
                "options": options,
                "pick": _outcome(last),
            }
        )
    return observed


def _mode(probabilities: Mapping[str, float]) -> str:
    return max(probabilities, key=lambda key: probabilities[key])


def question_observations(
    position: int,
    question_types: Mapping[str, str],
    answers: Mapping[str, Any] | None,
    error: BaseException | None,
    expected: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """What one ``decide`` call answered, question by question.

    Args:
        position: The call's number in the run (1, 2...).
        question_types: Question id -> type, from the request.
        answers: The result's answers (``None`` when the call raised).
        error: What the call raised, if anything.
        expected: Question id -> the expected answer (an option name, a level index, or a
            bool), from the test's marker.

    Returns:
        ``{"key", "position", "question", "type", "answer", "probability", "score",
        "correct", "truth", "error"}`` per question. ``probability`` is the chosen option's
        (choice), the most probable level's (score) or P(true) (boolean). With an expected
        answer, ``correct`` says whether the answer matches it (for a boolean: whether P(true)
        is on the expected side of 0.5) and ``truth`` is the event ``probability`` predicts:
        1 when the answer is the expected one (for a boolean: when the expected answer is
        true), else 0. Both are ``None`` without an expected answer.

    Raises:
        ValueError: An expected answer that does not fit its question.
    """
    observed = []
    for question, kind in question_types.items():
        entry: dict[str, Any] = {
            "key": f"decide {position}: {question}",
            "position": position,
            "question": question,
            "type": kind,
            "answer": None,
            "probability": None,
            "score": None,
            "correct": None,
            "truth": None,
            "error": None,
        }
        if answers is None or question not in answers:
            entry["error"] = f"error: {type(error).__name__}" if error else "error: no answer"
            observed.append(entry)
            continue
        answer = answers[question]
        if kind == "boolean":
            entry["probability"] = float(answer.probability)
        else:
            probabilities = dict(answer.probabilities)
            top = answer.choice if kind == "choice" else _mode(probabilities)
            entry["answer"] = top
            entry["probability"] = float(probabilities[top])
            if kind == "score":
                entry["score"] = float(answer.score)
        if question in expected:
            entry["correct"], entry["truth"] = _correct(question, kind, answer, expected[question])
        observed.append(entry)
    return observed


def _correct(question: str, kind: str, answer: Any, wanted: Any) -> tuple[bool, int]:
    if kind == "boolean":
        if not isinstance(wanted, bool):
            raise ValueError(
                f"expected[{question!r}] is {wanted!r}; a boolean question expects True or False"
            )
        return (answer.probability >= 0.5) == wanted, int(wanted)
    keys = list(answer.probabilities)
    if kind == "score":
        if isinstance(wanted, bool) or not isinstance(wanted, int) or str(wanted) not in keys:
            raise ValueError(
                f"expected[{question!r}] is {wanted!r}; a score question expects a level index "
                f"from 0 to {len(keys) - 1}"
            )
        right = _mode(answer.probabilities) == str(wanted)
        return right, int(right)
    if wanted not in keys:
        raise ValueError(
            f"expected[{question!r}] is {wanted!r}, which is not an option of the question: {keys}"
        )
    right = bool(answer.choice == wanted)
    return right, int(right)


# ---------------------------------------------------------------- are the runs samples?


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _seed(value: Any) -> int | str | None:
    if value is None or (isinstance(value, int | str) and not isinstance(value, bool)):
        return value
    return repr(value)


def sampling_of(source: Any) -> dict[str, Any]:
    """What a runtime or provider says about what makes its replies differ: its temperature
    and its seed, where it has them.

    Read from the public attributes ``temperature`` and ``seed``
    (:class:`~pytest_opdecide.runtimes.OpenAICompatibleRuntime`, the seeded fakes), and from
    ``extra_body`` (an ``OpenAICompatibleRuntime`` sends its ``temperature`` and ``seed``
    keys in place of its own).

    Returns:
        ``{"temperature": float | None, "seed": int | str | None}``; ``None`` where the
        source does not say (a ``temperature`` of ``None`` leaves it to the server).
    """
    temperature = getattr(source, "temperature", None)
    seed = getattr(source, "seed", None)
    extra = getattr(source, "extra_body", None)
    if isinstance(extra, Mapping):
        temperature = extra.get("temperature", temperature)
        seed = extra.get("seed", seed)
    return {"temperature": _number(temperature), "seed": _seed(seed)}


def _rounded(value: Any) -> Any:
    """``value`` with its floats rounded to 4 places (a distribution that differs only in
    rounding noise is the same answer)."""
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, Mapping):
        return {str(key): _rounded(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(item) for item in value]
    return value


def _said(answer: Any) -> Any:
    dump = getattr(answer, "model_dump", None)
    data = dump(mode="json") if callable(dump) else answer
    if isinstance(data, Mapping):  # the model's answer, not the provider's notes about it
        data = {key: item for key, item in data.items() if key != "metadata"}
    return _rounded(data)


def run_answer(
    calls: Sequence[CallRecord] | None,
    decided: Sequence[tuple[Any, BaseException | None]] | None,
) -> str | None:
    """A digest of everything the model said in one run: equal digests, identical runs.

    Args:
        calls: The run's calls in the runtime's trace (``None`` when no runtime was watched).
        decided: What each ``decide`` call of the watched provider answered: ``(answers,
            error)`` (``None`` when no provider was watched).

    Returns:
        A short hexadecimal digest, or ``None`` when neither was watched.
    """
    if calls is None and decided is None:
        return None
    said: list[Any] = []
    for call in calls or ():
        if call.reply is None:
            said.append(["error", type(call.error).__name__])
            continue
        tools = [[tool.name, tool.arguments] for tool in call.reply.tool_calls]
        said.append([call.kind, call.reply.text, tools])
    for answers, error in decided or ():
        if answers is None:
            said.append(["error", type(error).__name__])
        else:
            said.append({str(question): _said(answer) for question, answer in answers.items()})
    text = json.dumps(said, sort_keys=True, default=repr, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


_ADVICE: Final = "raise temperature or vary the seed"


def _how_sampled(records: Sequence[RunRecord]) -> tuple[bool | None, str]:
    """Whether the runs' model was sampling: ``True`` (it was), ``False`` (it could only
    repeat itself), ``None`` (nothing says), with the reason in words."""
    verdicts: list[tuple[bool | None, str]] = []
    sources: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        for name, seen in (record.get("sampling") or {}).items():
            sources.setdefault(name, []).append(seen)
    for name, seen in sorted(sources.items()):
        temperatures = [s["temperature"] for s in seen]
        seeds = {json.dumps(s["seed"]) for s in seen}
        seed_varies = len(seeds) > 1 and len(seen) > 1
        fixed_seed = len(seeds) == 1 and seen[0]["seed"] is not None
        if None not in temperatures and max(temperatures) == 0:
            unused = "; a seed per run changes nothing at temperature 0" if seed_varies else ""
            verdicts.append((False, f"the {name} sent temperature 0{unused}"))
        elif None not in temperatures:
            shown = f"temperature {max(temperatures):g}"
            if fixed_seed:
                verdicts.append((False, f"the {name} sent {shown} with seed {seen[0]['seed']}"))
            else:
                verdicts.append((True, f"the {name} sent {shown}"))
        elif seed_varies:
            verdicts.append((True, f"the {name} had a seed per run"))
        elif fixed_seed and len(seen) > 1:
            verdicts.append((None, f"the {name} had seed {seen[0]['seed']} in every run"))
    for wanted in (True, False, None):
        for sampled, why in verdicts:
            if sampled is wanted:
                return sampled, why
    return None, ""


def _samples(records: Sequence[RunRecord]) -> dict[str, Any]:
    """How many distinct answers the runs gave, whether they are independent samples (an
    interval over them means something), and the sentence that says so."""
    # A run that stopped before its test ran (a setup error) said nothing: it is not compared.
    answers = [r.get("answer") for r in records if r.get("answer") is not None]
    distinct = len(set(answers)) if answers else None
    sampled, why = _how_sampled(records)
    runs = len(records)
    if runs < 2:
        return {"distinct": distinct, "independent": None, "note": None}
    because = f" ({why})" if why else ""
    if distinct is None:
        independent = sampled
        note = (
            f"{runs} runs; what the model said was not watched (only the runtime and "
            "decision_provider fixtures are), so nothing tells whether the runs differ"
            + (f"{because}; {_ADVICE}" if sampled is False else because)
        )
    elif distinct == 1 and sampled is not True:
        independent = False
        note = f"{runs} runs, 1 distinct answer: this is one sample; {_ADVICE}{because}"
    elif sampled is False:
        independent = False
        note = (
            f"{runs} runs, {distinct} distinct answers, but {why}: not independent samples "
            f"(what differs comes from the server, not from sampling); {_ADVICE}"
        )
    else:
        independent = True
        answers_said = "1 distinct answer" if distinct == 1 else f"{distinct} distinct answers"
        note = f"{runs} runs, {answers_said}{because}"
    return {"distinct": distinct, "independent": independent, "note": note}


def _numbered(records: Sequence[RunRecord]) -> dict[str | None, int]:
    """Each distinct answer's number, in the order of the first run that gave it."""
    numbers: dict[str | None, int] = {}
    for record in records:
        if record.get("answer") is not None:
            numbers.setdefault(record["answer"], len(numbers) + 1)
    return numbers


def _question_said(seen: Mapping[str, Any]) -> str:
    if seen["error"] is not None:
        return str(seen["error"])
    if seen["type"] == "boolean":
        return f"P(true) {seen['probability']:.2f}"
    answer = f"level {seen['answer']}" if seen["type"] == "score" else str(seen["answer"])
    return f"{answer} (p {seen['probability']:.2f})"


def _every_run(records: Sequence[RunRecord]) -> list[dict[str, Any]]:
    numbers = _numbered(records)
    return [
        {
            "run": r["run"],
            "outcome": r["outcome"],
            "message": r["message"],
            "failure": r.get("failure"),
            "answer": numbers.get(r.get("answer")),
            "picks": {d["key"]: d["pick"] for d in r["decisions"]},
            "answers": {q["key"]: _question_said(q) for q in r["questions"]},
        }
        for r in records
    ]


# ---------------------------------------------------------------- summaries


def _spread(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {
        "mean": statistics.fmean(values),
        "sd": statistics.pstdev(values) if len(values) > 1 else 0.0,
        "min": min(values),
        "max": max(values),
    }


def _counted(values: Iterable[str]) -> dict[str, int]:
    return dict(sorted(Counter(values).items(), key=lambda item: (-item[1], item[0])))


def summarize(test: str, records: Sequence[RunRecord]) -> dict[str, Any]:
    """The summary of one test's runs: counts, pass rate, interval, picks and answers.

    Args:
        test: The test's node id (without the run parameter).
        records: Its runs, in any order.

    Returns:
        A JSON-ready summary (see the how-to guide for every field).
    """
    records = sorted(records, key=lambda r: r["run"])
    outcomes = Counter(r["outcome"] for r in records)
    counted = [r for r in records if r["outcome"] != "skipped"]
    passes = outcomes["passed"]
    min_pass_rate = float(records[0]["min_pass_rate"]) if records else 1.0
    samples = _samples(counted)
    interval = wilson_interval(passes, len(counted))
    if samples["independent"] is False:
        interval = None  # copies of one sample: an interval over them would mean nothing
    if not counted:
        verdict = "skipped"
    else:
        verdict = "passed" if meets(passes, len(counted), min_pass_rate) else "failed"
    decisions: dict[str, dict[str, Any]] = {}
    for record in counted:
        for seen in record["decisions"]:
            entry = decisions.setdefault(
                seen["key"],
                {"key": seen["key"], "position": seen["position"], "options": seen["options"]},
            )
            entry.setdefault("picked", []).append(seen["pick"])
            entry.setdefault("outcomes", {}).setdefault(seen["pick"], []).append(record["outcome"])
    questions: dict[str, dict[str, Any]] = {}
    for record in counted:
        for seen in record["questions"]:
            entry = questions.setdefault(
                seen["key"],
                {
                    "key": seen["key"],
                    "position": seen["position"],
                    "question": seen["question"],
                    "type": seen["type"],
                    "expected": record["expected"].get(seen["question"]),
                    "seen": [],
                },
            )
            entry["seen"].append({**seen, "outcome": record["outcome"]})
    asked = {q["question"] for q in questions.values()}
    expected_ids = {name for r in counted for name in r["expected"]}
    return {
        "test": test,
        "planned": max((r["runs"] for r in records), default=0),
        "runs": len(counted),
        "passes": passes,
        "failures": outcomes["failed"],
        "errors": outcomes["error"],
        "skipped": outcomes["skipped"],
        "pass_rate": passes / len(counted) if counted else None,
        "interval": list(interval) if interval else None,
        "min_pass_rate": min_pass_rate,
        "verdict": verdict,
        "distinct_answers": samples["distinct"],
        "independent": samples["independent"],
        "samples_note": samples["note"],
        "failed_runs": [
            {"run": r["run"], "outcome": r["outcome"], "message": r["message"]}
            for r in counted
            if r["outcome"] != "passed"
        ],
        "every_run": _every_run(records),
        "decisions": [
            {
                "key": d["key"],
                "position": d["position"],
                "options": d["options"],
                "calls": len(d["picked"]),
                "picks": _counted(d["picked"]),
                "outcomes": {
                    pick: dict(Counter(d["outcomes"][pick])) for pick in _counted(d["picked"])
                },
            }
            for d in sorted(decisions.values(), key=lambda d: (d["position"], d["key"]))
        ],
        "questions": [
            _question_summary(q)
            for q in sorted(questions.values(), key=lambda q: (q["position"], q["key"]))
        ],
        "unused_expected": sorted(expected_ids - asked),
    }


def _question_summary(entry: Mapping[str, Any]) -> dict[str, Any]:
    seen = entry["seen"]
    answered = [s for s in seen if s["error"] is None]
    return {
        "key": entry["key"],
        "position": entry["position"],
        "question": entry["question"],
        "type": entry["type"],
        "calls": len(seen),
        "answers": _counted(s["answer"] for s in answered if s["answer"] is not None),
        "errors": _counted(s["error"] for s in seen if s["error"] is not None),
        "probability": _spread([s["probability"] for s in answered]),
        "score": _spread([s["score"] for s in answered if s["score"] is not None]),
        "expected": entry["expected"],
        "correct": sum(1 for s in answered if s["correct"]),
        "values": [
            {"probability": s["probability"], "answer": s["answer"], "outcome": s["outcome"]}
            for s in answered
        ],
    }


def calibration(
    records: Iterable[RunRecord], repeating: Collection[str] = ()
) -> dict[str, Any] | None:
    """A reliability diagram's data over every answer with an expected answer.

    Each answer gives one point: P(true) against the expected truth for a boolean question;
    the chosen option's (or most probable level's) probability against whether it was the
    expected one for a choice or a score question. The points fall in ten equal-width bins.
    The runs of a test in ``repeating`` are copies of one another, not samples: each of its
    distinct answers to a question counts once.

    Args:
        records: The runs, of every test.
        repeating: Node ids of the tests whose runs are not independent samples.

    Returns:
        ``{"points", "answers", "brier", "ece", "bins": [{"low", "high", "count",
        "predicted", "observed"}]}`` (``answers``: every answer given, ``points``: those
        counted), or ``None`` when no answer had an expected one.
    """
    predicted: list[float] = []
    happened: list[int] = []
    given = 0
    once: set[tuple[str, str, float, int]] = set()
    for record in records:
        if record["outcome"] == "skipped":
            continue
        for seen in record["questions"]:
            if seen["error"] is None and seen["truth"] is not None:
                given += 1
                if record["test"] in repeating:
                    point = (
                        record["test"],
                        seen["key"],
                        round(seen["probability"], 4),
                        seen["truth"],
                    )
                    if point in once:
                        continue
                    once.add(point)
                predicted.append(seen["probability"])
                happened.append(seen["truth"])
    if not predicted:
        return None
    bins = []
    for index in range(_BINS):
        low, high = index / _BINS, (index + 1) / _BINS
        inside = [
            (p, y)
            for p, y in zip(predicted, happened, strict=True)
            if low <= p < high or (index == _BINS - 1 and p == 1.0)
        ]
        bins.append(
            {
                "low": low,
                "high": high,
                "count": len(inside),
                "predicted": statistics.fmean(p for p, _ in inside) if inside else None,
                "observed": statistics.fmean(y for _, y in inside) if inside else None,
            }
        )
    return {
        "points": len(predicted),
        "answers": given,
        "brier": brier_score(happened, predicted),
        "ece": expected_calibration_error(happened, predicted),
        "bins": bins,
    }


def report(groups: Mapping[str, Sequence[RunRecord]]) -> dict[str, Any]:
    """The whole report: every test's summary and the calibration of expected answers."""
    records = [record for group in groups.values() for record in group]
    tests = [summarize(test, groups[test]) for test in sorted(groups)]
    repeating = {t["test"] for t in tests if t["independent"] is False}
    return {
        "format": REPORT_FORMAT,
        "version": 1,
        "tests": tests,
        "calibration": calibration(records, repeating),
    }


# ---------------------------------------------------------------- the terminal


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _picks(picks: Mapping[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in picks.items()) or "none"


def _with_outcomes(decision: Mapping[str, Any]) -> str:
    """Each pick with how the runs that made it ended: ``refund 8 (7 passed, 1 failed)``."""
    parts = []
    for name, count in decision["picks"].items():
        ended = decision["outcomes"].get(name, {})
        shown = ", ".join(f"{n} {outcome}" for outcome, n in sorted(ended.items()))
        parts.append(f"{name} {count} ({shown})" if shown else f"{name} {count}")
    return ", ".join(parts) or "none"


def _ci(summary: Mapping[str, Any]) -> str:
    interval = summary["interval"]
    if interval:
        return f"95% CI {interval[0]:.2f}-{interval[1]:.2f}"
    if summary.get("independent") is False:
        return "no CI: one sample" if summary["distinct_answers"] == 1 else "no CI: not samples"
    return "95% CI n/a"


_MESSAGE_LINES: Final = 8
"""Lines of a failed run's message in the terminal summary (the report keeps all of them)."""
_RUNS_SHOWN: Final = 5


def _run_lines(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Failed runs that said and ended the same: their outcome and message, then what they
    picked and answered."""
    run = runs[0]
    numbers = ", ".join(str(r["run"]) for r in runs)
    message = (run["message"] or run["outcome"]).splitlines() or [run["outcome"]]
    lines = [f"  run{'s' if len(runs) > 1 else ''} {numbers} {run['outcome']}: {message[0]}"]
    rest = [line.rstrip() for line in message[1:] if line.strip()]
    lines += [f"    {line}" for line in rest[:_MESSAGE_LINES]]
    if len(rest) > _MESSAGE_LINES:
        lines.append(f"      ... {len(rest) - _MESSAGE_LINES} more line(s) in the report")
    # A decision by its number alone: its options are on its own line above.
    said = [f"{key.partition(':')[0]} -> {pick}" for key, pick in run["picks"].items()]
    said += [f"{key} -> {answer}" for key, answer in run["answers"].items()]
    answer = f"answer {run['answer']}: " if run["answer"] is not None else ""
    lines.append(f"    {answer}{'; '.join(said) if said else 'no decision watched'}")
    return lines


def _alike(runs: Iterable[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """Runs grouped by what they said and how they ended, in the order of their first run."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for run in runs:
        said = [run["answer"], run["outcome"], run["message"], run["picks"], run["answers"]]
        groups.setdefault(json.dumps(said, sort_keys=True, default=repr), []).append(run)
    return list(groups.values())


def text_lines(summary: Mapping[str, Any]) -> list[str]:
    """The terminal summary of one test, one line per fact."""
    lines = [
        f"{summary['test']}: {summary['verdict'].upper()} {summary['passes']}/{summary['runs']} "
        f"runs passed, pass rate {_rate(summary['pass_rate'])} ({_ci(summary)}), "
        f"min_pass_rate {summary['min_pass_rate']:g}"
    ]
    if summary.get("samples_note"):
        lines.append(f"  {summary['samples_note']}")
    if summary["errors"] or summary["skipped"]:
        lines.append(f"  {summary['errors']} run(s) errored, {summary['skipped']} skipped")
    for decision in summary["decisions"]:
        lines.append(
            f"  {decision['key']} ({decision['calls']} of {summary['runs']} runs): "
            f"{_with_outcomes(decision)}"
        )
    for question in summary["questions"]:
        lines.append("  " + _question_line(question, summary["runs"]))
    failed = _alike(r for r in summary["every_run"] if r["outcome"] in ("failed", "error"))
    for runs in failed[:_RUNS_SHOWN]:
        lines.extend(_run_lines(runs))
    if len(failed) > _RUNS_SHOWN:
        more = sum(len(runs) for runs in failed[_RUNS_SHOWN:])
        lines.append(f"  ... and {more} more failed run(s) (--opdecide-report lists every run)")
    if summary["unused_expected"]:
        lines.append(
            f"  expected answers given for questions never asked: {summary['unused_expected']}"
        )
    return lines


def verdict_text(summary: Mapping[str, Any]) -> str:
    """Why a repeated test failed: its pass rate against its threshold, then what it decided."""
    head = (
        f"{summary['passes']} of {summary['runs']} runs passed: pass rate "
        f"{_rate(summary['pass_rate'])} ({_ci(summary)}) is below min_pass_rate "
        f"{summary['min_pass_rate']:g}"
    )
    return "\n".join([head, *text_lines(summary)[1:]])


def _question_line(question: Mapping[str, Any], runs: int) -> str:
    head = f"{question['key']} ({question['type']}, {question['calls']} of {runs} runs):"
    parts = []
    if question["answers"]:
        answers = question["answers"]
        if question["type"] == "score":
            answers = {f"level {level}": count for level, count in answers.items()}
        parts.append(_picks(answers))
    probability = question["probability"]
    if probability is not None:
        what = "P(true)" if question["type"] == "boolean" else "p(answer)"
        parts.append(f"{what} mean {probability['mean']:.2f} sd {probability['sd']:.2f}")
    if question["score"] is not None:
        score = question["score"]
        parts.append(f"score mean {score['mean']:.2f} sd {score['sd']:.2f}")
    if question["errors"]:
        parts.append(_picks(question["errors"]))
    if question["expected"] is not None:
        parts.append(f"expected {question['expected']!r}: {question['correct']} right")
    return f"{head} {'; '.join(parts)}"
