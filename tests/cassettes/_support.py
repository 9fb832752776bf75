"""Helpers of the cassette tests (no fixtures: those are in ``conftest.py``)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

BASE_INI = {
    "addopts": "--strict-markers --strict-config -p no:cacheprovider",
    "asyncio_mode": "auto",
    "asyncio_default_fixture_loop_scope": "function",
    "filterwarnings": "error",
}
"""The ini of the projects the tests run: strict, warnings as errors, pytest-asyncio's auto mode."""

KEY = "sk-test-4f9Qz7Lm2Xc8Vb1Nw6Ty3Hu5Jk0Pa9Sd"
"""A real-looking API key: it must never reach a cassette."""


def write_ini(pytester: pytest.Pytester, **keys: str) -> None:
    """Write ``pytest.ini``: :data:`BASE_INI` plus ``keys`` (``opdecide_...`` settings)."""
    lines = ["[pytest]", *(f"{key} = {value}" for key, value in {**BASE_INI, **keys}.items())]
    pytester.makeini("\n".join(lines) + "\n")


def cassette(pytester: pytest.Pytester, module: str, test: str, folder: str = "cassettes") -> Path:
    """Where the cassette of ``module::test`` is written."""
    return pytester.path / folder / module / f"{test}.yaml"


def load(path: Path) -> dict[str, Any]:
    """A cassette file, parsed (safe loader)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def interactions(path: Path) -> list[dict[str, Any]]:
    """The interactions of a cassette file."""
    found = load(path)["interactions"]
    assert isinstance(found, list)
    return found


def contents(pytester: pytest.Pytester) -> dict[str, str]:
    """Every file under ``cassettes/`` (relative path -> text), to prove what was written."""
    root = pytester.path / "cassettes"
    if not root.exists():
        return {}
    return {
        str(p.relative_to(root)): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def error_text(result: pytest.RunResult) -> str:
    """The ``E   ...`` lines of a run's failure output, without the prefix."""
    output = result.outlines
    summary = [i for i, line in enumerate(output) if "short test summary info" in line]
    if summary:  # under CI pytest prints the summary's messages whole: read them once
        output = output[: summary[0]]
    lines = [line[1:] for line in output if line.startswith("E ") or line == "E"]
    return textwrap.dedent("\n".join(lines))
