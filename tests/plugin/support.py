"""Helpers of the plugin tests (no fixtures: those are in ``conftest.py``)."""

from __future__ import annotations

import re

import pytest

BASE_INI = {
    "addopts": "--strict-markers --strict-config -p no:cacheprovider",
    "asyncio_mode": "auto",
    "asyncio_default_fixture_loop_scope": "function",
    "filterwarnings": "error",
}
"""The ini of the projects the tests run: strict, warnings as errors, pytest-asyncio's auto mode."""


def write_ini(pytester: pytest.Pytester, **keys: str) -> None:
    """Write ``pytest.ini``: :data:`BASE_INI` plus ``keys`` (``opdecide_...`` settings)."""
    lines = ["[pytest]", *(f"{key} = {value}" for key, value in {**BASE_INI, **keys}.items())]
    pytester.makeini("\n".join(lines) + "\n")


def failure_lines(result: pytest.RunResult) -> list[str]:
    """A run's output down to its short summary: under ``CI`` pytest prints the summary's
    messages whole, and a library error's ``E   `` lines would be read there a second time."""
    lines = result.outlines
    for index, line in enumerate(lines):
        if "short test summary info" in line:
            return lines[:index]
    return lines


def error_text(result: pytest.RunResult) -> str:
    """The error of a run's one failure, as printed in ``E   `` lines (``--tb=short``)."""
    lines = [line[4:] for line in failure_lines(result) if line.startswith("E   ") or line == "E"]
    return "\n".join(lines)


def help_groups(lines: list[str]) -> dict[str, list[str]]:
    """The option groups of ``pytest --help``: title -> its lines."""
    groups: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines:
        if line and not line.startswith(" ") and line.endswith(":"):
            current = groups.setdefault(line[:-1], [])
        elif not line:
            current = None
        elif current is not None:
            current.append(line)
    return groups


FLAG = re.compile(r"--opdecide-[a-z-]+")
