"""The failure sections of a pytest run's output: what a user reads for each failing test."""

from __future__ import annotations

import re

import pytest

_HEADER = re.compile(r"^_{3,} (.+?) _{3,}$")
LIBRARY_PATHS = ("pytest_opdecide/", "fake_runtimes/", "site-packages/httpx", "site-packages/vcr")
"""Paths that no failure section of a library error may show (the library's own frames)."""


def sections(result: pytest.RunResult) -> dict[str, list[str]]:
    """Each section of the FAILURES and ERRORS parts, by its title (``test_x``, ``ERROR at
    teardown of test_x``), as its lines from the title line to the line before the next title
    (or the next ``=====`` line)."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in result.outlines:
        header = _HEADER.match(line)
        if header:
            current = found.setdefault(header.group(1), [line])
        elif line.startswith("====="):
            current = None
        elif current is not None:
            current.append(line)
    return found


def check_short(section: list[str], limit: int = 25) -> None:
    """The section fits ``limit`` lines and shows none of the library's frames."""
    text = "\n".join(section)
    assert len(section) <= limit, f"{len(section)} lines:\n{text}"
    assert not [path for path in LIBRARY_PATHS if path in text], text
