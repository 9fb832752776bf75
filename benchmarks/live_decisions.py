"""Structured decisions against a real model: the measurement set, text menu vs menu schema.

Runs every decision of ``benchmarks/decision_prompts.py`` through ``decision.make`` on an
``OpenAICompatibleRuntime``, twice: with the text menu alone (``structured_decisions="never"``)
and with structured decisions (``"auto"``: the menu's JSON schema as a response format, in the
form the server takes). The two modes are interleaved, decision by decision (text first on even
decisions, structured first on odd ones), so that a busy server slows both alike.

For each mode it prints how many decisions parsed into a valid pick (at the first reply, and in
the end), how many needed the re-pick, how many ended in ``DecisionError``, and the time per
decision (median and range) with the tokens generated. Not part of ``make bench``: it needs a
model server. Against the local model::

    scripts/local-model start
    .venv/bin/python -m benchmarks.live_decisions --base-url "$(scripts/local-model url)"

Any OpenAI-compatible server works (``--model``, and the key in the environment variable named
by ``--api-key-env``). ``--json PATH`` writes every decision's record. ``--set text_fields``
runs the 35 decisions of ``benchmarks/text_field_prompts.py`` instead (free text, numbers and
allowed values that are not strings). Calls run with the runtime's defaults (60 s per call, no
``max_tokens``) unless ``--timeout`` or ``--max-tokens`` say otherwise.

Each valid pick is also checked for **copied examples**: a value of a field without allowed
values that equals the field's example on the menu's ``Call:`` line (``0``, ``false``,
``"<str>"``), is a string placeholder without its brackets (``"str"``), or holds one
(``"boxes: [<str>]"``), or copies a slot (``"<int>"``). Such a value was most likely copied,
not decided. Numbers and booleans show a slot since issue 23 (``<int>``: no JSON value equals
it); to compare with menus that showed ``0`` and ``false``, the last column counts the picks
holding the reference's example of a number or boolean field (``0``, ``0.0``, ``false``)
wherever it came from.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from benchmarks.decision_prompts import PROMPTS, Decision
from pytest_opdecide import DecisionError, decision
from pytest_opdecide.options import normalize_options
from pytest_opdecide.runtimes import OpenAICompatibleRuntime, RuntimeCallError

MODES = {"text": "never", "structured": "auto"}
"""Each mode's ``structured_decisions`` setting."""


@dataclass
class Outcome:
    """One decision in one mode.

    Attributes:
        name: The decision's id.
        mode: ``text`` or ``structured``.
        round: Which pass over the set.
        result: ``first`` (a valid pick at the first reply), ``repick`` (valid after the
            re-pick), ``decision_error`` or ``call_error`` (the model call itself failed).
        seconds: Wall time of the whole ``decision.make`` (re-pick included).
        calls: Model calls made.
        completion_tokens: Tokens the model generated, over those calls.
        picked: The option picked, if any.
        replies: The reply texts, shortened.
        detail: The error's message, if any.
        copied: The fields of a valid pick whose value copies the menu's example.
        zeros: The fields of a valid pick holding the reference's example of their type
            (``0``, ``0.0``, ``false``), whether the menu shows it or not.
    """

    name: str
    mode: str
    round: int
    result: str
    seconds: float
    calls: int
    completion_tokens: int
    picked: str | None
    replies: list[str]
    detail: str = ""
    copied: list[str] | None = None
    zeros: list[str] | None = None


def _is_copy(value: Any, example: Any) -> bool:
    slot = getattr(example, "text", None)  # a slot (<int>): no JSON value equals it
    if isinstance(slot, str):
        return value == slot
    if isinstance(example, str) and example.startswith("<") and isinstance(value, str):
        bare = example[1:-1].strip().casefold()
        return value == example or value.strip().casefold() == bare or example in value
    if isinstance(example, list) and isinstance(value, list):
        return bool(example) and any(_is_copy(v, example[0]) for v in value)
    if isinstance(example, dict) and isinstance(value, dict):
        return any(_is_copy(value.get(k), e) for k, e in example.items() if k in value)
    if isinstance(example, str) and isinstance(value, str):
        return example.startswith("<") and example in value
    return type(value) is type(example) and value == example


def _picked_fields(
    options: dict[str, Any], text: str, holds: Callable[[Any, Any], bool]
) -> list[str]:
    """The free fields of the pick in ``text`` whose value ``holds(value, field type)``."""
    action = decision.extract_action(text)
    if action is None:
        return []
    option = normalize_options(options).by_name.get(str(action.get("call")))
    args = action.get("args") or {}
    if option is None or not isinstance(args, dict):
        return []
    return [
        f.name
        for f in option.fields
        if f.type.choices is None and f.name in args and holds(args[f.name], f.type)
    ]


