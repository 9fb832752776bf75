"""`make demo`: the example project's tests, offline, then a conformance report.

Step 1 runs examples/support_desk's own test suite exactly as its developers would, from its
committed menu snapshots and cassettes, with the real-call guard on: no network, no key and no
model are needed. Step 2 runs the conformance checks against the project's built-in decision
providers and prints one row per check.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "support_desk"
PROVIDERS = [
    ("FakeDecisionProvider", "pytest_opdecide.conformance.builtin:fake_provider"),
    ("OpenAICompatibleDecisionProvider", "pytest_opdecide.questions:openai_compatible"),
    ("RuntimeDecisionProvider", "pytest_opdecide.conformance.builtin:runtime_provider"),
]


def banner(text: str) -> None:
    print(f"\n\033[1m== {text}\033[0m", flush=True)


def run(command: list[str], env: dict[str, str] | None = None) -> int:
    print("$ " + " ".join(command), flush=True)
    return subprocess.call(command, cwd=ROOT, env=env)


def main() -> int:
    started = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k != "OPDECIDE_LIVE_URL"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    banner("1/2  The example agent project's test suite, offline (examples/support_desk)")
    print("     scripted picks, every option, invalid replies, fake distributions, menu")
    print("     snapshots, property tests and cassette replays of a real local model", flush=True)
    example_status = run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(EXAMPLE / "pyproject.toml"),
            "--rootdir",
            str(EXAMPLE),
            str(EXAMPLE),
            "-v",
            "--opdecide-record=none",
            "--opdecide-guard=on",
        ],
        env=env,
    )
    banner("2/2  Conformance report for the built-in decision providers")
    statuses = []
    for name, target in PROVIDERS:
        print(f"\n-- {name}", flush=True)
        statuses.append(
            run([sys.executable, "-m", "pytest_opdecide.cli", "check", target], env=env)
        )
    elapsed = time.perf_counter() - started
    banner("Summary")
    print(f"  example project tests : {'passed' if example_status == 0 else 'FAILED'}")
    for (name, _), status in zip(PROVIDERS, statuses, strict=True):
        print(f"  conformance, {name:34}: {'passed' if status == 0 else 'FAILED'}")
    print(f"  finished in {elapsed:.1f} s, offline: no network, no API key, no model")
    return 0 if example_status == 0 and not any(statuses) else 1


if __name__ == "__main__":
    sys.exit(main())
