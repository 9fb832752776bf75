"""How much of a real model's first-token probability falls on the answer labels.

``OpenAICompatibleDecisionProvider`` reads a question's answer from the log-probabilities of
the model's first token. The *label mass* is the share of that probability the model put on
tokens that spell an answer label (before any ``logit_bias``): the rest went to words like
``The`` or ``Level``, or to a label that is not offered (``C`` for a question of two options).
This script asks every question of each set (all three types, varied domains) and prints the
label mass per set and type: mean and minimum.

The sets (``data/``): ``label_mass_questions.json``, the first 39 questions of every type, and
``label_mass_shapes.json``, 30 written apart from them with the shapes the first set lacks:
two-option choices, structured (JSON) instructions and options, scores of two or three levels,
booleans with and without criteria.

The provider is built as a user builds it: every argument at its default (the time limit of
60 s per request, no tokenizer, so no ``logit_bias``) but ``base_url`` and ``model``. The
options that change that are printed with the figures when given (``--timeout-ms``,
``--tokenizer-auto``). It needs a live server, so ``python -m benchmarks`` does not run it::

    scripts/local-model start
    .venv/bin/python -m benchmarks.label_mass --base-url "$(scripts/local-model url)"

``--set NAME`` measures one set only; ``--json PATH`` writes every question's figures too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from pytest_opdecide.questions import (
    DecisionRequest,
    OpenAICompatibleDecisionProvider,
    ProviderError,
)

DATA = Path(__file__).parent / "data"
SETS = {"questions": DATA / "label_mass_questions.json", "shapes": DATA / "label_mass_shapes.json"}
"""The question sets, by name: each file holds ``{"about": ..., "questions": [...]}``."""
QUESTIONS = SETS["questions"]
DEFAULT_URL = "http://127.0.0.1:8765/v1"
DEFAULT_MODEL = "smollm2-135m-instruct"


def load_questions(path: Path = QUESTIONS) -> list[dict[str, Any]]:
    """A committed question set: one entry per question, with its context."""
    data = json.loads(path.read_text(encoding="utf-8"))
    questions: list[dict[str, Any]] = data["questions"]
    return questions


def request_for(entry: dict[str, Any], model: str) -> DecisionRequest:
    """One decision request asking the entry's question about its context."""
    return DecisionRequest.model_validate(
        {"model": model, "context": entry["context"], "questions": {"q": entry["question"]}}
    )


async def measure(
    provider: OpenAICompatibleDecisionProvider, entries: list[dict[str, Any]], model: str
) -> list[dict[str, Any]]:
    """Ask every question, one at a time; the metadata of each answer, with its entry's id
    (or the provider's error, under ``error``: a time limit reached on a busy server)."""
    rows = []
    for entry in entries:
        started = time.perf_counter()
        row: dict[str, Any] = {"id": entry["id"], "type": entry["question"]["type"]}
        try:
            result = await provider.decide(request_for(entry, model))
        except ProviderError as error:
            row["error"] = f"{error.code}: {error}"
        else:
            row.update(result.metadata["questions"]["q"])  # type: ignore[index, call-overload]
        row["seconds"] = round(time.perf_counter() - started, 3)
        rows.append(row)
        shown = row.get("error") or f"label mass {float(row['label_mass']):.3f}"
        print(f"  {row['id']:28} {row['seconds']:7.2f} s  {shown[:100]}", flush=True)
    return rows


def table(rows: list[dict[str, Any]], name: str = "all") -> str:
    """Mean and minimum label mass per question type and overall, as a Markdown table."""
    lines = ["| questions | n | mean label mass | min label mass |", "|---|---|---|---|"]
    groups = [(kind, [r for r in rows if r["type"] == kind]) for kind in ("choice", "score")]
    groups += [("boolean", [r for r in rows if r["type"] == "boolean"]), (name, rows)]
    for label, group in groups:
        masses = [float(r["label_mass"]) for r in group if "label_mass" in r]
        if masses:
            lines.append(
                f"| {label} | {len(masses)} | {statistics.fmean(masses):.3f} | {min(masses):.3f} |"
            )
    failed = [r for r in rows if "error" in r]
    if failed:
        lines.append(f"(no answer for {len(failed)}: {', '.join(r['id'] for r in failed)})")
    return "\n".join(lines)


def provider_for(args: argparse.Namespace) -> tuple[OpenAICompatibleDecisionProvider, list[str]]:
    """The provider as a user builds it, and what of it differs from the defaults."""
    changed: dict[str, Any] = {}
    if args.timeout_ms is not None:
        changed["timeout"] = args.timeout_ms
    if args.tokenizer_auto:
        changed["tokenizer"] = "auto"
    provider = OpenAICompatibleDecisionProvider(base_url=args.base_url, model=args.model, **changed)
    return provider, [f"{key}={value!r}" for key, value in changed.items()]


def arguments() -> argparse.ArgumentParser:
    """The command line (every option of the provider at its default unless one says not)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default=DEFAULT_URL)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--set", choices=sorted(SETS), action="append", help="(default: all)")
    parser.add_argument("--json", type=Path, help="write every question's figures here")
    parser.add_argument(
        "--timeout-ms", type=float, help="each request's time limit (default: the provider's)"
    )
    parser.add_argument(
        "--tokenizer-auto",
        action="store_true",
        help="learn the label tokens from the server and send a logit_bias (default: none)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = arguments().parse_args(argv)
    provider, changed = provider_for(args)
    print(
        f"{provider.name} against {args.base_url}, model {args.model}; provider defaults"
        + (f" except {', '.join(changed)}" if changed else "")
        + f" (timeout {provider.timeout / 1000:g} s, examples {provider.examples})",
        flush=True,
    )
    every: list[dict[str, Any]] = []
    for name in args.set or list(SETS):
        rows = asyncio.run(measure(provider, load_questions(SETS[name]), args.model))
        for row in rows:
            row["set"] = name
        every += rows
        print(f"\nset {name} ({SETS[name].name}):")
        print(table(rows, name))
        answered = [r for r in rows if "label_mass" in r]
        worst = sorted(answered, key=lambda r: float(r["label_mass"]))[:5]
        print("lowest:", ", ".join(f"{r['id']} {float(r['label_mass']):.3f}" for r in worst))
    if args.json:
        args.json.write_text(json.dumps(every, indent=2) + "\n", encoding="utf-8")
    masses = [float(r["label_mass"]) for r in every if "label_mass" in r]
    return 0 if masses and len(masses) == len(every) and math.isfinite(sum(masses)) else 1


if __name__ == "__main__":
    sys.exit(main())