def copied_examples(options: dict[str, Any], text: str) -> list[str]:
    """The fields of the pick in ``text`` whose value copies the menu's example."""
    return _picked_fields(options, text, lambda value, kind: _is_copy(value, kind.placeholder()))


_REFERENCE_EXAMPLES: dict[type, Any] = {int: 0, float: 0.0, bool: False}
"""The reference's examples of numbers and booleans (``0``, ``0.0``, ``false``)."""


def _holds_reference_example(value: Any, field_type: Any) -> bool:
    example = getattr(field_type, "pytype", None)
    if example in _REFERENCE_EXAMPLES:
        return type(value) is example and value == _REFERENCE_EXAMPLES[example]
    item = getattr(field_type, "item", None)
    return (
        item is not None
        and isinstance(value, list)
        and any(_holds_reference_example(v, item) for v in value)
    )


def reference_examples(options: dict[str, Any], text: str) -> list[str]:
    """The fields of the pick in ``text`` whose value is the reference's example of its type
    (``0``, ``0.0``, ``false``): a copy where the menu shows it, a likely default elsewhere."""
    return _picked_fields(options, text, _holds_reference_example)


def decide(runtime: OpenAICompatibleRuntime, item: Decision, mode: str, round_: int) -> Outcome:
    """Run one decision and describe how it went."""
    before = len(runtime.calls)
    start = time.perf_counter()
    detail = ""
    try:
        decision.make(item.prompt, item.options, runtime=runtime)
    except DecisionError as error:
        result, detail = "decision_error", f"{error.kind}: {error.message}"
    except RuntimeCallError as error:
        result, detail = "call_error", str(error)[:300]
    else:
        result = "first" if len(runtime.calls) - before == 1 else "repick"
    seconds = time.perf_counter() - start
    calls = runtime.calls[before:]
    picked = None
    copied: list[str] | None = None
    zeros: list[str] | None = None
    if result in ("first", "repick"):
        action = decision.extract_action(calls[-1].reply_text or "")
        picked = None if action is None else str(action["call"])
        copied = copied_examples(item.options, calls[-1].reply_text or "")
        zeros = reference_examples(item.options, calls[-1].reply_text or "")
    return Outcome(
        item.name,
        mode,
        round_,
        result,
        seconds,
        len(calls),
        sum(call.usage.completion_tokens for call in calls),
        picked,
        [(call.reply_text or "")[:160] for call in calls],
        detail,
        copied,
        zeros,
    )


def summary(outcomes: list[Outcome], mode: str) -> dict[str, Any]:
    """The figures of one mode."""
    mine = [o for o in outcomes if o.mode == mode]
    total = len(mine)
    times = [o.seconds for o in mine]
    count = {kind: sum(o.result == kind for o in mine) for kind in ("first", "repick")}
    count["decision_error"] = sum(o.result == "decision_error" for o in mine)
    count["call_error"] = sum(o.result == "call_error" for o in mine)
    needed_repick = sum(o.calls > 1 for o in mine)
    tokens = [o.completion_tokens for o in mine]
    return {
        "mode": mode,
        "decisions": total,
        "parsed": count["first"] + count["repick"],
        "parsed_first": count["first"],
        "needed_repick": needed_repick,
        "decision_error": count["decision_error"],
        "call_error": count["call_error"],
        "median_s": statistics.median(times) if times else 0.0,
        "min_s": min(times, default=0.0),
        "max_s": max(times, default=0.0),
        "total_s": sum(times),
        "median_tokens": statistics.median(tokens) if tokens else 0,
        "max_tokens": max(tokens, default=0),
        "picks_with_fields": sum(bool(o.copied is not None and _has_fields(o)) for o in mine),
        "copied_examples": sum(bool(o.copied) for o in mine),
        "reference_examples": sum(bool(o.zeros) for o in mine),
    }


def _has_fields(outcome: Outcome) -> bool:
    return outcome.picked is not None and any("args" in reply for reply in outcome.replies[-1:])


