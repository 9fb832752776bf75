"""How much of a real model's first-token probability falls on the answer labels.

``OpenAICompatibleDecisionProvider`` reads a question's answer from the log-probabilities of
the model's first token. The *label mass* is the share of that probability the model put on
tokens that spell an answer label (before any ``logit_bias``): the rest went to words like
``The`` or ``Level``. This script asks every question of ``data/label_mass_questions.json``
(all three types, varied domains) and prints the label mass per type: mean and minimum.

It needs a live server, so ``python -m benchmarks`` does not run it::

    scripts/local-model start
    .venv/bin/python -m benchmarks.label_mass --base-url "$(scripts/local-model url)"

``--json PATH`` writes every question's figures too.
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

from pytest_opdecide.questions import DecisionRequest, OpenAICompatibleDecisionProvider

QUESTIONS = Path(__file__).parent / "data" / "label_mass_questions.json"
DEFAULT_URL = "http://127.0.0.1:8765/v1"
DEFAULT_MODEL = "smollm2-135m-instruct"


def load_questions(path: Path = QUESTIONS) -> list[dict[str, Any]]:
    """The committed question set: one entry per question, with its context."""
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
    """Ask every question, one at a time; the metadata of each answer, with its entry's id."""
    rows = []
    for entry in entries:
        started = time.perf_counter()
        result = await provider.decide(request_for(entry, model))
        meta = result.metadata["questions"]["q"]  # type: ignore[index, call-overload]
        rows.append(
            {
                "id": entry["id"],
                "type": entry["question"]["type"],
                "seconds": round(time.perf_counter() - started, 3),
                **meta,
            }
        )
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """Mean and minimum label mass per question type and overall, as a Markdown table."""
    lines = ["| questions | n | mean label mass | min label mass |", "|---|---|---|---|"]
    groups = [(kind, [r for r in rows if r["type"] == kind]) for kind in ("choice", "score")]
    groups += [("boolean", [r for r in rows if r["type"] == "boolean"]), ("all", rows)]
    for name, group in groups:
        masses = [float(r["label_mass"]) for r in group]
        if masses:
            lines.append(
                f"| {name} | {len(masses)} | {statistics.fmean(masses):.3f} | {min(masses):.3f} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default=DEFAULT_URL)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--json", type=Path, help="write every question's figures here")
    parser.add_argument(
        "--no-tokenizer", action="store_true", help="send no logit_bias (tokenizer=None)"
    )
    args = parser.parse_args(argv)
    provider = OpenAICompatibleDecisionProvider(
        base_url=args.base_url,
        model=args.model,
        timeout=120_000,
        tokenizer=None if args.no_tokenizer else "auto",
    )
    entries = load_questions()
    rows = asyncio.run(measure(provider, entries, args.model))
    print(table(rows))
    worst = sorted(rows, key=lambda r: float(r["label_mass"]))[:5]
    print("lowest:", ", ".join(f"{r['id']} {float(r['label_mass']):.3f}" for r in worst))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    mean = statistics.fmean(float(r["label_mass"]) for r in rows)
    return 0 if math.isfinite(mean) else 1


if __name__ == "__main__":
    sys.exit(main())
