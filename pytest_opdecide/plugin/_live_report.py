"""The live-run report as JSON and as one self-contained HTML page.

The HTML page draws its charts with matplotlib when it is installed (the ``report`` extra:
``pip install 'pytest-opdecide[report]'``), as inline SVG: pass rates with their 95% intervals,
the options picked per decision, and a reliability diagram of the question decisions that have
an expected answer. Without matplotlib the page shows the same figures as tables and says how
to get the charts. The JSON needs nothing.

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
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

__all__ = ["CHARTS_HINT", "charts_available", "render_html", "render_json"]

CHARTS_HINT = (
    "Charts need matplotlib: pip install 'pytest-opdecide[report]' and run the tests again."
)

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
h1, h2, h3 { font-weight: 600; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.passed { color: #1a7f37; } .failed { color: #c62828; font-weight: 600; } .skipped { color: #777; }
.note { background: #fff8e1; border: 1px solid #f0d48a; padding: 0.5em 1em; }
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
    return "n/a" if not interval else f"{interval[0]:.2f} – {interval[1]:.2f}"


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
            _interval(t),
            f"{t['min_pass_rate']:g}",
        ]
        for t in tests
    ]
    return _table(
        ["test", "verdict", "passed", "pass rate", "95% interval", "min pass rate"],
        rows,
        {2, 3, 4, 5},
    )


def _decision_tables(test: Mapping[str, Any]) -> str:
    parts = []
    for decision in test["decisions"]:
        rows = [
            [_e(name), str(count), f"{count / decision['calls']:.0%}"]
            for name, count in decision["picks"].items()
        ]
        parts.append(f"<h3>{_e(decision['key'])}</h3>")
        parts.append(_table(["picked", "runs", "share"], rows, {1, 2}))
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
        low, high = test["interval"]
        colour = "#1a7f37" if test["verdict"] == "passed" else "#c62828"
        axes.plot([low, high], [row, row], color=colour, linewidth=2)
        axes.plot([test["pass_rate"]], [row], "o", color=colour)
        axes.plot([test["min_pass_rate"]] * 2, [row - 0.3, row + 0.3], color="#555", linewidth=1)
    axes.set_yticks(range(len(counted)), labels)
    axes.set_xlim(-0.02, 1.02)
    axes.set_xlabel("pass rate (dot), 95% Wilson interval (line), min_pass_rate (tick)")
    axes.invert_yaxis()
    return _svg(figure)


@_plain
def _picks_chart(decision: Mapping[str, Any]) -> str:
    from matplotlib.ticker import MaxNLocator

    names = list(decision["picks"])
    counts = [decision["picks"][name] for name in names]
    labels, width = _labels(names)
    figure = _figure(max(6.0, 3.5 + width), 0.35 * len(names) + 1.0)
    axes = figure.add_subplot()
    colours = [
        "#c62828" if name == "DecisionError" or name.startswith(("error", "no pick")) else "#1f6feb"
        for name in names
    ]
    axes.barh(range(len(names)), counts, color=colours)
    axes.set_yticks(range(len(names)), labels)
    axes.invert_yaxis()
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel(f"runs (of {decision['calls']})")
    axes.set_title(_short(decision["key"], _TITLE_CHARACTERS), fontsize=10, loc="left")
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
        f"{calibration['points']} answers, Brier {calibration['brier']:.3f}, "
        f"ECE {calibration['ece']:.3f}",
        fontsize=10,
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
        parts.append(f'<p class="note">{_e(CHARTS_HINT)}</p>')
    if not tests:
        parts.append("<p>No live test ran.</p>")
    parts.append("<h2>Pass rates</h2>")
    if tests and draw and any(t["runs"] for t in tests):
        parts.append(f"<figure>{_pass_rate_chart(tests)}</figure>")
    if tests:
        parts.append(_tests_table(tests))
    for test in tests:
        parts.append(f"<h2>{_e(test['test'])}</h2>")
        if test["failed_runs"]:
            rows = [
                [str(f["run"]), _e(f["outcome"]), _e(f["message"] or "")]
                for f in test["failed_runs"]
            ]
            parts.append(_table(["run", "outcome", "message"], rows, {0}))
        if draw:
            parts.extend(f"<figure>{_picks_chart(d)}</figure>" for d in test["decisions"])
        parts.append(_decision_tables(test))
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
            f"<p>{calibration['points']} answers; Brier score {calibration['brier']:.3f}, "
            f"expected calibration error {calibration['ece']:.3f}.</p>"
        )
        parts.append(_calibration_table(calibration))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