def _rate(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "-"


def table(rows: list[dict[str, Any]]) -> str:
    """The summary as a Markdown table."""
    lines = [
        "| mode | decisions | parsed (valid pick) | parsed at the first reply | needed the re-pick "
        "| DecisionError | call failed | time per decision: median (min-max) | tokens generated: "
        "median (max) | picks that copy an example | picks holding 0, 0.0 or false |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        n = row["decisions"]
        lines.append(
            f"| {row['mode']} | {n} | {_rate(row['parsed'], n)} | {_rate(row['parsed_first'], n)} "
            f"| {_rate(row['needed_repick'], n)} | {_rate(row['decision_error'], n)} "
            f"| {_rate(row['call_error'], n)} "
            f"| {row['median_s']:.2f} s ({row['min_s']:.2f}-{row['max_s']:.2f}) "
            f"| {row['median_tokens']:g} ({row['max_tokens']}) "
            f"| {row['copied_examples']} of {row['picks_with_fields']} with arguments "
            f"| {row['reference_examples']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.live_decisions", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--base-url",
        default=os.environ.get("OPDECIDE_LIVE_URL", "http://127.0.0.1:8765/v1"),
        help="the server's API root (default: $OPDECIDE_LIVE_URL, else the local model's)",
    )
    parser.add_argument("--model", default="smollm2-135m-instruct", help="the model name")
    parser.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        help="the environment variable holding the API key, if the server needs one",
    )
    parser.add_argument("--rounds", type=int, default=1, help="passes over the set (default 1)")
    parser.add_argument(
        "--max-tokens", type=int, default=None, help="a max_tokens for every call (default: none)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds per model call (default: the runtime's own, as users get it)",
    )
    parser.add_argument(
        "--set", default="decisions", choices=["decisions", "text_fields"], help="which set"
    )
    parser.add_argument(
        "--only", default="", help="comma-separated decision names (default: all of them)"
    )
    parser.add_argument("--json", default="", help="write every decision's record to this file")
    parser.add_argument(
        "--modes", default="text,structured", help="which modes to run (default: both)"
    )
    args = parser.parse_args(argv)
    modes = [mode for mode in MODES if mode in args.modes.split(",")]
    if not modes:
        parser.error(f"--modes names none of {list(MODES)}")

    prompts = PROMPTS
    if args.set == "text_fields":
        from benchmarks.text_field_prompts import PROMPTS as prompts
    chosen = [p for p in prompts if not args.only or p.name in args.only.split(",")]
    if not chosen:
        parser.error(f"no decision is called {args.only!r}; names: {[p.name for p in prompts]}")
    extra = {} if args.max_tokens is None else {"max_tokens": args.max_tokens}
    runtimes = {
        mode: OpenAICompatibleRuntime(
            args.base_url,
            api_key=os.environ.get(args.api_key_env) or None,
            model=args.model,
            **({} if args.timeout is None else {"timeout_s": args.timeout}),
            extra_body=extra,
            structured_decisions=setting,  # type: ignore[arg-type]
        )
        for mode, setting in MODES.items()
        if mode in modes
    }
    print(
        f"{len(chosen)} decisions x {args.rounds} round(s) against {args.base_url}, "
        f"model {args.model}, max_tokens {args.max_tokens}, "
        f"timeout {next(iter(runtimes.values())).timeout_s} s"
        + (" (the runtime's default)" if args.timeout is None else " (--timeout)"),
        flush=True,
    )
    outcomes: list[Outcome] = []
    try:
        for round_ in range(1, args.rounds + 1):
            for index, item in enumerate(chosen):
                order = modes if index % 2 == 0 else list(reversed(modes))
                for mode in order:
                    outcome = decide(runtimes[mode], item, mode, round_)
                    outcomes.append(outcome)
                    print(
                        f"  {item.name:14} {mode:10} {outcome.result:14} {outcome.seconds:6.2f} s "
                        f"{outcome.completion_tokens:4} tokens  picked {outcome.picked}"
                        f"{'  copied ' + ','.join(outcome.copied) if outcome.copied else ''}"
                        f"{'  zeros ' + ','.join(outcome.zeros) if outcome.zeros else ''}",
                        flush=True,
                    )
    finally:
        for runtime in runtimes.values():
            runtime.close()
    rows = {mode: summary(outcomes, mode) for mode in modes}
    print()
    print(table(list(rows.values())))
    if len(rows) == 2 and rows["text"]["median_s"]:
        text, structured = rows["text"], rows["structured"]
        print(
            f"\nstructured / text, median time per decision: "
            f"{structured['median_s'] / text['median_s']:.2f}; total time: "
            f"{structured['total_s'] / text['total_s']:.2f}"
        )
    if "structured" in runtimes:
        print(f"structured decisions sent as: {runtimes['structured'].decision_format}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"summary": rows, "decisions": [asdict(o) for o in outcomes]}, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
