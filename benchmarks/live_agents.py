"""Agent turns against a real model: ``agent(prompt, choices=..., tools=[...])``, native tool
calls vs structured turns.

Runs every turn of ``benchmarks/agent_prompts.py`` through ``Runtime.exec`` (what ``agent()``
calls) on an ``OpenAICompatibleRuntime`` with the user's defaults: the 60 s call timeout, no
``max_tokens`` of ours, temperature 0. Two modes, interleaved turn by turn: ``native`` (the
tools as the server's native ``tools``, ``tool_turns="native"``) and ``structured`` (one reply
held to a schema that calls a tool or picks, ``tool_turns="structured"``, the default). One
thing differs from the defaults, said in the output: ``max_iterations`` is 5 (the default 20
lets a native turn that never ends run for 20 minutes).

For each mode it prints how many turns ended in a valid pick, how many picked at the first
decision reply (no re-pick), how many ended in ``DecisionError``, ``ToolLoopError`` or a failed
call (by class: ``CallTimeoutError``...), the tool calls made, the time per turn (median and
range) and the tokens generated. Not part of ``make bench``: it needs a model server::

    scripts/local-model start
    .venv/bin/python -m benchmarks.live_agents --base-url "$(scripts/local-model url)"

``--modes native`` runs only one mode (against a runtime without ``tool_turns``, an older
version of this project, only native exists). ``--json PATH`` writes every turn's record.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

from benchmarks.agent_prompts import AGENT_TURNS, AgentTurn
from pytest_opdecide import DecisionError, ToolLoopError
from pytest_opdecide.runtimes import OpenAICompatibleRuntime, RuntimeCallError

MODES = ("native", "structured")
MAX_ITERATIONS = 5


@dataclass
class Outcome:
    """One turn in one mode.

    Attributes:
        name: The turn's id.
        mode: ``native`` or ``structured``.
        result: ``pick`` (a valid pick), ``decision_error``, ``tool_loop_error``, or the class
            name of the error the model call raised (``CallTimeoutError``...).
        first: Whether the first reply that called no tool was a valid pick (no re-pick).
        seconds: Wall time of the whole turn.
        calls: Model calls made.
        tool_calls: Tool calls the model asked for.
        completion_tokens: Tokens generated over those calls (calls that failed report none).
        result_value: What the turn returned, shortened.
        detail: The error's message, shortened.
    """

    name: str
    mode: str
    result: str
    first: bool
    seconds: float
    calls: int
    tool_calls: int
    completion_tokens: int
    result_value: str
    detail: str = ""


def run_turn(runtime: OpenAICompatibleRuntime, item: AgentTurn, mode: str) -> Outcome:
    """Run one turn and describe how it went."""
    before = len(runtime.calls)
    start = time.perf_counter()
    detail = value = ""
    try:
        returned = runtime.exec(
            item.prompt,
            tools=list(item.tools),
            choices=item.choices,
            max_iterations=MAX_ITERATIONS,
        )
    except DecisionError as error:
        result, detail = "decision_error", f"{error.kind}: {error.message}"
    except ToolLoopError as error:
        result, detail = "tool_loop_error", str(error)
    except RuntimeCallError as error:
        result, detail = type(error).__name__, str(error)
    else:
        result, value = "pick", repr(returned)
    seconds = time.perf_counter() - start
    calls = runtime.calls[before:]
    tool_calls = sum(len(c.reply.tool_calls) for c in calls if c.reply is not None)
    repicked = any(c.kind == "repick" for c in calls)
    return Outcome(
        item.name,
        mode,
        result,
        result == "pick" and not repicked,
        seconds,
        len(calls),
        tool_calls,
        sum(c.reply.usage.completion_tokens for c in calls if c.reply is not None),
        value[:160],
        detail[:300],
    )


def summary(outcomes: list[Outcome], mode: str) -> dict[str, Any]:
    """The figures of one mode."""
    mine = [o for o in outcomes if o.mode == mode]
    times = [o.seconds for o in mine]
    tokens = [o.completion_tokens for o in mine]
    errors: dict[str, int] = {}
    for o in mine:
        if o.result != "pick":
            errors[o.result] = errors.get(o.result, 0) + 1
    return {
        "mode": mode,
        "turns": len(mine),
        "valid_picks": sum(o.result == "pick" for o in mine),
        "first_reply_picks": sum(o.first for o in mine),
        "errors": errors,
        "tool_calls": sum(o.tool_calls for o in mine),
        "median_s": statistics.median(times) if times else 0.0,
        "min_s": min(times, default=0.0),
        "max_s": max(times, default=0.0),
        "median_tokens": statistics.median(tokens) if tokens else 0,
        "max_tokens": max(tokens, default=0),
    }


def table(rows: list[dict[str, Any]]) -> str:
    """The summary as a Markdown table."""
    lines = [
        "| mode | turns | valid pick | picked without a re-pick | errors | tool calls "
        "| time per turn: median (min-max) | tokens generated: median (max) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        errors = ", ".join(f"{n} {kind}" for kind, n in sorted(row["errors"].items())) or "none"
        lines.append(
            f"| {row['mode']} | {row['turns']} | {row['valid_picks']} of {row['turns']} "
            f"| {row['first_reply_picks']} of {row['turns']} | {errors} | {row['tool_calls']} "
            f"| {row['median_s']:.1f} s ({row['min_s']:.1f}-{row['max_s']:.1f}) "
            f"| {row['median_tokens']:g} ({row['max_tokens']}) |"
        )
    return "\n".join(lines)


def _runtime(args: argparse.Namespace, mode: str) -> OpenAICompatibleRuntime:
    kwargs: dict[str, Any] = {}
    if "tool_turns" in inspect.signature(OpenAICompatibleRuntime).parameters:
        kwargs["tool_turns"] = mode
    elif mode != "native":
        raise SystemExit("this version of OpenAICompatibleRuntime has native tool turns only")
    return OpenAICompatibleRuntime(
        args.base_url,
        api_key=os.environ.get(args.api_key_env) or None,
        model=args.model,
        timeout_s=args.timeout,
        **kwargs,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.live_agents", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--base-url",
        default=os.environ.get("OPDECIDE_LIVE_URL", "http://127.0.0.1:8765/v1"),
        help="the server's API root (default: $OPDECIDE_LIVE_URL, else the local model's)",
    )
    parser.add_argument(
        "--model", default="smollm2-135m-instruct-tools", help="the model name (native tools)"
    )
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY", help="the key's variable")
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds per model call (default: 60, the runtime's)",
    )
    parser.add_argument("--only", default="", help="comma-separated turn names")
    parser.add_argument("--modes", default=",".join(MODES), help="which modes (default: both)")
    parser.add_argument("--json", default="", help="write every turn's record to this file")
    args = parser.parse_args(argv)
    modes = [mode for mode in MODES if mode in args.modes.split(",")]
    if not modes:
        parser.error(f"--modes names none of {list(MODES)}")
    chosen = [t for t in AGENT_TURNS if not args.only or t.name in args.only.split(",")]
    if not chosen:
        parser.error(f"no turn is called {args.only!r}")
    runtimes = {mode: _runtime(args, mode) for mode in modes}
    print(
        f"{len(chosen)} agent turns against {args.base_url}, model {args.model}, "
        f"timeout {args.timeout:g} s per call, max_iterations {MAX_ITERATIONS} (default: 20)",
        flush=True,
    )
    outcomes: list[Outcome] = []
    try:
        for index, item in enumerate(chosen):
            for mode in modes if index % 2 == 0 else list(reversed(modes)):
                outcome = run_turn(runtimes[mode], item, mode)
                outcomes.append(outcome)
                shown = outcome.result_value or outcome.detail[:80]
                print(
                    f"  {item.name:18} {mode:10} {outcome.result:16} {outcome.seconds:6.1f} s "
                    f"{outcome.calls} calls {outcome.tool_calls} tool calls "
                    f"{outcome.completion_tokens:5} tokens  {shown}",
                    flush=True,
                )
    finally:
        for runtime in runtimes.values():
            runtime.close()
    rows = [summary(outcomes, mode) for mode in modes]
    print()
    print(table(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"summary": rows, "turns": [asdict(o) for o in outcomes]}, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
