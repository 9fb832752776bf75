"""The runtime dependencies of the lowest-versions environment (`make lowest`).

    python scripts/lowest-pins.py ENV_PYTHON          # print name==version of each, as installed
    python scripts/lowest-pins.py --check ENV_PYTHON  # fail unless each is at its lower bound

The Makefile installs the project into a fresh environment with uv's lowest-direct resolution,
prints these pins, installs the test tools constrained by them (so that no tool moves a runtime
dependency up), then checks that every runtime dependency is exactly at the lower bound that
pyproject.toml declares. A bound that names no release (``>=9.4`` when the oldest 9.4 is 9.4.2)
fails the check; a bound the suite does not pass with fails the tests that run next.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent


EXTRAS = ("strategies", "contexts")
"""The optional extras whose libraries the lowest-versions environment installs (and checks) too:
the strategies and the fake contexts are tested there."""


def requirements() -> list[Requirement]:
    """The runtime dependencies that pyproject.toml declares, and those of :data:`EXTRAS`
    (each library once)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    texts = [*project["dependencies"]]
    for extra in EXTRAS:
        texts += project["optional-dependencies"][extra]
    found: dict[str, Requirement] = {}
    for text in texts:
        requirement = Requirement(text)
        found.setdefault(requirement.name, requirement)
    return list(found.values())


def lower_bound(requirement: Requirement) -> Version:
    bounds = [Version(spec.version) for spec in requirement.specifier if spec.operator == ">="]
    if len(bounds) != 1:
        sys.exit(f"pyproject.toml: {requirement} needs exactly one lower bound (>=)")
    return bounds[0]


def installed(python: str, names: list[str]) -> dict[str, str]:
    """The version of each distribution in the environment of ``python``."""
    code = (
        "import importlib.metadata as m, json, sys; "
        "print(json.dumps({n: m.version(n) for n in sys.argv[1:]}))"
    )
    done = subprocess.run([python, "-c", code, *names], capture_output=True, text=True, check=True)
    versions: dict[str, str] = json.loads(done.stdout)
    return versions


def main(argv: list[str]) -> int:
    check = argv[:1] == ["--check"]
    python = argv[-1]
    declared = requirements()
    versions = installed(python, [requirement.name for requirement in declared])
    if not check:
        for requirement in declared:
            print(f"{requirement.name}=={versions[requirement.name]}")
        return 0
    wrong = [
        f"  {requirement.name}: pyproject.toml says >={lower_bound(requirement)}, the oldest "
        f"release that fits is {versions[requirement.name]}"
        for requirement in declared
        if Version(versions[requirement.name]) != lower_bound(requirement)
    ]
    if wrong:
        print("the lowest-versions environment does not hold the declared lower bounds:")
        print("\n".join(wrong))
        print("set each bound to the oldest release the suite passes with")
        return 1
    print(f"lowest versions: {', '.join(f'{n}=={v}' for n, v in versions.items())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
