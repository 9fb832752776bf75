"""`make demo`: what the tool is for, in three steps, offline.

1. The example project's test suite (examples/support_desk), exactly as its developers run it,
   from its committed menu snapshots and cassettes, with the real-call guard on: no network,
   no key and no model are needed.
2. One deliberately wrong test of the example (``tests/deliberately_wrong.py``, which the suite
   never collects) and the message it fails with: a mistake in a test is refused, saying how to
   fix it.
3. The conformance checks against the project's built-in decision providers, one line per
   provider (``--full``, or ``make demo FULL=1``, prints every check).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "support_desk"
WRONG_TEST = EXAMPLE / "tests" / "deliberately_wrong.py"
PROVIDERS = [
    ("FakeDecisionProvider", "pytest_opdecide.conformance.builtin:fake_provider"),
    ("OpenAICompatibleDecisionProvider", "pytest_opdecide.questions:openai_compatible"),
    ("RuntimeDecisionProvider", "pytest_opdecide.conformance.builtin:runtime_provider"),
]


def banner(text: str) -> None:
    print(f"\n\033[1m== {text}\033[0m", flush=True)


def run(command: list[str], env: dict[str, str], capture: bool = False) -> tuple[int, str]:
    """Run ``command`` in the repository; its output is printed, or returned when captured."""
    shown = [
        str(Path(part).relative_to(ROOT)) if part.startswith(str(ROOT)) else part
        for part in command
    ]
    print("$ " + " ".join(shown), flush=True)
    if not capture:
        return subprocess.call(command, cwd=ROOT, env=env), ""
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def example_pytest(*arguments: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pytest",
        "-c",
        str(EXAMPLE / "pyproject.toml"),
        "--rootdir",
        str(EXAMPLE),
        "--opdecide-record=none",
        "--opdecide-guard=on",
        *arguments,
    ]


def failure_message(output: str) -> list[str]:
    """The ``E`` lines of a ``--tb=short`` failure report, without the ``E`` column."""
    return [line[4:] for line in output.splitlines() if re.match(r"E( |$)", line)]


def one_line(name: str, status: int, output: str) -> str:
    """A provider's conformance result in one line, from ``opdecide check --format json``."""
    try:
        report: dict[str, Any] = json.loads(output[output.index("{") :])
    except ValueError:
        tail = output.strip().splitlines()[-1:] or ["no output"]
        return f"  {name:34} ERROR (exit status {status}): {tail[0]}"
    counts = ", ".join(f"{count} {outcome}" for outcome, count in report["summary"].items())
    failed = [c["name"] for c in report["checks"] if c["outcome"] in ("failed", "error")]
    verdict = "passed" if status == 0 else "FAILED: " + ", ".join(failed)
    return f"  {name:34} {verdict:8} ({counts})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--full", action="store_true", help="print every conformance check of every provider"
    )
    full = parser.parse_args(argv).full
    started = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k != "OPDECIDE_LIVE_URL"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"

    banner("1/3  The example agent project's test suite, offline (examples/support_desk)")
    print("     scripted picks, every option, invalid replies, fake distributions, menu")
    print("     snapshots, property tests and cassette replays of a real local model", flush=True)
    example_status, _ = run(example_pytest(str(EXAMPLE), "-v"), env)

    banner("2/3  A deliberately wrong test, and the message it fails with")
    print(f"     {WRONG_TEST.relative_to(ROOT)} scripts a pick of 'refunds', an option the")
    print("     code under test does not offer (it offers 'refund'):", flush=True)
    source = WRONG_TEST.read_text(encoding="utf-8")
    print("\n" + source[source.index("@pytest.mark.opdecide") :].rstrip() + "\n", flush=True)
    wrong_status, output = run(
        example_pytest(str(WRONG_TEST), "-q", "--tb=short"), env, capture=True
    )
    message = failure_message(output)
    for line in message:
        print(f"     | {line}")
    caught = wrong_status == 1 and bool(message)
    if not caught:
        print(output)
        print("     !! the wrong test did not fail as it should")

    banner("3/3  Conformance of the built-in decision providers (opdecide check)")
    lines = []
    statuses = []
    for name, target in PROVIDERS:
        command = [sys.executable, "-m", "pytest_opdecide.cli", "check", target]
        if full:
            print(f"\n-- {name}", flush=True)
            status, _ = run(command, env)
            lines.append(f"  {name:34} {'passed' if status == 0 else 'FAILED'}")
        else:
            status, output = run([*command, "--format", "json"], env, capture=True)
            lines.append(one_line(name, status, output))
        statuses.append(status)
    if not full:
        print()
        print("\n".join(lines))
        print("  (every check of every provider: make demo FULL=1)")
    statuses_ok = not any(statuses)

    elapsed = time.perf_counter() - started
    banner("Summary")
    print(f"  example project tests   : {'passed' if example_status == 0 else 'FAILED'}")
    print(f"  the wrong test          : {'failed, as it should' if caught else 'NOT CAUGHT'}")
    print(f"  conformance             : {'passed' if statuses_ok else 'FAILED'}")
    print(f"  finished in {elapsed:.1f} s, offline: no network, no API key, no model")
    return 0 if example_status == 0 and caught and statuses_ok else 1


if __name__ == "__main__":
    sys.exit(main())
