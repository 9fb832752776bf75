"""The live-run report as JSON and as one self-contained HTML page.

The HTML page draws its charts with matplotlib when it is installed (the ``report`` extra:
``pip install 'pytest-opdecide[report]'``), as inline SVG: pass rates with their 95% intervals,
the options picked per decision (each bar split by how the runs that picked it ended), what
every question decision answered, and a reliability diagram of the question decisions that
have an expected answer. Every run is listed with what it picked and answered and its whole
failure text. Without matplotlib the page shows the same figures as tables and says how to get
the charts. The JSON needs nothing.

Every text on a chart (test ids, option names, decision keys) is drawn as it is: matplotlib's
mathtext, which would read ``$...$`` as a formula (and fail on ``$\\foo$``), is off for them.
"""

from __future__ import annotations

import functools
import html
import importlib.util
import io
import json
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

__all__ = ["CHARTS_HINT", "charts_available", "render_html", "render_json"]

CHARTS_HINT = (
    "Charts need matplotlib: pip install 'pytest-opdecide[report]' and run the tests again."
)
_MISSING = (
    "This page shows tables only: the charts of the pass rates, the picks, the question "
    "decisions and the reliability diagram are drawn when matplotlib is installed. "
)

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
h1, h2, h3 { font-weight: 600; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.passed { color: #1a7f37; } .failed { color: #c62828; font-weight: 600; } .skipped { color: #777; }
.note { background: #fff8e1; border: 1px solid #f0d48a; padding: 0.5em 1em; }
.samples { color: #8a5a00; }
pre { background: #f6f8fa; padding: 0.5em; overflow-x: auto; max-width: 68em; }
details summary { cursor: pointer; }
figure { margin: 0.5em 0 1.5em; }
"""


def render_json(report: Mapping[str, Any]) -> str:
    """The report as indented JSON text."""
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def charts_available() -> bool:
    """Whether matplotlib is installed (the report's charts need it)."""
    return importlib.util.find_spec("matplotlib") is not None


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _interval(summary: Mapping[str, Any]) -> str:
    interval = summary["interval"]
    if interval:
        return f"{interval[0]:.2f} – {interval[1]:.2f}"
    if summary.get("independent") is False:
        return "none: one sample" if summary.get("distinct_answers") == 1 else "none: not samples"
    return "n/a"


def _outcome(value: str) -> str:
    return f'<span class="{_e(value)}">{_e(value)}</span>'


_OUTCOME_COLOURS: Final = {"passed": "#1a7f37", "failed": "#c62828", "error": "#8250df"}


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], numeric: set[int]) -> str:
    cells = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = []
    for row in rows:
        body.append(
            "<tr>"
            + "".join(
                f'<td class="num">{cell}</td>' if i in numeric else f"<td>{cell}</td>"
                for i, cell in enumerate(row)
            )
            + "</tr>"
        )
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _tests_table(tests: Sequence[Mapping[str, Any]]) -> str:
    rows = [
        [
            _e(t["test"]),
            f'<span class="{_e(t["verdict"])}">{_e(t["verdict"])}</span>',
            f"{t['passes']}/{t['runs']}",
            _rate(t["pass_rate"]),
            _e(_interval(t)),
            f"{t['min_pass_rate']:g}",
            "?" if t.get("distinct_answers") is None else str(t["distinct_answers"]),
        ]
        for t in tests
    ]
    return _table(
        [
            "test",
            "verdict",
            "passed",
            "pass rate",
            "95% interval",
            "min pass rate",
            "distinct answers",
        ],
        rows,
        {2, 3, 4, 5, 6},
    )


def _runs_table(test: Mapping[str, Any]) -> str:
    """Every run: how it ended, which distinct answer it gave, what it picked and answered,
    and its whole failure text."""
    rows = []
    for run in test["every_run"]:
        said = [f"{_e(key)} → <b>{_e(pick)}</b>" for key, pick in run["picks"].items()]
        said += [f"{_e(key)} → <b>{_e(answer)}</b>" for key, answer in run["answers"].items()]
        message = run["message"] or ""
        failure = run.get("failure") or message
        head = message.splitlines()[0] if message else ""
        shown = (
            f"<details><summary>{_e(head)}</summary><pre>{_e(failure)}</pre></details>"
            if failure
            else ""
        )
        rows.append(
            [
                str(run["run"]),
                _outcome(run["outcome"]),
                "" if run["answer"] is None else str(run["answer"]),
                "<br>".join(said),
                shown,
            ]
        )
    return _table(["run", "outcome", "answer", "picked and answered", "failure"], rows, {0, 2})


def _decision_tables(test: Mapping[str, Any]) -> str:
    parts = []
    for decision in test["decisions"]:
        rows = [
            [
                _e(name),
                str(count),
                f"{count / decision['calls']:.0%}",
                _e(", ".join(f"{n} {o}" for o, n in sorted(decision["outcomes"][name].items()))),
            ]
            for name, count in decision["picks"].items()
        ]
        parts.append(f"<h3>{_e(decision['key'])}</h3>")
        parts.append(_table(["picked", "runs", "share", "those runs"], rows, {1, 2}))
    for question in test["questions"]:
        parts.append(f"<h3>{_e(question['key'])} ({_e(question['type'])})</h3>")
        rows = [[_e(name), str(count)] for name, count in question["answers"].items()]
        rows += [[_e(name), str(count)] for name, count in question["errors"].items()]
        probability = question["probability"]
        if probability is not None:
            what = "P(true)" if question["type"] == "boolean" else "p(answer)"
            rows.append(
                [
                    f"{what} mean ± sd",
                    f"{probability['mean']:.2f} ± {probability['sd']:.2f}",
                ]
            )
        if question["score"] is not None:
            score = question["score"]
            rows.append(["score mean ± sd", f"{score['mean']:.2f} ± {score['sd']:.2f}"])
        if question["expected"] is not None:
            rows.append(
                [
                    f"expected {_e(repr(question['expected']))}",
                    f"{question['correct']} of {question['calls']} right",
                ]
            )
        parts.append(_table(["answer", "runs"], rows, {1}))
    return "".join(parts)


def _calibration_table(calibration: Mapping[str, Any]) -> str:
    rows = [
        [
            f"{b['low']:.1f} – {b['high']:.1f}",
            str(b["count"]),
            _rate(b["predicted"]),
            _rate(b["observed"]),
        ]
        for b in calibration["bins"]
        if b["count"]
    ]
    return _table(["predicted", "answers", "mean predicted", "observed"], rows, {1, 2, 3})


def _calibration_counted(calibration: Mapping[str, Any]) -> str:
    points, given = calibration["points"], calibration.get("answers", calibration["points"])
    if given == points:
        return f"{points} answers"
    return f"{points} distinct answers of {given} (runs that repeat one answer count once)"


# ---------------------------------------------------------------- charts (matplotlib)


_Chart = TypeVar("_Chart", bound=Callable[..., str])

_LABEL_CHARACTERS: Final = 60
"""The longest tick label of a chart, in characters (a longer text ends in an ellipsis; the
tables under the chart give it whole)."""
_TITLE_CHARACTERS: Final = 100
_CHARACTER_WIDTH: Final = 0.085  # inches per character of a 10-point label, about


def _plain(chart: _Chart) -> _Chart:
    """``chart`` drawn with every label, title and tick as plain text: mathtext is off (``$``
    is a dollar, ``\\`` a backslash, ``_``, ``^`` and braces themselves). A text reads the
    setting when it is created and a tick label when it is drawn, so the whole chart is built
    and saved under it."""

    @functools.wraps(chart)
    def drawn(*args: Any, **kwargs: Any) -> str:
        import matplotlib

        plain = matplotlib.rc_context(
            {
                "text.parse_math": False,
                "text.usetex": False,
                "svg.fonttype": "none",
                "svg.hashsalt": "pytest-opdecide",
            }
        )
        with plain, warnings.catch_warnings():
            # The SVG names its texts, and the browser draws them in its own fonts: a glyph
            # matplotlib's font lacks only makes its measure of the text a little off.
            warnings.filterwarnings("ignore", r"Glyph \d+ .* missing from font", UserWarning)
            return chart(*args, **kwargs)

    return drawn  # type: ignore[return-value]


def _svg(figure: Any) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _short(text: str, limit: int = _LABEL_CHARACTERS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _labels(texts: Sequence[str]) -> tuple[list[str], float]:
    """The tick labels of ``texts`` and the width (inches) they take."""
    labels = [_short(text) for text in texts]
    return labels, _CHARACTER_WIDTH * max((len(label) for label in labels), default=0)


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


@_plain
def _pass_rate_chart(tests: Sequence[Mapping[str, Any]]) -> str:
    counted = [t for t in tests if t["runs"]]
    labels, width = _labels([t["test"].rpartition("::")[2] for t in counted])
    figure = _figure(max(7.5, 4.5 + width), 0.45 * len(counted) + 1.2)
    axes = figure.add_subplot()
    for row, test in enumerate(counted):
        colour = "#1a7f37" if test["verdict"] == "passed" else "#c62828"
        if test["interval"]:
            low, high = test["interval"]
            axes.plot([low, high], [row, row], color=colour, linewidth=2)
        else:  # copies of one sample: no interval to draw
            axes.annotate(
                "no interval: " + _interval(test).removeprefix("none: "),
                (test["pass_rate"], row),
                xytext=(6, -3),
                textcoords="offset points",
                fontsize=8,
                color="#8a5a00",
            )
        axes.plot([test["pass_rate"]], [row], "o", color=colour)
        axes.plot([test["min_pass_rate"]] * 2, [row - 0.3, row + 0.3], color="#555", linewidth=1)
    axes.set_yticks(range(len(counted)), labels)
    axes.set_xlim(-0.02, 1.02)
    axes.set_xlabel("pass rate (dot), 95% Wilson interval (line), min_pass_rate (tick)")
    axes.invert_yaxis()
    return _svg(figure)


def _stacked(axes: Any, names: Sequence[str], outcomes: Sequence[Mapping[str, int]]) -> None:
    """Horizontal bars, one per name, split by how the runs ended."""
    left = [0] * len(names)
    for outcome, colour in _OUTCOME_COLOURS.items():
        counts = [ended.get(outcome, 0) for ended in outcomes]
        if any(counts):
            axes.barh(range(len(names)), counts, left=left, color=colour, label=outcome)
            left = [a + b for a, b in zip(left, counts, strict=True)]
    axes.legend(loc="lower right", fontsize=8)


@_plain
def _picks_chart(decision: Mapping[str, Any]) -> str:
    from matplotlib.ticker import MaxNLocator

    names = list(decision["picks"])
    labels, width = _labels(names)
    figure = _figure(max(6.0, 3.5 + width), 0.35 * len(names) + 1.2)
    axes = figure.add_subplot()
    _stacked(axes, names, [decision["outcomes"][name] for name in names])
    axes.set_yticks(range(len(names)), labels)
    axes.invert_yaxis()
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel(f"runs (of {decision['calls']}) that picked it, by how they ended")
    axes.set_title(_short(decision["key"], _TITLE_CHARACTERS), fontsize=10, loc="left")
    return _svg(figure)


@_plain
def _question_chart(question: Mapping[str, Any]) -> str:
    """A question decision across the runs: the answers given (choice, score), split by how
    the runs ended, beside the probability each run gave (the chosen option's, the most
    probable level's, or P(true))."""
    from matplotlib.ticker import MaxNLocator

    values = question["values"]
    boolean = question["type"] == "boolean"
    names = [] if boolean else [str(name) for name in question["answers"]]
    shown = [f"level {name}" for name in names] if question["type"] == "score" else names
    labels, width = _labels(shown)
    rows = max(len(names), 1)
    figure = _figure(max(8.0, 6.5 + width), 0.35 * rows + 1.4)
    title = _short(f"{question['key']} ({question['type']})", _TITLE_CHARACTERS)
    if names:
        counts, strip = figure.subplots(1, 2, width_ratios=[1, 1.2])
        outcomes = [
            dict(Counter(v["outcome"] for v in values if str(v["answer"]) == name))
            for name in names
        ]
        _stacked(counts, names, outcomes)
        counts.set_yticks(range(len(names)), labels)
        counts.invert_yaxis()
        counts.xaxis.set_major_locator(MaxNLocator(integer=True))
        counts.set_xlabel("runs that gave it")
        counts.set_title(title, fontsize=10, loc="left")
    else:
        strip = figure.add_subplot()
        strip.set_title(title, fontsize=10, loc="left")
    for outcome, colour in _OUTCOME_COLOURS.items():
        xs = Counter(round(v["probability"], 3) for v in values if v["outcome"] == outcome)
        if xs:
            strip.plot(list(xs), [0.0] * len(xs), "|", markersize=24, color=colour, label=outcome)
        for x, count in xs.items():  # runs that gave the same probability: one mark, counted
            if count > 1:
                strip.annotate(f"×{count}", (x, 0.0), xytext=(3, 8), textcoords="offset points")
    strip.set_xlim(-0.02, 1.02)
    strip.set_yticks([])
    strip.set_xlabel("P(true), per run" if boolean else "its probability, per run")
    return _svg(figure)


@_plain
def _reliability_chart(calibration: Mapping[str, Any]) -> str:
    figure = _figure(4.5, 4.5)
    axes = figure.add_subplot()
    axes.plot([0, 1], [0, 1], linestyle="--", color="#888", linewidth=1)
    filled = [b for b in calibration["bins"] if b["count"]]
    axes.plot(
        [b["predicted"] for b in filled],
        [b["observed"] for b in filled],
        "o-",
        color="#1f6feb",
    )
    for b in filled:
        axes.annotate(str(b["count"]), (b["predicted"], b["observed"]), fontsize=8)
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1)
    axes.set_xlabel("predicted probability")
    axes.set_ylabel("observed frequency")
    axes.set_title(
        f"{_calibration_counted(calibration)},\nBrier {calibration['brier']:.3f}, "
        f"ECE {calibration['ece']:.3f}",
        fontsize=9,
    )
    return _svg(figure)


# ---------------------------------------------------------------- the page


def render_html(report: Mapping[str, Any], *, charts: bool | None = None) -> str:
    """The report as one HTML page with no external resources.

    Args:
        report: What :func:`~pytest_opdecide.plugin._pass_rates.report` returned.
        charts: Draw charts (needs matplotlib); ``None`` draws them when matplotlib is
            installed. Tables are always there.

    Returns:
        The page.
    """
    draw = charts_available() if charts is None else charts
    tests = report["tests"]
    calibration = report["calibration"]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>pytest-opdecide live runs</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>Live runs</h1>",
    ]
    if not draw:
        parts.append(f'<p class="note">{_e(_MISSING)}<b>{_e(CHARTS_HINT)}</b></p>')
    if not tests:
        parts.append("<p>No live test ran.</p>")
    parts.append("<h2>Pass rates</h2>")
    if tests and draw and any(t["runs"] for t in tests):
        parts.append(f"<figure>{_pass_rate_chart(tests)}</figure>")
    if tests:
        parts.append(_tests_table(tests))
    for test in tests:
        parts.append(f"<h2>{_e(test['test'])}</h2>")
        if test.get("samples_note"):
            parts.append(f'<p class="samples">{_e(test["samples_note"])}</p>')
        if draw:
            parts.extend(f"<figure>{_picks_chart(d)}</figure>" for d in test["decisions"])
            parts.extend(
                f"<figure>{_question_chart(q)}</figure>" for q in test["questions"] if q["values"]
            )
        parts.append(_decision_tables(test))
        parts.append("<h3>Every run</h3>")
        parts.append(_runs_table(test))
    parts.append("<h2>Reliability of question decisions with an expected answer</h2>")
    if calibration is None:
        parts.append(
            "<p>No question decision had an expected answer "
            "(<code>@pytest.mark.opdecide(expected={...})</code>).</p>"
        )
    else:
        if draw:
            parts.append(f"<figure>{_reliability_chart(calibration)}</figure>")
        parts.append(
            f"<p>{_e(_calibration_counted(calibration))}; Brier score "
            f"{calibration['brier']:.3f}, expected calibration error {calibration['ece']:.3f}.</p>"
        )
        parts.append(_calibration_table(calibration))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
